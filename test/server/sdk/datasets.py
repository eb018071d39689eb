"""Datasets through the SDK: create (defaults, duplicates, validation), list, get_dataset, update, delete.

Acts as a user of its own (RAGLOOM_KEY: nothing else runs in its tenant, so lists are exact);
RAGLOOM_KEY2 is a foreign tenant. Ends with delete_datasets(delete_all=True).
"""
import uuid

from common import Recorder, client, tick
from ragflow_sdk.modules.dataset import DataSet

rag = client()
other = client("RAGLOOM_KEY2")
r = Recorder()

# ------------------------------------------------------------------ create
kb = r.call("create_default", lambda: rag.create_dataset(name="kb"))
# RAGFlow writes these defaults as floats (2.0, 60.0); Python reads the wire's `2` as an int.
r.call("graphrag_number_types", lambda: {k: type(v).__name__ for k, v in kb.parser_config.graphrag.to_json().items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
tick()
r.call("create_dup_case", lambda: rag.create_dataset(name="KB"))  # kb exists (case-insensitive) -> KB(1)
tick()
kb2 = r.call("create_dup_again", lambda: rag.create_dataset(name="kb"))  # kb, KB(1) exist -> kb(2)
tick()
notes = r.call("create_full", lambda: rag.create_dataset(
    name="  notes  ", description="field notes", permission="team", chunk_method="qa"))
tick()
r.call("create_partial_config", lambda: rag.create_dataset(
    name="partial", parser_config=DataSet.ParserConfig(rag, {"chunk_token_num": 1024})))
r.call("create_with_default_embedding", lambda: rag.create_dataset(name="explicit-embedding", embedding_model=kb.embedding_model))

r.call("create_bad_chunk_method", lambda: rag.create_dataset(name="x", chunk_method="bogus"))
r.call("create_empty_chunk_method", lambda: rag.create_dataset(name="x", chunk_method=""))
r.call("create_embedding_no_at", lambda: rag.create_dataset(name="x", embedding_model="nope"))
r.call("create_embedding_empty_side", lambda: rag.create_dataset(name="x", embedding_model="@Builtin"))
r.call("create_embedding_unknown", lambda: rag.create_dataset(name="x", embedding_model="no-such-model@NoSuchFactory"))
r.call("create_embedding_unauthorized", lambda: rag.create_dataset(name="x", embedding_model="text-embedding-v3@Tongyi-Qianwen"))
r.call("create_empty_name", lambda: rag.create_dataset(name=""))
r.call("create_long_name", lambda: rag.create_dataset(name="n" * 129))
r.call("create_bad_permission", lambda: rag.create_dataset(name="x", permission="ME"))
r.call("create_bad_avatar", lambda: rag.create_dataset(name="x", avatar="abc"))

# The tenant's default chat model, as a new chat assistant shows it (RAGFlow stores it as the
# dataset parser_config's llm_id).
probe = rag.create_chat("probe")
r.put("tenant_chat_model", probe.llm_id)
rag.delete_chats(ids=[probe.id])

# ------------------------------------------------------------------ list / get
names = lambda ds: [d.name for d in ds]
r.call("list_default", lambda: names(rag.list_datasets()))
r.call("list_page2", lambda: names(rag.list_datasets(page=2, page_size=2)))
r.call("list_page_beyond", lambda: names(rag.list_datasets(page=99, page_size=30)))
r.call("list_update_time_asc", lambda: names(rag.list_datasets(orderby="update_time", desc=False)))
r.call("list_by_id", lambda: names(rag.list_datasets(id=kb.id)))
r.call("list_by_name", lambda: names(rag.list_datasets(name="notes")))
r.call("list_by_name_case", lambda: names(rag.list_datasets(name="NOTES")))
r.call("list_bad_orderby", lambda: rag.list_datasets(orderby="name"))
r.call("list_bad_id", lambda: rag.list_datasets(id="abc"))
r.call("list_uuid4_id", lambda: rag.list_datasets(id="9ffcb270745d4c2f9b5c49d6e070b339"))
unknown_uuid1 = uuid.uuid1().hex
r.put("unknown_uuid1", unknown_uuid1)
r.call("list_unknown_id", lambda: rag.list_datasets(id=unknown_uuid1))
r.call("list_unknown_name", lambda: rag.list_datasets(name="nothere"))
r.call("list_page_size_0", lambda: rag.list_datasets(page_size=0))
r.call("get_dataset", lambda: rag.get_dataset(name="kb").id)
r.call("get_dataset_missing", lambda: rag.get_dataset(name="nothere"))

# ------------------------------------------------------------------ update
r.call("update", lambda: kb.update({"name": "kb-renamed", "description": "renamed", "pagerank": 10}))
r.call("update_list_after", lambda: rag.list_datasets(id=kb.id)[0])
r.call("update_chunk_method", lambda: kb2.update({"chunk_method": "qa"}).parser_config)
r.call("update_empty", lambda: kb.update({}))
r.call("update_name_clash", lambda: kb.update({"name": "NOTES"}))
r.call("update_bad_chunk_method", lambda: kb.update({"chunk_method": "bogus"}))
r.call("update_read_only", lambda: kb.update({"chunk_count": 3}))
r.call("update_pagerank_high", lambda: kb.update({"pagerank": 101}))
r.call("update_permission_none", lambda: kb.update({"permission": None}))

# ------------------------------------------------------------------ foreign tenant
theirs = other.create_dataset(name="theirs")
r.put("theirs", {"id": theirs.id, "tenant_id": theirs.tenant_id})
r.call("foreign_list_by_id", lambda: other.list_datasets(id=kb.id))
r.call("foreign_update", lambda: DataSet(other, {"id": kb.id}).update({"description": "hijack"}))
r.call("foreign_sees", lambda: names(other.list_datasets()))

# ------------------------------------------------------------------ delete
r.call("delete_bad_id", lambda: rag.delete_datasets(ids=["abc"]))
r.call("delete_duplicate_ids", lambda: rag.delete_datasets(ids=[notes.id, notes.id]))
r.call("delete_foreign", lambda: rag.delete_datasets(ids=[theirs.id]))
r.call("delete_mixed", lambda: rag.delete_datasets(ids=[notes.id, theirs.id]))
r.call("list_after_mixed", lambda: names(rag.list_datasets(id=notes.id)))
r.call("delete_no_ids", lambda: rag.delete_datasets(ids=[]))
r.call("count_after_no_ids", lambda: len(rag.list_datasets()))
r.call("delete_one", lambda: rag.delete_datasets(ids=[notes.id]))
r.call("delete_one_again", lambda: rag.delete_datasets(ids=[notes.id]))
r.call("list_after_delete", lambda: names(rag.list_datasets()))
r.call("delete_all", lambda: rag.delete_datasets(delete_all=True))
r.call("list_after_delete_all", lambda: names(rag.list_datasets()))
r.call("foreign_after_delete_all", lambda: names(other.list_datasets()))
other.delete_datasets(ids=[theirs.id])

r.emit()

"""Documents, parsing, chunks and retrieval through the SDK.

Dataset "library": tides.md + bread.md (kept clean for the chat script), notes.txt (chunk calls),
crème.txt (byte-exact download), empty.txt, a same-name upload. Dataset "big": a long file whose
parse is cancelled. Prints the library's ids for chats.py. RAGLOOM_KEY2 is a foreign tenant.
"""
import time

from common import Recorder, b64, client, tick

rag = client()
other = client("RAGLOOM_KEY2")
r = Recorder()

TIDES = ("# Tides\n\nThe gravitational pull of the moon raises the ocean tides twice a day. Spring tides happen at new "
         "and full moon, when the sun and the moon pull together.\n").encode()
BREAD = ("# Bread\n\nKnead the dough for ten minutes. Let it rise for one hour in a warm place, then bake it at 220 "
         "degrees for thirty minutes.\n").encode()
NOTES = "Notebook\nThe lighthouse keeper logs the weather every morning.\nFog horns sound when visibility drops.\n".encode()
CREME = "Crème brûlée — 温度 180 °C\r\nline two\ttabbed\n".encode("utf-8") + b"\x00\x01\xfe"



def wait_parsed(dataset, doc_ids, timeout=30):
    """Polls list_documents until every document's run is terminal; returns [(id, run, chunk_count)]."""
    until = time.time() + timeout
    while True:
        docs = [dataset.list_documents(id=i)[0] for i in doc_ids]
        if all(d.run in ("DONE", "FAIL", "CANCEL") for d in docs) or time.time() > until:
            return [(d.id, d.run, d.chunk_count) for d in docs]
        time.sleep(0.05)


ds = rag.create_dataset(name="library")
r.put("dataset", {"id": ds.id, "tenant_id": ds.tenant_id})

# ------------------------------------------------------------------ upload
up = r.call("upload", lambda: ds.upload_documents([
    {"display_name": "tides.md", "blob": TIDES},
    {"display_name": "bread.md", "blob": BREAD},
    {"display_name": "notes.txt", "blob": NOTES},
    {"display_name": "crème.txt", "blob": CREME},
    {"display_name": "empty.txt", "blob": b""},
    {"display_name": "notes.txt", "blob": b"a second notes file\n"},
]))
by_name = {d.name: d for d in up}
tides, bread, notes, creme, empty, notes1 = (by_name[n] for n in ["tides.md", "bread.md", "notes.txt", "crème.txt", "empty.txt", "notes(1).txt"])
tick()
loud = r.call("upload_same_name_case", lambda: ds.upload_documents([{"display_name": "TIDES.md", "blob": b"# Loud tides\n"}]))
if loud:
    ds.delete_documents(ids=[loud[0].id])
r.call("upload_unsupported", lambda: ds.upload_documents([{"display_name": "tool.exe", "blob": b"MZ\x90\x00"}]))
r.call("upload_nothing", lambda: ds.upload_documents([]))

# ------------------------------------------------------------------ list
names = lambda docs: [d.name for d in docs]
r.call("list_default", lambda: names(ds.list_documents()))
r.call("list_keywords", lambda: names(ds.list_documents(keywords="NOTES")))
r.call("list_keywords_paged", lambda: names(ds.list_documents(keywords="notes", page=2, page_size=1)))
r.call("list_page2", lambda: names(ds.list_documents(page=2, page_size=3)))
r.call("list_asc", lambda: names(ds.list_documents(desc=False)))
r.call("list_by_id", lambda: ds.list_documents(id=tides.id))
r.call("list_by_name", lambda: names(ds.list_documents(name="bread.md")))
r.call("list_by_name_case", lambda: names(ds.list_documents(name="BREAD.MD")))
r.call("list_unknown_id", lambda: ds.list_documents(id="nope"))
r.call("list_unknown_name", lambda: ds.list_documents(name="nope.txt"))
r.call("list_id_and_ids", lambda: ds.list_documents(id=tides.id, ids=[tides.id]))
r.call("list_ids", lambda: ds.list_documents(ids=[tides.id]))  # SDK bug (§2): any ids crashes client-side
r.call("foreign_list", lambda: other.list_datasets(name="library"))
from ragflow_sdk.modules.dataset import DataSet  # noqa: E402
r.call("foreign_list_documents", lambda: DataSet(other, {"id": ds.id}).list_documents())

# ------------------------------------------------------------------ update
r.call("update_rename", lambda: notes1.update({"name": "draft.txt"}).name)
r.call("update_rename_listed", lambda: names(ds.list_documents(id=notes1.id)))
r.call("update_extension", lambda: notes1.update({"name": "draft.md"}))
r.call("update_duplicate", lambda: notes1.update({"name": "notes.txt"}))
r.call("update_case_only_clash", lambda: notes1.update({"name": "NOTES.txt"}).name)
r.call("update_chunk_method", lambda: notes1.update({"chunk_method": "one"}).chunk_method)
r.call("update_bad_chunk_method", lambda: notes1.update({"chunk_method": "other_chunk_method"}))
r.call("update_empty_chunk_method", lambda: notes1.update({"chunk_method": ""}))
r.call("update_chunk_count", lambda: notes1.update({"chunk_count": 5}))
r.call("update_progress", lambda: notes1.update({"progress": 1.5}))
r.call("update_meta_not_dict", lambda: notes1.update({"meta_fields": "author=ann"}))
r.call("update_meta", lambda: notes1.update({"meta_fields": {"author": "ann", "year": 2024, "tags": ["a", "b"]}}).meta_fields)
r.call("update_meta_listed", lambda: ds.list_documents(id=notes1.id)[0].meta_fields)

# ------------------------------------------------------------------ download
r.put("creme_original", b64(CREME))
r.call("download_creme", lambda: b64(creme.download()))
r.call("download_tides", lambda: b64(tides.download()))
r.put("tides_original", b64(TIDES))
r.call("download_empty", lambda: empty.download())

# ------------------------------------------------------------------ delete
r.call("delete_none", lambda: ds.delete_documents())
r.call("delete_unknown", lambda: ds.delete_documents(ids=["nope"]))
r.call("delete_both", lambda: ds.delete_documents(ids=[empty.id], delete_all=True))
r.call("delete_duplicate_ids", lambda: ds.delete_documents(ids=[empty.id, empty.id]))
r.call("delete_partly_unknown", lambda: ds.delete_documents(ids=[empty.id, "nope"]))
r.call("delete_ok", lambda: ds.delete_documents(ids=[empty.id, notes1.id, creme.id]))
r.call("list_after_delete", lambda: names(ds.list_documents()))

# ------------------------------------------------------------------ parse
ids = [tides.id, bread.id, notes.id]
r.call("async_parse_empty", lambda: ds.async_parse_documents([]))
r.call("async_parse_unknown", lambda: ds.async_parse_documents(["nope"]))
r.call("cancel_unknown", lambda: ds.async_cancel_parse_documents(["nope"]))
r.call("cancel_not_started", lambda: ds.async_cancel_parse_documents([tides.id]))
t0 = time.time()
r.call("parse", lambda: sorted(ds.parse_documents(ids)))
r.put("parse_seconds", time.time() - t0)
r.call("parsed_docs", lambda: {d.name: d for d in ds.list_documents()})
r.call("parsed_dataset", lambda: rag.list_datasets(id=ds.id)[0])
r.call("cancel_done", lambda: ds.async_cancel_parse_documents([tides.id]))
r.call("async_parse_partly_unknown", lambda: ds.async_parse_documents([notes.id, "nope"]))  # notes is still queued
r.call("reparse_after_partly_unknown", lambda: wait_parsed(ds, [notes.id]))

big_ds = rag.create_dataset(name="big")
text = "\n".join(f"Line {i} tells about topic {i % 97} and the ocean number {i}." for i in range(30000)).encode()
big = big_ds.upload_documents([{"display_name": "big.txt", "blob": text}])[0]
r.call("async_parse_big", lambda: big_ds.async_parse_documents([big.id]))
r.call("parse_running", lambda: big_ds.async_parse_documents([big.id]))
r.call("cancel_running", lambda: big_ds.async_cancel_parse_documents([big.id]))
r.call("after_cancel", lambda: big_ds.list_documents(id=big.id)[0])
rag.delete_datasets(ids=[big_ds.id])

# ------------------------------------------------------------------ chunks (on notes.txt)
r.call("list_chunks", lambda: notes.list_chunks())
c = r.call("add_chunk", lambda: notes.add_chunk(
    "Neap tides occur at the first and third quarter moons.", important_keywords=["neap"],
    questions=["When are neap tides?", "  "], tag_kwd=["astronomy"]))
r.call("add_chunk_blank", lambda: notes.add_chunk("   "))
r.call("add_chunk_keywords_not_list", lambda: notes.add_chunk("x", important_keywords="neap"))
r.call("chunk_count_after_add", lambda: ds.list_documents(id=notes.id)[0].chunk_count)
r.call("list_chunks_keywords", lambda: [x.content for x in notes.list_chunks(keywords="neap")])
r.call("list_chunks_id", lambda: [x.id for x in notes.list_chunks(id=c.id)])
r.call("list_chunks_unknown_id", lambda: notes.list_chunks(id="nope"))
r.call("list_chunks_paged", lambda: [len(notes.list_chunks(page=1, page_size=1)), len(notes.list_chunks(page=2, page_size=1)), len(notes.list_chunks(page=3, page_size=1))])
r.call("update_chunk", lambda: c.update({"content": "Neap tides happen at the quarter moons.", "important_keywords": ["neap", "quarter"], "questions": ["What are neap tides?"]}))
r.call("update_chunk_listed", lambda: notes.list_chunks(id=c.id)[0])
r.call("update_chunk_blank", lambda: c.update({"content": "  "}))
r.call("update_chunk_keywords_not_list", lambda: c.update({"important_keywords": "neap"}))
r.call("update_chunk_keywords_not_str", lambda: c.update({"important_keywords": [1]}))
from ragflow_sdk.modules.chunk import Chunk  # noqa: E402
r.call("update_chunk_unknown", lambda: Chunk(rag, {"id": "nope", "dataset_id": ds.id, "document_id": notes.id}).update({"content": "x"}))
r.call("delete_chunks_unknown", lambda: notes.delete_chunks(ids=["nope"]))
extra = notes.add_chunk("A temporary chunk about gulls.")
r.call("delete_chunks_partly_unknown", lambda: notes.delete_chunks(ids=[extra.id, "nope"]))
r.call("chunks_after_partial", lambda: sorted(x.id for x in notes.list_chunks()))
r.call("delete_chunks_nothing", lambda: notes.delete_chunks())
r.call("delete_chunks", lambda: notes.delete_chunks(ids=[c.id]))
r.call("chunks_after_delete", lambda: [len(notes.list_chunks()), ds.list_documents(id=notes.id)[0].chunk_count])
r.call("delete_chunks_all", lambda: notes.delete_chunks(delete_all=True))
r.call("chunks_after_delete_all", lambda: [len(notes.list_chunks()), ds.list_documents(id=notes.id)[0].chunk_count])
first = notes.add_chunk("The same words twice.")
r.call("add_chunk_same_content", lambda: [first.id, notes.add_chunk("The same words twice.").id])  # id = xxhash64(content + document_id)
notes.delete_chunks(delete_all=True)

# ------------------------------------------------------------------ retrieve
r.call("retrieve", lambda: rag.retrieve(dataset_ids=[ds.id], question="How long should the dough rise?"))
r.call("retrieve_doc_filter", lambda: rag.retrieve(dataset_ids=[ds.id], document_ids=[tides.id], question="moon tides"))
r.call("retrieve_doc_filter_other", lambda: rag.retrieve(dataset_ids=[ds.id], document_ids=[bread.id], question="moon tides"))
r.call("retrieve_blank_question", lambda: rag.retrieve(dataset_ids=[ds.id]))
r.call("retrieve_no_question", lambda: rag.post("/retrieval", {"dataset_ids": [ds.id]}).json())
r.call("retrieve_no_datasets", lambda: rag.retrieve(dataset_ids=[], question="dough"))
r.call("retrieve_datasets_not_list", lambda: rag.retrieve(dataset_ids=ds.id, question="dough"))
r.call("retrieve_unknown_dataset", lambda: rag.retrieve(dataset_ids=["nope"], question="dough"))
r.call("retrieve_unknown_document", lambda: rag.retrieve(dataset_ids=[ds.id], document_ids=["nope"], question="dough"))
r.call("retrieve_top_k_0", lambda: rag.retrieve(dataset_ids=[ds.id], question="dough", top_k=0))
r.call("retrieve_foreign", lambda: other.retrieve(dataset_ids=[ds.id], question="dough"))

r.put("ids", {"dataset": ds.id, "tides": tides.id, "bread": bread.id, "notes": notes.id})
r.emit()

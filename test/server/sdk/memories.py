"""Memories and messages through the SDK.

Acts as a user of its own (RAGLOOM_KEY; lists are exact); RAGLOOM_KEY2 is a foreign tenant.
The models come from what the server gives a new dataset / chat by default.
"""
from common import Recorder, client, tick

rag = client()
other = client("RAGLOOM_KEY2")
r = Recorder()

probe_ds = rag.create_dataset(name="probe")
probe_chat = rag.create_chat("probe")
EMBD, LLM = probe_ds.embedding_model, probe_chat.llm_id
rag.delete_datasets(ids=[probe_ds.id])
rag.delete_chats(ids=[probe_chat.id])
r.put("models", {"embd_id": EMBD, "llm_id": LLM})

# ------------------------------------------------------------------ create
m = r.call("create", lambda: rag.create_memory("Diary", ["raw"], EMBD, LLM))
tick()
r.call("create_duplicate", lambda: rag.create_memory("Diary", ["raw"], EMBD, LLM).name)
tick()
# Name lookups are case-insensitive in RAGFlow (MySQL collation): JOURNAL -> JOURNAL(1). Both are
# deleted at once so that the lists below do not depend on it.
journal = rag.create_memory("Journal", ["raw"], EMBD, LLM)
m3 = r.call("create_duplicate_case", lambda: rag.create_memory("JOURNAL", ["raw"], EMBD, LLM))
rag.delete_memory(journal.id)
if m3:
    rag.delete_memory(m3.id)
spare = rag.create_memory("Scratchpad", ["raw"], EMBD, LLM)
r.call("create_blank_name", lambda: rag.create_memory("   ", ["raw"], EMBD, LLM))
r.call("create_long_name", lambda: rag.create_memory("m" * 129, ["raw"], EMBD, LLM))
r.call("create_bad_type", lambda: rag.create_memory("x", ["something"], EMBD, LLM))
r.call("create_bad_llm", lambda: rag.create_memory("x", ["raw"], EMBD, "no-such-llm@Nowhere"))
r.call("create_bad_embd", lambda: rag.create_memory("x", ["raw"], "no-such-embedding@Nowhere", LLM))
r.call("create_missing_args", lambda: rag.post("/memories", {"name": "x"}).json())

# ------------------------------------------------------------------ list
def listing(**kw):
    res = rag.list_memory(**kw)
    return {"code": res["code"], "message": res["message"], "total_count": res["total_count"],
            "names": [x.name for x in res["memory_list"]]}


r.call("list", lambda: listing())
r.call("list_keywords", lambda: listing(keywords="diary"))
r.call("list_page", lambda: listing(page=2, page_size=1))
r.call("list_item_keys", lambda: sorted(rag.get("/memories", {"page": 1, "page_size": 1}).json()["data"]["memory_list"][0].keys()))
r.call("foreign_list", lambda: other.list_memory()["total_count"])

# ------------------------------------------------------------------ update / config
r.call("update", lambda: m.update({"description": "Daily notes", "temperature": 0.25, "memory_size": 1048576}))
r.call("update_rename_clash", lambda: spare.update({"name": "Diary"}).name)
r.call("update_bad_permission", lambda: m.update({"permissions": "everyone"}))
r.call("update_bad_size", lambda: m.update({"memory_size": 0}))
r.call("update_bad_policy", lambda: m.update({"forgetting_policy": "LRU"}))
r.call("update_bad_temperature", lambda: m.update({"temperature": 2}))
from ragflow_sdk.modules.memory import Memory  # noqa: E402
r.call("update_foreign", lambda: Memory(other, {"id": m.id}).update({"description": "hijack"}))
r.call("update_unknown", lambda: Memory(rag, {"id": "nope"}).update({"description": "x"}))
r.call("get_config", lambda: Memory(rag, {"id": m.id}).get_config())
r.call("get_config_foreign", lambda: Memory(other, {"id": m.id}).get_config())

# ------------------------------------------------------------------ messages
r.call("add_message", lambda: rag.add_message([m.id], "agent-1", "sess-1", "What is the capital of France?", "Paris is the capital of France."))
tick()
r.call("add_message_2", lambda: rag.add_message([m.id], "agent-1", "sess-2", "How long should bread rise?", "About one hour in a warm place."))
tick()
r.call("add_message_3", lambda: rag.add_message([m.id], "agent-2", "sess-3", "Why is the sky blue?", "Sunlight scatters off air molecules; blue scatters most."))
r.call("add_message_unknown_memory", lambda: rag.add_message(["nope"], "agent-1", "sess-1", "hi", "hello"))
r.call("add_message_foreign_memory", lambda: other.add_message([m.id], "agent-1", "sess-1", "hi", "hello"))

r.call("list_messages", lambda: m.list_memory_messages())
r.call("list_messages_keywords", lambda: m.list_memory_messages(keywords="sess-2"))
r.call("list_messages_agent", lambda: m.list_memory_messages(agent_id="agent-2"))
r.call("list_messages_paged", lambda: m.list_memory_messages(page=2, page_size=2))
r.call("search", lambda: rag.search_message("capital of France", [m.id]))
r.call("search_top_n", lambda: rag.search_message("capital France bread sky", [m.id], top_n=1))
r.call("recent", lambda: rag.get_recent_messages([m.id]))
r.call("recent_limit", lambda: rag.get_recent_messages([m.id], limit=2))
r.call("recent_session", lambda: rag.get_recent_messages([m.id], session_id="sess-3"))
r.call("recent_no_memory", lambda: rag.get_recent_messages([]))

ids = {x["session_id"]: x["message_id"] for x in rag.get_recent_messages([m.id])}
r.put("message_ids", ids)
r.call("content", lambda: m.get_message_content(ids["sess-1"]))
r.call("content_unknown", lambda: m.get_message_content(99999))
r.call("status_off", lambda: m.update_message_status(ids["sess-1"], False))
r.call("search_after_status_off", lambda: [x["message_id"] for x in rag.search_message("capital of France", [m.id])])
r.call("status_not_bool", lambda: m.update_message_status(ids["sess-1"], "no"))
r.call("forget", lambda: m.forget_message(ids["sess-2"]))
r.call("recent_after_forget", lambda: [x["session_id"] for x in rag.get_recent_messages([m.id])])
r.call("search_after_forget", lambda: [x["message_id"] for x in rag.search_message("bread rise", [m.id])])
r.call("list_after_forget", lambda: m.list_memory_messages()["messages"])
r.call("update_type_not_empty", lambda: m.update({"memory_type": ["raw", "semantic"]}))

# ------------------------------------------------------------------ delete
r.call("delete_foreign", lambda: other.delete_memory(m.id))
r.call("delete_unknown", lambda: rag.delete_memory("nope"))
r.call("delete", lambda: rag.delete_memory(spare.id))
r.call("list_after_delete", lambda: listing())
r.call("config_after_delete", lambda: Memory(rag, {"id": spare.id}).get_config())
r.put("refs", {"memory": m.id, "spare": spare.id})
r.emit()

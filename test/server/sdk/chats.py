"""Chat assistants, sessions and Session.ask through the SDK.

RAGLOOM_IN: {"dataset": <id of documents.py's parsed "library">} (tides.md + bread.md parsed;
the built-in extractive model answers from them). RAGLOOM_KEY2 is a foreign tenant.
"""
import json

from common import INPUT, Recorder, client, tick

rag = client()
other = client("RAGLOOM_KEY2")
r = Recorder()
DS = INPUT["dataset"]

unparsed = rag.create_dataset(name="unparsed")
theirs = other.create_dataset(name="their-library")
r.put("refs", {"unparsed": unparsed.id, "theirs": theirs.id})

# ------------------------------------------------------------------ create
chat = r.call("create", lambda: rag.create_chat("Librarian", dataset_ids=[DS]))
tick()
helper = r.call("create_no_datasets", lambda: rag.create_chat("Helper"))
tick()
scratch = rag.create_chat("Scratch")
tick()
r.call("create_duplicate", lambda: rag.create_chat("LIBRARIAN", dataset_ids=[DS]))
r.call("create_blank_name", lambda: rag.create_chat("   "))
r.call("create_unknown_dataset", lambda: rag.create_chat("x", dataset_ids=["nope"]))
r.call("create_unparsed_dataset", lambda: rag.create_chat("x", dataset_ids=[unparsed.id]))
r.call("create_foreign_dataset", lambda: rag.create_chat("x", dataset_ids=[theirs.id]))
r.call("create_bad_llm", lambda: rag.create_chat("x", llm_id="no-such-llm@Nowhere"))
r.call("create_bad_rerank", lambda: rag.create_chat("x", rerank_id="no-such-reranker"))
r.call("create_bad_prompt_config", lambda: rag.post("/chats", {"name": "x", "prompt_config": "be nice"}).json())

# ------------------------------------------------------------------ list / get
names = lambda cs: [c.name for c in cs]
r.call("list_default", lambda: names(rag.list_chats()))
r.call("list_asc", lambda: names(rag.list_chats(desc=False)))
r.call("list_page", lambda: [names(rag.list_chats(page=1, page_size=2)), names(rag.list_chats(page=2, page_size=2))])
r.call("list_keywords", lambda: names(rag.list_chats(keywords="HELP")))
r.call("list_name", lambda: names(rag.list_chats(name="librarian")))
r.call("list_id", lambda: names(rag.list_chats(id=chat.id)))
r.call("get_chat", lambda: rag.get_chat(chat.id))
r.call("get_chat_unknown", lambda: rag.get_chat("nope"))
r.call("get_chat_foreign", lambda: other.get_chat(chat.id))

# ------------------------------------------------------------------ update (PATCH merges)
r.call("update", lambda: chat.update({"prompt_config": {"empty_response": "Nothing found in the library."}, "llm_setting": {"temperature": 0.2}, "top_n": 4}))
r.call("update_read_back", lambda: rag.get_chat(chat.id))
r.call("update_empty_name", lambda: chat.update({"name": ""}))
r.call("update_name_clash", lambda: chat.update({"name": "helper"}))
r.call("update_not_dict", lambda: chat.update("name=x"))
r.call("update_rename", lambda: helper.update({"name": "Helper Two"}))
r.call("update_rename_read_back", lambda: rag.get_chat(helper.id).name)

# ------------------------------------------------------------------ delete
r.call("delete_partial", lambda: rag.delete_chats(ids=[scratch.id, "nope"]))
r.call("list_after_partial", lambda: names(rag.list_chats()))
tmp = rag.create_chat("Temporary")
r.call("delete_partial_envelope", lambda: rag.delete("/chats", {"ids": [tmp.id, "nope"], "delete_all": False}).json())
r.call("delete_all_unknown", lambda: rag.delete_chats(ids=["nope1", "nope2"]))
r.call("delete_none", lambda: rag.delete_chats(ids=[]))
r.call("get_deleted", lambda: rag.get_chat(scratch.id))
r.call("count_after_deletes", lambda: len(rag.list_chats()))

# ------------------------------------------------------------------ sessions
s = r.call("session_create", lambda: chat.create_session())
tick()
s2 = r.call("session_create_named", lambda: chat.create_session("Tides"))
tick()
s3 = chat.create_session("Doomed")
r.call("session_create_blank", lambda: chat.create_session("   "))
r.call("session_create_deleted_chat", lambda: scratch.create_session("x"))
snames = lambda ss: [x.name for x in ss]
r.call("sessions_list", lambda: snames(chat.list_sessions()))
r.call("sessions_list_asc", lambda: snames(chat.list_sessions(desc=False)))
r.call("sessions_list_name", lambda: snames(chat.list_sessions(name="Tides")))
r.call("sessions_list_name_case", lambda: snames(chat.list_sessions(name="TIDES")))
r.call("sessions_list_id", lambda: snames(chat.list_sessions(id=s.id)))
r.call("sessions_list_page", lambda: [snames(chat.list_sessions(page=2, page_size=2)), snames(chat.list_sessions(page_size=0))])
r.call("session_update", lambda: s2.update({"name": "Tides and moon"}))
r.call("session_update_read_back", lambda: snames(chat.list_sessions(id=s2.id)))
r.call("session_update_blank", lambda: s2.update({"name": "  "}))
r.call("session_update_messages", lambda: s2.update({"messages": []}))
r.call("session_update_reference", lambda: s2.update({"reference": []}))

# ------------------------------------------------------------------ ask
def ask(session, question, stream):
    return [{"content": m.content, "role": m.role, "reference": m.reference} for m in session.ask(question, stream=stream)]


r.call("ask", lambda: ask(s, "How long should the dough rise?", False))
r.call("ask_stream", lambda: ask(s, "Why are there spring tides?", True))
r.call("ask_no_match", lambda: ask(s2, "zebra xylophone quantum", False))
r.call("ask_no_match_stream", lambda: ask(s2, "zebra xylophone quantum", True))
r.call("session_messages", lambda: chat.list_sessions(id=s.id)[0].messages)

# ------------------------------------------------------------------ delete sessions
r.call("sessions_delete_partial", lambda: chat.delete_sessions(ids=[s3.id, "nope"]))
r.call("sessions_after_partial", lambda: snames(chat.list_sessions()))
tmp_s = chat.create_session("Short-lived")
r.call("sessions_delete_partial_envelope", lambda: rag.delete(f"/chats/{chat.id}/sessions", {"ids": [tmp_s.id, "nope"], "delete_all": False}).json())
r.call("sessions_delete_unknown", lambda: chat.delete_sessions(ids=["nope"]))
r.call("sessions_delete", lambda: chat.delete_sessions(ids=[s2.id]))
r.call("sessions_after_delete", lambda: snames(chat.list_sessions()))
r.call("ask_deleted_session", lambda: ask(s2, "hello", False))
r.call("ask_deleted_session_stream", lambda: ask(s2, "hello", True))
r.call("ask_deleted_session_envelope", lambda: rag.post(f"/chats/{chat.id}/completions", {"question": "hello", "stream": False, "session_id": s2.id}).json())

other.delete_datasets(ids=[theirs.id])
rag.delete_datasets(ids=[unparsed.id])
r.emit()

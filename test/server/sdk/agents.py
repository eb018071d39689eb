"""Agents, agent sessions and Session.ask through the SDK.

Acts as a user of its own (RAGLOOM_KEY; lists are exact); RAGLOOM_KEY2 is a foreign tenant;
RAGLOOM_KEY3 is a member of RAGLOOM_KEY's tenant (added by the test before this script runs).
"""
from common import URL, Recorder, client, tick
from ragflow_sdk import RAGFlow
from ragflow_sdk.modules.agent import Agent
from ragflow_sdk.modules.session import Session

rag = client()
other = client("RAGLOOM_KEY2")
member = client("RAGLOOM_KEY3")
r = Recorder()


def dsl(prologue="Hello from the agent."):
    """A runnable canvas: Begin (with a prologue) -> Message, with state a session must not inherit."""
    return {
        "components": {
            "begin": {"obj": {"component_name": "Begin", "params": {"mode": "conversational", "prologue": prologue}},
                      "downstream": ["Message:Reply"], "upstream": []},
            "Message:Reply": {"obj": {"component_name": "Message", "params": {"content": ["You said: {sys.query}"]}},
                              "downstream": [], "upstream": ["begin"]},
        },
        "globals": {"sys.query": "left over", "sys.user_id": "", "sys.conversation_turns": 2, "sys.files": []},
        "history": [["user", "left over"]],
        "path": ["begin"],
        "retrieval": [],
        "graph": {"nodes": [], "edges": []},
    }


def web_dsl():
    d = dsl()
    d["components"]["Agent:Search"] = {
        "obj": {"component_name": "Agent", "params": {"llm_id": "ragloom-extractive@Builtin", "tools": [{"component_name": "DuckDuckGo", "params": {}}]}},
        "downstream": [], "upstream": [],
    }
    return d


titles = lambda agents: [a.title for a in agents]
by_title = lambda title: next(a for a in rag.list_agents() if a.title == title)

# ------------------------------------------------------------------ create (returns None)
r.call("create", lambda: rag.create_agent("Echo", dsl(), description="repeats you"))
tick()
r.call("create_second", lambda: rag.create_agent("Second", dsl("Hi two."), canvas_type="chatbot"))
tick()
rag.create_agent("Shared", dsl("Team hello."))
r.call("create_duplicate", lambda: rag.create_agent("ECHO", dsl()))
r.call("create_web_tool", lambda: rag.create_agent("Web", web_dsl()))
r.call("create_dataflow", lambda: rag.create_agent("Flow", {"components": {"File": {"obj": {"component_name": "File", "params": {}}, "downstream": [], "upstream": []}}}))
# The SDK's type hints refuse a non-dict dsl before any request: the server's own answers.
r.call("create_dsl_not_dict", lambda: rag.create_agent("x", "{}"))
r.call("create_no_dsl_envelope", lambda: rag.post("/agents", {"title": "x"}).json())
r.call("create_bad_json_envelope", lambda: rag.post("/agents", {"title": "x", "dsl": "{oops"}).json())
r.call("create_list_dsl_envelope", lambda: rag.post("/agents", {"title": "x", "dsl": [1]}).json())
r.call("create_no_title_envelope", lambda: rag.post("/agents", {"dsl": dsl()}).json())
r.call("create_envelope", lambda: rag.post("/agents", {"title": "Raw", "dsl": dsl()}).json())

# ------------------------------------------------------------------ list / get
r.call("list_default", lambda: titles(rag.list_agents()))
r.call("list_asc", lambda: titles(rag.list_agents(desc=False, orderby="create_time")))
r.call("list_page", lambda: [titles(rag.list_agents(page=1, page_size=2)), titles(rag.list_agents(page=3, page_size=2))])
r.call("list_envelope", lambda: rag.get("/agents", {"page": 1, "page_size": 1, "keywords": "echo"}).json())
echo = by_title("Echo")
second = by_title("Second")
shared = by_title("Shared")
r.put("ids", {"echo": echo.id, "second": second.id, "shared": shared.id})
r.call("list_item", lambda: echo)
r.call("get_agent", lambda: rag.get_agent(echo.id))
r.call("get_agent_unknown", lambda: rag.get_agent("nope"))
r.call("get_agent_foreign", lambda: other.get_agent(echo.id))
r.call("foreign_list", lambda: titles(other.list_agents()))

# ------------------------------------------------------------------ update (returns None)
r.call("update", lambda: rag.update_agent(echo.id, title="Echo 2", dsl=dsl("Updated hello.")))
r.call("update_read_back", lambda: rag.get_agent(echo.id))
r.call("update_description", lambda: rag.update_agent(second.id, description="the second one"))
r.call("update_duplicate", lambda: rag.update_agent(second.id, title="echo 2"))
r.call("update_web_tool", lambda: rag.update_agent(second.id, dsl=web_dsl()))
r.call("update_unknown", lambda: rag.update_agent("nope", title="x"))
r.call("update_foreign", lambda: other.update_agent(echo.id, title="hijack"))
r.call("update_foreign_envelope", lambda: other.put(f"/agents/{echo.id}", {"title": "hijack"}).json())
r.call("versions", lambda: [v["title"].split("_")[:2] for v in rag.get(f"/agents/{echo.id}/versions").json()["data"]])

# ------------------------------------------------------------------ sharing with the team
r.call("share", lambda: rag.put(f"/agents/{shared.id}", {"permission": "team"}).json())
r.call("member_list", lambda: titles(member.list_agents()))
r.call("member_get", lambda: member.get_agent(shared.id).title)
r.call("member_get_private", lambda: member.get_agent(echo.id))
r.call("member_update", lambda: member.update_agent(shared.id, description="edited by a member"))
r.call("member_session", lambda: member.get_agent(shared.id).create_session().message)
r.call("member_delete_sessions", lambda: member.get_agent(shared.id).delete_sessions(delete_all=True))
r.call("member_delete", lambda: member.delete_agent(shared.id))

# ------------------------------------------------------------------ sessions
agent = rag.get_agent(echo.id)
s1 = r.call("session_create", lambda: agent.create_session())
tick()
s2 = r.call("session_create_named", lambda: agent.create_session(name="second", user_id="visitor"))
tick()
s3 = agent.create_session()
r.call("session_create_release", lambda: agent.create_session(release=True))
r.call("session_create_foreign", lambda: Agent(other, {"id": echo.id}).create_session())
r.call("session_create_envelope", lambda: rag.post(f"/agents/{echo.id}/sessions", {}).json())
ids = lambda sessions: [s.id for s in sessions]
r.put("session_ids", [s.id for s in (s1, s2, s3) if s])
r.call("sessions_list", lambda: ids(agent.list_sessions()))
r.call("sessions_list_asc", lambda: ids(agent.list_sessions(desc=False)))
r.call("sessions_list_page", lambda: [ids(agent.list_sessions(page=2, page_size=2)), ids(agent.list_sessions(page=3, page_size=2))])
r.call("sessions_list_id", lambda: ids(agent.list_sessions(id=s2.id)))
r.call("sessions_list_item", lambda: agent.list_sessions(id=s1.id)[0])
r.call("sessions_list_envelope", lambda: rag.get(f"/agents/{echo.id}/sessions", {"page": 1, "page_size": 1, "dsl": "false"}).json())
r.call("sessions_list_foreign", lambda: Agent(other, {"id": echo.id}).list_sessions())
r.call("session_get_envelope", lambda: rag.get(f"/agents/{echo.id}/sessions/{s1.id}").json())

# ------------------------------------------------------------------ Session.ask (agent sessions)
before_ask = {s.id for s in agent.list_sessions()}
talk = agent.create_session()
r.call("ask", lambda: [(m.role, m.content) for m in talk.ask("hello there", stream=False)])
r.call("ask_stream", lambda: [m.content for m in talk.ask("streamed", stream=True)])
r.call("ask_history", lambda: [(m["role"], m["content"]) for m in agent.list_sessions(id=talk.id)[0].message])
r.call("ask_envelope", lambda: rag.post("/agents/chat/completions", {"agent_id": echo.id, "session_id": talk.id, "query": "raw", "stream": False, "return_trace": True}).json())
r.call("ask_sse", lambda: [line for line in rag.post("/agents/chat/completions", {"agent_id": echo.id, "query": "sse", "stream": True}, stream=True).iter_lines(decode_unicode=True) if line])
r.call("ask_no_agent_envelope", lambda: rag.post("/agents/chat/completions", {"query": "x"}).json())
r.call("ask_unknown_session", lambda: list(Session(rag, {"id": "nope", "agent_id": echo.id}).ask("x")))
r.call("ask_foreign", lambda: other.post("/agents/chat/completions", {"agent_id": echo.id, "query": "x", "stream": False}).json())
form = rag.create_agent("Form", {"components": {
    "begin": {"obj": {"component_name": "Begin", "params": {}}, "downstream": ["UserFillUp:Who"], "upstream": []},
    "UserFillUp:Who": {"obj": {"component_name": "UserFillUp", "params": {"enable_tips": True, "tips": "Name please", "inputs": {"name": {"type": "line", "name": "Name"}}}},
                        "downstream": ["Message:Hi"], "upstream": ["begin"]},
    "Message:Hi": {"obj": {"component_name": "Message", "params": {"content": ["Hi {UserFillUp:Who@name}"]}}, "downstream": [], "upstream": ["UserFillUp:Who"]},
}})
form_session = by_title("Form").create_session()
r.call("ask_form_pause", lambda: rag.post("/agents/chat/completions", {"agent_id": form_session.agent_id, "session_id": form_session.id, "query": "hi", "stream": False}).json()["data"]["event"])
r.call("ask_form_resume", lambda: [m.content for m in form_session.ask("", stream=False, inputs={"name": {"type": "line", "value": "Ada"}})])
# Leave the lists below as they were.
agent.delete_sessions(ids=[s.id for s in agent.list_sessions() if s.id not in before_ask])
rag.delete_agent(form_session.agent_id)

# ------------------------------------------------------------------ delete sessions (token_required)
r.call("sessions_delete_partial", lambda: agent.delete_sessions(ids=[s1.id, "nope"]))
r.call("sessions_after_partial", lambda: ids(agent.list_sessions()))
r.call("sessions_delete_partial_envelope", lambda: rag.delete(f"/agents/{echo.id}/sessions", {"ids": [s2.id, s2.id]}).json())
r.call("sessions_delete_unknown", lambda: agent.delete_sessions(ids=["nope"]))
r.call("sessions_delete_foreign", lambda: Agent(other, {"id": echo.id}).delete_sessions(ids=[s3.id]))
r.call("sessions_delete_bad_key", lambda: (lambda res: [res.status_code, res.json()])(RAGFlow("ragflow-bad", URL).delete(f"/agents/{echo.id}/sessions", {"ids": [s3.id]})))
r.call("sessions_delete", lambda: agent.delete_sessions(ids=[s3.id]))
r.call("sessions_delete_none", lambda: agent.delete_sessions())
r.call("sessions_after_delete", lambda: ids(agent.list_sessions()))
r.call("sessions_delete_all", lambda: (agent.create_session(), agent.delete_sessions(delete_all=True), ids(agent.list_sessions()))[2])

# ------------------------------------------------------------------ delete (returns None)
r.call("delete_foreign", lambda: other.delete_agent(second.id))
r.call("delete", lambda: rag.delete_agent(second.id))
r.call("delete_again", lambda: rag.delete_agent(second.id))
r.call("list_after_delete", lambda: titles(rag.list_agents()))
r.call("get_deleted", lambda: rag.get_agent(second.id))

r.emit()

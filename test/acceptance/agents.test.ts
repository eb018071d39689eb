/**
 * Agents and their sessions through the Client, in both modes: create / list / get / update /
 * delete, sessions create / list / delete, and the errors, which must be the same locally and
 * over HTTP.
 */
import { describe, expect } from 'vitest';
import { Agent, AgentSession, type Client } from '../../src/index.js';
import { MODES, acceptance, failure, portable, NOT_AN_ID } from './modes.js';

/** A runnable canvas: Begin (with a prologue) → Message. */
function dsl(prologue = 'Hello from the agent.'): Record<string, unknown> {
  return {
    components: {
      begin: { obj: { component_name: 'Begin', params: { mode: 'conversational', prologue } }, downstream: ['Message:Reply'], upstream: [] },
      'Message:Reply': { obj: { component_name: 'Message', params: { content: ['You said: {sys.query}'] } }, downstream: [], upstream: ['begin'] },
    },
    globals: { 'sys.query': 'left over', 'sys.user_id': '', 'sys.conversation_turns': 2, 'sys.files': [] },
    history: [['user', 'left over']],
    path: ['begin'],
    retrieval: [],
    graph: { nodes: [], edges: [] },
  };
}

/** A version title without its time stamp (`<nickname>_<title>_<local time>`). */
const titled = (v: Record<string, unknown>) => ({ ...v, version_title: String(v.version_title).replace(/_\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, '_<time>') });

/** The same steps on any client, without ids and times. */
async function lifecycle(c: Client) {
  const a = await c.createAgent({ title: 'Echo', dsl: dsl(), description: 'repeats you' });
  const s = await a.createSession({ name: 'one' });
  await a.createSession({ user_id: 'visitor' });
  const listed = await a.listSessions({ desc: false });
  return {
    agent: portable(a.toJSON()),
    session: titled(portable(s.toJSON()) as Record<string, unknown>),
    listed: listed.map((x) => titled(portable(x.toJSON()) as Record<string, unknown>)),
    agents: (await c.listAgents()).map((x) => portable(x.toJSON())),
  };
}

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  test('Client#createAgent() / getAgent() / listAgents() / updateAgent() / deleteAgent()', async ({ client }) => {
    const a = await client.createAgent({ title: ' Echo ', dsl: dsl(), description: 'repeats you', canvas_type: 'chatbot' });
    expect(a).toBeInstanceOf(Agent);
    expect(a).toMatchObject({ title: 'Echo', description: 'repeats you', canvas_type: 'chatbot', canvas_category: 'agent_canvas', permission: 'me', dsl: dsl() });
    expect(a.id).toMatch(/^[0-9a-f]{32}$/);
    const b = await client.createAgent({ title: 'Second', dsl: JSON.stringify(dsl('Hi two.')) });
    expect(b.dsl).toEqual(dsl('Hi two.'));

    const got = await client.getAgent(a.id);
    expect(got.toJSON()).toEqual({ ...a.toJSON(), last_publish_time: null });
    // SDK defaults: newest updated first; listed agents carry no dsl.
    const list = await client.listAgents();
    expect(list.map((x) => x.title)).toEqual(['Second', 'Echo']);
    expect(list[0]!.dsl).toBeUndefined();
    expect((await client.listAgents({ keywords: 'ech' })).map((x) => x.id)).toEqual([a.id]);
    expect((await client.listAgents({ page: 2, page_size: 1 })).map((x) => x.id)).toEqual([a.id]);
    expect((await client.listAgents({ orderby: 'title', desc: false })).map((x) => x.title)).toEqual(['Echo', 'Second']);

    await client.updateAgent(a.id, { title: 'Echo 2', dsl: dsl('Updated.'), release: true });
    const updated = await client.getAgent(a.id);
    expect(updated).toMatchObject({ title: 'Echo 2', release: true, last_publish_time: expect.any(Number) });
    expect(updated.dsl).toEqual(dsl('Updated.'));

    await client.deleteAgent(b.id);
    expect((await client.listAgents()).map((x) => x.id)).toEqual([a.id]);
  });

  test('errors are the same in both modes; a refused agent is not written', async ({ client }) => {
    await client.createAgent({ title: 'Taken', dsl: dsl() });
    expect(await failure(client.createAgent({ title: 'x' } as never))).toEqual([101, 'No DSL data in request.']);
    expect(await failure(client.createAgent({ title: 'x', dsl: '{oops' }))).toEqual([101, 'Invalid DSL JSON string.']);
    expect(await failure(client.createAgent({ title: 'x', dsl: '[1]' }))).toEqual([101, 'DSL must be a JSON object.']);
    expect(await failure(client.createAgent({ dsl: dsl() } as never))).toEqual([101, 'No title in request.']);
    expect(await failure(client.createAgent({ title: 'TAKEN', dsl: dsl() }))).toEqual([102, 'TAKEN already exists.']);
    const web = dsl();
    (web.components as Record<string, { obj: { component_name: string } }>)['Message:Reply']!.obj.component_name = 'DuckDuckGo';
    const [code, message] = await failure(client.createAgent({ title: 'web', dsl: web }));
    expect(code).toBe(101);
    expect(message).toContain('DuckDuckGo');
    expect((await client.listAgents()).map((x) => x.title)).toEqual(['Taken']);
    expect(await failure(client.getAgent(NOT_AN_ID))).toEqual([102, 'canvas not found.']);
    expect(await failure(client.updateAgent(NOT_AN_ID, { title: 'x' }))).toEqual([103, 'Make sure you have permission to access the agent.']);
    expect(await failure(client.deleteAgent(NOT_AN_ID))).toEqual([103, 'Only the owner of the agent is authorized for this operation.']);
  });

  test('Agent#createSession() / listSessions() / deleteSessions()', async ({ client }) => {
    const a = await client.createAgent({ title: 'Echo', dsl: dsl() });
    const s = await a.createSession({ name: 'first' });
    expect(s).toBeInstanceOf(AgentSession);
    expect(s).toMatchObject({ agent_id: a.id, name: 'first', source: 'agent', message: [{ role: 'assistant', content: 'Hello from the agent.' }] });
    expect((s as unknown as { messages: unknown }).messages).toEqual(s.message);
    // The session's canvas starts clean.
    expect(s.dsl).toMatchObject({ path: [], history: [], globals: { 'sys.query': '', 'sys.conversation_turns': 0 } });
    const t = await a.createSession({ user_id: 'visitor' });
    expect(t.user_id).toBe('visitor');
    expect(await failure(a.createSession({ release: true }))).toEqual([102, 'No available published version']);

    expect((await a.listSessions()).map((x) => x.id)).toEqual([t.id, s.id]);
    expect((await a.listSessions({ desc: false, page_size: 1 })).map((x) => x.id)).toEqual([s.id]);
    expect((await a.listSessions({ user_id: 'visitor' })).map((x) => x.id)).toEqual([t.id]);
    const [light] = await a.listSessions({ id: s.id, dsl: false });
    expect(light!.dsl).toBeUndefined();
    expect(light!.message).toEqual(s.message);

    // Unknown ids among known ones: the known ones go and the call resolves; only unknown ones: 102.
    await a.deleteSessions({ ids: [s.id, NOT_AN_ID] });
    expect((await a.listSessions()).map((x) => x.id)).toEqual([t.id]);
    expect(await failure(a.deleteSessions({ ids: [NOT_AN_ID] }))).toEqual([102, `The agent doesn't own the session ${NOT_AN_ID}`]);
    await a.deleteSessions({ delete_all: true });
    expect(await a.listSessions()).toEqual([]);
    await client.deleteAgent(a.id);
    expect(await failure(a.listSessions())).toEqual([103, 'Make sure you have permission to access the agent.']);
  });

  test('the same steps give the same agents and sessions as the embedded engine', async ({ client, reference }) => {
    expect(await lifecycle(client)).toEqual(await lifecycle(reference));
  });
});

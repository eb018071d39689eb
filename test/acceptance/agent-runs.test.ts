/**
 * Running agents in both modes: `session.ask` (one answer, streamed, with a trace), a form that
 * pauses and resumes, raw events, the run's errors; the same answers locally and over HTTP.
 */
import { describe, expect } from 'vitest';
import type { Client } from '../../src/index.js';
import { MODES, acceptance, failure, parsedDataset, NOT_AN_ID } from './modes.js';

function chatbot(datasetId: string): Record<string, unknown> {
  const c = (name: string, params: Record<string, unknown>, down: string[], up: string[]) => ({ obj: { component_name: name, params }, downstream: down, upstream: up });
  return {
    components: {
      begin: c('Begin', { prologue: 'Ask me about science.' }, ['Retrieval:Find'], []),
      'Retrieval:Find': c('Retrieval', { query: 'sys.query', dataset_ids: [datasetId], similarity_threshold: 0.1, top_n: 3 }, ['LLM:Answer'], ['begin']),
      'LLM:Answer': c('LLM', { llm_id: 'ragloom-extractive@Builtin', sys_prompt: 'Use {Retrieval:Find@formalized_content}', prompts: [{ role: 'user', content: '{sys.query}' }] }, ['Message:Out'], ['Retrieval:Find']),
      'Message:Out': c('Message', { content: ['{LLM:Answer@content}'] }, [], ['LLM:Answer']),
    },
    history: [], path: [], retrieval: [], globals: {},
  };
}

function form(): Record<string, unknown> {
  const c = (name: string, params: Record<string, unknown>, down: string[], up: string[]) => ({ obj: { component_name: name, params }, downstream: down, upstream: up });
  return {
    components: {
      begin: c('Begin', {}, ['UserFillUp:Who'], []),
      'UserFillUp:Who': c('UserFillUp', { enable_tips: true, tips: 'Who asks "{sys.query}"?', inputs: { name: { type: 'line', name: 'Name' } } }, ['Message:Hi'], ['begin']),
      'Message:Hi': c('Message', { content: ['Hello {UserFillUp:Who@name}'] }, [], ['UserFillUp:Who']),
    },
    history: [], path: [], retrieval: [], globals: {},
  };
}

async function conversation(c: Client) {
  const { ds } = await parsedDataset(c);
  const agent = await c.createAgent({ title: 'science bot', dsl: chatbot(ds.id) });
  const s = await agent.createSession();
  const plain = await s.ask('What causes spring tides?', { return_trace: true });
  const streamed: string[] = [];
  let last;
  for await (const m of s.ask('How long should the dough rise?', { stream: true })) {
    streamed.push(m.content);
    last = m;
  }
  const [stored] = await agent.listSessions({ id: s.id });
  return {
    prologue: s.message[0]!.content,
    plain: { content: plain.content, event: plain.event, docs: (plain.reference ?? []).map((r) => r.document_name), trace: plain.trace?.map((t) => t.component_id) },
    streamed: { grows: streamed.every((x, i) => i === 0 || x.startsWith(streamed[i - 1]!)), final: last!.content, isFinal: last!.final, docs: (last!.reference ?? []).map((r) => r.document_name) },
    stored: stored!.message.map((m) => [m.role, m.content]),
  };
}

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  test('a session asks, streams and keeps the conversation, as the local engine does', async ({ client, reference }) => {
    const got = await conversation(client);
    expect(got.prologue).toBe('Ask me about science.');
    expect(got.plain.event).toBe('workflow_finished');
    expect(got.plain.content).toMatch(/moon/);
    expect(got.plain.docs).toContain('tides.md');
    expect(got.plain.trace).toEqual(['begin', 'Retrieval:Find', 'LLM:Answer', 'Message:Out']);
    expect(got.streamed.grows).toBe(true);
    expect(got.streamed.isFinal).toBe(true);
    expect(got.streamed.final).toMatch(/one hour/);
    expect(got.stored.map(([r]) => r)).toEqual(['assistant', 'user', 'assistant', 'user', 'assistant']);
    if (mode === 'remote') expect(got).toEqual(await conversation(reference));
  });

  test('a form pauses the run; the next ask answers it', async ({ client }) => {
    const agent = await client.createAgent({ title: 'form', dsl: form() });
    const s = await agent.createSession();
    const paused = await s.ask('parking');
    expect(paused.event).toBe('user_inputs');
    expect(paused.tips).toBe('Who asks "parking"?');
    expect(paused.inputs).toHaveProperty('name');
    const done = await s.ask('', { inputs: { name: { value: 'Ada' } } });
    expect(done.content).toBe('Hello Ada');
    expect(done.event).toBe('workflow_finished');
  });

  test('Begin inputs given at createSession answer the form on every run, unless the ask answers it', async ({ client }) => {
    const c = (name: string, params: Record<string, unknown>, down: string[], up: string[]) => ({ obj: { component_name: name, params }, downstream: down, upstream: up });
    const dsl = {
      components: {
        begin: c('Begin', { inputs: { lang: { type: 'line', name: 'Language' } } }, ['Message:M'], []),
        'Message:M': c('Message', { content: ['{sys.query} in {begin@lang}'] }, [], ['begin']),
      },
    };
    const agent = await client.createAgent({ title: 'preset', dsl });
    const s = await agent.createSession({ inputs: { lang: { value: 'French' } } });
    expect((await s.ask('hello')).content).toBe('hello in French');
    expect((await s.ask('bye', { inputs: { lang: { value: 'Dutch' } } })).content).toBe('bye in Dutch');
    const s2 = await agent.createSession({ lang: 'Greek' });
    expect((await s2.ask('thanks')).content).toBe('thanks in Greek');
  });

  test('raw events in RAGFlow’s order, each with the session', async ({ client }) => {
    const agent = await client.createAgent({ title: 'form2', dsl: form() });
    const s = await agent.createSession();
    const events = [];
    for await (const ev of s.events('hi')) events.push(ev);
    expect(events.map((e) => e.event)).toEqual(['workflow_started', 'node_started', 'node_finished', 'user_inputs']);
    expect(new Set(events.map((e) => e.session_id))).toEqual(new Set([s.id]));
  });

  test('bad requests fail before anything runs', async ({ client }) => {
    const agent = await client.createAgent({ title: 'form3', dsl: form() });
    const other = await client.createAgent({ title: 'form4', dsl: form() });
    const s = await agent.createSession();
    const t = (client as unknown as { t: { call(op: string, p: Record<string, unknown>): Promise<unknown> } }).t;
    expect(await failure(t.call('agents.completion', { query: 'x', stream: false }))).toEqual([101, '`agent_id` is required.']);
    expect((await failure(t.call('agents.completion', { agent_id: agent.id, query: 'x', 'openai-compatible': true })))[0]).toBe(101);
    expect(await failure(t.call('agents.completion', { agent_id: agent.id, session_id: NOT_AN_ID, query: 'x', stream: false }))).toEqual([102, 'Session not found!']);
    expect(await failure(t.call('agents.completion', { agent_id: other.id, session_id: s.id, query: 'x', stream: false }))).toEqual([103, 'Session does not belong to the requested agent.']);
    expect(await failure(t.call('agents.completion', { agent_id: NOT_AN_ID, query: 'x', stream: false }))).toEqual([103, 'Make sure you have permission to access the agent.']);
    expect(await failure(t.call('agents.completion', { agent_id: agent.id, query: 'x', stream: false, release: true }))).toEqual([102, 'No available published version']);
  });
});

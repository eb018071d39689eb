/**
 * The canvas runtime against real parts: a real database with a parsed dataset (retrieval), the
 * built-in extractive model and embedding model, the real sandbox, and a loopback
 * OpenAI-compatible server for a generative model that calls tools.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../../src/api/index.js';
import { runtimeDeps } from '../../src/api/agent-completion.js';
import { Canvas, type RuntimeDeps } from '../../src/agent/index.js';
import { NOT_FOUND_ANSWER } from '../../src/llm/extractive.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { buildDsl, collect, finished, messageText } from './support-dsl.js';

let dir: string;
let api: Api;
let deps: RuntimeDeps;
let datasetId: string;
let chat: ChatServer;
const MODEL = 'mock@OpenAI-API-Compatible';

const DOC = `Solar panels
Photovoltaic cells convert sunlight directly into electricity. A typical rooftop system produces between 3 and 8 kilowatts.

Wind turbines
Wind turbines convert the kinetic energy of moving air into electricity. Offshore turbines can exceed 12 megawatts each.

Batteries
Lithium-ion batteries store electricity for use after sunset. Home batteries usually hold 10 to 15 kilowatt-hours.`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-agent-'));
  chat = await startChatServer();
  api = new Api({
    path: join(dir, 'kb.db'),
    models: [{ type: 'chat', name: 'mock', factory: 'OpenAI-API-Compatible', base_url: chat.url, api_key: 'x' }],
    agents: { code_timeout_ms: 3000 },
  });
  const ds = (await api.call('datasets.create', { name: 'energy' })) as { id: string };
  datasetId = ds.id;
  const up = (await api.call('documents.upload', { dataset_id: ds.id, files: [{ display_name: 'energy.txt', blob: new TextEncoder().encode(DOC) }] })) as Array<{ id: string }>;
  await api.call('documents.parse', { dataset_id: ds.id, document_ids: up.map((d) => d.id) });
  for (let i = 0; i < 200; i++) {
    const docs = (await api.call('documents.list', { dataset_id: ds.id })) as { docs: Array<{ run: string }> };
    if (docs.docs.every((d) => d.run === 'DONE')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  deps = await runtimeDeps(api.engine, api.engine.local, api.memoryTasks);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await chat?.close();
  await rm(dir, { recursive: true, force: true });
});

const run = (dsl: Record<string, unknown>, opts: Parameters<Canvas['run']>[0] = {}, d: RuntimeDeps = deps) => {
  const canvas = new Canvas(dsl, d);
  return { canvas, events: collect(canvas.run(opts)) };
};

/** Retrieval → LLM with the built-in model → Message: an offline answer from the energy dataset. */
const offlineAnswerDsl = () => buildDsl({
  begin: { type: 'Begin', down: ['Retrieval:Find'] },
  'Retrieval:Find': { type: 'Retrieval', params: { query: 'sys.query', dataset_ids: [datasetId], similarity_threshold: 0, top_n: 4 }, down: ['LLM:Answer'] },
  'LLM:Answer': { type: 'LLM', params: { llm_id: 'ragloom-extractive@Builtin', sys_prompt: 'Answer from {Retrieval:Find@formalized_content}', prompts: [{ role: 'user', content: '{sys.query}' }] }, down: ['Message:Out'] },
  'Message:Out': { type: 'Message', params: { content: ['{LLM:Answer@content}'] } },
});

describe('the run loop', () => {
  it('runs begin → message and emits RAGFlow’s events in order', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', params: { prologue: 'Hi' }, down: ['Message:Echo'] },
      'Message:Echo': { type: 'Message', params: { content: ['You said: {sys.query}'] } },
    });
    const { events } = run(dsl, { query: 'hello there' });
    const evs = await events;
    expect(evs.map((e) => e.event)).toEqual([
      'workflow_started', 'node_started', 'node_finished', 'node_started', 'message', 'message', 'message_end', 'node_finished', 'workflow_finished',
    ]);
    expect(messageText(evs)).toBe('You said: hello there');
    const done = evs.find((e) => e.event === 'node_finished' && e.data.component_id === 'Message:Echo')!;
    expect(done.data).toMatchObject({ component_type: 'Message', component_name: 'Echo', error: null });
    expect(typeof done.data.elapsed_time).toBe('number');
    expect(new Set(evs.map((e) => e.message_id)).size).toBe(1);
  });

  it('answers offline from retrieved chunks (Retrieval → LLM with the built-in model → Message)', async () => {
    const dsl = offlineAnswerDsl();
    const evs = await run(dsl, { query: 'How much electricity do home batteries hold?' }).events;
    const text = messageText(evs);
    expect(text).toMatch(/10 to 15 kilowatt-hours/);
    const end = evs.find((e) => e.event === 'message_end')!;
    const chunks = Object.values((end.data.reference as { chunks: Record<string, { document_name: string }> }).chunks);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks[0]!.document_name).toBe('energy.txt');
  });

  it('declines offline when the question names something no dataset mentions (the Retrieval\'s unknown terms reach the LLM)', async () => {
    const dsl = offlineAnswerDsl();
    // "Powerwall" is in no chunk: the batteries sentence shares the question's other words, but does not answer it.
    const declined = messageText(await run(dsl, { query: 'How much electricity does a Powerwall battery hold?' }).events);
    expect(declined).toBe(NOT_FOUND_ANSWER);
    // The same question without the unknown name is answered.
    expect(messageText(await run(dsl, { query: 'How much electricity does a home battery hold?' }).events)).toMatch(/10 to 15 kilowatt-hours/);
  });

  it.each([
    [{ similarity_threshold: 3 }, '[Retrieval] Similarity threshold 3 not supported, should be a float number in range [0, 1]'],
    [{ keywords_similarity_weight: -0.5 }, '[Retrieval] Keyword similarity weight -0.5 not supported, should be a float number in range [0, 1]'],
    [{ similarity_threshold: '0.5' }, '[Retrieval] Similarity threshold 0.5 not supported, should be a float number in range [0, 1]'],
    [{ top_n: 0 }, '[Retrieval] Top N 0 not supported, should be positive numeric'],
  ])('a Retrieval with %j fails with RAGFlow\'s parameter check', async (params, message) => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Retrieval:Find'] },
      'Retrieval:Find': { type: 'Retrieval', params: { query: 'sys.query', dataset_ids: [datasetId], ...params } },
    });
    const { canvas, events } = run(dsl, { query: 'home batteries' });
    await events;
    expect(canvas.error).toBe(message);
  });

  it('a Retrieval over a dataset the caller cannot read fails with RAGFlow\'s message', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Retrieval:Find'] },
      'Retrieval:Find': { type: 'Retrieval', params: { query: 'sys.query', dataset_ids: ['f'.repeat(32)] } },
    });
    const { canvas, events } = run(dsl, { query: 'anything' });
    await events;
    expect(canvas.error).toMatch(/You don't own the dataset f{32}/);
  });

  it('selects a Switch branch, and the else branch', async () => {
    const mk = () => buildDsl({
      begin: { type: 'Begin', down: ['Switch:Route'] },
      'Switch:Route': {
        type: 'Switch',
        params: { conditions: [{ logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator: 'contains', value: 'REFUND' }], to: ['Message:Refund'] }], end_cpn_ids: ['Message:Other'] },
      },
      'Message:Refund': { type: 'Message', params: { content: ['refund desk'] } },
      'Message:Other': { type: 'Message', params: { content: ['general desk'] } },
    });
    expect(messageText(await run(mk(), { query: 'I want a refund please' }).events)).toBe('refund desk');
    const other = await run(mk(), { query: 'hello' }).events;
    expect(messageText(other)).toBe('general desk');
    expect(finished(other)).not.toContain('Message:Refund');
  });

  /** A Categorize with the built-in model (offline): billing or technical, each leading to its component. */
  const triage = (billing: string, technical: string) => ({
    type: 'Categorize',
    params: {
      llm_id: 'ragloom-extractive@Builtin',
      category_description: {
        billing: { description: 'Invoices, payments, refunds and charges on a card', examples: ['I was charged twice', 'Where is my invoice?'], to: [billing] },
        technical: { description: 'Errors, crashes, bugs, installation problems', examples: ['The app crashes on start', 'I get an error when I log in'], to: [technical] },
      },
    },
  });

  it('Categorize offline picks the nearest category by embeddings (deterministic)', async () => {
    const mk = () => buildDsl({
      begin: { type: 'Begin', down: ['Categorize:Triage'] },
      'Categorize:Triage': triage('Message:Billing', 'Message:Tech'),
      'Message:Billing': { type: 'Message', params: { content: ['billing: {Categorize:Triage@category_name}'] } },
      'Message:Tech': { type: 'Message', params: { content: ['technical: {Categorize:Triage@category_name}'] } },
    });
    expect(messageText(await run(mk(), { query: 'my credit card payment was charged two times' }).events)).toBe('billing: billing');
    expect(messageText(await run(mk(), { query: 'the application crashes with an error' }).events)).toBe('technical: technical');
    const again = await Promise.all([1, 2, 3].map(() => run(mk(), { query: 'refund my invoice' }).events));
    expect(new Set(again.map(messageText)).size).toBe(1);
  });

  it('a Message joining the branches of a Categorize runs after the branch taken (the others can no longer run)', async () => {
    const mk = () => buildDsl({
      begin: { type: 'Begin', down: ['Categorize:Triage'] },
      'Categorize:Triage': triage('StringTransform:Bill', 'StringTransform:Tech'),
      'StringTransform:Bill': { type: 'StringTransform', params: { method: 'merge', script: 'billing desk', delimiters: [','] }, down: ['Message:Join'] },
      'StringTransform:Tech': { type: 'StringTransform', params: { method: 'merge', script: 'tech desk', delimiters: [','] }, down: ['Message:Join'] },
      'Message:Join': { type: 'Message', params: { content: ['[{StringTransform:Bill@result}{StringTransform:Tech@result}]'] } },
    });
    const billing = await run(mk(), { query: 'my credit card payment was charged two times' }).events;
    expect(messageText(billing)).toBe('[billing desk]');
    expect(finished(billing)).toEqual(['begin', 'Categorize:Triage', 'StringTransform:Bill', 'Message:Join']);
    expect(messageText(await run(mk(), { query: 'the application crashes with an error' }).events)).toBe('[tech desk]');
  });

  it('a Message waits for a component that can still run: two branches joined after both ran', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['StringTransform:A', 'StringTransform:B'] },
      'StringTransform:A': { type: 'StringTransform', params: { method: 'merge', script: 'a', delimiters: [','] }, down: ['StringTransform:A2'] },
      'StringTransform:A2': { type: 'StringTransform', params: { method: 'merge', script: '{StringTransform:A@result}2', delimiters: [','] }, down: ['Message:Join'] },
      'StringTransform:B': { type: 'StringTransform', params: { method: 'merge', script: 'b', delimiters: [','] }, down: ['Message:Join'] },
      'Message:Join': { type: 'Message', params: { content: ['{StringTransform:A2@result}+{StringTransform:B@result}'] } },
    });
    const evs = await run(dsl, { query: 'go' }).events;
    expect(messageText(evs)).toBe('a2+b');
    expect(finished(evs).filter((id) => id === 'Message:Join')).toHaveLength(1);
  });

  it('iterates over an array, collecting each pass’s output', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', params: { inputs: { items: { type: 'line', name: 'items' } } }, down: ['Iteration:Each'] },
      'Iteration:Each': { type: 'Iteration', params: { items_ref: 'begin@items', outputs: { shouted: { type: 'Array<string>', ref: 'StringTransform:Shout@result' } } }, down: ['Message:Out'] },
      'IterationItem:Item': { type: 'IterationItem', parent: 'Iteration:Each', down: ['StringTransform:Shout'] },
      'StringTransform:Shout': { type: 'StringTransform', parent: 'Iteration:Each', params: { method: 'merge', script: '<{IterationItem:Item@item}#{IterationItem:Item@index}>', delimiters: [','] } },
      'Message:Out': { type: 'Message', params: { content: ['{Iteration:Each@shouted}'] } },
    });
    const evs = await run(dsl, { query: 'go', inputs: { items: { value: ['a', 'b', 'c'] } } }).events;
    expect(JSON.parse(messageText(evs))).toEqual(['<a#0>', '<b#1>', '<c#2>']);
    expect(finished(evs).filter((id) => id === 'StringTransform:Shout')).toHaveLength(3);
  });

  it('loops until the termination condition holds (VariableAssigner counting)', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Loop:Count'] },
      'Loop:Count': {
        type: 'Loop',
        params: {
          loop_variables: [{ variable: 'n', input_mode: 'constant', value: 0, type: 'number' }],
          loop_termination_condition: [{ variable: 'Loop:Count@n', operator: '≥', value: 4, input_mode: 'constant' }],
          maximum_loop_count: 50,
        },
        down: ['Message:Out'],
      },
      'LoopItem:Body': { type: 'LoopItem', parent: 'Loop:Count', down: ['VariableAssigner:Inc'] },
      'VariableAssigner:Inc': { type: 'VariableAssigner', parent: 'Loop:Count', params: { variables: [{ variable: 'Loop:Count@n', operator: '+=', parameter: 1 }] } },
      'Message:Out': { type: 'Message', params: { content: ['count={Loop:Count@n}'] } },
    });
    const evs = await run(dsl, { query: 'x' }).events;
    expect(messageText(evs)).toBe('count=4');
    expect(finished(evs).filter((id) => id === 'VariableAssigner:Inc')).toHaveLength(4);
  });

  it('a join waits for every upstream of the batch (begin → A, B → C reading both)', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['StringTransform:A', 'StringTransform:B'] },
      'StringTransform:A': { type: 'StringTransform', params: { method: 'merge', script: 'a({sys.query})' }, down: ['Message:C'] },
      'StringTransform:B': { type: 'StringTransform', params: { method: 'merge', script: 'b({sys.query})' }, down: ['Message:C'] },
      'Message:C': { type: 'Message', params: { content: ['{StringTransform:A@result}+{StringTransform:B@result}'] } },
    });
    const evs = await run(dsl, { query: 'q' }).events;
    expect(messageText(evs)).toBe('a(q)+b(q)');
    expect(finished(evs).filter((id) => id === 'Message:C')).toHaveLength(1);
    // A and B started in one batch, before either finished.
    const order = evs.filter((e) => e.event === 'node_started' || e.event === 'node_finished').map((e) => `${e.event === 'node_started' ? '+' : '-'}${String(e.data.component_id)}`);
    expect(order.indexOf('+StringTransform:B')).toBeLessThan(order.indexOf('-StringTransform:A'));
  });

  it('sys.* and env.* references, and conversation turns across runs', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Message:M'] },
      'Message:M': { type: 'Message', params: { content: ['turn {sys.conversation_turns} for {sys.user_id}: {env.greeting} ({sys.date})'] } },
    }, { variables: { greeting: { type: 'string', value: 'hello' } } });
    const first = new Canvas(dsl, deps);
    const t1 = messageText(await collect(first.run({ query: 'x', user_id: 'u1' })));
    expect(t1).toMatch(/^turn 1 for u1: hello \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/);
    const second = new Canvas(first.toDsl(), deps);
    expect(messageText(await collect(second.run({ query: 'y', user_id: 'u1' })))).toMatch(/^turn 2 for u1/);
    expect(second.history.map(([role]) => role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(second.globals['sys.history']).toEqual(['user: x', expect.stringMatching(/^assistant: turn 1/), 'user: y', expect.stringMatching(/^assistant: turn 2/)]);
  });

  it('stops a loop at maximum_loop_count', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Loop:L'] },
      'Loop:L': { type: 'Loop', params: { loop_variables: [{ variable: 'n', input_mode: 'constant', value: 0, type: 'number' }], loop_termination_condition: [{ variable: 'Loop:L@n', operator: '<', value: 0 }], maximum_loop_count: 3 }, down: ['Message:Out'] },
      'LoopItem:I': { type: 'LoopItem', parent: 'Loop:L', down: ['VariableAssigner:Inc'] },
      'VariableAssigner:Inc': { type: 'VariableAssigner', parent: 'Loop:L', params: { variables: [{ variable: 'Loop:L@n', operator: '+=', parameter: 1 }] } },
      'Message:Out': { type: 'Message', params: { content: ['n={Loop:L@n}'] } },
    });
    expect(messageText(await run(dsl, { query: 'x' }).events)).toBe('n=3');
  });
});

describe('errors', () => {
  const failing = (extra: Record<string, unknown>) => buildDsl({
    begin: { type: 'Begin', down: ['CodeExec:Boom'] },
    'CodeExec:Boom': { type: 'CodeExec', params: { lang: 'javascript', script: 'function main() { throw new Error("kaput"); }', arguments: {}, outputs: { result: { type: 'string' } }, ...extra }, down: ['Message:Ok'] },
    'Message:Ok': { type: 'Message', params: { content: ['normal path {CodeExec:Boom@result}'] } },
    'Message:Handled': { type: 'Message', params: { content: ['handled by goto'] } },
  });

  it('without a handler the run stops with the error on the node', async () => {
    const { canvas, events } = run(failing({}), { query: 'x' });
    const evs = await events;
    const boom = evs.find((e) => e.event === 'node_finished' && e.data.component_id === 'CodeExec:Boom')!;
    expect(boom.data.error).toMatch(/kaput/);
    expect(evs.some((e) => e.event === 'workflow_finished')).toBe(false);
    expect(canvas.error).toMatch(/kaput/);
  });

  it('goto sends the run down the exception branch', async () => {
    const evs = await run(failing({ exception_method: 'goto', exception_goto: ['Message:Handled'] }), { query: 'x' }).events;
    expect(messageText(evs)).toBe('handled by goto');
    expect(finished(evs)).not.toContain('Message:Ok');
  });

  it('comment with a default value continues with the default as the output', async () => {
    const evs = await run(failing({ exception_method: 'comment', exception_default_value: 'fallback' }), { query: 'x' }).events;
    expect(messageText(evs)).toBe('normal path fallback');
  });

  it('retries max_retries times, waiting delay_after_error between tries', async () => {
    // Three tries, two waits of 0.2 s.
    const t0 = Date.now();
    const evs = await run(failing({ max_retries: 2, delay_after_error: 0.2 }), { query: 'x' }).events;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
    expect(finished(evs)).toContain('CodeExec:Boom');
  });
});

describe('Invoke', () => {
  it('calls an allowed endpoint with the query, and is refused one not allowed', async () => {
    const { createServer } = await import('node:http');
    const srv = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ echoed: new URL(req.url!, 'http://x').searchParams.get('q') }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/lookup`;
    try {
      const dsl = () => buildDsl({
        begin: { type: 'Begin', down: ['Invoke:Call'] },
        'Invoke:Call': { type: 'Invoke', params: { url, method: 'get', variables: [{ key: 'q', ref: 'sys.query' }] }, down: ['Message:Out'] },
        'Message:Out': { type: 'Message', params: { content: ['got {Invoke:Call@result}'] } },
      });
      const allowed = { ...deps, invokeAllow: [new URL(url).origin] };
      expect(messageText(await run(dsl(), { query: 'tea' }, allowed).events)).toBe('got {"echoed":"tea"}');
      const { canvas, events } = run(dsl(), { query: 'tea' });
      await events;
      expect(canvas.error).toMatch(/Invoke is not enabled: the Invoke allow-list is empty/);
    } finally {
      srv.close();
    }
  });
});

describe('pause and resume', () => {
  it('pauses on UserFillUp with its form and tips, and resumes with inputs', async () => {
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['UserFillUp:Form'] },
      'UserFillUp:Form': { type: 'UserFillUp', params: { enable_tips: true, tips: 'About "{sys.query}": what is your name?', inputs: { name: { type: 'line', name: 'Name', optional: false } } }, down: ['Message:Hi'] },
      'Message:Hi': { type: 'Message', params: { content: ['Hello {UserFillUp:Form@name}, about {sys.query}'] } },
    });
    const first = new Canvas(dsl, deps);
    const evs = await collect(first.run({ query: 'parking' }));
    const pause = evs[evs.length - 1]!;
    expect(pause.event).toBe('user_inputs');
    expect(pause.data.tips).toBe('About "parking": what is your name?');
    expect(Object.keys(pause.data.inputs as object)).toEqual(['name']);
    // The state travels in the DSL, as a session stores it.
    const stored = JSON.parse(JSON.stringify(first.toDsl()));
    const second = new Canvas(stored, deps);
    const evs2 = await collect(second.run({ query: '', inputs: { name: { value: 'Ada', type: 'line' } } }));
    expect(messageText(evs2)).toBe('Hello Ada, about parking');
    expect(evs2[evs2.length - 1]!.event).toBe('workflow_finished');
  });
});

describe('cancellation and time limits', () => {
  const spin = () => buildDsl({
    begin: { type: 'Begin', down: ['CodeExec:Spin'] },
    'CodeExec:Spin': { type: 'CodeExec', params: { lang: 'javascript', script: 'function main() { while (true) {} }', arguments: {} }, down: ['Message:Never'] },
    'Message:Never': { type: 'Message', params: { content: ['never'] } },
  });

  it('an AbortSignal cancels a running component and ends the run', async () => {
    const ctl = new AbortController();
    const long = { ...deps, codeTimeoutMs: 60_000 };
    const t0 = Date.now();
    setTimeout(() => ctl.abort(), 300);
    const evs = await run(spin(), { query: 'x', signal: ctl.signal }, long).events;
    expect(Date.now() - t0).toBeLessThan(5000);
    const last = evs[evs.length - 1]!;
    expect(last.event).toBe('workflow_finished');
    expect(last.data.outputs).toBe('Task has been canceled');
    expect(messageText(evs)).toBe('');
  });

  it('the per-run time limit stops a run', async () => {
    const long = { ...deps, codeTimeoutMs: 60_000 };
    const t0 = Date.now();
    const evs = await run(spin(), { query: 'x', timeoutMs: 400 }, long).events;
    expect(Date.now() - t0).toBeLessThan(5000);
    const last = evs[evs.length - 1]!;
    expect(last.data.outputs).toBe('Task has been canceled');
    expect(String(last.data.error)).toMatch(/time limit of 400 ms/);
  });
});

describe('a generative model that calls tools (loopback OpenAI-compatible server)', () => {
  it('the Agent calls Retrieval, gets the chunks, and answers', async () => {
    chat.reset();
    chat.script(
      { text: '', toolCalls: [{ id: 'call_1', name: 'search_my_dateset_0', arguments: JSON.stringify({ query: 'offshore wind turbine size' }) }] },
      { text: 'Offshore turbines can exceed 12 megawatts [ID:0].' },
    );
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Agent:Researcher'] },
      'Agent:Researcher': {
        type: 'Agent',
        params: {
          llm_id: MODEL, sys_prompt: 'You research energy questions.', prompts: [{ role: 'user', content: '{sys.query}' }], max_rounds: 3,
          tools: [{ component_name: 'Retrieval', name: 'Retrieval', params: { dataset_ids: [datasetId], similarity_threshold: 0, top_n: 3 } }],
        },
        down: ['Message:Out'],
      },
      'Message:Out': { type: 'Message', params: { content: ['{Agent:Researcher@content}'] } },
    });
    const evs = await run(dsl, { query: 'How big are offshore wind turbines?' }).events;
    expect(messageText(evs)).toBe('Offshore turbines can exceed 12 megawatts [ID:0].');
    expect(chat.requests).toHaveLength(2);
    const first = chat.requests[0]!.body;
    expect((first.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['search_my_dateset_0']);
    const second = chat.requests[1]!.body.messages;
    const tool = second.find((m) => m.role === 'tool')!;
    expect(tool.tool_call_id).toBe('call_1');
    expect(String(tool.content)).toMatch(/12 megawatts/);
    const agentDone = evs.find((e) => e.event === 'node_finished' && e.data.component_id === 'Agent:Researcher')!;
    expect((agentDone.data.outputs as { _tool_calls: unknown[] })._tool_calls).toHaveLength(1);
  });

  it('the Agent runs JavaScript through CodeExec and uses its result', async () => {
    chat.reset();
    chat.script(
      { text: '', toolCalls: [{ id: 'c1', name: 'execute_code_0', arguments: JSON.stringify({ lang: 'javascript', script: 'function main() { return { total: [3, 4, 5].reduce((a, b) => a + b, 0) }; }' }) }] },
      (body) => ({ text: `The total is ${String(body.messages.find((m) => m.role === 'tool')?.content)}` }),
    );
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['Agent:Calc'] },
      'Agent:Calc': { type: 'Agent', params: { llm_id: MODEL, tools: [{ component_name: 'CodeExec', name: 'CodeExec', params: {} }] } },
    });
    const { canvas, events } = run(dsl, { query: 'add 3, 4 and 5' });
    await events;
    expect(canvas.node('Agent:Calc').output('content')).toMatch(/The total is .*12/);
  });

  it('an LLM with an output schema gives structured output, asking again when the answer is not JSON', async () => {
    chat.reset();
    chat.script({ text: 'Sure! Here it is' }, { text: '```json\n{"city": "Paris", "population": 2100000}\n```' });
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['LLM:Extract'] },
      'LLM:Extract': {
        type: 'LLM',
        params: { llm_id: MODEL, max_retries: 1, prompts: [{ role: 'user', content: 'Extract from: {sys.query}' }], outputs: { structured: { type: 'object', properties: { city: { type: 'string' }, population: { type: 'number' } } } } },
        down: ['Message:Out'],
      },
      'Message:Out': { type: 'Message', params: { content: ['{LLM:Extract@structured.city} has {LLM:Extract@structured.population}'] } },
    });
    const evs = await run(dsl, { query: 'Paris has 2.1 million people' }).events;
    expect(messageText(evs)).toBe('Paris has 2100000');
    expect(chat.requests).toHaveLength(2);
    expect(chat.requests[0]!.body.response_format).toEqual({ type: 'json_object' });
  });

  it('a model error after retries is the node’s error', async () => {
    chat.reset();
    chat.script({ status: 400, body: { error: { message: 'bad request' } } });
    const dsl = buildDsl({
      begin: { type: 'Begin', down: ['LLM:L'] },
      'LLM:L': { type: 'LLM', params: { llm_id: MODEL } },
    });
    const { canvas, events } = run(dsl, { query: 'hi' });
    const evs = await events;
    expect(evs.find((e) => e.event === 'node_finished')).toBeTruthy();
    expect(canvas.error).toBeTruthy();
  });
});

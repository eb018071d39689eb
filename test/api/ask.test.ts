/**
 * session.ask and the two completions, end to end: real SQLite, real parsing and retrieval, the
 * built-in extractive model, and a loopback server speaking the OpenAI protocol for remote models.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { test, apiError, enc } from '../helpers.js';
import { Client, type ChatCompletionChunk, type DataSet, type Message } from '../../src/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const DOCS = {
  'tides.md': '# Tides\n\nThe gravitational pull of the moon raises the ocean tides twice a day. Spring tides happen at new and full moon, when the sun and the moon pull together.',
  'bread.md': '# Bread\n\nKnead the dough for ten minutes. Let it rise for one hour in a warm place, then bake it at 220 degrees for thirty minutes.',
  'volcano.md': '# Volcanoes\n\nA volcano erupts when magma rises through cracks in the crust. Basalt lava is runny; rhyolite lava is thick and explosive.',
};

async function setup(client: Client): Promise<DataSet> {
  client.registerModel({ type: 'chat', name: 'loop', factory: 'OpenAI-API-Compatible', base_url: server.url, max_tokens: 4096 });
  const ds = await client.createDataset({ name: 'science' });
  const docs = await ds.uploadDocuments(Object.entries(DOCS).map(([display_name, t]) => ({ display_name, blob: enc(t) })));
  await ds.parseDocuments(docs.map((d) => d.id));
  return ds;
}

async function collect(it: AsyncIterable<Message>): Promise<Message[]> {
  const out: Message[] = [];
  for await (const m of it) out.push(m);
  return out;
}

describe('a model named without its factory (RAGFlow looks the name up among the tenant\'s models)', () => {
  test('createChat / update / ask / the OpenAI completion take `glm-4` for glm-4@ZHIPU-AI, and the answers use that model', async ({ client }) => {
    const ds = await setup(client);
    client.registerModel({ type: 'chat', name: 'glm-4', factory: 'ZHIPU-AI', base_url: server.url });
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'glm-4' });
    expect(chat.llm_id).toBe('glm-4'); // stored as given, as RAGFlow stores it
    server.reset();
    const m = await (await chat.createSession()).ask('How long should the dough rise?');
    expect(m.content).toMatch(/^Echo: /);
    expect(server.requests.map((r) => r.body.model)).toContain('glm-4');
    const done = await client.chatCompletion(chat.id, { model: 'glm-4', messages: [{ role: 'user', content: 'Why are there spring tides?' }] });
    expect(done.model).toBe('glm-4');
    expect(done.choices[0]!.message.content).toMatch(/^Echo: /);
    await chat.update({ llm_id: 'ragloom-extractive' });
    expect((await (await chat.createSession()).ask('How long should the dough rise?')).content).toMatch(/rise for one hour/);
    expect(await apiError(client.createChat({ name: 'd', llm_id: 'glm-5' }))).toMatchObject({ code: 102, message: "`llm_id` glm-5 doesn't exist" });
  });
});

describe('session.ask with the built-in extractive model', () => {
  test('answers from the documents with citations, no model server at all', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id] });
    expect(chat.llm_id).toBe('ragloom-extractive@Builtin');
    const s = await chat.createSession();
    const m = await s.ask('How long should the dough rise?');
    expect(m.content).toMatch(/rise for one hour/);
    expect(m.content).toMatch(/\[ID:\d+\]/);
    const cited = [...m.content.matchAll(/\[ID:(\d+)\]/g)].map((x) => Number(x[1]));
    for (const i of cited) expect(m.reference![i]!.document_name).toBe('bread.md');
    expect(m.reference![0]).toEqual(expect.objectContaining({ document_name: expect.any(String), dataset_id: ds.id, similarity: expect.any(Number) }));
    expect(Object.keys(m.reference![0]!).sort()).toEqual(['content', 'dataset_id', 'doc_type', 'document_id', 'document_metadata', 'document_name', 'id', 'image_id', 'positions', 'row_id', 'similarity', 'term_similarity', 'url', 'vector_similarity'].sort());
    expect(m.prompt).toContain('## Time elapsed:');
  });

  test('streams cumulative content; the last message carries the references; history is kept across reopen', async ({ client, dir }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], prompt_config: { prologue: 'Ask me.' } });
    const s = await chat.createSession();
    const ms = await collect(s.ask('Why are there spring tides?', { stream: true }));
    expect(ms.length).toBeGreaterThan(1);
    for (let i = 1; i < ms.length - 1; i++) expect(ms[i]!.content.startsWith(ms[i - 1]!.content)).toBe(true);
    const last = ms[ms.length - 1]!;
    expect(last.final).toBe(true);
    expect(last.reference!.length).toBeGreaterThan(0);
    expect(ms.slice(0, -1).every((m) => m.reference === null || m.reference.length === 0)).toBe(true);
    expect(last.content).toMatch(/sun and the moon/);
    await client.close();
    const again = new Client({ path: join(dir, 'kb.db') });
    const [chat2] = await again.listChats({ name: 'c' });
    const [s2] = await chat2!.listSessions({ id: s.id });
    expect(s2!.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(s2!.messages[0]!.content).toBe('Ask me.');
    expect(s2!.messages[2]!.content).toBe(last.content);
    expect((s2!.reference as unknown[]).length).toBe(1);
    await again.close();
  });

  test('nothing relevant: empty_response, no model call', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible', similarity_threshold: 0.99 });
    const before = server.requests.length;
    const m = await (await chat.createSession()).ask('What is the capital of Mongolia?');
    expect(m.content).toBe('Sorry! No relevant content was found in the knowledge base!');
    expect(server.requests.length).toBe(before);
  });

  test('a decline carries no citation marker and no references', async ({ client }) => {
    const ds = await setup(client);
    // The built-in model finds nothing that answers: the chat's empty_response, nothing attached.
    const builtin = await client.createChat({ name: 'b', dataset_ids: [ds.id] });
    const b = await (await builtin.createSession()).ask('Who painted the ceiling of the Sistine Chapel?');
    expect(b.content).toBe('Sorry! No relevant content was found in the knowledge base!');
    expect(b.reference).toEqual([]);
    // A model that declines with markers ("Sorry [ID:1]! …", as RAGFlow passes them on): the
    // markers are removed and no references are attached, streamed or not.
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible' });
    server.script({ text: 'Sorry [ID:1]! No relevant content was found in the knowledge base [ID:0]!' });
    const m = await (await chat.createSession()).ask('Why does a volcano erupt?');
    expect(m.content).toBe('Sorry! No relevant content was found in the knowledge base!');
    expect(m.reference).toEqual([]);
    server.script({ deltas: ['Sorry! No relevant content was found ', 'in the knowledge base!'] });
    const ms = await collect((await chat.createSession()).ask('Why does a volcano erupt?', { stream: true }));
    expect(ms[ms.length - 1]).toMatchObject({ content: 'Sorry! No relevant content was found in the knowledge base!', reference: [] });
  });

  test('custom parameters: filled into the system prompt; a missing required one is KeyError', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({
      name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible',
      prompt_config: { system: 'You answer for {audience}.\n{knowledge}', parameters: [{ key: 'knowledge', optional: false }, { key: 'audience', optional: false }, { key: 'tone', optional: true }] },
    });
    const s = await chat.createSession();
    const e = await apiError(s.ask('How long should the dough rise?'));
    expect([e.code, e.message]).toEqual([100, "KeyError('Miss parameter: audience')"]);
    await s.ask('How long should the dough rise?', { audience: 'bakers' });
    const sys = server.requests[server.requests.length - 1]!.body.messages[0];
    expect(sys.role).toBe('system');
    expect(sys.content).toContain('You answer for bakers.');
    expect(sys.content).toMatch(/ID: 0\n├── Title: bread\.md\n└── Content:\n/);
  });
});

describe('session.ask with an OpenAI-compatible model', () => {
  test('sends the knowledge block, history and llm_setting; removes citations of chunks never sent', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible', top_n: 2, llm_setting: { temperature: 0.3 } });
    const s = await chat.createSession();
    server.script({ text: 'Magma rises through cracks [ID:0]. Also see [ID:7] and [ID:1].' });
    const m = await s.ask('Why does a volcano erupt?');
    expect(m.content).toBe('Magma rises through cracks [ID:0]. Also see and [ID:1].');
    expect(m.citations_removed).toBe(1);
    const req = server.requests[server.requests.length - 1]!;
    expect(req.body.model).toBe('loop');
    expect(req.body.temperature).toBe(0.3);
    expect(req.body.messages.map((x: { role: string }) => x.role)).toEqual(['system', 'user']);
    // Streamed: the same check on the text as it arrives, even with the marker split.
    // The second turn is first refined by the model (multi-turn), then answered.
    server.script({ text: 'Which lava is runny?' }, { deltas: ['Basalt is runny [I', 'D:', '9] and thick [ID', ':0].'] });
    const ms = await collect(s.ask('Which lava is runny?', { stream: true }));
    const last = ms[ms.length - 1]!;
    expect(last.content).toBe('Basalt is runny and thick [ID:0].');
    expect(last.citations_removed).toBe(1);
    expect(ms.every((x) => !x.content.includes('[ID:9'))).toBe(true);
    const stored = (await chat.listSessions({ id: s.id }))[0]!.messages;
    expect(stored[stored.length - 1]).toMatchObject({ role: 'assistant', content: 'Basalt is runny and thick [ID:0].', citations_removed: 1 });
  });

  test('multi-turn: the model refines the question; the history goes with the question', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible' });
    const s = await chat.createSession();
    await s.ask('How long should the dough rise?');
    server.script({ text: 'How long should bread bake?' }, { text: 'Thirty minutes [ID:0].' });
    const n = server.requests.length;
    await s.ask('And bake?');
    const [refine, answer] = server.requests.slice(n);
    expect(JSON.stringify(refine!.body.messages)).toContain('USER: And bake?');
    expect(answer!.body.messages.map((x: { role: string }) => x.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(answer!.body.messages[0].content).toMatch(/bake it at 220 degrees/);
  });

  test('a failing model: ApiError naming the model; nothing stored', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible' });
    const s = await chat.createSession();
    server.script({ status: 400, body: { error: { message: 'bad model' } } });
    const e = await apiError(s.ask('Why does a volcano erupt?'));
    expect(e.code).toBe(100);
    expect(e.message).toContain('bad model');
    expect((await chat.listSessions({ id: s.id }))[0]!.messages).toHaveLength(1);
  });

  test('breaking out of a stream stops the model request', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible' });
    const s = await chat.createSession();
    server.script({ deltas: Array.from({ length: 200 }, (_, i) => `word${i} `), delayMs: 20 });
    let n = 0;
    for await (const m of s.ask('Why does a volcano erupt?', { stream: true })) {
      void m;
      if (++n === 3) break;
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(server.aborted()).toBeGreaterThan(0);
    expect((await chat.listSessions({ id: s.id }))[0]!.messages).toHaveLength(1);
  });
});

describe('native completion (chats.completion) validation', () => {
  test('the reference messages', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id] });
    const s = await chat.createSession();
    const api = (client as unknown as { t: { api: { call(op: string, p: object): Promise<unknown> } } }).t.api;
    const err = (p: object) => apiError(api.call('chats.completion', { chat_id: chat.id, stream: false, ...p }));
    expect((await err({})).message).toBe('required argument are missing: messages');
    expect((await err({ messages: [{ role: 'assistant', content: 'x' }] })).message).toBe('`messages` must contain a user message.');
    expect((await err({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y' }] })).message).toBe('The last message must be from user.');
    expect((await err({ messages: ['x'] })).message).toBe('Every item in `messages` must be an object.');
    expect((await err({ question: 'x', session_id: 'f'.repeat(32) })).message).toBe('Session not found!');
    const other = await client.createChat({ name: 'other' });
    const s2 = await other.createSession();
    expect((await err({ question: 'x', session_id: s2.id })).message).toBe('Session does not belong to this chat!');
    expect((await apiError(api.call('chats.completion', { question: 'x', session_id: s.id }))).message).toBe('`chat_id` is required when `session_id` is provided.');
    expect((await err({ question: 'x', llm_id: 'nope@X' })).message).toBe('Cannot use specified model nope@X.');
    // No session: one is created and holds the exchange.
    const a = (await api.call('chats.completion', { chat_id: chat.id, question: 'How long should the dough rise?', stream: false })) as { session_id: string; answer: string };
    const [created] = await chat.listSessions({ id: a.session_id });
    expect(created!.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    // The stream: incremental deltas, then one final event with the full answer.
    const events: Array<{ answer: string; final: boolean }> = [];
    for await (const ev of (await api.call('chats.completion', { chat_id: chat.id, question: 'Why does a volcano erupt?' })) as AsyncIterable<{ answer: string; final: boolean }>) events.push(ev);
    const final = events[events.length - 1]!;
    expect(final.final).toBe(true);
    expect(events.slice(0, -1).map((x) => x.answer).join('')).toBe(final.answer);
  });
});

describe('OpenAI-compatible completion', () => {
  test('non-stream: chat.completion with usage and reference', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id] });
    const r = await client.chatCompletion(chat.id, {
      model: 'model',
      messages: [{ role: 'system', content: 'ignored' }, { role: 'user', content: [{ type: 'text', text: 'How long should the dough rise?' }] }],
      extra_body: { reference: true },
    });
    expect(r.object).toBe('chat.completion');
    expect(r.id).toBe(`chatcmpl-${chat.id}`);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.choices[0]!.message.content).toMatch(/rise for one hour/);
    expect(r.choices[0]!.message.reference!.length).toBeGreaterThan(0);
    expect(r.usage.total_tokens).toBe(r.usage.prompt_tokens + r.usage.completion_tokens);
    expect(JSON.stringify(r)).not.toMatch(/NaN/);
  });

  test('stream: chunks, then one stop chunk with usage, reference and final_content; never the whole answer twice', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id], llm_id: 'loop@OpenAI-API-Compatible' });
    server.script({ deltas: ['Magma rises ', 'through cracks [ID:0].'] });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await client.chatCompletion(chat.id, { model: 'model', messages: [{ role: 'user', content: 'Why does a volcano erupt?' }], stream: true, extra_body: { reference: true } })) {
      chunks.push(c);
    }
    const last = chunks[chunks.length - 1]!;
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(last.choices[0]!.finish_reason).toBe('stop');
    expect(last.choices[0]!.delta.content).toBeNull();
    expect(last.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    expect(last.choices[0]!.delta.final_content).toBe('Magma rises through cracks [ID:0].');
    expect(last.choices[0]!.delta.reference!.length).toBeGreaterThan(0);
    const text = chunks.slice(0, -1).map((c) => c.choices[0]!.delta.content ?? '').join('');
    expect(text).toBe('Magma rises through cracks [ID:0].');
  });

  test('validation of §9', async ({ client }) => {
    const ds = await setup(client);
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id] });
    const call = (b: Record<string, unknown>) => apiError(client.chatCompletion(chat.id, b as never));
    expect((await call({ messages: [{ role: 'user', content: 'x' }] })).message).toBe('required argument are missing: model; ');
    expect((await call({ model: 'model', messages: [] })).message).toBe('You have to provide messages.');
    expect((await call({ model: 'model', messages: [{ role: 'assistant', content: 'x' }] })).message).toBe('The last content of this conversation is not from user.');
    expect((await call({ model: 'model', messages: [{ role: 'user', content: 'x' }], extra_body: 'x' })).message).toBe('extra_body must be an object.');
    expect((await call({ model: 'model', messages: [{ role: 'user', content: 'x' }], extra_body: { reference_metadata: 3 } })).message).toBe('reference_metadata must be an object.');
    expect((await call({ model: 'model', messages: [{ role: 'user', content: 'x' }], extra_body: { reference_metadata: { fields: 'a' } } })).message).toBe('reference_metadata.fields must be an array.');
    expect((await call({ model: 'model', messages: [{ role: 'user', content: 'x' }], extra_body: { metadata_condition: 'a' } })).message).toBe('metadata_condition must be an object.');
    const e = await call({ model: 'gpt-x@OpenAI', messages: [{ role: 'user', content: 'x' }] });
    expect([e.code, e.message]).toEqual([101, "`llm_id` gpt-x@OpenAI doesn't exist"]);
    expect((await apiError(client.chatCompletion('f'.repeat(32), { model: 'model', messages: [{ role: 'user', content: 'x' }] }))).message).toBe(`You don't own the chat ${'f'.repeat(32)}`);
  });
});

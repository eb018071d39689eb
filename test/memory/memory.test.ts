/**
 * Memories end to end: CRUD with RAGFlow's checks and messages, messages (raw, extracted by a
 * model over the OpenAI protocol on loopback, listed, recent, content, forget, status), search, and
 * extraction that survives a restart.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { test, apiError } from '../helpers.js';
import { Client } from '../../src/index.js';
import { extractionSystemPrompt } from '../../src/memory/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const EMBD = 'ragloom-static-en-256@Builtin';
const LLM = 'ragloom-extractive@Builtin';
const useModel = (c: Client) => c.registerModel({ type: 'chat', name: 'extractor', factory: 'OpenAI-API-Compatible', base_url: server.url });

describe('memory CRUD', () => {
  test('create: defaults, duplicates get (1), every check of the reference', async ({ client }) => {
    const m = await client.createMemory({ name: ' notes ', memory_type: ['raw', 'semantic'], embd_id: EMBD, llm_id: LLM });
    expect(m.toJSON()).toMatchObject({
      name: 'notes', memory_type: ['raw', 'semantic'], storage_type: 'table', permissions: 'me', memory_size: 5242880,
      forgetting_policy: 'FIFO', temperature: 0.5, embd_id: EMBD, llm_id: LLM, avatar: '', description: '', user_prompt: '',
    });
    expect(m.system_prompt).toBe(extractionSystemPrompt(['raw', 'semantic']));
    expect((await client.createMemory({ name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM })).name).toBe('notes(1)');
    expect((await client.createMemory({ name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM })).name).toBe('notes(2)');
    const err = (p: object) => apiError(client.createMemory({ name: 'x', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM, ...p } as never));
    expect([(await err({ name: '  ' })).code, (await err({ name: '  ' })).message]).toEqual([101, 'Memory name cannot be empty or whitespace.']);
    expect((await err({ name: 'n'.repeat(129) })).message).toBe(`Memory name '${'n'.repeat(129)}' exceeds limit of 128.`);
    expect((await err({ memory_type: 'raw' })).message).toBe('Memory type must be a list.');
    expect((await err({ memory_type: ['raw', 'something'] })).message).toBe("Memory type '{'something'}' is not supported.");
    expect((await err({ llm_id: 'gpt-x@OpenAI' })).message).toBe('Tenant Model with name gpt-x@OpenAI and type chat not found');
    expect((await err({ embd_id: 'nope@X' })).message).toBe('Tenant Model with name nope@X and type embedding not found');
    expect((await apiError(client.createMemory({ name: 'x' } as never))).message).toBe('required argument are missing: memory_type,embd_id,llm_id; ');
  });

  test('update: ranges, frozen fields once not empty, system prompt follows the types', async ({ client }) => {
    const m = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    const err = async (p: object) => (await apiError(m.update(p as never))).message;
    expect(await err({ memory_size: 0 })).toBe('Memory size should be in range (0, 10485760] Bytes.');
    expect(await err({ memory_size: 10485761 })).toBe('Memory size should be in range (0, 10485760] Bytes.');
    expect(await err({ temperature: 1.5 })).toBe('Temperature should be in range [0, 1].');
    expect(await err({ forgetting_policy: 'LRU' })).toBe("Forgetting policy 'LRU' is not supported.");
    expect(await err({ permissions: 'all' })).toBe("Unknown permission 'all'.");
    expect(await err({ name: ' ' })).toBe('Memory name cannot be empty or whitespace.');
    expect(await err({ llm_id: 'nope@X' })).toBe('Tenant Model with name nope@X and type chat not found');
    const gone = await client.createMemory({ name: 'gone', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    await client.deleteMemory(gone.id);
    const e404 = await apiError(gone.update({ name: 'x' }));
    expect([e404.code, e404.message]).toEqual([404, `Memory '${gone.id}' not found.`]);
    await m.update({ memory_type: ['raw', 'procedural'], temperature: 0.2, permissions: 'team', description: 'd' });
    expect(m.system_prompt).toBe(extractionSystemPrompt(['raw', 'procedural']));
    expect(m).toMatchObject({ temperature: 0.2, permissions: 'team', description: 'd' });
    await client.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'hi', agent_response: 'hello' });
    expect(await err({ memory_type: ['raw'] })).toBe("Can't update ['memory_type'] when memory isn't empty.");
    expect(await err({ embd_id: 'ragloom-static-en-128@Builtin' })).toBe("Can't update ['embd_id'] when memory isn't empty.");
    await m.update({ memory_type: ['procedural', 'raw'] }); // the same set: no change, allowed
    expect((await m.getConfig()).memory_type).toEqual(['raw', 'procedural']);
  });

  test('list filters and paging; delete takes the messages in one go', async ({ client }) => {
    const a = await client.createMemory({ name: 'alpha notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    await client.createMemory({ name: 'beta', memory_type: ['raw', 'episodic'], embd_id: EMBD, llm_id: LLM });
    const r = await client.listMemory();
    expect(r.total_count).toBe(2);
    expect(r.memory_list.map((m) => m.name)).toEqual(['beta', 'alpha notes']); // update_time desc
    expect(Object.keys(r.memory_list[0]!.toJSON()).sort()).toEqual(['avatar', 'create_date', 'create_time', 'description', 'id', 'memory_type', 'name', 'owner_name', 'permissions', 'storage_type', 'tenant_id'].sort());
    expect((await client.listMemory({ memory_type: 'episodic' })).memory_list.map((m) => m.name)).toEqual(['beta']);
    expect((await client.listMemory({ keywords: 'NOTES' })).memory_list.map((m) => m.name)).toEqual(['alpha notes']);
    expect((await client.listMemory({ page: 2, page_size: 1 })).memory_list.map((m) => m.name)).toEqual(['alpha notes']);
    expect((await client.listMemory({ tenant_id: 'f'.repeat(32) })).total_count).toBe(0);
    await client.addMessage({ memory_id: [a.id], agent_id: 'a', session_id: 's', user_input: 'q', agent_response: 'r' });
    await client.deleteMemory(a.id);
    expect((await apiError(a.getConfig())).code).toBe(404);
    const db = (client as unknown as { t: { api: { engine: { db: { prepare(s: string): { pluck(): { get(): number } } } } } } }).t.api.engine.db;
    expect(db.prepare('SELECT COUNT(*) FROM memory_message').pluck().get()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) FROM memory_fts').pluck().get()).toBe(0);
  });
});

describe('memory messages', () => {
  test('add, list (session keyword, agent), recent, content, forget, status', async ({ client }) => {
    const m = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    expect(await client.addMessage({ memory_id: [m.id], agent_id: 'a1', session_id: 'sess-one', user_input: 'Where is the invoice?', agent_response: 'In the finance folder.' })).toBe('All add to task.');
    await client.addMessage({ memory_id: m.id, agent_id: 'a2', session_id: 'sess-two', user_input: 'Bake time?', agent_response: 'Thirty minutes.' });
    const all = (await m.listMemoryMessages()).messages;
    expect(all.total_count).toBe(2);
    const [newest, oldest] = all.message_list;
    expect(newest).toMatchObject({ message_type: 'raw', source_id: 0, agent_id: 'a2', session_id: 'sess-two', content: 'User Input: Bake time?\nAgent Response: Thirty minutes.', status: true, forget_at: '-', extract: [] });
    expect((await m.listMemoryMessages({ keywords: 'one' })).messages.message_list.map((x) => x.agent_id)).toEqual(['a1']);
    expect((await m.listMemoryMessages({ agent_id: 'a2' })).messages.total_count).toBe(1);
    const c = await m.getMessageContent(oldest!.message_id);
    expect(c.content_embed).toHaveLength(256);
    expect(Math.hypot(...c.content_embed!)).toBeCloseTo(1, 4);
    await m.forgetMessage(oldest!.message_id);
    expect((await client.getRecentMessages({ memory_id: [m.id] })).map((x) => x.message_id)).toEqual([newest!.message_id]);
    expect((await m.listMemoryMessages()).messages.total_count).toBe(2); // still listed
    expect((await m.listMemoryMessages()).messages.message_list[1]!.forget_at).not.toBe('-');
    expect((await apiError(m.updateMessageStatus(newest!.message_id, 'no' as never))).message).toBe('Status must be a boolean.');
    await m.updateMessageStatus(newest!.message_id, false);
    expect((await m.getMessageContent(newest!.message_id)).status).toBe(false);
    const e = await apiError(m.getMessageContent(999_999));
    expect([e.code, e.message]).toEqual([404, `Message '999999' in memory '${m.id}' not found.`]);
    expect((await apiError(client.getRecentMessages({ memory_id: [] }))).message).toBe('memory_ids is required.');
    const none = await apiError(client.addMessage({ memory_id: ['f'.repeat(32)], agent_id: 'a', session_id: 's', user_input: 'x', agent_response: 'y' }));
    expect([none.code, none.message]).toEqual([500, 'Some messages failed to add. Detail:Memory not found.']);
    expect((await apiError(client.addMessage({ memory_id: [m.id] } as never))).message).toBe('required argument are missing: agent_id,session_id,user_input,agent_response; ');
  });

  test('search: fused scores, inverted weight name, threshold, filters, forgotten and disabled hidden', async ({ client }) => {
    const m = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    const add = (agent: string, session: string, q: string, a: string) => client.addMessage({ memory_id: [m.id], agent_id: agent, session_id: session, user_input: q, agent_response: a, user_id: 'u1' });
    await add('a1', 's1', 'How do I rotate the API key?', 'Open settings, choose API keys, then rotate.');
    await add('a1', 's2', 'What is the refund policy?', 'Refunds are possible within thirty days.');
    await add('a2', 's3', 'How long do I bake sourdough bread?', 'Bake it for forty minutes at 230 degrees.');
    const hits = await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], similarity_threshold: 0 });
    expect(hits[0]!.content).toContain('rotate');
    expect(hits[0]!.similarity).toBeGreaterThan(hits[hits.length - 1]!.similarity!);
    expect((await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], agent_id: 'a2', similarity_threshold: 0 })).every((h) => h.agent_id === 'a2')).toBe(true);
    expect((await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], session_id: 's2', similarity_threshold: 0 })).map((h) => h.session_id)).toEqual(['s2']);
    expect(await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], similarity_threshold: 0.99 })).toEqual([]);
    expect(await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], similarity_threshold: 0, top_n: 1 })).toHaveLength(1);
    // keywords_similarity_weight is the vector side's weight (RAGFlow's naming): 1 → similarity = cosine.
    const [v] = await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], keywords_similarity_weight: 1, similarity_threshold: 0, top_n: 1 });
    expect(v!.similarity).toBeCloseTo(v!.vector_similarity as number, 6);
    const [t] = await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], keywords_similarity_weight: 0, similarity_threshold: 0, top_n: 1 });
    expect(t!.similarity).toBeCloseTo(t!.term_similarity as number, 6);
    await m.forgetMessage(hits[0]!.message_id);
    expect((await client.searchMessage({ query: 'rotate api key', memory_id: [m.id], similarity_threshold: 0 })).map((h) => h.message_id)).not.toContain(hits[0]!.message_id);
    const refund = (await client.searchMessage({ query: 'refund policy', memory_id: [m.id], similarity_threshold: 0, top_n: 1 }))[0]!;
    await m.updateMessageStatus(refund.message_id, false);
    expect((await client.searchMessage({ query: 'refund policy', memory_id: [m.id], similarity_threshold: 0 })).map((h) => h.message_id)).not.toContain(refund.message_id);
    await m.updateMessageStatus(refund.message_id, true);
    expect((await client.searchMessage({ query: 'refund policy', memory_id: [m.id], similarity_threshold: 0 }))[0]!.message_id).toBe(refund.message_id);
  });
});

describe('extraction', () => {
  test('a model extracts typed items; they are stored under their raw message and charged', async ({ client }) => {
    useModel(client);
    const m = await client.createMemory({ name: 'm', memory_type: ['raw', 'semantic', 'procedural'], embd_id: EMBD, llm_id: 'extractor@OpenAI-API-Compatible' });
    await m.update({ temperature: 0.3 });
    server.script({ text: '```json\n{"semantic":[{"content":"The office wifi is called Loom","valid_at":"","invalid_at":""}],"procedural":[{"content":"To join, pick Loom and type the code on the badge.","valid_at":"2025-01-01","invalid_at":""}]}\n```' });
    const n = server.requests.length;
    await client.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'How do I get on the wifi?', agent_response: 'Pick Loom, type the badge code.' });
    await client.waitForMemoryTasks();
    const req = server.requests[n]!;
    expect(req.body.temperature).toBe(0.3);
    expect(String(req.body.messages[1]!.content)).toContain('How do I get on the wifi?');
    const [raw] = (await m.listMemoryMessages()).messages.message_list;
    expect(raw!.extract!.map((x) => [x.message_type, x.content])).toEqual([
      ['semantic', 'The office wifi is called Loom'],
      ['procedural', 'To join, pick Loom and type the code on the badge.'],
    ]);
    expect(raw!.extract!.every((x) => x.source_id === raw!.message_id)).toBe(true);
    expect(raw!.task).toMatchObject({ status: 'done' });
    const u = await m.usage();
    expect(u.messages).toBe(3);
    const hits = await client.searchMessage({ query: 'wifi name', memory_id: [m.id], similarity_threshold: 0 });
    expect(hits.map((h) => h.message_type)).toContain('semantic');
  });

  test('malformed model output stores nothing and records why; the built-in model cannot extract', async ({ client }) => {
    useModel(client);
    const m = await client.createMemory({ name: 'm', memory_type: ['raw', 'episodic'], embd_id: EMBD, llm_id: 'extractor@OpenAI-API-Compatible' });
    server.script({ text: '{"episodic": [ {"content": "oops", ' });
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      await client.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'x', agent_response: 'y' });
      await client.waitForMemoryTasks();
      const [raw] = (await m.listMemoryMessages()).messages.message_list;
      expect(raw!.extract).toEqual([]);
      expect(raw!.task).toMatchObject({ status: 'failed', progress_msg: expect.stringContaining('not usable') });
      const b = await client.createMemory({ name: 'b', memory_type: ['raw', 'semantic'], embd_id: EMBD, llm_id: LLM });
      await client.addMessage({ memory_id: [b.id], agent_id: 'a', session_id: 's', user_input: 'x', agent_response: 'y' });
      await client.waitForMemoryTasks();
      expect((await b.listMemoryMessages()).messages.message_list[0]!.task).toMatchObject({ status: 'failed', progress_msg: expect.stringContaining('cannot extract') });
    } finally {
      console.warn = warn;
    }
  });

  test('queued extraction survives a restart', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const models = [{ type: 'chat' as const, name: 'extractor', factory: 'OpenAI-API-Compatible', base_url: server.url }];
    const c1 = new Client({ path, models });
    const m = await c1.createMemory({ name: 'm', memory_type: ['raw', 'semantic'], embd_id: EMBD, llm_id: 'extractor@OpenAI-API-Compatible' });
    server.script({ hang: true });
    await c1.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'The meeting room is B12.', agent_response: 'Noted.' });
    await new Promise((r) => setTimeout(r, 100));
    await c1.close(); // the request in flight is abandoned; the task stays pending
    server.script({ text: '{"semantic":[{"content":"The meeting room is B12","valid_at":"","invalid_at":""}]}' });
    const c2 = new Client({ path, models });
    await c2.waitForMemoryTasks();
    const [mem] = (await c2.listMemory()).memory_list;
    const [raw] = (await mem!.listMemoryMessages()).messages.message_list;
    expect(raw!.extract!.map((x) => x.content)).toEqual(['The meeting room is B12']);
    await c2.close();
  });
});

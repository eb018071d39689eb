import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { test, apiError, enc } from '../helpers.js';
import { Client, ApiError, type DataSet } from '../../src/index.js';

async function parsedDataset(client: Client, name = 'kb', embedding_model?: string): Promise<DataSet> {
  const ds = await client.createDataset({ name, ...(embedding_model ? { embedding_model } : {}) });
  const docs = await ds.uploadDocuments([
    { display_name: 'tides.md', blob: enc('# Tides\n\nThe gravitational pull of the moon raises the ocean tides twice a day. Spring tides happen at new and full moon.') },
    { display_name: 'bread.md', blob: enc('# Bread\n\nKnead the dough for ten minutes, then let it rise for an hour in a warm place.') },
  ]);
  await ds.parseDocuments(docs.map((d) => d.id));
  return ds;
}

describe('chats: create', () => {
  test('fills every default of the reference', async ({ client }) => {
    const ds = await parsedDataset(client);
    const chat = await client.createChat({ name: 'helper', dataset_ids: [ds.id] });
    const w = chat.toJSON();
    expect(w).toMatchObject({
      name: 'helper', description: 'A helpful Assistant', icon: '', top_n: 6, top_k: 1024, rerank_id: '',
      similarity_threshold: 0.1, vector_similarity_weight: 0.3, llm_setting: {}, dataset_ids: [ds.id], kb_names: ['kb'],
      llm_id: 'ragloom-extractive@Builtin',
    });
    expect(w.prompt_config).toMatchObject({
      prologue: "Hi! I'm your assistant. What can I do for you?",
      parameters: [{ key: 'knowledge', optional: false }],
      empty_response: 'Sorry! No relevant content was found in the knowledge base!',
      quote: true, tts: false, refine_multiturn: true,
    });
    expect(String((w.prompt_config as { system: string }).system)).toContain('{knowledge}');
    expect(w.id).toMatch(/^[0-9a-f]{32}$/);
  });

  test('keeps given prompt_config keys and fills the rest; an empty system prompt takes the default', async ({ client }) => {
    const chat = await client.createChat({ name: 'c', prompt_config: { system: '', quote: false, prologue: 'Hello.' } });
    expect(chat.prompt_config).toMatchObject({ quote: false, prologue: 'Hello.', refine_multiturn: true });
    expect(String(chat.prompt_config.system)).toContain('{knowledge}');
  });

  test('name rules: required, string, 255 bytes, case-insensitive duplicates', async ({ client }) => {
    expect((await apiError(client.createChat({} as never))).message).toBe('`name` is required.');
    expect((await apiError(client.createChat({ name: '   ' }))).message).toBe('`name` is required.');
    expect((await apiError(client.createChat({ name: 42 as never }))).message).toBe('Chat name must be a string.');
    const long = 'é'.repeat(128); // 256 bytes
    const e = await apiError(client.createChat({ name: long }));
    expect([e.code, e.message]).toEqual([102, 'Chat name length is 256 which is larger than 255.']);
    await client.createChat({ name: 'Support' });
    expect((await apiError(client.createChat({ name: 'support' }))).message).toBe('Duplicated chat name in creating chat.');
    expect((await apiError(client.createChat({ name: 'x', tenant_id: 'abc' } as never))).message).toBe('`tenant_id` must not be provided.');
  });

  test('datasets must be owned, parsed and share one embedding model', async ({ client }) => {
    const ds = await parsedDataset(client);
    const empty = await client.createDataset({ name: 'empty' });
    expect((await apiError(client.createChat({ name: 'a', dataset_ids: 'x' as never }))).message).toBe('`dataset_ids` should be a list.');
    expect((await apiError(client.createChat({ name: 'a', dataset_ids: ['f'.repeat(32)] }))).message).toBe(`You don't own the dataset ${'f'.repeat(32)}`);
    expect((await apiError(client.createChat({ name: 'a', dataset_ids: [empty.id] }))).message).toBe(`The dataset ${empty.id} doesn't own parsed file`);
    const other = await parsedDataset(client, 'kb128', 'ragloom-static-en-128@Builtin');
    const e = await apiError(client.createChat({ name: 'a', dataset_ids: [ds.id, other.id] }));
    expect(e.message).toBe("Datasets use different embedding models: ['ragloom-static-en-256@Builtin', 'ragloom-static-en-128@Builtin']");
    expect(await client.listChats()).toHaveLength(0); // nothing half-written
  });

  test('llm_id and rerank_id must exist', async ({ client }) => {
    expect((await apiError(client.createChat({ name: 'a', llm_id: 'gpt-9@OpenAI' }))).message).toBe("`llm_id` gpt-9@OpenAI doesn't exist");
    expect((await apiError(client.createChat({ name: 'a', rerank_id: 'nope@X' }))).message).toBe("`rerank_id` nope@X doesn't exist");
    // RAGFlow's two built-in rerank names pass; a registered model passes.
    await client.createChat({ name: 'b', rerank_id: 'BAAI/bge-reranker-v2-m3' });
    client.registerModel({ type: 'chat', name: 'qwen', factory: 'Ollama', base_url: 'http://127.0.0.1:9/v1' });
    expect((await client.createChat({ name: 'c', llm_id: 'qwen@Ollama' })).llm_id).toBe('qwen@Ollama');
    expect((await apiError(client.createChat({ name: 'd', prompt_config: [] as never }))).message).toBe('`prompt_config` should be an object.');
    expect((await apiError(client.createChat({ name: 'd', top_n: 0 }))).message).toBe('`top_n` should be a positive integer.');
    expect((await apiError(client.createChat({ name: 'd', similarity_threshold: 2 }))).message).toBe('`similarity_threshold` should be a number in [0, 1].');
  });
});

describe('chats: update, list, delete', () => {
  test('update merges prompt_config and llm_setting (PATCH), checks names', async ({ client }) => {
    const chat = await client.createChat({ name: 'a', llm_setting: { temperature: 0.1 }, prompt_config: { prologue: 'Hi.' } });
    await client.createChat({ name: 'b' });
    await chat.update({ prompt_config: { empty_response: 'Nothing.' }, llm_setting: { top_p: 0.5 } });
    expect(chat.prompt_config).toMatchObject({ prologue: 'Hi.', empty_response: 'Nothing.', quote: true });
    expect(chat.llm_setting).toEqual({ temperature: 0.1, top_p: 0.5 });
    expect((await apiError(chat.update({ name: '' }))).message).toBe('`name` cannot be empty.');
    expect((await apiError(chat.update({ name: 'B' }))).message).toBe('Duplicated chat name.');
    await chat.update({ name: 'A' }); // same name, other case: allowed
    expect(chat.name).toBe('A');
    await expect(chat.update('x' as never)).rejects.toThrow('`update_message` must be a dict');
  });

  test('list: filters, keywords ignored with id/name, paging, owner_ids', async ({ client }) => {
    const a = await client.createChat({ name: 'Alpha support' });
    await client.createChat({ name: 'Beta support' });
    await client.createChat({ name: 'Gamma' });
    expect((await client.listChats({ keywords: 'SUPPORT' })).map((c) => c.name).sort()).toEqual(['Alpha support', 'Beta support']);
    expect((await client.listChats({ id: a.id, keywords: 'gamma' })).map((c) => c.name)).toEqual(['Alpha support']);
    expect((await client.listChats({ name: 'gamma' })).map((c) => c.name)).toEqual(['Gamma']);
    expect((await client.listChats({ page: 1, page_size: 2, orderby: 'create_time', desc: false })).map((c) => c.name)).toEqual(['Alpha support', 'Beta support']);
    expect(await client.listChats({ page_size: 0 })).toHaveLength(3);
    const e = await apiError(client.listChats({ owner_ids: ['f'.repeat(32)] }));
    expect([e.code, e.message]).toEqual([103, 'Only authorized owner_ids can be queried.']);
    expect((await client.getChat(a.id)).name).toBe('Alpha support');
    const e2 = await apiError(client.getChat('0'.repeat(32)));
    expect([e2.code, e2.message]).toEqual([109, 'No authorization.']);
  });

  test('delete: partial, duplicates, unknown, soft', async ({ client, dir }) => {
    const a = await client.createChat({ name: 'a' });
    const b = await client.createChat({ name: 'b' });
    const ghost = '1'.repeat(32);
    const api = (client as unknown as { t: { api: { call(op: string, p: object): Promise<unknown> } } }).t.api;
    const partial = await api.call('chats.delete', { ids: [a.id, a.id, ghost] });
    expect(partial).toEqual({ success_count: 1, errors: [`Chat(${ghost}) not found.`, `Duplicate chat ids: ${a.id}`] });
    expect(Object.getOwnPropertySymbols(partial as object).length).toBe(1);
    const e = await apiError(client.deleteChats({ ids: [ghost] }));
    expect([e.code, e.message]).toEqual([102, `Chat(${ghost}) not found.`]);
    expect(await api.call('chats.delete', {})).toEqual({});
    expect((await client.listChats()).map((c) => c.id)).toEqual([b.id]);
    // Soft delete: the row stays, and a new chat may take the name.
    await client.createChat({ name: 'a' });
    await client.deleteChats({ delete_all: true });
    expect(await client.listChats()).toHaveLength(0);
    await client.close();
    const raw = new Client({ path: join(dir, 'kb.db') });
    const n = (raw as unknown as { t: { api: { engine: { db: { prepare(s: string): { get(): { n: number } } } } } } }).t.api.engine.db.prepare('SELECT COUNT(*) AS n FROM chat').get().n;
    expect(n).toBe(3);
    await raw.close();
  });
});

describe('sessions', () => {
  test('create with the prologue; names trimmed, cut, duplicates allowed', async ({ client }) => {
    const chat = await client.createChat({ name: 'c', prompt_config: { prologue: 'Welcome!' } });
    const s = await chat.createSession();
    expect(s.name).toBe('New session');
    expect(s.messages).toEqual([{ role: 'assistant', content: 'Welcome!' }]);
    expect(s.chat_id).toBe(chat.id);
    const long = await chat.createSession({ name: `  ${'x'.repeat(300)}  ` });
    expect(long.name).toBe('x'.repeat(255));
    await chat.createSession({ name: 'dup' });
    await chat.createSession({ name: 'dup' });
    expect((await apiError(chat.createSession({ name: '  ' }))).message).toBe('`name` can not be empty.');
    expect((await apiError(chat.createSession({ name: 3 as never }))).message).toBe('`name` can not be empty.');
    await client.deleteChats({ ids: [chat.id] });
    const e = await apiError(chat.createSession());
    expect([e.code, e.message]).toEqual([109, 'No authorization.']);
  });

  test('list filters and page_size 0; update rules; partial delete', async ({ client }) => {
    const chat = await client.createChat({ name: 'c' });
    const s1 = await chat.createSession({ name: 'one' });
    await chat.createSession({ name: 'two', user_id: 'u2' });
    expect(await chat.listSessions({ page_size: 0 })).toEqual([]);
    expect((await chat.listSessions({ name: 'one' })).map((s) => s.id)).toEqual([s1.id]);
    expect((await chat.listSessions({ user_id: 'u2' })).map((s) => s.name)).toEqual(['two']);
    expect((await chat.listSessions({ id: s1.id })).length).toBe(1);
    expect((await chat.listSessions({ desc: false })).map((s) => s.name)).toEqual(['one', 'two']);
    await s1.update({ name: ' renamed ' });
    expect(s1.name).toBe('renamed');
    expect((await apiError(s1.update({ name: 'x', messages: [] } as never))).message).toBe('`messages` cannot be changed.');
    expect((await apiError(s1.update({ name: 'x', reference: [] } as never))).message).toBe('`reference` cannot be changed.');
    expect((await apiError(s1.update({ name: ' ' }))).message).toBe('`name` can not be empty.');
    const ghost = '2'.repeat(32);
    const api = (client as unknown as { t: { api: { call(op: string, p: object): Promise<unknown> } } }).t.api;
    expect(await api.call('sessions.delete', { chat_id: chat.id, ids: [s1.id, ghost] })).toEqual({ success_count: 1, errors: [`The chat doesn't own the session ${ghost}`] });
    expect((await apiError(chat.deleteSessions({ ids: [ghost] }))).message).toBe(`The chat doesn't own the session ${ghost}`);
    await chat.deleteSessions({ delete_all: true });
    expect(await chat.listSessions()).toEqual([]);
  });
});

test('default_chat_model: unknown is refused, a registered one persists across reopen', async ({ dir }) => {
  const path = join(dir, 'kb.db');
  expect(() => new Client({ path, default_chat_model: 'nope@X' })).toThrow(ApiError);
  const models = [{ type: 'chat' as const, name: 'm', factory: 'OpenAI-API-Compatible', base_url: 'http://127.0.0.1:9/v1' }];
  const c1 = new Client({ path, models, default_chat_model: 'm@OpenAI-API-Compatible' });
  expect((await c1.createChat({ name: 'a' })).llm_id).toBe('m@OpenAI-API-Compatible');
  await c1.close();
  const c2 = new Client({ path, models });
  expect((await c2.createChat({ name: 'b' })).llm_id).toBe('m@OpenAI-API-Compatible');
  await c2.close();
});

/**
 * Issue 34, items 6 and 8, over HTTP with RAGFlow 0.25.6's request shapes: a completion without a
 * chat (the tenant's default chat model as a plain dialog), related questions / chat
 * recommendations, search apps (`/searches`) and the embedded search widget (`/searchbots/*`).
 * The chat model is a loopback stand-in speaking OpenAI's wire protocol.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { test, http, parsedDataset, sseEvents, type Http } from './fixtures.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let model: ChatServer;
beforeAll(async () => {
  model = await startChatServer();
});
afterAll(() => model.close());

const LOOP = 'loop@OpenAI-API-Compatible';
const loop = () => [{ type: 'chat' as const, name: 'loop', factory: 'OpenAI-API-Compatible', base_url: model.url, max_tokens: 4096 }];
const UNAUTHORIZED = { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null };

const post = (api: Http, path: string, body: unknown) => fetch(`${api.base}${path}`, {
  method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
});

describe('completion without a chat (item 6)', () => {
  test('the default chat model answers the messages as a plain dialog; nothing is stored', async ({ serve }) => {
    model.reset();
    const api = http(await serve({ models: loop(), default_chat_model: LOOP }));
    const r = await api.call('POST', '/chat/completions', { messages: [{ role: 'user', content: 'Hello there' }], stream: false });
    expect(r.body.code, r.text).toBe(0);
    expect(r.body.data.answer).toBe('Echo: Hello there');
    expect(r.body.data.session_id).toBe('');
    expect(r.body.data).not.toHaveProperty('chat_id');
    // What the model was sent: the dialog itself, no knowledge prompt.
    const sent = model.requests.at(-1)!.body;
    expect(sent.model).toBe('loop');
    expect(sent.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'Hello there' }]);
    expect(JSON.stringify(sent.messages)).not.toMatch(/knowledge/i);

    // Streamed (the default), with earlier turns passed on.
    const res = await post(api, '/chat/completions', { messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second turn' }] });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = (await sseEvents(res)).map((s) => JSON.parse(s));
    expect(events.at(-1)).toEqual({ code: 0, message: '', data: true });
    expect(events.at(-2).data).toMatchObject({ answer: 'Echo: second turn', final: true });
    expect(model.requests.at(-1)!.body.messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual(['first', 'ok', 'second turn']);

    expect((await api.call('GET', '/chats')).body.data).toEqual({ chats: [], total: 0 });
  });

  test('llm_id picks another model; an unknown one and a missing question are refused', async ({ serve }) => {
    model.reset();
    const api = http(await serve({ models: loop() }));
    const r = await api.call('POST', '/chat/completions', { question: 'ping', llm_id: LOOP, stream: false });
    expect([r.body.code, r.body.data?.answer]).toEqual([0, 'Echo: ping']);
    expect((await api.call('POST', '/chat/completions', { question: 'ping', llm_id: 'nope@Nowhere', stream: false })).body).toEqual({
      code: 102, message: 'Cannot use specified model nope@Nowhere.',
    });
    expect((await api.call('POST', '/chat/completions', { stream: false })).body).toEqual({ code: 101, message: 'required argument are missing: messages' });
    // The built-in default (extractive) model has no knowledge base here and says so.
    const builtin = (await api.call('POST', '/chat/completions', { question: 'hi there', stream: false })).body;
    expect([builtin.code, builtin.data.session_id]).toEqual([0, '']);
    expect(builtin.data.answer).toMatch(/extractive.*configure a generative chat model/s);
    // A chat id that is not the caller's is still 109.
    expect((await api.call('POST', '/chat/completions', { chat_id: 'nope', question: 'x', stream: false })).body).toMatchObject({ code: 109, message: 'No authorization.' });
    expect((await api.call('POST', '/chat/completions', { question: 'x' }, { key: null })).body).toEqual(UNAUTHORIZED);
  });
});

describe('related questions (item 8)', () => {
  test('numbered lines of the model\'s answer; the built-in extractive model cannot write them (102)', async ({ serve, api, dir }) => {
    const withLoop = http(await serve({ models: loop(), default_chat_model: LOOP, path: join(dir, 'loop.db') }));
    model.reset();
    model.script({ text: '1. spring tides\n2. neap tides\nnot a numbered line\n3. lunar pull' }, { text: '1. yeast\n2. kneading' }, { text: '1. oven heat' });
    expect((await withLoop.call('POST', '/chat/recommendation', { question: 'tides' })).body).toEqual({ code: 0, message: 'success', data: ['spring tides', 'neap tides', 'lunar pull'] });
    const sent = model.requests.at(-1)!.body.messages;
    expect(sent.at(-1)!.content).toContain('Keywords: tides');
    expect((await withLoop.call('POST', '/sessions/related_questions', { question: 'bread' })).body.data).toEqual(['yeast', 'kneading']);
    // The widget's route: a key with two words; checks before the key.
    expect((await withLoop.call('POST', '/searchbots/related_questions', { question: 'baking' })).body.data).toEqual(['oven heat']);
    expect((await withLoop.call('POST', '/searchbots/related_questions', {})).body).toEqual({ code: 101, message: 'required argument are missing: question; ', data: null });
    expect((await withLoop.call('POST', '/searchbots/related_questions', { question: 'x' }, { key: null })).body).toEqual({ code: 102, message: 'Authorization is not valid!' });
    expect((await withLoop.call('POST', '/searchbots/related_questions', { question: 'x' }, { key: 'nope' })).body).toEqual({
      code: 102, message: 'Authentication error: API key is invalid!"',
    });

    // The default (built-in) chat model only selects sentences.
    const r = (await api.call('POST', '/chat/recommendation', { question: 'tides' })).body;
    expect(r.code).toBe(102);
    expect(r.message).toMatch(/^Related questions needs a chat model that writes text/);
    expect((await api.call('POST', '/chat/recommendation', {})).body).toMatchObject({ code: 101, message: 'required argument are missing: question; ' });
    expect((await api.call('POST', '/chat/recommendation', { question: 'x' }, { key: null })).body).toEqual(UNAUTHORIZED);
  });
});

describe('search apps (item 8)', () => {
  test('create, list, get, update, delete; names checked as search_api checks them', async ({ api }) => {
    const created = (await api.call('POST', '/searches', { name: 'Finder', description: 'd' })).body;
    expect(created).toEqual({ code: 0, message: 'success', data: { search_id: expect.any(String) } });
    const id = created.data.search_id;
    expect((await api.call('POST', '/searches', { name: 'finder' })).body.code).toBe(0); // a taken name is made unique
    const list = (await api.call('GET', '/searches')).body.data;
    expect(list.total).toBe(2);
    expect(list.search_apps.map((s: { name: string }) => s.name).sort()).toEqual(['Finder', 'finder(1)']);
    expect((await api.call('GET', '/searches?keywords=FIND&page=1&page_size=1')).body.data).toMatchObject({ total: 2, search_apps: [expect.anything()] });

    const got = (await api.call('GET', `/searches/${id}`)).body;
    expect(got).toMatchObject({ code: 0, data: { id, name: 'Finder', description: 'd', search_config: expect.any(Object) } });
    const upd = (await api.call('PUT', `/searches/${id}`, { name: 'Seeker', search_config: { top_k: 50, kb_ids: [] } })).body;
    expect(upd.code).toBe(0);
    expect(upd.data).toMatchObject({ id, name: 'Seeker', search_config: { top_k: 50, kb_ids: [] } });
    expect((await api.call('GET', `/searches/${id}`)).body.data.search_config.top_k).toBe(50);

    expect((await api.call('POST', '/searches', {})).body).toMatchObject({ code: 101, message: 'required argument are missing: name; ' });
    expect((await api.call('POST', '/searches', { name: 5 })).body).toMatchObject({ code: 102, message: 'Search name must be string.' });
    expect((await api.call('POST', '/searches', { name: '  ' })).body).toMatchObject({ code: 102, message: "Search name can't be empty." });
    expect((await api.call('POST', '/searches', { name: 'x'.repeat(256) })).body).toMatchObject({ code: 102, message: 'Search name length is 256 which is large than 255.' });
    expect((await api.call('POST', '/searches', { name: 'ok', search_config: [] })).body).toMatchObject({ code: 102, message: 'search_config must be a JSON object' });
    expect((await api.call('PUT', `/searches/${id}`, { name: 'finder(1)', search_config: {} })).body).toMatchObject({ code: 102, message: 'Duplicated search name.' });
    expect((await api.call('PUT', `/searches/${id}`, { name: 'x', search_config: 'no' })).body).toMatchObject({ code: 102, message: 'search_config must be a JSON object' });
    expect((await api.call('PUT', '/searches/nope', { name: 'x', search_config: {} })).body).toMatchObject({ code: 109, message: 'No authorization.' });
    expect((await api.call('GET', '/searches/nope')).body).toMatchObject({ code: 103, message: 'Has no permission for this operation.' });
    expect((await api.call('GET', '/searches?owner_ids=someone_else')).body).toMatchObject({ code: 103, message: 'Only authorized owner_ids can be queried.' });

    expect((await api.call('DELETE', `/searches/${id}`)).body).toEqual({ code: 0, message: 'success', data: true });
    expect((await api.call('GET', `/searches/${id}`)).body.code).toBe(103);
    expect((await api.call('DELETE', `/searches/${id}`)).body).toMatchObject({ code: 109 });
    expect((await api.call('GET', '/searches', undefined, { key: null })).body).toEqual(UNAUTHORIZED);
  });

  test('completion: the app\'s datasets and model answer, streamed; the widget asks and tests retrieval with a key', async ({ serve }) => {
    model.reset();
    const api = http(await serve({ models: loop() }));
    const { datasetId } = await parsedDataset(api);
    const id = (await api.call('POST', '/searches', { name: 'app', search_config: { kb_ids: [datasetId], chat_id: LOOP } })).body.data.search_id;
    const res = await post(api, `/searches/${id}/completion`, { question: 'How long should the dough rise?' });
    const events = (await sseEvents(res)).map((s) => JSON.parse(s));
    expect(events.at(-1)).toEqual({ code: 0, message: '', data: true });
    const final = events.at(-2).data;
    expect(final.answer).toMatch(/^Echo: How long should the dough rise\?/);
    expect(final.reference.chunks.length).toBeGreaterThan(0);
    // The passages went to the model in the system prompt.
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).toContain('rise for one hour');
    // `/completions` is the same route.
    expect((await sseEvents(await post(api, `/searches/${id}/completions`, { question: 'tides' }))).length).toBeGreaterThan(1);
    expect((await api.call('POST', `/searches/${id}/completion`, {})).body).toMatchObject({ code: 101, message: 'required argument are missing: question; ' });
    const bare = (await api.call('POST', '/searches', { name: 'bare' })).body.data.search_id;
    expect((await api.call('POST', `/searches/${bare}/completion`, { question: 'x' })).body).toMatchObject({ code: 102, message: '`kb_ids` is required.' });
    expect((await api.call('POST', '/searches/nope/completion', { question: 'x' })).body).toMatchObject({ code: 109 });

    // The widget: POST /searchbots/ask, /searchbots/retrieval_test, GET /searchbots/detail.
    const ask = (await sseEvents(await post(api, '/searchbots/ask', { question: 'spring tides', kb_ids: [datasetId], search_id: id }))).map((s) => JSON.parse(s));
    expect(ask.at(-2).data.answer).toMatch(/^Echo: spring tides/);
    const rt = (await api.call('POST', '/searchbots/retrieval_test', { kb_id: datasetId, question: 'moon' })).body;
    expect(rt.code).toBe(0);
    expect(rt.data.chunks[0]).toMatchObject({ kb_id: datasetId });
    expect((await api.call('POST', '/searchbots/retrieval_test', { kb_id: '', question: 'moon' })).body).toEqual({ code: 102, message: 'Please specify dataset firstly.', data: false });
    expect((await api.call('POST', '/searchbots/retrieval_test', { kb_id: 'nope', question: 'moon' })).body).toEqual({ code: 103, message: 'Only owner of dataset authorized for this operation.', data: false });
    expect((await api.call('GET', `/searchbots/detail?search_id=${id}`)).body).toMatchObject({ code: 0, data: { id, name: 'app' } });
    expect((await api.call('GET', `/searchbots/detail?search_id=${id}`, undefined, { key: 'bad' })).body).toEqual({ code: 102, message: 'Authentication error: API key is invalid!"' });
    expect((await api.call('POST', '/searchbots/ask', { question: 'x' })).body).toMatchObject({ code: 101, message: 'required argument are missing: kb_ids; ' });
  });
});

/**
 * Both completions over HTTP (§8, §9): server-sent events exactly as RAGFlow writes them, the
 * non-streamed answers, failures mid-stream, and a client going away mid-stream.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { test, http, parsedDataset, sseEvents } from './fixtures.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let model: ChatServer;
beforeAll(async () => {
  model = await startChatServer();
});
afterAll(() => model.close());

const loop = () => [{ type: 'chat' as const, name: 'loop', factory: 'OpenAI-API-Compatible', base_url: model.url, max_tokens: 4096 }];

describe('native completion (POST /chats/{chat_id}/completions, Session.ask)', () => {
  test('streams data: lines; answer deltas, a final event with the references, then data:true', async ({ api }) => {
    const { datasetId } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [datasetId] })).body.data;
    const session = (await api.call('POST', `/chats/${chat.id}/sessions`, { name: 'New session' })).body.data;
    const res = await fetch(`${api.base}/chats/${chat.id}/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How long should the dough rise?', stream: true, session_id: session.id }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const events = (await sseEvents(res)).map((s) => JSON.parse(s));
    expect(events.at(-1)).toEqual({ code: 0, message: '', data: true });
    const answers = events.slice(0, -1);
    expect(answers.length).toBeGreaterThan(1);
    for (const e of answers) {
      expect(Object.keys(e)).toEqual(['code', 'message', 'data']);
      expect(e.code).toBe(0);
      expect(e.data).toEqual(expect.objectContaining({ session_id: session.id, chat_id: chat.id, answer: expect.any(String) }));
    }
    const final = answers.at(-1).data;
    expect(final.final).toBe(true);
    expect(final.answer).toMatch(/rise for one hour/);
    expect(final.reference.chunks.length).toBeGreaterThan(0);
    // Deltas before the final event concatenate to the answer (before citations are added).
    const deltas = answers.slice(0, -1).map((e) => e.data.answer).join('');
    expect(final.answer.startsWith(deltas.trim().slice(0, 10))).toBe(true);

    // The answer is stored in the session.
    const listed = (await api.call('GET', `/chats/${chat.id}/sessions?id=${session.id}`)).body.data[0];
    expect(listed.messages.map((m: { role: string }) => m.role)).toEqual(['assistant', 'user', 'assistant']);
  });

  test('non-streamed: get_json_result with the answer; POST /chat/completions takes chat_id in the body', async ({ api }) => {
    const { datasetId } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [datasetId] })).body.data;
    const r = await api.call('POST', `/chats/${chat.id}/completions`, { question: 'Why are there spring tides?', stream: false, session_id: null });
    expect(r.body).toEqual({ code: 0, message: 'success', data: expect.objectContaining({ answer: expect.stringMatching(/sun and the moon/), chat_id: chat.id, session_id: expect.any(String) }) });
    const r2 = await api.call('POST', '/chat/completions', { chat_id: chat.id, messages: [{ role: 'user', content: 'How long to knead?' }], stream: false });
    expect(r2.body.data.answer).toMatch(/ten minutes/);
    expect((await api.call('POST', `/chats/${chat.id}/completions`, { stream: false })).body).toEqual({ code: 101, message: 'required argument are missing: messages' });
    expect((await api.call('POST', `/chats/${chat.id}/completions`, { question: 'x', session_id: 'nope', stream: false })).body).toEqual({ code: 102, message: 'Session not found!' });
  });

  test('a failure mid-stream is a code 500 event, then data:true', async ({ serve }) => {
    const srv = await serve({ models: loop() });
    const api = http(srv);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [], llm_id: 'loop@OpenAI-API-Compatible' })).body.data;
    model.script({ status: 400, body: { error: { message: 'context too long', type: 'invalid_request_error' } } });
    const res = await fetch(`${api.base}/chats/${chat.id}/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'hello', stream: true }),
    });
    const events = (await sseEvents(res)).map((s) => JSON.parse(s));
    expect(events).toHaveLength(2);
    expect(events[0].code).toBe(500);
    expect(events[0].message).toMatch(/context too long/);
    expect(events[0].data).toEqual({ answer: `**ERROR**: ${events[0].message}`, reference: [] });
    expect(events[1]).toEqual({ code: 0, message: '', data: true });
  });

  test('the client going away mid-stream stops the model call and stores nothing', async ({ serve }) => {
    model.reset();
    const srv = await serve({ models: loop() });
    const api = http(srv);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [], llm_id: 'loop@OpenAI-API-Compatible' })).body.data;
    const session = (await api.call('POST', `/chats/${chat.id}/sessions`, {})).body.data;
    model.script({ deltas: Array.from({ length: 200 }, (_, i) => `word${i} `), delayMs: 50 });
    const ctl = new AbortController();
    const res = await fetch(`${api.base}/chats/${chat.id}/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'talk for a long time', stream: true, session_id: session.id }), signal: ctl.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data:\{"code":0/);
    ctl.abort();
    await reader.cancel().catch(() => undefined);
    // The server aborts its request to the model well before the 10 s the answer would take.
    const upstream = model.requests.at(-1)!;
    await upstream.closed;
    expect(upstream.clientClosed).toBe(true);
    // The interrupted answer is not stored.
    await new Promise((ok) => setTimeout(ok, 100));
    const listed = (await api.call('GET', `/chats/${chat.id}/sessions?id=${session.id}`)).body.data[0];
    expect(listed.messages).toHaveLength(1);
  });
});

describe('OpenAI-compatible completion (POST /openai/{chat_id}/chat/completions)', () => {
  test('streams chat.completion.chunk objects and ends with data:[DONE]; non-streamed is the bare object', async ({ api }) => {
    const { datasetId } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [datasetId] })).body.data;
    const res = await fetch(`${api.base}/openai/${chat.id}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'How long should the dough rise?' }], stream: true, extra_body: { reference: true } }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = await sseEvents(res);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((s) => JSON.parse(s));
    for (const c of chunks) expect(c).toEqual(expect.objectContaining({ id: `chatcmpl-${chat.id}`, object: 'chat.completion.chunk' }));
    const last = chunks.at(-1);
    expect(last.choices[0].finish_reason).toBe('stop');
    expect(last.usage).toEqual(expect.objectContaining({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) }));
    expect(last.choices[0].delta.reference.length).toBeGreaterThan(0);
    const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(content).toMatch(/rise for one hour/);

    const plain = await api.call('POST', `/openai/${chat.id}/chat/completions`, { model: 'model', messages: [{ role: 'user', content: 'How long to knead?' }], stream: false });
    expect(plain.body).toEqual(expect.objectContaining({ id: `chatcmpl-${chat.id}`, object: 'chat.completion', choices: [expect.objectContaining({ finish_reason: 'stop', message: expect.objectContaining({ role: 'assistant' }) })] }));
    expect(plain.body.code).toBeUndefined();
  });

  test('errors: validate_request (data null), ownership, last message; failure mid-stream is an **ERROR** chunk then [DONE]', async ({ serve }) => {
    const srv = await serve({ models: loop() });
    const api = http(srv);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [], llm_id: 'loop@OpenAI-API-Compatible' })).body.data;
    const url = `/openai/${chat.id}/chat/completions`;
    expect((await api.call('POST', url, { messages: [] })).body).toEqual({ code: 101, message: 'required argument are missing: model; ', data: null });
    expect((await api.call('POST', url, undefined, { raw: 'nope', headers: { 'content-type': 'application/json' } })).body).toEqual({ code: 101, message: 'required argument are missing: model,messages; ', data: null });
    expect((await api.call('POST', url, { model: 'model', messages: [{ role: 'assistant', content: 'x' }] })).body).toEqual({ code: 102, message: 'The last content of this conversation is not from user.' });
    expect((await api.call('POST', '/openai/nope/chat/completions', { model: 'model', messages: [{ role: 'user', content: 'x' }] })).body).toEqual({ code: 102, message: "You don't own the chat nope" });
    expect((await api.call('POST', url, { model: 'gpt-9@Nowhere', messages: [{ role: 'user', content: 'x' }] })).body).toEqual({ code: 101, message: '`llm_id` gpt-9@Nowhere doesn\'t exist' });

    model.script({ status: 400, body: { error: { message: 'context too long', type: 'invalid_request_error' } } });
    const res = await fetch(`${api.base}${url}`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model', messages: [{ role: 'user', content: 'hello' }], stream: true }),
    });
    const events = await sseEvents(res);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((s) => JSON.parse(s));
    expect(chunks.at(-2).choices[0].delta.content).toMatch(/^\*\*ERROR\*\*: .*context too long/);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  test('the client going away mid-stream stops the model call', async ({ serve }) => {
    model.reset();
    const srv = await serve({ models: loop() });
    const api = http(srv);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [], llm_id: 'loop@OpenAI-API-Compatible' })).body.data;
    model.script({ deltas: Array.from({ length: 200 }, (_, i) => `word${i} `), delayMs: 50 });
    const ctl = new AbortController();
    const res = await fetch(`${api.base}/openai/${chat.id}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model', messages: [{ role: 'user', content: 'go on' }], stream: true }), signal: ctl.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    ctl.abort();
    await reader.cancel().catch(() => undefined);
    const upstream = model.requests.at(-1)!;
    await upstream.closed;
    expect(upstream.clientClosed).toBe(true);
  });
});

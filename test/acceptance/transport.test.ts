/**
 * What each way in does around the operations: construction, close(), partial-success messages;
 * and for the remote Client its transport: authentication failures, a server that cannot be
 * reached, answers that are not RAGFlow envelopes, and RAGFlow's two event streams.
 *
 * The wire edge cases (a proxy's 502 page, events split across writes, an error inside an OpenAI
 * stream) are served by a loopback stand-in speaking RAGFlow's wire format; everything else by
 * `startServer`.
 */
import { describe, expect, beforeAll, afterAll, test as plain } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, ApiError } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { MODES, acceptance, failure, caught, NOT_AN_ID } from './modes.js';

const RESULT_MESSAGE = Symbol.for('ragloom.resultMessage');
/** The transport under a Client (the operation layer as resource objects reach it). */
const transportOf = (c: Client) => (c as unknown as { t: { call(op: string, p?: Record<string, unknown>): Promise<unknown> } }).t;

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  test('Client#close(): later calls reject with 103 "The client is closed."', async ({ dir, client }) => {
    await client.createDataset({ name: 'kb' });
    await client.close();
    expect(await failure(client.listDatasets())).toEqual([103, 'The client is closed.']);
    await client.close(); // twice is fine
    // The database (and, remotely, the server) is still there for a new client.
    if (mode === 'local') {
      const again = new Client({ path: join(dir, 'kb.db') });
      expect((await again.listDatasets()).map((d) => d.name)).toEqual(['kb']);
      await again.close();
    }
  });

  test('a partial delete keeps RAGFlow\'s message as Symbol.for("ragloom.resultMessage")', async ({ client }) => {
    const chat = await client.createChat({ name: 'c' });
    const r = (await transportOf(client).call('chats.delete', { ids: [chat.id, NOT_AN_ID] })) as Record<PropertyKey, unknown>;
    expect(r).toEqual({ success_count: 1, errors: [`Chat(${NOT_AN_ID}) not found.`] });
    expect(r[RESULT_MESSAGE]).toBe('Partially deleted 1 chats with 1 errors');
    expect(Object.keys(r)).toEqual(['success_count', 'errors']); // not enumerable
    const s = await (await client.createChat({ name: 'd' })).createSession();
    const r2 = (await transportOf(client).call('sessions.delete', { chat_id: s.chat_id, ids: [s.id, NOT_AN_ID] })) as Record<PropertyKey, unknown>;
    expect(r2[RESULT_MESSAGE]).toBe('Partially deleted 1 sessions with 1 errors');
    // A full success carries none.
    const c3 = await client.createChat({ name: 'e' });
    expect(((await transportOf(client).call('chats.delete', { ids: [c3.id] })) as Record<PropertyKey, unknown>)[RESULT_MESSAGE]).toBeUndefined();
  });
});

describe('new Client()', () => {
  plain('options: TypeErrors that say what to do', () => {
    const bad = (o: unknown) => () => new Client(o as never);
    expect(bad({ path: ':memory:', baseUrl: 'http://127.0.0.1:9380', apiKey: 'k' })).toThrow(new TypeError('Pass either "path" (the embedded engine) or "baseUrl" (a server), not both'));
    for (const k of ['models', 'default_chat_model', 'default_embedding_model']) {
      expect(bad({ baseUrl: 'http://127.0.0.1:9380', apiKey: 'k', [k]: k === 'models' ? [] : 'x@Builtin' })).toThrow(
        new TypeError(`"${k}" is the server's configuration in remote mode (startServer({ ${k} }) / ragloom serve); a remote Client cannot set it`),
      );
    }
    expect(bad({ baseUrl: 'http://127.0.0.1:9380' })).toThrow(/Remote mode needs "apiKey"/);
    expect(bad({ baseUrl: 'http://127.0.0.1:9380', apiKey: ' ' })).toThrow(/Remote mode needs "apiKey"/);
    expect(bad({ path: ':memory:', apiKey: 'k' })).toThrow(new TypeError('"apiKey" goes with "baseUrl" (remote mode); the embedded engine ({ path }) needs no key'));
    expect(bad({ baseUrl: 'localhost:9380', apiKey: 'k' })).toThrow(/must be an http:\/\/ or https:\/\/ URL/);
    expect(bad({ baseUrl: 'not a url', apiKey: 'k' })).toThrow(/"baseUrl" is not a URL/);
    expect(bad({ baseURL: 'http://127.0.0.1:9380', apiKey: 'k' })).toThrow('Unknown option "baseURL"; did you mean "baseUrl"?');
  });

  plain('remote mode: registerModel() and waitForMemoryTasks() say they are local only', async () => {
    const c = new Client({ baseUrl: 'http://127.0.0.1:9', apiKey: 'ragflow-x' });
    expect(() => c.registerModel({ type: 'chat', name: 'm', factory: 'OpenAI-API-Compatible', base_url: 'http://x/v1' } as never)).toThrow(
      new TypeError("registerModel() is not available in remote mode: models are the server's configuration (startServer({ models }) / ragloom serve)"),
    );
    await expect(c.waitForMemoryTasks()).rejects.toThrow(TypeError);
    await c.close();
  });
});

describe('remote mode: the transport', () => {
  const test = acceptance('remote');

  test('a wrong API key: the 401 bodies of login_required and token_required', async ({ dir }) => {
    const srv = await startServer({ path: join(dir, 'srv.db'), port: 0 });
    try {
      const good = new Client({ baseUrl: srv.url, apiKey: srv.apiKey });
      const ds = await good.createDataset({ name: 'kb' });
      const bad = new Client({ baseUrl: srv.url, apiKey: 'ragflow-not-a-key' });
      expect(await failure(bad.listDatasets())).toEqual([401, "<Unauthorized '401: Unauthorized'>"]);
      // retrieval is a token_required route (reference §1).
      expect(await failure(bad.retrieve({ question: 'q', dataset_ids: [ds.id] }))).toEqual([109, 'Authentication error: API key is invalid!']);
      // A baseUrl with the REST prefix and a trailing slash is the same server.
      const prefixed = new Client({ baseUrl: `${srv.url}/api/v1/`, apiKey: srv.apiKey });
      expect((await prefixed.listDatasets()).map((d) => d.id)).toEqual([ds.id]);
      // close() of a remote client does not stop the server.
      await good.close();
      expect((await prefixed.listDatasets()).length).toBe(1);
    } finally {
      await srv.close();
    }
  });

  plain('a server that cannot be reached: 105 CONNECTION_ERROR naming the URL', async () => {
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((ok) => probe.close(() => ok())); // a port nobody listens on
    const c = new Client({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'ragflow-x' });
    const e = await caught(c.listDatasets({ page: 2 }));
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe(105);
    expect(e.message).toBe(`Connection error: GET http://127.0.0.1:${port}/api/v1/datasets?page=2 failed (ECONNREFUSED)`);
    expect(e.cause).toBeInstanceOf(Error);
  });

  describe('answers that are not what RAGFlow sends, and its event streams', () => {
    let stub: Server;
    let url: string;
    let handler: (req: IncomingMessage, res: ServerResponse, body: string) => void;
    beforeAll(async () => {
      stub = createServer((req, res) => {
        let body = '';
        req.on('data', (d: Buffer) => (body += d.toString('utf8')));
        req.on('end', () => handler(req, res, body));
      });
      await new Promise<void>((ok) => stub.listen(0, '127.0.0.1', ok));
      url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((ok) => stub.close(() => ok())));
    const client = () => new Client({ baseUrl: url, apiKey: 'ragflow-stub' });
    const sse = (res: ServerResponse, parts: string[], gapMs = 2) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      let i = 0;
      const next = () => (i < parts.length ? (res.write(parts[i++]), setTimeout(next, gapMs)) : res.end());
      next();
    };
    const chatId = 'a'.repeat(32);

    plain('the request: method, path, query, bearer key and JSON body from the route table', async () => {
      const seen: Array<{ method?: string; url?: string; auth?: string; type?: string; body: string }> = [];
      handler = (req, res, body) => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ code: 0, data: [], total_datasets: 0 }));
      };
      const c = client();
      await c.listDatasets({ page: 2, desc: false, name: 'a b' });
      handler = (req, res, body) => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body });
        res.end(JSON.stringify({ code: 0, data: { success_count: 1 } }));
      };
      await c.deleteDatasets({ ids: ['x'] });
      expect(seen).toEqual([
        { method: 'GET', url: '/api/v1/datasets?page=2&desc=false&name=a+b', auth: 'Bearer ragflow-stub', type: undefined, body: '' },
        { method: 'DELETE', url: '/api/v1/datasets', auth: 'Bearer ragflow-stub', type: 'application/json', body: '{"ids":["x"],"delete_all":false}' },
      ]);
    });

    plain('not an envelope: HTML with 200 is 100, a 502 page is the HTTP status, a 401 with code 0 is 401', async () => {
      const c = client();
      handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>');
      expect(await failure(c.listChats())).toEqual([100, `Unexpected response from GET ${url}/api/v1/chats?page=1&page_size=30&orderby=create_time&desc=true (HTTP 200, not JSON): <html><body>Welcome to nginx!</body></html>`]);
      handler = (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
      expect(await failure(c.getChat(chatId))).toEqual([502, `HTTP 502 Bad Gateway from GET ${url}/api/v1/chats/${chatId}: <h1>Bad Gateway</h1>`]);
      handler = (_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":0,"message":"`Authorization` can\'t be empty","data":null}');
      expect(await failure(c.retrieve({ question: 'q', dataset_ids: ['x'] }))).toEqual([401, "`Authorization` can't be empty"]);
      handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":102,"message":"Bad thing.","data":{"error_code":7}}');
      const e = await caught(c.listChats());
      expect([e.code, e.message, e.data]).toEqual([102, 'Bad thing.', { error_code: 7 }]);
    });

    plain('the native stream: events split across writes, CRLF, "data: " with a space; an error event throws; a cut stream is 105', async () => {
      const c = client();
      const ans = (answer: string, final = false) => JSON.stringify({ code: 0, message: '', data: { answer, reference: final ? { chunks: [] } : {}, id: 'm', session_id: 's', final } });
      const t = transportOf(c);
      handler = (_req, res) => sse(res, [`data:${ans('Hel')}\n\n`, `data: ${ans('lo').slice(0, 10)}`, `${ans('lo').slice(10)}\r\n\r\n`, `data:${ans('Hello', true)}\n\ndata:{"code":0,"message":"","data":true}\n\n`]);
      const got: unknown[] = [];
      for await (const a of (await t.call('chats.completion', { chat_id: chatId, question: 'q', stream: true })) as AsyncIterable<{ answer: string }>) got.push(a.answer);
      expect(got).toEqual(['Hel', 'lo', 'Hello']);

      handler = (_req, res) => sse(res, [`data:${ans('Hel')}\n\n`, 'data:{"code":500,"message":"Chat model m@X: HTTP 500","data":{"answer":"**ERROR**: Chat model m@X: HTTP 500","reference":[]}}\n\n', 'data:{"code":0,"message":"","data":true}\n\n']);
      const it = (await t.call('chats.completion', { chat_id: chatId, question: 'q', stream: true })) as AsyncIterable<unknown>;
      const e = await caught(async () => {
        for await (const _ of it) void _;
      });
      expect([e.code, e.message]).toEqual([500, 'Chat model m@X: HTTP 500']);

      handler = (_req, res) => sse(res, [`data:${ans('Hel')}\n\n`]);
      const cut = await caught(async () => {
        for await (const _ of (await t.call('chats.completion', { chat_id: chatId, question: 'q', stream: true })) as AsyncIterable<unknown>) void _;
      });
      expect(cut.code).toBe(105);
      expect(cut.message).toBe(`Connection error: the event stream of POST ${url}/api/v1/chats/${chatId}/completions ended before its end marker`);

      // Events already received are not handed out after an abort, nor after close().
      const all = [`data:${ans('a')}\n\ndata:${ans('b')}\n\ndata:${ans('ab', true)}\n\ndata:{"code":0,"message":"","data":true}\n\n`];
      handler = (_req, res) => sse(res, all);
      const ac = new AbortController();
      const first: unknown[] = [];
      const aborted = await caught(async () => {
        for await (const a of (await t.call('chats.completion', { chat_id: chatId, question: 'q', stream: true, signal: ac.signal })) as AsyncIterable<unknown>) {
          first.push(a);
          ac.abort();
        }
      });
      expect([first.length, aborted.code, aborted.message]).toEqual([1, 100, `The request was aborted: POST ${url}/api/v1/chats/${chatId}/completions`]);
      const closed = await caught(async () => {
        for await (const _ of (await t.call('chats.completion', { chat_id: chatId, question: 'q', stream: true })) as AsyncIterable<unknown>) await c.close();
      });
      expect([closed.code, closed.message]).toEqual([103, 'The client is closed.']);
    });

    plain('the OpenAI stream: ends at [DONE]; an **ERROR** chunk followed by a bare stop chunk throws 500', async () => {
      const c = client();
      const chunk = (content: string | null, finish: string | null, usage: unknown = null) => `data:${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant', content }, finish_reason: finish, index: 0 }], usage })}\n\n`;
      handler = (_req, res) => sse(res, [chunk('Hi', null), chunk('**ERROR**: is just text', null), chunk(null, 'stop', { total_tokens: 3 }), 'data:[DONE]\n\n']);
      const ok = [];
      for await (const x of await c.chatCompletion(chatId, { model: 'model', messages: [{ role: 'user', content: 'q' }], stream: true })) ok.push((x as { choices: Array<{ delta: { content: string | null } }> }).choices[0]!.delta.content);
      // An **ERROR** chunk followed by a stop chunk *with* usage is an answer like any other.
      expect(ok).toEqual(['Hi', '**ERROR**: is just text', null]);

      handler = (_req, res) => sse(res, [chunk('Hi', null), chunk('**ERROR**: Chat model m@X: timed out', null), chunk(null, 'stop'), 'data:[DONE]\n\n']);
      const seen: unknown[] = [];
      const e = await caught(async () => {
        for await (const x of await c.chatCompletion(chatId, { model: 'model', messages: [{ role: 'user', content: 'q' }], stream: true })) seen.push(x);
      });
      expect(seen).toHaveLength(1);
      expect([e.code, e.message]).toEqual([500, 'Chat model m@X: timed out']);
    });
  });
});

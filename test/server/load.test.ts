/**
 * `ragloom serve` under load and abuse, on loopback, bounded in count and time (< 40 s):
 *
 * - 10 writers and 16 readers at once, a fixed number of requests each: no request fails, no
 *   `SQLITE_BUSY` / `database is locked` reaches a client, every write is there afterwards,
 *   `PRAGMA integrity_check` is ok;
 * - a second OS process (test/server/fixtures/writer.mjs) writing to the same file while the
 *   server writes too: nothing lost on either side, and each side sees the other's rows;
 * - robustness: bodies over the limits, malformed JSON and wrong types on every JSON route,
 *   unknown routes and odd URLs, clients that go away mid-upload / mid-stream or stall, and
 *   many idle connections at close().
 */
import { describe, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { test, http, upload, waitParsed, parsedDataset, sseEvents, DOCS, type Http, type Reply } from './fixtures.js';
import { ROUTES } from '../../src/api/routes.js';

/** The file passes SQLite's integrity check (opened read-only, after the server closed it). */
function expectIntact(path: string): void {
  const db = new Database(path, { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
}

const HERE = dirname(fileURLToPath(import.meta.url));
const LOCKED = /SQLITE_BUSY|database is locked/i;
const MEMORY = { memory_type: ['raw'], embd_id: 'ragloom-static-en-256@Builtin', llm_id: 'ragloom-extractive@Builtin' };

/** Every request of a load run: what failed (HTTP status, envelope code or a transport error) and whether a lock error leaked. */
class Tally {
  sent = 0;
  readonly failures: string[] = [];
  readonly locked: string[] = [];

  constructor(private readonly api: Http) {}

  /** A request that must succeed with `code: 0`; its body (or undefined after a failure). */
  async ok(method: string, path: string, body?: unknown): Promise<Reply['body'] | undefined> {
    this.sent++;
    let r: Reply;
    try {
      r = await this.api.call(method, path, body);
    } catch (e) {
      this.failures.push(`${method} ${path}: ${(e as Error).message} ${String((e as { cause?: unknown }).cause ?? '')}`);
      return undefined;
    }
    return this.check(`${method} ${path}`, r);
  }

  /** A streamed native completion that must end with `data:true` and carry no error event. */
  async stream(path: string, body: unknown): Promise<void> {
    this.sent++;
    try {
      const res = await fetch(this.api.base + path, {
        method: 'POST', headers: { authorization: `Bearer ${this.api.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      const text = await res.text();
      if (LOCKED.test(text)) this.locked.push(`stream ${path}: ${text.slice(0, 200)}`);
      const events = text.split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^data:/, '')) as { code: number; data: unknown });
      if (res.status !== 200 || events.at(-1)?.data !== true || events.some((e) => e.code !== 0)) this.failures.push(`stream ${path}: HTTP ${res.status} ${text.slice(-300)}`);
    } catch (e) {
      this.failures.push(`stream ${path}: ${(e as Error).message}`);
    }
  }

  check(what: string, r: { status: number; body: Reply['body']; text: string }): Reply['body'] | undefined {
    if (LOCKED.test(r.text)) this.locked.push(`${what}: ${r.text.slice(0, 200)}`);
    if (r.status !== 200 || typeof r.body !== 'object' || r.body === null || r.body.code !== 0) {
      this.failures.push(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      return undefined;
    }
    return r.body;
  }
}

const times = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('concurrent writers and readers', () => {
  test('10 writers + 16 readers: nothing fails, nothing locked, every write is there, integrity ok', async ({ dir, srv, api }) => {
    const t = new Tally(api);
    // A parsed dataset the readers search and the chunk writers add to; a chat on it; a memory.
    const { datasetId: kb, docIds } = await parsedDataset(api);
    const doc = docIds[0]!;
    const baseChunks = (await api.call('GET', `/datasets/${kb}/documents/${doc}/chunks?page_size=1`)).body.data.total as number;
    const chat = (await api.call('POST', '/chats', { name: 'load', dataset_ids: [kb] })).body.data;
    const shared = (await api.call('POST', `/chats/${chat.id}/sessions`, { name: 'shared' })).body.data;
    const mem = (await api.call('POST', '/memories', { name: 'load', ...MEMORY })).body.data;
    const inbox = (await api.call('POST', '/datasets', { name: 'inbox' })).body.data.id as string;

    const UPLOADS = 4, CHUNKS = 30, ASKS = 3, MESSAGES = 30, DATASETS = 6, READS = 25;
    const uploaded: string[] = [];
    const chunkIds: string[] = [];
    const sessions: string[] = [];
    const made: string[] = [];

    const writers: Array<() => Promise<void>> = [
      // 2 uploaders: one file per request, then parse it (the parse runs in the background).
      ...times(2).map((w) => async () => {
        for (const i of times(UPLOADS)) {
          const body = `# Note ${w}-${i}\n\nHarbour ${w} log ${i}: the tide rose past the ${['north', 'south', 'east', 'west'][i]} mole at dawn.`;
          let r: Reply;
          try {
            r = await upload(api, inbox, { [`note-${w}-${i}.md`]: body });
          } catch (e) {
            t.failures.push(`upload: ${(e as Error).message}`);
            continue;
          }
          t.sent++;
          const ok = t.check('upload', r);
          if (!ok) continue;
          const id = ok.data[0].id as string;
          uploaded.push(id);
          await t.ok('POST', `/datasets/${inbox}/chunks`, { document_ids: [id] });
        }
      }),
      // 2 chunk writers on the same document.
      ...times(2).map((w) => async () => {
        for (const i of times(CHUNKS)) {
          const r = await t.ok('POST', `/datasets/${kb}/documents/${doc}/chunks`, { content: `Writer ${w} chunk ${i}: moon tides and bread dough ${w * 1000 + i}.` });
          if (r) chunkIds.push(r.data.chunk.id);
        }
      }),
      // 2 chat writers: a session each, asked in turn (built-in model); plus asks on one shared session.
      ...times(2).map((w) => async () => {
        const s = await t.ok('POST', `/chats/${chat.id}/sessions`, { name: `s${w}` });
        if (!s) return;
        sessions.push(s.data.id);
        for (const i of times(ASKS)) {
          await t.ok('POST', `/chats/${chat.id}/completions`, { question: i % 2 ? 'How long should the dough rise?' : 'Why are there spring tides?', stream: false, session_id: s.data.id });
          await t.ok('POST', `/chats/${chat.id}/completions`, { question: `shared question ${w}-${i} about tides`, stream: false, session_id: shared.id });
        }
        await t.stream(`/chats/${chat.id}/completions`, { question: 'How long to knead the dough?', stream: true, session_id: s.data.id });
      }),
      // 2 memory writers.
      ...times(2).map((w) => async () => {
        for (const i of times(MESSAGES)) {
          await t.ok('POST', '/messages', { memory_id: [mem.id], agent_id: `agent-${w}`, session_id: `s-${w}`, user_id: '', user_input: `I like tea number ${i}.`, agent_response: `Noted tea ${w}-${i}.` });
        }
      }),
      // 2 dataset writers: create, then rename.
      ...times(2).map((w) => async () => {
        for (const i of times(DATASETS)) {
          const r = await t.ok('POST', '/datasets', { name: `made-${w}-${i}` });
          if (!r) continue;
          made.push(r.data.id);
          await t.ok('PUT', `/datasets/${r.data.id}`, { name: `made-${w}-${i}-renamed` });
        }
      }),
    ];

    const reads: Array<() => Promise<unknown>> = [
      () => t.ok('POST', '/retrieval', { question: 'moon tides', dataset_ids: [kb], similarity_threshold: 0, page_size: 10 }),
      () => t.ok('GET', '/datasets?page=1&page_size=30'),
      () => t.ok('GET', `/datasets/${inbox}/documents?page_size=50`),
      () => t.ok('GET', `/datasets/${kb}/documents/${doc}/chunks?page_size=30&keywords=tides`),
      () => t.ok('GET', '/chats'),
      () => t.ok('GET', `/chats/${chat.id}/sessions?page_size=10`),
      () => t.ok('GET', `/messages/search?memory_id=${mem.id}&query=tea&similarity_threshold=0&top_n=5`),
      () => t.ok('GET', `/memories/${mem.id}?page_size=20`),
      () => t.ok('GET', `/messages?memory_id=${mem.id}&limit=5`),
    ];
    const readers = times(16).map((r) => async () => {
      for (const i of times(READS)) await reads[(r + i) % reads.length]!();
    });

    const t0 = performance.now();
    await Promise.all([...writers, ...readers].map((f) => f()));
    const elapsed = performance.now() - t0;

    expect(t.locked).toEqual([]);
    expect(t.failures).toEqual([]);
    expect(t.sent).toBeGreaterThan(16 * READS + 2 * (CHUNKS + MESSAGES));
    console.info(`load: ${t.sent} requests in ${(elapsed / 1000).toFixed(1)} s (${((t.sent * 1000) / elapsed).toFixed(0)} req/s)`);

    // Every write is there.
    expect(uploaded).toHaveLength(2 * UPLOADS);
    await waitParsed(api, inbox, uploaded, 30_000);
    const inboxDocs = (await api.call('GET', `/datasets/${inbox}/documents?page_size=100`)).body.data;
    expect(inboxDocs.total).toBe(2 * UPLOADS);
    expect(inboxDocs.docs.every((d: { chunk_count: number }) => d.chunk_count > 0)).toBe(true);

    expect(chunkIds).toHaveLength(2 * CHUNKS);
    expect(new Set(chunkIds).size).toBe(2 * CHUNKS);
    const chunks = (await api.call('GET', `/datasets/${kb}/documents/${doc}/chunks?page_size=1000`)).body.data;
    expect(chunks.total).toBe(baseChunks + 2 * CHUNKS);
    const present = new Set(chunks.chunks.map((c: { id: string }) => c.id));
    expect(chunkIds.filter((id) => !present.has(id))).toEqual([]);

    expect(sessions).toHaveLength(2);
    for (const s of sessions) {
      const got = (await api.call('GET', `/chats/${chat.id}/sessions?id=${s}`)).body.data[0];
      expect(got.messages).toHaveLength(1 + 2 * (ASKS + 1));
    }
    const sharedGot = (await api.call('GET', `/chats/${chat.id}/sessions?id=${shared.id}`)).body.data[0];
    expect(sharedGot.messages).toHaveLength(1 + 2 * 2 * ASKS);

    const msgs = (await api.call('GET', `/memories/${mem.id}?page_size=1000`)).body.data.messages;
    expect(msgs.total_count).toBe(2 * MESSAGES);

    expect(made).toHaveLength(2 * DATASETS);
    const listed = new Map<string, string>((await api.call('GET', '/datasets?page_size=100')).body.data.map((d: { id: string; name: string }) => [d.id, d.name]));
    expect(made.map((id) => listed.get(id)).sort()).toEqual(times(2).flatMap((w) => times(DATASETS).map((i) => `made-${w}-${i}-renamed`)).sort());

    await srv.close();
    const db = new Database(join(dir, 'kb.db'));
    try {
      sqliteVec.load(db);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
      // The FTS5 indexes agree with their tables.
      db.prepare("INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('integrity-check', 0)").run();
      db.prepare("INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 0)").run();
    } finally {
      db.close();
    }
  });
});

interface WriterResult { chunks: string[]; messages: number; datasets: string[]; errors: string[] }

/** Runs test/server/fixtures/writer.mjs in its own process (`node --import tsx`). */
function runWriter(env: Record<string, string>): Promise<{ code: number | null; out: WriterResult | undefined; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'fixtures', 'writer.mjs')], {
      env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      let out: WriterResult | undefined;
      try {
        out = JSON.parse(line) as WriterResult;
      } catch {
        /* reported by the caller */
      }
      resolve({ code, out, stderr });
    });
  });
}

describe('a second process writing to the same database', () => {
  test('server and another engine write at once: nothing lost on either side; each sees the other', async ({ dir, srv, api }) => {
    const { datasetId: kb, docIds } = await parsedDataset(api);
    const doc = docIds[0]!;
    const base = (await api.call('GET', `/datasets/${kb}/documents/${doc}/chunks?page_size=1`)).body.data.total as number;
    const mem = (await api.call('POST', '/memories', { name: 'shared', ...MEMORY })).body.data;
    const N = 40;

    const child = runWriter({
      RAGLOOM_DB: join(dir, 'kb.db'), RAGLOOM_DATASET: kb, RAGLOOM_DOCUMENT: doc, RAGLOOM_MEMORY: mem.id, RAGLOOM_COUNT: String(N), RAGLOOM_TAG: 'child',
    });

    // Meanwhile the server writes the same kinds of rows, and reads.
    const t = new Tally(api);
    const serverChunks: string[] = [];
    const serverDatasets: string[] = [];
    await Promise.all([
      (async () => {
        for (const i of times(N)) {
          const r = await t.ok('POST', `/datasets/${kb}/documents/${doc}/chunks`, { content: `server chunk ${i}: the keeper trims the lamp wick.` });
          if (r) serverChunks.push(r.data.chunk.id);
        }
      })(),
      (async () => {
        for (const i of times(N)) {
          await t.ok('POST', '/messages', { memory_id: [mem.id], agent_id: 'server', session_id: 'server-s', user_id: '', user_input: `server question ${i}`, agent_response: `server answer ${i}` });
          if (i % 10 === 0) {
            const r = await t.ok('POST', '/datasets', { name: `server-ds-${i}` });
            if (r) serverDatasets.push(r.data.id);
          }
        }
      })(),
      (async () => {
        for (const i of times(N)) {
          await t.ok('POST', '/retrieval', { question: i % 2 ? 'lighthouses harbour' : 'moon tides', dataset_ids: [kb], similarity_threshold: 0, page_size: 5 });
        }
      })(),
    ]);
    const { code, out, stderr } = await child;

    // A lock error here means a transaction that read before it wrote could not wait for the
    // other process's write lock (a deferred BEGIN gets SQLITE_BUSY at once, busy_timeout or not).
    expect(t.locked, 'SQLITE_BUSY reached an HTTP client').toEqual([]);
    expect(t.failures).toEqual([]);
    expect(code, stderr).toBe(0);
    expect(out, stderr).toBeDefined();
    expect(out!.errors, 'a write of the second process failed').toEqual([]);
    expect(out!.chunks).toHaveLength(N);
    expect(out!.messages).toBe(N);

    // Nothing lost on either side, and the server sees the child's rows (its caches follow the file).
    const chunks = (await api.call('GET', `/datasets/${kb}/documents/${doc}/chunks?page_size=1000`)).body.data;
    expect(chunks.total).toBe(base + 2 * N);
    const ids = new Set(chunks.chunks.map((c: { id: string }) => c.id));
    expect([...serverChunks, ...out!.chunks].filter((id) => !ids.has(id))).toEqual([]);
    expect((await api.call('GET', `/memories/${mem.id}?page_size=1000`)).body.data.messages.total_count).toBe(2 * N);
    const datasets = (await api.call('GET', '/datasets?page_size=100')).body.data.map((d: { id: string }) => d.id);
    for (const id of [...serverDatasets, ...out!.datasets]) expect(datasets).toContain(id);
    const found = await api.call('POST', '/retrieval', { question: 'lighthouses harbour walls', dataset_ids: [kb], document_ids: [doc], similarity_threshold: 0, page_size: 100 });
    expect(found.body.data.chunks.filter((c: { id: string }) => out!.chunks.includes(c.id)).length).toBeGreaterThan(0);
    const search = await api.call('GET', `/messages/search?memory_id=${mem.id}&query=child%20question&similarity_threshold=0&top_n=5`);
    expect(search.body.data.length).toBeGreaterThan(0);

    await srv.close();
    expectIntact(join(dir, 'kb.db'));
  });
});

// ------------------------------------------------------------------------------------------ robustness

const port = (srv: { url: string }) => Number(new URL(srv.url).port);

/** A raw TCP connection to the server (errors ignored: the server may cut it). */
function socket(srv: { url: string }): Promise<Socket> {
  return new Promise((ok, no) => {
    const s = connect(port(srv), '127.0.0.1', () => ok(s));
    s.on('error', () => undefined);
    s.once('error', no);
  });
}
const closedSocket = (s: Socket) => new Promise<void>((ok) => (s.closed ? ok() : s.once('close', () => ok())));
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** The head of a multipart upload announcing `length` bytes, up to the start of the file's bytes. */
function uploadHead(srv: { apiKey: string }, datasetId: string, name: string, length: number): string {
  return `POST /api/v1/datasets/${datasetId}/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${srv.apiKey}\r\n` +
    `Content-Type: multipart/form-data; boundary=BOUNDARY\r\nContent-Length: ${length}\r\n\r\n` +
    `--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`;
}

const TOO_LARGE = { code: 100, message: "<RequestEntityTooLarge '413: Request Entity Too Large'>", data: null };

describe('limits', () => {
  test('over bodyLimit / uploadLimit / uploadFiles / uploadTotalLimit → HTTP 413 on every kind of route; nothing stored; the server goes on', async ({ serve }) => {
    const srv = await serve({ bodyLimit: 4096, uploadLimit: 2000, uploadFiles: 2, uploadTotalLimit: 3000 });
    const api = http(srv);
    const ds = (await api.call('POST', '/datasets', { name: 'limits' })).body.data.id;
    const big = 'x'.repeat(10_000);
    const cases: Array<[string, string, string, string]> = [
      ['POST', '/retrieval', 'application/json', JSON.stringify({ question: big, dataset_ids: [ds] })], // token_required
      ['POST', '/datasets', 'application/json', JSON.stringify({ name: big })], // json-strict
      ['PUT', `/datasets/${ds}`, 'application/json', JSON.stringify({ description: big })],
      ['POST', '/chats', 'application/x-www-form-urlencoded', `name=${big}`], // a form body
      ['POST', '/messages', 'text/plain', big], // validates + not JSON
    ];
    for (const [method, path, type, body] of cases) {
      const r = await api.call(method, path, undefined, { raw: body, headers: { 'content-type': type } });
      expect(r.status, `${method} ${path}`).toBe(413);
      expect(r.body).toEqual(TOO_LARGE);
      // The same body without a Content-Length (chunked).
      const stream = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(body)), c.close()) });
      const res = await fetch(api.base + path, { method, headers: { authorization: `Bearer ${api.key}`, 'content-type': type }, body: stream, duplex: 'half' } as RequestInit);
      expect(res.status, `${method} ${path} chunked`).toBe(413);
      expect(await res.json()).toEqual(TOO_LARGE);
    }
    // Uploads: one file too many, or one of two files too large → 413 and neither file is stored.
    const tooMany: Record<string, string | Uint8Array>[] = [
      { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' },
      { 'small.txt': 'small', 'large.txt': new Uint8Array(5000).fill(65) },
      // Each file within uploadLimit, together over uploadTotalLimit.
      { 'one.txt': new Uint8Array(1600).fill(67), 'two.txt': new Uint8Array(1600).fill(68) },
    ];
    for (const files of tooMany) {
      const r = await upload(api, ds, files);
      expect(r.status).toBe(413);
      expect(r.body).toEqual(TOO_LARGE);
    }
    expect((await api.call('GET', `/datasets/${ds}/documents`)).body.data.total).toBe(0);
    expect((await api.call('GET', '/datasets')).body.total_datasets).toBe(1);
    // Right at the limits, everything works.
    expect((await upload(api, ds, { 'a.txt': new Uint8Array(2000).fill(66), 'b.txt': 'b' })).body.code).toBe(0);
    expect((await api.call('POST', '/datasets', { name: 'y'.repeat(100) })).body.code).toBe(0);
  });
});

describe('malformed and mistyped requests', () => {
  /** Real ids for every path param, so each request reaches its operation's own checks. */
  async function fixtures(api: Http): Promise<Record<string, string>> {
    // Uploaded, not parsed (parsing is not what these requests exercise); one chunk added by hand.
    const datasetId = (await api.call('POST', '/datasets', { name: 'science' })).body.data.id as string;
    const docIds = (await upload(api, datasetId, DOCS)).body.data.map((d: { id: string }) => d.id) as string[];
    const chunk = (await api.call('POST', `/datasets/${datasetId}/documents/${docIds[0]}/chunks`, { content: 'Neap tides are weak.' })).body.data.chunk.id;
    const chat = (await api.call('POST', '/chats', { name: 'fuzz', dataset_ids: [datasetId] })).body.data.id;
    const session = (await api.call('POST', `/chats/${chat}/sessions`, { name: 'fuzz' })).body.data.id;
    const memory = (await api.call('POST', '/memories', { name: 'fuzz', ...MEMORY })).body.data.id;
    await api.call('POST', '/messages', { memory_id: [memory], agent_id: 'a', session_id: 's', user_input: 'tea', agent_response: 'ok' });
    const message = String((await api.call('GET', `/messages?memory_id=${memory}`)).body.data[0].message_id);
    const user = (await api.call('POST', '/users', { email: 'fuzz@example.com', nickname: 'Fuzz' })).body.data;
    const agent = (await api.call('POST', '/agents', { title: 'fuzz', dsl: AGENT_DSL })).body.data.id as string;
    const search = (await api.call('POST', '/searches', { name: 'fuzz', search_config: { kb_ids: [datasetId] } })).body.data.search_id as string;
    return {
      dataset_id: datasetId, document_id: docIds[0]!, chunk_id: chunk, chat_id: chat, session_id: session, memory_id: memory, message_id: message, tenant_id: user.tenant_id,
      agent_id: agent, search_id: search, task_id: 'f'.repeat(32),
    };
  }
  const AGENT_DSL = {
    components: {
      begin: { obj: { component_name: 'Begin', params: {} }, downstream: ['Message:M'], upstream: [] },
      'Message:M': { obj: { component_name: 'Message', params: { content: ['echo {sys.query}'] } }, downstream: [], upstream: ['begin'] },
    },
  };
  const fill = (path: string, ids: Record<string, string>) => path.replace(/:([A-Za-z_]+)/g, (_m, k: string) => ids[k]!);
  const JSON_ROUTES = ROUTES.filter((r) => r.body === 'json' || r.body === 'json-strict' || r.body === 'json-args');
  // What must never reach a client: a SQLite error, a JavaScript internal, a stack trace. (A
  // Python-like `TypeError("'int' object is not iterable")` is RAGFlow's own answer to a malformed
  // metadata_condition.)
  const LEAK = /SqliteError|SQLITE_|Cannot read propert|is not a function|(?<!' object )is not iterable|is not defined|\n\s+at \S+ \(/;

  /** Why an answer is not a well-formed RAGFlow answer (or undefined when it is). */
  function malformedAnswer(res: { status: number; text: string; type: string }, envelope: string, errorStatus?: 'code'): string | undefined {
    // `errorStatus: 'code'` routes (Dify's retrieval) send a failure with its code as the HTTP status.
    if (res.status !== 200 && !(errorStatus === 'code' && [400, 403, 404, 500].includes(res.status))) return `HTTP ${res.status}`;
    if (LEAK.test(res.text)) return 'leaks internals';
    if (res.type.startsWith('text/event-stream')) {
      const events = res.text.split('\n\n').filter(Boolean);
      if (!events.every((e) => e.startsWith('data:'))) return 'SSE without data:';
      return events.at(-1) === 'data:[DONE]' || events.at(-1) === 'data:{"code":0,"message":"","data":true}' ? undefined : 'SSE without its end marker';
    }
    let b: { code?: unknown; message?: unknown; object?: unknown };
    try {
      b = JSON.parse(res.text);
    } catch {
      return 'not JSON';
    }
    if (envelope === 'openai' && b.object === 'chat.completion') return undefined;
    if (envelope === 'raw' && res.status === 200) return undefined; // Dify's records: its own shape
    if (typeof b.code !== 'number') return 'no numeric code';
    if (b.code !== 0 && typeof b.message !== 'string') return 'an error without a message';
    return undefined;
  }

  test('malformed JSON on every JSON route: an error envelope (HTTP 200), never a crash', async ({ api }) => {
    const ids = await fixtures(api);
    const bad: string[] = [];
    const payloads: Array<string | Uint8Array> = ['{"name": ', '{"a": 1}}', 'nul', "{'a': 1}", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])];
    for (const r of JSON_ROUTES) {
      for (const p of payloads) {
        const res = await fetch(api.base + fill(r.path, ids), { method: r.method, headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: p });
        const text = await res.text();
        const why = malformedAnswer({ status: res.status, text, type: res.headers.get('content-type') ?? '' }, r.envelope, r.errorStatus);
        if (why) bad.push(`${r.method} ${r.path} ${JSON.stringify(typeof p === 'string' ? p : [...p])}: ${why}: ${text.slice(0, 200)}`);
        else if (JSON.parse(text).code === 0) bad.push(`${r.method} ${r.path} ${JSON.stringify(p)}: accepted`);
      }
    }
    expect(bad).toEqual([]);
  });

  test('wrong types in every field of every JSON route: a well-formed answer; nothing destroyed; integrity ok', async ({ dir, srv, api }) => {
    const ids = await fixtures(api);
    const NONE = 'f'.repeat(32);
    const valid: Record<string, Record<string, unknown>> = {
      'datasets.create': { name: 'n' }, 'datasets.update': { name: 'science' }, 'datasets.delete': { ids: [NONE] },
      'documents.update': { name: 'tides.md' }, 'documents.delete': { ids: [NONE] }, 'documents.parse': { document_ids: [NONE] }, 'documents.stopParse': { document_ids: [NONE] },
      'chunks.add': { content: 'x' }, 'chunks.update': { content: 'Neap tides are weak.' }, 'chunks.delete': { chunk_ids: [NONE] },
      retrieval: { question: 'moon', dataset_ids: [ids.dataset_id] },
      'chats.create': { name: 'c2' }, 'chats.update': { name: 'fuzz' }, 'chats.replace': { name: 'fuzz' }, 'chats.delete': { ids: [NONE] },
      'sessions.create': { name: 's2' }, 'sessions.update': { name: 'fuzz' }, 'sessions.delete': { ids: [NONE] },
      'chats.completion': { question: 'moon?', stream: false, chat_id: ids.chat_id },
      'openai.completion': { model: 'model', messages: [{ role: 'user', content: 'moon?' }], stream: false },
      'memories.create': { name: 'm2', ...MEMORY }, 'memories.update': { description: 'd' },
      'messages.add': { memory_id: [ids.memory_id], agent_id: 'a', session_id: 's', user_input: 'x', agent_response: 'y' }, 'messages.status': { status: true },
      'users.create': { email: 'v@example.com', nickname: 'V' }, 'tenants.members.add': { user_id: NONE },
      'agents.create': { title: 'a2', dsl: AGENT_DSL }, 'agents.update': { title: 'fuzz' }, 'agentSessions.create': {}, 'agentSessions.delete': { ids: [NONE] },
      'agents.completion': { agent_id: ids.agent_id, query: 'moon?', stream: false },
      'datasets.search': { question: 'moon', dataset_ids: [ids.dataset_id] }, 'datasets.deleteTags': { tags: ['nope'] }, 'datasets.renameTag': { from_tag: 'a', to_tag: 'b' },
      'datasets.checkEmbedding': { embd_id: 'ragloom-static-en-256@Builtin' }, 'datasets.updateAutoMetadata': { metadata: [] },
      'documents.startParsing': { document_ids: [NONE] }, 'documents.stopParsing': { document_ids: [NONE] }, 'documents.updateMetadata': { selector: { document_ids: [] } },
      'documents.updateMetadataConfig': { metadata: [] }, 'documents.batchUpdateStatus': { doc_ids: [NONE], status: '1' }, 'documents.ingest': { doc_ids: [NONE], run: '0' },
      'chunks.switch': { chunk_ids: [NONE], available: true }, 'dify.retrieval': { knowledge_id: ids.dataset_id, query: 'moon' },
      'sessions.feedback': { thumbup: true }, 'chats.recommendation': { question: 'moon' },
      'searches.create': { name: 's2' }, 'searches.update': { name: 'fuzz', search_config: {} }, 'searches.completion': { question: 'moon?' },
      'searches.ask': { question: 'moon?', kb_ids: [ids.dataset_id] }, 'searches.retrievalTest': { kb_id: ids.dataset_id, question: 'moon' },
      'tasks.cancel': { action: 'stop' }, 'agents.updateTags': { tags: 'a' }, 'agents.rerun': { id: NONE, dsl: {}, component_id: 'begin' },
    };
    const datasetFields = ['name', 'avatar', 'description', 'embedding_model', 'permission', 'chunk_method', 'parser_config', 'pagerank'];
    const chatFields = ['name', 'dataset_ids', 'llm_id', 'llm_setting', 'prompt_config', 'icon', 'description', 'similarity_threshold', 'top_n', 'top_k', 'rerank_id', 'llm', 'prompt'];
    const fields: Record<string, string[]> = {
      'datasets.create': datasetFields, 'datasets.update': datasetFields, 'datasets.delete': ['ids', 'delete_all'],
      'documents.update': ['name', 'chunk_method', 'parser_config', 'meta_fields', 'enabled'], 'documents.delete': ['ids', 'delete_all'],
      'documents.parse': ['document_ids'], 'documents.stopParse': ['document_ids'],
      'chunks.add': ['content', 'important_keywords', 'questions', 'tag_kwd', 'image_base64'],
      'chunks.update': ['content', 'important_keywords', 'questions', 'available', 'positions', 'tag_kwd'], 'chunks.delete': ['chunk_ids', 'delete_all'],
      retrieval: ['question', 'dataset_ids', 'document_ids', 'page', 'page_size', 'similarity_threshold', 'vector_similarity_weight', 'top_k', 'rerank_id', 'keyword', 'highlight', 'cross_languages', 'metadata_condition'],
      'chats.create': chatFields, 'chats.update': chatFields, 'chats.replace': chatFields, 'chats.delete': ['ids', 'delete_all'],
      'sessions.create': ['name', 'user_id'], 'sessions.update': ['name', 'messages'], 'sessions.delete': ['ids', 'delete_all'],
      'chats.completion': ['question', 'stream', 'session_id', 'messages', 'quote', 'doc_ids', 'llm_id', 'temperature', 'reference_metadata', 'user_id', 'chat_id'],
      'openai.completion': ['model', 'messages', 'stream', 'extra_body'],
      'memories.create': ['name', 'memory_type', 'embd_id', 'llm_id'],
      'memories.update': ['name', 'description', 'memory_size', 'forgetting_policy', 'permissions', 'temperature', 'system_prompt', 'user_prompt', 'llm_id', 'embd_id'],
      'messages.add': ['memory_id', 'agent_id', 'session_id', 'user_input', 'agent_response', 'user_id'], 'messages.status': ['status'],
      'users.create': ['email', 'nickname', 'password'], 'tenants.members.add': ['user_id', 'role'],
      'agents.create': ['title', 'dsl', 'description', 'canvas_type', 'canvas_category', 'release', 'permission', 'avatar', 'tags'],
      'agents.update': ['title', 'dsl', 'description', 'canvas_type', 'canvas_category', 'release', 'permission', 'avatar', 'tags'],
      'agentSessions.create': ['name', 'user_id', 'release', 'inputs'], 'agentSessions.delete': ['ids', 'delete_all'],
      'agents.completion': ['agent_id', 'query', 'question', 'session_id', 'inputs', 'user_id', 'stream', 'return_trace', 'release'],
      'datasets.search': ['dataset_ids', 'question', 'doc_ids', 'page', 'size', 'top_k', 'similarity_threshold', 'vector_similarity_weight', 'use_kg', 'cross_languages', 'keyword', 'search_id', 'rerank_id', 'meta_data_filter'],
      'datasets.deleteTags': ['tags'], 'datasets.renameTag': ['from_tag', 'to_tag'], 'datasets.checkEmbedding': ['embd_id', 'check_num'],
      'datasets.updateAutoMetadata': ['metadata', 'built_in_metadata'],
      'documents.startParsing': ['document_ids'], 'documents.stopParsing': ['document_ids'], 'documents.updateMetadata': ['selector', 'updates', 'deletes'],
      'documents.updateMetadataConfig': ['metadata'], 'documents.batchUpdateStatus': ['doc_ids', 'status'], 'documents.ingest': ['doc_ids', 'run', 'delete'],
      'chunks.switch': ['chunk_ids', 'available_int', 'available'],
      'dify.retrieval': ['knowledge_id', 'query', 'retrieval_setting', 'metadata_condition', 'use_kg'],
      'sessions.feedback': ['thumbup', 'feedback'], 'chats.recommendation': ['question', 'search_id'],
      'searches.create': ['name', 'description', 'avatar', 'search_config'], 'searches.update': ['name', 'search_config', 'description', 'avatar'],
      'searches.completion': ['question', 'kb_ids'], 'searches.ask': ['question', 'kb_ids', 'search_id'],
      'searches.retrievalTest': ['kb_id', 'question', 'page', 'size', 'top_k', 'similarity_threshold', 'vector_similarity_weight', 'doc_ids', 'rerank_id', 'keyword', 'highlight', 'search_id'],
      'tasks.cancel': ['action'], 'agents.updateTags': ['tags'], 'agents.rerun': ['id', 'dsl', 'component_id'],
    };
    const values: unknown[] = [-1, 1e308, 'x', '', ['x'], [null], { a: 1 }, null, false];
    const bad: string[] = [];
    let sent = 0;
    for (const r of JSON_ROUTES) {
      expect(fields[r.op], r.op).toBeDefined();
      for (const f of fields[r.op]!) {
        for (const v of values) {
          const res = await fetch(api.base + fill(r.path, ids), {
            method: r.method, headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...valid[r.op], [f]: v }),
          });
          const text = await res.text();
          sent++;
          const why = malformedAnswer({ status: res.status, text, type: res.headers.get('content-type') ?? '' }, r.envelope, r.errorStatus);
          if (why) bad.push(`${r.method} ${r.path} ${f}=${JSON.stringify(v)}: ${why}: ${text.slice(0, 200)}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(sent).toBeGreaterThan(900);
    // Nothing the requests named was destroyed by a mistyped flag.
    expect((await api.call('GET', `/datasets?id=${ids.dataset_id}`)).body.code).toBe(0);
    expect((await api.call('GET', `/datasets/${ids.dataset_id}/documents/${ids.document_id}/chunks?id=${ids.chunk_id}`)).body.data.chunks).toHaveLength(1);
    expect((await api.call('GET', `/chats/${ids.chat_id}/sessions?id=${ids.session_id}`)).body.data).toHaveLength(1);
    expect((await api.call('GET', `/memories/${ids.memory_id}/config`)).body.code).toBe(0);
    expect((await api.call('GET', `/agents/${ids.agent_id}`)).body.code).toBe(0);
    await srv.close();
    expectIntact(join(dir, 'kb.db'));
  });

  test('unknown routes, other methods and odd URLs: RAGFlow 404 / 405 bodies or a 4xx; the server goes on', async ({ serve }) => {
    const srv = await serve({ bodyLimit: 4096 });
    const api = http(srv);
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/nothing/here', '/datasets/x/y/z/w', '/openai/x/models']) {
        const r = await api.call(method, path, method === 'GET' ? undefined : { a: 1 }, { key: null });
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.body).toEqual({ code: 404, message: `Not Found: /api/v1${path}`, data: null, error: 'Not Found' });
      }
    }
    // A large body to an unknown route is not read into memory: 404 or 413, never a crash.
    const big = await api.call('POST', '/nothing', undefined, { raw: 'x'.repeat(100_000), headers: { 'content-type': 'application/json' } });
    expect([404, 413]).toContain(big.status);
    const options = await fetch(`${api.base}/datasets`, { method: 'OPTIONS' });
    expect(options.status).toBe(200);
    expect(options.headers.get('allow')).toBe('POST, GET, DELETE, HEAD, OPTIONS');
    const head = await fetch(`${api.base}/datasets`, { method: 'HEAD', headers: { authorization: `Bearer ${api.key}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await api.call('PROPFIND', '/datasets')).body).toEqual({ code: 100, message: "<MethodNotAllowed '405: Method Not Allowed'>", data: null });
    // Broken percent-encoding and over-long path segments: a client error, not a crash.
    for (const path of ['/datasets/%E0%A4%A', '/%', `/datasets/${'a'.repeat(5000)}`, `/datasets?name=${'%zz'.repeat(10)}`]) {
      const r = await api.call('GET', path);
      expect(r.status, path).toBeGreaterThanOrEqual(200);
      expect(r.status, path).toBeLessThan(500);
    }
    // The router's own errors answer in RAGFlow's envelope too.
    expect((await api.call('GET', '/datasets/%E0%A4%A')).body).toEqual({ code: 100, message: "<BadRequest '400: Bad Request'>", data: null });
    // Over Node's header size limit: the connection is refused with 431, the server goes on.
    const huge = await fetch(`${api.base}/datasets`, { headers: { authorization: `Bearer ${api.key}`, 'x-pad': 'p'.repeat(20_000) } });
    expect(huge.status).toBe(431);
    expect((await api.call('GET', '/datasets')).body.code).toBe(0);
  });
});

describe('slow and vanishing clients', () => {
  test('a client that disconnects mid-upload: nothing stored, the server goes on, close() does not wait for it', async ({ serve }) => {
    const srv = await serve({ shutdownTimeout: 10_000 });
    const api = http(srv);
    const ds = (await api.call('POST', '/datasets', { name: 'up' })).body.data.id;
    for (let i = 0; i < 5; i++) {
      const s = await socket(srv);
      s.write(uploadHead(srv, ds, `half-${i}.txt`, 1_000_000) + 'A'.repeat(64 * 1024));
      await sleep(30);
      s.destroy();
    }
    await sleep(50);
    expect((await upload(api, ds, { 'whole.txt': 'whole' })).body.code).toBe(0);
    const docs = (await api.call('GET', `/datasets/${ds}/documents`)).body.data;
    expect(docs.docs.map((d: { name: string }) => d.name)).toEqual(['whole.txt']);
    const t0 = performance.now();
    await srv.close();
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  test('a client that stalls mid-upload is cut after shutdownTimeout; nothing stored', async ({ dir, serve }) => {
    const srv = await serve({ shutdownTimeout: 300 });
    const api = http(srv);
    const ds = (await api.call('POST', '/datasets', { name: 'up' })).body.data.id;
    const s = await socket(srv);
    s.write(uploadHead(srv, ds, 'stalled.txt', 1_000_000) + 'A'.repeat(1000));
    await sleep(100);
    // Meanwhile others are served.
    expect((await api.call('GET', '/datasets')).body.code).toBe(0);
    const t0 = performance.now();
    await srv.close();
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3000);
    await closedSocket(s);
    const db = new Database(join(dir, 'kb.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT COUNT(*) AS n FROM document').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  test('a slow sender does not hold up other clients', async ({ srv, api }) => {
    const body = JSON.stringify({ name: 'slowly made' });
    const s = await socket(srv);
    let answer = '';
    s.on('data', (c) => (answer += c));
    s.write(`POST /api/v1/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${srv.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    const trickle = (async () => {
      for (const ch of body) {
        s.write(ch);
        await sleep(40);
      }
    })();
    // While the body trickles in (~1 s), 60 other requests are answered quickly.
    const slowest = Math.max(...(await Promise.all(times(60).map(async (i) => {
      const t = performance.now();
      expect((await api.call('POST', '/retrieval', { question: `q${i}`, dataset_ids: ['nope'] })).body.code).toBe(102);
      return performance.now() - t;
    }))));
    expect(slowest).toBeLessThan(500);
    await trickle;
    await closedSocket(s);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('"name":"slowly made"');
  });

  test('clients that go away mid-stream (built-in model) or never read: the server goes on; close() is prompt', async ({ serve }) => {
    const srv = await serve({ shutdownTimeout: 10_000 });
    const api = http(srv);
    const { datasetId } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [datasetId] })).body.data;
    const go = (signal?: AbortSignal) => fetch(`${api.base}/chats/${chat.id}/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'Why are there spring tides?', stream: true }), signal,
    });
    for (let i = 0; i < 10; i++) {
      const ctl = new AbortController();
      const res = await go(ctl.signal);
      const reader = res.body!.getReader();
      if (i % 2) await reader.read();
      ctl.abort();
      await reader.cancel().catch(() => undefined);
    }
    // Raw sockets that ask for a stream and vanish before (or without) reading a byte.
    for (let i = 0; i < 10; i++) {
      const s = await socket(srv);
      const body = JSON.stringify({ question: 'How long should the dough rise?', stream: true });
      s.write(`POST /api/v1/chats/${chat.id}/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${srv.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      if (i % 2) s.destroy();
      else s.pause(); // never reads; left open until close()
    }
    const events = await sseEvents(await go());
    expect(events.at(-1)).toBe('{"code":0,"message":"","data":true}');
    const t0 = performance.now();
    await srv.close();
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  test('many idle connections (keep-alive, silent, half-sent headers): close() finishes promptly and closes them all', async ({ serve }) => {
    const srv = await serve({ shutdownTimeout: 10_000 });
    const keptAlive = await Promise.all(times(200).map(() => socket(srv)));
    await Promise.all(keptAlive.map((s) => new Promise<void>((ok) => {
      let got = '';
      s.on('data', (c) => {
        got += c;
        if (got.includes('total_datasets')) ok();
      });
      s.write(`GET /api/v1/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${srv.apiKey}\r\nConnection: keep-alive\r\n\r\n`);
    })));
    const silent = await Promise.all(times(50).map(() => socket(srv)));
    const halfHeaders = await Promise.all(times(10).map(async () => {
      const s = await socket(srv);
      s.write('GET /api/v1/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      return s;
    }));
    await sleep(50);
    const t0 = performance.now();
    await srv.close();
    expect(performance.now() - t0).toBeLessThan(1000);
    await Promise.all([...keptAlive, ...silent, ...halfHeaders].map(closedSocket));
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});

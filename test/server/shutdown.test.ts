/**
 * Graceful shutdown: close() stops accepting, lets in-flight requests (streams too) finish, aborts
 * them after `shutdownTimeout`, then closes the store; queued parse work resumes on the next start.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test, http, upload, waitParsed, sseEvents } from './fixtures.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let model: ChatServer;
beforeAll(async () => {
  model = await startChatServer();
});
afterAll(() => model.close());

const loop = () => [{ type: 'chat' as const, name: 'loop', factory: 'OpenAI-API-Compatible', base_url: model.url, max_tokens: 4096 }];

async function slowStream(api: ReturnType<typeof http>, deltas: number, delayMs: number) {
  const chat = (await api.call('POST', '/chats', { name: `c${Math.random()}`, dataset_ids: [], llm_id: 'loop@OpenAI-API-Compatible' })).body.data;
  model.script({ deltas: Array.from({ length: deltas }, (_, i) => `w${i} `), delayMs });
  const res = await fetch(`${api.base}/chats/${chat.id}/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ question: 'go', stream: true }),
  });
  return res;
}

describe('RunningServer#close()', () => {
  test('an in-flight stream finishes; new connections are refused meanwhile', async ({ serve }) => {
    const srv = await serve({ models: loop() });
    const api = http(srv);
    const res = await slowStream(api, 20, 40);
    const t0 = performance.now();
    const closed = srv.close();
    let closedAt = 0;
    void closed.then(() => (closedAt = performance.now()));
    await new Promise((ok) => setTimeout(ok, 50));
    await expect(fetch(`${api.base}/datasets`, { headers: { authorization: `Bearer ${api.key}`, connection: 'close' } })).rejects.toThrow();
    const events = await sseEvents(res);
    expect(events.at(-1)).toBe('{"code":0,"message":"","data":true}');
    expect(events.slice(0, -1).map((e) => JSON.parse(e).data.answer).join('')).toContain('w19');
    await closed;
    // The stream had ~800 ms to go when close() was called: close waited for it.
    expect(closedAt - t0).toBeGreaterThan(500);
  });

  test('after shutdownTimeout in-flight work is aborted (the model call is cut)', async ({ serve }) => {
    model.reset();
    const srv = await serve({ models: loop(), shutdownTimeout: 200 });
    const api = http(srv);
    const res = await slowStream(api, 400, 50);
    const reader = res.body!.getReader();
    await reader.read();
    const t0 = performance.now();
    await srv.close();
    expect(performance.now() - t0).toBeLessThan(5000);
    const upstream = model.requests.at(-1)!;
    await upstream.closed;
    expect(upstream.clientClosed).toBe(true);
    await reader.cancel().catch(() => undefined);
  });

  test('parse work queued at close resumes on the next start', async ({ dir, serve }) => {
    const srv = await serve();
    const api = http(srv);
    const ds = (await api.call('POST', '/datasets', { name: 'big' })).body.data.id;
    const para = (i: number) => `Paragraph ${i} talks about tides, bread, volcanoes and the moon in some detail. `.repeat(40);
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`doc${i}.md`, `# Doc ${i}\n\n${Array.from({ length: 30 }, (_, j) => para(j)).join('\n\n')}`]));
    const ids = (await upload(api, ds, files)).body.data.map((d: { id: string }) => d.id);
    expect((await api.call('POST', `/datasets/${ds}/chunks`, { document_ids: ids })).body).toEqual({ code: 0 });
    await srv.close();

    const db = new Database(join(dir, 'kb.db'), { readonly: true });
    const runs = (db.prepare('SELECT run FROM document').all() as { run: string }[]).map((r) => r.run);
    db.close();
    expect(runs).toContain('1'); // still RUNNING: persisted, not lost

    const again = http(await serve());
    await waitParsed(again, ds, ids);
    const docs = (await again.call('GET', `/datasets/${ds}/documents`)).body.data.docs;
    expect(docs.every((d: { run: string; chunk_count: number }) => d.run === 'DONE' && d.chunk_count > 0)).toBe(true);
  });
});

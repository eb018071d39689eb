/**
 * Extraction tasks shared by two processes on one file: a claim is a lease the working process
 * renews, so a slow model call is never run twice; a dead claimer's task comes due when its lease
 * runs out; a claimer that lost its lease (stalled past it) stores nothing.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';
import { openDatabase, SqliteConn, SqliteMemories, type Db } from '../../src/store/index.js';
import { ModelRegistry } from '../../src/embed/index.js';
import { OpenAIChatModel } from '../../src/llm/index.js';
import { ExtractionQueue } from '../../src/memory/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const ANSWER = '{"semantic":[{"content":"The meeting room is B12","valid_at":"","invalid_at":""}]}';
const models = () => [{ type: 'chat' as const, name: 'extractor', factory: 'OpenAI-API-Compatible', base_url: server.url }];

/** A file holding one pending extraction task (its first attempt abandoned by a closed client). */
async function pendingTask(path: string): Promise<void> {
  const c = new Client({ path, models: models() });
  const m = await c.createMemory({ name: 'm', memory_type: ['raw', 'semantic'], embd_id: 'ragloom-static-en-256@Builtin', llm_id: 'extractor@OpenAI-API-Compatible' });
  server.script({ hang: true });
  await c.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'The meeting room is B12.', agent_response: 'Noted.' });
  await new Promise((r) => setTimeout(r, 100));
  await c.close();
  server.reset();
}

/** A second process's queue, as the Api builds it, with a short lease. */
function queue(db: Db, leaseMs: number): ExtractionQueue {
  const registry = new ModelRegistry([]);
  return new ExtractionQueue({
    store: { memories: new SqliteMemories(new SqliteConn(db)), get isOpen() { return db.open; } }, leaseMs, isClosed: () => !db.open, log: () => undefined,
    model: () => new OpenAIChatModel({ id: 'extractor@OpenAI-API-Compatible', model: 'extractor', baseUrl: server.url, retries: 0 }),
    embed: (id, texts) => registry.embedder(id).embed(texts),
  });
}

const task = (db: Db) => db.prepare('SELECT status, update_time FROM memory_task').get() as { status: string; update_time: number };
const extracted = (db: Db) => (db.prepare("SELECT content FROM memory_message WHERE message_type != 'raw'").pluck().all() as string[]);

describe('extraction task leases', () => {
  test('a model call longer than the lease: renewed, so the other process never runs it too', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    await pendingTask(path);
    const a = openDatabase(path);
    const b = openDatabase(path);
    const qa = queue(a, 300);
    const qb = queue(b, 300);
    server.script({ text: ANSWER, delayMs: 1500 });
    qa.kick();
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 30; i++) {
      qb.kick(); // the other process keeps looking for due work meanwhile
      await new Promise((r) => setTimeout(r, 50));
    }
    await qa.idle();
    await qb.idle();
    expect(server.requests).toHaveLength(1);
    expect(task(a).status).toBe('done');
    expect(extracted(a)).toEqual(['The meeting room is B12']);
    await qa.close();
    await qb.close();
    a.close();
    b.close();
  });

  test("a dead claimer's task comes due when its lease runs out", async ({ dir }) => {
    const path = join(dir, 'kb.db');
    await pendingTask(path);
    const db = openDatabase(path);
    db.prepare('UPDATE memory_task SET update_time = ?').run(Date.now() + 400); // claimed by a process since killed
    const q = queue(db, 400);
    server.script({ text: ANSWER });
    const t0 = Date.now();
    q.kick();
    await q.idle();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(task(db).status).toBe('done');
    expect(extracted(db)).toEqual(['The meeting room is B12']);
    await q.close();
    db.close();
  });

  test('a claimer whose lease another process took stores nothing and leaves the task to it', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    await pendingTask(path);
    const db = openDatabase(path);
    const other = openDatabase(path);
    const q = queue(db, 3000);
    server.script({ text: ANSWER, delayMs: 600 });
    q.kick();
    await new Promise((r) => setTimeout(r, 200));
    // As if this claimer had stalled past its lease and another process claimed the task.
    const theirs = Date.now() + 60_000;
    other.prepare('UPDATE memory_task SET update_time = ?').run(theirs);
    await new Promise((r) => setTimeout(r, 1200)); // the answer came at ~600 ms; idle() would wait for the other's lease
    expect(server.requests).toHaveLength(1);
    expect(task(other)).toEqual({ status: 'pending', update_time: theirs });
    expect(extracted(other)).toEqual([]);
    await q.close();
    db.close();
    other.close();
  });

  test('a store that fails under a kicked drain pauses the queue: no unhandled rejection, logged once, extracted once it answers', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    await pendingTask(path);
    const db = openDatabase(path);
    const memories = new SqliteMemories(new SqliteConn(db));
    let failures = 2; // as a shared database that is away answers
    const away = new Proxy(memories, {
      get(target, key, recv) {
        if (key === 'claimTask' && failures > 0) return async () => { failures--; throw new Error('the database cannot be reached'); };
        const v = Reflect.get(target, key, recv) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const logged: string[] = [];
    const registry = new ModelRegistry([]);
    const q = new ExtractionQueue({
      store: { memories: away, get isOpen() { return db.open; } }, isClosed: () => !db.open, log: (m) => logged.push(m),
      model: () => new OpenAIChatModel({ id: 'extractor@OpenAI-API-Compatible', model: 'extractor', baseUrl: server.url, retries: 0 }),
      embed: (id, texts) => registry.embedder(id).embed(texts),
    });
    server.script({ text: ANSWER });
    q.kick();
    await new Promise((r) => setTimeout(r, 50));
    expect(failures).toBe(1);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/extraction paused.*cannot be reached/);
    for (let i = 0; i < 60 && task(db).status !== 'done'; i++) await new Promise((r) => setTimeout(r, 100));
    expect(failures).toBe(0);
    expect(logged).toHaveLength(1); // the second failure in a row is not logged again
    expect(task(db).status).toBe('done');
    expect(extracted(db)).toEqual(['The meeting room is B12']);
    await q.close();
    db.close();
  });
});

/**
 * Memory extraction through memory_task's queue on PostgreSQL (issue 30): processes sharing one
 * database split the tasks (FOR UPDATE SKIP LOCKED, leases renewed while the model answers), each
 * task's model call runs once and its items are stored once; a process killed holding a task
 * leaves it to another once its lease runs out.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PgStore } from '../../../src/store/postgres/index.js';
import { ExtractionQueue } from '../../../src/memory/index.js';
import { OpenAIChatModel } from '../../../src/llm/index.js';
import { ModelRegistry } from '../../../src/embed/index.js';
import { newId } from '../../../src/util/index.js';
import type { MemoryRow } from '../../../src/store/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../../support/postgres.js';
import { startChatServer, type ChatRequestBody, type ChatServer } from '../../support/chat-server.js';
import { seedTenant } from '../contract/seed.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
let chat: ChatServer;
beforeAll(async () => {
  chat = await startChatServer();
});
afterAll(async () => {
  await chat?.close();
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

const EMBD = 'ragloom-static-en-256@Builtin';
const registry = new ModelRegistry([]);

/** The model's answer: one semantic item naming the message it was asked about. */
function answer(body: ChatRequestBody): string {
  const said = /note (\d+)/.exec(JSON.stringify(body.messages))?.[1] ?? '?';
  return JSON.stringify({ semantic: [{ content: `fact of note ${said}`, valid_at: '', invalid_at: '' }] });
}

function queue(store: PgStore, leaseMs: number, calls: number[], k: number, pollMs = 50): ExtractionQueue {
  return new ExtractionQueue({
    store, leaseMs, pollMs, isClosed: () => !store.isOpen, log: () => undefined,
    model: () => {
      calls[k]!++;
      return new OpenAIChatModel({ id: 'extractor@OpenAI-API-Compatible', model: 'extractor', baseUrl: chat.url, retries: 0 });
    },
    embed: (id, texts) => registry.embedder(id).embed(texts),
  });
}

/** A memory with `n` raw messages, each with its extraction task queued. */
async function queued(store: PgStore, n: number): Promise<string> {
  const who = await seedTenant(store);
  const m: MemoryRow = {
    id: newId(), tenant_id: who.tenantId, name: 'm', avatar: '', memory_type: 3, storage_type: 'table', embd_id: EMBD, llm_id: 'extractor@OpenAI-API-Compatible',
    permissions: 'me', description: '', memory_size: 5_000_000, forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: '', user_prompt: '', used_bytes: 0,
    message_count: 0, created_by: 'u', create_time: 1, update_time: 1,
  };
  await store.memories.create(m);
  const now = Date.now();
  // addRaw takes one message per memory: one call each.
  for (let i = 0; i < n; i++) {
    await store.memories.addRaw([{ memoryId: m.id, queueTask: true, message: {
      message_type: 'raw', source_id: 0, user_id: 'u', agent_id: 'a', session_id: `s${i}`, content: `User Input: note ${i}\nAgent Response: ok`,
      vector: null, valid_at: now + i, invalid_at: null, fifo_at: now + i,
    } }], now + i);
  }
  return m.id;
}

async function until(ok: () => Promise<boolean>, ms: number, what: string): Promise<number> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) throw new Error(`${what}: not after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - t0;
}

describe.skipIf(!server)(`memory extraction through memory_task's queue${reason ? ` (${reason})` : ''}`, () => {
  test('three pools drain one queue: each task is extracted once, its items stored once, the work split', async () => {
    const url = await createStoreDatabase(server!, 'mtasks');
    urls.push(url);
    const stores = await Promise.all([0, 1, 2].map(() => PgStore.open(url)));
    const N = 30;
    const memoryId = await queued(stores[0]!, N);
    chat.reset();
    chat.script(...Array.from({ length: N }, () => (body: ChatRequestBody) => ({ text: answer(body), delayMs: 40 })));
    const calls = [0, 0, 0];
    const queues = stores.map((s, k) => queue(s, 2_000, calls, k));
    for (const q of queues) q.kick();
    await until(async () => (await stores[0]!.memories.pendingTasks()) === 0, 60_000, 'tasks done');
    const pc = new pg.Client({ connectionString: url });
    await pc.connect();
    try {
      const tasks = (await pc.query('SELECT status, attempts, claims, lease_token FROM memory_task')).rows;
      expect(tasks).toHaveLength(N);
      expect(tasks.every((t) => t.status === 'done' && t.attempts === 1 && t.claims === 1 && t.lease_token === null)).toBe(true);
      const items = (await pc.query("SELECT content FROM memory_message WHERE memory_id = $1 AND message_type = 'semantic' ORDER BY content", [memoryId])).rows.map((r) => r.content as string);
      expect(items).toEqual(Array.from({ length: N }, (_, i) => `fact of note ${i}`).sort());
    } finally {
      await pc.end();
    }
    expect(chat.requests).toHaveLength(N); // each model call once
    expect(calls.reduce((a, b) => a + b, 0)).toBe(N);
    expect(calls.filter((c) => c > 0).length).toBeGreaterThanOrEqual(2); // split
    console.log(`${N} extraction tasks over 3 pools: ${calls.join(' / ')}`);
    for (const q of queues) await q.close();
    for (const s of stores) await s.close();
  }, 90_000);

  test('a process killed holding a task: another takes it over once the lease runs out, and extracts it once', async () => {
    const url = await createStoreDatabase(server!, 'mtkill');
    urls.push(url);
    const store = await PgStore.open(url);
    await queued(store, 1);
    chat.reset();
    chat.script({ hang: true }, (body: ChatRequestBody) => ({ text: answer(body) }));
    const LEASE = 1_000;
    const fixture = fileURLToPath(new URL('./fixtures/extractor.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, url, chat.url, String(LEASE)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pc = new pg.Client({ connectionString: url });
    await pc.connect();
    try {
      await until(async () => (await pc.query('SELECT 1 FROM memory_task WHERE lease_owner LIKE $1', [`%:${child.pid}`])).rowCount === 1, 30_000, 'claimed by the child');
      await until(async () => chat.requests.length === 1, 10_000, 'the child asked the model');
      child.kill('SIGKILL');
      const killed = Date.now();
      await new Promise((r) => child.once('exit', r));
      const calls = [0];
      const q = queue(store, LEASE, calls, 0);
      q.kick();
      await until(async () => (await store.memories.pendingTasks()) === 0, 20_000, 'taken over');
      const took = Date.now() - killed;
      const t = (await pc.query('SELECT status, attempts, claims, lease_owner FROM memory_task')).rows[0];
      expect(t).toMatchObject({ status: 'done', attempts: 1, claims: 2, lease_owner: null });
      expect((await pc.query("SELECT content FROM memory_message WHERE message_type = 'semantic'")).rows).toEqual([{ content: 'fact of note 0' }]);
      expect(calls).toEqual([1]);
      expect(took).toBeLessThan(LEASE + 3_000);
      console.log(`killed holding a task (lease ${LEASE} ms): done by another ${took} ms after the kill`);
      await q.close();
    } finally {
      child.kill('SIGKILL');
      await pc.end();
      await store.close();
    }
  }, 90_000);

  test('an idle process wakes on the NOTIFY of a task queued through another, not at its next look', async () => {
    const url = await createStoreDatabase(server!, 'mtwake');
    urls.push(url);
    const [a, b] = await Promise.all([PgStore.open(url), PgStore.open(url)]);
    const calls = [0];
    const idle = queue(b, 30_000, calls, 0, 60_000); // looks only every minute
    try {
      idle.kick();
      await new Promise((r) => setTimeout(r, 300)); // listening, nothing pending
      chat.reset();
      chat.script((body: ChatRequestBody) => ({ text: answer(body) }));
      const t0 = Date.now();
      await queued(a, 1); // through the other store; nobody kicks `idle`
      const took = await until(async () => (await a.memories.pendingTasks()) === 0, 20_000, 'extracted by the idle process');
      console.log(`a task queued through another process, extracted by an idle one ${took} ms after (${Date.now() - t0} ms with the queueing)`);
      expect(calls).toEqual([1]);
      expect(took).toBeLessThan(10_000);
    } finally {
      await idle.close();
      await a.close();
      await b.close();
    }
  }, 60_000);
});

/**
 * Memories (agent conversation memory, RAGFlow §11): add rate, add rate with extraction, search
 * latency and the cost of FIFO eviction, at 10k and 100k messages in one memory.
 *
 *   npx tsx bench/memory.ts [--sizes 10000,100000] [--adds 8000] [--extract 1000] [--queries 200]
 *                           [--evict-adds 500] [--runs 2] [--docs docs/benchmarks.md]
 *
 * Messages are ~20-word synthetic English exchanges (bench/lib/chunks.ts: 10 words of user input,
 * 10 of agent response; ~130 bytes stored as `User Input: …\nAgent Response: …`). Every figure is
 * measured `--runs` times (columns run 1, run 2…) because another process may share the CPU.
 *
 * 1. Raw add rate: sequential `await client.addMessage(...)` into a raw-only memory (as an agent
 *    does), from empty, with the default embedding model (256-d) and with ragloom-static-en-128
 *    (128-d). `--adds` messages, chosen so that they all fit the 10 MiB maximum `memory_size` with
 *    either model: no eviction happens.
 * 2. Add with extraction: a raw + semantic memory whose llm_id is a loopback OpenAI-protocol model
 *    (test/support/chat-server.ts) answering at once with one semantic item; from the first add to
 *    `client.waitForMemoryTasks()`, and the latency of the raw adds alone (while extraction runs).
 * 3. Search: p50/p95 of `client.searchMessage` (similarity_threshold 0.2, top_n 10) over 6-word
 *    spans of random stored messages, after a warm-up query (reported: it loads the vector index).
 *    A memory of `size` messages is built through `addMessage` when they fit in 10 MiB (10k
 *    messages × ~650 bytes with static-en-128); a larger one cannot hold them within the API's
 *    limit, so its budget is raised in SQL (`UPDATE memory SET memory_size = …`) and the rows are
 *    inserted through the allocator (`insertMessages`, batches of 1,000, vectors from the same
 *    embedder). Both kinds of memory are then identical to the search.
 * 4. Eviction: the budget is set to the bytes used (memory full), then each add of a ~650-byte
 *    message evicts ≥ 1 message (the oldest). Time per add, through the client (embedding
 *    included) and through the allocator alone (`insertMessages` in a transaction, vector
 *    precomputed); the same adds with room to spare (budget raised) are the baseline. Per victim:
 *    tiny messages (~8 bytes, no vector) are put at the head of the FIFO, then ~3.5 KB adds each
 *    evict ~400 of them at once: (time − baseline time of such an add without eviction) / victims.
 *
 * Prints one JSON object per measurement, then a Markdown table (and `--docs` writes it into
 * that file's `## Memory: add, search, eviction` section).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, type Memory } from '../src/index.js';
import type { Engine } from '../src/core/index.js';
// The SQLite store's allocator itself (src/store/sqlite/memories.ts), in a transaction of its own as
// MemoryStore.insert runs it: the timings below are the allocator's, without the async wrapper.
import { insertMessages, usage as memUsage } from '../src/store/sqlite/memories.js';
import type { NewMessage } from '../src/store/index.js';
import { startChatServer, type ChatRequestBody } from '../test/support/chat-server.js';
import { syntheticChunks } from './lib/chunks.js';
import { upsertSection } from './lib/report.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    adds: { type: 'string', default: '8000' },
    extract: { type: 'string', default: '1000' },
    queries: { type: 'string', default: '200' },
    'evict-adds': { type: 'string', default: '500' },
    runs: { type: 'string', default: '2' },
    docs: { type: 'string' },
  },
});

const DEFAULT_EMBD = 'ragloom-static-en-256@Builtin';
const SMALL_EMBD = 'ragloom-static-en-128@Builtin';
/** Raw-only memories still need an existing chat model. */
const NO_LLM = 'ragloom-extractive@Builtin';
const MAX_BUDGET = 10 * 1024 * 1024;
const RUNS = Math.max(1, Number(args.runs));
const SIZES = String(args.sizes).split(',').map(Number);

// ------------------------------------------------------------------------------------------ helpers

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: number[]) => sum(xs) / Math.max(1, xs.length);
const short = (id: string) => id.replace(/^ragloom-/, '').replace(/@Builtin$/, '');

interface Row {
  measure: 'add' | 'add+extract' | 'search' | 'evict-add' | 'evict-victim';
  /** What the figure is, for the table. */
  label: string;
  embedding: string;
  /** Messages in the memory when measured. */
  stored: number;
  /** The memory size this row belongs to (--sizes), or the adds of a from-empty run. */
  size: number;
  run: number;
  /** The headline figure, in `unit`. */
  value: number;
  unit: string;
  /** Shown next to the headline in the table. */
  note: string;
  [k: string]: unknown;
}
const rows: Row[] = [];
function emit(r: Row): void {
  rows.push(r);
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
const log = (s: string) => process.stderr.write(`${s}\n`);

/** `n` exchanges of ~20 words: the first 10 words are the user's, the rest the agent's. */
function exchanges(n: number, seed: number, words = 20): { user_input: string; agent_response: string; content: string }[] {
  return syntheticChunks(n, words, seed).map((t) => {
    const w = t.split(' ');
    const user_input = w.slice(0, words >> 1).join(' ');
    const agent_response = w.slice(words >> 1).join(' ');
    return { user_input, agent_response, content: `User Input: ${user_input}\nAgent Response: ${agent_response}` };
  });
}

/** A write transaction on the engine's SQLite connection (BEGIN IMMEDIATE, as the store's). */
const txOf = (engine: Engine) => <T>(fn: () => T): T => engine.db.transaction(fn).immediate();

let dirSeq = 0;
function freshClient(): { client: Client; engine: Engine; dispose(): Promise<void> } {
  const dir = join(tmpdir(), `ragloom-memory-bench-${process.pid}-${dirSeq++}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const client = new Client({ path: join(dir, 'm.db') });
  const engine = (client as unknown as { api: { engine: Engine } }).api.engine;
  return {
    client, engine,
    async dispose() {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Loads the embedding model (cold load is not what is measured) without touching the memory. */
async function warmEmbedder(engine: Engine, model: string): Promise<void> {
  await engine.models.embedder(model).embed(['warm up the embedding model']);
}

const setBudget = (engine: Engine, memoryId: string, bytes: number) => engine.db.prepare('UPDATE memory SET memory_size = ? WHERE id = ?').run(bytes, memoryId);

/** Sequential client adds; per-add latencies in ms. */
async function addAll(client: Client, memoryId: string, msgs: { user_input: string; agent_response: string }[]): Promise<number[]> {
  const lat: number[] = [];
  for (const [i, m] of msgs.entries()) {
    const t = performance.now();
    await client.addMessage({ memory_id: memoryId, agent_id: 'agent', session_id: `s${i % 50}`, user_input: m.user_input, agent_response: m.agent_response });
    lat.push(performance.now() - t);
  }
  return lat;
}

// ------------------------------------------------------------------------------------------ 1. raw add

async function rawAddRate(model: string, n: number, run: number): Promise<void> {
  const { client, engine, dispose } = freshClient();
  await warmEmbedder(engine, model);
  const mem = await client.createMemory({ name: 'raw', memory_type: ['raw'], embd_id: model, llm_id: NO_LLM });
  await mem.update({ memory_size: MAX_BUDGET });
  const msgs = exchanges(n, 1000 + run);
  const t0 = performance.now();
  const lat = await addAll(client, mem.id, msgs);
  const secs = (performance.now() - t0) / 1000;
  const u = await mem.usage();
  emit({
    measure: 'add', label: 'raw add, sequential awaits, from empty', embedding: short(model), stored: u.messages, size: n, run,
    value: n / secs, unit: 'adds/s', note: `p50 ${pct(lat, 50).toFixed(3)} ms, p95 ${pct(lat, 95).toFixed(3)} ms`,
    p50Ms: pct(lat, 50), p95Ms: pct(lat, 95), usedBytes: u.used, budget: u.budget, evicted: n - u.messages,
  });
  await dispose();
}

// ------------------------------------------------------------------------------------------ 2. extraction

async function extractionRate(n: number, run: number): Promise<void> {
  const server = await startChatServer();
  // One semantic item per exchange, made of the user's words, so that every item is distinct.
  const reply = (body: ChatRequestBody) => {
    const user = String(body.messages.at(-1)?.content ?? '');
    const said = /User Input: (.*)/.exec(user)?.[1] ?? 'something';
    return { text: JSON.stringify({ semantic: [{ content: `The user talked about ${said}`, valid_at: '', invalid_at: '' }] }), usage: false as const };
  };
  server.script(...Array.from({ length: n }, () => reply));
  const { client, engine, dispose } = freshClient();
  client.registerModel({ type: 'chat', name: 'instant', factory: 'OpenAI-API-Compatible', base_url: server.url });
  await warmEmbedder(engine, SMALL_EMBD);
  const mem = await client.createMemory({ name: 'ex', memory_type: ['raw', 'semantic'], embd_id: SMALL_EMBD, llm_id: 'instant@OpenAI-API-Compatible' });
  await mem.update({ memory_size: MAX_BUDGET });
  const msgs = exchanges(n, 2000 + run);
  const t0 = performance.now();
  const lat = await addAll(client, mem.id, msgs);
  const addSecs = (performance.now() - t0) / 1000;
  const doneAtAdds = engine.db.prepare("SELECT COUNT(*) FROM memory_task WHERE status != 'pending'").pluck().get() as number;
  await client.waitForMemoryTasks();
  const secs = (performance.now() - t0) / 1000;
  const tasks = engine.db.prepare('SELECT status, COUNT(*) AS n FROM memory_task GROUP BY status').all() as { status: string; n: number }[];
  const items = engine.db.prepare("SELECT COUNT(*) FROM memory_message WHERE message_type = 'semantic'").pluck().get() as number;
  const u = await mem.usage();
  emit({
    measure: 'add+extract', label: 'add with extraction (raw + semantic, loopback model): first add → all extracted', embedding: short(SMALL_EMBD), stored: u.messages, size: n, run,
    value: n / secs, unit: 'msgs/s extracted',
    note: `raw adds alone ${(n / addSecs).toFixed(0)}/s, p50 ${pct(lat, 50).toFixed(3)} ms, p95 ${pct(lat, 95).toFixed(3)} ms; ` +
      `${doneAtAdds} of ${n} extracted when the last add returned, the rest at ${((n - doneAtAdds) / (secs - addSecs)).toFixed(0)}/s`,
    extractAfterAddsPerSec: (n - doneAtAdds) / (secs - addSecs),
    totalSecs: secs, addSecs, addsPerSec: n / addSecs, addP50Ms: pct(lat, 50), addP95Ms: pct(lat, 95), tasks, semanticItems: items, modelRequests: server.requests.length,
  });
  await dispose();
  await server.close();
}

// ------------------------------------------------------------------------------------------ 3 & 4 at one size

interface Sized {
  client: Client;
  engine: Engine;
  mem: Memory;
  texts: ReturnType<typeof exchanges>;
  how: string;
  size: number;
  dispose(): Promise<void>;
}

const AVG_COST = 650; // ~130 bytes of text + 512 of vector (static-en-128)

async function buildMemory(size: number): Promise<Sized> {
  const { client, engine, dispose } = freshClient();
  await warmEmbedder(engine, SMALL_EMBD);
  const mem = await client.createMemory({ name: `m${size}`, memory_type: ['raw'], embd_id: SMALL_EMBD, llm_id: NO_LLM });
  const texts = exchanges(size, 3000 + size);
  const t0 = performance.now();
  let how: string;
  if (size * AVG_COST * 1.05 <= MAX_BUDGET) {
    await mem.update({ memory_size: MAX_BUDGET });
    const lat = await addAll(client, mem.id, texts);
    const secs = (performance.now() - t0) / 1000;
    how = 'built with client.addMessage';
    emit({
      measure: 'add', label: 'raw add, sequential awaits, from empty (building the search memory)', embedding: short(SMALL_EMBD), stored: size, size, run: 1,
      value: size / secs, unit: 'adds/s', note: `p50 ${pct(lat, 50).toFixed(3)} ms, p95 ${pct(lat, 95).toFixed(3)} ms`, p50Ms: pct(lat, 50), p95Ms: pct(lat, 95),
    });
  } else {
    // 100k messages do not fit the API's 10 MiB maximum: raise the budget in SQL and insert
    // through the allocator, 1,000 per transaction, with vectors from the same embedder.
    setBudget(engine, mem.id, Number.MAX_SAFE_INTEGER);
    const embedder = engine.models.embedder(SMALL_EMBD);
    const base = Date.now() - size - 60_000;
    for (let i = 0; i < size; i += 1000) {
      const batch = texts.slice(i, i + 1000);
      const vecs = await embedder.embed(batch.map((m) => m.content));
      txOf(engine)(() => insertMessages(engine.db, mem.id, batch.map((m, j): NewMessage => ({
        message_type: 'raw', source_id: 0, user_id: '', agent_id: 'agent', session_id: `s${(i + j) % 50}`, content: m.content,
        vector: vecs[j]!, valid_at: base + i + j, invalid_at: null, fifo_at: base + i + j,
      })), { now: base + i }));
    }
    how = 'budget raised in SQL, rows inserted with insertMessages (beyond the 10 MiB API limit)';
  }
  const u = await mem.usage();
  log(`${size}: memory of ${u.messages} messages, ${(u.used / 1048576).toFixed(1)} MiB, ${how}, in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return { client, engine, mem, texts, how, size, dispose };
}

async function search(s: Sized, nq: number, run: number): Promise<void> {
  let seed = 7 + run * 1000;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const qs = Array.from({ length: nq + 1 }, () => {
    const src = s.texts[Math.floor(rnd() * s.texts.length)]!;
    const words = src.content.replace(/^User Input: |\nAgent Response: /g, ' ').trim().split(/\s+/);
    const at = Math.floor(rnd() * (words.length - 6));
    return { q: words.slice(at, at + 6).join(' ').replace(/[.,]/g, ''), src: src.content };
  });
  const u = await s.mem.usage();
  const tw = performance.now();
  await s.client.searchMessage({ query: qs[0]!.q, memory_id: [s.mem.id], similarity_threshold: 0.2 });
  const warm = performance.now() - tw;
  const lat: number[] = [];
  let found = 0;
  let hits = 0;
  for (const { q, src } of qs.slice(1)) {
    const t = performance.now();
    const r = await s.client.searchMessage({ query: q, memory_id: [s.mem.id], similarity_threshold: 0.2 });
    lat.push(performance.now() - t);
    hits += r.length;
    if (r.some((m) => m.content === src)) found++;
  }
  emit({
    measure: 'search', label: 'searchMessage p50 (6-word queries, threshold 0.2, top 10)', embedding: short(SMALL_EMBD), stored: u.messages, size: s.size, run,
    value: pct(lat, 50), unit: 'ms',
    note: `p95 ${pct(lat, 95).toFixed(2)} ms; warm-up ${warm.toFixed(0)} ms; source message in the results ${((100 * found) / nq).toFixed(0)}%${s.how.startsWith('budget') ? '; rows inserted with insertMessages past the 10 MiB limit' : ''}`,
    p50Ms: pct(lat, 50), p95Ms: pct(lat, 95), meanMs: mean(lat), warmupMs: warm, meanHits: hits / nq, sourceFound: found / nq, memory: s.how,
  });
}

/** One allocator insert (own transaction), timed; returns [ms, victims]. */
function allocatorAdd(s: Sized, content: string, vector: Float32Array | null): [number, number] {
  const now = Date.now();
  const t = performance.now();
  const { evicted } = txOf(s.engine)(() => insertMessages(s.engine.db, s.mem.id, [{
    message_type: 'raw', source_id: 0, user_id: '', agent_id: 'agent', session_id: 's0', content, vector, valid_at: now, invalid_at: null, fifo_at: now,
  }], { now }));
  return [performance.now() - t, evicted.length];
}

/**
 * Each add of a normal message into a full memory evicts ≥ 1 (before each add, untimed, the
 * budget is set to the bytes used: no slack left by an earlier, larger victim): µs per add,
 * against the same adds with room to spare.
 */
async function evictPerAdd(s: Sized, n: number, runs: number): Promise<void> {
  const embedder = s.engine.models.embedder(SMALL_EMBD);
  const db = s.engine.db;
  let seed = 50_000 + s.size;
  const fillUp = () => setBudget(s.engine, s.mem.id, memUsage(db, s.mem.id)!.used);
  for (let run = 1; run <= runs; run++) {
    const fresh = (k: number) => exchanges(k, seed++);
    // Baselines: the same kinds of add with room to spare (budget raised in SQL).
    setBudget(s.engine, s.mem.id, memUsage(db, s.mem.id)!.used + 4 * n * AVG_COST);
    const baseClient = await addAll(s.client, s.mem.id, fresh(n));
    const bMsgs = fresh(n);
    const bVecs = await embedder.embed(bMsgs.map((m) => m.content));
    const baseAlloc = bMsgs.map((m, i) => allocatorAdd(s, m.content, bVecs[i]!)[0]);
    // Full: every add must evict.
    const client: number[] = [];
    const clientVictims: number[] = [];
    for (const [i, m] of fresh(n).entries()) {
      fillUp();
      const before = memUsage(db, s.mem.id)!.messages;
      const t = performance.now();
      await s.client.addMessage({ memory_id: s.mem.id, agent_id: 'agent', session_id: `s${i % 50}`, user_input: m.user_input, agent_response: m.agent_response });
      client.push(performance.now() - t);
      clientVictims.push(before + 1 - memUsage(db, s.mem.id)!.messages);
    }
    const aMsgs = fresh(n);
    const aVecs = await embedder.embed(aMsgs.map((m) => m.content));
    const alloc = aMsgs.map((m, i) => (fillUp(), allocatorAdd(s, m.content, aVecs[i]!)));
    const victims = alloc.map(([, v]) => v);
    const u = await s.mem.usage();
    const allocUs = alloc.map(([ms]) => ms * 1000);
    emit({
      measure: 'evict-add', label: 'add into a full memory (each evicts ≥ 1): client.addMessage', embedding: short(SMALL_EMBD), stored: u.messages, size: s.size, run,
      value: pct(client, 50) * 1000, unit: 'µs/add (p50)',
      note: `with room ${(pct(baseClient, 50) * 1000).toFixed(0)} µs; p95 ${(pct(client, 95) * 1000).toFixed(0)} µs; victims/add ${mean(clientVictims).toFixed(2)} (min ${Math.min(...clientVictims)})`,
      p50Us: pct(client, 50) * 1000, p95Us: pct(client, 95) * 1000, meanUs: mean(client) * 1000, roomP50Us: pct(baseClient, 50) * 1000,
      victimsPerAdd: mean(clientVictims), minVictims: Math.min(...clientVictims),
    });
    emit({
      measure: 'evict-add', label: 'add into a full memory (each evicts ≥ 1): allocator alone (insertMessages + commit)', embedding: short(SMALL_EMBD), stored: u.messages, size: s.size, run,
      value: pct(allocUs, 50), unit: 'µs/add (p50)',
      note: `with room ${(pct(baseAlloc, 50) * 1000).toFixed(0)} µs; p95 ${pct(allocUs, 95).toFixed(0)} µs; victims/add ${mean(victims).toFixed(2)} (min ${Math.min(...victims)})`,
      p50Us: pct(allocUs, 50), p95Us: pct(allocUs, 95), meanUs: mean(allocUs), roomP50Us: pct(baseAlloc, 50) * 1000, victimsPerAdd: mean(victims), minVictims: Math.min(...victims),
      usedBytes: u.used, budget: u.budget,
    });
  }
}

/**
 * Per victim: tiny messages (no vector, ~8 bytes) at the head of the FIFO; each ~3.5 KB add evicts
 * hundreds of them at once. Cost per victim = (time − the same add's time with room) / victims.
 */
async function evictPerVictim(s: Sized, runs: number): Promise<void> {
  const perRun = 10;
  const embedder = s.engine.models.embedder(SMALL_EMBD);
  const big = syntheticChunks(perRun * runs * 3, 500, 77 + s.texts.length).map((t) => t.slice(0, 3000));
  const bigVecs = await embedder.embed(big);
  const bigCost = 3000 + 4 * 128;
  const tinyCount = Math.ceil((perRun * runs * bigCost * 1.5) / 8);
  // Tiny messages older than everything (fifo_at 1, 2, …), added with room to spare.
  setBudget(s.engine, s.mem.id, Number.MAX_SAFE_INTEGER);
  txOf(s.engine)(() => {
    for (let i = 0; i < tinyCount; i += 500) {
      insertMessages(s.engine.db, s.mem.id, Array.from({ length: Math.min(500, tinyCount - i) }, (_, j): NewMessage => ({
        message_type: 'raw', source_id: 0, user_id: '', agent_id: 'agent', session_id: 's0', content: `t${String(i + j).padStart(7, '0')}`,
        vector: null, valid_at: 1 + i + j, invalid_at: null, fifo_at: 1 + i + j,
      })), { now: Date.now() });
    }
  });
  let b = 0;
  // Baseline: the same adds with room.
  const base = Array.from({ length: perRun }, () => allocatorAdd(s, big[b]!, bigVecs[b++]!)[0]);
  const baseMs = pct(base, 50);
  for (let run = 1; run <= runs; run++) {
    const r = Array.from({ length: perRun }, () => {
      setBudget(s.engine, s.mem.id, memUsage(s.engine.db, s.mem.id)!.used);
      return allocatorAdd(s, big[b]!, bigVecs[b++]!);
    });
    const victims = sum(r.map(([, v]) => v));
    const ms = sum(r.map(([t]) => t));
    const u = await s.mem.usage();
    const perVictim = ((ms - perRun * baseMs) * 1000) / victims;
    emit({
      measure: 'evict-victim', label: 'cost per victim: ~3.5 KB add evicting ~400 tiny messages at once (allocator)', embedding: short(SMALL_EMBD), stored: u.messages, size: s.size, run,
      value: perVictim, unit: 'µs/victim',
      note: `${(victims / perRun).toFixed(0)} victims/add; ${((ms * 1000) / perRun).toFixed(0)} µs/add vs ${(baseMs * 1000).toFixed(0)} µs with room; gross ${((ms * 1000) / victims).toFixed(1)} µs/victim`,
      perVictimUs: perVictim, grossPerVictimUs: (ms * 1000) / victims, victimsPerAdd: victims / perRun, addUs: (ms * 1000) / perRun, roomAddUs: baseMs * 1000,
    });
  }
  // Leave the tiny ones that are left, the memory full as it is.
}

/** Adds with room at this size through the client (is an add slower in a bigger memory?). */
async function addAtSize(s: Sized, n: number, run: number): Promise<void> {
  const u0 = await s.mem.usage();
  setBudget(s.engine, s.mem.id, u0.used + 2 * n * AVG_COST);
  const msgs = exchanges(n, 90_000 + run + u0.messages);
  const t0 = performance.now();
  const lat = await addAll(s.client, s.mem.id, msgs);
  const secs = (performance.now() - t0) / 1000;
  emit({
    measure: 'add', label: `raw add, sequential awaits, ${n} more into a memory of this size (room to spare)`, embedding: short(SMALL_EMBD), stored: u0.messages, size: s.size, run,
    value: n / secs, unit: 'adds/s', note: `p50 ${pct(lat, 50).toFixed(3)} ms, p95 ${pct(lat, 95).toFixed(3)} ms`, p50Ms: pct(lat, 50), p95Ms: pct(lat, 95),
  });
}

// ------------------------------------------------------------------------------------------ run

function table(all: Row[]): string {
  const groups = new Map<string, Row[]>();
  for (const r of all) {
    const k = `${r.measure}|${r.label}|${r.embedding}|${r.size}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  const runs = Math.max(...[...groups.values()].map((g) => g.length));
  const fmt = (r: Row) => (r.value >= 100 ? Math.round(r.value).toLocaleString('en') : r.value.toFixed(r.value >= 10 ? 1 : 2));
  return [
    `| measurement | embedding | messages stored | ${Array.from({ length: runs }, (_, i) => `run ${i + 1}`).join(' | ')} | unit | notes (run 1) |`,
    `|---|---|---:|${'---:|'.repeat(runs)}---|---|`,
    ...[...groups.values()].map((g) => {
      const r = g[0]!;
      const cells = Array.from({ length: runs }, (_, i) => (g[i] ? fmt(g[i]!) : ''));
      return `| ${r.label} | ${r.embedding} | ${r.size.toLocaleString('en')} | ${cells.join(' | ')} | ${r.unit} | ${r.note} |`;
    }),
  ].join('\n');
}

const started = performance.now();
const nAdds = Number(args.adds);
for (let run = 1; run <= RUNS; run++) {
  for (const model of [DEFAULT_EMBD, SMALL_EMBD]) await rawAddRate(model, nAdds, run);
}
for (let run = 1; run <= RUNS; run++) await extractionRate(Number(args.extract), run);
for (const size of SIZES) {
  const s = await buildMemory(size);
  for (let run = 1; run <= RUNS; run++) await search(s, Number(args.queries), run);
  for (let run = 1; run <= RUNS; run++) await addAtSize(s, 1000, run);
  await evictPerAdd(s, Number(args['evict-adds']), RUNS);
  await evictPerVictim(s, RUNS);
  await s.dispose();
}
log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);

const t = table(rows);
process.stdout.write(`\n${t}\n`);
if (args.docs) {
  upsertSection(args.docs, 'Memory: add, search, eviction', `Measured by \`npx tsx bench/memory.ts\` (${new Date().toISOString().slice(0, 10)}; ${availableParallelism()} cores). ` +
    'Messages are ~20-word synthetic exchanges (~650 bytes each with a 128-d vector). The 100k memory does not fit the API\'s 10 MiB ' +
    '`memory_size` maximum: its budget is raised in SQL and its rows inserted through the allocator (`insertMessages`); every other ' +
    'figure goes through the client. The extraction model is a loopback OpenAI-protocol server that answers at once.\n\n' + t);
}

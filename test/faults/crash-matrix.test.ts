/**
 * The crash matrix (issue 17 item 1). For every write operation, a child process
 * (fixtures/crash-child-warm.mjs) performs it on a copy of a prepared database and is SIGKILLed at each
 * of the operation's named kill points (`faultPoint()`, src/util/fault.ts, armed by
 * RAGLOOM_FAULT_POINT). The parent then reopens the file with the public `Client` — which recovers
 * what a dead process left (a parse owned by a dead pid is parsed again) — waits until no document
 * is RUNNING, and checks (crash-checks.ts):
 *
 * - the file's invariants: `PRAGMA integrity_check`, foreign keys, FTS5 integrity, chunk rows ↔
 *   FTS rows ↔ vector rows one to one, memory messages ↔ FTS rows and memory totals exact, no
 *   document RUNNING, blobs referenced ↔ stored, counters, chat and agent sessions whole;
 * - atomicity, and nothing committed lost: the reopened logical content equals either the content
 *   before the operation or the content after a good (unkilled) run of it.
 *
 * Each kill point must be reached (the child dies by SIGKILL and the point is the last one it
 * logged); one good run per operation proves the checks pass on a good file and that it passes
 * every point; a self-test corrupts good files to show each check fails when it should.
 *
 * By default each kill point is driven once, at the first operation that has it (a point several
 * operations reach — parse:owned, chunks.upsert:rows-written, agents.version:written … — runs the
 * same code there), after every operation's good run; children that load ragloom once are started
 * ahead (crash-warm.ts), and a good run's child serves the next cell. RAGLOOM_CRASH_FULL=1 drives
 * every point of every operation (and is what RAGLOOM_WRITE_DOCS=1 runs).
 *
 * RAGLOOM_WRITE_DOCS=1 writes the matrix to docs/reliability.md (section `## Crash matrix`);
 * RAGLOOM_CRASH_OPS=<id,id> runs only those operations (every point of each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import { Client } from '../../src/index.js';
import { Api } from '../../src/api/index.js';
import { openDatabase, vecTable, toBlob, SCHEMA_VERSION, type Db } from '../../src/store/index.js';
import { Workspace } from '../../src/workspace/index.js';
import type { ModelConfig } from '../../src/embed/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { checkInvariants, snapshot } from './crash-checks.js';
import { ALL_OPS as SHARED_OPS, EMBD, eachPointOnce, fillCommon, fillExtract, pointsOn, type BaseName, type Op } from './crash-ops.js';
import { WarmPool } from './crash-warm.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = join(ROOT, 'docs', 'reliability.md');
/** Children at a time (two cores); RAGLOOM_CRASH_LANES overrides. */
const LANES = Number(process.env.RAGLOOM_CRASH_LANES ?? 2);

/** RAGLOOM_CRASH_OPS=parse,memory.add runs only those rows (while debugging; the docs are then left alone). */
const ONLY = process.env.RAGLOOM_CRASH_OPS?.split(',').filter(Boolean);
/** The operations and points of the shared list that run on SQLite. */
const ALL_OPS: Op[] = SHARED_OPS.filter((o) => !o.stores || o.stores.includes('sqlite')).map((o) => ({ ...o, points: pointsOn(o, 'sqlite') }));
/** Every point of every operation: asked for, or writing the docs' table. */
const FULL = process.env.RAGLOOM_CRASH_FULL === '1' || process.env.RAGLOOM_WRITE_DOCS === '1' || !!ONLY?.length;
const OPS = ONLY?.length ? ALL_OPS.filter((o) => ONLY.includes(o.id)) : FULL ? ALL_OPS : eachPointOnce(ALL_OPS);

// ---------------------------------------------------------------- baselines

const enc = (s: string) => Buffer.from(s);

interface Base {
  /** Database file, or workspace folder. */
  path: string;
  args: Record<string, unknown>;
}

let work: string;
let chat: ChatServer;
const extractorModels = (): ModelConfig[] => [{ type: 'chat', name: 'extractor', factory: 'OpenAI-API-Compatible', base_url: chat.url }];
type P = Record<string, unknown>;

async function buildCommon(): Promise<Base> {
  const path = join(work, 'base-common', 'kb.db');
  return { path, args: await fillCommon(new Api({ path })) };
}

async function buildExtract(): Promise<Base> {
  const path = join(work, 'base-extract', 'kb.db');
  return { path, args: await fillExtract(new Api({ path, models: extractorModels() }), chat) };
}

/** A version-3 file (before the analyzer, identity and agent migrations), written as that version's code wrote it. */
async function buildV3(): Promise<Base> {
  const path = join(work, 'base-v3', 'kb.db');
  await mkdir(join(work, 'base-v3'), { recursive: true });
  const db = openDatabase(path, { targetVersion: 3 });
  const ds = 'd'.repeat(32);
  const bytes = 'hello old file';
  const sha = createHash('sha256').update(bytes).digest('hex');
  db.prepare('INSERT INTO blob (sha256, size, data) VALUES (?, ?, ?)').run(sha, bytes.length, enc(bytes));
  db.exec(`INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES ('t1', 'local', '${EMBD}', '', 1);
    INSERT INTO user (id, nickname, create_time) VALUES ('u1', 'local', 1);
    INSERT INTO user_tenant (user_id, tenant_id, role) VALUES ('u1', 't1', 'owner');
    INSERT INTO api_token (token, tenant_id, user_id, create_time) VALUES ('ragflow-old-clear-key', 't1', 'u1', 1);
    INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, parser_config, doc_num, chunk_num, create_time, update_time)
      VALUES ('${ds}', 't1', 'old', '${EMBD}', 'u1', '{}', 1, 2, 1, 1);
    INSERT INTO document (id, dataset_id, name, suffix, type, size, blob_sha256, location, parser_id, created_by, chunk_num, run, create_time, update_time)
      VALUES ('doc1', '${ds}', 'old.txt', 'txt', 'doc', ${bytes.length}, '${sha}', 'old.txt', 'naive', 'u1', 2, '3', 1, 1);`);
  const table = vecTable(db, 256);
  for (const [i, content] of ['hello old chunk', 'another old chunk about tides'].entries()) {
    const r = db.prepare(`INSERT INTO chunk (id, document_id, dataset_id, content, vec_dim, create_time, create_timestamp)
      VALUES (?, 'doc1', ?, ?, 256, '2020-01-01 00:00:00', 1)`).run(`c${i}`, ds, content);
    db.prepare("INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, 'old txt', ?, '', '')").run(BigInt(r.lastInsertRowid), content);
    const v = new Float32Array(256);
    v[i] = 1;
    db.prepare(`INSERT INTO ${table} (rowid, dataset_id, embedding) VALUES (?, ?, ?)`).run(BigInt(r.lastInsertRowid), ds, toBlob(v));
  }
  db.close();
  return { path, args: {} };
}

/** A saved workspace: dataset D0001 bound to project P0001 with a task, saved twice (bak exists). */
async function buildWorkspace(): Promise<Base> {
  const path = join(work, 'base-workspace');
  const ws = await Workspace.open(path);
  const ds = ws.datasets.create({ name: 'old', type: 'classification' });
  const pj = ws.projects.create({ name: 'p', type: 'classification', did: ds.id });
  ws.tasks.create({ pid: pj.id });
  await ws.save();
  await ws.save();
  return { path, args: {} };
}

const BUILDERS: Record<BaseName, () => Promise<Base>> = { common: buildCommon, extract: buildExtract, v3: buildV3, workspace: buildWorkspace };
const bases = new Map<BaseName, Promise<Base>>();
const base = (name: BaseName): Promise<Base> => {
  let b = bases.get(name);
  if (!b) bases.set(name, (b = BUILDERS[name]()));
  return b;
};

// ---------------------------------------------------------------- one cell

interface Cell {
  op: string;
  /** null: the good run. */
  point: string | null;
  signal: string | null;
  code: number | null;
  /** The points the child logged, in order. */
  log: string[];
  output: string;
  /** Invariants broken after reopening. */
  broken: string[];
  state: unknown;
  /** What the file looked like before reopening, when that is worth a column (migrations). */
  note?: string;
  ms: number;
}

async function cellPath(op: Op, tag: string): Promise<string> {
  const b = await base(op.base);
  const dir = join(work, `${op.id}-${tag.replace(/[^a-z0-9]+/gi, '_')}`);
  if (op.base === 'workspace') {
    await cp(b.path, dir, { recursive: true });
    return dir;
  }
  await mkdir(dir, { recursive: true });
  await copyFile(b.path, join(dir, 'kb.db'));
  return join(dir, 'kb.db');
}

/** Children that load ragloom once, started ahead (crash-warm.ts). */
const children = new WarmPool(LANES);

async function runChild(op: Op, path: string, args: P, point: string | null, log: string): Promise<{ code: number | null; signal: string | null; out: string }> {
  const child = await children.take();
  const r = await child.run({ op: op.id, store: { path }, args, point, log }, 30_000);
  children.give(child);
  if (r.killed) return { code: child.exited?.code ?? null, signal: child.exited?.signal ?? null, out: child.err };
  return r.error ? { code: 1, signal: null, out: r.error } : { code: 0, signal: null, out: 'done' };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reopens with the public Client (which recovers: re-queues a parse whose owner is dead), waits
 * until no document is RUNNING (at most 20 s), closes, then checks the file.
 */
async function reopen(op: Op, path: string): Promise<{ broken: string[]; state: unknown }> {
  if (op.base === 'workspace') return reopenWorkspace(path);
  const broken: string[] = [];
  try {
    const client = new Client({ path, models: op.base === 'extract' ? extractorModels() : undefined });
    const probe = new Database(path, { readonly: true });
    try {
      const running = probe.prepare("SELECT COUNT(*) FROM document WHERE run = '1'").pluck();
      for (const until = Date.now() + 20_000; (running.get() as number) > 0 && Date.now() < until;) await sleep(25);
      // A retrieval runs on the reopened file (the in-memory indexes load from it).
      const ds = (await client.listDatasets()).map((d) => d.id);
      if (ds.length) await client.retrieve({ question: 'harbour lighthouse tide', dataset_ids: ds });
    } finally {
      probe.close();
      await client.close();
    }
  } catch (e) {
    broken.push(`reopen: ${(e as Error).message}`);
    return { broken, state: null };
  }
  const db: Db = openDatabase(path);
  try {
    return { broken: [...broken, ...checkInvariants(db)], state: snapshot(db) };
  } finally {
    db.close();
  }
}

async function reopenWorkspace(dir: string): Promise<{ broken: string[]; state: unknown }> {
  try {
    const ws = await Workspace.open(dir);
    const names = ws.datasets.list().map((d) => d.name);
    const broken = ws.recovered.length ? [`workspace: records recovered from folders (${ws.recovered.join(', ')})`] : [];
    // The folder stays usable: another save and open keep the same records.
    await ws.save();
    const again = (await Workspace.open(dir)).datasets.list().map((d) => d.name);
    if (!isDeepStrictEqual(again, names)) broken.push(`workspace: saved again, reopened as ${again.join(', ')}`);
    return { broken, state: { datasets: names } };
  } catch (e) {
    return { broken: [`workspace: open failed: ${(e as Error).message}`], state: null };
  }
}

async function runCell(op: Op, point: string | null): Promise<Cell> {
  const t0 = performance.now();
  const b = await base(op.base);
  const path = await cellPath(op, point ?? 'good');
  const logFile = `${path}.points`;
  const t1 = performance.now();
  const r = await runChild(op, path, b.args, point, logFile);
  const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : [];
  const t2 = performance.now();
  const left = op.base === 'v3' ? migrationLeft(path) : { broken: [], note: '' };
  const { broken, state } = await reopen(op, path);
  if (process.env.RAGLOOM_CRASH_TIMING) console.log(`${op.id} ${point}: prep ${(t1 - t0).toFixed(0)} child ${(t2 - t1).toFixed(0)} reopen ${(performance.now() - t2).toFixed(0)}`);
  return { op: op.id, point, signal: r.signal, code: r.code, log, output: r.out.slice(-2000), broken: [...left.broken, ...broken], state, note: left.note, ms: performance.now() - t0 };
}

/**
 * A killed migration, before anything reopens (and so finishes) it: the file must be whole at the
 * version it says — step 4's full-text rebuild and step 9's key hashing entirely there or not at all.
 */
function migrationLeft(path: string): { broken: string[]; note: string } {
  const db = new Database(path);
  try {
    const v = db.pragma('user_version', { simple: true }) as number;
    const broken: string[] = [];
    const cols = (db.prepare('PRAGMA table_info(api_token)').all() as { name: string }[]).map((c) => c.name);
    const tokens = db.prepare(`SELECT ${cols.includes('token') ? 'token' : 'token_sha256'} FROM api_token`).pluck().all() as string[];
    const hashed = createHash('sha256').update('ragflow-old-clear-key').digest('hex');
    if (v < 9 ? !cols.includes('token') || tokens[0] !== 'ragflow-old-clear-key' : !cols.includes('token_sha256') || tokens[0] !== hashed) {
      broken.push(`migration: at version ${v}, api_token is ${JSON.stringify({ cols, tokens })}`);
    }
    const fts = db.prepare('SELECT COUNT(*) FROM chunk_fts').pluck().get() as number;
    const chunks = db.prepare('SELECT COUNT(*) FROM chunk').pluck().get() as number;
    if (fts !== chunks) broken.push(`migration: at version ${v}, ${fts} FTS rows for ${chunks} chunks`);
    return { broken, note: `left at v${v}` };
  } finally {
    db.close();
  }
}

/** The state of an untouched copy of a baseline (the same for every operation on it), reopened the same way. */
async function runBefore(op: Op): Promise<{ broken: string[]; state: unknown }> {
  return reopen(op, await cellPath(op, 'before'));
}

// ---------------------------------------------------------------- the run

/** By baseline. */
const before = new Map<BaseName, { broken: string[]; state: unknown }>();
const cells = new Map<string, Cell>();
const key = (op: string, point: string | null) => `${op}|${point ?? ''}`;
let started = 0;
let elapsed = 0;

async function pool(jobs: Array<() => Promise<void>>, lanes: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

beforeAll(async () => {
  started = performance.now();
  work = await mkdtemp(join(tmpdir(), 'ragloom-crash-'));
  chat = await startChatServer();
  children.warmUp();
  // Baselines are built when a job first needs one (the lightest first, while the other lane runs children).
  const jobs: Array<() => Promise<void>> = [];
  // A job that throws is recorded as broken, not left to stop the others.
  const failed = (op: Op, point: string | null, e: unknown): Cell =>
    ({ op: op.id, point, signal: null, code: null, log: [], output: '', broken: [`test harness: ${(e as Error).stack ?? String(e)}`], state: null, ms: 0 });
  const cell = (op: Op, point: string | null) => async () => void cells.set(key(op.id, point), await runCell(op, point).catch((e) => failed(op, point, e)));
  const order: BaseName[] = ['workspace', 'v3', 'common', 'extract'];
  for (const name of order.filter((n) => OPS.some((o) => o.base === n))) {
    const op = OPS.find((o) => o.base === name)!;
    jobs.push(async () => void before.set(name, await runBefore(op).catch((e) => ({ broken: [`test harness: ${(e as Error).stack}`], state: null }))));
  }
  for (const op of OPS) jobs.push(cell(op, null));
  // Kill points interleaved across operations: the slow ones (parse recovery) spread out.
  const longest = Math.max(...OPS.map((o) => o.points.length));
  for (let i = 0; i < longest; i++) {
    for (const op of OPS) {
      const p = op.points[i];
      if (p) jobs.push(cell(op, p[0]));
    }
  }
  await pool(jobs, LANES);
  elapsed = performance.now() - started;
}, 240_000);

afterAll(async () => {
  children.stopAll();
  if (process.env.RAGLOOM_WRITE_DOCS === '1' && OPS === ALL_OPS && cells.size) await writeDocs();
  await chat?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

type Verdict = { held: boolean; reopenedAs: string; why: string[] };

/** A kill cell's verdict: reached, killed, consistent, and atomic (before or after). */
function verdict(op: Op, c: Cell): Verdict {
  const why: string[] = [];
  const b = before.get(op.base)!;
  const good = cells.get(key(op.id, null))!;
  if (c.point !== null) {
    if (c.signal !== 'SIGKILL') why.push(`not killed at ${c.point} (exit ${c.code}, signal ${c.signal}): the point was not reached. Output: ${c.output.slice(-600)}`);
    else if (c.log[c.log.length - 1] !== c.point) why.push(`killed, but ${c.point} was not the last point logged (${c.log.slice(-1)[0]})`);
  } else if (c.code !== 0 || !c.output.includes('done')) why.push(`the good run failed (exit ${c.code}, signal ${c.signal}): ${c.output}`);
  why.push(...c.broken);
  const isBefore = isDeepStrictEqual(c.state, b.state);
  const isAfter = isDeepStrictEqual(c.state, good.state);
  const reopenedAs = isBefore && isAfter ? 'old = new' : isBefore ? 'old' : isAfter ? 'new' : 'neither';
  if (reopenedAs === 'neither') {
    why.push(`atomicity: the reopened content is neither the state before the operation (differs at ${firstDiff(c.state, b.state)}) nor the state after it (differs at ${firstDiff(c.state, good.state)})`);
  }
  return { held: why.length === 0, reopenedAs, why };
}

/** Where two snapshots first differ: a path and the two values, shortened. */
function firstDiff(a: unknown, b: unknown, path = ''): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDiff((a as P)[k], (b as P)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  const show = (v: unknown) => JSON.stringify(v)?.slice(0, 120);
  return `${path || '.'}: ${show(a)} vs ${show(b)}`;
}

describe('crash matrix: the checks themselves', () => {
  it.skipIf(!!ONLY?.length)('drives every kill point at least once (each once by default)', () => {
    const driven = OPS.flatMap((o) => o.points.map(([p]) => p));
    const all = new Set(ALL_OPS.flatMap((o) => o.points.map(([p]) => p)));
    expect([...all].filter((p) => !driven.includes(p))).toEqual([]);
    if (!FULL) expect(driven.length).toBe(all.size);
  });

  it('the baselines reopen consistent', () => {
    for (const [name, b] of before) expect(b.broken, name).toEqual([]);
    expect(before.size).toBe(new Set(OPS.map((o) => o.base)).size);
  });

  it('fail on a broken file: each corruption is caught by its rule', async () => {
    const b = await base('common');
    const cases: Array<[string, string, (db: Db) => void]> = [
      ['chunk ↔ FTS', 'an FTS row deleted', (db) => db.prepare('DELETE FROM chunk_fts WHERE rowid = (SELECT MIN(rowid) FROM chunk)').run()],
      ['chunk ↔ vector', 'a vector row deleted', (db) => db.prepare('DELETE FROM vec_256 WHERE rowid = (SELECT MIN(rowid) FROM chunk)').run()],
      ['memory ↔ FTS', 'a memory FTS row deleted', (db) => db.prepare('DELETE FROM memory_fts WHERE rowid = (SELECT MIN(id) FROM memory_message)').run()],
      ['memory totals', 'used_bytes off by one', (db) => db.prepare('UPDATE memory SET used_bytes = used_bytes + 1').run()],
      ['memory totals', 'a message deleted behind the totals', (db) => db.prepare('DELETE FROM memory_message WHERE id = (SELECT MIN(id) FROM memory_message)').run()],
      ['document RUNNING', 'a document left RUNNING', (db) => db.prepare("UPDATE document SET run = '1' WHERE name = 'd1.txt'").run()],
      ['parse owners', 'a finished parse still owned', (db) => db.prepare("INSERT INTO parse_owner (document_id, pid, host, heartbeat) SELECT id, 1, 'h', 0 FROM document WHERE name = 'harbour.txt'").run()],
      ['blobs', 'a referenced blob deleted', (db) => (db.pragma('foreign_keys = OFF'), db.prepare("DELETE FROM blob WHERE sha256 = (SELECT blob_sha256 FROM document WHERE name = 'd4.txt')").run())],
      ['blobs', 'an unreferenced blob left', (db) => db.prepare("INSERT INTO blob (sha256, size, data) VALUES (?, 1, x'00')").run(createHash('sha256').update(Buffer.from([0])).digest('hex'))],
      ['counters', "a document's chunk count off", (db) => db.prepare("UPDATE document SET chunk_num = chunk_num + 1 WHERE name = 'd1.txt'").run()],
      ['chat sessions', 'an answer lost', (db) => db.prepare("DELETE FROM chat_message WHERE seq = (SELECT MAX(seq) FROM chat_message WHERE role = 'assistant')").run()],
      ['agent sessions', "a run's messages without its dsl", (db) => db.prepare("DELETE FROM agent_message WHERE role = 'user'").run()],
      ['agent versions', 'the newest version lost', (db) => db.prepare('DELETE FROM agent_version WHERE rowid = (SELECT MAX(rowid) FROM agent_version)').run()],
      ['foreign keys', 'a chunk of a deleted document', (db) => (db.pragma('foreign_keys = OFF'), db.prepare("DELETE FROM document WHERE name = 'd2.txt'").run())],
    ];
    const clean = openDatabase(b.path);
    const good = snapshot(clean);
    expect(checkInvariants(clean)).toEqual([]);
    clean.close();
    for (const [i, [rule, what, corrupt]] of cases.entries()) {
      const path = join(work, `selftest-${i}.db`);
      await copyFile(b.path, path);
      const db = openDatabase(path);
      corrupt(db);
      const found = checkInvariants(db);
      db.close();
      expect(found.some((l) => l.startsWith(`${rule}:`)), `${what} → ${rule}; found ${JSON.stringify(found)}`).toBe(true);
    }
    // A half-applied migration step is seen before reopening.
    const v3 = await base('v3');
    for (const [what, sql] of [['renamed, not hashed', 'ALTER TABLE api_token RENAME COLUMN token TO token_sha256'], ['FTS cleared', "INSERT INTO chunk_fts (chunk_fts) VALUES ('delete-all')"]]) {
      const path = join(work, `selftest-v3-${what.replace(/\W+/g, '-')}.db`);
      await copyFile(v3.path, path);
      const raw = new Database(path);
      raw.exec(sql!);
      raw.close();
      expect(migrationLeft(path).broken, what).not.toEqual([]);
    }
    expect(migrationLeft(v3.path).broken).toEqual([]);
    // And the atomicity check sees a changed chunk.
    const path = join(work, 'selftest-snapshot.db');
    await copyFile(b.path, path);
    const db = openDatabase(path);
    db.prepare("UPDATE chunk SET content = content || '!' WHERE rowid = (SELECT MIN(rowid) FROM chunk)").run();
    expect(isDeepStrictEqual(snapshot(db), good)).toBe(false);
    db.close();
  });
});

/** A snapshot (plain JSON), read by name. */
type S = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const named = (list: S[], name: string): S => list.find((x) => x.name === name || x.title === name)!;
const docs = (s: S, ds: string): S[] => named(s.datasets, ds).documents;
const doc = (s: S, ds: string, name: string): S => named(docs(s, ds), name);
const mem = (s: S, name: string): S => named(s.memories, name);
const session = (s: S, name: string): S => named(named(s.chats, 'harbour').sessions, name);
/** What a good run of each operation changed, beyond "something". */
const DID: Record<string, (b: S, a: S) => void> = {
  upload: (b, a) => {
    expect(docs(a, 'A').map((d) => d.name)).toEqual([...docs(b, 'A').map((d) => d.name), 'd1(1).txt', 'new.txt'].sort());
    expect(a.blobs.length).toBe(b.blobs.length + 1); // the duplicate's bytes stored once
  },
  replace: (b, a) => {
    expect(doc(a, 'A', 'd4.txt').blob_sha256).not.toBe(doc(b, 'A', 'd4.txt').blob_sha256);
    expect(doc(a, 'A', 'd4.txt').chunks).toEqual(doc(b, 'A', 'd4.txt').chunks); // kept until the next parse
    expect(a.blobs.length).toBe(b.blobs.length); // d4's old bytes pruned, the new stored
  },
  parse: (b, a) => expect(doc(a, 'A', 'harbour.txt')).toMatchObject({ run: '3', chunk_num: doc(b, 'A', 'harbour.txt').chunk_num }),
  'parse.batch': (b, a) => {
    for (const name of ['d1.txt', 'd2.txt', 'd4.txt']) {
      expect(doc(a, 'A', name)).toMatchObject({ run: '3', chunk_num: 1 }); // the added chunks replaced by the parsed one
      expect(doc(b, 'A', name).chunks.length).toBeGreaterThan(0);
    }
  },
  'chunk.add': (b, a) => expect(doc(a, 'A', 'd1.txt').chunks.length).toBe(doc(b, 'A', 'd1.txt').chunks.length + 1),
  'chunk.update': (_b, a) => expect(doc(a, 'A', 'd1.txt').chunks.map((c: S) => c.content)).toContain('The first chunk, rewritten: storms close the harbour in winter.'),
  'chunk.delete': (b, a) => expect(doc(a, 'A', 'd1.txt').chunks.length).toBe(doc(b, 'A', 'd1.txt').chunks.length - 2),
  'document.delete': (b, a) => {
    expect(docs(a, 'A').map((d) => d.name)).toEqual(docs(b, 'A').map((d) => d.name).filter((n) => n !== 'd2.txt' && n !== 'd4.txt'));
    expect(a.blobs.length).toBe(b.blobs.length - 1); // d4's bytes pruned, d2's kept for d1
  },
  'dataset.delete': (b, a) => {
    expect(a.datasets.map((d: S) => d.name)).toEqual(['A']);
    expect(a.blobs.length).toBe(b.blobs.length - 1); // B's bytes pruned, C's kept for d3
  },
  'session.create': (b, a) => expect(named(a.chats, 'harbour').sessions.length).toBe(named(b.chats, 'harbour').sessions.length + 1),
  'chat.completion': (b, a) => expect(session(a, 'a').messages.length).toBe(session(b, 'a').messages.length + 2),
  'sessions.delete': (_b, a) => expect(named(a.chats, 'harbour').sessions.map((s: S) => s.name)).toEqual(['a']),
  'chats.delete': (_b, a) => expect(a.chats.map((c: S) => c.status)).toEqual(['1', '0', '0']),
  'memory.add': (b, a) => {
    expect(mem(a, 'notes').message_count).toBe(mem(b, 'notes').message_count - 1); // two evicted, one added
    expect(mem(a, 'journal').message_count).toBe(1);
  },
  'memory.extract': (b, a) => {
    expect(mem(a, 'facts').messages.map((m: S) => m.message_type)).toEqual(['raw', 'semantic', 'semantic']); // two older raw messages evicted
    expect(mem(a, 'facts').tasks.map((t: S) => t.status)).toEqual(['done', 'done', 'done']);
    expect(mem(b, 'facts').messages.length).toBe(3);
  },
  'agent.create': (b, a) => expect(a.agents.length).toBe(b.agents.length + 1),
  'agent.update': (b, a) => {
    expect(named(a.agents, 'echo').versions.length).toBe(named(b.agents, 'echo').versions.length); // one written, the oldest pruned
    expect(named(a.agents, 'echo').versions.at(-1).dsl).toContain('saved by the crash test');
  },
  'agent.session': (b, a) => expect(named(a.agents, 'echo').sessions.length).toBe(named(b.agents, 'echo').sessions.length + 1),
  'agent.completion': (b, a) => expect(named(a.agents, 'echo').sessions[0].round).toBe(named(b.agents, 'echo').sessions[0].round + 1),
  'workspace.save': (b, a) => expect([b.datasets, a.datasets]).toEqual([['old'], ['new']]),
  migrate: (_b, a) => expect(a.version).toBe(SCHEMA_VERSION),
};

describe.each(OPS)('crash matrix: $label', (op) => {
  it('good run: passes every kill point, checks hold, state = after', () => {
    const c = cells.get(key(op.id, null))!;
    const v = verdict(op, c);
    expect(v.why).toEqual([]);
    const missing = op.points.map(([p]) => p).filter((p) => !c.log.includes(p));
    expect(missing, `points a good run of ${op.id} never reaches`).toEqual([]);
    // The run did what the row says (evicted, pruned, deduplicated …): the kill points sit on real work.
    DID[op.id]?.(before.get(op.base)!.state as S, c.state as S);
  });
  it.each(op.points)('killed at %s (%s)', (point) => {
    const c = cells.get(key(op.id, point))!;
    expect(verdict(op, c).why).toEqual([]);
  });
});

// ---------------------------------------------------------------- docs/reliability.md

const INTRO = `# Reliability

What ragloom guarantees when things go wrong, and the tests that prove it. Each section is
written by the test named in it, from a real run; numbers and tables are not typed by hand.
`;

async function writeDocs(): Promise<void> {
  const rows: string[] = [];
  let kills = 0;
  let held = 0;
  for (const op of OPS) {
    const good = cells.get(key(op.id, null));
    if (!good) continue;
    const order = (p: string) => good.log.indexOf(p);
    const gv = verdict(op, good);
    rows.push(`| **${op.label}** | — (no fault) | completes | ${gv.reopenedAs} | ${gv.held ? 'held' : `**broken**: ${gv.why.join('; ')}`} |`);
    for (const [point, what] of [...op.points].sort((x, y) => order(x[0]) - order(y[0]))) {
      const c = cells.get(key(op.id, point));
      if (!c) continue;
      const v = verdict(op, c);
      kills++;
      if (v.held) held++;
      rows.push(`| | \`${point}\` | ${what} | ${v.reopenedAs}${c.note ? ` (${c.note})` : ''} | ${v.held ? 'held' : `**broken**: ${v.why.join('; ').replace(/\|/g, '\\|')}`} |`);
    }
  }
  const section = `## Crash matrix

Written by \`test/faults/crash-matrix.test.ts\` (\`RAGLOOM_WRITE_DOCS=1 npx vitest run test/faults/crash-matrix.test.ts\`).
By default the test drives each kill point once, at the first operation that has it (a point that
several operations reach runs the same code there), after every operation's good run;
\`RAGLOOM_CRASH_FULL=1\` drives every point of every operation, as writing this table does.
For every write operation a child process runs it on a copy of a prepared database and is
SIGKILLed at each named kill point (\`faultPoint()\` in \`src/util/fault.ts\`, armed by
\`RAGLOOM_FAULT_POINT\`; a point the operation does not reach fails the test). The file is then
reopened with the public \`Client\`, which recovers what the dead process left (a parse owned by a
dead pid is parsed again), and must pass every check: \`PRAGMA integrity_check\`, foreign keys and
FTS5 integrity; chunk rows, FTS rows and vector rows one to one; memory messages and their FTS
rows one to one, with \`used_bytes\` and \`message_count\` equal to the sums over the messages; no
document RUNNING; every document's blob stored and no blob unreferenced; document and dataset
counters equal to their rows; chat sessions whole (prologue, then question/answer pairs); agent
sessions whose round, messages and canvas state agree; agents whose newest version holds their
canvas. *Reopened as* compares the file's whole logical content with the content before the
operation (**old**) and after a good run of it (**new**): anything else is a partial write and
fails (*old = new*: the operation ends where it began, as a re-parse or a migration does once
recovered). The checks are themselves tested: corrupting a good file in each way is caught.

${kills} kill points over ${OPS.length} operations: **${held} held**, ${kills - held} broken (run time ${(elapsed / 1000).toFixed(0)} s, ${LANES} children at a time).

What the matrix found, and the fixes:

- *Memory add to several memories* wrote one transaction per memory: killed after the first
  memory's commit (\`memory.add:committed\`), the message was in the first memory and not in the
  second (reopened as neither). Now every memory's message is embedded first and all are written
  in one transaction (\`src/api/memories.ts\`).
- *Parse*: killed after the swap committed but before the parse released its ownership
  (\`parse:swapped\`), a \`parse_owner\` row of the dead process stayed behind for a finished
  document, for good. Now opening a file drops dead owners' rows of documents nobody is parsing
  (\`src/core/parse-queue.ts\`), and the swap releases the ownership in its own transaction.

A memory extraction task claimed by a process that is killed stays pending, and is retried once
its lease runs out (\`TASK_LEASE_MS\`, 30 s; the working process renews it every 10 s, so a slow
model call is never run twice, and a claimer that lost its lease stores nothing —
\`test/memory/task-lease.test.ts\`); nothing is lost, it is only late.

| Operation | Kill point | The process dies … | Reopened as | Result |
|---|---|---|---|---|
${rows.join('\n')}
`;
  let text = existsSync(DOCS) ? await readFile(DOCS, 'utf8') : INTRO;
  const start = text.indexOf('## Crash matrix');
  if (start >= 0) {
    const rest = text.slice(start + 3);
    const next = rest.search(/^## /m);
    text = text.slice(0, start) + section + (next >= 0 ? `\n${rest.slice(next)}` : '');
  } else text = `${text.trimEnd()}\n\n${section}`;
  await writeFile(DOCS, text);
}

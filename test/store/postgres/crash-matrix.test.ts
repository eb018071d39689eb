/**
 * The crash matrix on PostgreSQL: the same operations and named kill points as SQLite's
 * (test/faults/crash-ops.ts, the shared list; a point only one store's code has says so), driven
 * through the Api on a PostgreSQL store. For every operation a child process runs it on a copy of a
 * prepared database (CREATE DATABASE … TEMPLATE) and is SIGKILLed at each point; the server rolls
 * back what the dead connections had not committed. The test then reopens the database with the
 * public Client — which recovers what the dead process left (its parse leases run out and the
 * documents are parsed again) — and checks:
 *
 * - PostgreSQL's own invariants: every blob's parts whole, no staged bytes left once swept, no
 *   parse job or parse claim left for a document nobody parses;
 * - the store's invariants and content: the database is copied into a SQLite file (`copyStore`,
 *   ids and rows kept) and checked by SQLite's matrix checks (crash-checks.ts: memory totals,
 *   counters, blobs by hash, sessions whole, agent versions …), and its logical content must equal
 *   the content before the operation or after a good run of it.
 *
 * Kept short: one cluster (the run's), one database per cell copied from a template, and children
 * that load ragloom once and run operations until one is killed (fixtures/crash-child-warm.mjs),
 * started ahead so that a killed child's successor is ready.
 * RAGLOOM_CRASH_OPS=<id,id> runs only those operations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Client } from '../../../src/index.js';
import { Api } from '../../../src/api/index.js';
import { openDatabase } from '../../../src/store/index.js';
import { copyStore } from '../../../src/store/copy.js';
import { openPostgres, sweepStaged } from '../../../src/store/postgres/index.js';
import type { ModelConfig } from '../../../src/embed/index.js';
import { startChatServer, type ChatServer } from '../../support/chat-server.js';
import { adminQuery, createDatabase, dropDatabase, pgUrl } from '../../support/postgres.js';
import { checkInvariants, snapshot } from '../../faults/crash-checks.js';
import { ALL_OPS, eachPointOnce, fillCommon, fillExtract, pointsOn, type BaseName, type Op } from '../../faults/crash-ops.js';
import { WarmPool } from '../../faults/crash-warm.js';
import { server } from './fixture.js';

const SRC_PG = fileURLToPath(new URL('../../../src/store/postgres/', import.meta.url));
/**
 * Cells at a time. Three on two cores: a cell spends much of its time waiting (a child warming
 * up, a dead child's leases running out, polls), so a third overlaps those waits — 60 cells in
 * 67 / 92 s against 88 / 119 s with two, back to back at load averages of 7–8 / 12–13.
 * RAGLOOM_CRASH_LANES changes it.
 */
const LANES = Number(process.env.RAGLOOM_CRASH_LANES) || 3;
/** A dead child's parse leases run out this fast, so the reopened Client parses its documents again at once. */
const CHILD_LEASE_MS = 800;

const ONLY = process.env.RAGLOOM_CRASH_OPS?.split(',').filter(Boolean);
const FULL = process.env.RAGLOOM_CRASH_FULL === '1' || !!ONLY?.length;
/** The operations and points of the shared list that run on PostgreSQL. */
const PG_OPS: Op[] = ALL_OPS.filter((o) => !o.stores || o.stores.includes('postgres')).map((o) => ({ ...o, points: pointsOn(o, 'postgres') }));
/** Operations whose killed work a live process takes over (parse leases, extraction tasks): their cells reopen with the Client. */
const RECOVERING = new Set(['parse', 'parse.batch', 'memory.extract']);
/** A kill after the operation's last commit: its state is the good run's, unless work after the commit is lost. */
const AFTER_COMMIT = /:(committed|saved|swapped)$/;
/**
 * The cells of a run. Every operation's good run, and its kill points — by default each point
 * once (the first operation that has it) and none after a last commit: a new child process per
 * kill is the cost, and those cells are where "before or after, never in between" is at stake.
 * RAGLOOM_CRASH_FULL=1 drives every point of every operation (the lead's check, minutes).
 */
const OPS: Op[] = (() => {
  const ops = ONLY?.length ? PG_OPS.filter((o) => ONLY.includes(o.id)) : PG_OPS;
  return FULL ? ops : eachPointOnce(ops, (p) => AFTER_COMMIT.test(p));
})();

type P = Record<string, unknown>;
interface Cell {
  point: string | null;
  signal: string | null;
  error: string;
  log: string[];
  broken: string[];
  state: unknown;
}

let work = '';
let chat: ChatServer;
const extractorModels = (): ModelConfig[] => [{ type: 'chat', name: 'extractor', factory: 'OpenAI-API-Compatible', base_url: chat.url }];
const bases = new Map<BaseName, { name: string; args: P }>();
const before = new Map<BaseName, { broken: string[]; state: unknown }>();
const cells = new Map<string, Cell>();
const key = (op: string, point: string | null) => `${op}|${point ?? ''}`;
const dbName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));
let seq = 0;
let elapsed = 0;

/** Children that load ragloom once, started ahead (test/faults/crash-warm.ts). */
const children = new WarmPool(LANES, { RAGLOOM_PARSE_LEASE_MS: String(CHILD_LEASE_MS) });

// ---------------------------------------------------------------- cells

async function clone(base: BaseName): Promise<string> {
  const url = pgUrl(server!, `crashcell_${process.pid}_${seq++}`);
  await adminQuery(server!, `CREATE DATABASE "${dbName(url)}" TEMPLATE "${bases.get(base)!.name}"`);
  return url;
}

/**
 * Reopens with the public Client (which parses again what a dead process was parsing), waits until
 * no document is RUNNING (at most 20 s), runs a retrieval, closes; then PostgreSQL's invariants,
 * and the store's, on a SQLite copy. Without `withClient`, only the checks: the server itself
 * rolled back what the dead process had not committed, and only parsing and extraction have work
 * a live process takes over (RECOVERING).
 */
async function reopen(op: Op, url: string, tag: string, withClient = true): Promise<{ broken: string[]; state: unknown }> {
  const broken: string[] = [];
  if (withClient) {
    try {
      const client = new Client({ postgres: url, models: op.base === 'extract' ? extractorModels() : undefined });
      try {
        for (const until = Date.now() + 20_000; Date.now() < until;) {
          const [r] = await adminRows<{ n: number }>(url, "SELECT count(*)::int AS n FROM document WHERE run = '1'");
          if (!r!.n) break;
          await new Promise((res) => setTimeout(res, 50));
        }
        const ds = (await client.listDatasets()).map((d) => d.id);
        if (ds.length) await client.retrieve({ question: 'harbour lighthouse tide', dataset_ids: ds });
      } finally {
        await client.close();
      }
    } catch (e) {
      return { broken: [`reopen: ${(e as Error).message}`], state: null };
    }
  }
  const db = await openPostgres({ connection: url });
  try {
    await sweepStaged(db, -1_000); // what a live process removes an hour after an upload died
    const bad = await db.rows<{ sha256: string }>(`SELECT b.sha256 FROM blob b LEFT JOIN blob_part p ON p.content_id = b.content_id
      GROUP BY b.sha256, b.parts, b.size HAVING b.parts <> count(p.n) OR b.size <> COALESCE(sum(length(p.data)), 0)`);
    if (bad.length) broken.push(`pg blobs: ${bad.length} blobs whose parts are not whole`);
    const staged = await db.rows('SELECT id FROM blob_content c WHERE NOT EXISTS (SELECT 1 FROM blob b WHERE b.content_id = c.id)');
    if (staged.length) broken.push(`pg blobs: ${staged.length} staged contents left after the sweep`);
    const jobs = await db.rows<{ name: string }>(`SELECT d.name FROM parse_job j JOIN document d ON d.id = j.document_id WHERE d.run <> '1'`);
    if (jobs.length) broken.push(`pg parse jobs: queued for documents nobody parses: ${jobs.map((j) => j.name).join(', ')}`);
    const owners = await db.rows<{ name: string }>(`SELECT d.name FROM parse_owner o JOIN document d ON d.id = o.document_id WHERE d.run <> '1'`);
    if (owners.length) broken.push(`pg parse owners: claims of documents nobody parses: ${owners.map((j) => j.name).join(', ')}`);
  } finally {
    await db.close();
  }
  const path = join(work, `${tag}.db`);
  try {
    await copyStore({ postgres: url }, { path });
  } catch (e) {
    return { broken: [...broken, `copy: ${(e as Error).message}`], state: null };
  }
  const sqlite = openDatabase(path);
  try {
    return { broken: [...broken, ...checkInvariants(sqlite)], state: snapshot(sqlite) };
  } finally {
    sqlite.close();
  }
}

async function adminRows<R extends Record<string, unknown>>(url: string, sql: string): Promise<R[]> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as R[];
  } finally {
    await c.end();
  }
}

async function runCell(op: Op, point: string | null): Promise<Cell> {
  const t0 = performance.now();
  const url = await clone(op.base);
  const tag = `${op.id}-${(point ?? 'good').replace(/[^a-z0-9]+/gi, '_')}`;
  const log = join(work, `${tag}.points`);
  const child = await children.take();
  const r = await child.run({ op: op.id, store: { postgres: url }, args: bases.get(op.base)!.args, point, log });
  children.give(child);
  const t1 = performance.now();
  const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  const { broken, state } = await reopen(op, url, tag, point === null || RECOVERING.has(op.id));
  if (process.env.RAGLOOM_CRASH_TIMING) console.log(`${tag}: child ${(t1 - t0).toFixed(0)} ms, reopen and checks ${(performance.now() - t1).toFixed(0)} ms`);
  await dropDatabase(server!, url).catch(() => undefined);
  return { point, signal: r.killed, error: r.error, log: lines, broken, state };
}

async function pool(jobs: Array<() => Promise<void>>, lanes: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < jobs.length) await jobs[next++]!();
  }));
}

beforeAll(async () => {
  if (!server) return;
  const t0 = performance.now();
  work = await mkdtemp(join(tmpdir(), 'ragloom-pg-crash-'));
  chat = await startChatServer();
  children.warmUp();
  for (const base of new Set(OPS.map((o) => o.base))) {
    const url = await createDatabase(server, `crashbase_${base}`);
    const args = base === 'common'
      ? await fillCommon(await Api.open({ postgres: url }))
      : await fillExtract(await Api.open({ postgres: url, models: extractorModels() }), chat);
    bases.set(base, { name: dbName(url), args });
  }
  const failed = (point: string | null, e: unknown): Cell => ({ point, signal: null, error: '', log: [], broken: [`test harness: ${(e as Error).stack ?? String(e)}`], state: null });
  const jobs: Array<() => Promise<void>> = [];
  for (const base of bases.keys()) {
    const op = OPS.find((o) => o.base === base)!;
    jobs.push(async () => {
      const url = await clone(base);
      before.set(base, await reopen(op, url, `before-${base}`).catch((e) => ({ broken: [`test harness: ${(e as Error).stack}`], state: null })));
      await dropDatabase(server!, url).catch(() => undefined);
    });
  }
  for (const op of OPS) jobs.push(async () => void cells.set(key(op.id, null), await runCell(op, null).catch((e) => failed(null, e))));
  const longest = Math.max(...OPS.map((o) => o.points.length));
  for (let i = 0; i < longest; i++) {
    for (const op of OPS) {
      const p = op.points[i];
      if (p) jobs.push(async () => void cells.set(key(op.id, p[0]), await runCell(op, p[0]).catch((e) => failed(p[0], e))));
    }
  }
  await pool(jobs, LANES);
  elapsed = performance.now() - t0;
}, 900_000);

afterAll(async () => {
  children.stopAll();
  await chat?.close();
  if (server) for (const b of bases.values()) await dropDatabase(server, pgUrl(server, b.name)).catch(() => undefined);
  if (work) await rm(work, { recursive: true, force: true });
  if (server && cells.size) console.log(`PostgreSQL crash matrix: ${cells.size} cells in ${(elapsed / 1000).toFixed(1)} s`);
});

function verdict(op: Op, c: Cell): string[] {
  const why: string[] = [];
  if (c.point !== null) {
    if (c.signal !== 'SIGKILL') why.push(`not killed at ${c.point} (${c.signal ?? 'finished'}${c.error ? `: ${c.error.slice(-600)}` : ''}): the point was not reached`);
    else if (c.log[c.log.length - 1] !== c.point) why.push(`killed, but ${c.point} was not the last point logged (${c.log.slice(-1)[0]})`);
  } else if (c.signal || c.error) why.push(`the good run failed (${c.signal ?? ''}): ${c.error.slice(-1500)}`);
  why.push(...c.broken);
  const b = before.get(op.base)!;
  const good = cells.get(key(op.id, null))!;
  if (!isDeepStrictEqual(c.state, b.state) && !isDeepStrictEqual(c.state, good.state)) {
    why.push(`atomicity: the reopened content is neither the state before the operation nor the state after it (${JSON.stringify(c.state)?.slice(0, 300)})`);
  }
  return why;
}

describe.skipIf(!server)('crash matrix on PostgreSQL', () => {
  it('the baselines reopen consistent', () => {
    for (const [name, b] of before) expect(b.broken, name).toEqual([]);
    expect(before.size).toBe(new Set(OPS.map((o) => o.base)).size);
  });

  it('the checks fail on a broken database: each corruption is caught by its rule', async () => {
    const cases: Array<[string, string]> = [
      ['pg blobs:', 'DELETE FROM blob_part WHERE (content_id, n) IN (SELECT content_id, max(n) FROM blob_part GROUP BY content_id LIMIT 1)'],
      ['pg parse owners:', "INSERT INTO parse_owner (document_id, pid, host, heartbeat) SELECT id, 1, 'h', 0 FROM document WHERE run = '3' LIMIT 1"],
      ['pg parse jobs:', "INSERT INTO parse_job (document_id, dataset_id, queued_at) SELECT id, dataset_id, 1 FROM document WHERE run = '3' LIMIT 1"],
      ['memory totals:', 'UPDATE memory SET used_bytes = used_bytes + 1'],
      ['counters:', 'UPDATE document SET chunk_num = chunk_num + 1 WHERE chunk_num > 0'],
    ];
    const op = OPS.find((o) => o.base === 'common')!;
    for (const [rule, sql] of cases) {
      const url = await clone('common');
      await adminRows(url, sql);
      const { broken } = await reopen(op, url, `selftest-${seq}`, false);
      await dropDatabase(server!, url).catch(() => undefined);
      expect(broken.some((l) => l.startsWith(rule)), `${sql} → ${rule}; found ${JSON.stringify(broken)}`).toBe(true);
    }
  }, 60_000);

  it('every named point of the PostgreSQL write paths is driven by a crash test', () => {
    // Points named in src/store/postgres: each is in the shared list for PostgreSQL, or in the
    // building blocks' crash test (crash.test.ts: file bytes, memory adds, claims, migrations).
    const named = new Set<string>();
    for (const f of readdirSync(SRC_PG).filter((n) => n.endsWith('.ts'))) {
      for (const m of readFileSync(join(SRC_PG, f), 'utf8').matchAll(/faultPoint\('([^']+)'\)/g)) named.add(m[1]!);
    }
    const blocks = readFileSync(fileURLToPath(new URL('./crash.test.ts', import.meta.url)), 'utf8');
    const driven = new Set(PG_OPS.flatMap((o) => o.points.map(([p]) => p)));
    const missing = [...named].filter((p) => !driven.has(p) && !blocks.includes(`'${p}'`));
    expect(missing, 'named in src/store/postgres but driven by no crash test: add them to test/faults/crash-ops.ts').toEqual([]);
    expect(named.size).toBeGreaterThan(20);
  });
});

describe.skipIf(!server).each(OPS)('crash matrix on PostgreSQL: $label', (op) => {
  it('good run: passes every kill point, checks hold, state = after', () => {
    const c = cells.get(key(op.id, null))!;
    if (process.env.RAGLOOM_CRASH_LOGS) console.log(op.id, c.log.join(' '));
    expect(verdict(op, c)).toEqual([]);
    const listed = PG_OPS.find((o) => o.id === op.id)!.points.map(([p]) => p);
    expect(listed.filter((p) => !c.log.includes(p)), `points a good run of ${op.id} never reaches on PostgreSQL`).toEqual([]);
  });
  it.each(op.points)('killed at %s (%s)', (point) => {
    expect(verdict(op, cells.get(key(op.id, point))!)).toEqual([]);
  });
});

/**
 * The PostgreSQL store's building blocks on a real server (issue 30, phase A): how fast a write on
 * one pool reaches a follower on another, how claims split work, how the memory budget behaves
 * under contention, how fast file bytes stream, and a bulk chunk insert. The Client-level figures
 * (ingest docs/s with 1 and 3 processes, search on a PostgreSQL-backed node vs SQLite, first search,
 * RSS per 100k chunks) join this script once the store is wired into the Client.
 *
 *   npx tsx bench/postgres.ts [--writes 300] [--jobs 3000] [--adds 2000] [--blob-mib 64] [--chunks 20000]
 *
 * Server: RAGLOOM_BENCH_POSTGRES=postgresql://… (its user must create databases), else a
 * throw-away cluster like the tests' (test/support/postgres-cluster.ts: fsync off, loopback).
 * "Pools" are separate `pg` pools in this one process, standing in for processes; the machine's
 * cores (2 here) bound every figure, and timings taken while other work loads the machine are
 * noisy: compare rows of one run, and run it again to re-measure.
 *
 * Prints one JSON object per measurement, then a Markdown table.
 */
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { launchCluster, stopCluster } from '../test/support/postgres-cluster.js';
import {
  openPostgres, feedStart, FeedFollower, claimJobs, holdLease, finishParseJob, enqueueParse, insertMessages, stageBlob, commitBlob,
  readBlob, PARSE_JOBS, type PgDb,
} from '../src/store/postgres/index.js';

const { values: args } = parseArgs({
  options: {
    writes: { type: 'string', default: '300' },
    jobs: { type: 'string', default: '3000' },
    adds: { type: 'string', default: '2000' },
    'blob-mib': { type: 'string', default: '64' },
    chunks: { type: 'string', default: '20000' },
  },
});

const results: Array<{ what: string; value: number; unit: string; note?: string }> = [];
function report(what: string, value: number, unit: string, note?: string): void {
  const r = { what, value: Math.round(value * 100) / 100, unit, ...(note ? { note } : {}) };
  results.push(r);
  console.log(JSON.stringify(r));
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let base: { url(db: string): string; stop(): void };
if (process.env.RAGLOOM_BENCH_POSTGRES) {
  const u = new URL(process.env.RAGLOOM_BENCH_POSTGRES);
  base = { url: (db) => Object.assign(new URL(u), { pathname: `/${db}` }).toString(), stop: () => undefined };
} else {
  const s = await launchCluster(process.pid);
  base = {
    url: (db) => `postgresql://postgres@127.0.0.1:${s.port}/${db}`,
    stop: () => {
      stopCluster(s.bin, s.dataDir, 'immediate');
      rmSync(s.home, { recursive: true, force: true });
    },
  };
}

let dbSeq = 0;
async function freshStore(pools = 1): Promise<PgDb[]> {
  const name = `bench_${process.pid}_${dbSeq++}`;
  const admin = new pg.Client({ connectionString: base.url('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = base.url(name);
  const first = await openPostgres({ connection: url });
  await first.tx(async (t) => {
    await t.run(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t1', 'local', 'm', 1);
      INSERT INTO "user" (id, nickname, create_time) VALUES ('u1', 'local', 1);
      INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('d1', 't1', 'kb', 'm', 'u1', 1, 1);
      INSERT INTO blob_content (create_time) VALUES (1);
      INSERT INTO blob (sha256, size, parts, content_id) SELECT 'seed', 0, 0, id FROM blob_content;
      INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
        VALUES ('doc0', 'd1', 'doc0.txt', 'doc', 0, 'seed', 'x', 'naive', 'u1', 1, 1)`);
  });
  return [first, ...(await Promise.all(Array.from({ length: pools - 1 }, () => openPostgres({ connection: url }))))];
}
const closeAll = (dbs: PgDb[]) => Promise.all(dbs.map((d) => d.close()));

const INSERT_CHUNK = `INSERT INTO chunk (id, document_id, dataset_id, content, create_time, create_timestamp) VALUES ($1, 'doc0', 'd1', 'x', 't', 1)`;

// 1. Change visibility: from a write's call on one pool to its apply by a follower on another (woken by NOTIFY).
for (const writers of [1, 3]) {
  const dbs = await freshStore(writers + 1);
  const reader = dbs[0]!;
  const committedAt = new Map<string, number>();
  const lags: number[] = [];
  const follower = new FeedFollower(reader, await feedStart(reader), {
    pollMs: 1_000,
    apply: async (changes) => {
      const now = performance.now();
      const ids = await reader.rows<{ id: string; rowid: number }>('SELECT id, rowid FROM chunk WHERE rowid = ANY($1)', [changes.map((c) => c.rid)]);
      for (const r of ids) {
        const t = committedAt.get(r.id);
        if (t !== undefined) lags.push(now - t);
      }
    },
  });
  await follower.start();
  const n = Number(args.writes);
  await Promise.all(dbs.slice(1).map(async (w, k) => {
    for (let i = 0; i < n / writers; i++) {
      const id = `w${k}-${i}`;
      committedAt.set(id, performance.now()); // from the writer's call: its commit's round trip is part of the lag
      await w.run(INSERT_CHUNK, [id]);
      await sleep(5 + Math.random() * 10);
    }
  }));
  await sleep(300);
  await follower.catchUp();
  await follower.stop();
  report(`change visibility lag, ${writers} writer pool(s) → 1 follower: p50`, pct(lags, 50), 'ms', `${lags.length} writes`);
  report(`change visibility lag, ${writers} writer pool(s) → 1 follower: p95`, pct(lags, 95), 'ms');
  await closeAll(dbs);
}

// 2. Claims: jobs claimed, "run" (no work) and finished through holdLease + finishParseJob.
for (const claimers of [1, 3]) {
  const dbs = await freshStore(claimers);
  const jobs = Number(args.jobs);
  await dbs[0]!.run(`INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
    SELECT 'j' || i, 'd1', 'j' || i, 'doc', 0, 'seed', 'x', 'naive', 'u1', 1, 1 FROM generate_series(1, $1) i`, [jobs]);
  await dbs[0]!.tx((t) => enqueueParse(t, Array.from({ length: jobs }, (_, i) => ({ document_id: `j${i + 1}`, dataset_id: 'd1' }))));
  const t0 = performance.now();
  await Promise.all(dbs.map(async (db) => {
    for (;;) {
      const leases = await claimJobs(db, PARSE_JOBS, 8, 30_000);
      if (!leases.length) return;
      await db.tx(async (t) => {
        for (const l of leases) if (await holdLease(t, PARSE_JOBS, l)) await finishParseJob(t, l);
      });
    }
  }));
  report(`parse jobs claimed and finished, ${claimers} claimer pool(s)`, jobs / ((performance.now() - t0) / 1000), 'jobs/s', 'batches of 8');
  await closeAll(dbs);
}

// 3. Memory adds (~200 bytes + a 256-d vector), one memory shared by all pools vs one memory each.
for (const [pools, shared] of [[1, true], [4, true], [4, false]] as const) {
  const dbs = await freshStore(pools);
  const budget = 200 * 1024;
  for (let m = 0; m < pools; m++) {
    await dbs[0]!.run(`INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, memory_size, created_by, create_time, update_time)
      VALUES ($1, 't1', $1, 'e', 'l', $2, 'u1', 1, 1)`, [`m${m}`, budget]);
  }
  const adds = Number(args.adds);
  const vector = new Float32Array(256).fill(0.0625);
  const t0 = performance.now();
  await Promise.all(dbs.map(async (db, k) => {
    for (let i = 0; i < adds / pools; i++) {
      const content = `message ${k}-${i} `.padEnd(200, 'x');
      const o = await db.tx((t) => insertMessages(t, shared ? 'm0' : `m${k}`, [{
        message_type: 'raw', source_id: 0, user_id: 'u', agent_id: 'a', session_id: 's', content, vector, valid_at: i, invalid_at: null, fifo_at: i,
        size: 200 + 4 * 256,
      }], { now: i }));
      if (!o.ok) throw new Error(JSON.stringify(o));
    }
  }));
  report(`memory adds (full budget: each evicts), ${pools} pool(s) into ${shared ? 'one memory' : 'a memory each'}`, adds / ((performance.now() - t0) / 1000), 'adds/s');
  await closeAll(dbs);
}

// 4. File bytes: staged in 1 MiB parts and published, then read back.
{
  const [db] = await freshStore(1);
  const mib = Number(args['blob-mib']);
  const piece = randomBytes(256 * 1024);
  async function* source() {
    for (let i = 0; i < mib * 4; i++) yield piece;
  }
  let t0 = performance.now();
  const staged = await stageBlob(db!, source());
  await db!.tx(async (t) => {
    await commitBlob(t, staged);
  });
  report('file bytes in (streamed, 1 MiB parts)', mib / ((performance.now() - t0) / 1000), 'MiB/s', `${mib} MiB`);
  t0 = performance.now();
  let n = 0;
  for await (const p of (await readBlob(db!, staged.sha256))!) n += p.byteLength;
  report('file bytes out (streamed)', n / 1048576 / ((performance.now() - t0) / 1000), 'MiB/s');
  await db!.close();
}

// 5. Chunk rows with 256-d vectors, 500 per statement (what a parse's swap writes), change log included.
{
  const [db] = await freshStore(1);
  const total = Number(args.chunks);
  const vec = Buffer.from(new Float32Array(256).fill(0.0625).buffer);
  const content = 'The gravitational pull of the moon raises the ocean tides twice a day. '.repeat(8);
  const t0 = performance.now();
  for (let at = 0; at < total; at += 500) {
    const ids = Array.from({ length: Math.min(500, total - at) }, (_, i) => `c${at + i}`);
    await db!.tx((t) => t.run(`INSERT INTO chunk (id, document_id, dataset_id, content, vec_dim, vector, create_time, create_timestamp)
      SELECT id, 'doc0', 'd1', $2, 256, $3, 't', 1 FROM unnest($1::text[]) AS id`, [ids, content, vec]));
  }
  report('chunk rows written (256-d vectors, 500 per statement)', total / ((performance.now() - t0) / 1000), 'chunks/s', `${total} chunks`);
  await db!.close();
}

base.stop();

console.log('\n| measurement | value | unit | note |\n|---|---:|---|---|');
for (const r of results) console.log(`| ${r.what} | ${r.value} | ${r.unit} | ${r.note ?? ''} |`);

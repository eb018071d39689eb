import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import type { Client, DataSet, Document, DatasetChunkMethod } from '../client/index.js';
import { ApiError } from '../api/errors.js';
import { fileType } from '../core/index.js';
import { fileSuffix } from '../util/index.js';
import { formatTable } from './table.js';

export interface IngestSummary {
  dataset: DataSet;
  rows: Array<{ file: string; status: string; chunks: number; tokens: number; seconds: number; message: string }>;
  skipped: string[];
  seconds: number;
}

/** Files below `dir`, depth first, sorted; hidden entries skipped. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const ent of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (ent.name.startsWith('.')) continue;
    const p = join(dir, ent.name);
    if (ent.isDirectory()) out.push(...await listFiles(p));
    else if (ent.isFile()) out.push(p);
  }
  return out;
}

/**
 * Uploads every supported file of `folder` into the dataset `name` (created when missing) and
 * parses them, drawing a progress bar (files, chunks, rate, ETA) on a TTY.
 */
export async function ingestFolder(client: Client, folder: string, name: string, opts: { chunk_method?: string; quiet?: boolean; out?: NodeJS.WriteStream } = {}): Promise<IngestSummary> {
  const out = opts.out ?? process.stdout;
  const began = Date.now();
  if (!(await stat(folder)).isDirectory()) throw new Error(`${folder} is not a folder`);
  const files = await listFiles(folder);
  const skipped = files.filter((f) => fileType(fileSuffix(f)) === 'other').map((f) => relative(folder, f));
  const usable = files.filter((f) => fileType(fileSuffix(f)) !== 'other');
  let ds: DataSet;
  try {
    ds = await client.getDataset(name);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    ds = await client.createDataset({ name, ...(opts.chunk_method ? { chunk_method: opts.chunk_method as DatasetChunkMethod } : {}) });
  }
  const docs: Document[] = [];
  for (const f of usable) {
    const [d] = await ds.uploadDocuments([{ display_name: relative(folder, f).replace(/[\\/]/g, '__'), blob: await readFile(f) }]);
    docs.push(d!);
  }
  const bar = !opts.quiet && out.isTTY
    ? new SingleBar({ format: ' {bar} {value}/{total} files | {chunks} chunks | {rate} chunks/s | ETA {eta_formatted}', hideCursor: true }, Presets.shades_classic)
    : undefined;
  bar?.start(docs.length, 0, { chunks: 0, rate: '0.0' });
  const finished = new Set<string>();
  let results: Array<[string, string, number, number]> = [];
  if (docs.length) {
    results = await ds.parseDocuments(docs.map((d) => d.id), {
      pollMs: 200,
      onProgress: (p) => {
        if (p.run === 'DONE' || p.run === 'FAIL' || p.run === 'CANCEL') finished.add(p.document_id);
        if (!bar) return;
        const secs = (Date.now() - began) / 1000;
        void ds.listDocuments({ page_size: 0 }).then((all) => {
          const chunks = all.reduce((n, d) => n + d.chunk_count, 0);
          bar.update(finished.size, { chunks, rate: (chunks / Math.max(secs, 0.001)).toFixed(1) });
        }).catch(() => undefined);
      },
    });
  }
  bar?.update(docs.length);
  bar?.stop();
  const byId = new Map((await ds.listDocuments({ page_size: 0 })).map((d) => [d.id, d]));
  const rows = results.map(([id, status, chunks, tokens]) => {
    const d = byId.get(id)!;
    const last = String(d.progress_msg ?? '').trim().split('\n').pop() ?? '';
    return {
      file: d.name, status, chunks, tokens,
      seconds: Number((d as unknown as { process_duration: number }).process_duration ?? 0),
      message: status === 'DONE' ? '' : last.replace(/^\d\d:\d\d:\d\d\s*(\[ERROR\]\s*)?/, ''),
    };
  });
  return { dataset: ds, rows, skipped, seconds: (Date.now() - began) / 1000 };
}

export function summaryTable(s: IngestSummary): string {
  const rows = s.rows.map((r) => [r.file, r.status, String(r.chunks), String(r.tokens), r.seconds.toFixed(2), r.message.slice(0, 60)]);
  const total = s.rows.reduce((a, r) => ({ chunks: a.chunks + r.chunks, tokens: a.tokens + r.tokens }), { chunks: 0, tokens: 0 });
  let text = formatTable(['FILE', 'STATUS', 'CHUNKS', 'TOKENS', 'SECONDS', 'MESSAGE'], rows);
  text += `\n${s.rows.length} files, ${total.chunks} chunks, ${total.tokens} tokens in ${s.seconds.toFixed(1)} s`
    + ` (${(total.chunks / Math.max(s.seconds, 0.001)).toFixed(1)} chunks/s)\n`;
  if (s.skipped.length) text += `skipped (unsupported type): ${s.skipped.join(', ')}\n`;
  return text;
}

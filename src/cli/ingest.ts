/**
 * `ragloom ingest <folder|file>`: a folder (or one file) made into a dataset the way a sync tool
 * would — re-runnable. Each supported file becomes the document named by its path below the
 * folder (`sub/a.md` → `sub__a.md`):
 *
 * | the file                                   | the document                                        | counted as |
 * |--------------------------------------------|-----------------------------------------------------|------------|
 * | no document of that name                   | uploaded and parsed                                 | added      |
 * | same name, other bytes (sha256)            | new bytes under the same id, parsed again (swap)    | updated    |
 * | same name and bytes, parsed (DONE)         | left alone                                          | unchanged  |
 * | same name and bytes, not DONE (failed…)    | parsed again                                        | retried    |
 * | a document whose file is gone (`--sync`)   | deleted                                             | removed    |
 *
 * Names compare case-insensitively, as uploads do. Uploads go in batches (one transaction each);
 * each batch is queued for parsing as soon as it is stored, so parsing overlaps the uploads.
 */
import { readdir, stat } from 'node:fs/promises';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { SingleBar } from 'cli-progress';
import type { Client, DataSet, Document, DatasetChunkMethod, ParseStatus } from '../client/index.js';
import { ApiError } from '../client/index.js';
import { fileType, uploadFileType, type FileType } from '../core/index.js';
import { fileSuffix } from '../util/index.js';
import { formatTable } from './table.js';
import { CliError, UsageError, firstFive } from './args.js';

/** The chunk methods a dataset can be created with (`--chunk-method`). */
export const CHUNK_METHODS = [
  'naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag', 'resume',
] as const satisfies readonly DatasetChunkMethod[];

export const INGEST_DEFAULTS = Object.freeze({
  /** Files per upload call (one transaction each). */
  batchFiles: 1000,
  /** Bytes per upload call: a folder of large PDFs is not read into memory at once. */
  batchBytes: 64 * 1048576,
  /** How often parse progress is read (ms), at least; a poll that takes longer spaces them out (see below). */
  pollMs: 250,
  /** Parse progress reads take at most this share of the time (each is a count over the dataset's documents). */
  pollShare: 0.02,
  /** Parsed files listed one per row in the text summary; above this, only those not DONE. */
  tableRows: 50,
});

export type IngestAction = 'added' | 'updated' | 'retried';

export interface IngestRow {
  file: string;
  document_id: string;
  action: IngestAction;
  status: ParseStatus;
  chunks: number;
  tokens: number;
  seconds: number;
  message: string;
}

export interface IngestSummary {
  dataset: DataSet;
  /** The folder or file given, resolved. */
  source: string;
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
  /** Unchanged files whose documents were not DONE (a failed or interrupted parse), parsed again. */
  retried: number;
  /** Documents parsed in this run, in file order. */
  rows: IngestRow[];
  /** Names of the documents `--sync` deleted. */
  removedNames: string[];
  /** Documents whose files are gone, left because `--sync` was not given. */
  stale: string[];
  skipped: Array<{ file: string; reason: string }>;
  seconds: number;
  /** Where the time went: listing and comparing, uploading, waiting for the parse (s). */
  timings: { scan: number; upload: number; parse: number };
}

export interface IngestOptions {
  /** The dataset (created when missing). @default the folder's name (a file: its folder's name) */
  dataset?: string;
  /** The chunk method of a dataset this call creates; an existing dataset must already use it. */
  chunk_method?: DatasetChunkMethod;
  /** The description of a dataset this call creates. @default none */
  description?: string;
  /** Delete the dataset's documents whose files are gone (folders only). @default false */
  sync?: boolean;
  /** Draw a progress bar here (a terminal: redrawn in place; otherwise a line a second). @default none */
  progress?: NodeJS.WritableStream;
}

/** Files below `dir`, depth first, sorted; hidden entries skipped. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const ent of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (ent.name.startsWith('.')) continue;
    const p = join(dir, ent.name);
    if (ent.isDirectory()) out.push(...await listFiles(p));
    else if (ent.isFile()) out.push(p);
  }
  return out;
}

/** A document's name for a file: its path below the folder, separators as `__`. */
export const documentName = (base: string, file: string): string => relative(base, file).split(sep).join('__').replace(/\//g, '__');

/** Names compare as uploads compare them: ASCII case folded (SQLite's NOCASE). */
const nameKey = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * A file's bytes. Read synchronously on purpose: the main thread is the busy one (it also writes
 * the parse queue's results), and one readFileSync of a small file costs a fraction of
 * fs/promises' open + fstat + read + close round trips (measured: 10,000 notes, ~0.4 s less).
 */
const read = (file: string): Buffer => readFileSync(file);

/**
 * A file's type as an upload types it: by its extension, or, without one (README, LICENSE), by its
 * content. Only the first 64 KiB are read, unless they begin a ZIP (an Office file, typed by its
 * entries).
 */
function typeOfFile(file: string): FileType {
  const suffix = fileSuffix(file);
  if (suffix) return fileType(suffix);
  const fd = openSync(file, 'r');
  let head: Buffer;
  try {
    const buf = Buffer.alloc(65536);
    head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
  return uploadFileType(file, head[0] === 0x50 && head[1] === 0x4b ? read(file) : head);
}

/** `12s`, `1m 05s`, `2h 03m`; `--` when there is no rate yet. */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Seconds left at the rate so far: `--` (not NaN) before the first item is done. */
export function etaSeconds(done: number, total: number, elapsedSeconds: number): number {
  if (done <= 0 || elapsedSeconds <= 0) return Number.NaN;
  return Math.max(0, total - done) * (elapsedSeconds / done);
}

/**
 * The progress bar: one line, `stage [bar] value/total unit | detail | ETA`. Values are clamped to
 * [0, total], and the ETA is ours (the rate since the stage began), so it never reads NaN.
 */
class Progress {
  private bar?: SingleBar;
  private began = 0;
  private total = 0;

  constructor(stream: NodeJS.WritableStream | undefined) {
    if (!stream) return;
    const tty = (stream as { isTTY?: boolean }).isTTY === true;
    this.bar = new SingleBar({
      stream: stream as NodeJS.WriteStream,
      format: ' {stage} {bar} {shown}/{all} {unit} | {detail}ETA {etaText}',
      barCompleteChar: '#', barIncompleteChar: '-', barsize: 24, hideCursor: tty, fps: 5,
      noTTYOutput: !tty, notTTYSchedule: 1000, forceRedraw: !tty, linewrap: false, clearOnComplete: false,
    });
  }

  start(stage: string, total: number, unit: string): void {
    if (!this.bar) return;
    this.began = Date.now();
    this.total = total;
    const payload = { stage: stage.padEnd(6), shown: '0', all: String(total), unit, detail: '', etaText: '--' };
    if (this.bar.isActive) {
      this.bar.setTotal(Math.max(total, 1));
      this.bar.update(0, payload);
    } else this.bar.start(Math.max(total, 1), 0, payload);
  }

  update(done: number, detail = ''): void {
    if (!this.bar) return;
    const v = Math.min(Math.max(0, done), this.total);
    const eta = etaSeconds(v, this.total, (Date.now() - this.began) / 1000);
    this.bar.update(this.total ? v : 1, { shown: String(v), detail: detail ? `${detail} | ` : '', etaText: v >= this.total ? '0s' : formatEta(eta) });
  }

  stop(): void {
    this.bar?.stop();
  }
}

async function openDataset(client: Client, name: string, method: DatasetChunkMethod | undefined, description?: string): Promise<DataSet> {
  let ds: DataSet | undefined;
  try {
    ds = await client.getDataset(name);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
  }
  if (!ds) return client.createDataset({ name, ...(method ? { chunk_method: method } : {}), ...(description ? { description } : {}) });
  if (method && ds.chunk_method !== method) {
    throw new CliError(`dataset "${ds.name}" exists with chunk method ${ds.chunk_method}; --chunk-method ${method} applies only when ingest creates the dataset`);
  }
  return ds;
}

/** Parse counts of a dataset, read in one cheap call (no document listing). */
async function parseCounts(client: Client, ds: DataSet): Promise<{ pending: number; chunks: number }> {
  const [d] = await client.listDatasets({ id: ds.id, include_parsing_status: true });
  const r = (d ?? {}) as unknown as { unstart_count?: number; running_count?: number; chunk_count?: number };
  return { pending: (r.unstart_count ?? 0) + (r.running_count ?? 0), chunks: r.chunk_count ?? 0 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Ingests a folder (every supported file below it) or one file into a dataset, re-runnably (see
 * the module comment). Resolves when every document it queued is DONE, FAIL or CANCEL.
 */
export async function ingestPath(client: Client, path: string, opts: IngestOptions = {}): Promise<IngestSummary> {
  const began = Date.now();
  const source = resolve(path);
  let isFile: boolean;
  try {
    const st = await stat(source);
    if (!st.isFile() && !st.isDirectory()) throw new CliError(`${path} is neither a file nor a folder`);
    isFile = st.isFile();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError(`${path}: no such file or folder`);
    throw e;
  }
  if (isFile && opts.sync) throw new UsageError('--sync needs a folder: with one file it would delete every other document of the dataset');
  const base = isFile ? dirname(source) : source;
  const files = isFile ? [source] : await listFiles(source);
  const skipped: IngestSummary['skipped'] = [];
  const wanted: Array<{ file: string; name: string }> = [];
  const byKey = new Map<string, string>();
  for (const f of files) {
    const name = documentName(base, f);
    if (typeOfFile(f) === 'other') {
      if (isFile) {
        throw new CliError(`${path}: this type of file is not supported (${fileSuffix(f) ? `.${fileSuffix(f)}` : 'no extension, and the content is not a document ragloom reads'}; see docs/parsers.md)`);
      }
      skipped.push({ file: relative(base, f), reason: 'unsupported type' });
      continue;
    }
    const key = nameKey(name);
    const other = byKey.get(key);
    if (other !== undefined) {
      skipped.push({ file: relative(base, f), reason: `same document name as ${other}` });
      continue;
    }
    byKey.set(key, relative(base, f));
    wanted.push({ file: f, name });
  }

  // Nothing to add: say so, and make no empty dataset.
  if (!wanted.length) {
    const shown = firstFive(skipped.map((x) => x.file));
    throw new CliError(files.length
      ? `${path}: nothing to ingest: none of its ${files.length} file(s) is a type ragloom reads (${shown}; see docs/parsers.md)`
      : `${path}: nothing to ingest: the folder holds no file (hidden files and folders are left out)`);
  }
  const ds = await openDataset(client, opts.dataset ?? basename(base), opts.chunk_method, opts.description);
  const bar = new Progress(opts.progress);
  try {
    return await sync(client, ds, { source, wanted, skipped, bar, began, sync: opts.sync === true });
  } finally {
    bar.stop();
  }
}

async function sync(client: Client, ds: DataSet, run: {
  source: string; wanted: Array<{ file: string; name: string }>; skipped: IngestSummary['skipped']; bar: Progress; began: number; sync: boolean;
}): Promise<IngestSummary> {
  const { wanted, bar } = run;
  const D = INGEST_DEFAULTS;
  // Documents another process (or an interrupted run, recovered when this client opened) is
  // parsing now: wait for them, then compare (their bytes cannot be replaced mid-parse).
  let existing = await ds.listDocuments({ page_size: 0 });
  const wantedKeys = new Set(wanted.map((w) => nameKey(w.name)));
  const busy = (list: Document[]) => list.filter((d) => d.run === 'RUNNING' && wantedKeys.has(nameKey(d.name))).length;
  const busyAtStart = busy(existing);
  if (busyAtStart) bar.start('wait', busyAtStart, 'being parsed elsewhere');
  for (let left = busyAtStart; left > 0; left = busy(existing)) {
    bar.update(busyAtStart - left);
    await sleep(D.pollMs);
    existing = await ds.listDocuments({ page_size: 0 });
  }
  const docs = new Map(existing.map((d) => [nameKey(d.name), d]));
  const toParse: Array<{ doc: Document; file: string; action: IngestAction }> = [];
  const fresh: Array<{ file: string; name: string }> = [];
  let unchanged = 0;
  let oldChunks = 0;

  // Compare: files with a document of their name hand it their bytes (a no-op when identical).
  const known = wanted.filter((w) => docs.has(nameKey(w.name)));
  for (const w of wanted) if (!docs.has(nameKey(w.name))) fresh.push(w);
  if (known.length) bar.start('check', known.length, 'files');
  let checked = 0;
  for (const w of known) {
    const blob = read(w.file);
    const doc = docs.get(nameKey(w.name))!;
    const before = doc.run;
    const chunks = doc.chunk_count;
    if (await doc.replaceContent(blob)) {
      toParse.push({ doc, file: w.name, action: 'updated' });
      oldChunks += chunks;
    } else if (before === 'DONE') unchanged++;
    else {
      toParse.push({ doc, file: w.name, action: 'retried' });
      oldChunks += chunks;
    }
    if (++checked % 100 === 0) bar.update(checked);
  }
  bar.update(checked);
  const scanned = Date.now();

  // Removed files: their documents go with --sync; otherwise they are reported.
  const gone = existing.filter((d) => !wantedKeys.has(nameKey(d.name)));
  let removedNames: string[] = [];
  if (run.sync && gone.length) {
    for (let i = 0; i < gone.length; i += 1000) await ds.deleteDocuments({ ids: gone.slice(i, i + 1000).map((d) => d.id) });
    removedNames = gone.map((d) => d.name);
  }
  // Documents that are not ours to wait for: pending before we began and not in this run.
  const ours = new Set(toParse.map((p) => p.doc.id));
  const otherPending = run.sync ? 0 : gone.filter((d) => d.run === 'UNSTART' || d.run === 'RUNNING').length;
  const total = toParse.length + fresh.length;
  const before = await parseCounts(client, ds);
  const chunkBase = Math.max(0, before.chunks - oldChunks);
  const parseBegan = Date.now();
  if (toParse.length) await ds.asyncParseDocuments(toParse.map((p) => p.doc.id));

  // Upload new files in batches; each batch is queued for parsing as soon as it is stored.
  if (fresh.length) bar.start('upload', fresh.length, 'files');
  let uploaded = 0;
  for (let i = 0; i < fresh.length;) {
    // A batch: up to batchFiles files or batchBytes (one file more than that when it is large).
    const batch: Array<{ display_name: string; blob: Uint8Array }> = [];
    let bytes = 0;
    while (i < fresh.length && batch.length < D.batchFiles && bytes < D.batchBytes) {
      const blob = read(fresh[i]!.file);
      batch.push({ display_name: fresh[i]!.name, blob });
      bytes += blob.byteLength;
      i++;
    }
    const added = await ds.uploadDocuments(batch);
    added.forEach((doc, k) => {
      toParse.push({ doc, file: batch[k]!.display_name, action: 'added' });
      ours.add(doc.id);
    });
    await ds.asyncParseDocuments(added.map((d) => d.id));
    uploaded += batch.length;
    bar.update(uploaded);
  }
  const uploadedAt = Date.now();

  // Wait for the parse: counts come from one cheap call per poll; one listing at the end.
  if (total) {
    bar.start('parse', total, 'files');
    for (;;) {
      const asked = Date.now();
      const now = await parseCounts(client, ds);
      // A count over a large dataset costs milliseconds of the main thread the parse queue writes
      // with: poll so that counting stays under pollShare of the time.
      const wait = Math.min(2000, Math.max(D.pollMs, (Date.now() - asked) / D.pollShare));
      const left = Math.max(0, now.pending - otherPending);
      const done = total - Math.min(total, left);
      const secs = Math.max((Date.now() - parseBegan) / 1000, 0.001);
      bar.update(done, `${Math.max(0, now.chunks - chunkBase)} chunks | ${(done / secs).toFixed(0)} files/s`);
      if (left === 0) break;
      await sleep(wait);
    }
    // The counts said done; the listing below is the truth (a document of another process may have
    // finished in between): poll until every one of ours has left UNSTART / RUNNING.
  }
  let rowsById = new Map<string, Document>();
  for (; ours.size;) {
    const all = await ds.listDocuments({ page_size: 0 });
    rowsById = new Map(all.filter((d) => ours.has(d.id)).map((d) => [d.id, d]));
    if (![...rowsById.values()].some((d) => d.run === 'UNSTART' || d.run === 'RUNNING')) break;
    await sleep(INGEST_DEFAULTS.pollMs);
  }
  const parsedAt = Date.now();
  const rows: IngestRow[] = toParse
    .filter((p) => rowsById.has(p.doc.id))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    .map((p) => {
      const d = rowsById.get(p.doc.id)!;
      const last = String(d.progress_msg ?? '').trim().split('\n').pop() ?? '';
      return {
        file: d.name, document_id: d.id, action: p.action, status: d.run, chunks: d.chunk_count, tokens: d.token_count,
        seconds: Number((d as unknown as { process_duration?: number }).process_duration ?? 0),
        message: d.run === 'DONE' ? '' : last.replace(/^\d\d:\d\d:\d\d\s*(\[ERROR\]\s*)?/, ''),
      };
    });
  const count = (a: IngestAction) => toParse.filter((p) => p.action === a).length;
  return {
    dataset: ds, source: run.source,
    added: count('added'), updated: count('updated'), unchanged, removed: removedNames.length, retried: count('retried'),
    rows, removedNames, stale: run.sync ? [] : gone.map((d) => d.name), skipped: run.skipped,
    seconds: (parsedAt - run.began) / 1000,
    timings: { scan: (scanned - run.began) / 1000, upload: (uploadedAt - scanned) / 1000, parse: (parsedAt - uploadedAt) / 1000 },
  };
}

/** The summary as `--json` prints it. */
export function summaryJson(s: IngestSummary, db: string): Record<string, unknown> {
  const total = s.rows.reduce((a, r) => ({ chunks: a.chunks + r.chunks, tokens: a.tokens + r.tokens }), { chunks: 0, tokens: 0 });
  return {
    dataset: { id: s.dataset.id, name: s.dataset.name }, db, source: s.source,
    added: s.added, updated: s.updated, unchanged: s.unchanged, removed: s.removed, retried: s.retried,
    failed: s.rows.filter((r) => r.status !== 'DONE').length,
    chunks: total.chunks, tokens: total.tokens, seconds: s.seconds, timings: s.timings,
    files: s.rows, removed_documents: s.removedNames, stale_documents: s.stale, skipped: s.skipped,
  };
}

/** The text summary: parsed files (all, or those not DONE when many), the counts, skips. */
export function summaryTable(s: IngestSummary): string {
  const many = s.rows.length > INGEST_DEFAULTS.tableRows;
  const shown = many ? s.rows.filter((r) => r.status !== 'DONE') : s.rows;
  const total = s.rows.reduce((a, r) => ({ chunks: a.chunks + r.chunks, tokens: a.tokens + r.tokens }), { chunks: 0, tokens: 0 });
  let text = '';
  if (shown.length) {
    text += `${formatTable(['FILE', 'ACTION', 'STATUS', 'CHUNKS', 'TOKENS', 'SECONDS', 'MESSAGE'],
      shown.map((r) => [r.file, r.action, r.status, String(r.chunks), String(r.tokens), r.seconds.toFixed(2), r.message.slice(0, 60)]))}\n`;
  }
  if (many) text += `${shown.length ? '' : 'every parsed file is DONE; '}${s.rows.length - shown.length} DONE files not listed (--json lists every file)\n`;
  const failed = s.rows.filter((r) => r.status !== 'DONE').length;
  text += `${s.dataset.name}: ${s.added} added, ${s.updated} updated, ${s.unchanged} unchanged, ${s.removed} removed`
    + `${s.retried ? ` (${s.retried} parsed again after an earlier failure or interruption)` : ''}${failed ? `; ${failed} failed` : ''}\n`;
  text += s.rows.length
    ? `${s.rows.length} files, ${total.chunks} chunks, ${total.tokens} tokens in ${s.seconds.toFixed(1)} s (${(s.rows.length / Math.max(s.seconds, 0.001)).toFixed(1)} files/s)\n`
    : `nothing to parse; ${s.seconds.toFixed(1)} s\n`;
  if (s.stale.length) {
    text += `${s.stale.length} documents have no file any more (--sync removes them): ${firstFive(s.stale)}\n`;
  }
  if (s.skipped.length) {
    const unsupported = s.skipped.filter((x) => x.reason === 'unsupported type').map((x) => x.file);
    if (unsupported.length) text += `skipped (unsupported type): ${unsupported.join(', ')}\n`;
    for (const x of s.skipped.filter((y) => y.reason !== 'unsupported type')) text += `skipped ${x.file}: ${x.reason}\n`;
  }
  return text;
}

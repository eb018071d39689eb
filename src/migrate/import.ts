import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ApiError, type Client, type DataSet, type Document } from '../client/index.js';
import { listAllDatasets, listAllDocuments, openEndpoint } from './endpoint.js';
import { MigrationError, filePath, readManifest, writeManifest, type ImportRecord, type Manifest, type ManifestEntry, type ManifestFile } from './manifest.js';
import { Reporter, errorText, type MigrationHooks } from './progress.js';

export interface ImportOptions extends MigrationHooks {
  /** `manifest.json` of an export. */
  manifest: string;
  /** A RAGFlow-compatible server URL or a ragloom database file (created if missing). */
  to: string;
  /** For a URL: else RAGLOOM_API_KEY, else RAGFLOW_API_KEY. Never logged or written. */
  apiKey?: string;
  /** Print the plan (datasets to create or reuse, files to upload); change nothing. */
  dryRun?: boolean;
  /** Files per upload request. @default 10 */
  batchSize?: number;
  /** Create datasets with this embedding model instead of the source's. */
  embeddingModel?: string;
  /**
   * Start parsing what is uploaded. Into a database file the import also waits for that parsing to
   * end (nothing else would parse it: the file is not open anywhere else), reporting it as the
   * `parse` step; a server parses on its own. @default true
   */
  parse?: boolean;
}

export interface ImportPlanRow {
  kb_name: string;
  action: 'create' | 'reuse';
  dataset_id: string | null;
  upload: number;
  present: number;
}

export interface ImportSummary {
  datasets_created: number;
  datasets_reused: number;
  uploaded: number;
  /** Files the target already held (an earlier, interrupted run): not uploaded again. */
  already_present: number;
  parse_started: number;
  /**
   * Into a database file: how the documents the import parsed ended (the import waits for them);
   * null for a server, which parses after the import returns.
   */
  parsed: { DONE: number; FAIL: number; CANCEL: number } | null;
  failed: number;
  plan: ImportPlanRow[];
  warnings: string[];
  dry_run: boolean;
  seconds: number;
}

/** RAGFlow's dataset create refuses these methods; documents may still use them. */
const DATASET_METHODS = new Set(['naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag', 'resume']);

/**
 * Imports an export into a server or a database file: each entry reuses the target's dataset of
 * the same name (case-insensitive) or creates it, then uploads the files the target does not hold
 * yet, in batches, and starts parsing them. What it creates is recorded in the manifest as it
 * goes, so `migrateRollback` can undo an import, even an interrupted one; and a re-run after an
 * interruption uploads only what is missing (reconciled by dataset and document name).
 * @example await migrateImport({ manifest: './export/manifest.json', to: 'http://127.0.0.1:9380', apiKey })
 */
export async function migrateImport(opts: ImportOptions): Promise<ImportSummary> {
  const t0 = performance.now();
  const rep = new Reporter(opts);
  const manifestPath = resolve(opts.manifest ?? '');
  if (!opts.manifest) throw new MigrationError('An import needs the export\'s manifest (--manifest)');
  const m = readManifest(manifestPath);
  if (!m.complete) throw new MigrationError(`${manifestPath} is of an export that did not finish: run the export again first`);
  const batchSize = opts.batchSize ?? 10;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new MigrationError('The batch size must be a whole number ≥ 1');
  const ep = openEndpoint(opts.to, { apiKey: opts.apiKey, role: 'target' });
  const sum: ImportSummary = {
    datasets_created: 0, datasets_reused: 0, uploaded: 0, already_present: 0, parse_started: 0, parsed: null, failed: 0, plan: [], warnings: rep.warnings,
    dry_run: !!opts.dryRun, seconds: 0,
  };
  try {
    const prior = m.imports[ep.id];
    const rec: ImportRecord = prior && !prior.rolled_back_at
      ? prior
      : { datasets: {}, uploaded_into_existing: {}, started_at: Date.now(), finished_at: null, rolled_back_at: null };
    const save = () => {
      if (!opts.dryRun) {
        m.imports[ep.id] = rec;
        writeManifest(manifestPath, m);
      }
    };
    save();
    const existing = await listAllDatasets(ep.client);
    const total = m.entries.reduce((n, e) => n + e.files.length, 0);
    let done = 0;
    // Into a file: the documents whose parsing this run waits for, by dataset.
    const waitFor = new Map<DataSet, Set<string>>();
    const awaitParse = (ds: DataSet, ids: string[]) => {
      if (ep.remote || opts.parse === false || !ids.length) return;
      const set = waitFor.get(ds) ?? new Set<string>();
      for (const id of ids) set.add(id);
      waitFor.set(ds, set);
    };
    for (const entry of m.entries) {
      const placed = await placeDataset(ep.client, entry, rec, existing, opts, rep);
      if (placed.fresh) sum.datasets_created++;
      else sum.datasets_reused++;
      if (placed.ds && placed.fresh && !opts.dryRun) {
        rec.datasets[entry.kb_id] = { dataset_id: placed.ds.id, name: placed.ds.name, created: true };
        save(); // recorded before anything is uploaded into it: a rollback after a crash finds it
        if (entry.pagerank > 0) {
          await placed.ds.update({ pagerank: entry.pagerank }).catch((e) => rep.warn(`${entry.kb_name}: pagerank ${entry.pagerank} not set: ${errorText(e)}`));
        }
      } else if (placed.ds && !opts.dryRun && !rec.datasets[entry.kb_id]) {
        rec.datasets[entry.kb_id] = { dataset_id: placed.ds.id, name: placed.ds.name, created: false };
        save();
      }
      const present = new Map<string, Document>();
      // A dataset made by this very run is empty; any other may hold files of an earlier run.
      if (placed.ds && !placed.fresh) for (const d of await listAllDocuments(placed.ds)) present.set(d.name.toLowerCase(), d);
      const missing = entry.files.filter((f) => !present.has(f.name.toLowerCase()));
      const row: ImportPlanRow = { kb_name: entry.kb_name, action: placed.fresh ? 'create' : 'reuse', dataset_id: placed.ds?.id ?? null, upload: missing.length, present: entry.files.length - missing.length };
      sum.plan.push(row);
      sum.already_present += row.present;
      if (opts.dryRun || !placed.ds) {
        done += entry.files.length;
        continue;
      }
      const ds = placed.ds;
      // Uploaded by an interrupted run but never started (or cancelled): start them now. In a file,
      // those an interrupted run left RUNNING were queued again when this run opened it.
      const mine = entry.files.map((f) => present.get(f.name.toLowerCase())).filter((d): d is Document => !!d);
      const unstarted = mine.filter((d) => d.run === 'UNSTART' || (!ep.remote && d.run === 'CANCEL'));
      if (opts.parse !== false && unstarted.length) {
        const started = await startParsing(ds, unstarted.map((d) => d.id), rep, entry);
        sum.parse_started += started;
        if (started) awaitParse(ds, unstarted.map((d) => d.id));
      }
      awaitParse(ds, mine.filter((d) => d.run === 'RUNNING').map((d) => d.id));
      done += row.present;
      rep.progress({ step: 'import', done, total, item: entry.kb_name });
      for (let i = 0; i < missing.length; i += batchSize) {
        const batch = missing.slice(i, i + batchSize);
        const docs = await uploadBatch(ds, batch, manifestPath, entry, rep);
        sum.uploaded += docs.length;
        sum.failed += batch.length - docs.length;
        if (!placed.created && docs.length) {
          (rec.uploaded_into_existing[entry.kb_id] ??= []).push(...docs.map((d) => d.id));
          save();
        }
        await applyChunkMethods(docs, batch, entry, rep);
        if (opts.parse !== false && docs.length) {
          const started = await startParsing(ds, docs.map((d) => d.id), rep, entry);
          sum.parse_started += started;
          if (started) awaitParse(ds, docs.map((d) => d.id));
        }
        done += batch.length;
        rep.progress({ step: 'import', done, total, item: batch[batch.length - 1]!.name });
      }
    }
    if (!ep.remote && opts.parse !== false && !opts.dryRun) sum.parsed = await waitForParsing(waitFor, rep);
    rec.finished_at = Date.now();
    save();
    sum.seconds = (performance.now() - t0) / 1000;
    return sum;
  } finally {
    await ep.client.close();
  }
}

/** The entry's dataset in the target: the one an earlier run placed it in, else one of its name, else a new one. */
async function placeDataset(
  c: Client, entry: ManifestEntry, rec: ImportRecord, existing: DataSet[], opts: ImportOptions, rep: Reporter,
): Promise<{ ds: DataSet | null; created: boolean; fresh: boolean }> {
  const before = rec.datasets[entry.kb_id];
  if (before) {
    const ds = existing.find((d) => d.id === before.dataset_id);
    if (ds) return { ds, created: before.created, fresh: false };
    rep.warn(`${entry.kb_name}: the dataset an earlier run placed it in (${before.dataset_id}) is gone; placing it again`);
    delete rec.datasets[entry.kb_id];
  }
  // Two source datasets of one name (another tenant's team dataset beside one's own) stay two:
  // a dataset another entry of this import already took is not reused.
  const claimed = new Set(Object.values(rec.datasets).map((d) => d.dataset_id));
  const same = existing.find((d) => d.name.toLowerCase() === entry.kb_name.toLowerCase() && !claimed.has(d.id));
  if (same) return { ds: same, created: false, fresh: false };
  if (opts.dryRun) return { ds: null, created: true, fresh: true };
  const ds = await createDataset(c, entry, opts, rep);
  existing.push(ds);
  return { ds, created: true, fresh: true };
}

async function createDataset(c: Client, entry: ManifestEntry, opts: ImportOptions, rep: Reporter): Promise<DataSet> {
  const params: Record<string, unknown> = {
    name: entry.kb_name,
    description: entry.kb_description ?? undefined,
    permission: entry.permission === 'team' ? 'team' : 'me',
    chunk_method: DATASET_METHODS.has(entry.chunk_method) ? entry.chunk_method : 'naive',
    parser_config: entry.parser_config && Object.keys(entry.parser_config).length ? entry.parser_config : undefined,
    embedding_model: opts.embeddingModel ?? entry.embedding_model ?? undefined,
  };
  if (params.chunk_method !== entry.chunk_method) {
    rep.warn(`${entry.kb_name}: datasets cannot be created with chunk_method ${entry.chunk_method}; created as naive, its documents set to ${entry.chunk_method}`);
  }
  // The target may not know the source's embedding model, or keys of the source's stored
  // parser_config (a stored config holds more than create accepts, in RAGFlow too): the keys the
  // target names are dropped, else the whole config, else the model; each said in a warning.
  for (let attempt = 0; ; attempt++) {
    try {
      return await c.createDataset(params as never);
    } catch (e) {
      const msg = errorText(e);
      if (!(e instanceof ApiError) || attempt >= 8) throw new MigrationError(`${entry.kb_name}: the dataset could not be created: ${msg}`);
      const fields = [...msg.matchAll(/Field: <parser_config\.([^>]+)> - Message: <([^>]*)>/g)];
      if (fields.length && params.parser_config) {
        params.parser_config = withoutPaths(params.parser_config as Record<string, unknown>, fields.map((x) => x[1]!));
        const why = [...new Set(fields.map((x) => x[2]!))];
        rep.warn(`${entry.kb_name}: the target does not take parser_config ${fields.map((x) => x[1]).join(', ')} (${why.join('; ')}); created without ${fields.length === 1 ? 'it' : 'them'}`);
      } else if (params.parser_config !== undefined && /parser_config|Parser config/i.test(msg)) {
        delete params.parser_config;
        rep.warn(`${entry.kb_name}: ${msg} — created without the source parser_config (the method's defaults are used)`);
      } else if (params.embedding_model !== undefined && /embedding|model/i.test(msg)) {
        rep.warn(`${entry.kb_name}: ${msg} — created without embedding_model ${String(params.embedding_model)} (the target's default is used)`);
        delete params.embedding_model;
      } else {
        throw new MigrationError(`${entry.kb_name}: the dataset could not be created: ${msg}`);
      }
    }
  }
}

/** A deep copy of `o` without the dotted `paths`. */
function withoutPaths(o: Record<string, unknown>, paths: string[]): Record<string, unknown> {
  const copy = structuredClone(o);
  for (const p of paths) {
    const keys = p.split('.');
    let at: unknown = copy;
    for (const k of keys.slice(0, -1)) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined;
    if (at && typeof at === 'object') delete (at as Record<string, unknown>)[keys[keys.length - 1]!];
  }
  return copy;
}

/**
 * One request for the batch; a refused batch (one unsupported or unreadable file refuses all, as
 * RAGFlow answers with code 500) is retried file by file so the others still arrive.
 */
async function uploadBatch(ds: DataSet, batch: ManifestFile[], manifestPath: string, entry: ManifestEntry, rep: Reporter): Promise<Document[]> {
  const files: Array<{ f: ManifestFile; blob: Uint8Array }> = [];
  for (const f of batch) {
    try {
      files.push({ f, blob: readFileSync(filePath(manifestPath, f)) });
    } catch (e) {
      rep.warn(`${entry.kb_name}: ${f.name}: the exported file cannot be read (${(e as NodeJS.ErrnoException).code ?? errorText(e)}); not uploaded`);
    }
  }
  if (!files.length) return [];
  try {
    return await ds.uploadDocuments(files.map(({ f, blob }) => ({ display_name: f.name, blob })));
  } catch (e) {
    if (files.length === 1) {
      rep.warn(`${entry.kb_name}: ${files[0]!.f.name}: upload failed: ${errorText(e)}`);
      return [];
    }
  }
  // A server may have stored part of a refused batch: only what is still missing goes again.
  const now = new Set((await listAllDocuments(ds)).map((d) => d.name.toLowerCase()));
  const out: Document[] = [];
  for (const { f, blob } of files) {
    if (now.has(f.name.toLowerCase())) continue;
    try {
      out.push(...(await ds.uploadDocuments([{ display_name: f.name, blob }])));
    } catch (e) {
      rep.warn(`${entry.kb_name}: ${f.name}: upload failed: ${errorText(e)}`);
    }
  }
  return out;
}

/** A document whose method differed from its dataset's at the source gets it back before parsing. */
async function applyChunkMethods(docs: Document[], batch: ManifestFile[], entry: ManifestEntry, rep: Reporter): Promise<void> {
  const wanted = new Map(batch.map((f) => [f.name.toLowerCase(), f.chunk_method ?? (DATASET_METHODS.has(entry.chunk_method) ? undefined : entry.chunk_method)]));
  for (const d of docs) {
    const w = wanted.get(d.name.toLowerCase());
    if (w && d.chunk_method !== w) {
      await d.update({ chunk_method: w as never }).catch((e) => rep.warn(`${entry.kb_name}: ${d.name}: chunk_method ${w} not set: ${errorText(e)}`));
    }
  }
}

/** How often a file's parsing is looked at while the import waits for it (ms). */
const PARSE_POLL_MS = 500;

/**
 * Waits until every listed document has left UNSTART and RUNNING (this process parses them: the
 * database file is open here), reporting the `parse` step; then how they ended.
 */
async function waitForParsing(waitFor: Map<DataSet, Set<string>>, rep: Reporter): Promise<{ DONE: number; FAIL: number; CANCEL: number }> {
  const total = [...waitFor.values()].reduce((n, s) => n + s.size, 0);
  const ended = { DONE: 0, FAIL: 0, CANCEL: 0 };
  if (!total) return ended;
  for (;;) {
    const tally = { DONE: 0, FAIL: 0, CANCEL: 0 };
    let pending = 0;
    let last = '';
    for (const [ds, ids] of waitFor) {
      for (const d of await listAllDocuments(ds)) {
        if (!ids.has(d.id)) continue;
        if (d.run === 'DONE' || d.run === 'FAIL' || d.run === 'CANCEL') {
          tally[d.run]++;
          last = d.name;
        } else pending++;
      }
    }
    rep.progress({ step: 'parse', done: total - pending, total, item: last });
    if (!pending) return tally;
    await new Promise((r) => setTimeout(r, PARSE_POLL_MS));
  }
}

async function startParsing(ds: DataSet, ids: string[], rep: Reporter, entry: ManifestEntry): Promise<number> {
  try {
    await ds.asyncParseDocuments(ids);
    return ids.length;
  } catch (e) {
    rep.warn(`${entry.kb_name}: parsing of ${ids.length} document(s) not started: ${errorText(e)}`);
    return 0;
  }
}

export type { Manifest };

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ApiError, type DataSet, type Document } from '../client/index.js';
import { field, listAllDatasets, listAllDocuments, openEndpoint } from './endpoint.js';
import {
  MANIFEST_NAME, MigrationError, chunkMethodOf, datasetFolderName, readManifest, uniqueFileName, writeManifest,
  type Manifest, type ManifestEntry, type ManifestFile,
} from './manifest.js';
import { Reporter, errorText, type MigrationHooks } from './progress.js';

export interface ExportOptions extends MigrationHooks {
  /** A RAGFlow-compatible server URL (RAGFlow 0.17.2 / 0.25.6, `ragloom serve`) or a ragloom database file (opened read-only). */
  from: string;
  /** For a URL: else RAGFLOW_API_KEY, else RAGLOOM_API_KEY. Never logged or written. */
  apiKey?: string;
  /** Folder for `manifest.json` and one folder of files per dataset. */
  out: string;
  /** List what would be exported; write nothing. */
  dryRun?: boolean;
  /** Also export disabled documents (status "0"). @default false: active documents only */
  includeDisabled?: boolean;
}

export interface ExportSummary {
  manifest: string;
  datasets: number;
  files: number;
  bytes: number;
  /** Files an earlier, interrupted export had already downloaded (kept, not fetched again). */
  reused: number;
  skipped: number;
  warnings: string[];
  dry_run: boolean;
  seconds: number;
}

/**
 * Exports every active dataset the key (or file) can see: its settings and its active documents'
 * files, one folder per dataset, plus `manifest.json`. Re-running into the same folder keeps
 * files already downloaded intact (same document, same size and hash) and fetches the rest.
 * The source is only read.
 * @example await migrateExport({ from: 'http://ragflow:9380', apiKey, out: './export' })
 */
export async function migrateExport(opts: ExportOptions): Promise<ExportSummary> {
  const t0 = performance.now();
  const rep = new Reporter(opts);
  const out = resolve(opts.out ?? '');
  if (!opts.out) throw new MigrationError('An export needs an output folder (--out)');
  const manifestPath = join(out, MANIFEST_NAME);
  const previous = existsSync(manifestPath) ? readManifest(manifestPath) : undefined;
  if (previous && Object.keys(previous.imports).length && !opts.dryRun) {
    throw new MigrationError(`${manifestPath} records an import already; export into another folder (its rollback needs that record)`);
  }
  const ep = openEndpoint(opts.from, { apiKey: opts.apiKey, role: 'source' });
  try {
    const datasets = (await listAllDatasets(ep.client)).filter((d) => String(field(d, 'status') ?? '1') === '1');
    // Everything listed first: the progress bar knows its total, and the dry run is complete.
    const listed: Array<{ ds: DataSet; docs: Document[] }> = [];
    for (const ds of datasets) {
      try {
        listed.push({ ds, docs: await listAllDocuments(ds) });
      } catch (e) {
        // Visible but not readable (another tenant's team dataset on some servers): its settings
        // are still exported, and the gap is said.
        rep.warn(`${ds.name}: its documents cannot be listed (${errorText(e)}); the dataset is exported without files`);
        listed.push({ ds, docs: [] });
      }
    }
    const total = listed.reduce((n, x) => n + x.docs.length, 0);
    const known = new Map<string, ManifestFile>();
    for (const e of previous?.entries ?? []) for (const f of e.files) if (f.doc_id) known.set(`${e.kb_id}/${f.doc_id}`, f);

    const manifest: Manifest = {
      format: 'ragloom-migration', version: 1, created_at: Date.now(), complete: false, source: ep.id, entries: [], imports: {},
    };
    let files = 0, bytes = 0, reused = 0, skipped = 0, done = 0;
    for (const { ds, docs } of listed) {
      const entry = datasetEntry(ds);
      const dir = join(out, entry.folder);
      if (!opts.dryRun) mkdirSync(dir, { recursive: true });
      const taken = new Set<string>();
      for (const doc of docs) {
        done++;
        const skip = (reason: string, warn = true) => {
          entry.skipped.push({ doc_id: doc.id, name: doc.name, reason });
          skipped++;
          if (warn) rep.warn(`${entry.kb_name}: ${doc.name || doc.id}: ${reason}`);
        };
        const location = field<string | null>(doc, 'location');
        if (!opts.includeDisabled && String(field(doc, 'status') ?? '1') === '0') skip('disabled document (status 0); --include-disabled exports it', false);
        else if (location !== undefined && !location) skip('skipped: the document has an empty location (no stored file)');
        else {
          // RAGFlow downloads a document under its name; a document without one falls back to its stored object's.
          const name = uniqueFileName(doc.name || (location ? basename(location) : '') || doc.id, taken);
          const file: ManifestFile = {
            name, local_path: `${entry.folder}/${name}`, source_name: doc.name, doc_id: doc.id, size: Number(field(doc, 'size') ?? -1), sha256: '',
            ...(field(doc, 'chunk_method') && field(doc, 'chunk_method') !== entry.chunk_method ? { chunk_method: chunkMethodOf(doc.toJSON()) } : {}),
          };
          if (opts.dryRun) {
            entry.files.push(file);
            files++;
            bytes += Math.max(0, file.size);
          } else {
            const path = join(dir, name);
            const before = known.get(`${entry.kb_id}/${doc.id}`);
            if (before && before.local_path === file.local_path && onDisk(path, before)) {
              entry.files.push({ ...file, size: before.size, sha256: before.sha256 });
              files++;
              reused++;
              bytes += before.size;
            } else {
              try {
                const data = await download(doc);
                writeFileSync(path, data);
                entry.files.push({ ...file, size: data.byteLength, sha256: sha256(data) });
                files++;
                bytes += data.byteLength;
              } catch (e) {
                // One failed download must not cost the rest of the export.
                skip(`download failed: ${errorText(e)}`);
              }
            }
          }
        }
        rep.progress({ step: 'export', done, total, item: doc.name });
      }
      manifest.entries.push(entry);
      // Written after every dataset: an interrupted export's re-run reuses what it already has.
      if (!opts.dryRun) writeManifest(manifestPath, manifest);
    }
    manifest.complete = true;
    if (!opts.dryRun) writeManifest(manifestPath, manifest);
    return {
      manifest: manifestPath, datasets: manifest.entries.length, files, bytes, reused, skipped, warnings: rep.warnings,
      dry_run: !!opts.dryRun, seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    await ep.client.close();
  }
}

function datasetEntry(ds: DataSet): ManifestEntry {
  const j = ds.toJSON();
  const pc = j.parser_config;
  return {
    kb_id: ds.id,
    kb_name: ds.name,
    kb_description: typeof j.description === 'string' ? j.description : null,
    permission: typeof j.permission === 'string' ? j.permission : 'me',
    chunk_method: chunkMethodOf(j),
    parser_config: pc && typeof pc === 'object' && !Array.isArray(pc) ? (pc as Record<string, unknown>) : null,
    embedding_model: typeof j.embedding_model === 'string' && j.embedding_model ? j.embedding_model : null,
    pagerank: typeof j.pagerank === 'number' ? j.pagerank : 0,
    folder: datasetFolderName(ds.name, ds.id),
    files: [],
    skipped: [],
  };
}

/** A document's bytes; RAGFlow answers an empty stored file with 102 "This file is empty." (a valid, empty document). */
async function download(doc: Document): Promise<Uint8Array> {
  try {
    return await doc.download();
  } catch (e) {
    if (e instanceof ApiError && e.message === 'This file is empty.') return new Uint8Array(0);
    throw e;
  }
}

function onDisk(path: string, f: ManifestFile): boolean {
  try {
    if (statSync(path).size !== f.size || !f.sha256) return false;
    return sha256(readFileSync(path)) === f.sha256;
  } catch {
    return false;
  }
}

export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

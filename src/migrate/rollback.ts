import { existsSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listAllDatasets, listAllDocuments, openEndpoint } from './endpoint.js';
import { MigrationError, readManifest, writeManifest } from './manifest.js';
import { Reporter, errorText, type MigrationHooks } from './progress.js';

export interface RollbackOptions extends MigrationHooks {
  manifest: string;
  to: string;
  apiKey?: string;
  /** Print what would be deleted; delete nothing. */
  dryRun?: boolean;
  /** Keep the export's folder and manifest. @default false: they are removed */
  keepExport?: boolean;
}

export interface RollbackSummary {
  datasets_deleted: number;
  /** Documents the import had added to datasets it did not create. */
  documents_deleted: number;
  export_removed: boolean;
  warnings: string[];
  dry_run: boolean;
}

/**
 * Undoes an import into `to`: deletes the datasets it created and the documents it added to
 * datasets that were there before (all recorded in the manifest), then the export's folder. The
 * source of the export is not touched. Re-running after an interrupted rollback finishes it.
 */
export async function migrateRollback(opts: RollbackOptions): Promise<RollbackSummary> {
  const rep = new Reporter(opts);
  if (!opts.manifest) throw new MigrationError('Rollback needs the export\'s manifest (--manifest)');
  const manifestPath = resolve(opts.manifest);
  const m = readManifest(manifestPath);
  const ep = openEndpoint(opts.to, { apiKey: opts.apiKey, role: 'target', mustExist: true });
  const sum: RollbackSummary = { datasets_deleted: 0, documents_deleted: 0, export_removed: false, warnings: rep.warnings, dry_run: !!opts.dryRun };
  try {
    const rec = m.imports[ep.id];
    if (!rec) throw new MigrationError(`The manifest records no import into ${ep.id}: nothing to roll back there`);
    if (!rec.rolled_back_at) {
      const live = new Map((await listAllDatasets(ep.client)).map((d) => [d.id, d]));
      const created = Object.values(rec.datasets).filter((d) => d.created);
      const gone = created.filter((d) => !live.has(d.dataset_id));
      for (const d of gone) rep.warn(`${d.name}: the dataset ${d.dataset_id} is already gone`);
      const ids = created.filter((d) => live.has(d.dataset_id)).map((d) => d.dataset_id);
      let done = 0;
      const total = ids.length + Object.keys(rec.uploaded_into_existing).length;
      for (const [kbId, docIds] of Object.entries(rec.uploaded_into_existing)) {
        const placed = rec.datasets[kbId];
        const ds = placed && live.get(placed.dataset_id);
        if (!ds) continue;
        const present = new Set((await listAllDocuments(ds)).map((d) => d.id));
        const mine = docIds.filter((id) => present.has(id));
        if (mine.length && !opts.dryRun) await ds.deleteDocuments({ ids: mine });
        sum.documents_deleted += mine.length;
        rep.progress({ step: 'rollback', done: ++done, total, item: ds.name });
      }
      // One request: RAGFlow deletes all of the ids or none.
      if (ids.length && !opts.dryRun) await ep.client.deleteDatasets({ ids });
      sum.datasets_deleted = ids.length;
      done += ids.length;
      rep.progress({ step: 'rollback', done, total });
      if (!opts.dryRun) {
        rec.rolled_back_at = Date.now();
        writeManifest(manifestPath, m);
      }
    } else {
      rep.info(`The import into ${ep.id} was rolled back already`);
    }
    if (!opts.keepExport && !opts.dryRun) sum.export_removed = removeExport(manifestPath, m.entries.map((e) => e.folder), rep);
    return sum;
  } finally {
    await ep.client.close();
  }
}

/** Only what the export wrote (its dataset folders and the manifest); the folder itself if that leaves it empty. */
function removeExport(manifestPath: string, folders: string[], rep: Reporter): boolean {
  const dir = dirname(manifestPath);
  try {
    for (const f of folders) {
      const p = join(dir, f);
      // Folder names come from the manifest: never follow one out of the export's folder.
      if (resolve(p).startsWith(resolve(dir) + '/') && existsSync(p)) rmSync(p, { recursive: true, force: true });
    }
    rmSync(manifestPath, { force: true });
    if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
    return true;
  } catch (e) {
    rep.warn(`The export at ${dir} could not be removed entirely: ${errorText(e)}`);
    return false;
  }
}

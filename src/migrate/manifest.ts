import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** One exported file: `name` is unique within its dataset and is the name it is uploaded under. */
export interface ManifestFile {
  name: string;
  /** Relative to the manifest's folder (absolute paths are accepted too). */
  local_path: string;
  /** The document's name at the source (differs from `name` where duplicates got `_1`, `_2`). */
  source_name: string;
  doc_id: string;
  size: number;
  sha256: string;
  /** The document's own chunk method at the source (it may differ from the dataset's). */
  chunk_method?: string;
}

export interface SkippedDocument {
  doc_id: string;
  name: string;
  reason: string;
}

/** One dataset: RAGFlow's migration entry (`kb_id`, `kb_name`, `kb_description`, `files`) plus what a faithful copy needs. */
export interface ManifestEntry {
  kb_id: string;
  kb_name: string;
  kb_description: string | null;
  permission: string;
  chunk_method: string;
  parser_config: Record<string, unknown> | null;
  embedding_model: string | null;
  pagerank: number;
  /** `<dataset_name>_<first 8 chars of dataset id>`, relative to the manifest's folder. */
  folder: string;
  files: ManifestFile[];
  skipped: SkippedDocument[];
}

/** What one import into one target did: rollback and re-runs read it. */
export interface ImportRecord {
  /** Source kb_id → target dataset id, for every entry the import has placed. */
  datasets: Record<string, { dataset_id: string; name: string; created: boolean }>;
  /** Documents this import uploaded into datasets it did not create (rollback removes them). */
  uploaded_into_existing: Record<string, string[]>;
  started_at: number;
  finished_at: number | null;
  rolled_back_at: number | null;
}

export interface Manifest {
  format: 'ragloom-migration';
  version: 1;
  created_at: number;
  /** False while an export is under way (an interrupted export's manifest cannot be imported). */
  complete: boolean;
  /** The source without credentials: a URL (origin + path) or a database file path. */
  source: string;
  entries: ManifestEntry[];
  /** Keyed by target (URL or absolute file path). */
  imports: Record<string, ImportRecord>;
}

export const MANIFEST_NAME = 'manifest.json';

export function readManifest(path: string): Manifest {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new MigrationError(`Cannot read the manifest ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch (e) {
    throw new MigrationError(`The manifest ${path} is not JSON: ${(e as Error).message}`);
  }
  if (!m || typeof m !== 'object' || !Array.isArray(m.entries)) {
    throw new MigrationError(`The manifest ${path} has no "entries" list: not a migration manifest`);
  }
  for (const [i, e] of m.entries.entries()) {
    if (!e || typeof e.kb_name !== 'string' || typeof e.kb_id !== 'string' || !Array.isArray(e.files)) {
      throw new MigrationError(`The manifest ${path}: entry ${i} needs kb_id, kb_name and files`);
    }
    // Entries written by RAGFlow's own export scripts carry only kb_id/kb_name/kb_description/files.
    e.files = e.files.map((f) => ({ ...f, source_name: f.source_name ?? f.name, doc_id: f.doc_id ?? '', size: f.size ?? -1, sha256: f.sha256 ?? '' }));
    e.skipped ??= [];
    e.pagerank ??= 0;
    e.permission ??= 'me';
    e.chunk_method = chunkMethodOf(e as unknown as Record<string, unknown>);
  }
  m.imports ??= {};
  m.complete ??= true; // manifests of other tools have no such field
  return m;
}

/** Written whole to a temporary file and renamed over: a crash leaves the old or the new manifest, never half of one. */
export function writeManifest(path: string, m: Manifest): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(m, null, 2) + '\n');
  renameSync(tmp, path);
}

/** A file's path on disk from its manifest entry. */
export function filePath(manifestPath: string, f: ManifestFile): string {
  return isAbsolute(f.local_path) ? f.local_path : resolve(dirname(manifestPath), f.local_path);
}

export function entryFolder(manifestDir: string, e: ManifestEntry): string {
  return join(manifestDir, e.folder);
}

/** Chunk methods RAGFlow knows (parser_id values of 0.17.2 and 0.25.6); anything else imports as naive. */
export const CHUNK_METHODS = [
  'naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag', 'resume', 'knowledge_graph',
] as const;

/** `chunk_method`, or a database-level export's `parser_id`, checked against RAGFlow's list. */
export function chunkMethodOf(o: Record<string, unknown>): string {
  const m = (typeof o.chunk_method === 'string' && o.chunk_method) || (typeof o.parser_id === 'string' && o.parser_id) || 'naive';
  return (CHUNK_METHODS as readonly string[]).includes(m) ? m : 'naive';
}

/** Characters no file system takes in a name, and leading dots (hidden files), replaced. */
export function safeName(name: string): string {
  const s = name.replace(/[/\\\0<>:"|?*\x01-\x1f]/g, '_').replace(/^\.+/, '_').trim();
  return s || '_';
}

/** `<dataset_name>_<first 8 chars of dataset id>`. */
export function datasetFolderName(name: string, id: string): string {
  return `${safeName(name)}_${id.slice(0, 8)}`;
}

/** `a.txt`, `a_1.txt`, `a_2.txt` …: the first free name in `taken` (compared case-insensitively, as RAGFlow and some file systems do). */
export function uniqueFileName(name: string, taken: Set<string>): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  let candidate = name;
  for (let i = 1; taken.has(candidate.toLowerCase()); i++) candidate = `${stem}_${i}${ext}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}

/** A migration step refused before or while running (bad arguments, unreadable manifest, unreachable source). */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

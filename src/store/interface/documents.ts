/** Documents and the bytes of their files (tables document, blob). */

export interface DocumentRow {
  id: string;
  dataset_id: string;
  name: string;
  suffix: string;
  type: string;
  size: number;
  blob_sha256: string;
  location: string;
  thumbnail: string | null;
  parser_id: string;
  parser_config: string;
  source_type: string;
  created_by: string;
  token_num: number;
  chunk_num: number;
  progress: number;
  progress_msg: string;
  process_begin_at: number | null;
  process_duration: number;
  run: string;
  status: string;
  meta_fields: string;
  create_time: number;
  update_time: number;
}

/** The `run` column holds RAGFlow's TaskStatus digits; the wire shows names. */
export const RUN = { UNSTART: '0', RUNNING: '1', CANCEL: '2', DONE: '3', FAIL: '4' } as const;

/**
 * A file's bytes: in memory, or streamed as parts in order (read once, before the upload's
 * transaction; a source that throws aborts the upload and nothing of it is stored).
 */
export type FileSource = Uint8Array | AsyncIterable<Uint8Array>;

/** One uploaded file. */
export interface NewFile {
  /** The name asked for; the store makes it unique in the dataset (see DocumentStore.upload). */
  name: string;
  /**
   * The bytes. PostgreSQL writes a stream (and any file over a part, 1 MiB) part by part as it
   * comes, never holding it whole; SQLite gathers it (its blob is one value).
   */
  bytes: FileSource;
}

/** What a document's name makes of it: its suffix, RAGFlow's file type and its chunk method. */
export interface FileKind {
  suffix: string;
  type: string;
  parser_id: string;
}

export interface UploadTarget {
  dataset_id: string;
  /** The dataset's parser_config, each new document's own. */
  parser_config: string;
  created_by: string;
  time: number;
  /**
   * The kind of `files[index]` under its final name (pure; called inside the transaction): a name
   * without an extension is typed by the file's content, so the file is named too.
   */
  kindOf(name: string, index: number): FileKind;
}

export interface DocumentListQuery {
  dataset_id: string;
  /** this name, compared case-insensitively */
  name?: string;
  /** only these ids */
  ids?: readonly string[];
  /** only documents without metadata (meta_fields `{}`) */
  noMetadata?: boolean;
  /** a substring of the name, lower case (the name is compared lowercased) */
  keywords?: string;
  suffixes?: readonly string[];
  types?: readonly string[];
  /** run digits */
  runs?: readonly string[];
  /** a column of the document (RAGFlow orders by any field of its Document) */
  orderby: keyof DocumentRow;
  desc: boolean;
  /** SQL's LIMIT and OFFSET: a negative limit is no limit. */
  limit: number;
  offset: number;
}

/** The columns an update may set. */
export type DocumentChanges = Partial<Pick<DocumentRow, 'name' | 'location' | 'parser_id' | 'parser_config' | 'meta_fields' | 'status' | 'update_time'>>;

export interface DocumentUpdate {
  changes: DocumentChanges;
  /**
   * The chunk method changed: the document's chunks are removed, its parse state and counts reset
   * (UNSTART), and its dataset's counters recomputed.
   */
  resetChunks: boolean;
}

/** A stored file, read as a whole or streamed. */
export interface FileBytes {
  readonly size: number;
  /** The whole file (one buffer; the caller must not keep a view of it past its own use). */
  bytes(): Promise<Uint8Array>;
  /** The file in pieces of at most `chunkSize` bytes, in order. */
  stream(chunkSize?: number): AsyncIterable<Uint8Array>;
}

/** 'same': the new bytes are the stored file's (same sha256): nothing changed. */
export type ReplaceResult = 'replaced' | 'same' | 'gone' | 'running';

export interface DocumentStore {
  /** The document when it is in the dataset. */
  get(datasetId: string, id: string): Promise<DocumentRow | undefined>;
  /** Documents of the dataset among `ids` (absent ones left out). */
  getMany(datasetId: string, ids: readonly string[]): Promise<Map<string, DocumentRow>>;
  /** A document of the dataset has this name (case-insensitively). */
  nameExists(datasetId: string, name: string): Promise<boolean>;
  /** Another document of the dataset has exactly this name (case-sensitive, as RAGFlow's rename check). */
  exactNameTaken(datasetId: string, name: string, exceptId: string): Promise<boolean>;
  /**
   * Stores the files' bytes (content-addressed: identical bytes once) and a document for each, in
   * one transaction that excludes every other upload: each name is made free in the dataset
   * (case-insensitively, `duplicateName` for files) against the stored names and the earlier files
   * of this call. The dataset's doc_num and update_time move with them. `ids[i]` becomes the id of
   * `files[i]`.
   */
  upload(target: UploadTarget, files: readonly NewFile[], ids: readonly string[]): Promise<void>;
  list(q: DocumentListQuery): Promise<{ total: number; rows: DocumentRow[] }>;
  /**
   * One transaction: the changes (with `resetChunks`, see there); `status` changes switch the
   * chunks' `available`; a new name re-titles the chunks' full-text rows (unless reset).
   */
  update(doc: Pick<DocumentRow, 'id' | 'dataset_id'>, u: DocumentUpdate): Promise<void>;
  /**
   * Switches documents on ('1') or off ('0'), their chunks' `available` with them, one
   * transaction; per id (in order): 'set' (a document of the dataset; written when its status
   * differs, with update_time `time`), 'absent' (no such document), 'elsewhere' (another dataset's).
   */
  setStatus(datasetId: string, ids: readonly string[], status: '0' | '1', time: number): Promise<Array<'set' | 'absent' | 'elsewhere'>>;
  /** Sets documents' `run` as given and their progress 0, one transaction (the web app's run states other than parse and stop). */
  setRun(ids: readonly string[], run: string): Promise<void>;
  /** Every document of the dataset. */
  allOf(datasetId: string): Promise<DocumentRow[]>;
  /**
   * Deletes the documents with their chunks and the blobs nobody else uses, and recomputes the
   * dataset's counters: one transaction.
   */
  delete(datasetId: string, docs: ReadonlyArray<Pick<DocumentRow, 'id' | 'blob_sha256'>>): Promise<void>;
  /** A stored file by its sha256. */
  file(sha256: string): Promise<FileBytes | undefined>;
  /**
   * Whole stored files by sha256 (absent ones left out), for a batch of small files read at once
   * (the parse queue's): one statement on PostgreSQL, not a few per file.
   */
  files(sha256s: readonly string[]): Promise<Map<string, Uint8Array>>;
  /**
   * New bytes under a document, in memory or streamed as an upload's are (FileSource: PostgreSQL
   * writes a stream part by part before the transaction, SQLite gathers it), in one transaction
   * that reads its state again: 'gone' (deleted meanwhile), 'running' (a parse was queued
   * meanwhile) and 'same' (the bytes are the stored file's) change nothing; else the blob is
   * stored, the document points at it (size, UNSTART, progress 0), the old blob is pruned when
   * unused, and the dataset's update_time moves. A source that throws changes nothing.
   */
  replaceContent(doc: Pick<DocumentRow, 'id' | 'dataset_id'>, bytes: FileSource, time: number): Promise<ReplaceResult>;
  /**
   * The suffix, run and meta_fields of the dataset's documents that pass these filters (as in
   * list), in the order they were stored: what a listing's `type=filter` counts.
   */
  facetRows(datasetId: string, f: Pick<DocumentListQuery, 'keywords' | 'runs' | 'types' | 'suffixes'>): Promise<Array<Pick<DocumentRow, 'suffix' | 'run' | 'meta_fields'>>>;
  /** Every document of the dataset as (id, meta_fields JSON), by creation; with `nonEmpty`, only those with metadata. */
  metaFieldsOf(datasetId: string, nonEmpty?: boolean): Promise<Array<{ id: string; meta_fields: string }>>;
  /**
   * Edits the meta_fields of the dataset's documents among `ids`, one transaction: `edit` (pure,
   * called inside it) gets each one's row as it is and returns its new meta_fields JSON, or null
   * to leave it; a written one gets update_time `time`. Returns how many were written.
   */
  editMetaFields(datasetId: string, ids: readonly string[], edit: (doc: { id: string; meta_fields: string }) => string | null, time: number): Promise<number>;
  /** Per document id, its meta_fields JSON (absent ids left out). */
  metaFields(ids: readonly string[]): Promise<Map<string, string>>;
  /** Which of `ids` are documents of one of the datasets. */
  inDatasets(ids: readonly string[], datasetIds: readonly string[]): Promise<Set<string>>;
}

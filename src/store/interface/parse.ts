/**
 * Parse work (table parse_owner and the parse state of documents): which process parses which
 * document, its progress, and the swap of a parsed document's chunks.
 *
 * A document is RUNNING while it waits for a parse or is being parsed. The process that queued it
 * claims it (`claim`: one owner row per document, with a heartbeat); another process opening the
 * store re-queues only RUNNING documents whose owner is gone (no row, or a dead pid on this host,
 * or a heartbeat older than a minute anywhere). Every write below is one transaction.
 */
import type { CachedVector, NewChunk } from './chunks.js';
import type { DocumentRow } from './documents.js';

/** A process that parses: its pid on its host. */
export interface ParseOwner {
  pid: number;
  host: string;
}

/** A claim as stored: the owner and its last heartbeat (ms since the epoch). */
export interface ParseClaim extends ParseOwner {
  heartbeat: number;
}

/** The dataset settings a parse reads. */
export interface ParseDataset {
  parser_config: string;
  embd_id: string;
  /** The full-text language setting its chunks are analysed in. */
  language: string | null;
}

/** How a parsed (or failed, or cancelled) document ends, as `ParseWorkStore.finish` applies it. */
export interface ParseOutcomeRow {
  id: string;
  dataset_id: string;
  /** Present when the parse succeeded: the chunks that replace the document's old ones. */
  chunks?: NewChunk[];
  /**
   * The dataset language the chunks were analysed in. When the dataset's language is another at
   * the swap, the store analyses them again in the language it has then (their `lang` and terms).
   */
  language: string | null;
  /** The document's log so far; the lines of its outcome are appended to it (the array itself). */
  log: string[];
  /** Appended when the chunks are swapped in (DONE). */
  doneLines: string[];
  /** Appended when it fails (FAIL; also a parse whose chunks are absent). */
  failLine: string;
  /** How long it took, in seconds. */
  seconds: number;
  /** When it started (ms since the epoch). */
  began: number;
}

/**
 * One parse of a document as its log keeps it (RAGFlow's pipeline_operation_log; its id is also
 * the parse's task id). `operation_status` reads as now: a row left open whose document is gone
 * or no longer parsing reads as the document's state, or CANCEL.
 */
export interface ParseLogRow {
  id: string;
  document_id: string;
  dataset_id: string;
  tenant_id: string;
  parser_id: string;
  document_name: string;
  document_suffix: string;
  document_type: string;
  source_from: string;
  progress: number;
  progress_msg: string;
  process_begin_at: number | null;
  process_duration: number;
  operation_status: string;
  create_time: number;
  update_time: number;
}

/** The columns a dataset's parse logs can be ordered by. */
export type ParseLogOrder = keyof ParseLogRow;

export interface ParseWorkStore {
  /** RUNNING documents, each with its claim when one is stored. */
  running(): Promise<Array<{ id: string; claim: ParseClaim | null }>>;
  /** Claims of documents that are no longer RUNNING (left by a process that died after its parse). */
  staleClaims(): Promise<Array<{ id: string; claim: ParseClaim }>>;
  /** Drops these claims (each only while still held by that pid). */
  dropClaims(claims: ReadonlyArray<{ id: string; pid: number }>): Promise<void>;
  /**
   * Marks documents for parsing: RUNNING, counts zeroed, their datasets' counters lowered by as
   * much, and a parse-log row opened for each (of `tenantId`; a row still open for it, a parse
   * superseded, closed as CANCEL). One transaction.
   */
  reset(ids: readonly string[], tenantId: string): Promise<void>;
  /** Claims documents for `owner` (replacing any other claim), stamped `now`. */
  claim(ids: readonly string[], owner: ParseOwner, now: number): Promise<void>;
  /**
   * Claims for `owner` (stamped `now`) up to `n` RUNNING documents nobody is parsing, oldest queued
   * first, and returns their ids; processes calling it at once never get the same document.
   * SQLite: documents without a claim. PostgreSQL: the `parse_job` queue (`SKIP LOCKED`), each
   * document held by a lease the store renews until `finish`, `failAll` or `release`; a lease that
   * runs out (its process died) makes the document claimable again. At most this process's even
   * share of the queue (queued documents over the processes watching it, `watchQueue`), less what
   * it holds: N processes split a small folder.
   */
  claimNext(n: number, owner: ParseOwner, now: number): Promise<string[]>;
  /** Drops `pid`'s claims of these documents. */
  release(ids: readonly string[], pid: number): Promise<void>;
  /**
   * Calls `wake` when work for `claimNext` may have been queued by any process (PostgreSQL: a
   * NOTIFY sent at the commit of a reset or a release, and after the listening connection
   * reconnects; notifications can be lost, so callers keep a slow timer too). Resolves to the
   * function that stops it. SQLite has no signal between processes: it never calls `wake`.
   */
  watchQueue(wake: () => void): Promise<() => Promise<void>>;
  /** Refreshes the heartbeat of every claim of `owner`. */
  heartbeat(owner: ParseOwner, now: number): Promise<void>;
  /** Documents by id (any dataset; absent ones left out). */
  documents(ids: readonly string[]): Promise<Map<string, DocumentRow>>;
  /** The parse settings of datasets (absent ones left out). */
  datasets(ids: readonly string[]): Promise<Map<string, ParseDataset>>;
  /** Progress of RUNNING documents (others keep their state). */
  progress(rows: ReadonlyArray<{ id: string; progress: number; msg: string; begin: number | null }>): Promise<void>;
  /**
   * The end of a parse job, one transaction: the embedding cache rows; every document still RUNNING
   * with chunks has its old chunks swapped for them (DONE, counts set, `doneLines` logged); one
   * still RUNNING without chunks FAILs (`failLine`, its old chunks and their counts restored); a
   * CANCELed one gets its duration and its counts restored; datasets' counters move by the
   * differences; their open parse-log rows finish with the documents' end state; `pid`'s claims
   * of all of them are released.
   */
  finish(puts: readonly CachedVector[], docs: readonly ParseOutcomeRow[], pid: number, time: number): Promise<void>;
  /**
   * The store refused `finish`: every document still RUNNING FAILs with the line `line` after its
   * log (counts restored, parse-log rows finished); `pid`'s claims are released. One transaction.
   */
  failAll(docs: ReadonlyArray<Pick<ParseOutcomeRow, 'id' | 'dataset_id' | 'log' | 'seconds'>>, line: string, pid: number): Promise<void>;
  /** Stops documents' parses: CANCEL, progress 0, their old chunks' counts restored, their parse-log rows finished. One transaction. */
  cancel(ids: readonly string[]): Promise<void>;
  /** A parse-log row by its id (the parse's task id). */
  log(id: string): Promise<ParseLogRow | undefined>;
  /**
   * A dataset's parse-log rows, ordered by `orderby` (then by insertion, the same way); with
   * `keywords`, only rows whose document name contains it (lower case; the name lowercased).
   */
  logs(datasetId: string, q: { keywords?: string; orderby: ParseLogOrder; desc: boolean }): Promise<ParseLogRow[]>;
}

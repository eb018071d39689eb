/**
 * What search (src/search) reads: the change feeds its in-memory indexes follow, the row readers
 * they load from, the rows a ranked page is written from, and — when the store has one — a
 * full-text engine that answers until the term index is built.
 *
 * The in-memory indexes are src/search's (term-index.ts, vector-index.ts); the store is the
 * source of truth. Each index loads its rows in one snapshot (`loadVectors`, or a term index's
 * slices from `head()`), then before each search applies what changed since (`changesSince`):
 * the ids inserted, changed or deleted since the position it applied. Positions are opaque to
 * search (`FeedPosition`). A store reached by several processes must make the feed commit-order
 * safe: a change must never become visible behind a position a follower has already passed.
 */
import type { ChunkRow } from './chunks.js';

/** The tables an index follows: chunks (vectors and full text) and memory messages (vectors). */
export type FeedName = 'chunks' | 'memory';

declare const feedPosition: unique symbol;

/**
 * A position in a change feed. Only the store that gave it reads or compares it; search keeps it
 * and hands it back. (SQLite: the log's last seq and the table's highest row id. A store whose
 * ids are not given out in commit order — PostgreSQL — needs more, e.g. (txid, seq).)
 */
export type FeedPosition = { readonly [feedPosition]: 'FeedPosition' };

/** Where a follower stands: the position it applied (null: never loaded, or loading), rows held. */
export interface FeedAt {
  position: FeedPosition | null;
  live: number;
}

/** What a follower must do to catch up (`position`: where it then stands; `floor`: hand it to `trim`). */
export type CatchUp =
  | { kind: 'reload' }
  | { kind: 'none' }
  | { kind: 'apply'; dirty: Set<number>; position: FeedPosition; floor: FeedPosition };

/** A copy that follows a feed: the position it applied (null: none yet); the feed is never trimmed past it. */
export interface LogFollower {
  readonly position: FeedPosition | null;
}

export interface ChangeFeed {
  /**
   * The ids to re-read since `at` (inserted, deleted, switched, re-embedded, re-titled since
   * `at.position`), or 'reload' when `at` has no position, the feed was trimmed past it, or so
   * much changed that a rebuild is cheaper (more than max(20,000, live/4)). Commit-order safe: a
   * change is never made visible behind a position already handed out.
   */
  changesSince(at: FeedAt): Promise<CatchUp>;
  /** The feed's position now: where a full read that starts now starts. */
  head(): Promise<FeedPosition>;
  /** Registers a copy that follows this feed in this process. */
  follow(f: LogFollower): void;
  unfollow(f: LogFollower): void;
  /**
   * Drops the feed's entries every follower has applied, once 200,000 lie past `floor` (from the
   * last `changesSince`), and records the new floor (a copy behind it reloads). Best effort:
   * skipped when read-only or busy.
   */
  trim(floor: FeedPosition): Promise<void>;
}

/** A row as a vector index holds it: searchable or switched off, its partition (dataset or memory id), its vector, its filter values. */
export interface VectorRow {
  searchable: boolean;
  partition: string;
  /** float32, unit length (may be a view valid until the next read) */
  vector: Float32Array;
  /** the source's filter columns, in `VECTOR_SOURCES[feed].tags` order */
  tags: readonly string[];
}

/** What a full load hands its index, row by row (the vector a view valid during the call). */
export interface VectorSink {
  /** How many rows are coming (at most), before the first `put` (sources that know it). */
  size(n: number): void;
  put(rowid: number, partition: string, searchable: boolean, vector: Float32Array, tags: readonly string[]): void;
}

/** The vector sources, as search sees them. */
export const VECTOR_SOURCES: Readonly<Record<FeedName, { readonly name: string; readonly tags: readonly string[] }>> = Object.freeze({
  chunks: { name: 'chunk', tags: [] },
  /** searchable = enabled and not forgotten; filters by agent, session and user (never changed after insert) */
  memory: { name: 'memory message', tags: ['agent_id', 'session_id', 'user_id'] },
});

/**
 * A chunk's full-text columns as stored: [rowid, content, index_text, keywords JSON, questions JSON,
 * title (the document's name where the chunk is titled, else ''), document id, lang (the analysis
 * its row was written with; null: analyzer version 2), the document's name (null: the document is
 * gone)], and, where the store keeps it, the full-text row itself as written (its four analysed
 * columns: the term index then reads them instead of analysing the text again), and, where the
 * store sends it (SearchReader.termPages), the chunk's page row as `pageChunks` reads it (absent:
 * its document is gone): the term index then serves a ranked page without a read.
 */
export type TermRow = [rowid: number, content: string, indexText: string | null, keywords: string, questions: string, title: string, documentId: string, lang: string | null,
  documentName: string | null, fts?: readonly [string, string, string, string], page?: PageChunk];

/** Splits texts into the full-text engine's tokens, and computes its logarithm (the term index matches FTS5 bit for bit). */
export interface TextTokenizer {
  /** Each text's tokens in order. */
  tokenise(texts: readonly string[]): string[][];
  /** ln(x) as the engine computes it (null for x ≤ 0). */
  ln(x: number): number | null;
}

/** A chunk of a ranked page, with its index text and its document's name. */
export type PageChunk = Pick<ChunkRow, 'rowid' | 'id' | 'document_id' | 'dataset_id' | 'content' | 'important_keywords' | 'questions' | 'tag_kwd' |
  'positions' | 'available' | 'image_id' | 'doc_type' | 'create_time' | 'create_timestamp'> & { index_text: string | null; doc_name: string; lang: string | null };

/** The full-text tables (title, content, keywords, questions). */
export type FtsTable = 'chunk_fts' | 'memory_fts';

/**
 * bm25() column weights of the full-text tables: title, content, keywords, questions (RAGFlow's
 * field boosts title_tks^10, important_kwd^30, question_tks^20 against content_ltks^2).
 */
export const FTS_COLUMN_WEIGHTS = [5, 1, 15, 10] as const;

/**
 * A full-text engine in the store (SQLite's FTS5), read synchronously while a search ranks.
 * Optional: without one, search answers from its term index (built before the first search).
 * Scores are bm25 as FTS5 gives them (negative: lower is better), columns weighted FTS_COLUMN_WEIGHTS.
 */
export interface FullTextEngine {
  /** A key that changes whenever the table's rows may have changed (statistics are cached by it). */
  statsKey(table: FtsTable): string;
  /** The table's row count and its columns' token totals: [rows, title, content, keywords, questions]. */
  totals(table: FtsTable): number[];
  /** Rows matching `match` (an FTS5 expression), counted up to `limit` when given. */
  count(table: FtsTable, match: string, limit?: number): number;
  /** Every matching row: [rowid, bm25]. */
  all(table: FtsTable, match: string): Array<[number, number]>;
  /** Matching rows best first: [rowid, bm25]. */
  top(table: FtsTable, match: string, limit: number, offset: number): Array<[number, number]>;
  /** [rowid, bm25] of those of `rowids` that match. */
  scores(table: FtsTable, match: string, rowids: readonly number[]): Array<[number, number]>;
  /**
   * The rows' stored text (TermRow without the document id; a memory message has only content, lang
   * null). Not for `chunk_fts` where `chunkTexts` is false: read those from the store (SearchReader.termRows).
   */
  texts(table: FtsTable, rowids: readonly number[]): Array<[rowid: number, content: string, indexText: string | null, keywords: string, questions: string, title: string, lang: string | null]>;
  /**
   * false: the engine holds chunk_fts's index, not the chunks' texts (PostgreSQL's FTS5 copy: the
   * texts were two thirds of its bytes); `texts('chunk_fts', …)` then throws. Absent: true.
   */
  readonly chunkTexts?: boolean;
  /** A searchable memory message's partition and filter values (search without a vector index). */
  messageFilter(id: number): { memory_id: string; agent_id: string; session_id: string; user_id: string } | undefined;
}

export interface SearchReader {
  feed(name: FeedName): ChangeFeed;
  /** The vector dimensions chunks are stored with. */
  chunkDims(): Promise<number[]>;
  /** Whether chunk vectors of this dimension exist (an index of them can be built). */
  hasChunkDim(dim: number): Promise<boolean>;
  /**
   * Loads every row of `dim` of the feed's table in one snapshot, in a stable order (the order
   * rows were stored in); returns the feed position it reflects. `shadow`: the store may read a
   * faster private layout giving the same rows in the same order (SQLite: vec0's shadow tables).
   * `partition`: only the rows of that partition (a dataset's chunks: its index loads alone).
   */
  loadVectors(feed: FeedName, dim: number, sink: VectorSink, opts?: { shadow?: boolean; partition?: string }): Promise<FeedPosition>;
  /**
   * The rows of `dim` among `ids` (undefined: no such row, or another dimension, or no vector, or
   * — with `partition` — a row of another partition).
   */
  vectorRows(feed: FeedName, dim: number, ids: Iterable<number>, partition?: string): Promise<Array<[number, VectorRow | undefined]>>;
  /**
   * The chunks' full-text rows among `ids` (absent: deleted, or — with `dataset` — a chunk of
   * another dataset: a dataset's term index follows the store-wide feed and drops those).
   */
  termRows(ids: Iterable<number>, dataset?: string): Promise<Map<number, TermRow>>;
  /**
   * Chunks' full-text rows with rowid above `after`, by rowid, at most `limit`: the rows there at
   * `at` (a `head()`), and possibly later ones (they are in the feed past `at` anyway).
   * `dataset`: only that dataset's chunks (a dataset's term index loads alone).
   */
  termSlice(at: FeedPosition, after: number, limit: number, dataset?: string): Promise<TermRow[]>;
  /**
   * true: termRows/termSlice rows carry their page row (TermRow's `page`), so the term index holds
   * each chunk's page row and a search's page needs no read (PostgreSQL: a read there is a round
   * trip, ~0.8 ms more than SQLite's in-process read inside a search). Absent: they do not.
   */
  readonly termPages?: boolean;
  /** The tokenizer and logarithm of the chunks' full-text engine. */
  textTokenizer(): Promise<TextTokenizer>;
  /** The store's full-text engine, if it has one. */
  readonly fullText: FullTextEngine | undefined;
  /**
   * Brings `fullText` up to date with the store before a search reads it synchronously (a store
   * whose engine is a copy that follows the feed: PostgreSQL's). Absent where the engine is the
   * store itself (SQLite's FTS5).
   */
  syncFullText?(table: FtsTable): Promise<void>;
  /**
   * Bytes this process holds for `fullText` (a copy in memory: PostgreSQL's). Absent where the
   * engine is the store's own file (SQLite's FTS5: the OS caches its pages).
   */
  fullTextBytes?(): number;

  /** The datasets' `language` settings (one per dataset found, in no set order). */
  datasetLanguages(datasetIds: readonly string[]): Promise<Array<string | null>>;
  /** Chunks of the datasets, counted up to `cap`. */
  countChunks(datasetIds: readonly string[], cap: number): Promise<number>;
  /** [id, meta_fields JSON] of every document of the datasets. */
  documentMeta(datasetIds: readonly string[]): Promise<Array<{ id: string; meta_fields: string }>>;
  /** Rowids of the documents' chunks (available ones only, unless `availableOnly` is false). */
  chunkRowidsOfDocuments(documentIds: readonly string[], availableOnly?: boolean): Promise<number[]>;
  /** The chunks of a page (absent: gone). */
  pageChunks(rowids: readonly number[]): Promise<Map<number, PageChunk>>;
  /** Documents' names (absent: gone). */
  documentNames(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * A ranked page's reads at once: its chunks (`pageChunks`) and documents' names (`documentNames`),
   * in one round trip where the store is across a network (PostgreSQL: one statement).
   */
  pageRows(rowids: readonly number[], documentIds: readonly string[]): Promise<{ chunks: Map<number, PageChunk>; names: Map<string, string> }>;
  /** Each chunk's document (id and name; absent: gone). */
  chunkDocuments(rowids: readonly number[]): Promise<Map<number, { id: string; name: string }>>;
}

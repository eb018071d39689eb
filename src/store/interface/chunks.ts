/**
 * Chunks with their full-text rows and vectors (tables chunk, chunk_fts, vec_<dim>), and the
 * embedding cache (embedding_cache).
 */
import type { FtsTerms, Lang } from '../../text/index.js';

export interface ChunkRow {
  rowid: number;
  id: string;
  document_id: string;
  dataset_id: string;
  content: string;
  important_keywords: string;
  questions: string;
  tag_kwd: string;
  positions: string;
  available: number;
  image_id: string;
  doc_type: string;
  chunk_order: number;
  page_num: number;
  top: number;
  token_num: number;
  vec_dim: number;
  create_time: string;
  create_timestamp: number;
  /** 1: the full-text row has the document's name as title terms (parsed chunks); 0: none (added through the API). */
  titled: number;
}

export interface NewChunk {
  id: string;
  document_id: string;
  dataset_id: string;
  content: string;
  /** Text indexed for full-text search (defaults to content). */
  index_text?: string;
  /** The document's name, indexed as the title field; '' for none (a chunk added through the API: `titled` 0). */
  title: string;
  important_keywords: string[];
  questions: string[];
  tag_kwd: string[];
  positions: number[][];
  available: boolean;
  doc_type?: string;
  chunk_order: number;
  page_num?: number;
  top?: number;
  token_num: number;
  create_time: string;
  create_timestamp: number;
  vector: Float32Array;
  /**
   * The language the chunk's full-text row is analysed as (`chunkLanguage` of its dataset's
   * setting), stored with it so that it can be re-analysed alike. @default 'en'
   */
  lang?: Lang;
  /**
   * The chunk's full-text row when the caller analysed it already (the ingest worker does): it
   * must equal `ftsTerms(title, index_text ?? content, important_keywords, questions, lang)`.
   */
  terms?: FtsTerms;
}

/** A chunk's new text fields and vector (an update keeps its rowid, document and order). */
export type ChunkRewrite = Omit<NewChunk, 'document_id' | 'dataset_id' | 'chunk_order' | 'create_time' | 'create_timestamp'> & { dataset_id: string };

/** One embedding to cache: (model, sha256 of the text) → vector. */
export type CachedVector = [model: string, sha256: string, vector: Float32Array];

export interface ChunkStore {
  /** Cached vectors of texts by their sha256, for one model (misses absent). */
  cachedVectors(model: string, shas: readonly string[]): Promise<Map<string, Float32Array>>;
  /** Caches vectors (replacing any of the same key), one transaction. */
  cacheVectors(puts: readonly CachedVector[], time: number): Promise<void>;
  /**
   * Adds a chunk to a document, in one transaction that checks the document is still in the
   * dataset (undefined, nothing written, when it is gone): placed after the document's last
   * chunk, an existing chunk of the same id replaced, analysed in the dataset's language as it is
   * in that transaction (`chunkLanguage` of its content, keywords and questions), with `image`
   * kept as the chunk's image (`image_id` `<dataset>-<chunk>`, doc_type 'image'); the document's and
   * dataset's counters move up by one chunk and its tokens (RAGFlow's increment_chunk_num: adding
   * the same content twice counts twice). Returns the stored row.
   */
  add(datasetId: string, chunk: Omit<NewChunk, 'chunk_order'>, image?: Uint8Array): Promise<ChunkRow | undefined>;
  get(documentId: string, id: string): Promise<ChunkRow | undefined>;
  /**
   * A document's chunks by position (page, top, order; chunks without positions last), newest
   * first among equals. SQL's LIMIT and OFFSET: a negative limit is no limit. `available` 0 / 1:
   * only chunks switched off / on.
   */
  list(documentId: string, limit: number, offset: number, available?: 0 | 1 | null): Promise<{ total: number; rows: ChunkRow[] }>;
  /**
   * A document's chunks matching any of the analysed `terms` (full text) in the title, content,
   * keywords or questions, best first (bm25 over them weighted 1, 2, 30, 20); `available` as list.
   */
  search(documentId: string, terms: readonly string[], limit: number, offset: number, available?: 0 | 1 | null): Promise<{ total: number; rows: ChunkRow[] }>;
  /**
   * Replaces the text fields and vector of the chunk at `rowid` (its id may change with the
   * content; analysed in the dataset's language as add does; `image` kept as add does) and moves
   * its document's and dataset's token counters by the difference, in one transaction that checks
   * the chunk is still there under that rowid: false (nothing written) when it is not.
   */
  rewrite(at: { rowid: number; id: string; document_id: string; dataset_id: string }, c: ChunkRewrite, image?: Uint8Array): Promise<boolean>;
  /** Rowids of a document's chunks: all, or those with these ids (absent ids left out, the ids' order kept). */
  rowidsOf(documentId: string, ids: readonly string[] | 'all'): Promise<number[]>;
  /**
   * Deletes the document's chunks at these rowids and moves its and its dataset's counters down by
   * those still there (RAGFlow's decrement_chunk_num), one transaction.
   */
  remove(doc: { id: string; dataset_id: string }, rowids: readonly number[]): Promise<void>;
  /**
   * Switches the dataset's chunks of these ids on or off, in one transaction: all of them, or none
   * when one is not a chunk of the dataset (false).
   */
  setAvailable(datasetId: string, ids: readonly string[], on: boolean): Promise<boolean>;
  /**
   * The dataset's first `limit` chunks switched on (by rowid), with their document's name: what
   * a check of an embedding model samples from.
   */
  embeddingSamples(datasetId: string, limit: number): Promise<Array<Pick<ChunkRow, 'rowid' | 'id' | 'document_id' | 'content' | 'questions' | 'vec_dim'> & { name: string }>>;
  /** The stored vectors of chunks, by rowid (chunks without one absent). */
  storedVectors(chunks: ReadonlyArray<Pick<ChunkRow, 'rowid' | 'vec_dim'>>): Promise<Map<number, Float32Array>>;
  /** Each tag of the datasets' chunks (`tag_kwd`'s strings) with how many chunks have it, most used first (then by tag). */
  tagCounts(datasetIds: readonly string[]): Promise<Array<[string, number]>>;
  /**
   * For each edit in turn, the dataset's chunks whose tag list holds `tag` get `change(list)` as
   * their list (`change` is pure, called inside the transaction). One transaction.
   */
  editTags(datasetId: string, edits: ReadonlyArray<{ tag: string; change: (tags: unknown[]) => unknown[] }>): Promise<void>;
  /** A chunk image's bytes by its image id (`<dataset>-<chunk>`). */
  image(id: string): Promise<Uint8Array | undefined>;
  /**
   * One slice of a dataset's full-text re-index, one transaction: its chunks after rowid `after`
   * (at most `limit`, by rowid), each re-analysed as `langOf` says (a pure function); a row whose
   * terms change gets its full-text entry rewritten and is logged in the change feed, its `lang`
   * is set either way. Returns the last rowid read (null: none left) and how many were rewritten.
   */
  reindexSlice(datasetId: string, after: number, limit: number, langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }>;
}

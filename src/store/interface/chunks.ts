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
   * in that transaction (`chunkLanguage` of its content, keywords and questions); the document's
   * and dataset's counts recomputed. Returns the stored row.
   */
  add(datasetId: string, chunk: Omit<NewChunk, 'chunk_order'>): Promise<ChunkRow | undefined>;
  get(documentId: string, id: string): Promise<ChunkRow | undefined>;
  /**
   * A document's chunks by position (page, top, order; chunks without positions last), newest
   * first among equals. SQL's LIMIT and OFFSET: a negative limit is no limit.
   */
  list(documentId: string, limit: number, offset: number): Promise<{ total: number; rows: ChunkRow[] }>;
  /**
   * A document's chunks matching any of the analysed `terms` (full text), best first (bm25 over
   * the title, content, keywords and questions weighted 1, 2, 30, 20).
   */
  search(documentId: string, terms: readonly string[], limit: number, offset: number): Promise<{ total: number; rows: ChunkRow[] }>;
  /**
   * Replaces the text fields and vector of the chunk at `rowid` (its id may change with the
   * content; analysed in the dataset's language as add does) and recomputes its document's and
   * dataset's counts, in one transaction that checks the chunk is still there under that rowid:
   * false (nothing written) when it is not.
   */
  rewrite(at: { rowid: number; id: string; document_id: string; dataset_id: string }, c: ChunkRewrite): Promise<boolean>;
  /** Rowids of a document's chunks: all, or those with these ids (absent ids left out, the ids' order kept). */
  rowidsOf(documentId: string, ids: readonly string[] | 'all'): Promise<number[]>;
  /** Deletes chunks by rowid and recomputes their document's and dataset's counts, one transaction. */
  remove(doc: { id: string; dataset_id: string }, rowids: readonly number[]): Promise<void>;
  /**
   * One slice of a dataset's full-text re-index, one transaction: its chunks after rowid `after`
   * (at most `limit`, by rowid), each re-analysed as `langOf` says (a pure function); a row whose
   * terms change gets its full-text entry rewritten and is logged in the change feed, its `lang`
   * is set either way. Returns the last rowid read (null: none left) and how many were rewritten.
   */
  reindexSlice(datasetId: string, after: number, limit: number, langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }>;
}

/** FTS5's bm25() constants, shared by the FTS5 path (fulltext.ts) and the in-memory index (term-index.ts). */

/** FTS5's fixed BM25 k1. */
export const K1 = 1.2;
/** FTS5's fixed BM25 b. */
export const B = 0.75;
/** bm25() column weights: title, content, keywords, questions. */
export const COLUMN_WEIGHTS = [5, 1, 15, 10] as const;

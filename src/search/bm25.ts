/** FTS5's bm25() constants, shared by the FTS5 path (fulltext.ts) and the in-memory index (term-index.ts). */
import { FTS_COLUMN_WEIGHTS } from '../store/index.js';

/** FTS5's fixed BM25 k1. */
export const K1 = 1.2;
/** FTS5's fixed BM25 b. */
export const B = 0.75;
/** bm25() column weights: title, content, keywords, questions. */
export const COLUMN_WEIGHTS = FTS_COLUMN_WEIGHTS;

/**
 * term_similarity of one row: Σ coef[k]·f[k] / (f[k] + k1·(1 − b + b·len/avgdl)) over the query's
 * terms (f: the row's column-weighted frequency of term k, coef: its weight × idf × (k1 + 1)),
 * over the query's bound, at most 1. 0 when no term is in the row. The same sum, in the same
 * order, for the FTS5 path and the in-memory index.
 */
export function termSimilarity(f: Float64Array, coef: readonly number[], len: number, avgdl: number, upper: number): number {
  const norm = K1 * (1 - B + (B * len) / avgdl);
  let score = 0;
  for (let k = 0; k < f.length; k++) {
    const fk = f[k]!;
    if (fk > 0) score += (coef[k]! * fk) / (fk + norm);
  }
  return score > 0 ? Math.min(1, score / upper) : 0;
}

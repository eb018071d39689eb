/**
 * A retrieved chunk as every integration hands it on: its text with what an assistant needs to
 * cite it (document name and id, dataset id) and its scores.
 */
import type { Chunk } from '../../client/index.js';

export interface CitedChunk {
  /** The chunk's id. */
  id: string;
  content: string;
  document_id: string;
  document_name: string;
  dataset_id: string;
  /** `w · vector_similarity + (1 − w) · term_similarity` (docs/retrieval.md). */
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
  /** `[[page, x0, x1, top, bottom], …]` in the source file (PDFs); `[]` otherwise. */
  positions: number[][];
  /** With `highlight: true`: the content with `<em>` around the question's words. */
  highlight?: string;
}

export function citedChunk(c: Chunk): CitedChunk {
  const out: CitedChunk = {
    id: c.id,
    content: c.content,
    document_id: c.document_id,
    document_name: c.document_name ?? c.document_keyword ?? '',
    dataset_id: c.dataset_id,
    similarity: c.similarity ?? 0,
    vector_similarity: c.vector_similarity ?? 0,
    term_similarity: c.term_similarity ?? 0,
    positions: Array.isArray(c.positions) ? c.positions : [],
  };
  if (typeof c.highlight === 'string') out.highlight = c.highlight;
  return out;
}

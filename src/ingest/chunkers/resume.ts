/**
 * `resume`: RAGFlow extracts fields (basic info, work, education, projects) with a chat model.
 * ragloom has none here, so a résumé is chunked as `naive` and the note says so.
 */
import type { ChunkContext, ChunkResult, ParsedDocument } from '../types.js';
import { naive } from './naive.js';

export function resume(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const r = naive(doc, ctx);
  return { chunks: r.chunks, notes: ['resume: no chat model configured; chunked as naive', ...(r.notes ?? [])] };
}

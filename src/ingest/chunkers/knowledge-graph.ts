/**
 * `knowledge_graph`: RAGFlow chunks naively with large chunks (8192 tokens by default) and then
 * runs GraphRAG entity/relation extraction with a chat model. ragloom does the chunking and skips
 * the extraction, saying so.
 */
import type { ChunkContext, ChunkResult, ParsedDocument } from '../types.js';
import { intOf } from './config.js';
import { naive } from './naive.js';

export const KNOWLEDGE_GRAPH_CHUNK_TOKENS = 8192;

export function knowledgeGraph(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const r = naive(doc, ctx, { defaultChunkTokenNum: KNOWLEDGE_GRAPH_CHUNK_TOKENS });
  const n = intOf(ctx.parserConfig.chunk_token_num, KNOWLEDGE_GRAPH_CHUNK_TOKENS);
  return {
    chunks: r.chunks,
    notes: [`knowledge_graph: graph extraction skipped (no chat model configured); chunked as naive with chunk_token_num ${n}`, ...(r.notes ?? [])],
  };
}

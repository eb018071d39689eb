/** `one`: the whole document is a single chunk (RAGFlow `rag/app/one.py`), tables as their text. */
import type { ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { blockPositions, finalize, isRunning } from './common.js';

export function one(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  void ctx;
  const blocks = doc.blocks.filter((b) => !isRunning(b) && b.text.trim() !== '');
  const content = blocks.map((b) => b.text).join('\n');
  if (!content.trim()) return finalize([], doc);
  const d: ChunkDraft = { content };
  if (doc.format === 'pdf') {
    const positions = blocks.flatMap(blockPositions);
    if (positions.length) d.positions = positions;
  }
  return finalize([d], doc);
}

/**
 * `picture`: an image document is one chunk of its OCR text (RAGFlow `rag/app/picture.py`).
 * RAGFlow asks a vision model to describe the picture when OCR finds little text (32 characters or
 * fewer); ragloom has no vision model, so it keeps the OCR text and says so.
 */
import type { ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { finalize, isRunning } from './common.js';

export function picture(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const blocks = doc.blocks.filter((b) => !isRunning(b));
  const text = blocks
    .map((b) => b.text)
    .filter((t) => t.trim())
    .join('\n');
  const image = blocks.find((b) => b.image)?.image;
  const english = (ctx.language ?? 'English').trim().toLowerCase() === 'english';
  const enough = (english && text.split(/\s+/).filter(Boolean).length > 32) || [...text].length > 32;
  const notes = enough ? [] : ['picture: no vision model configured; the image was not described, only its OCR text is indexed'];
  if (!text.trim()) return finalize([], doc, notes);
  const d: ChunkDraft = { content: text, doc_type: 'image' };
  if (image) d.image = image;
  return finalize([d], doc, notes);
}

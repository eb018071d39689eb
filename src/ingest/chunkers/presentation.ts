/**
 * `presentation`: one chunk per slide or page (RAGFlow `rag/app/presentation.py`), its blocks'
 * text joined by "\n", positioned `[page, 0, 0, 0, 0]` as RAGFlow positions slides.
 */
import type { Block, ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { isRunning } from './common.js';

export function presentation(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  void ctx;
  const pages = new Map<number, Block[]>();
  let last = 1;
  for (const b of doc.blocks) {
    if (isRunning(b)) continue;
    // Blocks without a page number belong to the slide before them.
    const page = b.page ?? b.positions?.[0]?.[0] ?? last;
    last = page;
    if (!pages.has(page)) pages.set(page, []);
    pages.get(page)!.push(b);
  }
  const chunks: ChunkDraft[] = [];
  for (const [page, blocks] of [...pages.entries()].sort((a, b) => a[0] - b[0])) {
    const content = blocks
      .map((b) => b.text)
      .filter((t) => t.trim())
      .join('\n');
    if (!content.trim()) continue;
    const d: ChunkDraft = { content, positions: [[page, 0, 0, 0, 0]], page_num: page, top: 0 };
    const image = blocks.find((b) => b.image)?.image;
    if (image) d.image = image;
    chunks.push(d);
  }
  return { chunks };
}

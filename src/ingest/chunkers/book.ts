/**
 * `book`: numbering-driven hierarchical merge (RAGFlow `rag/app/book.py`). The table of contents
 * is dropped, the numbering family detected, and each passage chunked with its chapter/section
 * path; without numbering the book falls back to naive merging.
 */
import type { ChunkContext, ChunkResult, ParsedDocument } from '../types.js';
import { finalize, tableChunks } from './common.js';
import { intOf, overlapPercent, str } from './config.js';
import { naiveMerge } from './merge.js';
import { layoutNotes } from './naive.js';
import { bulletsCategory, englishFor, groupDrafts, hierarchicalMerge, layoutSections, removeContentsTable } from './structure.js';

export function book(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const pc = ctx.parserConfig;
  let sections = layoutSections(doc);
  if (doc.format !== 'pdf') sections = removeContentsTable(sections, englishFor(ctx.language, sections.map((s) => s.text)));
  const pdf = doc.format === 'pdf';
  // RAGFlow samples 100 random sections to pick the family; all of them keeps ragloom deterministic.
  const bull = bulletsCategory(sections.map((s) => s.text));
  const drafts =
    bull >= 0
      ? groupDrafts(sections, hierarchicalMerge(bull, sections, 5), pdf)
      : naiveMerge(
          sections.map((s) => ({ text: s.text, positions: pdf ? s.positions : undefined })),
          intOf(pc.chunk_token_num, 512),
          str(pc.delimiter, '\n'),
          overlapPercent(pc.overlapped_percent),
        ).map((m) => (m.positions.length ? { content: m.text, positions: m.positions } : { content: m.text }));
  for (const b of doc.blocks) if (b.kind === 'table') drafts.push(...tableChunks(b, ctx.language));
  return finalize(drafts, doc, layoutNotes(doc, pc));
}

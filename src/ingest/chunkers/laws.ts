/**
 * `laws`: article-numbering tree (RAGFlow `rag/app/laws.py`). Numbering such as 第X章/第X条,
 * "Chapter I", "Section 2", "Article 3" or Markdown headings builds a tree cut two levels down;
 * every article becomes one chunk prefixed by its chapter path. Word documents use their heading
 * styles as levels, with tables kept inside their section.
 */
import type { Block, ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { finalize, isRunning, tableChunks } from './common.js';
import { layoutNotes } from './naive.js';
import {
  BULLET_PATTERN,
  buildTree,
  bulletsCategory,
  englishFor,
  groupDrafts,
  layoutSections,
  removeContentsTable,
  treeMerge,
} from './structure.js';

// Tables carry no level: deeper than any heading, so they stay body text of their section.
const TABLE_LEVEL = 1_000_000;

/** RAGFlow laws' Docx path: heading style levels, else the numbering level within the family. */
function docxChunks(blocks: Block[]): ChunkDraft[] {
  const paras = blocks.filter((b) => !isRunning(b) && b.kind !== 'image');
  const bull = bulletsCategory(paras.filter((b) => b.kind !== 'table').map((b) => b.text));
  const texts: string[] = [];
  const lines: [number, number][] = [];
  const levels = new Set<number>();
  for (const b of paras) {
    if (b.kind === 'table') {
      const t = b.html ?? b.text;
      if (t.trim()) lines.push([TABLE_LEVEL, texts.push(t) - 1]);
      continue;
    }
    const txt = b.text.replace(/\u3000/g, ' ').trim();
    if (!txt) continue;
    let level: number;
    if (b.kind === 'heading' || b.kind === 'title') level = b.level ?? 1;
    else if (bull < 0) level = 0;
    else {
      const j = BULLET_PATTERN[bull]!.findIndex((p) => p.test(txt));
      level = j >= 0 ? j + 1 : BULLET_PATTERN[bull]!.length + 1;
    }
    lines.push([level, texts.push(txt) - 1]);
    levels.add(level);
  }
  const sorted = [...levels].sort((a, b) => a - b);
  let h2 = sorted.length > 1 ? sorted[1]! : 1;
  if (sorted.length > 2 && h2 === sorted[sorted.length - 1]) h2 = sorted[sorted.length - 2]!;
  return buildTree(lines, h2).map((g) => ({ content: g.map((i) => texts[i]!).join('\n') }));
}

export function laws(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  if (doc.format === 'docx' && doc.blocks.some((b) => b.kind === 'heading')) {
    return finalize(docxChunks(doc.blocks), doc);
  }
  const all = layoutSections(doc);
  const sections = removeContentsTable(all, englishFor(ctx.language, all.map((s) => s.text)));
  const bull = bulletsCategory(sections.map((s) => s.text));
  const drafts = groupDrafts(sections, treeMerge(bull, sections, 2), doc.format === 'pdf');
  for (const b of doc.blocks) if (b.kind === 'table') drafts.push(...tableChunks(b, ctx.language));
  return finalize(drafts, doc, layoutNotes(doc, ctx.parserConfig));
}

/**
 * `paper`: academic papers (RAGFlow `rag/app/paper.py`). Title and authors are read from the
 * first blocks, the abstract becomes one chunk of its own (with RAGFlow's "abstract/summary"
 * keywords), and the body is grouped between pivot headings — the most frequent heading level.
 */
import type { Block, ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { blockPositions, finalize, isRunning, tableChunks } from './common.js';
import { layoutNotes } from './naive.js';
import { bulletsCategory, groupDrafts, sectionIds, titleFrequency, type LayoutSection } from './structure.js';

const ABSTRACT_KEYWORDS = ['abstract', '总结', '概括', 'summary', 'summarize'];
const BEGIN = /^[0-9. 一、i]*(introduction|abstract|摘要|引言|keywords|key words|关键词|background|背景|目录|前言|contents)/;
const begins = (t: string) => BEGIN.test(t.toLowerCase().trim());
const long = (t: string) => t.split(/\s+/).filter(Boolean).length > 32 || [...t].length > 64;
const isTitle = (b: Block) => b.kind === 'title' || b.kind === 'heading';

export function paper(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  // DeepDOC keeps only "text" and "title" layouts in a paper's body.
  const boxes = doc.blocks.filter((b) => !isRunning(b) && b.kind !== 'table' && b.kind !== 'image' && b.kind !== 'caption' && b.text.trim());
  const pdf = doc.format === 'pdf';

  let title = '';
  const authors: string[] = [];
  for (let i = 0; i < Math.min(32, boxes.length - 1); i++) {
    if (!isTitle(boxes[i]!)) continue;
    title = boxes[i]!.text.trim();
    if (begins(title)) {
      title = '';
      break;
    }
    for (let j = i + 1; j < Math.min(i + 4, boxes.length); j++) {
      const c = boxes[j]!.text;
      if (begins(c) || c.includes('@')) break;
      authors.push(c.trim());
    }
    break;
  }

  let abstract: Block | undefined;
  let start = 0;
  for (let i = 0; i + 1 < Math.min(32, boxes.length); i++) {
    const txt = boxes[i]!.text.toLowerCase().trim();
    if (!/^(abstract|摘要)/.test(txt)) continue;
    if (long(txt)) {
      abstract = boxes[i];
      start = i + 1;
    } else {
      if (long(boxes[i + 1]!.text)) abstract = boxes[i + 1];
      start = i + 2;
    }
    break;
  }
  if (!abstract) start = 0;

  const drafts: ChunkDraft[] = [];
  if (abstract) {
    // RAGFlow keeps the title in a document-level field; ragloom has none, so it heads the abstract chunk.
    const head = [title, authors.join(' ')].filter(Boolean).join('\n');
    const d: ChunkDraft = { content: head ? `${head}\n${abstract.text}` : abstract.text, important_keywords: [...ABSTRACT_KEYWORDS] };
    const positions = blockPositions(abstract);
    if (pdf && positions.length) d.positions = positions;
    drafts.push(d);
  }

  const sections: LayoutSection[] = boxes.slice(start).map((b) => ({ text: b.text, layout: b.kind, positions: blockPositions(b) }));
  const bull = bulletsCategory(sections.map((s) => s.text));
  const { mostLevel, levels } = titleFrequency(bull, sections);
  const ids = sectionIds(levels, mostLevel);
  const groups: number[][] = [];
  let last = -2;
  ids.forEach((sid, i) => {
    if (sid === last && groups.length) groups[groups.length - 1]!.push(i);
    else {
      groups.push([i]);
      last = sid;
    }
  });
  drafts.push(...groupDrafts(sections, groups, pdf));
  for (const b of doc.blocks) if (b.kind === 'table') drafts.push(...tableChunks(b, ctx.language));
  return finalize(drafts, doc, layoutNotes(doc, ctx.parserConfig));
}

/**
 * `manual`: heading-driven sections (RAGFlow `rag/app/manual.py`). Documents with real headings
 * (Word, Markdown, HTML) give one chunk per section, prefixed by its heading path. Others (PDF,
 * text) group lines between pivot headings — the most frequent heading level — and pack them:
 * a chunk keeps growing while under 32 tokens, or under 1024 tokens within the same section.
 */
import { countTokens } from '../../text/index.js';
import type { ChunkContext, ChunkDraft, ChunkResult, ParsedDocument, Position } from '../types.js';
import { finalize, isRunning, tableAndImageChunks } from './common.js';
import { layoutNotes } from './naive.js';
import { bulletsCategory, layoutSections, sectionIds, titleFrequency } from './structure.js';

/** RAGFlow manual's Docx path: a heading stack; each body run becomes "path\n\nbody". */
function headingChunks(doc: ParsedDocument): ChunkDraft[] {
  const out: ChunkDraft[] = [];
  const stack: { level: number; text: string }[] = [];
  let body = '';
  const flush = () => {
    if (!body) return;
    const path = stack.map((s) => s.text).join('\n');
    // RAGFlow drops body text before the first heading; ragloom keeps it as its own chunk.
    const content = path ? `${path}\n${body}` : body.replace(/^\n/, '');
    if (content.trim()) out.push({ content });
    body = '';
  };
  for (const b of doc.blocks) {
    if (isRunning(b) || b.kind === 'table' || b.kind === 'image' || !b.text.trim()) continue;
    const level = b.kind === 'heading' || b.kind === 'title' ? (b.level ?? 1) : 0;
    if (!level || level > 6) {
      body += `\n${b.text.replace(/\u3000/g, ' ').trim()}`;
      continue;
    }
    flush();
    while (stack.length && level <= stack[stack.length - 1]!.level) stack.pop();
    stack.push({ level, text: b.text.trim() });
  }
  flush();
  return out;
}

/** RAGFlow manual's PDF path: pivot-level section ids, packed by the 32/1024-token rule. */
function pivotChunks(doc: ParsedDocument): ChunkDraft[] {
  const sections = layoutSections(doc);
  const bull = bulletsCategory(sections.map((s) => s.text));
  const { mostLevel, levels } = titleFrequency(bull, sections);
  const ids = sectionIds(levels, mostLevel);
  const out: { content: string; positions: Position[] }[] = [];
  let lastSid = -2;
  let tk = 0;
  sections.forEach((s, i) => {
    const sid = ids[i]!;
    if (out.length && (tk < 32 || (tk < 1024 && sid === lastSid))) {
      const cur = out[out.length - 1]!;
      cur.content += `\n${s.text}`;
      cur.positions.push(...s.positions);
      tk += countTokens(s.text);
      return;
    }
    out.push({ content: s.text, positions: [...s.positions] });
    tk = countTokens(s.text);
    lastSid = sid;
  });
  return out.map((c) => (doc.format === 'pdf' && c.positions.length ? c : { content: c.content }));
}

export function manual(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const structured = doc.format !== 'pdf' && doc.format !== 'text' && doc.blocks.some((b) => b.kind === 'heading');
  const drafts = structured ? headingChunks(doc) : pivotChunks(doc);
  drafts.push(...tableAndImageChunks(doc, ctx.language));
  return finalize(drafts, doc, layoutNotes(doc, ctx.parserConfig));
}

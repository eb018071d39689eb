/**
 * `naive` (General): delimiter split + token-budget merge, per format as RAGFlow's
 * `rag/app/naive.py` dispatches: plain text and code through TxtParser then `naive_merge`,
 * Markdown through its own merge, spreadsheets row by row, everything else block by block.
 */
import type { Block, ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { blockPositions, finalize, filled, isRunning, markdownText, tableAndImageChunks, tableHtml } from './common.js';
import { intOf, overlapPercent, parentChild, parseDelimiter, str } from './config.js';
import { markdownMerge, naiveMerge, splitChildren, txtSplit, type MergedChunk, type Section } from './merge.js';
import { paragraphChunks } from './paragraphs.js';

export const NAIVE_DEFAULTS = Object.freeze({
  chunk_token_num: 512 /* tokens, the dataset default RAGFlow stores */,
  delimiter: '\n',
  html4excel_rows: 12 /* data rows per HTML chunk */,
});

const NO_LAYOUT_MODEL = new Set(['', 'deepdoc', 'plain text', 'plaintext']);

export interface NaiveOptions {
  /** chunk_token_num when the config has none (knowledge_graph uses 8192). */
  defaultChunkTokenNum?: number;
}

/**
 * Spreadsheet rows as RAGFlow's ExcelParser writes them: `header：value` fields joined by "; ",
 * empty cells skipped, and ` ——sheet` appended when the sheet has its own name.
 */
function excelLines(tables: Block[]): string[] {
  const lines: string[] = [];
  for (const t of tables) {
    const rows = t.rows ?? [];
    if (!rows.length) continue;
    const head = rows[0]!;
    for (const r of rows.slice(1)) {
      const fields = r.flatMap((c, i) => (filled(c) ? [`${head[i] ?? ''}${head[i] ? '：' : ''}${c}`] : []));
      if (!fields.length) continue;
      let line = fields.join('; ');
      if (t.sheet && !t.sheet.toLowerCase().includes('sheet')) line += ` ——${t.sheet}`;
      lines.push(line);
    }
  }
  return lines;
}

/** html4excel: each sheet as HTML tables of 12 data rows under the repeated header row; a section label joins the caption. */
function excelHtml(blocks: Block[], per: number): string[] {
  const out: string[] = [];
  let label: string | undefined;
  for (const t of blocks) {
    if (t.kind === 'heading') label = t.text;
    if (t.kind !== 'table') continue;
    const rows = t.rows ?? [];
    const caption = label ? (t.sheet ? `${t.sheet}: ${label}` : label) : t.sheet;
    label = undefined;
    if (rows.length < 2) continue;
    for (let i = 1; i < rows.length; i += per) out.push(tableHtml([rows[0]!, ...rows.slice(i, i + per)], true, caption));
  }
  return out;
}

/** Text chunks as drafts; with parent_child each chunk becomes its children, the chunk kept in `mom`. */
function toDrafts(merged: MergedChunk[], pc: Record<string, unknown>): ChunkDraft[] {
  const { enabled, delimiter } = parentChild(pc);
  const out: ChunkDraft[] = [];
  for (const m of merged) {
    const positions = m.positions.length ? m.positions : undefined;
    if (!enabled) {
      const d: ChunkDraft = positions ? { content: m.text, positions } : { content: m.text };
      // A chunk that goes on under a heading it does not hold is found and embedded with it.
      if (m.heading) d.indexText = d.embedText = `${m.heading}\n${m.text}`;
      out.push(d);
      continue;
    }
    for (const child of splitChildren(m.text, delimiter)) {
      const d: ChunkDraft = { content: child, mom: m.text };
      if (positions) d.positions = positions;
      out.push(d);
    }
  }
  return out;
}

/** Merged text chunks of a document under the naive rules (no tables/images). */
export function naiveTextChunks(doc: ParsedDocument, ctx: ChunkContext, opts: NaiveOptions = {}): MergedChunk[] {
  const pc = ctx.parserConfig;
  const limit = intOf(pc.chunk_token_num, opts.defaultChunkTokenNum ?? NAIVE_DEFAULTS.chunk_token_num);
  const delimiter = str(pc.delimiter, NAIVE_DEFAULTS.delimiter);
  const overlap = overlapPercent(pc.overlapped_percent);
  const blocks = doc.blocks.filter((b) => !isRunning(b));

  if (doc.format === 'xlsx' || doc.format === 'csv') {
    if (pc.html4excel === true) {
      // RAGFlow sets chunk_token_num to 0 here: every HTML table is its own chunk.
      return naiveMerge(excelHtml(blocks, NAIVE_DEFAULTS.html4excel_rows).map((text) => ({ text })), 0, delimiter, 0);
    }
    // Section labels (headings) stay in place, above their rows.
    const lines = blocks.flatMap((b) => (b.kind === 'table' ? excelLines([b]) : b.kind !== 'image' && b.text.trim() ? [b.text] : []));
    return naiveMerge(lines.map((text) => ({ text })), limit, delimiter, overlap);
  }

  const textBlocks = blocks.filter((b) => b.kind !== 'table' && b.kind !== 'image');
  if (!textBlocks.length) return [];

  // The default delimiter: text as people wrote it (paragraphs.ts). Any other delimiter, or a
  // backtick custom one, asks for RAGFlow's own splitting, which follows.
  if (isDefaultDelimiter(delimiter)) {
    return paragraphChunks(textBlocks, { limit, overlap, markdown: doc.format === 'markdown', positions: doc.format === 'pdf' });
  }

  if (doc.format === 'markdown' && !parseDelimiter(delimiter).custom.length) {
    return markdownMerge(textBlocks.map((b) => ({ text: markdownText(b) })), limit, overlap);
  }

  if (doc.format === 'text') {
    const full = textBlocks.map((b) => b.text).join('\n');
    const sections = txtSplit(full, limit, delimiter).map((text) => ({ text }));
    return naiveMerge(sections, limit, delimiter, overlap);
  }

  const sections: Section[] = textBlocks
    .filter((b) => b.text !== '')
    .map((b) => ({ text: doc.format === 'markdown' ? markdownText(b) : b.text, positions: doc.format === 'pdf' ? blockPositions(b) : undefined }));
  return naiveMerge(sections, limit, delimiter, overlap);
}

/** Whether the delimiter field is the default: a newline (written `\n`), nothing else. */
function isDefaultDelimiter(delimiter: string): boolean {
  const spec = parseDelimiter(delimiter);
  return !spec.custom.length && spec.all.length === 1 && spec.all[0] === '\n';
}

/** Notes for a PDF whose layout_recognize names a layout model ragloom does not have. */
export function layoutNotes(doc: ParsedDocument, pc: Record<string, unknown>): string[] {
  const lr = pc.layout_recognize;
  if (doc.format !== 'pdf' || typeof lr !== 'string' || NO_LAYOUT_MODEL.has(lr.trim().toLowerCase())) return [];
  return [`layout_recognize "${lr}" is not available; the PDF was laid out by ragloom's built-in parser`];
}

/**
 * The naive method. Text chunks come first, then the document's tables (RAGFlow tokenize_table,
 * `doc_type` "table") and captioned/OCR'd images (`doc_type` "image"); PDF chunks are ordered by
 * page and position instead, and HTML chunks follow the page.
 */
export function naive(doc: ParsedDocument, ctx: ChunkContext, opts: NaiveOptions = {}): ChunkResult {
  if (doc.format === 'html') return finalize(inReadingOrder(doc, ctx, opts), doc);
  const drafts = toDrafts(naiveTextChunks(doc, ctx, opts), ctx.parserConfig);
  if (doc.format !== 'xlsx' && doc.format !== 'csv') drafts.push(...tableAndImageChunks(doc, ctx.language));
  return finalize(drafts, doc, layoutNotes(doc, ctx.parserConfig));
}

/**
 * A web page's tables and pictures stay where they stand: the text between two of them is merged
 * on its own, so a chunk never spans a table and the chunks list in the page's order.
 */
function inReadingOrder(doc: ParsedDocument, ctx: ChunkContext, opts: NaiveOptions): ChunkDraft[] {
  const drafts: ChunkDraft[] = [];
  let run: Block[] = [];
  const flush = () => {
    if (run.length) drafts.push(...toDrafts(naiveTextChunks({ ...doc, blocks: run }, ctx, opts), ctx.parserConfig));
    run = [];
  };
  for (const b of doc.blocks) {
    if (b.kind !== 'table' && b.kind !== 'image') {
      run.push(b);
      continue;
    }
    flush();
    drafts.push(...tableAndImageChunks({ ...doc, blocks: [b] }, ctx.language));
  }
  flush();
  return drafts;
}

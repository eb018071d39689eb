/** Pieces every chunk method shares: block text, table chunks, positions and ordering. */
import type { Block, ChunkDraft, ChunkResult, ParsedDocument, Position } from '../types.js';
import { isChineseText } from './config.js';

export type ChunkMethod = (doc: ParsedDocument, ctx: import('../types.js').ChunkContext) => ChunkResult;

/** Running page headers and footers carry no content (DeepDOC drops them too). */
export const isRunning = (b: Block) => b.kind === 'header' || b.kind === 'footer';

/** A block's positions; a block with only a page number sits at the top of that page. */
export function blockPositions(b: Block): Position[] {
  if (b.positions?.length) return b.positions;
  if (b.page !== undefined) return [[b.page, 0, 0, 0, 0]];
  return [];
}

/** Whether a table cell holds something (RAGFlow skips `None` and "" cells). */
export const filled = (v: string | undefined): v is string => v !== undefined && v !== null && String(v) !== '';

/** Chinese and Japanese tables join rows with a full-width semicolon, as RAGFlow's tokenize_table does. */
function isCjkLanguage(language: string | undefined, sample: string): boolean {
  if (language) return ['chinese', 'japanese'].includes(language.trim().toLowerCase());
  return isChineseText(sample);
}

const TABLE_TAGS = /<\/?(table|td|caption|tr|th)( [^<>]{0,12})?>/g;

/** HTML of a table, RAGFlow's docx/PDF table form: one `<tr>` per row, `<th>` for a header row. */
export function tableHtml(rows: string[][], header: boolean, caption?: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  let html = '<table>';
  if (caption) html += `<caption>${esc(caption)}</caption>`;
  rows.forEach((r, i) => {
    const tag = header && i === 0 ? 'th' : 'td';
    html += `<tr>${r.map((c) => `<${tag}>${esc(c ?? '')}</${tag}>`).join('')}</tr>`;
  });
  return `${html}</table>`;
}

/**
 * Chunks for a table block (RAGFlow `tokenize_table`). An HTML table is one chunk whose content
 * is the HTML; its index and embedding text have the table tags blanked out, as RAGFlow tokenises
 * and embeds it. Cell rows without HTML are rendered one line per row and batched ten rows a
 * chunk, joined by "; " ("； " for Chinese/Japanese). A table with neither is one text chunk.
 */
export function tableChunks(b: Block, language: string | undefined, batch = 10): ChunkDraft[] {
  const positions = b.positions?.length ? b.positions : undefined;
  const base = (content: string): ChunkDraft => {
    const d: ChunkDraft = { content, doc_type: 'table' };
    if (positions) d.positions = positions;
    return d;
  };
  if (b.html && b.html.trim()) {
    const plain = b.html.replace(TABLE_TAGS, ' ');
    return [{ ...base(b.html), indexText: plain, embedText: plain }];
  }
  const rows = (b.rows ?? []).filter((r) => r.some(filled));
  if (rows.length) {
    const cjk = isCjkLanguage(language, rows.flat().join(''));
    const header = b.header && rows.length > 1 ? rows[0]! : undefined;
    const body = header ? rows.slice(1) : rows;
    const lines = body.map((r) =>
      r
        .map((c, i) => (!filled(c) ? '' : header?.[i] ? `${header[i]}${cjk ? '：' : ': '}${c}` : c))
        .filter(Boolean)
        .join(cjk ? '；' : '; '),
    );
    const out: ChunkDraft[] = [];
    for (let i = 0; i < lines.length; i += batch) out.push(base(lines.slice(i, i + batch).join(cjk ? '； ' : '; ')));
    return out;
  }
  return b.text.trim() ? [base(b.text)] : [];
}

/** An image block with OCR/alt text is its own chunk, carrying the picture (RAGFlow figure chunks). */
export function imageChunk(b: Block): ChunkDraft | undefined {
  if (!b.text.trim()) return undefined;
  const d: ChunkDraft = { content: b.text, doc_type: 'image' };
  if (b.image) d.image = b.image;
  if (b.positions?.length) d.positions = b.positions;
  return d;
}

/**
 * Gives every chunk its ordering fields. PDF chunks keep their layout positions and take
 * page_num/top from the first; other formats get RAGFlow's synthetic `[[i+1, i, i, i, i]]`
 * (add_positions of `[i]*5`), i being the chunk's index, so they list in document order.
 * PDF chunks are stably sorted by page then top, as RAGFlow lists them.
 */
/** The document's tables (batched rows, RAGFlow's tokenize_table) and its OCR'd / captioned images, as chunks. */
export function tableAndImageChunks(doc: ParsedDocument, language: string | undefined): ChunkDraft[] {
  const out: ChunkDraft[] = [];
  for (const b of doc.blocks) {
    if (b.kind === 'table') out.push(...tableChunks(b, language));
    else if (b.kind === 'image') {
      const d = imageChunk(b);
      if (d) out.push(d);
    }
  }
  return out;
}

/** Splits lines into fields on TAB, or on commas when more lines split into two fields that way. */
export function splitTwoFieldLines(lines: string[]): { fields: string[]; raw: string }[] {
  let comma = 0;
  let tab = 0;
  for (const l of lines) {
    if (l.split(',').length === 2) comma++;
    if (l.split('\t').length === 2) tab++;
  }
  const sep = tab >= comma ? '\t' : ',';
  return lines.map((raw) => ({ fields: raw.split(sep), raw }));
}

export function finalize(drafts: ChunkDraft[], doc: ParsedDocument, notes: string[] = []): ChunkResult {
  let out = drafts;
  if (doc.format === 'pdf') {
    for (const d of out) {
      const p = d.positions?.[0];
      if (p) {
        d.page_num = p[0];
        d.top = p[3];
      }
    }
    out = out
      .map((d, i) => ({ d, i }))
      .sort((a, b) => (a.d.page_num ?? Infinity) - (b.d.page_num ?? Infinity) || (a.d.top ?? 0) - (b.d.top ?? 0) || a.i - b.i)
      .map((x) => x.d);
  } else {
    out.forEach((d, i) => {
      if (!d.positions?.length) d.positions = [[i + 1, i, i, i, i]];
      d.page_num ??= d.positions[0]![0];
      d.top ??= d.positions[0]![3];
    });
  }
  return notes.length ? { chunks: out, notes } : { chunks: out };
}

/** Text of the document's content blocks in reading order, one block a line. */
export function plainText(doc: ParsedDocument, kinds?: (b: Block) => boolean): string {
  return doc.blocks
    .filter((b) => !isRunning(b) && (!kinds || kinds(b)))
    .map((b) => b.text)
    .join('\n');
}

/** Markdown sections keep their markup, as RAGFlow's Markdown element extractor does. */
export function markdownText(b: Block): string {
  if (b.kind === 'heading' || b.kind === 'title') return `${'#'.repeat(Math.min(Math.max(b.level ?? 1, 1), 6))} ${b.text}`;
  if (b.kind === 'code' && !b.text.startsWith('```')) return `\`\`\`\n${b.text}\n\`\`\``;
  return b.text;
}

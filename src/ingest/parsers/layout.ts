/**
 * Geometry shared by PDF text and OCR output: lines → paragraphs and text-aligned tables
 * (`text-table.ts`), heading sizes, and running header/footer detection. Coordinates are top-left
 * based, in points for PDFs (RAGFlow's pdfplumber units) and pixels for images.
 */
import type { Block, Position } from '../types.js';
import { tableText } from './common.js';
import { signature } from './running-lines.js';
import { findTextTables } from './text-table.js';
import type { TextTable } from './text-table.js';

/** A run of text on one line separated from its neighbours by a wide gap (a table cell). */
export interface Seg {
  text: string;
  x0: number;
  x1: number;
  /** The text items a cell was built from, for splitting cells that straddle columns. */
  parts?: Seg[];
}

export interface Line {
  text: string;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** Font size (PDF) or glyph height (OCR). */
  size: number;
  segs: Seg[];
  /** Rotated text (margin stamps); never merged with other lines. */
  rotated?: boolean;
  /** Baseline y (PDF text); OCR lines leave it unset. */
  baseline?: number;
}

const bbox = (lines: Line[]): [number, number, number, number] => [
  Math.min(...lines.map((l) => l.x0)),
  Math.max(...lines.map((l) => l.x1)),
  Math.min(...lines.map((l) => l.top)),
  Math.max(...lines.map((l) => l.bottom)),
];

export function position(page: number, lines: Line[]): Position {
  const [x0, x1, top, bottom] = bbox(lines).map((v) => Math.round(v * 10) / 10) as [number, number, number, number];
  return [page, x0, x1, top, bottom];
}

/** Groups consecutive lines into paragraphs by vertical gap, column jumps, size changes and indents. */
export function groupParagraphs(lines: Line[]): Line[][] {
  const out: Line[][] = [];
  let cur: Line[] = [];
  let left = 0;
  let right = 0;
  for (const line of lines) {
    if (cur.length === 0) {
      cur = [line];
      left = line.x0;
      right = line.x1;
      continue;
    }
    const prev = cur[cur.length - 1]!;
    const size = Math.max(prev.size, line.size, 1);
    const gap = line.top - prev.bottom;
    const split =
      line.rotated || prev.rotated ||
      gap > 0.9 * size || // a blank line's worth of space
      line.top < prev.top - 0.5 * size || // moved up: next column or out-of-order stream
      line.x0 > right + size || line.x1 < left - size || // no horizontal overlap: another column
      Math.abs(line.size - prev.size) > 0.2 * size || // font size change: heading ↔ body
      // First-line indent after a line that stopped short of the right edge.
      (line.x0 - left > 0.8 * size && line.x0 - left < 10 * size && prev.x1 < right - 2 * size);
    if (split) {
      out.push(cur);
      cur = [line];
      left = line.x0;
      right = line.x1;
    } else {
      cur.push(line);
      left = Math.min(left, line.x0);
      right = Math.max(right, line.x1);
    }
  }
  if (cur.length) out.push(cur);
  return out;
}

/** Joins a paragraph's lines, mending words hyphenated across line ends. */
export function paragraphText(lines: Line[]): string {
  let s = '';
  for (const l of lines) {
    const t = l.text.trim();
    if (!t) continue;
    if (s === '') s = t;
    else if (/[a-z]-$/.test(s) && /^[a-z]/.test(t)) s = s.slice(0, -1) + t;
    else s += `\n${t}`;
  }
  return s;
}

export interface LayoutOptions {
  page: number;
  /** Sizes at or above this are headings; computed per document. */
  headingSizes?: number[];
}

/** Lines of one page (in stream order) → text and table blocks with positions. */
export function linesToBlocks(lines: Line[], o: LayoutOptions): Block[] {
  const owner = new Map<Line, TextTable>();
  for (const t of findTextTables(lines)) for (const l of t.lines) owner.set(l, t);
  const blocks: Block[] = [];
  const done = new Set<TextTable>();
  let run: Line[] = [];
  const flush = () => {
    for (const para of groupParagraphs(run)) {
      const text = paragraphText(para);
      if (!text) continue;
      const size = para[0]!.size;
      const level = o.headingSizes ? o.headingSizes.findIndex((s) => size >= s - 0.01) : -1;
      const isHeading = level >= 0 && text.length <= 200 && para.length <= 3;
      blocks.push({
        kind: isHeading ? 'heading' : 'text',
        text,
        ...(isHeading ? { level: Math.min(level + 1, 6) } : {}),
        page: o.page,
        positions: [position(o.page, para)],
      });
    }
    run = [];
  };
  for (const l of lines) {
    const t = owner.get(l);
    if (!t) {
      run.push(l);
      continue;
    }
    // A table goes where its first line is in the stream; its other lines may come later.
    if (done.has(t)) continue;
    done.add(t);
    flush();
    blocks.push({ kind: 'table', text: tableText(t.rows), rows: t.rows, header: t.header, page: o.page, positions: [position(o.page, t.lines)] });
  }
  flush();
  return blocks;
}

/** Characters per font size (0.5 pt buckets), and the body size: the one carrying most. */
function sizeHistogram(lines: Line[]): { chars: Map<number, number>; body: number; most: number } {
  const chars = new Map<number, number>();
  for (const l of lines) {
    const k = Math.round(l.size * 2) / 2;
    chars.set(k, (chars.get(k) ?? 0) + l.text.length);
  }
  let body = 0;
  let most = -1;
  for (const [k, n] of chars) {
    if (n > most) {
      most = n;
      body = k;
    }
  }
  return { chars, body, most };
}

/** The body font size: the size (0.5 pt buckets) carrying most characters. */
export function bodySize(lines: Line[]): number {
  return sizeHistogram(lines).body;
}

/**
 * Heading sizes for a document: distinct font sizes (0.5 pt buckets) at least 20 % above the
 * body size (the size carrying most characters), largest first, at most 4.
 */
export function headingSizes(lines: Line[]): number[] {
  const { chars, body, most } = sizeHistogram(lines);
  return [...chars.entries()]
    // A larger size carrying as much text as half the body is body text of another kind.
    .filter(([k, n]) => k >= body * 1.2 && n < most * 0.5)
    .map(([k]) => k)
    .sort((a, b) => b - a)
    .slice(0, 4);
}

const PAGE_NUMBER = /^(page\s*)?[#\d]+(\s*(of|\/)\s*\d+)?$|^-\s*\d+\s*-$/i;

/**
 * Marks running headers and footers: blocks in the page margins (top/bottom 9 %, left/right 7 %)
 * that repeat, digits ignored, on at least 40 % of ≥ 3 pages, plus bare page numbers in the margins.
 */
export function markRunningHeaders(blocks: Block[], pageSize: Map<number, { width: number; height: number }>): void {
  const inBand = (b: Block): 'header' | 'footer' | undefined => {
    const p = b.positions?.[0];
    const size = b.page !== undefined ? pageSize.get(b.page) : undefined;
    if (!p || !size) return undefined;
    const [, x0, x1, top, bottom] = p;
    if (bottom <= size.height * 0.09) return 'header';
    if (top >= size.height * 0.91) return 'footer';
    if (x1 <= size.width * 0.07 || x0 >= size.width * 0.93) return 'footer';
    return undefined;
  };
  const pages = new Set(blocks.map((b) => b.page));
  const seen = new Map<string, Set<number>>();
  for (const b of blocks) {
    if (!inBand(b) || b.kind === 'table') continue;
    const s = signature(b.text);
    if (!seen.has(s)) seen.set(s, new Set());
    seen.get(s)!.add(b.page ?? 0);
  }
  const need = Math.max(2, Math.ceil(pages.size * 0.4));
  for (const b of blocks) {
    const band = inBand(b);
    if (!band || b.kind === 'table') continue;
    const s = signature(b.text);
    if ((pages.size >= 3 && (seen.get(s)?.size ?? 0) >= need) || PAGE_NUMBER.test(b.text.trim())) {
      b.kind = band;
      delete b.level;
    }
  }
}

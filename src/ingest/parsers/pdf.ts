/**
 * PDF with pdf-parse v2 (pdf.js 5). Text items carry coordinates, so blocks get RAGFlow positions
 * [page, x0, x1, top, bottom] in points from the top-left. Tables: ruled tables found by pdf-parse's
 * line detector, plus text-aligned tables found from cell gaps. Image-only pages are rendered and
 * OCR'd. Running headers and footers are marked by repetition across pages.
 *
 * pdf-parse's public API returns page text without coordinates, so this module reaches the pdf.js
 * document and the ruled-table detector through two private methods (`load`, `getPageTables`),
 * typed locally below and feature-checked at run time.
 */
import { PDFParse } from 'pdf-parse';
import type { Block, ParsedDocument } from '../types.js';
import { cellText, checkAbort, detectHeader, fail, pageWanted, shortMessage, tableText, tick, warn } from './common.js';
import type { Ctx } from './common.js';
import { bodySize, headingSizes, linesToBlocks, markRunningHeaders, paragraphText, position } from './layout.js';
import type { Line, Seg } from './layout.js';
import { ocrImage } from './ocr.js';
import { composeDiacritics, endsSentence, groupNotes, splitFootnotes } from './pdf-text.js';
import { MissingPackageError } from '../../util/index.js';

interface TextItem {
  str: string;
  width: number;
  height: number;
  transform: number[];
  fontName: string;
  hasEOL: boolean;
}
interface Viewport {
  width: number;
  height: number;
  convertToViewportPoint(x: number, y: number): number[];
}
interface PdfPage {
  getViewport(o: { scale: number }): Viewport;
  getTextContent(): Promise<{ items: (TextItem | object)[]; styles: Record<string, { ascent?: number; descent?: number }> }>;
  getOperatorList(): Promise<{ fnArray: number[] }>;
  cleanup(): void;
}
interface PdfDoc {
  numPages: number;
  getPage(n: number): Promise<PdfPage>;
  getMetadata(): Promise<{ info?: Record<string, unknown> }>;
}
interface RuledCell {
  minXY: { x: number; y: number };
  maxXY: { x: number; y: number };
  text: string[];
}
interface RuledTable {
  minXY: { x: number; y: number };
  maxXY: { x: number; y: number };
  rows: RuledCell[][];
  findCell(x: number, y: number): RuledCell | undefined;
}
interface Internals {
  load(): Promise<PdfDoc>;
  getPageTables?(page: PdfPage): Promise<{ normalize(): void; getTableData(): RuledTable[] }>;
}

/** pdf.js OPS codes of image painting operators (paintImageMaskXObject … paintImageMaskXObjectRepeat). */
const IMAGE_OPS = new Set([83, 84, 85, 86, 87, 88, 89]);
/** A page with fewer visible characters than this and an image on it is treated as scanned. */
const MIN_TEXT_CHARS = 20;
/** Render scale for OCR (144 dpi) and the largest rendered side in pixels. */
const OCR_SCALE = 2;
const OCR_MAX_SIDE = 2200;

const INFO_KEYS: Record<string, string> = {
  Title: 'title', Author: 'author', Subject: 'subject', Keywords: 'keywords', Creator: 'creator',
  Producer: 'producer', CreationDate: 'creation_date', ModDate: 'mod_date', PDFFormatVersion: 'pdf_version',
};

function mapError(e: unknown): never {
  const name = (e as { name?: string })?.name ?? '';
  const msg = shortMessage(e);
  if (name === 'PasswordException' || /password/i.test(msg)) fail('PDF is encrypted (password required)', e);
  if (name === 'InvalidPDFException') fail(/empty/i.test(msg) ? 'File is empty' : 'Invalid PDF structure', e);
  if (name === 'FormatError' || name === 'UnknownErrorException') fail(`Invalid PDF structure: ${msg}`, e);
  if (name === 'ParseError') throw e;
  fail(`Could not read PDF: ${msg}`, e);
}

/** Builds lines from pdf.js text items in stream order. */
function itemsToLines(items: (TextItem | object)[], vp: Viewport, styles: Record<string, { ascent?: number; descent?: number }>): Line[] {
  const lines: Line[] = [];
  type Cur = Line & { baseline: number; lastSize: number; lastX1: number; last: Seg; reordered?: boolean };
  let cur: Cur | undefined;
  let space = false;
  const end = () => {
    if (cur && cur.text.trim()) lines.push(cur);
    cur = undefined;
    space = false;
  };
  for (const raw of items) {
    if (!('str' in raw)) continue;
    const it = raw as TextItem;
    const tm = it.transform;
    if (it.str.trim() === '') {
      if (it.width > 0.1 * (Math.hypot(tm[2]!, tm[3]!) || 1)) space = true;
      if (it.hasEOL) end();
      continue;
    }
    // Rotated in the page as shown: a page with /Rotate draws its upright text rotated in PDF space.
    const o = vp.convertToViewportPoint(tm[4]!, tm[5]!);
    const d = vp.convertToViewportPoint(tm[4]! + tm[0]!, tm[5]! + tm[1]!);
    const rotated = Math.abs(d[1]! - o[1]!) > 1e-3 * (Math.abs(d[0]! - o[0]!) + 1) || d[0]! <= o[0]!;
    const size = Math.hypot(tm[2]!, tm[3]!) || it.height || 1;
    const st = styles[it.fontName];
    const asc = st?.ascent && st.ascent > 0 ? st.ascent : 0.8;
    const desc = st?.descent && st.descent < 0 ? -st.descent : 0.2;
    // Corners of the item's box in PDF space, mapped through the page's viewport (handles /Rotate).
    const ux = tm[0]! / (Math.hypot(tm[0]!, tm[1]!) || 1);
    const uy = tm[1]! / (Math.hypot(tm[0]!, tm[1]!) || 1);
    const corners = [
      [tm[4]! - uy * -desc * size, tm[5]! + ux * -desc * size],
      [tm[4]! + ux * it.width - uy * -desc * size, tm[5]! + uy * it.width + ux * -desc * size],
      [tm[4]! - uy * asc * size, tm[5]! + ux * asc * size],
      [tm[4]! + ux * it.width - uy * asc * size, tm[5]! + uy * it.width + ux * asc * size],
    ].map(([x, y]) => vp.convertToViewportPoint(x!, y!));
    const xs = corners.map((c) => c[0]!);
    const ys = corners.map((c) => c[1]!);
    const x0 = Math.min(...xs);
    const x1 = Math.max(...xs);
    const top = Math.min(...ys);
    const bottom = Math.max(...ys);
    const baseline = o[1]!;
    const onLine =
      cur && !rotated && !cur.rotated &&
      Math.abs(baseline - cur.baseline) <= 0.5 * Math.max(size, cur.size) &&
      // Superscripts (≈ 0.6×) join the line; a much smaller or larger run is another line.
      Math.min(size, cur.lastSize) / Math.max(size, cur.lastSize) >= 0.5;
    const forward = onLine && x0 >= cur!.lastX1 - 0.5 * Math.max(size, cur!.size);
    // Some generators write a row's cells right to left: an item on the same baseline that lands
    // in free space to the left is another cell of this line.
    const backward =
      onLine && !forward && Math.abs(baseline - cur!.baseline) <= 0.2 * size &&
      cur!.segs.every((q) => x1 <= q.x0 + 0.5 || x0 >= q.x1 - 0.5);
    if (cur && (forward || backward)) {
      const seg = cur.last;
      const gap = x0 - cur.lastX1;
      // Wide gaps separate cells; in number columns (right-aligned, tightly packed) a smaller gap
      // between two numbers does too, and so does any gap after a dot leader. A thousands-separator
      // space stays below 0.4 em.
      const numericPair = /[\d%)]$/.test(seg.text) && /^[-+($]?\d/.test(it.str.trim());
      const leader = /\.\s*\.\s*$/.test(seg.text);
      const em = Math.min(size, cur.lastSize);
      if (backward || gap > 1.2 * em || (numericPair && gap > 0.4 * em) || (leader && gap > 0.25 * em)) {
        const q: Seg = { text: it.str.trim(), x0, x1, parts: [{ text: it.str, x0, x1 }] };
        cur.segs.push(q);
        if (backward) {
          cur.segs.sort((a, b) => a.x0 - b.x0);
          cur.reordered = true;
        }
        cur.text += ` ${it.str}`;
        cur.last = q;
      } else {
        const sep = (space || gap > 0.15 * size) && !cur.text.endsWith(' ') && !it.str.startsWith(' ') ? ' ' : '';
        cur.text += sep + it.str;
        seg.text = (seg.text + sep + it.str).trim();
        seg.x1 = Math.max(seg.x1, x1);
        seg.parts?.push({ text: it.str, x0, x1 });
      }
      cur.x0 = Math.min(cur.x0, x0);
      cur.x1 = Math.max(cur.x1, x1);
      cur.lastX1 = x1;
      cur.top = Math.min(cur.top, top);
      cur.bottom = Math.max(cur.bottom, bottom);
      // The line's size is its body text's, not a superscript's.
      cur.size = Math.max(cur.size, size);
      cur.lastSize = size;
    } else {
      end();
      const first: Seg = { text: it.str.trim(), x0, x1, parts: [{ text: it.str, x0, x1 }] };
      cur = { text: it.str, x0, x1, top, bottom, size, segs: [first], baseline, lastSize: size, lastX1: x1, last: first, ...(rotated ? { rotated } : {}) };
    }
    space = false;
    if (it.hasEOL) end();
  }
  end();
  return lines.map((raw) => {
    const { lastSize: _s, lastX1: _x, last: _l, reordered, ...l } = raw as Cur;
    const text = reordered ? l.segs.map((q) => q.text).join(' ') : l.text;
    l.text = composeDiacritics(text.replace(/\s+/g, ' ').trim());
    for (const q of l.segs) {
      q.text = composeDiacritics(q.text);
      for (const p of q.parts ?? []) p.text = composeDiacritics(p.text);
    }
    return l;
  });
}

/** Ruled tables from pdf-parse's vector-line detector, filled with the page's text items. */
async function ruledTables(parser: Internals, page: PdfPage, items: TextItem[], vp: Viewport): Promise<RuledTable[]> {
  if (typeof parser.getPageTables !== 'function') return [];
  const store = await parser.getPageTables(page);
  store.normalize();
  const tables = store.getTableData().filter((t) => t.rows.length >= 2 && (t.rows[0]?.length ?? 0) >= 2);
  for (const it of items) {
    const [x, y] = vp.convertToViewportPoint(it.transform[4]!, it.transform[5]!);
    for (const t of tables) {
      const cell = t.findCell(x!, y!);
      if (cell) {
        cell.text.push(it.str);
        break;
      }
    }
  }
  return tables;
}

export async function parsePdf(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const head = new TextDecoder('latin1').decode(data.subarray(0, 1024));
  if (!head.includes('%PDF-')) fail('Invalid PDF structure: no %PDF header');
  // pdf.js may transfer (detach) the array it is given; hand it a copy.
  const parser = new PDFParse({ data: data.slice(), verbosity: 0, stopAtErrors: false, isEvalSupported: false });
  const internals = parser as unknown as Internals;
  const onAbort = () => void parser.destroy().catch(() => undefined);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (typeof internals.load !== 'function') fail('PDF support is unavailable: incompatible pdf-parse version');
    let doc: PdfDoc;
    try {
      doc = await internals.load();
    } catch (e) {
      mapError(e);
    }
    const out: ParsedDocument = { format: 'pdf', blocks: [], pages: doc.numPages, meta: {} };
    try {
      const { info } = await doc.getMetadata();
      for (const [k, v] of Object.entries(info ?? {})) {
        const key = INFO_KEYS[k];
        if (key && (typeof v === 'string' || typeof v === 'number') && String(v).trim()) out.meta![key] = String(v).trim();
      }
    } catch {
      // Broken metadata does not make the text unreadable.
    }
    const perPage: { page: number; lines: Line[]; tables: Block[]; ocr: boolean }[] = [];
    const pageSize = new Map<number, { width: number; height: number }>();
    let ocrPages = 0;
    let unreadable: string | undefined;
    for (let n = 1; n <= doc.numPages; n++) {
      if (!pageWanted(n, ctx.opts.pages)) continue;
      // pdf.js settles its promises in microtasks; yield a macrotask so the timeout can fire.
      await tick();
      checkAbort(ctx.signal);
      let page: PdfPage;
      let content;
      try {
        page = await doc.getPage(n);
        content = await page.getTextContent();
      } catch (e) {
        checkAbort(ctx.signal);
        unreadable ??= shortMessage(e);
        warn(out, `page ${n}: unreadable (${shortMessage(e)})`);
        continue;
      }
      const vp = page.getViewport({ scale: 1 });
      pageSize.set(n, { width: vp.width, height: vp.height });
      const items = content.items.filter((i): i is TextItem => 'str' in i);
      let lines = itemsToLines(items, vp, content.styles);
      const tables: Block[] = [];

      let ruled: RuledTable[] = [];
      try {
        ruled = await ruledTables(internals, page, items, vp);
      } catch {
        ruled = []; // the detector is best effort; text is still extracted below
      }
      for (const t of ruled) {
        const rows = t.rows.map((r) => r.map((c) => cellText(c.text.join(' '))));
        if (!rows.some((r) => r.some((c) => c))) continue;
        // Inner rules without an outer frame (common in government tables) give a grid that cuts
        // rows in two: when text on a row runs past the grid's sides, the text-aligned detector reads it.
        const open = lines.some((l) => {
          const cy = (l.top + l.bottom) / 2;
          if (cy < t.minXY.y || cy > t.maxXY.y) return false;
          const inside = l.segs.some((q) => q.x0 >= t.minXY.x - 1 && q.x1 <= t.maxXY.x + 1);
          return inside && l.segs.some((q) => q.x1 < t.minXY.x - 1 || q.x0 > t.maxXY.x + 1);
        });
        if (open) continue;
        // A grid far coarser than its text (many text rows of several cells inside few grid rows)
        // is a frame around a borderless table: the text-aligned detector reads it too.
        const within = lines.filter((l) => {
          const cy = (l.top + l.bottom) / 2;
          return l.x0 >= t.minXY.x - 1 && l.x1 <= t.maxXY.x + 1 && cy >= t.minXY.y && cy <= t.maxXY.y;
        });
        const baselines = new Set(within.map((l) => Math.round(l.baseline ?? l.bottom)));
        if (baselines.size > 2 * t.rows.length + 2 && 2 * within.filter((l) => l.segs.length >= 3).length > within.length) continue;
        const pos: [number, number, number, number, number] = [n, t.minXY.x, t.maxXY.x, t.minXY.y, t.maxXY.y].map(
          (v) => Math.round(v * 10) / 10,
        ) as [number, number, number, number, number];
        tables.push({ kind: 'table', text: tableText(rows), rows, header: detectHeader(rows), page: n, positions: [pos] });
        // Lines inside a ruled table are now table cells, not running text.
        lines = lines.filter((l) => {
          const cy = (l.top + l.bottom) / 2;
          return !(l.x0 >= t.minXY.x - 1 && l.x1 <= t.maxXY.x + 1 && cy >= t.minXY.y && cy <= t.maxXY.y);
        });
      }

      const chars = items.reduce((a, i) => a + i.str.replace(/\s/g, '').length, 0);
      let ocred = false;
      if (chars < MIN_TEXT_CHARS && ctx.opts.ocr) {
        const ops = await page.getOperatorList().catch(() => ({ fnArray: [] as number[] }));
        if (ops.fnArray.some((f) => IMAGE_OPS.has(f))) {
          if (ocrPages >= ctx.opts.maxOcrPages) {
            warn(out, `page ${n}: image-only page not OCR'd (limit of ${ctx.opts.maxOcrPages} pages reached)`);
          } else {
            ocrPages++;
            const ocrLines = await ocrPage(parser, n, vp, ctx, out);
            if (ocrLines.length) {
              lines = ocrLines;
              ocred = true;
            }
          }
        }
      }
      page.cleanup();
      perPage.push({ page: n, lines, tables, ocr: ocred });
    }
    // Not one page could be opened (e.g. a page tree that loops): the file is broken, not empty.
    if (perPage.length === 0 && unreadable) fail(`Invalid PDF structure: ${unreadable}`);
    if (!ctx.opts.ocr && perPage.every((p) => p.lines.length === 0) && perPage.length) {
      warn(out, 'no text layer and OCR is disabled: no text extracted');
    }
    const textLines = perPage.filter((p) => !p.ocr).flatMap((p) => p.lines);
    const sizes = headingSizes(perPage.flatMap((p) => p.lines));
    const body = bodySize(textLines);
    const notes = new Set<Block>();
    for (const p of perPage) {
      // OCR glyph heights are too rough to tell footnotes by size.
      const split = p.ocr ? { body: p.lines, notes: [] } : splitFootnotes(p.lines, body, pageSize.get(p.page)?.height ?? Infinity);
      const blocks = linesToBlocks(split.body, { page: p.page, headingSizes: sizes });
      // Ruled tables go where their top edge falls among the page's blocks.
      for (const t of p.tables) {
        const top = t.positions![0]![3];
        const at = blocks.findIndex((b) => (b.positions?.[0]?.[3] ?? 0) > top);
        blocks.splice(at < 0 ? blocks.length : at, 0, t);
      }
      const noteBlocks: Block[] = groupNotes(split.notes).map((g) => ({ kind: 'text', text: paragraphText(g), page: p.page, positions: [position(p.page, g)] }));
      for (const b of noteBlocks) notes.add(b);
      out.blocks.push(...blocks, ...noteBlocks);
    }
    markRunningHeaders(out.blocks, pageSize);
    out.blocks = joinContinuedTables(placeFootnotes(out.blocks, notes), notes);
    out.title = out.meta!['title'] ?? out.blocks.find((b) => b.kind === 'heading')?.text;
    if (!out.title) delete out.title;
    if (out.blocks.length === 0 && !out.warnings?.length) warn(out, 'the PDF contains no extractable text');
    return out;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    await parser.destroy().catch(() => undefined);
  }
}

const isRunning = (b: Block): boolean => b.kind === 'header' || b.kind === 'footer';

/**
 * Footnotes leave the running text: a page's notes follow its text, or, when that text stops
 * mid-sentence, the end of that sentence on the next page, so no sentence is cut by notes.
 */
function placeFootnotes(blocks: Block[], notes: Set<Block>): Block[] {
  if (notes.size === 0) return blocks;
  const out: Block[] = [];
  let pending: Block[] = [];
  let open = false;
  const flush = () => {
    out.push(...pending);
    pending = [];
  };
  for (const b of blocks) {
    if (notes.has(b) && !isRunning(b)) {
      if (open) pending.push(b);
      else out.push(b);
      continue;
    }
    if (isRunning(b)) {
      out.push(b);
      continue;
    }
    if (b.kind !== 'text' && b.kind !== 'list') flush();
    out.push(b);
    open = (b.kind === 'text' || b.kind === 'list') && !endsSentence(b.text);
    if (!open) flush();
  }
  flush();
  return out;
}

const CONTINUED = /^.{0,120}?[\s—–(-]*continued\)?\.?$/i;
const headerKey = (r: string[]): string => r.map((c) => c.toLowerCase().replace(/\s+/g, ' ').trim()).join('\u0001');

/**
 * A table that runs onto the next page is one table: when the first block of a page is a table with
 * the same columns as the last block of the previous page, and either repeats its header or has
 * none, its rows are appended (the repeated header is dropped, and so is a "… Continued" caption).
 */
function joinContinuedTables(blocks: Block[], notes: Set<Block>): Block[] {
  const out: Block[] = [];
  let last: Block | undefined; // a table that so far ends its page
  let lastPage = 0; // the page its latest part is on
  let caption: Block | undefined; // a "Continued" caption waiting to see what follows
  for (const b of blocks) {
    if (isRunning(b) || notes.has(b)) {
      out.push(b);
      continue;
    }
    if (last && !caption && b.kind !== 'table' && b.page === lastPage + 1 && CONTINUED.test(b.text.trim())) {
      caption = b;
      continue;
    }
    const prev = last;
    const width = prev?.rows?.[0]?.length;
    if (prev && b.kind === 'table' && b.page === lastPage + 1 && b.rows?.length && b.rows[0]!.length === width) {
      const repeated = !!b.header && !!prev.header && headerKey(b.rows[0]!) === headerKey(prev.rows![0]!);
      if (repeated || !b.header) {
        prev.rows = [...prev.rows!, ...(repeated ? b.rows.slice(1) : b.rows)];
        prev.text = tableText(prev.rows);
        prev.positions = [...(prev.positions ?? []), ...(b.positions ?? [])];
        lastPage = b.page;
        caption = undefined;
        continue;
      }
    }
    if (caption) {
      out.push(caption);
      caption = undefined;
    }
    out.push(b);
    last = b.kind === 'table' ? b : undefined;
    lastPage = b.page ?? 0;
  }
  if (caption) out.push(caption);
  return out;
}

/** Renders one page and OCRs it; returns lines in page points. Failures become warnings. */
async function ocrPage(parser: PDFParse, n: number, vp: Viewport, ctx: Ctx, out: ParsedDocument): Promise<Line[]> {
  const maxScale = Math.min(OCR_MAX_SIDE / Math.max(vp.width, vp.height), Math.sqrt(ctx.opts.maxOcrPixels / (vp.width * vp.height)));
  const scale = Math.max(0.5, Math.min(OCR_SCALE, maxScale));
  try {
    const shot = await parser.getScreenshot({ partial: [n], scale, imageDataUrl: false, imageBuffer: true });
    checkAbort(ctx.signal);
    const png = shot.pages[0]?.data;
    if (!png?.length) {
      warn(out, `page ${n}: could not render the page for OCR`);
      return [];
    }
    const lines = (await ocrImage(png)).map((l) => ({
      ...l,
      x0: l.x0 / scale,
      x1: l.x1 / scale,
      top: l.top / scale,
      bottom: l.bottom / scale,
      size: l.size / scale,
      segs: l.segs.map((s) => ({ ...s, x0: s.x0 / scale, x1: s.x1 / scale })),
    }));
    if (lines.length === 0) warn(out, `page ${n}: OCR found no text`);
    else warn(out, `page ${n}: no text layer; text recognised by OCR`);
    return lines;
  } catch (e) {
    checkAbort(ctx.signal);
    warn(out, `page ${n}: OCR failed (${e instanceof MissingPackageError ? e.message : shortMessage(e)})`);
    return [];
  }
}


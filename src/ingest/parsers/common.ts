/**
 * Shared pieces of the parsers: resolved options, the per-parse context, failure helpers and
 * small text/table utilities. Internal to `ingest/parsers`.
 */
import { ParseError } from '../types.js';
import type { Block, ParseOptions, ParsedDocument } from '../types.js';

/** Options beyond the shared `ParseOptions` contract; all have safe defaults. */
export interface ParserOptions extends ParseOptions {
  /**
   * Wall-clock budget for one file, attachments included.
   * @default 120_000 (ms)
   */
  timeoutMs?: number;
  /**
   * Largest input accepted.
   * @default 134_217_728 (128 MiB)
   */
  maxBytes?: number;
  /**
   * Largest total uncompressed size of a ZIP-based file (docx, xlsx, pptx); guards against zip bombs.
   * @default 536_870_912 (512 MiB)
   */
  maxUnzippedBytes?: number;
  /**
   * Image-only PDF pages OCR'd per file; later ones get a warning instead.
   * @default 50
   */
  maxOcrPages?: number;
  /**
   * Largest image (width × height) handed to OCR; the OCR engine holds several float copies of it.
   * @default 9_000_000 (≈ A4 at 300 dpi)
   */
  maxOcrPixels?: number;
  /**
   * Nesting depth for email attachments parsed recursively.
   * @default 3
   */
  maxAttachmentDepth?: number;
  /**
   * Deepest nesting accepted in JSON (arrays / objects) and HTML (elements), checked by a linear
   * scan before parsing: deeper input is refused (parsers and the DOM walk recurse, and HTML tree
   * building slows down with depth). Blink caps its DOM at the same depth.
   * @default 512
   */
  maxNestingDepth?: number;
}

export const DEFAULTS = Object.freeze({
  timeoutMs: 120_000 /* ms */,
  maxBytes: 128 * 1024 * 1024 /* bytes */,
  maxUnzippedBytes: 512 * 1024 * 1024 /* bytes */,
  maxOcrPages: 50 /* pages */,
  maxOcrPixels: 9_000_000 /* pixels */,
  maxAttachmentDepth: 3 /* levels */,
  maxNestingDepth: 512 /* levels */,
  ocr: true,
});

export type ResolvedOptions = Readonly<
  typeof DEFAULTS & Pick<ParseOptions, 'pages' | 'signal'> & { ocr: boolean }
>;

export function resolveOptions(o: ParserOptions = {}): ResolvedOptions {
  for (const k of ['timeoutMs', 'maxBytes', 'maxUnzippedBytes', 'maxOcrPages', 'maxOcrPixels', 'maxAttachmentDepth', 'maxNestingDepth'] as const) {
    const v = o[k];
    if (v !== undefined && !(typeof v === 'number' && v >= 0 && Number.isFinite(v))) {
      throw new TypeError(`Option "${k}" must be a non-negative finite number`);
    }
  }
  const defined = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return Object.freeze({ ...DEFAULTS, ...defined, ocr: o.ocr ?? DEFAULTS.ocr }) as ResolvedOptions;
}

/** State shared by one top-level parse and its nested (attachment) parses. */
export interface Ctx {
  opts: ResolvedOptions;
  signal: AbortSignal;
  warnings: string[];
  /** 0 for the uploaded file, +1 per attachment level. */
  depth: number;
}

/** Throws a user-facing ParseError; `cause` keeps the library error for logs. */
export function fail(message: string, cause?: unknown): never {
  throw new ParseError(message, cause === undefined ? undefined : { cause });
}

export function checkAbort(signal: AbortSignal): void {
  if (signal.aborted) {
    const r: unknown = signal.reason;
    throw r instanceof ParseError ? r : new ParseError('Parsing was cancelled');
  }
}

/** Yields to the event loop so timers (the timeout) and aborts can fire during long loops. */
export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** First line of an error message, trimmed to something that fits a progress_msg. */
export function shortMessage(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  const line = (m.split('\n')[0] ?? '').trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** Collapses runs of spaces/tabs, trims each line, drops blank-line runs beyond one. */
export function tidy(s: string): string {
  return s
    .replace(/\u00a0/g, ' ')
    .split('\n')
    .map((l) => l.replace(/[ \t\f\v\r]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Cell text on one line: tables render a row per line. */
export const cellText = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Readable rendering of table rows: one line per row, cells joined by " | ". */
export function tableText(rows: string[][]): string {
  return rows.map((r) => r.join(' | ')).join('\n');
}

const NUMERIC = /^[-+(]?[$€£¥]?\s?\d[\d\s,.'’]*%?\)?$/;
export const isNumeric = (s: string): boolean => NUMERIC.test(s.trim());

/**
 * A first row is a header when at least half filled with non-numeric labels that are distinct, or
 * that repeat (grouped headers) above a mostly numeric body.
 */
export function detectHeader(rows: string[][]): boolean {
  if (rows.length < 2) return false;
  const first = rows[0]!;
  const filled = first.filter((c) => c.trim() !== '');
  if (filled.length < Math.max(1, Math.ceil(first.length * 0.5))) return false;
  if (filled.some(isNumeric)) return false;
  if (new Set(filled.map((c) => c.trim().toLowerCase())).size === filled.length) return true;
  // Repeated labels (two-level headers) still head a table whose body is numbers.
  const body = rows.slice(1).flat().filter((c) => c.trim() !== '');
  return body.length > 0 && body.filter(isNumeric).length / body.length >= 0.5;
}

/** Pads rows to equal width and drops rows and trailing columns that are entirely empty. */
export function squareRows(rows: string[][]): string[][] {
  const kept = rows.filter((r) => r.some((c) => c.trim() !== ''));
  let width = 0;
  for (const r of kept) {
    for (let i = r.length - 1; i >= 0; i--) {
      if (r[i]!.trim() !== '') {
        width = Math.max(width, i + 1);
        break;
      }
    }
  }
  return kept.map((r) => {
    const out = r.slice(0, width);
    while (out.length < width) out.push('');
    return out;
  });
}

export function tableBlock(rows: string[][], extra: Partial<Block> = {}): Block {
  const header = extra.header ?? detectHeader(rows);
  return { kind: 'table', text: tableText(rows), rows, header, ...extra };
}

/** Splits text into paragraphs at blank lines. */
export function paragraphs(s: string): string[] {
  return s
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** Adds a warning to the document (deduplicated). */
export function warn(doc: ParsedDocument, w: string): void {
  doc.warnings ??= [];
  if (!doc.warnings.includes(w)) doc.warnings.push(w);
}

/** True when a 1-based page lies in the requested ranges (no ranges = all pages). */
export function pageWanted(page: number, ranges: [number, number][] | undefined): boolean {
  if (!ranges || ranges.length === 0) return true;
  return ranges.some(([a, b]) => page >= a && page <= b);
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A minimal HTML table, as RAGFlow stores tables. */
export function rowsToHtml(rows: string[][], header: boolean): string {
  const tr = (r: string[], tag: string) => `<tr>${r.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('')}</tr>`;
  const body = rows.map((r, i) => tr(r, header && i === 0 ? 'th' : 'td')).join('');
  return `<table>${body}</table>`;
}

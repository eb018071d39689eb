/**
 * HTML → blocks, shared by the HTML, DOCX (mammoth's HTML), Markdown (raw HTML blocks) and EML
 * (HTML bodies) parsers. Works on cheerio's node tree through a minimal structural type so no
 * transitive type package is needed.
 */
import { load } from 'cheerio';
import type { Block } from '../types.js';
import { cellText, detectHeader, escapeHtml, tableText, tidy } from './common.js';

/** The parts of a domhandler node the walker reads. */
export interface DomNode {
  type: string; // 'tag' | 'text' | 'root' | 'comment' | 'directive' | 'script' | 'style' | 'cdata'
  name?: string;
  data?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
  parent?: DomNode | null;
}

/** Elements whose content is never document text. */
const SKIP = new Set([
  'script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'embed', 'head', 'select',
  'button', 'input', 'textarea', 'canvas', 'map', 'audio', 'video', 'title', 'meta', 'link', 'img',
  'ix:header', // inline XBRL: hidden machine-readable facts, duplicated in the visible text
]);

/** Elements that end the current run of inline text. */
const BLOCK = new Set([
  'p', 'div', 'section', 'article', 'main', 'blockquote', 'address', 'figure', 'figcaption', 'dl', 'dt', 'dd',
  'form', 'fieldset', 'center', 'body', 'html', 'details', 'summary', 'header', 'footer', 'nav', 'aside', 'hr',
  'ul', 'ol', 'menu', 'tbody', 'thead', 'tfoot', 'tr', 'td', 'th', 'legend', 'hgroup', 'search',
]);

const HEADING = /^h([1-6])$/;

/** Text of a subtree with whitespace collapsed; `<br>` becomes a newline. */
export function nodeText(n: DomNode, pre = false): string {
  const parts: string[] = [];
  const walk = (x: DomNode, inPre: boolean): void => {
    if (x.type === 'text') {
      parts.push(inPre ? (x.data ?? '') : (x.data ?? '').replace(/\s+/g, ' '));
      return;
    }
    if (x.type === 'cdata') {
      for (const c of x.children ?? []) walk(c, true);
      return;
    }
    if (x.type !== 'tag' && x.type !== 'root' && x.type !== 'script' && x.type !== 'style') return;
    const name = x.name?.toLowerCase() ?? '';
    if (x.type !== 'root' && (SKIP.has(name) || x.type === 'script' || x.type === 'style')) return;
    if (name === 'br') {
      parts.push('\n');
      return;
    }
    const block = BLOCK.has(name) || HEADING.test(name) || name === 'li' || name === 'table';
    if (block) parts.push('\n');
    for (const c of x.children ?? []) walk(c, inPre || name === 'pre');
    if (block) parts.push('\n');
    else if (name === 'td' || name === 'th') parts.push(' ');
  };
  walk(n, pre);
  return pre ? parts.join('') : tidy(parts.join(''));
}

const attr = (n: DomNode, k: string): string | undefined => n.attribs?.[k];

function childTags(n: DomNode, ...names: string[]): DomNode[] {
  return (n.children ?? []).filter((c) => c.type === 'tag' && names.includes(c.name?.toLowerCase() ?? ''));
}

/** The rows of a table, skipping nested tables' rows (they stay inside their cell's text). */
function tableRows(table: DomNode): DomNode[] {
  const rows: DomNode[] = [];
  const visit = (n: DomNode): void => {
    for (const c of n.children ?? []) {
      if (c.type !== 'tag') continue;
      const name = c.name?.toLowerCase();
      if (name === 'tr') rows.push(c);
      else if (name === 'thead' || name === 'tbody' || name === 'tfoot') visit(c);
    }
  };
  visit(table);
  return rows;
}

function containsTag(n: DomNode, name: string): boolean {
  for (const c of n.children ?? []) {
    if (c.type === 'tag' && (c.name?.toLowerCase() === name || containsTag(c, name))) return true;
  }
  return false;
}

export interface TableData {
  rows: string[][];
  header: boolean;
  /** The table as RAGFlow stores it, merged cells kept as `colspan` / `rowspan` (when asked for). */
  html?: string;
}

/**
 * Reads a table into a grid of equal-width rows. A merged (colspan / rowspan) cell's text stands
 * once, in its top-left cell; the cells it covers are empty, and the HTML copy (`withHtml`) keeps
 * the spans.
 */
export function readTable(table: DomNode, withHtml = false): TableData {
  const trs = tableRows(table);
  const grid: string[][] = [];
  // Top-left cell of each merged cell: its spans and tag.
  const origin = new Map<string, { cs: number; rs: number; th: boolean }>();
  const covered = new Set<string>();
  const thRows: boolean[] = [];
  trs.forEach((tr, r) => {
    grid[r] ??= [];
    const cells = childTags(tr, 'td', 'th');
    let col = 0;
    thRows[r] = cells.length > 0 && cells.every((c) => c.name?.toLowerCase() === 'th');
    for (const cell of cells) {
      while (grid[r]![col] !== undefined) col++;
      const text = cellText(nodeText(cell));
      const cs = Math.min(Math.max(1, Number(attr(cell, 'colspan')) || 1), 100);
      const rs = Math.min(Math.max(1, Number(attr(cell, 'rowspan')) || 1), 1000, trs.length - r);
      for (let dr = 0; dr < rs; dr++) {
        grid[r + dr] ??= [];
        for (let dc = 0; dc < cs; dc++) {
          grid[r + dr]![col + dc] = dr === 0 && dc === 0 ? text : '';
          if (dr || dc) covered.add(`${r + dr},${col + dc}`);
        }
      }
      origin.set(`${r},${col}`, { cs, rs, th: cell.name?.toLowerCase() === 'th' });
      col += cs;
    }
  });
  const width = Math.max(0, ...grid.map((r) => r.length));
  const full = grid.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
  const kept = full.map((r, i) => i).filter((i) => full[i]!.some((c) => c !== ''));
  const rows = kept.map((i) => full[i]!);
  const inThead = childTags(table, 'thead').length > 0;
  const firstTh = thRows[kept[0] ?? 0] === true;
  const header = rows.length > 1 && (inThead || firstTh || detectHeader(rows));
  if (!withHtml) return { rows, header };
  // HTML over the kept rows: a span counts only the rows that are kept.
  const keptSet = new Set(kept);
  const html = kept
    .map((r, k) => {
      let tds = '';
      for (let c = 0; c < width; c++) {
        if (covered.has(`${r},${c}`)) continue;
        const o = origin.get(`${r},${c}`);
        const cs = o?.cs ?? 1;
        let rs = 0;
        for (let dr = 0; dr < (o?.rs ?? 1); dr++) if (keptSet.has(r + dr)) rs++;
        const tag = (header && k === 0) || o?.th ? 'th' : 'td';
        tds += `<${tag}${cs > 1 ? ` colspan="${cs}"` : ''}${rs > 1 ? ` rowspan="${rs}"` : ''}>${escapeHtml(full[r]![c]!)}</${tag}>`;
        c += cs - 1;
      }
      return `<tr>${tds}</tr>`;
    })
    .join('');
  return { rows, header, html: `<table>${html}</table>` };
}

/** A table used for page layout (email templates, SEC filings) rather than data. */
function isLayoutTable(table: DomNode, data: TableData): boolean {
  if (containsTag(table, 'table')) return true;
  const width = data.rows[0]?.length ?? 0;
  if (data.rows.length <= 1 || width <= 1) return true;
  const role = attr(table, 'role')?.toLowerCase();
  return role === 'presentation' || role === 'none';
}

export interface WalkOptions {
  page?: number;
  /** Keep a compact HTML copy of each table in `html`. */
  tableHtml?: boolean;
  /** Turns an `<img>` into a block (DOCX pictures); images are skipped without it. */
  image?: (src: string, alt: string) => Block | undefined;
}

/** Converts an element tree to blocks in document order. */
export function domToBlocks(root: DomNode, opts: WalkOptions = {}): Block[] {
  const blocks: Block[] = [];
  let buf: string[] = [];
  const page = opts.page;
  const push = (b: Block): void => {
    if (page !== undefined) b.page = page;
    blocks.push(b);
  };
  const flush = (): void => {
    const t = tidy(buf.join(''));
    buf = [];
    if (t !== '') push({ kind: 'text', text: t });
  };
  const walk = (n: DomNode): void => {
    if (n.type === 'text') {
      buf.push((n.data ?? '').replace(/\s+/g, ' '));
      return;
    }
    if (n.type === 'cdata') {
      for (const c of n.children ?? []) buf.push(c.data ?? '');
      return;
    }
    if (n.type !== 'tag' && n.type !== 'root') return;
    const name = n.name?.toLowerCase() ?? '';
    if (name === 'img' && opts.image) {
      const b = opts.image(attr(n, 'src') ?? '', attr(n, 'alt') ?? '');
      if (b) {
        flush();
        push(b);
      }
      return;
    }
    if (SKIP.has(name)) return;
    if (attr(n, 'hidden') !== undefined || /display\s*:\s*none/i.test(attr(n, 'style') ?? '')) return;
    const h = HEADING.exec(name);
    if (h) {
      flush();
      const t = nodeText(n).replace(/\n+/g, ' ');
      if (t) push({ kind: 'heading', text: t, level: Number(h[1]) });
      return;
    }
    switch (name) {
      case 'br':
        buf.push('\n');
        return;
      case 'pre': {
        flush();
        const t = nodeText(n, true).replace(/^\n/, '').trimEnd();
        if (t.trim()) push({ kind: 'code', text: t });
        return;
      }
      case 'li': {
        flush();
        // Nested lists become their own items, after this one.
        const nested: DomNode[] = [];
        const own: DomNode = { ...n, children: (n.children ?? []).filter((c) => {
          const isList = c.type === 'tag' && ['ul', 'ol'].includes(c.name?.toLowerCase() ?? '');
          if (isList) nested.push(c);
          return !isList;
        }) };
        const t = nodeText(own);
        if (t) push({ kind: 'list', text: t });
        for (const l of nested) walk(l);
        return;
      }
      case 'caption': {
        flush();
        const t = nodeText(n);
        if (t) push({ kind: 'caption', text: t });
        return;
      }
      case 'table': {
        flush();
        const data = readTable(n, opts.tableHtml);
        if (isLayoutTable(n, data)) {
          // Walk cells as ordinary content so nested data tables are still found.
          for (const c of n.children ?? []) walk(c);
          flush();
          return;
        }
        for (const cap of childTags(n, 'caption')) walk(cap);
        if (data.rows.length === 0) return;
        const b: Block = { kind: 'table', text: tableText(data.rows), rows: data.rows, header: data.header };
        if (opts.tableHtml) b.html = data.html;
        push(b);
        return;
      }
      default:
        break;
    }
    const block = BLOCK.has(name);
    if (block) flush();
    for (const c of n.children ?? []) walk(c);
    if (block) flush();
  };
  walk(root);
  flush();
  return blocks;
}

/** Parses an HTML string (fragment or document) and returns its root node. */
export function parseHtml(html: string): DomNode {
  const $ = load(html);
  return $.root()[0] as unknown as DomNode;
}

/** Convenience: HTML string → blocks. */
export function htmlToBlocks(html: string, opts: WalkOptions = {}): Block[] {
  return domToBlocks(parseHtml(html), opts);
}

/** Finds the first element with the given tag name, depth-first. */
export function findTag(n: DomNode, name: string): DomNode | undefined {
  for (const c of n.children ?? []) {
    if (c.type !== 'tag') continue;
    if (c.name?.toLowerCase() === name) return c;
    const f = findTag(c, name);
    if (f) return f;
  }
  return undefined;
}

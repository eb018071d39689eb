/**
 * Markdown (CommonMark + GFM tables) by a line scanner: ATX/setext headings, fenced and indented
 * code, pipe tables, list items, block quotes, YAML front matter and raw HTML blocks (parsed as
 * HTML, so a leading `<div align="center">` does not swallow the document). Inline markup is kept
 * as written, as RAGFlow keeps it in chunk content.
 */
import type { Block, ParsedDocument } from '../types.js';
import { detectHeader, tableText, tidy } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';
import { htmlToBlocks } from './html-blocks.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT1 = /^ {0,3}=+[ \t]*$/;
const SETEXT2 = /^ {0,3}-+[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST = /^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*)|$)/;
const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
const HTML_START = /^ {0,3}<(?:[a-zA-Z][\w-]*(?:[\s/>]|$)|\/[a-zA-Z][\w-]*\s*>|!--)/;
const TABLE_DELIM = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/** Splits a pipe-table row on unescaped pipes outside code spans. */
export function splitRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells: string[] = [];
  let cur = '';
  let inCode = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (ch === '`') {
      inCode = !inCode;
      cur += ch;
    } else if (ch === '|' && !inCode) {
      cells.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  cells.push(cur.trim());
  return cells;
}

export function markdownToBlocks(text: string): { blocks: Block[]; meta: Record<string, string> } {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  const meta: Record<string, string> = {};
  let para: string[] = [];
  let lastKind: 'list' | 'other' | 'none' = 'none';
  const flushPara = (): void => {
    const t = para.map((l) => l.trim()).join('\n').trim();
    para = [];
    if (t) {
      blocks.push({ kind: 'text', text: t });
      lastKind = 'other';
    }
  };
  let i = 0;
  // YAML front matter: simple `key: value` pairs become meta.
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, k) => k > 0 && k < 200 && /^(---|\.\.\.)\s*$/.test(l));
    if (end > 0) {
      for (const l of lines.slice(1, end)) {
        const m = /^([\w-]+):\s*(.+)$/.exec(l);
        if (m) meta[m[1]!] = m[2]!.replace(/^["']|["']$/g, '');
      }
      i = end + 1;
    }
  }
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      flushPara();
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence && !(fence[1]![0] === '`' && fence[2]!.includes('`'))) {
      flushPara();
      const mark = fence[1]!;
      const body: string[] = [];
      i++;
      while (i < lines.length) {
        const close = new RegExp(`^ {0,3}${mark[0] === '`' ? '`' : '~'}{${mark.length},}[ \\t]*$`);
        if (close.test(lines[i]!)) {
          i++;
          break;
        }
        body.push(lines[i]!);
        i++;
      }
      const code = body.join('\n');
      if (code.trim()) blocks.push({ kind: 'code', text: code });
      lastKind = 'other';
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      flushPara();
      const t = (atx[2] ?? '').trim();
      if (t) blocks.push({ kind: 'heading', text: t, level: atx[1]!.length });
      lastKind = 'other';
      i++;
      continue;
    }
    if (para.length > 0 && (SETEXT1.test(line) || SETEXT2.test(line))) {
      const t = para.map((l) => l.trim()).join(' ');
      para = [];
      blocks.push({ kind: 'heading', text: t, level: SETEXT1.test(line) ? 1 : 2 });
      lastKind = 'other';
      i++;
      continue;
    }
    if (HR.test(line)) {
      flushPara();
      i++;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      flushPara();
      const head = splitRow(line);
      const rows: string[][] = [head];
      i += 2;
      while (i < lines.length && lines[i]!.trim() !== '' && lines[i]!.includes('|')) {
        const r = splitRow(lines[i]!);
        rows.push(Array.from({ length: head.length }, (_, k) => r[k] ?? ''));
        i++;
      }
      blocks.push({ kind: 'table', text: tableText(rows), rows, header: true });
      lastKind = 'other';
      continue;
    }
    if (HTML_START.test(line) && para.length === 0) {
      // A raw HTML block runs to the next blank line (CommonMark type 6/7 blocks).
      const html: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '') html.push(lines[i++]!);
      for (const b of htmlToBlocks(html.join('\n'))) {
        if (b.kind === 'table' && b.rows) b.header ??= detectHeader(b.rows);
        blocks.push(b);
      }
      lastKind = 'other';
      continue;
    }
    const li = LIST.exec(line);
    if (li && (para.length === 0 || li[3])) {
      flushPara();
      const indent = li[1]!.replace(/\t/g, '    ').length;
      const item: string[] = [li[3] ?? ''];
      i++;
      // Lazy and indented continuation lines belong to the item until a blank line or a new block.
      while (i < lines.length) {
        const l = lines[i]!;
        if (l.trim() === '' || LIST.test(l) || ATX.test(l) || FENCE.test(l) || HR.test(l) || QUOTE.test(l)) break;
        item.push(l.trim());
        i++;
      }
      const t = item.join('\n').trim();
      if (t) blocks.push({ kind: 'list', text: t, ...(indent >= 2 ? { level: 1 + Math.floor(indent / 2) } : {}) });
      lastKind = 'list';
      continue;
    }
    const q = QUOTE.exec(line);
    if (q) {
      flushPara();
      const body: string[] = [];
      while (i < lines.length) {
        const m = QUOTE.exec(lines[i]!);
        if (!m) break;
        body.push(m[1]!);
        i++;
      }
      const t = tidy(body.join('\n'));
      if (t) blocks.push({ kind: 'text', text: t });
      lastKind = 'other';
      continue;
    }
    if (/^( {4}|\t)/.test(line) && para.length === 0 && lastKind !== 'list') {
      const body: string[] = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]!) || lines[i]!.trim() === '')) {
        body.push(lines[i]!.replace(/^( {4}|\t)/, ''));
        i++;
      }
      const code = body.join('\n').trimEnd();
      if (code.trim()) blocks.push({ kind: 'code', text: code });
      lastKind = 'other';
      continue;
    }
    if (/^( {2,}|\t)/.test(line) && para.length === 0 && lastKind === 'list') {
      // Indented paragraph after a blank line inside a list item: keep it with the list.
      const prev = blocks[blocks.length - 1]!;
      prev.text += `\n${line.trim()}`;
      i++;
      continue;
    }
    para.push(line);
    i++;
  }
  flushPara();
  return { blocks, meta };
}

export async function parseMarkdown(data: Uint8Array, _ctx: Ctx): Promise<ParsedDocument> {
  const { text } = decodeText(data);
  const { blocks, meta } = markdownToBlocks(text);
  const doc: ParsedDocument = { format: 'markdown', blocks };
  const title = meta['title'] ?? blocks.find((b) => b.kind === 'heading' && b.level === 1)?.text;
  if (title) doc.title = title;
  if (Object.keys(meta).length) doc.meta = meta;
  return doc;
}

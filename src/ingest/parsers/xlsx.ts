/**
 * XLSX with exceljs: every visible worksheet becomes table block(s) with `sheet` set and `page` =
 * sheet number. Cell text is what Excel shows (formula results, rich text, hyperlinks); merged
 * ranges repeat the master cell's text over the range; empty rows and columns are dropped.
 * Report-style sheets are read as what they are: a title or section label line (one value across
 * the row) above a table becomes a `heading` block, the row under it is the table's header, and a
 * header row repeated further down starts the next section instead of being data.
 */
import ExcelJS from 'exceljs';
import type { ParsedDocument } from '../types.js';
import { checkAbort, detectHeader, fail, isNumeric, tick, warn } from './common.js';
import type { Ctx } from './common.js';
import { sheetBlocks } from './csv.js';
import { guardZip } from './zip.js';

/** exceljs CellValue → display text, without trusting `cell.text` (it throws on some errors). */
function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? '' : v.toISOString().replace(/T00:00:00\.000Z$/, '');
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o['richText'])) return (o['richText'] as { text?: string }[]).map((r) => r.text ?? '').join('');
    if ('result' in o) return valueText(o['result']); // formula
    if ('text' in o) return valueText(o['text']); // hyperlink
    if ('error' in o) return String(o['error']);
    if ('sharedFormula' in o || 'formula' in o) return '';
  }
  return '';
}

export async function parseXlsx(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  await guardZip(data, 'XLSX', ctx.opts.maxUnzippedBytes);
  const wb = new ExcelJS.Workbook();
  try {
    // exceljs' typings want a Node Buffer; a view over the same memory avoids a copy.
    await wb.xlsx.load(Buffer.from(data.buffer, data.byteOffset, data.byteLength) as unknown as ArrayBuffer);
  } catch (e) {
    fail(`Invalid XLSX: ${(e as Error).message?.split('\n')[0] ?? 'unreadable workbook'}`, e);
  }
  const doc: ParsedDocument = { format: 'xlsx', blocks: [], pages: 0, meta: {} };
  let n = 0;
  for (const ws of wb.worksheets) {
    n++;
    checkAbort(ctx.signal);
    await tick();
    if (ws.state && ws.state !== 'visible') {
      warn(doc, `sheet "${ws.name}" is hidden and was skipped`);
      continue;
    }
    const grid: string[][] = [];
    const bold: boolean[] = [];
    ws.eachRow({ includeEmpty: false }, (row, r) => {
      const cells: string[] = [];
      let all = true;
      row.eachCell({ includeEmpty: false }, (cell, c) => {
        // Merged slaves report the master's value; keep it so spanned headers label every column.
        const v = cell.isMerged ? cell.master.value : cell.value;
        cells[c - 1] = valueText(v).trim();
        if (cells[c - 1]) all &&= isBold(cell.font, v);
      });
      grid[r - 1] = Array.from(cells, (c) => c ?? '');
      bold[r - 1] = all && cells.some((c) => c);
    });
    // Merged ranges whose slaves were never materialised still cover their columns.
    for (const range of (ws.model as { merges?: string[] }).merges ?? []) {
      const [a, b] = range.split(':');
      if (!a || !b) continue;
      const tl = ws.getCell(a);
      const br = ws.getCell(b);
      const text = valueText(tl.value).trim();
      if (!text) continue;
      for (let r = Number(tl.row); r <= Number(br.row); r++) {
        grid[r - 1] ??= [];
        for (let c = Number(tl.col); c <= Number(br.col); c++) grid[r - 1]![c - 1] = text;
      }
    }
    for (const part of sheetSections(Array.from(grid, (r) => Array.from(r ?? [], (c) => c ?? '')), bold)) {
      if ('label' in part) doc.blocks.push({ kind: 'heading', level: 2, text: part.label, sheet: ws.name, page: n });
      else doc.blocks.push(...sheetBlocks(part.rows, { sheet: ws.name, page: n, header: part.header }));
    }
  }
  doc.pages = n;
  doc.meta!['sheets'] = wb.worksheets.map((w) => w.name).join(', ');
  return doc;
}

/** Bold cell style, or every rich-text run bold: how spreadsheets usually mark header rows. */
function isBold(font: { bold?: boolean } | undefined, v: unknown): boolean {
  if (font?.bold) return true;
  const runs = (v as { richText?: { font?: { bold?: boolean } }[] } | null)?.richText;
  return Array.isArray(runs) && runs.length > 0 && runs.every((x) => x.font?.bold === true);
}

type Section = { label: string } | { rows: string[][]; header: boolean };

/** One value (a merged range repeats it) in a row of a sheet wider than one column, not a number. */
function labelOf(row: string[], width: number): string | undefined {
  if (width < 2) return undefined;
  const vals = new Set(row.filter((c) => c !== ''));
  if (vals.size !== 1) return undefined;
  const v = [...vals][0]!;
  return isNumeric(v) ? undefined : v;
}

const sameRow = (a: string[], b: string[]) => a.length === b.length && a.every((c, i) => c === b[i]);

/** Drops rows and columns with nothing in them. */
function compact(rows: string[][]): string[][] {
  const width = rows.reduce((w, r) => Math.max(w, r.length), 0);
  const used = Array.from({ length: width }, (_, i) => rows.some((r) => (r[i] ?? '') !== ''));
  return rows.map((r) => pad(r, width).filter((_, i) => used[i]));
}

/**
 * A row heads the rows below it: bold above rows that are not, or text over a column whose cells
 * below are mostly numbers.
 */
function heads(row: string[], below: string[][], bold: boolean, belowBold: boolean): boolean {
  const filled = row.filter((c) => c !== '');
  if (filled.length < 2 || filled.some(isNumeric) || !below.length) return false;
  if (bold && !belowBold) return true;
  return row.some((c, i) => {
    if (c === '') return false;
    const vals = below.map((r) => r[i] ?? '').filter((v) => v !== '');
    return vals.length > 0 && vals.filter(isNumeric).length / vals.length >= 0.5;
  });
}

/**
 * Splits a sheet's grid (blank rows kept) into labels and tables. A label is a one-value row at
 * the top of a run of rows (after blank rows or the sheet's start). At the top of the sheet the
 * first table row is its header as for any table; after a label a row heads a new table when it
 * repeats the last header or plainly heads the rows below; otherwise the rows go on under the last
 * header. A row equal to the header is never data.
 */
function sheetSections(grid: string[][], bold: boolean[]): Section[] {
  // No spread into Math.max: a sheet may have a million rows.
  const width = grid.reduce((m, r) => Math.max(m, (r ?? []).reduce((w, c, i) => (c !== '' ? i + 1 : w), 0)), 0);
  const out: Section[] = [];
  let cur: { rows: string[][]; header: boolean } | undefined;
  let lastHeader: string[] | undefined;
  let atTop = true; // the first filled row after blank rows, the sheet's start or a label
  let afterLabel = false;
  const filled = (r: number) => (grid[r] ?? []).some((c) => c !== '');
  const flush = () => {
    if (cur?.rows.length) {
      const rows = compact(cur.rows);
      out.push({ rows, header: cur.header && rows.length > 1 });
    }
    cur = undefined;
  };
  for (let r = 0; r < grid.length; r++) {
    if (!filled(r)) {
      atTop = true;
      continue;
    }
    const row = pad(grid[r]!, width);
    const label = atTop ? labelOf(row, width) : undefined;
    atTop = false;
    if (label !== undefined) {
      flush();
      out.push({ label });
      atTop = true;
      afterLabel = true;
      continue;
    }
    if (lastHeader && sameRow(row, lastHeader)) {
      // The header again (a new section, or a page's repeat): the table goes on under it.
      if (!cur) cur = { rows: [row], header: true };
      afterLabel = false;
      continue;
    }
    if (!cur) {
      const below: number[] = [];
      for (let k = r + 1; k < grid.length && below.length < 10; k++) if (filled(k)) below.push(k);
      const belowRows = below.map((k) => pad(grid[k]!, width));
      const isHead =
        afterLabel && lastHeader
          ? heads(row, belowRows, bold[r] === true, below.length > 0 && below.every((k) => bold[k]))
          : detectHeader(compact([row, ...belowRows]));
      if (isHead) {
        cur = { rows: [row], header: true };
        lastHeader = row;
      } else if (lastHeader) cur = { rows: [lastHeader, row], header: true };
      else cur = { rows: [row], header: false };
    } else cur.rows.push(row);
    afterLabel = false;
  }
  flush();
  return out;
}

const pad = (r: string[], width: number): string[] => Array.from({ length: width }, (_, i) => r[i] ?? '');

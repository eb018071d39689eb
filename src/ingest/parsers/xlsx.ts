/**
 * XLSX with exceljs: every visible worksheet becomes table block(s) with `sheet` set and `page` =
 * sheet number. Cell text is what Excel shows (formula results, rich text, hyperlinks); merged
 * ranges repeat the master cell's text over the range; empty rows and columns are dropped.
 */
import ExcelJS from 'exceljs';
import type { ParsedDocument } from '../types.js';
import { checkAbort, fail, squareRows, tick, warn } from './common.js';
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
    ws.eachRow({ includeEmpty: false }, (row, r) => {
      const cells: string[] = [];
      row.eachCell({ includeEmpty: false }, (cell, c) => {
        // Merged slaves report the master's value; keep it so spanned headers label every column.
        cells[c - 1] = valueText(cell.isMerged ? cell.master.value : cell.value).trim();
      });
      grid[r - 1] = Array.from(cells, (c) => c ?? '');
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
    const rows = squareRows(Array.from(grid, (r) => Array.from(r ?? [], (c) => c ?? '')));
    // Leading empty columns (sheets often start at column B or C) carry nothing.
    let lead = Number.POSITIVE_INFINITY;
    for (const r of rows) lead = Math.min(lead, r.findIndex((c) => c !== ''));
    const trimmed = lead > 0 && Number.isFinite(lead) ? rows.map((r) => r.slice(lead)) : rows;
    doc.blocks.push(...sheetBlocks(trimmed, { sheet: ws.name, page: n }));
  }
  doc.pages = n;
  doc.meta!['sheets'] = wb.worksheets.map((w) => w.name).join(', ');
  return doc;
}

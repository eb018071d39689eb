/**
 * CSV / TSV with papaparse: RFC 4180 quoting (commas and newlines inside quotes), delimiter
 * auto-detection, any common encoding. One table block per 1,000 rows; the header row, when
 * detected, is repeated at the top of every block.
 */
import Papa from 'papaparse';
import type { Block, ParsedDocument } from '../types.js';
import { detectHeader, squareRows, tableText, warn } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';

export const ROWS_PER_BLOCK = 1000;

/** Splits a sheet's rows into table blocks of at most ROWS_PER_BLOCK data rows; `extra.header` overrides detection. */
export function sheetBlocks(rows: string[][], extra: Partial<Block> = {}): Block[] {
  if (rows.length === 0) return [];
  const header = extra.header ?? detectHeader(rows);
  const head = header ? [rows[0]!] : [];
  const body = header ? rows.slice(1) : rows;
  const out: Block[] = [];
  for (let i = 0; i < Math.max(1, body.length); i += ROWS_PER_BLOCK) {
    const part = [...head, ...body.slice(i, i + ROWS_PER_BLOCK)];
    out.push({ kind: 'table', text: tableText(part), rows: part, header, ...extra });
  }
  return out;
}

export async function parseCsv(data: Uint8Array, _ctx: Ctx, tsv = false): Promise<ParsedDocument> {
  const { text, encoding } = decodeText(data);
  const res = Papa.parse(text, { skipEmptyLines: 'greedy', ...(tsv ? { delimiter: '\t' } : {}) });
  const rows = squareRows(res.data.map((r) => r.map((c) => String(c ?? '').trim())));
  const doc: ParsedDocument = {
    format: 'csv',
    blocks: sheetBlocks(rows, { page: 1 }),
    pages: 1,
    meta: { encoding, delimiter: res.meta.delimiter, rows: String(rows.length), columns: String(rows[0]?.length ?? 0) },
  };
  // Quote errors leave the rest readable; say so rather than fail.
  const bad = res.errors.filter((e) => e.type === 'Quotes');
  if (bad.length) warn(doc, `CSV: ${bad.length} malformed quoted field(s), first near row ${(bad[0]!.row ?? 0) + 1}`);
  return doc;
}

/**
 * `table`: every spreadsheet row is a chunk (RAGFlow `rag/app/table.py`). The first row names
 * the columns; a row reads `- column: value` per non-empty cell. Columns are typed by majority
 * vote as RAGFlow does (int, float, bool, datetime, text) and values rewritten to the type's form,
 * so "TRUE" reads "yes" and "2024-01-05" reads "2024-01-05 00:00:00".
 */
import type { Block, ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { finalize, isRunning } from './common.js';

const DROPPED = new Set(['id', '_id', 'index', 'idx']);
const BOOL_TRUE = /^(true|yes|是|\*|✓|✔|☑|✅|√)$/i;
const BOOL_FALSE = /^(false|no|否|⍻|×)$/i;
const INT = /^[+-]?[0-9]+$/;
const FLOAT = /^[+-]?[0-9]+\.[0-9]*$/;
// dateutil accepts far more; ragloom recognises ISO-like dates and times.
const DATE = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

type ColType = 'int' | 'float' | 'bool' | 'datetime' | 'text';
const PRIORITY: Record<ColType, number> = { text: 0, datetime: 1, float: 2, int: 3, bool: 4 };

function asDate(s: string): string | undefined {
  const m = DATE.exec(s.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', se = '0'] = m;
  const p = (x: string) => x.padStart(2, '0');
  const dt = new Date(Date.UTC(+y!, +mo! - 1, +d!, +h, +mi, +se));
  if (dt.getUTCMonth() !== +mo! - 1 || dt.getUTCDate() !== +d!) return undefined;
  return `${y}-${p(mo!)}-${p(d!)} ${p(h)}:${p(mi)}:${p(se)}`;
}

/** RAGFlow `column_data_type`: majority type, ties to the type that loses least; cells it cannot convert stay as written. */
function typeColumn(values: (string | undefined)[]): string[] {
  const counts: Record<ColType, number> = { int: 0, float: 0, text: 0, datetime: 0, bool: 0 };
  let bigInt = false;
  for (const v of values) {
    if (v === undefined || v === '') continue;
    const s = v.replace(/%%/g, '');
    if (INT.test(s) && !s.startsWith('0')) {
      counts.int++;
      if (BigInt(s.replace(/^\+/, '')) > 2n ** 63n - 1n) bigInt = true;
    } else if (FLOAT.test(s) && !s.startsWith('0')) counts.float++;
    else if (BOOL_TRUE.test(v) || BOOL_FALSE.test(v)) counts.bool++;
    else if (asDate(v)) counts.datetime++;
    else counts.text++;
  }
  const ty: ColType = bigInt
    ? 'float'
    : (Object.entries(counts) as [ColType, number][]).sort((a, b) => b[1] - a[1] || PRIORITY[a[0]] - PRIORITY[b[0]])[0]![0];
  return values.map((v) => {
    if (v === undefined || v === '') return v ?? '';
    switch (ty) {
      case 'int': {
        const t = v.trim();
        return /^[+-]?\d+$/.test(t) ? BigInt(t.replace(/^\+/, '')).toString() : v;
      }
      case 'float': {
        const n = Number(v.trim());
        return Number.isFinite(n) ? (Number.isInteger(n) ? `${n}.0` : String(n)) : v;
      }
      case 'bool':
        return BOOL_TRUE.test(v.trim()) ? 'yes' : BOOL_FALSE.test(v.trim()) ? 'no' : v;
      case 'datetime':
        return asDate(v) ?? v;
      default:
        return v;
    }
  });
}

/** RAGFlow `_deduplicate_column_names`: a repeated name gets `_2`, `_3`… */
function dedupe(cols: string[]): string[] {
  const reserved = new Set(cols);
  const used = new Set<string>();
  const counts = new Map<string, number>();
  return cols.map((name) => {
    const c = (counts.get(name) ?? 0) + 1;
    counts.set(name, c);
    if (!used.has(name)) {
      used.add(name);
      return name;
    }
    let suffix = c;
    let next = `${name}_${suffix}`;
    while (used.has(next) || reserved.has(next)) next = `${name}_${++suffix}`;
    counts.set(name, suffix);
    used.add(next);
    return next;
  });
}

/** One sheet → its rows as `- col: value` chunks. */
function sheetChunks(rows: string[][], strict: boolean, roles: Record<string, string>): { drafts: ChunkDraft[]; fails: number } {
  if (!rows.length) return { drafts: [], fails: 0 };
  const header = dedupe(rows[0]!.map((h, i) => (h && h.trim() ? h.trim() : `Column_${i + 1}`)));
  let fails = 0;
  const data: (string | undefined)[][] = [];
  for (const r of rows.slice(1)) {
    // CSV/TXT rows must have one field per column; spreadsheet rows are read across the header.
    if (strict && r.length !== header.length) {
      fails++;
      continue;
    }
    const row = header.map((_, i) => r[i]);
    if (row.every((v) => v === undefined || v.trim() === '')) continue;
    data.push(row);
  }
  const keep = header.map((h, i) => ({ h, i })).filter(({ h }) => !DROPPED.has(h));
  const typed = new Map(keep.map(({ i }) => [i, typeColumn(data.map((r) => r[i]))]));
  const drafts: ChunkDraft[] = [];
  data.forEach((_, ri) => {
    const lines: string[] = [];
    for (const { h, i } of keep) {
      const v = typed.get(i)![ri];
      if (v === undefined || v === '') continue;
      // table_column_roles: "metadata"-only columns are stored, not written into the text.
      const role = roles[h] ?? 'both';
      if (role === 'indexing' || role === 'vectorize' || role === 'both') lines.push(`- ${h}: ${v}`);
    }
    if (lines.length) drafts.push({ content: lines.join('\n') });
  });
  return { drafts, fails };
}

export function table(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const pc = ctx.parserConfig;
  const roles =
    pc.table_column_mode === 'manual' && pc.table_column_roles && typeof pc.table_column_roles === 'object'
      ? (pc.table_column_roles as Record<string, string>)
      : {};
  const strict = doc.format !== 'xlsx';
  const tables: Block[] = doc.blocks.filter((b) => b.kind === 'table' && b.rows?.length);
  let sheets = tables.map((t) => t.rows!);
  if (!sheets.length) {
    // A .txt table: TAB-separated lines, the first naming the columns.
    const lines = doc.blocks.filter((b) => !isRunning(b) && b.kind !== 'image').map((b) => b.text).join('\n').split('\n');
    if (lines.some((l) => l.trim())) sheets = [lines.filter((l) => l.trim()).map((l) => l.split('\t'))];
  }
  const drafts: ChunkDraft[] = [];
  let fails = 0;
  for (const rows of sheets) {
    const r = sheetChunks(rows, strict, roles);
    drafts.push(...r.drafts);
    fails += r.fails;
  }
  return finalize(drafts, doc, fails ? [`table: ${fails} row(s) with the wrong number of fields were skipped`] : []);
}

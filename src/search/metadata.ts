/**
 * `metadata_condition` of retrieval: filters documents by their `meta_fields`, as RAGFlow's
 * meta_filter does.
 *
 * `{ logic: 'and' | 'or' (default 'and'), conditions: [{ name, comparison_operator, value }] }`
 * Operators: `=` `≠` `>` `<` `≥` `≤` `contains` `not contains` `in` `not in` `start with`
 * `end with` `empty` `not empty`; aliases `is` (=), `not is` / `!=` (≠), `>=` (≥), `<=` (≤).
 * Comparison is case-insensitive; two `YYYY-MM-DD[ HH:MM[:SS]]` values compare as dates, two
 * numbers as numbers, anything else as lower-cased strings. A list-valued field matches
 * `contains`/`start with`/`end with`/comparisons when any element does, and `in` when every
 * element is in the list. A missing field is empty. `in`/`not in` take a list or a
 * comma-separated string. An operator RAGFlow does not know matches nothing (as in its
 * meta_filter), and so does a filter without conditions. When no document matches, retrieval
 * returns nothing (never "no filter"). The wire value is read in src/api/metadata.ts.
 */

export interface MetaCondition {
  name: string;
  /** `undefined`: an operator nobody knows, which matches no document. */
  op: Op | undefined;
  value: unknown;
}

export interface MetadataFilter {
  logic: 'and' | 'or';
  conditions: MetaCondition[];
}

export type Op = '=' | '≠' | '>' | '<' | '≥' | '≤' | 'contains' | 'not contains' | 'in' | 'not in' | 'start with' | 'end with' | 'empty' | 'not empty';

const ALIASES: Record<string, Op> = {
  '=': '=', '==': '=', is: '=',
  '≠': '≠', '!=': '≠', 'not is': '≠', 'is not': '≠',
  '>': '>', '<': '<', '≥': '≥', '>=': '≥', '≤': '≤', '<=': '≤',
  contains: 'contains', 'not contains': 'not contains', in: 'in', 'not in': 'not in',
  'start with': 'start with', 'starts with': 'start with', 'end with': 'end with', 'ends with': 'end with',
  empty: 'empty', 'not empty': 'not empty',
};

/** The canonical operator for a wire spelling (case and spaces as RAGFlow accepts them); undefined when unknown. */
export function operatorOf(raw: unknown): Op | undefined {
  return ALIASES[String(raw ?? '').trim().toLowerCase()];
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

function asDate(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = DATE.exec(v.trim());
  if (!m) return undefined;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

const lower = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? '').toLowerCase();

/** −1, 0, 1, or undefined when the two cannot be ordered. */
function compare(a: unknown, b: unknown): number | undefined {
  const da = asDate(a), db = asDate(b);
  if (da !== undefined && db !== undefined) return Math.sign(da - db);
  const na = asNumber(a), nb = asNumber(b);
  if (na !== undefined && nb !== undefined) return Math.sign(na - nb);
  if (typeof a === 'boolean' || typeof b === 'boolean') return lower(a) === lower(b) ? 0 : undefined;
  const sa = lower(a), sb = lower(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

function listOf(v: unknown): string[] {
  if (Array.isArray(v)) return v.map((x) => lower(x).trim());
  if (typeof v === 'string') return v.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
  return isEmpty(v) ? [] : [lower(v)];
}

function scalarMatch(field: unknown, op: Op, value: unknown): boolean {
  switch (op) {
    case 'contains': return lower(field).includes(lower(value));
    case 'not contains': return !lower(field).includes(lower(value));
    case 'start with': return lower(field).startsWith(lower(value));
    case 'end with': return lower(field).endsWith(lower(value));
    case 'in': return listOf(value).includes(lower(field));
    case 'not in': return !listOf(value).includes(lower(field));
    case '=': return compare(field, value) === 0;
    case '≠': return compare(field, value) !== 0;
    case '>': return compare(field, value) === 1;
    case '<': return compare(field, value) === -1;
    case '≥': { const c = compare(field, value); return c === 0 || c === 1; }
    case '≤': { const c = compare(field, value); return c === 0 || c === -1; }
    default: return false;
  }
}

/** Whether one document's meta_fields satisfy one condition. */
export function matches(meta: Record<string, unknown>, c: MetaCondition): boolean {
  if (c.op === undefined) return false;
  const field = Object.prototype.hasOwnProperty.call(meta, c.name) ? meta[c.name] : undefined;
  if (c.op === 'empty') return isEmpty(field);
  if (c.op === 'not empty') return !isEmpty(field);
  if (isEmpty(field)) return c.op === 'not contains' || c.op === 'not in' || c.op === '≠';
  if (Array.isArray(field)) {
    if (c.op === 'in') return field.every((x) => scalarMatch(x, 'in', c.value));
    if (c.op === 'not in') return !field.some((x) => scalarMatch(x, 'in', c.value));
    if (c.op === 'not contains') return !field.some((x) => scalarMatch(x, 'contains', c.value));
    if (c.op === '≠') return !field.some((x) => scalarMatch(x, '=', c.value));
    return field.some((x) => scalarMatch(x, c.op!, c.value));
  }
  return scalarMatch(field, c.op, c.value);
}

/** Ids of the documents (from `docs`: id + meta_fields JSON) that satisfy the filter. */
export function filterDocuments(docs: Iterable<{ id: string; meta_fields: string }>, f: MetadataFilter): Set<string> {
  const out = new Set<string>();
  if (!f.conditions.length) return out;
  for (const d of docs) {
    let meta: Record<string, unknown> = {};
    try {
      const v = JSON.parse(d.meta_fields) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) meta = v as Record<string, unknown>;
    } catch { /* unreadable metadata counts as none */ }
    const hit = f.logic === 'and' ? f.conditions.every((c) => matches(meta, c)) : f.conditions.some((c) => matches(meta, c));
    if (hit) out.add(d.id);
  }
  return out;
}

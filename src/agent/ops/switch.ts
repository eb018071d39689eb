/**
 * The Switch component's condition evaluation (RAGFlow `agent/component/switch.py`).
 */
import { normalizeRef, pyTruthy, pyTypeName, toText, type Resolve } from './variables.js';

/** The operators RAGFlow's Switch understands (its code has no aliases for them). */
export const SWITCH_OPERATORS = [
  'contains', 'not contains', 'start with', 'end with', 'empty', 'not empty', '=', '≠', '>', '<', '≥', '≤',
] as const;
export type SwitchOperator = (typeof SWITCH_OPERATORS)[number];

export interface SwitchItem {
  /** The reference whose value is tested (`begin@x`, `sys.query`, braces allowed). */
  cpn_id?: string;
  operator?: string;
  value?: unknown;
}

export interface SwitchCondition {
  /** 'and' needs every item; anything else is 'or' (RAGFlow tests `!= "and"`). @default 'and' */
  logical_operator?: string;
  items?: SwitchItem[];
  /** Component ids to run when the condition holds. */
  to?: string[] | string;
}

/** Python's `float(x)`: numbers, booleans and numeric strings (underscores, inf, nan); undefined when it would raise. */
export function pyFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (/^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(s)) return Number(s.replace(/_/g, ''));
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (special) return special[2]!.toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity;
  return undefined;
}

function floatError(v: unknown): Error {
  return typeof v === 'string'
    ? new Error(`could not convert string to float: '${v}'`)
    : new Error(`float() argument must be a string or a real number, not '${pyTypeName(v)}'`);
}

/** Python `==` for JSON-ish values: numbers and booleans compare by value, containers deeply. */
function pyEquals(a: unknown, b: unknown): boolean {
  const numeric = (x: unknown): boolean => typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint';
  if (numeric(a) && numeric(b)) return Number(a) === Number(b);
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (typeof a !== typeof b || a === null || b === null) return false;
  if (typeof a !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => pyEquals(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const bo = b as Record<string, unknown>;
  return ka.length === Object.keys(bo).length && ka.every((k) => k in bo && pyEquals((a as Record<string, unknown>)[k], bo[k]));
}

/** Ordering with RAGFlow's fallback: as floats when both convert, else Python's own `<` (strings only). */
function compare(op: string, a: unknown, b: unknown): boolean {
  const fa = pyFloat(a);
  const fb = pyFloat(b);
  let x: number | string;
  let y: number | string;
  if (fa !== undefined && fb !== undefined) {
    x = fa;
    y = fb;
  } else if (typeof a === 'string' && typeof b === 'string') {
    x = a;
    y = b;
  } else {
    throw new Error(`'${op === '≥' ? '>=' : op === '≤' ? '<=' : op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
  }
  switch (op) {
    case '>':
      return x > y;
    case '<':
      return x < y;
    case '≥':
      return x >= y;
    default:
      return x <= y;
  }
}

/** Lowercased text for the string operators; null → '' (RAGFlow would raise on `.lower()`). */
const lowerText = (v: unknown): string => toText(v).toLowerCase();

/**
 * One Switch item: `left` is the referenced value, `right` the item's `value` from the DSL.
 *
 * - contains / not contains / start with / end with: case-insensitive on text. A list `contains` a
 *   value when one of its elements equals it (case-insensitively as text). Non-strings are compared
 *   as their text; RAGFlow raises there (`.lower()` of a number / list / None).
 * - empty / not empty: Python truthiness ('', 0, [], {}, null are empty; '0' is not).
 * - = / ≠: exact (case-sensitive, as RAGFlow's `==`). When `left` is a number (or boolean) `right` is
 *   converted to float first and a non-numeric `right` raises Python's message, as RAGFlow does;
 *   a boolean also equals 'true' / 'false' (RAGFlow would raise).
 * - > < ≥ ≤: as floats when both sides convert, else strings compare lexicographically, else an error.
 */
export function evaluateCondition(operator: string, left: unknown, right: unknown): boolean {
  const op = operator as SwitchOperator;
  if (!(SWITCH_OPERATORS as readonly string[]).includes(op)) throw new Error(`Not supported operator: ${operator}`);
  let value = right === undefined || right === null ? '' : right;
  const ordering = op === '=' || op === '≠' || op === '>' || op === '<' || op === '≥' || op === '≤';
  if (ordering && typeof left === 'boolean' && typeof value === 'string' && /^\s*(true|false)\s*$/i.test(value)) {
    value = value.trim().toLowerCase() === 'true';
  } else if (ordering && (typeof left === 'number' || typeof left === 'boolean' || typeof left === 'bigint')) {
    const f = pyFloat(value);
    if (f === undefined) throw floatError(value);
    value = f;
  }
  switch (op) {
    case 'contains':
    case 'not contains': {
      const needle = lowerText(value);
      const has = Array.isArray(left) ? left.some((e) => lowerText(e) === needle) : lowerText(left).includes(needle);
      return op === 'contains' ? has : !has;
    }
    case 'start with':
      return lowerText(left).startsWith(lowerText(value));
    case 'end with':
      return lowerText(left).endsWith(lowerText(value));
    case 'empty':
      return !pyTruthy(left);
    case 'not empty':
      return pyTruthy(left);
    case '=':
      return pyEquals(left, value);
    case '≠':
      return !pyEquals(left, value);
    default:
      return compare(op, left, value);
  }
}

function ids(to: unknown): string[] {
  if (typeof to === 'string') return to ? [to] : [];
  return Array.isArray(to) ? to.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

/**
 * The ids Switch continues to (`_next`): the `to` of the first condition that holds, else
 * `end_cpn_ids`. Items without `cpn_id` are skipped; an 'or' condition holds at its first true
 * item; a condition whose items were all skipped holds (Python's `all([])`), as in RAGFlow.
 * `onInput` sees each value read (RAGFlow records them as the component's inputs).
 */
export function selectBranch(
  conditions: readonly SwitchCondition[],
  endCpnIds: readonly string[] | string,
  resolve: Resolve,
  onInput?: (ref: string, value: unknown) => void,
): string[] {
  for (const cond of conditions ?? []) {
    const and = (cond?.logical_operator ?? 'and') === 'and';
    const results: boolean[] = [];
    for (const item of cond?.items ?? []) {
      if (!item?.cpn_id) continue;
      const v = resolve(normalizeRef(item.cpn_id));
      onInput?.(item.cpn_id, v);
      const r = evaluateCondition(String(item.operator ?? ''), v, item.value ?? '');
      results.push(r);
      if (!and && r) return ids(cond.to);
    }
    if (results.every(Boolean)) return ids(cond.to);
  }
  return ids(endCpnIds);
}

/** `SwitchParam.check`, with RAGFlow's messages. */
export function checkSwitchParams(params: { conditions?: unknown; end_cpn_ids?: unknown }): void {
  if (!pyTruthy(params.conditions)) throw new Error('[Switch] conditions does not support empty value.');
  for (const c of (Array.isArray(params.conditions) ? params.conditions : []) as SwitchCondition[]) {
    if (!pyTruthy(c?.to)) throw new Error("[Switch] 'To' can not be empty!");
  }
  if (!pyTruthy(params.end_cpn_ids)) throw new Error('[Switch] the ELSE/Other destination can not be empty. does not support empty value.');
}

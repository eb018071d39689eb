import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { isPlainObject } from '../util/index.js';

/**
 * A small Pydantic look-alike: each check adds `Field: <loc> - Message: <msg> - Value: <v>`
 * lines, and `throwIfAny` raises them joined by "\n", as RAGFlow's request models do.
 */
export class Issues {
  readonly lines: string[] = [];
  constructor(private readonly code: number = RetCode.ARGUMENT_ERROR) {}

  add(loc: string, msg: string, value: unknown): void {
    let s = pyStr(value);
    if (s.length > 128) s = `${s.slice(0, 125)}...`;
    this.lines.push(`Field: <${loc}> - Message: <${msg}> - Value: <${s}>`);
  }

  get ok(): boolean {
    return this.lines.length === 0;
  }

  throwIfAny(): void {
    if (this.lines.length) throw new ApiError(this.code, this.lines.join('\n'));
  }
}

/** Literal choices as Pydantic words them: `'a', 'b' or 'c'`. */
export function literalMessage(choices: readonly string[]): string {
  const q = choices.map((c) => `'${c}'`);
  return q.length === 1 ? `Input should be ${q[0]}` : `Input should be ${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

export const isStrictInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
export const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** `Number(v)` that never runs a value's own conversions: an object or a symbol is NaN (null is 0, as for Number). */
export const toNumber = (v: unknown): number =>
  typeof v === 'number' ? v : typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint' ? Number(v) : v === null ? 0 : NaN;

/** A LIMIT / OFFSET SQLite can bind as an integer: within ±(2^53 − 1) (a page past that is past the end anyway); NaN (0 × ∞) is 0. */
export const sqlCount = (n: number): number => (Number.isNaN(n) ? 0 : Math.max(-Number.MAX_SAFE_INTEGER, Math.min(n, Number.MAX_SAFE_INTEGER)));

/** Checks an int field with bounds; returns false when it added an issue. */
export function checkInt(is: Issues, loc: string, v: unknown, min?: number, max?: number): boolean {
  if (!isStrictInt(v)) {
    is.add(loc, 'Input should be a valid integer', v);
    return false;
  }
  return checkBounds(is, loc, v, min, max);
}

export function checkFloat(is: Issues, loc: string, v: unknown, min?: number, max?: number): boolean {
  if (!isNumber(v)) {
    is.add(loc, 'Input should be a valid number', v);
    return false;
  }
  return checkBounds(is, loc, v, min, max);
}

function checkBounds(is: Issues, loc: string, v: number, min?: number, max?: number): boolean {
  if (min !== undefined && v < min) {
    is.add(loc, `Input should be greater than or equal to ${min}`, v);
    return false;
  }
  if (max !== undefined && v > max) {
    is.add(loc, `Input should be less than or equal to ${max}`, v);
    return false;
  }
  return true;
}

export function checkBool(is: Issues, loc: string, v: unknown): boolean {
  if (typeof v !== 'boolean') {
    is.add(loc, 'Input should be a valid boolean', v);
    return false;
  }
  return true;
}

export function checkStr(is: Issues, loc: string, v: unknown, opts: { min?: number; max?: number } = {}): v is string {
  if (typeof v !== 'string') {
    is.add(loc, 'Input should be a valid string', v);
    return false;
  }
  if (opts.min !== undefined && v.length < opts.min) {
    is.add(loc, `String should have at least ${opts.min} character${opts.min === 1 ? '' : 's'}`, v);
    return false;
  }
  if (opts.max !== undefined && [...v].length > opts.max) {
    is.add(loc, `String should have at most ${opts.max} character${opts.max === 1 ? '' : 's'}`, v);
    return false;
  }
  return true;
}

export function checkStrList(is: Issues, loc: string, v: unknown): v is string[] {
  if (!Array.isArray(v)) {
    is.add(loc, 'Input should be a valid list', v);
    return false;
  }
  let ok = true;
  v.forEach((x, i) => {
    if (typeof x !== 'string') {
      is.add(`${loc}.${i}`, 'Input should be a valid string', x);
      ok = false;
    }
  });
  return ok;
}

/** Unknown keys → `Extra inputs are not permitted`. */
export function checkExtra(is: Issues, obj: Record<string, unknown>, allowed: readonly string[], prefix = ''): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) is.add(prefix + k, 'Extra inputs are not permitted', obj[k]);
  }
}

export function checkObject(is: Issues, loc: string, v: unknown): v is Record<string, unknown> {
  if (!isPlainObject(v)) {
    is.add(loc, `Input should be a valid dictionary or instance of ${loc.split('.').pop() === 'parser_config' ? 'ParserConfig' : 'object'}`, v);
    return false;
  }
  return true;
}

/**
 * The first place in a request that JSON cannot carry — a BigInt, an object inside itself, or
 * nesting deeper than 1,000 levels — as a dotted path, or undefined. Over HTTP a request is JSON;
 * an in-process caller can pass anything, and such a value would fail deep inside an operation
 * (`JSON.stringify`, `structuredClone`) instead of up front. Buffers (uploads) and objects with
 * `toJSON` (Dates) are not entered. Iterative, so a deeply nested request cannot overflow the stack.
 */
export function notJson(v: unknown): { path: string; what: string } | undefined {
  const stack: Array<{ v: unknown; path: string; depth: number; exit?: true }> = [{ v, path: '', depth: 0 }];
  const open = new Set<object>();
  while (stack.length) {
    const top = stack.pop()!;
    const x = top.v;
    if (top.exit) {
      open.delete(x as object);
      continue;
    }
    if (typeof x === 'bigint') return { path: top.path, what: 'is a BigInt, which JSON cannot carry' };
    // Streams (an upload's bytes) are not entered either.
    if (!x || typeof x !== 'object' || ArrayBuffer.isView(x) || typeof (x as { toJSON?: unknown }).toJSON === 'function' || Symbol.asyncIterator in x) continue;
    if (open.has(x)) return { path: top.path, what: 'is the object that holds it (a cycle), which JSON cannot carry' };
    // Python's json gives up near 1,000 levels (RecursionError); so would JSON.stringify and structuredClone, a few thousand deep.
    if (top.depth >= MAX_NESTING) return { path: `${top.path.split('.').slice(0, 4).join('.')}…`, what: `is nested deeper than ${MAX_NESTING} levels` };
    open.add(x);
    stack.push({ v: x, path: top.path, depth: top.depth, exit: true });
    for (const k of Object.keys(x)) stack.push({ v: (x as Record<string, unknown>)[k], path: top.path ? `${top.path}.${k}` : k, depth: top.depth + 1 });
  }
  return undefined;
}

const MAX_NESTING = 1000;

/** Throws a single-line argument error. */
export function argError(loc: string, msg: string, value: unknown, code: number = RetCode.ARGUMENT_ERROR): never {
  const is = new Issues(code);
  is.add(loc, msg, value);
  is.throwIfAny();
  throw new Error('unreachable');
}

/** The most dimensions a vector may have (sqlite-vec's limit). */
export const MAX_VECTOR_DIM = 8192;

/**
 * A caller's own vector (ragloom's `vector` of an added chunk, `question_vector` of a retrieval):
 * 1–8192 finite numbers, not all zero, scaled to unit length as every stored vector is (cosine =
 * dot product). 101 otherwise, naming the field.
 */
export function vectorParam(v: unknown, name: string): Float32Array {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_VECTOR_DIM || !v.every(isNumber)) fail('VECTOR_LIST', name);
  // Scaled by the largest magnitude first, so that neither 1e200 nor 1e-200 overflows the sum.
  const m = Math.max(...(v as number[]).map(Math.abs));
  if (m === 0) fail('VECTOR_ZERO', name);
  let norm = 0;
  for (const x of v as number[]) norm += (x / m) ** 2;
  const len = Math.sqrt(norm);
  return Float32Array.from(v as number[], (x) => x / m / len);
}

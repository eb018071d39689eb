import { pyStrRepr } from '../util/index.js';

/** Python `str()` of a JSON-ish value, as Pydantic error lines print the offending input; never throws. */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  return pyRepr(v);
}

export function pyRepr(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) ? String(v) : pyFloat(v);
  if (typeof v === 'string') return pyStrRepr(v);
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'symbol' || typeof v === 'function') return `<${typeof v}>`;
  // Python's repr stops at its recursion limit; a deeply nested input must not overflow ours.
  if (depth >= MAX_DEPTH) return '...';
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(x, depth + 1)).join(', ')}]`;
  if (v instanceof Uint8Array) return `b'...'`;
  if (typeof v === 'object') {
    // Own enumerable keys only: no toString / valueOf of the value is called (null prototypes, hostile keys).
    return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x, depth + 1)}`).join(', ')}}`;
  }
  return String(v);
}

const MAX_DEPTH = 100;

function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  const s = String(n);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** Recursively merges `src` into a copy of `dst`; objects merge, everything else replaces. */
export function deepMerge<T extends Record<string, unknown>>(dst: T, src: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...dst };
  for (const [k, v] of Object.entries(src)) {
    const cur = out[k];
    out[k] = isPlainObject(cur) && isPlainObject(v) ? deepMerge(cur, v) : structuredClone(v);
  }
  return out as T;
}

/** What Python's repr() escapes besides quotes and backslashes: characters str.isprintable() refuses. */
const NON_PRINTABLE = /^(?:[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs})$/u;
const SHORT: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Python's repr() of a str: single quotes unless it holds one and no double quote; escapes as Python writes them. */
export function pyStrRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch in SHORT) out += SHORT[ch];
    else if (ch === q) out += `\\${q}`;
    else if (NON_PRINTABLE.test(ch)) {
      const c = ch.codePointAt(0)!;
      out += c < 0x100 ? `\\x${c.toString(16).padStart(2, '0')}` : c < 0x10000 ? `\\u${c.toString(16).padStart(4, '0')}` : `\\U${c.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return q + out + q;
}

/** Python's repr() of a list of str, as RAGFlow prints one in a message: ['a', "it's", 'a\\nb']. */
export function pyListRepr(items: string[]): string {
  return `[${items.map(pyStrRepr).join(', ')}]`;
}

/** A stored JSON list of strings (keywords, questions) as strings; [] for '[]' or anything malformed. */
export function jsonList(s: string): string[] {
  if (s === '[]' || !s) return [];
  try {
    const v = JSON.parse(s) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** Structural equality of two JSON values (key order ignored, as Python's dict ==). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** `s` parsed as JSON, or `dflt` when it is null, absent or not JSON. */
export function parseJson<T>(s: string | null | undefined, dflt: T): T {
  if (s === null || s === undefined) return dflt;
  try {
    return JSON.parse(s) as T;
  } catch {
    return dflt;
  }
}

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

/** Python `repr` of a str list, as RAGFlow puts it in messages: ['a', 'b']. */
export function pyListRepr(items: string[]): string {
  return `[${items.map((s) => `'${s}'`).join(', ')}]`;
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

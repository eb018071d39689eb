/**
 * Reading parser_config the way RAGFlow's chunk methods read it: numbers through `int()`,
 * delimiters unicode-unescaped, document keys over dataset keys.
 */

type Obj = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Obj =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

function mergeInto(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? mergeInto(b, v) : clone(v);
  }
  return out;
}

function clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clone);
  if (isPlainObject(v)) return mergeInto({}, v);
  return v;
}

/**
 * The parser_config a document is chunked with: the dataset's, deep-merged with the document's,
 * document keys winning at every depth (arrays are replaced, not concatenated). Neither input is
 * modified.
 *
 * @example effectiveParserConfig({ chunk_token_num: 512, raptor: { use_raptor: true } },
 *   { raptor: { max_token: 128 } }) // { chunk_token_num: 512, raptor: { use_raptor: true, max_token: 128 } }
 */
export function effectiveParserConfig(
  datasetConfig: Record<string, unknown> | null | undefined,
  documentConfig: Record<string, unknown> | null | undefined,
): Record<string, unknown> {
  return mergeInto(mergeInto({}, datasetConfig ?? {}), documentConfig ?? {});
}

/** Python's `int(x)` for config numbers: truncates toward zero; unusable values give `fallback`. */
export function intOf(v: unknown, fallback: number): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

/**
 * `overlapped_percent` as a whole percentage 0–90. A fraction below 1 (the UI's 0.2 style) is
 * read as a share and multiplied by 100; rounding first keeps 0.29 at 29 rather than float 28.99…
 */
export function overlapPercent(v: unknown): number {
  let p = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : 0;
  if (!Number.isFinite(p) || p <= 0) return 0;
  if (p < 1) p = Math.round(p * 10_000) / 100;
  return Math.max(0, Math.min(Math.trunc(p), 90));
}

/**
 * Python's `s.encode().decode('unicode_escape')` as RAGFlow applies it to delimiters, so the
 * literal two characters `\n` typed in a form mean a newline; `\t`, `\uXXXX`, `\xHH` likewise.
 */
export function unescapeDelimiter(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{1,3}|.)/gs, (all, e: string) => {
    switch (e[0]) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return '\x07';
      case 'b': return '\b';
      case '\\': return '\\';
      case "'": return "'";
      case '"': return '"';
      case '\n': return '';
      case 'u':
      case 'U':
      case 'x':
        if (e.length > 1) return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
        return all;
      default:
        if (/^[0-7]+$/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
        return all; // unknown escapes stay as written, as Python keeps them
    }
  });
}

export interface DelimiterSpec {
  /** Backtick-quoted custom delimiters, longest first. */
  custom: string[];
  /** Every delimiter to split on: custom strings plus each character outside backticks. */
  all: string[];
}

/** Parses a delimiter field: `` `##` `` quotes a multi-character delimiter, other characters count one by one. */
export function parseDelimiter(raw: string): DelimiterSpec {
  const s = unescapeDelimiter(raw);
  const custom: string[] = [];
  let rest = '';
  let last = 0;
  for (const m of s.matchAll(/`([^`]+)`/g)) {
    custom.push(m[1]!);
    rest += s.slice(last, m.index);
    last = m.index! + m[0].length;
  }
  rest += s.slice(last);
  const uniq = (xs: string[]) => [...new Set(xs)].sort((a, b) => b.length - a.length);
  const chars = [...rest].filter((c) => c !== '`');
  return { custom: uniq(custom), all: uniq([...custom, ...chars]) };
}

/** An alternation matching any of `parts` (longest first), or undefined when there are none. */
export function alternation(parts: string[]): RegExp | undefined {
  if (!parts.length) return undefined;
  return new RegExp(parts.map((p) => p.replace(/[\\^$*+?.()|[\]{}/]/g, '\\$&')).join('|'), 'gu');
}

/** parent_child settings, from the nested form or the flattened `children_delimiter`/`enable_children`. */
export function parentChild(pc: Obj): { enabled: boolean; delimiter: string } {
  const nested = isPlainObject(pc.parent_child) ? pc.parent_child : {};
  const enabled = nested.use_parent_child === true || pc.enable_children === true;
  const d = nested.children_delimiter ?? pc.children_delimiter;
  return { enabled, delimiter: typeof d === 'string' && d !== '' ? d : '\n' };
}

export function str(v: unknown, fallback: string): string {
  return typeof v === 'string' ? v : fallback;
}

/** The language a chunk method writes prefixes in: RAGFlow tests `lang.lower() == "english"`. */
export function isChineseText(text: string): boolean {
  if (!text) return false;
  let n = 0;
  let total = 0;
  for (const ch of text) {
    total++;
    if (ch >= '\u4e00' && ch <= '\u9fff') n++;
  }
  return n / total > 0.2;
}

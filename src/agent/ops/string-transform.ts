/**
 * The StringTransform component (RAGFlow `agent/component/string_transform.py`): `split` a string
 * on any of several delimiters, or `merge` references into a script template.
 */
import { findRefs, normalizeRef, pyJson, pyTypeName, pyTruthy, type Resolve } from './variables.js';

export interface StringTransformParams {
  /** @default 'split' */
  method?: string;
  /** merge: the template, `{ref}`s substituted. */
  script?: string;
  /** split: the reference to split. */
  split_ref?: string;
  /** split: any of these separates; merge: the first joins list values. @default [','] */
  delimiters?: string[];
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `StringTransformParam.check`, with its messages. */
export function checkStringTransformParams(p: StringTransformParams): void {
  const method = p.method ?? 'split';
  if (method !== 'split' && method !== 'merge') {
    throw new Error(`Support method ${method} is not supported, it should be in ['split', 'merge']`);
  }
  if (!pyTruthy(p.delimiters ?? [','])) throw new Error('delimiters does not support empty value.');
}

/**
 * Splits `text` on every occurrence of any delimiter (leftmost match; at one position the first
 * listed delimiter wins, as Python's `re.split` on an alternation). Empty delimiters are ignored
 * (Python would split between every character); with none left the text is one piece.
 */
export function splitText(text: string, delimiters: readonly string[]): string[] {
  const ds = delimiters.filter((d) => typeof d === 'string' && d !== '');
  if (!ds.length) return [text];
  return text.split(new RegExp(ds.map(escapeRe).join('|')));
}

/**
 * `split`: the value of `split_ref` (or `line`, the value given directly, when it is non-empty)
 * split on the delimiters. A missing / empty value splits as '' → ['']; a non-string raises
 * RAGFlow's "The input variable is not a string: <class 'list'>".
 */
export function split(p: StringTransformParams, resolve: Resolve, line?: unknown): string[] {
  let v: unknown = pyTruthy(line) ? line : p.split_ref ? resolve(normalizeRef(p.split_ref)) : '';
  if (!pyTruthy(v)) v = '';
  if (typeof v !== 'string') throw new Error(`The input variable is not a string: <class '${pyTypeName(v)}'>`);
  return splitText(v, p.delimiters ?? [',']);
}

/** `_stringify_message_value`: lists join with the delimiter, strings stay, others are JSON. */
function mergeText(v: unknown, delimiter: string | undefined): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v) && delimiter) return v.map((e) => (typeof e === 'string' ? e : pyJson(e))).join(delimiter);
  if (typeof v === 'string') return v;
  return pyJson(v);
}

/**
 * `merge`: each `{ref}` in the script replaced by its value as text, list values joined by the
 * first delimiter. `inputs` (the component's kwargs, keyed by reference) override the canvas values.
 * Jinja syntax in the script is not rendered (RAGFlow renders it when the script contains `{{`, `}}`
 * or `{% %}`); references are substituted in one pass.
 */
export function merge(p: StringTransformParams, resolve: Resolve, inputs: Record<string, unknown> = {}): string {
  const script = p.script ?? '';
  const delimiter = (p.delimiters ?? [','])[0];
  const values = new Map<string, string>();
  for (const ref of findRefs(script)) {
    values.set(ref, mergeText(Object.hasOwn(inputs, ref) ? inputs[ref] : resolve(ref), delimiter));
  }
  if (!values.size) return script;
  const re = new RegExp([...values.keys()].map((k) => `\\{${escapeRe(k)}\\}`).join('|'), 'g');
  return script.replace(re, (m) => values.get(m.slice(1, -1)) ?? m);
}

/** Runs the configured method: split → string[], merge → string (the component's `result` output). */
export function stringTransform(
  p: StringTransformParams,
  resolve: Resolve,
  kwargs: Record<string, unknown> = {},
): string[] | string {
  checkStringTransformParams(p);
  return (p.method ?? 'split') === 'split' ? split(p, resolve, kwargs.line) : merge(p, resolve, kwargs);
}

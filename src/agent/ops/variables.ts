/**
 * Variable references and the VariableAssigner / VariableAggregator operations.
 *
 * The reference helpers (`findRefs`, `renderTemplate`, `renderValueTemplate`, `toText`, `pyTruthy`)
 * live here because every other op uses them; they mirror RAGFlow's `ComponentBase.variable_ref_patt`,
 * `get_input_elements_from_text` / `string_format` and `Graph.get_value_with_variable`.
 */

/** Reads one reference (`Agent:Foo@content`, `sys.query`, `env.x`; no braces). May throw for an unknown component. */
export type Resolve = (ref: string) => unknown;

const REF_BODY = String.raw`[a-zA-Z:0-9]+@[A-Za-z0-9_.-]+|sys\.[A-Za-z0-9_.]+|env\.[A-Za-z0-9_.]+`;
/** RAGFlow's `variable_ref_patt`: a reference with optional extra braces and spaces around it. */
export const VARIABLE_REF_PATTERN = new RegExp(String.raw`\{* *\{(${REF_BODY})\} *\}*`, 'g');
/** The reference alone, `{ref}` — what `string_format` replaces. */
const INNER_REF = new RegExp(String.raw`\{(${REF_BODY})\}`, 'gi');

/** The distinct references in a text, in order of first appearance (`get_input_elements_from_text`, case-insensitive as there). */
export function findRefs(text: string): string[] {
  const out = new Set<string>();
  for (const m of String(text ?? '').matchAll(new RegExp(VARIABLE_REF_PATTERN.source, 'gi'))) out.add(m[1]!);
  return [...out];
}

/** RAGFlow's `exp.strip("{").strip("}").strip(" ").strip("{").strip("}")` before a lookup. */
export function normalizeRef(exp: string): string {
  return String(exp).replace(/^\{+|\}+$/g, '').replace(/^ +| +$/g, '').replace(/^\{+|\}+$/g, '');
}

/**
 * Substitutes each `{ref}` with its value as text, as RAGFlow's `get_input_elements_from_text` +
 * `string_format` do: only the braces of the reference itself are replaced (`{{sys.query}}` keeps one
 * pair), strings go in as they are, null/undefined as '', anything else as Python's `json.dumps`.
 * One pass, each reference resolved once, so a value that itself contains `{...}` is not expanded
 * again (RAGFlow's sequential `re.sub` would).
 */
export function renderTemplate(text: string, resolve: Resolve): string {
  const cache = new Map<string, string>();
  return String(text ?? '').replace(INNER_REF, (_m, ref: string) => {
    if (!cache.has(ref)) cache.set(ref, toText(resolve(ref)));
    return cache.get(ref)!;
  });
}

/** A reference, optionally wrapped in more braces (`{{sys.query}}`, `{{ {sys.query} }}`). */
const WRAPPED_REF = new RegExp(String.raw`\{+ *\{(${REF_BODY})\} *\}+|\{(${REF_BODY})\}`, 'g');

/**
 * `Graph.get_value_with_variable`: like `renderTemplate`, but a reference wrapped in more braces
 * (on both sides) is replaced with its wrapper (`{{sys.query}}` → the value). RAGFlow's pattern also
 * swallows the spaces around every reference (`'Q: {sys.query} x'` → `'Q:hix'`); here they stay.
 * VariableAssigner `set` and Invoke's URL / argument templates use this form.
 */
export function renderValueTemplate(text: string, resolve: Resolve): string {
  const cache = new Map<string, string>();
  return String(text ?? '').replace(WRAPPED_REF, (_m, wrapped: string | undefined, bare: string | undefined) => {
    const ref = (wrapped ?? bare)!;
    if (!cache.has(ref)) cache.set(ref, toText(resolve(ref)));
    return cache.get(ref)!;
  });
}

/** A value as RAGFlow puts it into text: strings as they are, null/undefined → '', else `json.dumps(v, ensure_ascii=False)`. */
export function toText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  return pyJson(v);
}

/**
 * Python's `json.dumps` layout (`", "` and `": "` separators; NaN/Infinity spelled as Python does),
 * so text built from values reads exactly as RAGFlow's does. `ensureAscii` escapes non-ASCII as
 * `\uXXXX` (the `json.dumps` default, which `requests` uses for JSON bodies).
 */
export function pyJson(v: unknown, ensureAscii = false): string {
  const str = (s: string): string => {
    const j = JSON.stringify(s);
    return ensureAscii ? j.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : j;
  };
  const walk = (x: unknown, seen: Set<object>): string => {
    if (x === null || x === undefined) return 'null';
    switch (typeof x) {
      case 'string':
        return str(x);
      case 'boolean':
        return x ? 'true' : 'false';
      case 'bigint':
        return x.toString();
      case 'number':
        if (Number.isNaN(x)) return 'NaN';
        if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
        return JSON.stringify(x);
      case 'function':
      case 'symbol':
        return 'null';
    }
    const o = x as object;
    if (seen.has(o)) throw new TypeError('Circular reference detected');
    if (o instanceof Uint8Array) return str(Buffer.from(o).toString('base64'));
    if (typeof (o as { toJSON?: unknown }).toJSON === 'function') return walk((o as { toJSON(): unknown }).toJSON(), seen);
    seen.add(o);
    try {
      if (Array.isArray(o)) return `[${o.map((e) => walk(e, seen)).join(', ')}]`;
      const entries = o instanceof Map ? [...o.entries()] : Object.entries(o);
      return `{${entries.map(([k, e]) => `${str(String(k))}: ${walk(e, seen)}`).join(', ')}}`;
    } finally {
      seen.delete(o);
    }
  };
  return walk(v, new Set());
}

/** Python truthiness (`if val:`): None, False, 0, '', [], {} are false; NaN is true as in Python. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false) return false;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map || v instanceof Set) return v.size > 0;
  if (v instanceof Uint8Array) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** Python's `type(v).__name__` for JSON-ish values (numbers: int when integral). */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Uint8Array) return 'bytes';
  return 'dict';
}

/** `str(v)` for parameter values in RAGFlow's check messages (None, True, 3). */
export function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  return pyJson(v);
}

// ---------------------------------------------------------------------------------------------
// VariableAssigner

export const ASSIGN_OPERATORS = [
  'overwrite', 'clear', 'set', 'append', 'extend', 'remove_first', 'remove_last', '+=', '-=', '*=', '/=',
] as const;
export type AssignOperator = (typeof ASSIGN_OPERATORS)[number];

/** Operators that take no parameter (RAGFlow demands one anyway; see `runAssignments`). */
const NO_PARAMETER = new Set(['clear', 'remove_first', 'remove_last']);

/** The error values VariableAssigner writes into the variable (RAGFlow returns them, it does not raise). */
export const ASSIGN_ERRORS = {
  notList: 'ERROR:VARIABLE_NOT_LIST',
  parameterNotList: 'ERROR:PARAMETER_NOT_LIST',
  elementType: 'ERROR:PARAMETER_NOT_LIST_ELEMENT_TYPE',
  notNumber: 'ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER',
  divideByZero: 'ERROR:DIVIDE_BY_ZERO',
} as const;

/** The element kind `isinstance(p, type(list[0]))` compares; JS numbers make int and float one kind. */
function kind(v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'bigint') return 'number';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'dict';
  return typeof v;
}

/** `is_number`: numbers but not booleans. */
const isNumber = (v: unknown): v is number => typeof v === 'number';

function refParam(op: string, parameter: unknown): string {
  if (typeof parameter !== 'string') throw new Error(`VariableAssigner '${op}' needs a variable reference as its parameter, got ${pyTypeName(parameter)}`);
  return normalizeRef(parameter);
}

/**
 * The new value of a variable after one VariableAssigner operation (`VariableAssigner._operate`).
 * `parameter` is what the DSL holds: a reference for overwrite / append / extend, a template for `set`
 * on a string (or unset) variable, a literal otherwise. Type mismatches give RAGFlow's `ERROR:...`
 * strings as the new value, as RAGFlow does; the input is never mutated.
 */
export function assign(op: string, current: unknown, parameter: unknown, resolve: Resolve): unknown {
  switch (op) {
    case 'overwrite':
      return resolve(refParam(op, parameter));
    case 'clear':
      if (Array.isArray(current)) return [];
      if (typeof current === 'string') return '';
      if (typeof current === 'boolean') return false;
      if (typeof current === 'number' || typeof current === 'bigint') return 0;
      if (current !== null && typeof current === 'object') return {};
      return null;
    case 'set':
      // A string (or unset) variable takes the parameter as a template; other types take it as it is.
      if ((current === null || current === undefined || typeof current === 'string') && typeof parameter === 'string') {
        return renderValueTemplate(parameter, resolve);
      }
      return parameter;
    case 'append': {
      const p = resolve(refParam(op, parameter));
      const list = current ?? [];
      if (!Array.isArray(list)) return ASSIGN_ERRORS.notList;
      if (list.length && kind(p) !== kind(list[0])) return ASSIGN_ERRORS.elementType;
      return [...list, p];
    }
    case 'extend': {
      const p = resolve(refParam(op, parameter));
      const list = current ?? [];
      if (!Array.isArray(list)) return ASSIGN_ERRORS.notList;
      if (!Array.isArray(p)) return ASSIGN_ERRORS.parameterNotList;
      if (list.length && p.length && kind(p[0]) !== kind(list[0])) return ASSIGN_ERRORS.elementType;
      return [...list, ...p];
    }
    case 'remove_first':
      if (!Array.isArray(current)) return ASSIGN_ERRORS.notList;
      return current.slice(1);
    case 'remove_last':
      if (!Array.isArray(current)) return ASSIGN_ERRORS.notList;
      return current.slice(0, -1);
    case '+=':
    case '-=':
    case '*=':
    case '/=': {
      if (!isNumber(current) || !isNumber(parameter)) return ASSIGN_ERRORS.notNumber;
      if (op === '+=') return current + parameter;
      if (op === '-=') return current - parameter;
      if (op === '*=') return current * parameter;
      return parameter === 0 ? ASSIGN_ERRORS.divideByZero : current / parameter;
    }
    default:
      // RAGFlow silently sets the variable to None here; an error names the typo instead.
      throw new Error(`VariableAssigner: unsupported operator '${op}' (supported: ${ASSIGN_OPERATORS.join(', ')})`);
  }
}

export interface AssignItem {
  variable?: string;
  operator?: string;
  parameter?: unknown;
}

/**
 * Runs a VariableAssigner's `variables` list in order, each reading the value the previous ones
 * wrote. A non-list is ignored as in RAGFlow. An item without variable / operator / parameter is
 * "Variable is not complete." — except that clear / remove_first / remove_last need no parameter
 * and 0 / false are parameters (RAGFlow's `not parameter` refuses those).
 */
export function runAssignments(variables: unknown, resolve: Resolve, write: (ref: string, value: unknown) => void): void {
  if (!Array.isArray(variables)) return;
  for (const raw of variables as AssignItem[]) {
    const item = raw ?? {};
    const missingParam = item.parameter === undefined || item.parameter === null || item.parameter === '';
    if (!item.variable || !item.operator || (missingParam && !NO_PARAMETER.has(item.operator))) {
      throw new Error('Variable is not complete.');
    }
    const ref = normalizeRef(item.variable);
    write(ref, assign(item.operator, resolve(ref), item.parameter, resolve));
  }
}

// ---------------------------------------------------------------------------------------------
// VariableAggregator

export interface AggregatorGroup {
  group_name?: string;
  /** Selectors as the DSL holds them (`{value: ref}`); bare strings are accepted too. */
  variables?: Array<{ value?: string } | string>;
}

/** `VariableAggregatorParam.check`, with its messages. */
export function checkAggregatorGroups(groups: unknown): void {
  if (!Array.isArray(groups) || groups.length === 0) throw new Error('[VariableAggregator] groups does not support empty value.');
  for (const g of groups as AggregatorGroup[]) {
    if (!g?.group_name) throw new Error('[VariableAggregator] group_name can not be empty!');
    const vars = g.variables as unknown;
    if (!pyTruthy(vars)) throw new Error(`[VariableAggregator] variables of group \`${g.group_name}\` can not be empty`);
    if (!Array.isArray(vars)) throw new Error(`[VariableAggregator] variables of group \`${g.group_name}\` should be a list of strings`);
  }
}

/**
 * Each group's output is the value of its first selector whose value is truthy in Python's sense
 * (so '' , 0, [], {} and null are skipped); a group with none gets no output key, as in RAGFlow.
 */
export function aggregate(groups: readonly AggregatorGroup[], resolve: Resolve): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const g of groups ?? []) {
    const name = g?.group_name;
    if (!name) continue;
    for (const sel of g.variables ?? []) {
      const ref = typeof sel === 'string' ? sel : sel?.value;
      if (!ref) continue;
      const v = resolve(normalizeRef(ref));
      if (pyTruthy(v)) {
        out[name] = v;
        break;
      }
    }
  }
  return out;
}

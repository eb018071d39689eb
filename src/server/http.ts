/** Small HTTP helpers: a Python-like exception repr, `Content-Disposition`, and what an `Accept` header asks for. */
import { pyStrRepr } from '../util/index.js';

/** `Name('message')`, as RAGFlow's `server_error_response` prints `repr(e)`; never a stack trace. */
export function pyExceptionRepr(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  return `${err.name || 'Error'}(${pyStrRepr(err.message)})`;
}

// RFC 7230 token characters: a filename made only of these needs no quotes (as Werkzeug writes it).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `attachment; filename=…` for a download. A non-ASCII name gets an ASCII fallback plus the
 * RFC 5987 `filename*=UTF-8''…` form (what Quart's `send_file` sends).
 */
export function contentDisposition(name: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x20-\x7e]*$/.test(name)) {
    return `attachment; filename=${TOKEN.test(name) ? name : `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`}`;
  }
  const ascii = name.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Does a request without `stream` want one JSON answer? Yes when its `Accept` names a JSON type and
 * not `text/event-stream` (what OpenAI's clients send for a plain call: `Accept: application/json`,
 * no `stream`); no when it asks for events, accepts any type (curl's default) or says nothing, where
 * RAGFlow's default, a stream, stays.
 */
export function acceptsOnlyJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').flatMap((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const q = params.find((p) => /^q=/.test(p));
    return type && (!q || Number(q.slice(2)) > 0) ? [type] : [];
  });
  return types.some((t) => t === 'application/json' || /^application\/[\w.+-]*\+json$/.test(t)) && !types.includes('text/event-stream');
}

/**
 * Fields RAGFlow writes as Python floats whose values here are whole numbers: JSON.stringify
 * writes `2`, which Python's json reads as an int (the naive parser_config's graphrag defaults are
 * `2.0` and `60.0` in RAGFlow). Their whole values get `.0` on the wire.
 */
const FLOAT_FIELDS = ['retry_backoff_seconds', 'retry_backoff_max_seconds'];
const FLOAT_FIELD = new RegExp(`([{,]"(?:${FLOAT_FIELDS.join('|')})":-?\\d+)(?=[,}])`, 'g');

/**
 * JSON as RAGFlow writes it: JSON.stringify, with FLOAT_FIELDS' whole values as floats. Only a
 * key right after `{` or `,` is a field (inside a string its quote would be escaped), and the
 * pass is skipped unless the text names one (a retrieval's 70 KB cost an `includes`).
 */
export function toWireJson(payload: unknown): string {
  const s = JSON.stringify(payload);
  if (s === undefined || !FLOAT_FIELDS.some((f) => s.includes(`"${f}":`))) return s;
  return s.replace(FLOAT_FIELD, '$1.0');
}

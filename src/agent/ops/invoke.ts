/**
 * Invoke (RAGFlow `agent/component/invoke.py`): one HTTP request to a configured URL, its
 * variables sent as the query (GET) or as a JSON / form body (POST, PUT), the response text (or,
 * with `clean_html`, its text content) as the `result` output.
 *
 * Hosts are refused unless the caller's allow-list names them: entries are origins
 * (`https://api.example.com`, `http://127.0.0.1:8080`), host names (`api.example.com`, any port and
 * scheme), `host:port`, `*.example.com` (subdomains) or `*` (any host). An empty list allows nothing.
 * Redirects are followed by hand so that every hop is checked against the same list.
 */
import { load } from 'cheerio';
import { pyJson, pyStr, renderValueTemplate, type Resolve } from './variables.js';

export interface InvokeVariable {
  key: string;
  /** A reference whose value is sent (wins when it resolves to a value). */
  ref?: string;
  /** A literal, or a template with `{ref}`s, used when `ref` gives nothing. */
  value?: unknown;
}

export interface InvokeParams {
  url: string;
  /** get | post | put. @default 'get' */
  method?: string;
  /** A JSON object (as text, as the DSL holds it, or already parsed); values may hold `{name}` placeholders. */
  headers?: string | Record<string, unknown> | null;
  variables?: InvokeVariable[];
  /** Seconds for the whole request, body included. @default 60 */
  timeout?: number;
  /** Ignored: ragloom sends requests directly. */
  proxy?: string | null;
  /** Return the response's text content instead of its HTML. @default false */
  clean_html?: boolean;
  /** json | formdata: how POST / PUT send the variables (formdata is urlencoded, as `requests`' `data=`). @default 'json' */
  datatype?: string;
  /** Extra attempts after a failed request. @default 0 */
  max_retries?: number;
  /** Seconds between attempts. @default 2 */
  delay_after_error?: number;
}

export interface InvokeOptions {
  /** Allowed origins / host patterns (see the module comment). Empty: nothing is allowed; ['*']: anything. */
  allow: readonly string[];
  signal?: AbortSignal;
  /** Reads references in the URL, variables and headers. Unset: every reference is empty. */
  resolve?: Resolve;
  /** The component's kwargs: values by reference / placeholder name, taking precedence over `resolve`. */
  inputs?: Record<string, unknown>;
}

const METHODS = ['get', 'post', 'put'];
const DATATYPES = ['json', 'formdata'];
const MAX_REDIRECTS = 30; // requests' default

/** `InvokeParam.check`, with RAGFlow's messages. */
export function checkInvokeParams(p: Partial<InvokeParams>): void {
  const method = typeof p.method === 'string' ? p.method.toLowerCase() : p.method ?? 'get';
  if (!METHODS.includes(method as string)) {
    throw new Error(`Type of content from the crawler ${pyStr(p.method)} is not supported, it should be in ['get', 'post', 'put']`);
  }
  if (!p.url) throw new Error('End point URL does not support empty value.');
  const t = p.timeout ?? 60;
  if (typeof t !== 'number' || !Number.isInteger(t) || t <= 0) {
    throw new Error(`Timeout time in second ${pyStr(t)} not supported, should be positive integer`);
  }
  const ch = p.clean_html ?? false;
  if (typeof ch !== 'boolean') throw new Error(`Clean HTML ${pyStr(ch)} not supported, should be bool type`);
  const dt = typeof p.datatype === 'string' ? p.datatype.toLowerCase() : p.datatype ?? 'json';
  if (!DATATYPES.includes(dt as string)) {
    throw new Error(`Data post type ${pyStr(p.datatype)} is not supported, it should be in ['json', 'formdata']`);
  }
}

// ---------------------------------------------------------------------------------------------
// The allow-list

function defaultPort(u: URL): string {
  return u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
}

function allowedBy(entry: string, u: URL): boolean {
  const e = entry.trim().toLowerCase();
  if (!e) return false;
  if (e === '*') return true;
  if (e.includes('://')) {
    try {
      return new URL(e).origin === u.origin;
    } catch {
      return false;
    }
  }
  const host = u.hostname.toLowerCase();
  // host, host:port, [v6]:port, *.domain
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(e);
  if (!m) return false;
  const [, h, port] = m as unknown as [string, string, string | undefined];
  if (port !== undefined && port !== defaultPort(u)) return false;
  if (h.startsWith('*.')) return host.endsWith(h.slice(1)) && host.length > h.length - 1;
  return host === h;
}

/** Why Invoke may not call this URL, or undefined. */
export function invokeRefusal(url: string, allow: readonly string[]): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `Invoke URL is not valid: ${url}`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `Invoke supports http and https URLs only: ${url}`;
  if (allow.some((e) => allowedBy(e, u))) return undefined;
  const how = `add '${u.origin}' (or the host name '${u.hostname}') to the Invoke allow-list, or '*' to allow any host`;
  if (!allow.length) return `Invoke is not enabled: the Invoke allow-list is empty, so host '${u.host}' may not be called; ${how}.`;
  return `Invoke may not call host '${u.host}': it is not in the Invoke allow-list; ${how}.`;
}

// ---------------------------------------------------------------------------------------------
// Building the request

/** `_coerce_json_arg_if_possible`: JSON text is parsed; NaN / Infinity anywhere are refused. */
function coerceJson(key: string, value: unknown): unknown {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return value;
    }
  }
  const ok = (x: unknown): boolean => {
    if (typeof x === 'number') return Number.isFinite(x);
    if (typeof x === 'bigint' || typeof x === 'function' || typeof x === 'symbol') return false;
    if (Array.isArray(x)) return x.every(ok);
    if (x && typeof x === 'object') return Object.values(x).every(ok);
    return true;
  };
  if (!ok(v)) throw new Error(`Invoke JSON argument '${key}' is not JSON-serializable.`);
  return v;
}

/** A value in a query string / form: null is left out, lists repeat the key (as `requests`), objects are JSON. */
function appendParam(sp: URLSearchParams, key: string, v: unknown): void {
  if (v === null || v === undefined) return;
  if (Array.isArray(v)) {
    for (const e of v) if (e !== null && e !== undefined) sp.append(key, typeof e === 'string' ? e : pyJson(e));
    return;
  }
  sp.append(key, typeof v === 'string' ? v : pyJson(v));
}

interface Built {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

function build(p: InvokeParams, o: InvokeOptions): Built {
  const inputs = o.inputs ?? {};
  const get = (name: string): unknown => (Object.hasOwn(inputs, name) ? inputs[name] : o.resolve ? o.resolve(name) : undefined);
  const resolveText: Resolve = (ref) => get(ref);
  const json = (p.datatype ?? 'json').toLowerCase() === 'json';
  const method = (p.method ?? 'get').toLowerCase();

  const args: [string, unknown][] = [];
  for (const para of p.variables ?? []) {
    const ref = (para.ref ?? '').trim();
    let value: unknown;
    const refValue = ref ? get(ref) : undefined;
    if (ref && refValue !== null && refValue !== undefined) value = refValue;
    else if (para.value !== null && para.value !== undefined) {
      value = typeof para.value === 'string' ? renderValueTemplate(para.value, resolveText) : para.value;
    } else value = '';
    if (json) {
      const coerced = coerceJson(para.key, value);
      // A query string keeps scalars as typed ('1.0', 'true'); parsed lists / objects still expand.
      value = method === 'get' && typeof value === 'string' && (coerced === null || typeof coerced !== 'object') ? value : coerced;
    }
    args.push([para.key, value]);
  }

  let url = renderValueTemplate(String(p.url ?? '').trim(), resolveText);
  if (!url.startsWith('http://') && !url.startsWith('https://')) url = `http://${url}`;

  const headers: Record<string, string> = {};
  let raw: unknown = p.headers;
  if (typeof raw === 'string') {
    if (raw.trim() === '') raw = {};
    else {
      try {
        raw = JSON.parse(raw);
      } catch (e) {
        throw new Error(`Invoke headers are not valid JSON: ${(e as Error).message}`);
      }
    }
  }
  if (raw !== null && raw !== undefined) {
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error('Invoke headers must be a JSON object.');
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      // Headers take plain `{name}` placeholders (no ':'), so `{Agent:X@y}` stays literal, as in RAGFlow.
      headers[k] = typeof v === 'string'
        ? v.replace(/\{([a-zA-Z_][a-zA-Z0-9_.@-]*)\}/g, (_m, name: string) => {
          const x = get(name);
          return x === null || x === undefined ? '' : typeof x === 'string' ? x : pyJson(x);
        })
        : pyStr(v);
    }
  }
  const hasHeader = (name: string): boolean => Object.keys(headers).some((k) => k.toLowerCase() === name);

  if (method === 'get') {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new Error(`Invoke URL is not valid: ${url}`);
    }
    for (const [k, v] of args) appendParam(u.searchParams, k, v);
    return { url: u.toString(), method: 'GET', headers };
  }
  let body: string;
  if (json) {
    body = pyJson(Object.fromEntries(args), true);
    if (!hasHeader('content-type')) headers['Content-Type'] = 'application/json';
  } else {
    const sp = new URLSearchParams();
    for (const [k, v] of args) appendParam(sp, k, v);
    body = sp.toString();
    if (!hasHeader('content-type')) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  return { url, method: method.toUpperCase(), headers, body };
}

// ---------------------------------------------------------------------------------------------
// Sending

function charsetOf(contentType: string | null, bytes: Uint8Array): string {
  const m = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  if (m) return m[1]!;
  if (/html/i.test(contentType ?? '')) {
    const head = Buffer.from(bytes.subarray(0, 2048)).toString('latin1');
    const meta = /<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)/i.exec(head);
    if (meta) return meta[1]!;
  }
  return 'utf-8';
}

function decode(bytes: Uint8Array, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The parts of a domhandler node the text walker reads. */
interface DomNode {
  type: string;
  name?: string;
  data?: string;
  children?: DomNode[];
}

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'svg', 'iframe', 'object', 'canvas', 'select', 'button', 'textarea']);
const BLOCK = new Set([
  'p', 'div', 'section', 'article', 'main', 'blockquote', 'address', 'figure', 'figcaption', 'dl', 'dt', 'dd', 'form',
  'fieldset', 'center', 'body', 'html', 'details', 'summary', 'header', 'footer', 'nav', 'aside', 'hr', 'ul', 'ol',
  'li', 'menu', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'caption',
]);

/**
 * The text of an HTML page, one line per block (`clean_html`; RAGFlow runs its HtmlParser and joins
 * the sections with newlines). Scripts, styles and the head are dropped, whitespace collapsed,
 * table cells separated by ' | '.
 */
export function htmlToText(html: string): string {
  const $ = load(html);
  const parts: string[] = [];
  const walk = (n: DomNode): void => {
    if (n.type === 'text') {
      parts.push((n.data ?? '').replace(/\s+/g, ' '));
      return;
    }
    if (n.type !== 'tag' && n.type !== 'root') return;
    const name = (n.name ?? '').toLowerCase();
    if (SKIP.has(name)) return;
    if (name === 'br') {
      parts.push('\n');
      return;
    }
    const block = BLOCK.has(name);
    if (block) parts.push('\n');
    for (const c of n.children ?? []) walk(c);
    if (block) parts.push('\n');
    else if (name === 'td' || name === 'th') parts.push('\u0000'); // cell end: becomes ' | ' between cells
  };
  walk($.root()[0] as unknown as DomNode);
  return parts
    .join('')
    .split('\n')
    .map((l) => l.replace(/[ \t\f\v\r\u00a0]+/g, ' ').replace(/\s*\u0000\s*$/, '').replace(/\s*\u0000\s*/g, ' | ').trim())
    .filter((l) => l !== '')
    .join('\n');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function sendOnce(req: Built, p: InvokeParams, o: InvokeOptions, timeoutS: number): Promise<string> {
  const timer = AbortSignal.timeout(timeoutS * 1000);
  const signal = o.signal ? AbortSignal.any([o.signal, timer]) : timer;
  let { url, method, body } = req;
  let headers = { ...req.headers };
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, { method, headers, body, redirect: 'manual', signal });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new Error(`Exceeded ${MAX_REDIRECTS} redirects.`);
        const next = new URL(location, url);
        const refusal = invokeRefusal(next.toString(), o.allow);
        if (refusal) throw new Error(`redirect to ${next.toString()} refused: ${refusal}`);
        // As requests: 303 (and 301/302 of a POST/PUT) become a GET without a body; credentials stay on the same host.
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method !== 'GET' && method !== 'HEAD')) {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-(type|length)$/i.test(k)));
        }
        if (new URL(url).hostname !== next.hostname) {
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
        }
        url = next.toString();
        continue;
      }
      // Like requests, an error status is not a failure: its body is the result.
      const bytes = new Uint8Array(await res.arrayBuffer());
      const text = decode(bytes, charsetOf(res.headers.get('content-type'), bytes));
      return p.clean_html ? htmlToText(text) : text;
    }
  } catch (e) {
    if (o.signal?.aborted) throw o.signal.reason ?? e;
    if (timer.aborted) throw new Error(`timed out after ${timeoutS}s (${method} ${url})`);
    const cause = (e as { cause?: { message?: string; code?: string } }).cause;
    const detail = cause?.message ?? cause?.code;
    throw new Error(detail ? `${(e as Error).message}: ${detail}` : (e as Error).message);
  }
}

/**
 * Sends the request Invoke describes and returns `{ result }`: the response body as text (decoded
 * by its charset, UTF-8 otherwise), whatever the status, or its text content with `clean_html`.
 * A refused host or bad parameters throw at once; a failed request (network error, timeout) is
 * retried `max_retries` times `delay_after_error` seconds apart, then throws "Http request error: …".
 * Aborting `signal` stops at once with its reason.
 */
export async function invokeHttp(p: InvokeParams, o: InvokeOptions): Promise<{ result: string }> {
  checkInvokeParams(p);
  const req = build(p, o);
  const refusal = invokeRefusal(req.url, o.allow);
  if (refusal) throw new Error(refusal);
  const attempts = Math.max(0, Math.floor(p.max_retries ?? 0)) + 1;
  const delay = (p.delay_after_error ?? 2) * 1000;
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await sleep(delay, o.signal);
    try {
      return { result: await sendOnce(req, p, o, p.timeout ?? 60) };
    } catch (e) {
      if (o.signal?.aborted) throw e;
      last = e;
    }
  }
  throw new Error(`Http request error: ${(last as Error).message}`);
}

/**
 * The remote transport: each operation as one HTTP request to a RAGFlow-compatible server
 * (`ragloom serve`, or a RAGFlow deployment), built from the op's row of `api/routes.ts` — the
 * same table the server registers — and decoded with the same envelope rules, so the remote
 * Client answers (and fails) as the embedded one does.
 *
 * | what | how |
 * |---|---|
 * | request | `ROUTES` row → method, path params, query string, JSON or multipart body (`splitRequest`); `Authorization: Bearer <apiKey>` |
 * | uploads | `multipart/form-data`, one part `file` per document, the display name as its file name |
 * | answers | the envelope `{code, message, data}` → the op's result (`decodeEnvelope`); `code != 0` → `ApiError(code, message)` |
 * | downloads | `documents.download` → the response bytes as a `Uint8Array` |
 * | streams | `text/event-stream` → an AsyncIterable of the objects the local op yields; `break` or `params.signal` aborts the request |
 *
 * Failures that never reach the operation layer (see {@link HttpTransport.call}):
 * - the server cannot be reached, or the connection drops → `ApiError(105 CONNECTION_ERROR)` naming the URL;
 * - an HTTP error status whose body is not an envelope (a proxy's 502 page) → `ApiError(<HTTP status>)`;
 * - a success status whose body is not an envelope (a wrong `baseUrl`) → `ApiError(100)`;
 * - `params.signal` aborts → `ApiError(100, 'The request was aborted: …')`;
 * - after `close()` → `ApiError(103, 'The client is closed.')`, as the local Client says.
 */
import type { OpName } from '../api/index.js';
import { ApiError, RetCode } from '../api/errors.js';
import { ROUTES, API_PREFIX, splitRequest, decodeEnvelope, pathParams, type RouteSpec, type SplitRequest } from '../api/routes.js';
import type { Transport } from './transport.js';

export interface HttpTransportOptions {
  /** The server, `http(s)://host:port` (a trailing `/api/v1` is accepted too). */
  baseUrl: string;
  /** An API key of the server (`ragflow-…`), sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Aborts a request after this many ms (a stream only until its response begins). @default none */
  timeoutMs?: number;
}

type Params = Record<string, unknown>;

/** Why a request was aborted by the transport itself (not by the caller's signal). */
const CLOSED = Symbol('ragloom.closed');
const DONE = Symbol('ragloom.done');
const TIMEOUT = Symbol('ragloom.timeout');

const present = (v: unknown) => v !== undefined && v !== null && v !== '';

/** Ops with several routes (`chats.completion`): the first whose path params are all given. */
const ROUTES_BY_OP = ROUTES.reduce((m, r) => m.set(r.op, [...(m.get(r.op) ?? []), r]), new Map<OpName, RouteSpec[]>());

function routeFor(op: OpName, params: Params): RouteSpec {
  const rows = ROUTES_BY_OP.get(op);
  if (!rows) {
    // e.g. `memories.usage` (Memory#usage): a ragloom addition with no REST route.
    throw new ApiError(RetCode.OPERATING_ERROR, `"${op}" is available on the embedded engine only: the REST interface has no route for it.`);
  }
  return rows.find((r) => pathParams(r.path).every((k) => present(params[k]))) ?? rows[0]!;
}

/** `http://host:port` from what the user gave (trailing `/` and `/api/v1` removed). */
export function normaliseBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || !baseUrl) throw new TypeError('"baseUrl" must be the server\'s URL, e.g. "http://127.0.0.1:9380"');
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new TypeError(`"baseUrl" is not a URL: ${JSON.stringify(baseUrl)} (expected e.g. "http://127.0.0.1:9380")`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`"baseUrl" must be an http:// or https:// URL, got ${JSON.stringify(baseUrl)}`);
  if (u.search || u.hash) throw new TypeError(`"baseUrl" must not carry a query or a fragment: ${JSON.stringify(baseUrl)}`);
  const path = u.pathname.replace(/\/+$/, '').replace(new RegExp(`${API_PREFIX}$`), '');
  return `${u.origin}${path}`;
}

/**
 * Speaks RAGFlow's REST interface (`/api/v1`) over Node's fetch. Stateless apart from `close()`.
 * @example
 * const t = new HttpTransport({ baseUrl: 'http://127.0.0.1:9380', apiKey: 'ragflow-…' });
 * const ds = await t.call('datasets.create', { name: 'kb' });
 */
export class HttpTransport implements Transport {
  /** `http://host:port` (no `/api/v1`). */
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number | undefined;
  private closed = false;
  /** Requests under way (streams included), aborted by `close()`. */
  private readonly inflight = new Set<AbortController>();

  constructor(opts: HttpTransportOptions) {
    this.baseUrl = normaliseBaseUrl(opts.baseUrl);
    if (typeof opts.apiKey !== 'string' || !opts.apiKey.trim()) {
      throw new TypeError('Remote mode needs "apiKey": an API key of the server (ragloom serve prints one on its first start)');
    }
    this.apiKey = opts.apiKey.trim();
    if (opts.timeoutMs !== undefined && !(Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0)) {
      throw new TypeError('"timeout_ms" must be a positive number of milliseconds');
    }
    this.timeoutMs = opts.timeoutMs;
  }

  /**
   * Runs `op` on the server. Resolves to what the local op returns: the envelope's `data` (a
   * `json` envelope's non-default `message` kept as the non-enumerable
   * `Symbol.for('ragloom.resultMessage')`), the bytes of a download, or for a streamed answer an
   * AsyncIterable (returned once the server has accepted the request, so a bad request rejects
   * here, as it does locally). `params.signal` (an AbortSignal) is not sent; it aborts the request.
   */
  async call<T = unknown>(op: OpName, params: Params = {}): Promise<T> {
    if (this.closed) throw new ApiError(RetCode.OPERATING_ERROR, 'The client is closed.');
    const route = routeFor(op, params ?? {});
    // A download asked as a stream: the response body is handed over as it arrives (`stream` is not sent).
    const streamBytes = route.envelope === 'bytes' && params?.stream === true;
    if (streamBytes) params = Object.fromEntries(Object.entries(params).filter(([k]) => k !== 'stream'));
    const req = this.split(route, params ?? {});
    const url = this.url(route, req);
    const ctl = new AbortController();
    const outer = params?.signal instanceof AbortSignal ? params.signal : undefined;
    const onAbort = () => ctl.abort(outer!.reason);
    if (outer?.aborted) onAbort();
    else outer?.addEventListener('abort', onAbort, { once: true });
    this.inflight.add(ctl);
    const timer = this.timeoutMs === undefined ? undefined : setTimeout(() => ctl.abort(TIMEOUT), this.timeoutMs);
    const release = () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
      this.inflight.delete(ctl);
    };
    const what = `${req.method} ${url}`;
    let streaming = false;
    try {
      let res: Response;
      try {
        res = await fetch(url, { method: req.method, headers: this.headers(req), body: this.body(req), signal: ctl.signal });
      } catch (e) {
        throw this.failure(e, ctl, what);
      }
      const type = (res.headers.get('content-type') ?? '').toLowerCase();
      if (type.startsWith('text/event-stream') && res.body) {
        streaming = true;
        clearTimeout(timer); // a streamed answer may run for as long as it produces
        const kind = route.stream === 'openai' ? this.openaiStream : route.stream === 'events' ? this.eventStream : this.nativeStream;
        return kind.call(this, res, ctl, release, what) as T;
      }
      if (route.envelope === 'bytes' && res.status === 200 && !type.startsWith('application/json')) {
        if (streamBytes && res.body) {
          streaming = true;
          clearTimeout(timer); // a large file may take longer than one request's timeout
          const body = res.body;
          const fail = (e: unknown) => this.failure(e, ctl, what);
          return (async function* () {
            try {
              for await (const piece of body) yield piece as Uint8Array;
            } catch (e) {
              throw fail(e);
            } finally {
              release();
            }
          })() as T;
        }
        try {
          return new Uint8Array(await res.arrayBuffer()) as T;
        } catch (e) {
          throw this.failure(e, ctl, what);
        }
      }
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        throw this.failure(e, ctl, what);
      }
      // A `raw` route answers as it is: ping's text, healthz's object (HTTP 500 when a part is down).
      if (route.envelope === 'raw' && (res.status === 200 || (res.status === 500 && !type.startsWith('text/')))) {
        try {
          const body = JSON.parse(text) as { code?: unknown };
          if (typeof body?.code !== 'number') return body as T;
        } catch {
          return text as T;
        }
      }
      return decode(route, res, text, what) as T;
    } finally {
      if (!streaming) release();
    }
  }

  /** Marks the client closed (later calls reject with 103) and aborts its requests under way. The server keeps running. */
  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.inflight) c.abort(CLOSED);
    this.inflight.clear();
  }

  private split(route: RouteSpec, params: Params): SplitRequest {
    for (const k of pathParams(route.path)) {
      if (!present(params[k])) {
        // A path cannot carry an empty segment; the local op would answer for the empty id itself.
        throw new ApiError(RetCode.ARGUMENT_ERROR, `\`${k}\` is required.`);
      }
    }
    const req = splitRequest(route, params);
    if (req.files) {
      for (const f of req.files as unknown[]) {
        const part = f as { display_name?: unknown; blob?: unknown } | null;
        // Bytes that cannot travel: the op's own message (api/documents.ts), checked here because
        // multipart can only carry bytes.
        if (part && typeof part === 'object' && typeof part.display_name === 'string' && part.display_name && !(part.blob instanceof Uint8Array) && !(part.blob instanceof Blob)) {
          throw new ApiError(RetCode.ARGUMENT_ERROR, `${part.display_name}: \`blob\` must be a Uint8Array, a Buffer or a stream of them`);
        }
      }
    }
    return req;
  }

  private url(route: RouteSpec, req: SplitRequest): string {
    const u = new URL(this.baseUrl + (route.prefix ?? API_PREFIX) + req.path);
    for (const [k, v] of req.query) u.searchParams.append(k, v);
    return u.toString();
  }

  private headers(req: SplitRequest): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json, text/event-stream, */*' };
    if (req.body !== undefined) h['content-type'] = 'application/json';
    return h;
  }

  private body(req: SplitRequest): string | FormData | undefined {
    if (req.files) {
      const form = new FormData();
      for (const f of req.files as unknown[]) {
        const part = (f && typeof f === 'object' ? f : {}) as { display_name?: unknown; blob?: unknown };
        // A file-backed Blob (a path or a spooled stream: Dataset.uploadDocuments) is read as it is sent.
        const blob = part.blob instanceof Blob ? part.blob : new Blob([part.blob instanceof Uint8Array ? part.blob : new Uint8Array(0)]);
        // A name that is not a string travels as '' → the server's "No file selected!", as locally.
        form.append('file', blob, typeof part.display_name === 'string' ? part.display_name : '');
      }
      return form;
    }
    return req.body === undefined ? undefined : JSON.stringify(req.body);
  }

  /** A fetch / read failure as an ApiError. */
  private failure(e: unknown, ctl: AbortController, what: string): ApiError {
    if (e instanceof ApiError) return e;
    if (ctl.signal.aborted) {
      if (ctl.signal.reason === CLOSED) return new ApiError(RetCode.OPERATING_ERROR, 'The client is closed.', { cause: e });
      if (ctl.signal.reason === TIMEOUT) return new ApiError(RetCode.EXCEPTION_ERROR, `The request timed out after ${this.timeoutMs} ms: ${what}`, { cause: e });
      return new ApiError(RetCode.EXCEPTION_ERROR, `The request was aborted: ${what}`, { cause: ctl.signal.reason ?? e });
    }
    const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
    const detail = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
    return new ApiError(RetCode.CONNECTION_ERROR, `Connection error: ${what} failed (${detail})`, { cause: e });
  }

  /** RAGFlow's native stream (§8): `data:{code:0,data:<answer>}` … `data:{code:0,data:true}`; a `code != 0` event fails. */
  private async *nativeStream(res: Response, ctl: AbortController, release: () => void, what: string): AsyncGenerator<unknown> {
    try {
      for await (const raw of this.events(res, ctl, what)) {
        const ev = parseEvent(raw, what) as { code?: unknown; message?: unknown; data?: unknown };
        if (typeof ev?.code === 'number' && ev.code !== 0) throw new ApiError(ev.code, String(ev.message ?? ''));
        if (ev?.data === true) return;
        yield ev?.data;
      }
      throw new ApiError(RetCode.CONNECTION_ERROR, `Connection error: the event stream of ${what} ended before its end marker`);
    } finally {
      ctl.abort(DONE); // a caller that broke out stops the server's answer
      release();
    }
  }

  /** The agent stream (§10): events until `data:[DONE]`; `{code != 0, message}` is a failure. */
  private async *eventStream(res: Response, ctl: AbortController, release: () => void, what: string): AsyncGenerator<unknown> {
    try {
      for await (const raw of this.events(res, ctl, what)) {
        if (raw.trim() === '[DONE]') return;
        const ev = parseEvent(raw, what) as { code?: unknown; message?: unknown; event?: unknown };
        if (ev && typeof ev.code === 'number' && ev.event === undefined) {
          if (ev.code !== 0) throw new ApiError(ev.code, String(ev.message ?? ''));
          continue;
        }
        yield ev;
      }
      throw new ApiError(RetCode.CONNECTION_ERROR, `Connection error: the event stream of ${what} ended before its end marker`);
    } finally {
      ctl.abort(DONE);
      release();
    }
  }

  /**
   * The OpenAI-compatible stream (§9): chunks until `data:[DONE]`. The server reports a failure
   * mid-stream as a chunk whose content is `**ERROR**: <message>` followed by a `stop` chunk without
   * usage; that pair is thrown as `ApiError(500, message)`, as the local op throws.
   */
  private async *openaiStream(res: Response, ctl: AbortController, release: () => void, what: string): AsyncGenerator<unknown> {
    try {
      let held: { chunk: unknown; message: string } | undefined;
      for await (const raw of this.events(res, ctl, what)) {
        if (raw.trim() === '[DONE]') {
          if (held) yield held.chunk;
          return;
        }
        const c = parseEvent(raw, what) as { code?: unknown; message?: unknown; choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }>; usage?: unknown };
        if (c && typeof c.code === 'number' && !Array.isArray(c.choices)) {
          if (c.code !== 0) throw new ApiError(c.code, String(c.message ?? ''));
          continue;
        }
        const choice = c?.choices?.[0];
        if (held) {
          if (choice?.finish_reason === 'stop' && (c.usage === null || c.usage === undefined)) throw new ApiError(RetCode.SERVER_ERROR, held.message);
          yield held.chunk;
          held = undefined;
        }
        const content = choice?.delta?.content;
        if (typeof content === 'string' && content.startsWith('**ERROR**: ') && (choice?.finish_reason ?? null) === null) {
          held = { chunk: c, message: content.slice('**ERROR**: '.length) };
          continue;
        }
        yield c;
      }
      throw new ApiError(RetCode.CONNECTION_ERROR, `Connection error: the event stream of ${what} ended before its end marker`);
    } finally {
      ctl.abort(DONE);
      release();
    }
  }

  /** The `data` of each server-sent event (multi-line data joined with `\n`; comments and other fields ignored). */
  private async *events(res: Response, ctl: AbortController, what: string): AsyncGenerator<string> {
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    let data: string[] = [];
    let any = false;
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (e) {
          throw this.failure(e, ctl, what);
        }
        buf += chunk.done ? dec.decode() : dec.decode(chunk.value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, '');
          buf = buf.slice(nl + 1);
          if (line === '') {
            // Events already received are not handed out once the caller has aborted.
            if (ctl.signal.aborted) throw this.failure(ctl.signal.reason, ctl, what);
            if (any) yield data.join('\n');
            data = [];
            any = false;
          } else if (line.startsWith('data:')) {
            data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
            any = true;
          }
        }
        if (chunk.done) {
          if (buf.startsWith('data:')) {
            data.push(buf.slice(buf.startsWith('data: ') ? 6 : 5));
            any = true;
          }
          if (any) yield data.join('\n');
          return;
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }
}

function parseEvent(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError(RetCode.EXCEPTION_ERROR, `Unexpected event from ${what}: ${raw.slice(0, 200)}`);
  }
}

/** A complete (non-streamed) answer → the op's result, or the ApiError. */
function decode(route: RouteSpec, res: Response, text: string, what: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
    if (res.status >= 400) throw new ApiError(res.status, `HTTP ${res.status} ${res.statusText} from ${what}${snippet ? `: ${snippet}` : ''}`);
    throw new ApiError(RetCode.EXCEPTION_ERROR, `Unexpected response from ${what} (HTTP ${res.status}, not JSON)${snippet ? `: ${snippet}` : ''}`);
  }
  const b = body as { code?: unknown; message?: unknown } | null;
  const isEnvelope = !!b && typeof b === 'object' && typeof b.code === 'number';
  if (res.status >= 400 && !(isEnvelope && b!.code !== 0)) {
    // An error status with no error code: `token_required`'s "`Authorization` can't be empty" is
    // `{code: 0}` with HTTP 401; a proxy may answer with some other JSON.
    const msg = isEnvelope && typeof b!.message === 'string' ? b!.message : `HTTP ${res.status} ${res.statusText} from ${what}`;
    throw new ApiError(res.status, msg);
  }
  const out = decodeEnvelope(route, body);
  if (!out.ok) throw out.error;
  return out.result;
}

/**
 * Chat through an OpenAI-compatible HTTP API: `POST {baseUrl}/chat/completions`, answered as JSON
 * or streamed as server-sent events. Works with OpenAI, Ollama, llama.cpp's server, vLLM, LocalAI
 * and every hosted service with an OpenAI-compatible endpoint (ZHIPU-AI, DeepSeek, Moonshot, …).
 *
 * `baseUrl` is the OpenAI base **including its version path**; nothing is added to it:
 *
 * | server     | baseUrl                              |
 * |------------|--------------------------------------|
 * | OpenAI     | `https://api.openai.com/v1`          |
 * | Ollama     | `http://127.0.0.1:11434/v1`          |
 * | llama.cpp  | `http://127.0.0.1:8080/v1`           |
 * | vLLM       | `http://127.0.0.1:8000/v1`           |
 * | DeepSeek   | `https://api.deepseek.com/v1`        |
 * | ZHIPU-AI   | `https://open.bigmodel.cn/api/paas/v4` |
 *
 * Requests go through `node:http`/`node:https` (which lets the connect timeout be told apart from
 * a silent server), or through the `fetch` you pass (e.g. one with a proxy dispatcher).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { clip, serverErrorMessage as serverMessage } from '../util/index.js';
import { request as httpsRequest } from 'node:https';
import { ChatModelError } from './errors.js';
import type { ChatDelta, ChatMessage, ChatModel, ChatOptions, ChatResult, ToolCall, Usage } from './types.js';

export interface OpenAIChatModelOptions {
  /** The model's id, `name@factory` (used in error messages). */
  id: string;
  /** The model name sent to the server, e.g. `gpt-4o-mini`, `qwen2.5:7b`, `deepseek-chat`. */
  model: string;
  /**
   * The OpenAI-compatible base URL including its version path, e.g. `http://127.0.0.1:11434/v1`.
   * A trailing `/` is ignored; `/v1` is never added. A query string (Azure's `?api-version=`) is kept.
   */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /** The model's context window in tokens. @default 8192 */
  maxTokens?: number;
  /**
   * Time allowed to open the connection (DNS, TCP, TLS). With a custom `fetch` the connection is
   * that fetch's business and only `readTimeoutMs` applies. `0` disables it. @default 10_000 (ms)
   */
  connectTimeoutMs?: number;
  /**
   * Longest silence allowed from the server once connected: before the response headers and
   * between any two bytes of the body. A timeout is not retried. Time the caller spends between
   * two deltas of a stream does not count. `0` disables it. @default 120_000 (ms)
   */
  readTimeoutMs?: number;
  /**
   * Retries after HTTP 429/500/502/503/504, a network error or a connect timeout, made only
   * while no delta has reached the caller. @default 3
   */
  retries?: number;
  /** First backoff delay, doubled on each retry, with jitter; a `Retry-After` header wins. @default 500 (ms) */
  retryBaseMs?: number;
  /** Upper bound of one backoff delay, `Retry-After` included. @default 30_000 (ms) */
  maxRetryDelayMs?: number;
  /** Ask streams for a final usage chunk (`stream_options: {include_usage: true}`). @default true */
  streamUsage?: boolean;
  /** Extra request headers (e.g. `api-key` for Azure-style gateways); they win over the defaults. */
  headers?: Record<string, string>;
  /** A fetch to send requests with instead of `node:http`. */
  fetch?: typeof fetch;
  /** Counts tokens for the usage estimate made when the server sends none. @default ceil(chars / 4) */
  countTokens?: (text: string) => number;
}

export const OPENAI_CHAT_DEFAULTS = Object.freeze({
  maxTokens: 8192 /* tokens */,
  connectTimeoutMs: 10_000 /* ms */,
  readTimeoutMs: 120_000 /* ms */,
  retries: 3,
  retryBaseMs: 500 /* ms */,
  maxRetryDelayMs: 30_000 /* ms */,
  streamUsage: true,
});

const KNOWN = new Set([
  'id', 'model', 'baseUrl', 'apiKey', 'maxTokens', 'connectTimeoutMs', 'readTimeoutMs', 'retries',
  'retryBaseMs', 'maxRetryDelayMs', 'streamUsage', 'headers', 'fetch', 'countTokens',
]);
const MISSPELT: Record<string, string> = {
  baseURL: 'baseUrl', base_url: 'baseUrl', url: 'baseUrl', api_key: 'apiKey', apiKEY: 'apiKey', max_tokens: 'maxTokens',
  contextWindow: 'maxTokens', timeout: 'readTimeoutMs', timeoutMs: 'readTimeoutMs', connectTimeout: 'connectTimeoutMs',
  readTimeout: 'readTimeoutMs', maxRetries: 'retries', max_retries: 'retries', retryDelayMs: 'retryBaseMs',
};

/** Statuses worth another try: rate limits and the gateway/overload family. */
const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
/** Errors from which another attempt may succeed. */
const RETRYABLE = new WeakSet<ChatModelError>();
/** The wait a `Retry-After` (or `retry-after-ms`) header asked for, per error. */
const RETRY_AFTER = new WeakMap<ChatModelError, number>();
/** At most this much of an error body is read. */
const ERROR_BODY_LIMIT = 64 * 1024;

type Phase = 'connect' | 'read';

/** The part of an HTTP response both transports give. */
interface Wire {
  status: number;
  header(name: string): string | undefined;
  body: AsyncIterable<Uint8Array>;
}

/**
 * One HTTP attempt: its abort controller (fed by the caller's signal, the model's close() and the
 * timeouts) and its watchdog timer, which fires after `ms` of silence in the current phase.
 */
class Attempt {
  readonly ctl = new AbortController();
  timedOut?: { phase: Phase; ms: number };
  responded = false;
  private timer?: NodeJS.Timeout;
  private phase?: Phase;
  private ms = 0;
  private readonly onAbort = () => this.ctl.abort(new Error('aborted'));

  constructor(private readonly signals: (AbortSignal | undefined)[]) {
    for (const s of signals) s?.addEventListener('abort', this.onAbort, { once: true });
  }

  watch(phase: Phase, ms: number): void {
    this.stop();
    this.phase = phase;
    this.ms = ms;
    if (ms > 0 && Number.isFinite(ms)) {
      this.timer = setTimeout(() => {
        this.timedOut = { phase, ms };
        this.ctl.abort(new Error(`timeout (${phase})`));
      }, ms);
    }
  }

  /** Data arrived: the silence starts over. */
  touch(): void {
    this.timer?.refresh();
  }

  /** The caller holds a delta: its time does not count as the server's silence. */
  pause(): void {
    this.stop();
  }

  resume(): void {
    if (this.phase && !this.ctl.signal.aborted) this.watch(this.phase, this.ms);
  }

  dispose(): void {
    this.stop();
    this.phase = undefined;
    for (const s of this.signals) s?.removeEventListener('abort', this.onAbort);
    if (!this.ctl.signal.aborted) this.ctl.abort(new Error('done'));
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Sends through `node:http(s)`: the connect phase is watched apart from the wait for data. */
function nodeSend(url: URL, headers: Record<string, string>, body: string, att: Attempt, connectMs: number, readMs: number): Promise<Wire> {
  return new Promise<Wire>((resolve, reject) => {
    const signal = att.ctl.signal;
    if (signal.aborted) return reject(signal.reason);
    const tls = url.protocol === 'https:';
    const req = (tls ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    });
    let res: IncomingMessage | undefined;
    // Once the response is complete the socket may be back in the agent's pool: leave it alone.
    const onAbort = () => {
      if (!res?.complete) req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal.removeEventListener('abort', onAbort));
    // Errors after the response arrive through the body's iterator; this keeps them from going unhandled.
    req.on('error', (err) => (res ? undefined : reject(err)));
    req.once('socket', (socket) => {
      if (!socket.connecting) return att.watch('read', readMs);
      att.watch('connect', connectMs);
      socket.once(tls ? 'secureConnect' : 'connect', () => att.watch('read', readMs));
    });
    req.once('response', (r) => {
      res = r;
      r.on('error', () => undefined);
      resolve({
        status: r.statusCode ?? 0,
        header: (n) => {
          const v = r.headers[n.toLowerCase()];
          return Array.isArray(v) ? v.join(', ') : v;
        },
        body: r,
      });
    });
    req.end(body);
  });
}

async function* webBody(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value) yield value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** Sends through a fetch: connection setup is the fetch's own; the watchdog guards the wait for data. */
async function fetchSend(f: typeof fetch, url: URL, headers: Record<string, string>, body: string, att: Attempt, readMs: number): Promise<Wire> {
  att.watch('read', readMs);
  const r = await f(url, { method: 'POST', headers, body, signal: att.ctl.signal });
  return {
    status: r.status,
    header: (n) => r.headers.get(n) ?? undefined,
    body: r.body ? webBody(r.body) : (async function* () {})(),
  };
}

/** The body's chunks, each one restarting the watchdog. */
async function* watched(body: AsyncIterable<Uint8Array>, att: Attempt): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    att.touch();
    yield chunk;
  }
}

async function readText(body: AsyncIterable<Uint8Array>, att: Attempt, limit = Infinity): Promise<string> {
  const dec = new TextDecoder();
  let text = '';
  for await (const chunk of watched(body, att)) {
    text += dec.decode(chunk, { stream: true });
    if (text.length >= limit) return text.slice(0, limit);
  }
  return text + dec.decode();
}

/** One server-sent event: its `event` name (`message` by default) and its `data` lines joined by `\n`. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Parses a server-sent event stream (WHATWG): lines end in `\n`, `\r\n` or `\r` (also when split
 * across reads), `:` starts a comment, several `data:` lines join with `\n`, a blank line ends an
 * event. An event still open at the end of the stream is kept (some servers never send the last
 * blank line). An `error:` line (llama.cpp) is an `error` event of its own. A line that is no SSE
 * field at all throws a SyntaxError, since it means the body is something else.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const dec = new TextDecoder();
  let pending = '';
  let skipLf = false;
  let data: string[] = [];
  let event = '';
  const lines: string[] = [];

  const split = (text: string): void => {
    let i = 0;
    if (skipLf && text.length > 0) {
      if (text[0] === '\n') i = 1;
      skipLf = false;
    }
    let start = i;
    for (; i < text.length; i++) {
      const ch = text[i];
      if (ch !== '\n' && ch !== '\r') continue;
      lines.push(pending + text.slice(start, i));
      pending = '';
      if (ch === '\r') {
        if (i + 1 < text.length) {
          if (text[i + 1] === '\n') i++;
        } else skipLf = true;
      }
      start = i + 1;
    }
    pending += text.slice(start);
  };

  function* drain(): Generator<SseEvent> {
    for (const line of lines.splice(0)) {
      if (line === '') {
        if (data.length) yield { event: event || 'message', data: data.join('\n') };
        data = [];
        event = '';
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      // llama.cpp's server reports a failure mid-stream as an `error: {json}` line of its own.
      else if (field === 'error') yield { event: 'error', data: value };
      else if (field !== 'id' && field !== 'retry') throw new SyntaxError(`unexpected line ${JSON.stringify(clip(line))}`);
    }
  }

  for await (const chunk of chunks) {
    split(dec.decode(chunk, { stream: true }));
    yield* drain();
  }
  split(dec.decode());
  if (pending !== '') lines.push(pending);
  lines.push('');
  yield* drain();
}

/** `Retry-After` as seconds or an HTTP date, or OpenAI's `retry-after-ms`; undefined when absent or unreadable. */
function retryAfterMs(header: (n: string) => string | undefined): number | undefined {
  const ms = Number(header('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const ra = header('retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** What a network error says, through fetch's `TypeError('fetch failed')` and Node's AggregateError. */
function describe(err: unknown): string {
  let e = err;
  if (e instanceof TypeError && e.message === 'fetch failed' && e.cause) e = e.cause;
  if (e instanceof AggregateError && !e.message) {
    const inner = e.errors.map((x) => (x instanceof Error ? x.message : String(x))).filter(Boolean);
    if (inner.length) return [...new Set(inner)].join('; ');
  }
  if (e instanceof Error) return e.message || (e as NodeJS.ErrnoException).code || e.name;
  return String(e);
}

const estimate = (text: string): number => Math.ceil(text.length / 4);

interface ToolSlot {
  id: string;
  name: string;
  args: string;
}

/** Assembles streamed tool-call fragments into whole calls, keyed by `index` (or `id`). */
class ToolCallAssembler {
  private readonly slots: ToolSlot[] = [];

  add(list: unknown): void {
    if (!Array.isArray(list)) return;
    for (const raw of list as Record<string, unknown>[]) {
      if (!raw || typeof raw !== 'object') continue;
      const id = typeof raw.id === 'string' ? raw.id : '';
      let i: number;
      if (typeof raw.index === 'number' && Number.isInteger(raw.index) && raw.index >= 0) i = raw.index;
      else if (id) {
        i = this.slots.findIndex((s) => s?.id === id);
        if (i < 0) i = this.slots.length;
      } else i = Math.max(0, this.slots.length - 1);
      const slot = (this.slots[i] ??= { id: '', name: '', args: '' });
      if (id && !slot.id) slot.id = id;
      const fn = (raw.function ?? {}) as { name?: unknown; arguments?: unknown };
      // Some servers repeat the whole name on every fragment, others split it.
      if (typeof fn.name === 'string' && fn.name !== slot.name) slot.name += fn.name;
      if (typeof fn.arguments === 'string') slot.args += fn.arguments;
      else if (fn.arguments && typeof fn.arguments === 'object') slot.args = JSON.stringify(fn.arguments);
    }
  }

  result(): ToolCall[] {
    return this.slots
      .filter((s): s is ToolSlot => !!s && (s.name !== '' || s.args !== ''))
      .map((s, k) => ({ id: s.id || `call_${k}`, type: 'function' as const, function: { name: s.name, arguments: s.args || '{}' } }));
  }
}

/** Message content as text: a string, or the text parts of a content array. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  }
  return '';
}

function reasoningOf(m: Record<string, unknown>): string {
  return textOf(m.reasoning_content ?? m.reasoning);
}

/**
 * A chat model behind an OpenAI-compatible `/chat/completions` endpoint.
 *
 * @example
 * const model = new OpenAIChatModel({ id: 'qwen2.5:7b@Ollama', model: 'qwen2.5:7b', baseUrl: 'http://127.0.0.1:11434/v1' });
 * const { content } = await model.chat([{ role: 'user', content: 'Hello' }]);
 * for await (const d of model.stream(messages, { temperature: 0.1 })) process.stdout.write(d.content ?? '');
 */
export class OpenAIChatModel implements ChatModel {
  readonly id: string;
  readonly maxTokens: number;
  private readonly model: string;
  private readonly url: URL;
  /** The URL as shown in messages (credentials removed). */
  private readonly shownUrl: string;
  private readonly o: Readonly<{
    connectTimeoutMs: number;
    readTimeoutMs: number;
    retries: number;
    retryBaseMs: number;
    maxRetryDelayMs: number;
    streamUsage: boolean;
  }>;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly fetchFn?: typeof fetch;
  private readonly count: (text: string) => number;
  private readonly closing = new AbortController();

  constructor(opts: OpenAIChatModelOptions) {
    if (!opts || typeof opts !== 'object') throw new TypeError('OpenAIChatModel: options are required');
    for (const k of Object.keys(opts)) {
      if (KNOWN.has(k)) continue;
      const hint = MISSPELT[k];
      throw new TypeError(`OpenAIChatModel: unknown option "${k}"${hint ? `; did you mean "${hint}"?` : ''}`);
    }
    for (const k of ['id', 'model', 'baseUrl'] as const) {
      if (typeof opts[k] !== 'string' || opts[k] === '') throw new TypeError(`OpenAIChatModel: "${k}" is required (a non-empty string)`);
    }
    let url: URL;
    try {
      url = new URL(opts.baseUrl);
    } catch {
      throw new TypeError(`OpenAIChatModel: "baseUrl" must be an http(s) URL such as http://127.0.0.1:11434/v1, got ${JSON.stringify(opts.baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`OpenAIChatModel: "baseUrl" must be an http(s) URL such as http://127.0.0.1:11434/v1, got ${JSON.stringify(opts.baseUrl)}`);
    }
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
    const num = (k: keyof typeof OPENAI_CHAT_DEFAULTS, integer: boolean, min: number): number => {
      const v = (opts as unknown as Record<string, unknown>)[k] ?? OPENAI_CHAT_DEFAULTS[k];
      if (typeof v !== 'number' || Number.isNaN(v) || v < min || (integer && !Number.isInteger(v))) {
        throw new TypeError(`OpenAIChatModel: "${k}" must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${String(v)}`);
      }
      return v;
    };
    this.maxTokens = num('maxTokens', true, 1);
    this.o = Object.freeze({
      connectTimeoutMs: num('connectTimeoutMs', false, 0),
      readTimeoutMs: num('readTimeoutMs', false, 0),
      retries: num('retries', true, 0),
      retryBaseMs: num('retryBaseMs', false, 0),
      maxRetryDelayMs: num('maxRetryDelayMs', false, 0),
      streamUsage: opts.streamUsage ?? OPENAI_CHAT_DEFAULTS.streamUsage,
    });
    if (opts.fetch !== undefined && typeof opts.fetch !== 'function') throw new TypeError('OpenAIChatModel: "fetch" must be a function');
    if (opts.countTokens !== undefined && typeof opts.countTokens !== 'function') throw new TypeError('OpenAIChatModel: "countTokens" must be a function');
    this.id = opts.id;
    this.model = opts.model;
    this.url = url;
    const shown = new URL(url);
    shown.username = '';
    shown.password = '';
    this.shownUrl = shown.toString();
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'ragloom' };
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = String(v);
    this.headers = Object.freeze(headers);
    this.fetchFn = opts.fetch;
    this.count = opts.countTokens ?? estimate;
  }

  async chat(messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    const body = this.requestBody(messages, options, false);
    let content = '';
    let reasoning = '';
    let last: ChatDelta = {};
    for await (const d of this.run(body, messages, options.signal, false)) {
      content += d.content ?? '';
      reasoning += d.reasoning ?? '';
      last = d;
    }
    const out: ChatResult = { content, usage: last.usage!, finish_reason: last.finish_reason ?? 'stop' };
    if (reasoning) out.reasoning = reasoning;
    if (last.tool_calls?.length) out.tool_calls = last.tool_calls;
    return out;
  }

  /**
   * Streams the answer: deltas with `content` and/or `reasoning` as they arrive, then one last
   * delta with `finish_reason`, `usage` and the assembled `tool_calls`. Breaking out of the loop
   * aborts the request. Failures before the first delta are retried; later ones are thrown.
   */
  stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    const body = this.requestBody(messages, options, true);
    return this.run(body, messages, options.signal, true);
  }

  /** Aborts the requests in flight (they fail with kind `aborted`); later calls fail the same way. */
  async close(): Promise<void> {
    this.closing.abort(new Error('closed'));
  }

  private requestBody(messages: ChatMessage[], o: ChatOptions, stream: boolean): string {
    if (!Array.isArray(messages)) throw new TypeError('OpenAIChatModel: messages must be an array');
    const b: Record<string, unknown> = {
      model: this.model,
      messages: messages.map((m) => {
        const w: Record<string, unknown> = { role: m.role, content: m.content ?? '' };
        if (m.tool_calls?.length) w.tool_calls = m.tool_calls;
        if (m.tool_call_id) w.tool_call_id = m.tool_call_id;
        if (m.name) w.name = m.name;
        return w;
      }),
      stream,
    };
    if (stream && this.o.streamUsage) b.stream_options = { include_usage: true };
    for (const k of ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'max_tokens'] as const) {
      if (typeof o[k] === 'number' && Number.isFinite(o[k])) b[k] = o[k];
    }
    if (o.stop?.length) b.stop = o.stop;
    if (o.tools?.length) b.tools = o.tools;
    if (o.json) b.response_format = { type: 'json_object' };
    return JSON.stringify(b);
  }

  /** Attempts until one answers, retrying while nothing has been yielded. */
  private async *run(body: string, messages: ChatMessage[], signal: AbortSignal | undefined, stream: boolean): AsyncGenerator<ChatDelta> {
    const accept = stream ? 'text/event-stream' : 'application/json';
    const headers = { accept, ...this.headers };
    for (let attempt = 1; ; attempt++) {
      this.throwIfAborted(signal);
      const att = new Attempt([signal, this.closing.signal]);
      let delivered = false;
      try {
        const wire = this.fetchFn
          ? await fetchSend(this.fetchFn, this.url, headers, body, att, this.o.readTimeoutMs)
          : await nodeSend(this.url, headers, body, att, this.o.connectTimeoutMs, this.o.readTimeoutMs);
        att.responded = true;
        att.touch();
        if (wire.status < 200 || wire.status > 299) throw await this.httpError(wire, att);
        const type = (wire.header('content-type') ?? '').toLowerCase();
        const sse = type.includes('event-stream') || (stream && !type.includes('json'));
        for await (const d of sse ? this.fromSse(wire, att, messages) : this.fromJson(wire, att, messages)) {
          att.pause();
          delivered = true;
          yield d;
          att.resume();
        }
        return;
      } catch (err) {
        const e = this.classify(err, att, signal);
        att.dispose();
        if (delivered || attempt > this.o.retries || !RETRYABLE.has(e)) throw attempt > 1 ? this.withAttempts(e, attempt) : e;
        await this.sleep(this.backoff(e, attempt), signal);
      } finally {
        att.dispose();
      }
    }
  }

  private async *fromJson(wire: Wire, att: Attempt, messages: ChatMessage[]): AsyncGenerator<ChatDelta> {
    const text = await readText(wire.body, att);
    let j: Record<string, unknown>;
    try {
      j = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw this.error('protocol', `the response from ${this.shownUrl} is not JSON: ${JSON.stringify(clip(text))}`, { cause: err });
    }
    if (!j || typeof j !== 'object') throw this.error('protocol', `the response from ${this.shownUrl} is not a JSON object: ${clip(text)}`);
    if (j.error) throw this.inBandError(j);
    const choices = Array.isArray(j.choices) ? (j.choices as Record<string, unknown>[]) : [];
    const choice = choices.find((c) => c && (c.index ?? 0) === 0) ?? choices[0];
    if (!choice || typeof choice !== 'object') throw this.error('protocol', `the response from ${this.shownUrl} has no choices: ${clip(text)}`);
    const m = (choice.message ?? choice.delta ?? {}) as Record<string, unknown>;
    const content = textOf(m.content);
    const reasoning = reasoningOf(m);
    const tools = new ToolCallAssembler();
    if (Array.isArray(m.tool_calls)) tools.add(m.tool_calls.map((tc: unknown, index: number) => ({ ...(tc as object), index })));
    if (content || reasoning) yield { ...(content ? { content } : {}), ...(reasoning ? { reasoning } : {}) };
    yield this.finalDelta(messages, content, reasoning, tools.result(), choice.finish_reason, j.usage);
  }

  private async *fromSse(wire: Wire, att: Attempt, messages: ChatMessage[]): AsyncGenerator<ChatDelta> {
    let content = '';
    let reasoning = '';
    let finish: unknown;
    let usage: unknown;
    let done = false;
    const tools = new ToolCallAssembler();
    const events = parseSse(watched(wire.body, att));
    try {
      for (;;) {
        let next: IteratorResult<SseEvent>;
        try {
          next = await events.next();
        } catch (err) {
          if (err instanceof SyntaxError) throw this.error('protocol', `the stream from ${this.shownUrl} is not server-sent events: ${err.message}`, { cause: err });
          throw err;
        }
        if (next.done) break;
        const ev = next.value;
        if (ev.data.trim() === '[DONE]') {
          done = true;
          break;
        }
        let j: Record<string, unknown>;
        try {
          j = JSON.parse(ev.data) as Record<string, unknown>;
        } catch (err) {
          if (ev.event === 'error') throw this.inBandError({ error: ev.data });
          const line = ev.data.split('\n').map((l) => `data: ${l}`).join('\\n');
          throw this.error('protocol', `malformed event in the stream from ${this.shownUrl}: ${JSON.stringify(clip(line))} is not JSON (${(err as Error).message})`, { cause: err });
        }
        if (!j || typeof j !== 'object') throw this.error('protocol', `malformed event in the stream from ${this.shownUrl}: ${JSON.stringify(clip(ev.data))} is not a JSON object`);
        if (ev.event === 'error' || j.error) throw this.inBandError(j);
        if (j.usage && typeof j.usage === 'object') usage = j.usage;
        const choices = Array.isArray(j.choices) ? (j.choices as Record<string, unknown>[]) : [];
        const choice = choices.find((c) => c && (c.index ?? 0) === 0);
        if (!choice) continue;
        const d = (choice.delta ?? choice.message ?? {}) as Record<string, unknown>;
        const c = textOf(d.content);
        const r = reasoningOf(d);
        tools.add(d.tool_calls);
        if (choice.finish_reason) finish = choice.finish_reason;
        if (c || r) {
          content += c;
          reasoning += r;
          yield { ...(c ? { content: c } : {}), ...(r ? { reasoning: r } : {}) };
        }
      }
    } finally {
      // Stops reading (after [DONE], or when the caller broke out) and lets go of the body.
      await events.return(undefined);
    }
    if (!done && !finish) {
      throw this.error('protocol', `the stream from ${this.shownUrl} ended before the answer was complete (no finish_reason and no [DONE])`);
    }
    yield this.finalDelta(messages, content, reasoning, tools.result(), finish, usage);
  }

  private finalDelta(messages: ChatMessage[], content: string, reasoning: string, toolCalls: ToolCall[], finish: unknown, usage: unknown): ChatDelta {
    const d: ChatDelta = {
      finish_reason: typeof finish === 'string' && finish ? finish : toolCalls.length ? 'tool_calls' : 'stop',
      usage: this.usage(usage, messages, content, reasoning, toolCalls),
    };
    if (toolCalls.length) d.tool_calls = toolCalls;
    return d;
  }

  /** The server's usage, with what it left out estimated. */
  private usage(raw: unknown, messages: ChatMessage[], content: string, reasoning: string, toolCalls: ToolCall[]): Usage {
    const u = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
    const prompt =
      n(u.prompt_tokens) ??
      messages.reduce(
        (s, m) => s + 4 + this.count(m.content ?? '') + (m.tool_calls ?? []).reduce((t, c) => t + this.count(c.function.name + c.function.arguments), 0),
        2,
      );
    const completion =
      n(u.completion_tokens) ??
      (content ? this.count(content) : 0) + (reasoning ? this.count(reasoning) : 0) + toolCalls.reduce((t, c) => t + this.count(c.function.name + c.function.arguments), 0);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(u.total_tokens) ?? prompt + completion };
  }

  private async httpError(wire: Wire, att: Attempt): Promise<ChatModelError> {
    const text = await readText(wire.body, att, ERROR_BODY_LIMIT).catch(() => '');
    let msg = `HTTP ${wire.status} from ${this.shownUrl}: ${serverMessage(text)}`;
    if (wire.status === 404 && !/\/v\d+[a-z0-9]*\/chat\/completions$/i.test(this.url.pathname)) {
      msg += ' (base_url must be the OpenAI-compatible base including its version path, e.g. http://127.0.0.1:11434/v1)';
    }
    const e = this.error('http', msg, { status: wire.status });
    if (RETRY_STATUS.has(wire.status)) {
      RETRYABLE.add(e);
      const ra = retryAfterMs(wire.header);
      if (ra !== undefined) RETRY_AFTER.set(e, ra);
    }
    return e;
  }

  /** An error the server put in a 200 body or an SSE event (`{error: {message, code}}`). */
  private inBandError(j: Record<string, unknown>): ChatModelError {
    const e = j.error ?? j;
    const code = e && typeof e === 'object' ? (e as { code?: unknown }).code : undefined;
    return this.error('http', `the server at ${this.shownUrl} reported an error: ${serverMessage(JSON.stringify(j))}`, {
      status: typeof code === 'number' ? code : undefined,
    });
  }

  /** Turns whatever an attempt threw into a ChatModelError, marking the ones worth retrying. */
  private classify(err: unknown, att: Attempt, signal: AbortSignal | undefined): ChatModelError {
    if (signal?.aborted) return this.abortedError(signal);
    if (this.closing.signal.aborted) return this.error('aborted', 'the model was closed', { cause: err });
    if (err instanceof ChatModelError) return err;
    if (att.timedOut) {
      const { phase, ms } = att.timedOut;
      const e =
        phase === 'connect'
          ? this.error('timeout', `timed out after ${ms} ms connecting to ${this.url.host} (${this.shownUrl})`, { cause: err })
          : this.error('timeout', `timed out after ${ms} ms waiting for data from ${this.shownUrl}`, { cause: err });
      if (phase === 'connect') RETRYABLE.add(e);
      return e;
    }
    const e = att.responded
      ? this.error('network', `the connection to ${this.shownUrl} failed: ${describe(err)}`, { cause: err })
      : this.error('network', `cannot reach ${this.shownUrl}: ${describe(err)} (is the server running, and is base_url right?)`, { cause: err });
    RETRYABLE.add(e);
    return e;
  }

  private withAttempts(e: ChatModelError, attempts: number): ChatModelError {
    if (e.kind === 'aborted') return e;
    const prefix = `Chat model ${this.id}: `;
    return new ChatModelError({
      kind: e.kind,
      model: this.id,
      message: `${e.message.slice(prefix.length)} (after ${attempts} attempts)`,
      status: e.status,
      url: e.url,
      cause: e.cause,
    });
  }

  private backoff(e: ChatModelError, attempt: number): number {
    const ra = RETRY_AFTER.get(e);
    if (ra !== undefined) return Math.min(ra, this.o.maxRetryDelayMs);
    const exp = Math.min(this.o.retryBaseMs * 2 ** (attempt - 1), this.o.maxRetryDelayMs);
    return exp * (0.5 + Math.random() * 0.5);
  }

  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const signals = [signal, this.closing.signal];
      const done = () => {
        clearTimeout(t);
        for (const s of signals) s?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        done();
        try {
          this.throwIfAborted(signal);
        } catch (err) {
          reject(err);
        }
      };
      const t = setTimeout(() => {
        done();
        resolve();
      }, ms);
      for (const s of signals) s?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private throwIfAborted(signal: AbortSignal | undefined): void {
    if (signal?.aborted) throw this.abortedError(signal);
    if (this.closing.signal.aborted) throw this.error('aborted', 'the model was closed');
  }

  private abortedError(signal: AbortSignal): ChatModelError {
    return this.error('aborted', `the request to ${this.shownUrl} was aborted`, { cause: signal.reason });
  }

  private error(kind: ChatModelError['kind'], message: string, extra: { status?: number; cause?: unknown } = {}): ChatModelError {
    return new ChatModelError({ kind, model: this.id, message, url: this.shownUrl, ...extra });
  }
}

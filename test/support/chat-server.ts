/**
 * A loopback stand-in for an OpenAI-compatible chat server (`POST /v1/chat/completions`, JSON or
 * server-sent events, and `GET /v1/models`), for any test that needs a remote chat model.
 *
 * ```ts
 * const server = await startChatServer();            // { apiKey?: 'sk-x' } → 401 without that bearer key
 * const model = new OpenAIChatModel({ id: 'mock@OpenAI', model: 'mock', baseUrl: server.url });
 * server.script({ status: 429, headers: { 'retry-after': '1' } }, { text: 'Hello' });
 * await model.chat([{ role: 'user', content: 'hi' }]);  // one 429, then "Hello"
 * server.requests[1]!.body.messages;                  // what the client sent (parsed JSON)
 * await server.close();
 * ```
 *
 * - `url` is the OpenAI base, `http://127.0.0.1:<port>/v1`.
 * - `requests` lists every chat request in arrival order: `{ headers, body, at, closed, clientClosed }`.
 *   `closed` resolves when its connection closes; `clientClosed` is then true if the client went
 *   away before the server finished the response (an abort, a `break`, a timeout).
 * - `script(...replies)` queues one reply per coming request (a `ChatReply`, or a function of the
 *   request body returning one); `reset()` empties the queue and `requests`; `aborted()` counts
 *   the requests whose client went away before the answer was finished.
 * - With no reply queued, the server answers `defaultAnswer(body)`: `Echo: <last user message>`,
 *   plus ` [ID:n]` citing the lowest `ID: n` found in the system messages, or
 *   `{"answer": "Echo: …"}` when `response_format` asks for JSON. It streams word by word when the
 *   request says `stream: true`, and sends usage (word counts) unless told not to.
 *
 * A `ChatReply` can set: `text` / `deltas` (the exact content pieces to stream) / `reasoning` (sent as `reasoning_content`) / `toolCalls`
 * (streamed as a first fragment with id and name, then the arguments in 5-char pieces) /
 * `finishReason` / `usage` (`false`: none) / `status` + `body` + `headers` (an error reply) /
 * `hang` (never answers) / `hangAfter: n` or `dropAfter: n` (go silent, or cut the connection,
 * after n events or, unstreamed, half the body) / `malformed` (a raw line sent after
 * `malformedAfter` events, default 1) / `delayMs` (before each event, or before a JSON answer) /
 * `chunkChars` (content piece size) / `json` (answer JSON even to a stream request) / `noDone` /
 * `sse` formatting: `lineEnding`, `comments` (`: keep-alive` lines), `multiline` (JSON spread over
 * several `data:` lines), `fragmentBytes` (write the bytes in pieces of that size, 1 ms apart).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: unknown; tool_calls?: unknown; tool_call_id?: string; name?: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface ChatServerRequest {
  headers: IncomingHttpHeaders;
  body: ChatRequestBody;
  /** `performance.now()` when the request arrived. */
  at: number;
  /** Resolves when the request's connection has closed. */
  closed: Promise<void>;
  /** Whether the client closed before the server finished its response (meaningful once `closed`). */
  clientClosed: boolean;
}

export interface ChatReply {
  /** The answer (default: `defaultAnswer(body)`). */
  text?: string | ((body: ChatRequestBody) => string);
  /** The content pieces to stream, exactly (their concatenation is the answer; wins over `text`). */
  deltas?: string[];
  reasoning?: string;
  toolCalls?: { id?: string; name: string; arguments: string }[];
  finishReason?: string;
  /** Usage to send, or `false` for none. Default: word counts (streams: only with `include_usage`). */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | false;
  /** Reply with this status (and `body`: a string sent as it is, or an object sent as JSON) instead of an answer. */
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Read the request and never answer. */
  hang?: boolean;
  /** Stop sending (connection left open) after this many events; unstreamed: after half the body. */
  hangAfter?: number;
  /** Destroy the connection after this many events; unstreamed: after half the body. */
  dropAfter?: number;
  /** A raw line (e.g. `data: {"choices": [`) written after `malformedAfter` events. */
  malformed?: string;
  /** @default 1 */
  malformedAfter?: number;
  /** Pause before each event (streams) or before the JSON answer. */
  delayMs?: number;
  /** Size of the content pieces streamed. Default: one word (with its trailing space) per piece. */
  chunkChars?: number;
  /** Answer with JSON even when the request asks for a stream. */
  json?: boolean;
  /** Leave out the final `data: [DONE]`. */
  noDone?: boolean;
  sse?: { lineEnding?: '\n' | '\r\n' | '\r'; comments?: boolean; multiline?: boolean; fragmentBytes?: number };
}

export type ChatScriptEntry = ChatReply | ((body: ChatRequestBody) => ChatReply);

export interface ChatServer {
  /** The OpenAI base URL, `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: ChatServerRequest[];
  /** Queues replies, one per coming request, in order. */
  script(...replies: ChatScriptEntry[]): ChatServer;
  /** Empties the reply queue and `requests`. */
  reset(): void;
  /** How many requests the client closed before the server finished answering (so far). */
  aborted(): number;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

/** The deterministic answer given when no reply is scripted. */
export function defaultAnswer(body: ChatRequestBody): string {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  const last = [...msgs].reverse().find((m) => m.role === 'user');
  const system = msgs.filter((m) => m.role === 'system').map((m) => text(m.content)).join('\n');
  const ids = [...system.matchAll(/\bID:\s*(\d+)/g)].map((m) => Number(m[1]));
  const answer = `Echo: ${text(last?.content)}${ids.length ? ` [ID:${Math.min(...ids)}]` : ''}`;
  const format = body.response_format as { type?: string } | undefined;
  return format?.type === 'json_object' ? JSON.stringify({ answer }) : answer;
}

/** What {@link contextAnswer} says when nothing it was sent matches the question. */
export const CONTEXT_NOT_FOUND = 'I could not find that in what I was given.';

/** Every string in a message's content, JSON text (a tool's result) opened up. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') {
    const t = v.trim();
    if (/^[[{]/.test(t)) {
      try {
        return strings(JSON.parse(t));
      } catch { /* not JSON: the text itself */ }
    }
    return [v];
  }
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

const contentWords = (s: string): Set<string> => new Set((s.toLowerCase().match(/[a-z0-9]{4,}/g) ?? []));

/**
 * A stand-in that reads its context, for examples that retrieve and then ask a model: offered
 * tools and none called yet, it calls the first with `{ question: <the user's last message> }`;
 * otherwise it answers with the sentence of what it was sent (system prompt, tool results,
 * context around the question) that shares the most words of four letters or more with the
 * question, followed by ` (<file name>)` when a file name (`leave.md`) was sent too; with nothing
 * in common, {@link CONTEXT_NOT_FOUND}. Deterministic: the same request, the same answer.
 */
export function contextAnswer(body: ChatRequestBody): ChatReply {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
  const question = text(lastUser?.content).trim();
  const tools = (Array.isArray(body.tools) ? body.tools : []) as Array<{ function?: { name?: string } }>;
  const name = tools[0]?.function?.name;
  if (name && !msgs.some((m) => m.role === 'tool')) return { text: '', toolCalls: [{ name, arguments: JSON.stringify({ question }) }] };
  const all = msgs.flatMap((m) => strings(m.content));
  // The question's own line (alone, or as "Query: …" in a prompt around it) is not an answer.
  const lines = all.flatMap((t) => t.split(/\n+|(?<=[.!?])\s+/)).map((l) => l.trim()).filter((l) => l && !(question && l.includes(question)));
  const q = contentWords(question);
  let best = '';
  let score = 0;
  for (const l of lines) {
    const n = [...contentWords(l)].filter((w) => q.has(w)).length;
    if (n > score) [best, score] = [l, n];
  }
  if (!score) return { text: CONTEXT_NOT_FOUND };
  const file = /[\w-]+\.(?:md|txt|pdf|docx|html)\b/.exec(all.join('\n'))?.[0];
  return { text: `${best}${file ? ` (${file})` : ''}` };
}

const words = (s: string) => s.match(/\S+\s*|\s+/g) ?? [];

function pieces(s: string, size?: number): string[] {
  if (!s) return [];
  if (!size) return words(s);
  const chars = [...s];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export async function startChatServer(opts: { apiKey?: string } = {}): Promise<ChatServer> {
  const requests: ChatServerRequest[] = [];
  const queue: ChatScriptEntry[] = [];

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      void respond(req, res, raw).catch(() => res.destroy());
    });
  };

  const sendJson = (res: ServerResponse, status: number, obj: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(typeof obj === 'string' ? obj : JSON.stringify(obj));

  async function respond(req: IncomingMessage, res: ServerResponse, raw: string) {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'ragloom-test' }] });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendJson(res, 404, { error: { message: `Unknown route ${req.method} ${path}`, type: 'invalid_request_error' } });
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      return sendJson(res, 400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' } });
    }
    let clientClosed = false;
    const rec: ChatServerRequest = {
      headers: req.headers,
      body,
      at: performance.now(),
      closed: new Promise<void>((r) =>
        res.once('close', () => {
          clientClosed = !res.writableFinished;
          r();
        }),
      ),
      get clientClosed() {
        return clientClosed;
      },
    };
    requests.push(rec);
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendJson(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
      return sendJson(res, 400, { error: { message: "'model' and a non-empty 'messages' are required", type: 'invalid_request_error' } });
    }
    const entry = queue.shift() ?? {};
    const r = typeof entry === 'function' ? entry(body) : entry;
    if (r.hang) return; // never answers; close() cuts it
    if (r.status !== undefined) {
      if (r.delayMs) await sleep(r.delayMs);
      return sendJson(res, r.status, r.body ?? { error: { message: `scripted status ${r.status}`, type: 'server_error' } }, r.headers);
    }
    const answer = r.deltas ? r.deltas.join('') : typeof r.text === 'function' ? r.text(body) : (r.text ?? defaultAnswer(body));
    const reasoning = r.reasoning ?? '';
    const calls = (r.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.arguments }));
    const finish = r.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
    const content = r.deltas ? r.deltas.filter((d) => d !== '') : pieces(answer, r.chunkChars);
    const thoughts = pieces(reasoning, r.chunkChars);
    const promptTokens = body.messages.reduce((s, m) => s + words(text(m.content)).length, 0);
    const usage = r.usage === false ? undefined : (r.usage ?? { prompt_tokens: promptTokens, completion_tokens: content.length + thoughts.length, total_tokens: promptTokens + content.length + thoughts.length });
    const id = `chatcmpl-${requests.length}`;
    const created = Math.floor(Date.now() / 1000);

    if (!body.stream || r.json) {
      if (r.delayMs) await sleep(r.delayMs);
      const message: Record<string, unknown> = { role: 'assistant', content: calls.length && !answer ? null : answer };
      if (reasoning) message.reasoning_content = reasoning;
      if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      const out = JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], ...(usage ? { usage } : {}) });
      if (r.hangAfter !== undefined || r.dropAfter !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json', ...r.headers });
        res.write(out.slice(0, out.length >> 1));
        if (r.dropAfter !== undefined) setTimeout(() => res.destroy(), 10);
        return;
      }
      return sendJson(res, 200, out, r.headers);
    }

    // Streamed answer.
    const fmt = r.sse ?? {};
    const eol = fmt.lineEnding ?? '\n';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...r.headers });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    const write = async (s: string) => {
      if (res.destroyed) return;
      if (!fmt.fragmentBytes) {
        res.write(s);
        return;
      }
      const bytes = Buffer.from(s, 'utf8');
      for (let i = 0; i < bytes.length && !res.destroyed; i += fmt.fragmentBytes) {
        res.write(bytes.subarray(i, i + fmt.fragmentBytes));
        await sleep(1);
      }
    };
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    const events: unknown[] = [chunk({ role: 'assistant', content: '' })];
    for (const t of thoughts) events.push(chunk({ reasoning_content: t }));
    for (const t of content) events.push(chunk({ content: t }));
    calls.forEach((c, index) => {
      events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
      for (let i = 0; i < c.arguments.length; i += 5) events.push(chunk({ tool_calls: [{ index, function: { arguments: c.arguments.slice(i, i + 5) } }] }));
    });
    events.push(chunk({}, finish));
    if (usage && body.stream_options?.include_usage) events.push({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage });
    if (!r.noDone) events.push('[DONE]');

    const malformedAfter = r.malformedAfter ?? 1;
    for (let n = 0; n < events.length; n++) {
      if (res.destroyed) return;
      if (r.malformed !== undefined && n === malformedAfter) await write(`${r.malformed}${eol}${eol}`);
      if (n === r.hangAfter) return;
      if (n === r.dropAfter) {
        // Let what was written reach the client first, then cut the connection mid-body.
        await new Promise<void>((ok) => res.write('', () => ok()));
        return void res.destroy();
      }
      if (r.delayMs) await sleep(r.delayMs);
      if (fmt.comments) await write(`: keep-alive${eol}`);
      const ev = events[n];
      const json = typeof ev === 'string' ? ev : JSON.stringify(ev, null, fmt.multiline ? 1 : undefined);
      await write(`${json.split('\n').map((l) => `data: ${l}`).join(eol)}${eol}${eol}`);
    }
    if (!res.destroyed) res.end();
  }

  const server: Server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const api: ChatServer = {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script(...replies) {
      queue.push(...replies);
      return api;
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    aborted: () => requests.filter((q) => q.clientClosed).length,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
  return api;
}

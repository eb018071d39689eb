/**
 * Server-sent events for the two completions, written exactly as RAGFlow writes them (§8, §9):
 * one `data:<json>\n\n` line per event, no `event:` or `id:` fields.
 *
 * - native (`POST /chats/{id}/completions`, `POST /chat/completions`): each answer is
 *   `data:{"code":0,"message":"","data":{...}}`; a failure mid-stream is
 *   `data:{"code":500,"message":m,"data":{"answer":"**ERROR**: m","reference":[]}}`; the stream
 *   always ends with `data:{"code":0,"message":"","data":true}`.
 * - OpenAI (`POST /openai/{chat_id}/chat/completions`): each chunk as it is; a failure mid-stream
 *   is a chunk whose `delta.content` is `**ERROR**: m`, then the closing `finish_reason: "stop"`
 *   chunk; the stream always ends with `data:[DONE]`.
 *
 * When the client goes away `signal` aborts: the op's iterator is closed (its `finally` stops
 * the model) and nothing more is written.
 */
import { Readable } from 'node:stream';
import { ApiError, RetCode } from '../api/index.js';

/** RAGFlow's SSE response headers. */
export const SSE_HEADERS = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
});

const line = (v: unknown) => `data:${typeof v === 'string' ? v : JSON.stringify(v)}\n\n`;

const messageOf = (e: unknown) => (e instanceof ApiError || e instanceof Error ? e.message : String(e));

/** Iterates `it` until it ends, fails, or `signal` aborts (then the iterator is closed at once). */
async function* until<T>(it: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iter = it[Symbol.asyncIterator]();
  const aborted = new Promise<never>((_, reject) => {
    const stop = () => reject(new ApiError(RetCode.EXCEPTION_ERROR, 'The client closed the connection.'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    for (;;) {
      const r = await Promise.race([iter.next(), aborted]);
      if (r.done) return;
      yield r.value;
    }
  } finally {
    // Closes the op's generator: its finally blocks abort the model call.
    void Promise.resolve(iter.return?.()).catch(() => undefined);
  }
}

/** The native completion stream as SSE text. */
export function nativeSse(it: AsyncIterable<unknown>, signal: AbortSignal): Readable {
  async function* gen() {
    try {
      for await (const ans of until(it, signal)) yield line({ code: 0, message: '', data: ans });
    } catch (e) {
      if (signal.aborted) return;
      const m = messageOf(e);
      yield line({ code: 500, message: m, data: { answer: `**ERROR**: ${m}`, reference: [] } });
    }
    if (!signal.aborted) yield line({ code: 0, message: '', data: true });
  }
  return Readable.from(gen(), { objectMode: false });
}

/**
 * The agent stream (§10): each canvas event as it is, then `data:[DONE]`; a failure mid-run is
 * RAGFlow's `{"code":500,"message":…,"data":false}` before the `[DONE]`.
 */
export function eventsSse(it: AsyncIterable<unknown>, signal: AbortSignal): Readable {
  async function* gen() {
    try {
      for await (const ev of until(it, signal)) yield line(ev);
    } catch (e) {
      if (signal.aborted) return;
      yield line({ code: 500, message: messageOf(e), data: false });
    }
    if (!signal.aborted) yield line('[DONE]');
  }
  return Readable.from(gen(), { objectMode: false });
}

type Chunk = { id?: unknown; created?: unknown; model?: unknown; object?: unknown; [k: string]: unknown };

/** The OpenAI-compatible stream as SSE text; `fallback` fills the closing chunk if none came. */
export function openaiSse(it: AsyncIterable<unknown>, signal: AbortSignal, fallback: { id: string; model: string }): Readable {
  async function* gen() {
    let last: Chunk | undefined;
    try {
      for await (const c of until(it, signal)) {
        last = c as Chunk;
        yield line(c);
      }
    } catch (e) {
      if (signal.aborted) return;
      const base = {
        id: last?.id ?? fallback.id, object: 'chat.completion.chunk', created: last?.created ?? Math.floor(Date.now() / 1000),
        model: last?.model ?? fallback.model, system_fingerprint: '',
      };
      const delta = { role: 'assistant', function_call: null, tool_calls: null };
      yield line({ ...base, choices: [{ delta: { ...delta, content: `**ERROR**: ${messageOf(e)}`, reasoning_content: null }, finish_reason: null, index: 0, logprobs: null }], usage: null });
      yield line({ ...base, choices: [{ delta: { ...delta, content: null, reasoning_content: null }, finish_reason: 'stop', index: 0, logprobs: null }], usage: null });
    }
    if (!signal.aborted) yield line('[DONE]');
  }
  return Readable.from(gen(), { objectMode: false });
}

/**
 * Embeddings through an OpenAI-compatible HTTP API: `POST {baseUrl}/embeddings`.
 * Works with OpenAI (`https://api.openai.com/v1`), Ollama (`http://localhost:11434/v1`),
 * vLLM (`http://host:8000/v1`) and Hugging Face TEI's OpenAI route (`http://host:8080/v1`).
 */
import type { Embedder } from '../types.js';
import { serverErrorMessage as serverMessage } from '../../util/index.js';

export interface OpenAIHttpEmbedderOptions {
  /** The model id, `name@factory`. */
  id: string;
  /** The model name sent to the server, e.g. `text-embedding-3-small` or `nomic-embed-text`. */
  model: string;
  /** API base URL including the version path, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /** Texts per request. @default 64 */
  batchSize?: number;
  /** Requested output dimension (OpenAI `text-embedding-3-*` only); also the known `dim`. */
  dimensions?: number;
  /** Per-request timeout. @default 60_000 (ms) */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx or a network error. @default 4 */
  maxRetries?: number;
  /** First backoff delay, doubled on each retry (a `Retry-After` header wins). @default 500 (ms) */
  retryBaseMs?: number;
  /** Extra request headers (e.g. `api-key` for Azure-style gateways). */
  headers?: Record<string, string>;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
}

export const OPENAI_HTTP_DEFAULTS = Object.freeze({
  batchSize: 64 /* texts per request */,
  timeoutMs: 60_000 /* ms */,
  maxRetries: 4,
  retryBaseMs: 500 /* ms */,
});

/** An HTTP error from the embedding server; `status` is the HTTP status (0: no response). */
export class EmbeddingHttpError extends Error {
  override name = 'EmbeddingHttpError';
  constructor(
    message: string,
    readonly status: number,
    opts?: ErrorOptions,
  ) {
    super(message, opts);
  }
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: number[] | string }[];
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function l2normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}

/** Decodes an `encoding_format: "base64"` embedding (little-endian float32), which some servers send anyway. */
function decodeBase64(s: string): Float32Array {
  const b = Buffer.from(s, 'base64');
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

export class OpenAIHttpEmbedder implements Embedder {
  readonly id: string;
  dim?: number;
  private readonly o: Required<Omit<OpenAIHttpEmbedderOptions, 'apiKey' | 'dimensions' | 'headers' | 'fetch'>> &
    Pick<OpenAIHttpEmbedderOptions, 'apiKey' | 'dimensions' | 'headers'>;
  private readonly fetchFn: typeof fetch;

  constructor(opts: OpenAIHttpEmbedderOptions) {
    if (!opts || typeof opts !== 'object') throw new TypeError('OpenAIHttpEmbedder: options are required');
    if ('baseURL' in opts) throw new TypeError('Unknown option "baseURL"; did you mean "baseUrl"?');
    if (!opts.model) throw new TypeError('OpenAIHttpEmbedder: "model" is required');
    if (!opts.baseUrl) throw new TypeError('OpenAIHttpEmbedder: "baseUrl" is required');
    const batchSize = opts.batchSize ?? OPENAI_HTTP_DEFAULTS.batchSize;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new TypeError('OpenAIHttpEmbedder: "batchSize" must be a positive integer');
    this.id = opts.id;
    this.dim = opts.dimensions;
    this.fetchFn = opts.fetch ?? globalThis.fetch;
    this.o = {
      id: opts.id,
      model: opts.model,
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
      apiKey: opts.apiKey,
      dimensions: opts.dimensions,
      headers: opts.headers,
      batchSize,
      timeoutMs: opts.timeoutMs ?? OPENAI_HTTP_DEFAULTS.timeoutMs,
      maxRetries: opts.maxRetries ?? OPENAI_HTTP_DEFAULTS.maxRetries,
      retryBaseMs: opts.retryBaseMs ?? OPENAI_HTTP_DEFAULTS.retryBaseMs,
    };
  }

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    // Empty strings get zero vectors without a request (several servers reject empty input).
    const todo: number[] = [];
    texts.forEach((t, i) => (t.trim() === '' ? undefined : todo.push(i)));
    for (let s = 0; s < todo.length; s += this.o.batchSize) {
      const idx = todo.slice(s, s + this.o.batchSize);
      const vecs = await this.request(idx.map((i) => texts[i]!), opts.signal);
      idx.forEach((i, j) => (out[i] = vecs[j]!));
    }
    const dim = this.dim;
    for (let i = 0; i < texts.length; i++) {
      if (out[i]) continue;
      if (dim === undefined) {
        // No vector seen yet (every text empty): learn the dimension from one probe request.
        const [probe] = await this.request([' '], opts.signal);
        this.dim = probe!.length;
      }
      out[i] = new Float32Array(this.dim!);
    }
    return out;
  }

  private async request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const url = `${this.o.baseUrl}/embeddings`;
    const body = JSON.stringify({
      model: this.o.model,
      input,
      encoding_format: 'float',
      ...(this.o.dimensions !== undefined ? { dimensions: this.o.dimensions } : {}),
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...this.o.headers };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;

    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(this.o.timeoutMs);
      const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let res: Response;
      try {
        res = await this.fetchFn(url, { method: 'POST', headers, body, signal: sig });
      } catch (err) {
        if (signal?.aborted) throw err;
        const what = timeout.aborted ? `timed out after ${this.o.timeoutMs} ms` : `failed: ${(err as Error).message}`;
        if (attempt < this.o.maxRetries) {
          await sleep(this.backoff(attempt), signal);
          continue;
        }
        throw new EmbeddingHttpError(`Embedding request to ${url} ${what}`, 0, { cause: err });
      }
      if (res.ok) return this.parse(await res.text(), input.length, url);
      const text = await res.text().catch(() => '');
      if ((res.status === 429 || res.status >= 500) && attempt < this.o.maxRetries) {
        await sleep(this.backoff(attempt, res.headers.get('retry-after')), signal);
        continue;
      }
      throw new EmbeddingHttpError(
        `Embedding model "${this.o.model}" at ${url} returned HTTP ${res.status}: ${serverMessage(text)}`,
        res.status,
      );
    }
  }

  private backoff(attempt: number, retryAfter?: string | null): number {
    const s = retryAfter ? Number(retryAfter) : NaN;
    if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, 60_000);
    return this.o.retryBaseMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
  }

  private parse(text: string, n: number, url: string): Float32Array[] {
    let json: EmbeddingsResponse;
    try {
      json = JSON.parse(text) as EmbeddingsResponse;
    } catch (err) {
      throw new EmbeddingHttpError(`Embedding server at ${url} sent a body that is not JSON: ${text.slice(0, 200)}`, 200, { cause: err });
    }
    const data = json.data;
    if (!Array.isArray(data) || data.length !== n) {
      throw new EmbeddingHttpError(
        `Embedding server at ${url} returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${n} inputs`,
        200,
      );
    }
    const out: Float32Array[] = new Array(n);
    data.forEach((d, pos) => {
      const i = typeof d.index === 'number' ? d.index : pos;
      const e = d.embedding;
      if (i < 0 || i >= n || out[i] || (!Array.isArray(e) && typeof e !== 'string')) {
        throw new EmbeddingHttpError(`Embedding server at ${url} returned a malformed "data" array`, 200);
      }
      out[i] = l2normalize(typeof e === 'string' ? decodeBase64(e) : Float32Array.from(e));
    });
    const dim = out[0]!.length;
    if (out.some((v) => v.length !== dim) || (this.dim !== undefined && dim !== this.dim)) {
      throw new EmbeddingHttpError(`Embedding server at ${url} returned vectors of dimension ${dim}, expected ${this.dim ?? dim}`, 200);
    }
    this.dim = dim;
    return out;
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddingHttpError, OpenAIHttpEmbedder } from '../../src/embed/providers/openai-http.js';

interface Seen { auth?: string; body: { model: string; input: string[]; encoding_format?: string; dimensions?: number } }

/** A loopback server speaking the OpenAI embeddings protocol, with scriptable failures. */
let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let failures: { status: number; body: string; headers?: Record<string, string> }[] = [];
let shuffle = false;

/** A deterministic 4-d vector for a text (not normalised, to check the client normalises). */
const vec = (t: string) => [t.length, t.charCodeAt(0) || 0, 1, 2];

function handle(req: IncomingMessage, res: ServerResponse) {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(raw) as Seen['body'];
    seen.push({ auth: req.headers.authorization, body });
    const f = failures.shift();
    if (f) {
      res.writeHead(f.status, { 'content-type': 'application/json', ...f.headers }).end(f.body);
      return;
    }
    let data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: vec(t) }));
    if (shuffle) data = data.reverse();
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }),
    );
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  seen = [];
  failures = [];
  shuffle = false;
});

const make = (o: Partial<ConstructorParameters<typeof OpenAIHttpEmbedder>[0]> = {}) =>
  new OpenAIHttpEmbedder({ id: 'text-embedding-3-small@OpenAI', model: 'text-embedding-3-small', baseUrl, retryBaseMs: 5, ...o });

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe('OpenAIHttpEmbedder#embed()', () => {
  it('sends model, input and encoding_format, and returns L2-normalised vectors (only required params)', async () => {
    const e = make();
    const out = await e.embed(['hello', 'a']);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toEqual({ model: 'text-embedding-3-small', input: ['hello', 'a'], encoding_format: 'float' });
    expect(seen[0]!.auth).toBeUndefined();
    expect(out).toHaveLength(2);
    expect(e.dim).toBe(4);
    for (const v of out) expect(norm(v)).toBeCloseTo(1, 5);
    const raw = vec('hello');
    expect(out[0]![0]).toBeCloseTo(raw[0]! / Math.hypot(...raw), 5);
  });

  it('sends the bearer key and the dimensions (required and optional params)', async () => {
    const e = make({ apiKey: 'sk-test', dimensions: 4, batchSize: 8, timeoutMs: 5_000, baseUrl: `${baseUrl}/` });
    await e.embed(['x']);
    expect(seen[0]!.auth).toBe('Bearer sk-test');
    expect(seen[0]!.body.dimensions).toBe(4);
  });

  it('splits into batches of batchSize and keeps the input order', async () => {
    const texts = Array.from({ length: 7 }, (_, i) => 'x'.repeat(i + 1));
    const out = await make({ batchSize: 3 }).embed(texts);
    expect(seen.map((s) => s.body.input.length)).toEqual([3, 3, 1]);
    expect(seen.flatMap((s) => s.body.input)).toEqual(texts);
    out.forEach((v, i) => {
      const raw = vec(texts[i]!);
      expect(v[0]).toBeCloseTo(raw[0]! / Math.hypot(...raw), 5);
    });
  });

  it('orders the vectors by data[].index, not by position', async () => {
    shuffle = true;
    const out = await make().embed(['a', 'bb', 'ccc']);
    const first = (t: string) => vec(t)[0]! / Math.hypot(...vec(t));
    expect(out.map((v) => v[0])).toEqual(['a', 'bb', 'ccc'].map((t) => expect.closeTo(first(t), 5)));
  });

  it('gives empty strings zero vectors without sending them', async () => {
    const out = await make().embed(['', 'abc', '  ']);
    expect(seen[0]!.body.input).toEqual(['abc']);
    expect(Array.from(out[0]!)).toEqual([0, 0, 0, 0]);
    expect(Array.from(out[2]!)).toEqual([0, 0, 0, 0]);
    expect(norm(out[1]!)).toBeCloseTo(1, 5);
  });

  it('retries after 429 and 503, then succeeds', async () => {
    failures = [
      { status: 429, body: '{"error":{"message":"Rate limit reached"}}', headers: { 'retry-after': '0' } },
      { status: 503, body: 'overloaded' },
    ];
    const out = await make().embed(['retry me']);
    expect(seen).toHaveLength(3);
    expect(norm(out[0]!)).toBeCloseTo(1, 5);
  });

  it('gives up after maxRetries with the last status', async () => {
    failures = Array.from({ length: 5 }, () => ({ status: 500, body: '{"error":"boom"}' }));
    const err = await make({ maxRetries: 2 }).embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingHttpError);
    expect((err as EmbeddingHttpError).status).toBe(500);
    expect((err as Error).message).toMatch(/HTTP 500: boom/);
    expect(seen).toHaveLength(3);
  });

  it('surfaces a 401 at once with the status and the server message', async () => {
    failures = [{ status: 401, body: '{"error":{"message":"Incorrect API key provided: sk-bad","type":"invalid_request_error"}}' }];
    const err = await make({ apiKey: 'sk-bad' }).embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as EmbeddingHttpError).status).toBe(401);
    expect((err as Error).message).toBe(
      `Embedding model "text-embedding-3-small" at ${baseUrl}/embeddings returned HTTP 401: Incorrect API key provided: sk-bad`,
    );
    expect(seen).toHaveLength(1);
  });

  it('reports an unreachable server clearly', async () => {
    const e = make({ baseUrl: 'http://127.0.0.1:1/v1', maxRetries: 0 });
    await expect(e.embed(['x'])).rejects.toThrow(/Embedding request to http:\/\/127\.0\.0\.1:1\/v1\/embeddings failed/);
  });

  it('rejects a misspelled baseURL option', () => {
    expect(() => new OpenAIHttpEmbedder({ id: 'x@OpenAI', model: 'x', baseUrl: '', baseURL: 'y' } as never)).toThrow(
      /did you mean "baseUrl"/,
    );
  });
});

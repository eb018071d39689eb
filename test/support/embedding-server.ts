import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server speaking the OpenAI embeddings protocol (`POST /v1/embeddings`), standing in
 * for a hosted model. Vectors are hashed bags of words, so texts sharing words are close.
 */
export interface FakeEmbeddingServer {
  url: string;
  requests: Array<{ auth: string | undefined; body: { model: string; input: string[] } }>;
  close(): Promise<void>;
}

export function hashedVector(text: string, dim = 64): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    v[(h >>> 0) % dim]! += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** `delayMs`: each answer waits this long (a hosted model's latency), so embedding takes at least that per request. */
export async function startEmbeddingServer(dim = 64, opts: { delayMs?: number } = {}): Promise<FakeEmbeddingServer> {
  const requests: FakeEmbeddingServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = JSON.parse(raw) as { model: string; input: string[] };
      requests.push({ auth: req.headers.authorization, body });
      const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: hashedVector(t, dim) }));
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', model: body.model, data, usage: { prompt_tokens: 0, total_tokens: 0 } }));
      if (opts.delayMs) setTimeout(answer, opts.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

import { describe, expect, it, afterAll } from 'vitest';
import { IngestWorker, IngestError } from '../../src/ingest/worker/index.js';

const big = new TextEncoder().encode(Array.from({ length: 400_000 }, (_, i) => `word${i % 5000}${i % 10 === 9 ? '\n' : ' '}`).join(''));

describe('IngestWorker', () => {
  const slow = new IngestWorker({ parseTimeoutMs: 5, maxHeapMb: 1024 });
  afterAll(() => slow.close());

  it('stops a file that takes longer than the time bound, then serves the next job with a fresh thread', async () => {
    const err = await slow.parse(big, 'big.txt', 'naive', { chunk_token_num: 128 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect((err as Error).message).toMatch(/Parsing took longer than 0 s and was stopped/);
    const fast = new IngestWorker();
    const out = await fast.parse(new TextEncoder().encode('small text'), 'a.txt', 'naive', { chunk_token_num: 128 });
    expect(out.chunks.map((c) => c.content.trim())).toEqual(['small text']);
    await fast.close();
  });

  it('cancels a running job through its signal', async () => {
    const w = new IngestWorker();
    await w.parse(new TextEncoder().encode('warm up'), 'w.txt', 'naive', {}); // the thread is up
    const ac = new AbortController();
    const p = w.parse(big, 'big.txt', 'naive', { chunk_token_num: 16 }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 5);
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    const again = await w.parse(new TextEncoder().encode('after cancel'), 'b.txt', 'naive', {});
    expect(again.chunks).toHaveLength(1);
    await w.close();
  });

  it('reports parser failures with their message', async () => {
    const w = new IngestWorker();
    await expect(w.parse(new Uint8Array(), 'empty.pdf', 'naive', {})).rejects.toThrow(/empty/i);
    await w.close();
  });
});

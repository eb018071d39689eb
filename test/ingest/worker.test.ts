import { describe, expect, it, afterAll } from 'vitest';
import { IngestWorker, IngestError, type ParseOutcome } from '../../src/ingest/worker/index.js';
import { chunkTokenCount } from '../../src/ingest/chunkers/index.js';

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

  it('runs jobs in the order posted: a job cancelled while in line is dropped, the running one goes on', async () => {
    const w = new IngestWorker();
    await w.parse(new TextEncoder().encode('warm up'), 'w.txt', 'naive', {});
    const ac = new AbortController();
    const first = w.parse(big, 'big.txt', 'naive', { chunk_token_num: 64 });
    const second = w.parse(new TextEncoder().encode('in line'), 'b.txt', 'naive', {}, { signal: ac.signal });
    const third = w.parse(new TextEncoder().encode('after it'), 'c.txt', 'naive', {});
    ac.abort();
    await expect(second).rejects.toMatchObject({ name: 'AbortError' });
    expect((await first).chunks.length).toBeGreaterThan(10); // the thread was not stopped
    expect((await third).chunks.map((c) => c.content.trim())).toEqual(['after it']);
    await w.close();
  });

  it('a job stopped while running takes its thread along: jobs in line behind it fail as `queued`, to be posted again', async () => {
    const w = new IngestWorker();
    await w.parse(new TextEncoder().encode('warm up'), 'w.txt', 'naive', {});
    const ac = new AbortController();
    const running = w.parse(big, 'big.txt', 'naive', { chunk_token_num: 16 }, { signal: ac.signal });
    const behind = w.embed('ragloom-static-en-256@Builtin', ['a text in line']);
    setTimeout(() => ac.abort(), 5);
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    const err = await behind.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect((err as IngestError).kind).toBe('queued');
    expect(await w.embed('ragloom-static-en-256@Builtin', ['posted again'])).toHaveLength(1);
    await w.close();
  });

  it('parses several files in one job; a file the parser refuses fails in its place', async () => {
    const w = new IngestWorker();
    const out = await w.parseMany([
      { data: new TextEncoder().encode('first file'), filename: 'a.txt', method: 'naive', parserConfig: {} },
      { data: new Uint8Array(), filename: 'empty.pdf', method: 'naive', parserConfig: {} },
      { data: new TextEncoder().encode('third file'), filename: 'c.md', method: 'naive', parserConfig: {} },
    ]);
    expect(out[1]).toBeInstanceOf(IngestError);
    expect((out[1] as Error).message).toMatch(/empty/i);
    expect([out[0], out[2]].map((r) => (r as { chunks: Array<{ content: string }> }).chunks.map((c) => c.content.trim()))).toEqual([['first file'], ['third file']]);
    const first = out[0] as ParseOutcome;
    expect(first.tokens).toEqual(first.chunks.map(chunkTokenCount)); // counted in the worker, as the store sums them
    await w.close();
  });

  it('reports parser failures with their message', async () => {
    const w = new IngestWorker();
    await expect(w.parse(new Uint8Array(), 'empty.pdf', 'naive', {})).rejects.toThrow(/empty/i);
    await w.close();
  });
});

import { describe, expect, it, afterAll } from 'vitest';
import { IngestWorker } from '../../src/ingest/worker/index.js';
import { ftsTerms } from '../../src/text/index.js';

describe('IngestWorker full-text rows', () => {
  const w = new IngestWorker();
  afterAll(() => w.close());

  it('returns each parsed chunk with its full-text row, as the store would analyse it', async () => {
    const text = Array.from({ length: 300 }, (_, i) => `Heated wings ${i} investigations; café naïve 模型 l'été it's`).join('\n');
    const out = await w.parse(new TextEncoder().encode(text), 'Wing Icing Report.txt', 'naive', { chunk_token_num: 64 });
    expect(out.chunks.length).toBeGreaterThan(3);
    expect(out.terms).toEqual(out.chunks.map((c) => ftsTerms('Wing Icing Report.txt', c.indexText ?? c.content, c.important_keywords, c.questions)));
  });

  it('uses the index text of chunk methods that have one (qa: the question)', async () => {
    const csv = 'Question,Answer\nWhy do wings ice?,Supercooled droplets freeze on contact.\nWhat is a stall?,Loss of lift.\n';
    const out = await w.parse(new TextEncoder().encode(csv), 'faq.csv', 'qa', {});
    const k = out.chunks.findIndex((c) => c.indexText?.includes('stall'));
    expect(k).toBeGreaterThanOrEqual(0);
    expect(out.terms).toEqual(out.chunks.map((c) => ftsTerms('faq.csv', c.indexText ?? c.content, c.important_keywords, c.questions)));
    expect(out.terms[k]![1]).toBe('stall');
  });

  it('analyses chunks sent on their own (the analyze job)', async () => {
    const items = [
      { title: 'A Report.pdf', text: 'Running RUNS ran 3D x86_64 — Ünïcödé 東京タワー' },
      { title: 'A Report.pdf', text: '', keywords: ['Wings', 'ice'], questions: ['Why do wings ice?'] },
      { title: 'другой.docx', text: 'Привет мир, κόσμε' },
    ];
    expect(await w.analyze(items)).toEqual(items.map((i) => ftsTerms(i.title, i.text, i.keywords, i.questions)));
  });
});

describe('IngestWorker job hand-off', () => {
  it('posts a job to a running thread synchronously, so it runs while the caller keeps working', async () => {
    const w = new IngestWorker();
    await w.analyze([{ title: 't', text: 'warm up' }]); // the thread is up
    const pending = (w as unknown as { pending: Map<number, unknown> }).pending;
    const p = w.analyze([{ title: 't', text: 'posted at once' }]);
    expect(pending.size).toBe(1); // no await between the call and postMessage
    expect(await p).toEqual([ftsTerms('t', 'posted at once')]);
    await w.close();
  });
});

import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { test, enc } from '../helpers.js';
import { Client, DEFAULT_RETRIEVAL_OPTIONS } from '../../src/index.js';
import { vectorLead } from '../../src/search/retrieve.js';

// The default ranking keeps a confident vector match (RetrievalOptions.vectorMargin): with no
// vector_similarity_weight given, the vector side's best chunk, when its cosine leads the next one
// by the margin, ranks by max(similarity, vector_similarity). An explicit weight keeps RAGFlow's sum.

const TIDES = 'Tides are caused by the gravitational pull of the moon and the sun on the oceans.';
const BREAD = 'Sourdough bread rises because wild yeast and lactic acid bacteria ferment the dough.';

async function twoDocuments(c: Client): Promise<string> {
  const ds = await c.createDataset({ name: 'kb' });
  const docs = await ds.uploadDocuments([{ display_name: 'tides.txt', blob: enc(TIDES) }, { display_name: 'sourdough.txt', blob: enc(BREAD) }]);
  await ds.parseDocuments(docs.map((d) => d.id));
  return ds.id;
}

describe('vectorMargin (the default when no weight is given)', () => {
  test("a paraphrase finds the tides document first; the bread one shares only the word 'rise'", async ({ client }) => {
    const ds = await twoDocuments(client);
    const question = 'what makes the sea rise and fall';
    // Default settings (threshold 0.2): the tides document is first and is not dropped.
    const hits = await client.retrieve({ dataset_ids: [ds], question });
    expect(hits.map((h) => h.document_name)).toEqual(['tides.txt', 'sourdough.txt']);
    const [tides, bread] = hits.map((h) => ({ s: h.similarity, v: h.vector_similarity ?? NaN, t: h.term_similarity ?? NaN }));
    expect(tides!.t).toBe(0);
    expect(tides!.v - bread!.v).toBeGreaterThanOrEqual(DEFAULT_RETRIEVAL_OPTIONS.vectorMargin);
    expect(tides!.s).toBeCloseTo(tides!.v, 10);
    expect(bread!.t).toBeGreaterThan(0);
    // An explicit weight is RAGFlow's weighted sum, exactly: the bread document first, tides under the threshold.
    const given = await client.retrieve({ dataset_ids: [ds], question, vector_similarity_weight: 0.3, similarity_threshold: 0 });
    expect(given.map((h) => h.document_name)).toEqual(['sourdough.txt', 'tides.txt']);
    for (const h of given) expect(h.similarity).toBeCloseTo(0.3 * h.vector_similarity! + 0.7 * h.term_similarity!, 10);
    expect((await client.retrieve({ dataset_ids: [ds], question, vector_similarity_weight: 0.3 })).map((h) => h.document_name)).toEqual(['sourdough.txt']);
    // Where both sides agree, nothing changes the order.
    expect((await client.retrieve({ dataset_ids: [ds], question: 'why does sourdough bread rise' }))[0]!.document_name).toBe('sourdough.txt');
  });

  test('vectorMargin 0 turns it off: the default then ranks as before', async ({ dir }) => {
    const c = new Client({ path: join(dir, 'kb.db'), retrieval: { vectorMargin: 0 } });
    try {
      const ds = await twoDocuments(c);
      const hits = await c.retrieve({ dataset_ids: [ds], question: 'what makes the sea rise and fall', similarity_threshold: 0 });
      expect(hits.map((h) => h.document_name)).toEqual(['sourdough.txt', 'tides.txt']);
      expect(() => new Client({ path: join(dir, 'x.db'), retrieval: { vectorMargin: 1.5 } })).toThrow(/retrieval\.vectorMargin must be a number in \[0, 1\], got 1\.5/);
    } finally {
      await c.close();
    }
  });

  test('vectorLead(): the best candidate when it leads the next by the margin', () => {
    expect(vectorLead([{ rowid: 1, vsim: 0.47 }, { rowid: 2, vsim: 0.21 }], 0.1)).toBe(1);
    expect(vectorLead([{ rowid: 1, vsim: 0.47 }, { rowid: 2, vsim: 0.41 }], 0.1)).toBe(-1);
    expect(vectorLead([{ rowid: 5, vsim: 0.3 }, { rowid: 3, vsim: 0.3 }], 0)).toBe(3); // ties: the lower rowid
    expect(vectorLead([{ rowid: 7, vsim: 0.2 }], 0.1)).toBe(7);
    expect(vectorLead([], 0.1)).toBe(-1);
  });
});

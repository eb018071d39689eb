import { describe, expect, afterAll, beforeAll } from 'vitest';
import { join } from 'node:path';
import { test, enc } from '../helpers.js';
import { Client, type DataSet } from '../../src/index.js';
import { textQuery, expandQuery, rowTerms, scoreRows, type RetrievalOptions } from '../../src/search/index.js';
import { sqliteSearch, type Db } from '../../src/store/index.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../support/embedding-server.js';

// RM3 pseudo-relevance feedback on the text side (src/search/fulltext.ts expandQuery, applied
// to the result window in src/search/retrieve.ts).

let emb: FakeEmbeddingServer;
beforeAll(async () => {
  emb = await startEmbeddingServer(64);
});
afterAll(async () => {
  await emb.close();
});

const MODEL = 'hash-64@OpenAI-API-Compatible';
const open = (dir: string, retrieval?: Partial<RetrievalOptions>) => new Client({
  path: join(dir, 'kb.db'),
  models: [{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: emb.url }],
  retrieval,
});
const dbOf = (c: Client) => sqliteSearch((c as unknown as { api: { engine: { db: Db } } }).api.engine.db);

// Five chunks about plasma confinement that all say "tokamak"; one chunk that says "tokamak"
// but never the question's words; filler on other subjects.
const RELEVANT = [
  'plasma confinement in a tokamak with magnetic coils',
  'tokamak plasma confinement and the tokamak divertor',
  'confinement time of a hot plasma in the tokamak',
  'plasma confinement: tokamak stability limits',
  'magnetic plasma confinement, tokamak experiments',
];
const EXPANSION_ONLY = 'the tokamak divertor handles heat exhaust';
const FILLER = [
  'bread dough rises with yeast', 'a sonnet has fourteen lines', 'glaciers carve valleys slowly',
  'violin strings are tuned in fifths', 'chess openings reward development', 'coral reefs host many fish',
  'sourdough starter needs feeding', 'marathon runners pace themselves',
];

async function fixture(c: Client): Promise<DataSet> {
  const ds = await c.createDataset({ name: 'kb', embedding_model: MODEL });
  const texts = [...RELEVANT, EXPANSION_ONLY, ...FILLER];
  const docs = await ds.uploadDocuments(texts.map((_, i) => ({ display_name: `d${i}.txt`, blob: enc('x') })));
  for (const [i, d] of docs.entries()) await d.addChunk({ content: texts[i]! });
  return ds;
}


describe('term feedback (RM3)', () => {
  test('a window chunk with the feedback terms but none of the question gains term_similarity, only with feedback', async ({ dir }) => {
    const c = open(dir);
    // A second Client on the same file, without term feedback (a per-client setting).
    const noFeedback = open(dir, { termFeedbackDocs: 0 });
    try {
      const ds = await fixture(c);
      const ask = (client = c) => client.retrieve({ dataset_ids: [ds.id], question: 'plasma confinement', similarity_threshold: 0, page_size: 30 });
      const off = await ask(noFeedback);
      const on = await ask();
      const find = (cs: typeof on) => cs.find((x) => x.content === EXPANSION_ONLY)!;
      expect(find(off).term_similarity).toBe(0);
      expect(find(on).term_similarity).toBeGreaterThan(0);
      // Its similarity rises by (1 − w)·term_similarity; the vector side is unchanged.
      expect(find(on).vector_similarity!).toBeCloseTo(find(off).vector_similarity!, 12);
      expect(find(on).similarity!).toBeCloseTo(find(off).similarity! + 0.7 * find(on).term_similarity!, 12);
      for (const ch of on) {
        expect(ch.term_similarity).toBeGreaterThanOrEqual(0);
        expect(ch.term_similarity).toBeLessThanOrEqual(1);
        expect(ch.similarity!).toBeCloseTo(0.3 * ch.vector_similarity! + 0.7 * ch.term_similarity!, 12);
      }
      // Deterministic: the same call gives the same scores.
      expect((await ask()).map((x) => [x.id, x.similarity])).toEqual(on.map((x) => [x.id, x.similarity]));
      // Not applied when the vector side has all the weight, nor for BM25 alone when off.
      const w1 = await c.retrieve({ dataset_ids: [ds.id], question: 'plasma confinement', similarity_threshold: 0, vector_similarity_weight: 1 });
      expect(find(w1).term_similarity).toBe(0);
    } finally {
      await noFeedback.close();
      await c.close();
    }
  });

  test('the expanded query: the question keeps its share, expansion terms share the rest by their weight in the feedback', async ({ dir }) => {
    const c = open(dir);
    try {
      await fixture(c);
      const db = dbOf(c);
      const q = textQuery(db, 'plasma confinement');
      const fbRows = [...rowTerms(db, [1, 2, 3])];
      const x = expandQuery(db, q, fbRows.map(([, cols]) => [cols, 1]), { terms: 3, origWeight: 0.5 });
      const w = x.weights!;
      const total = [...w.values()].reduce((a, b) => a + b, 0);
      expect(total).toBeCloseTo(1, 12);
      // "tokamak" is in every feedback row: it is an expansion term; the question's terms keep ≥ 0.25 each.
      expect(w.get('tokamak')).toBeGreaterThan(0);
      expect(w.get('plasma')).toBeGreaterThanOrEqual(0.25);
      expect(w.get('confin')).toBeGreaterThanOrEqual(0.25);
      expect(x.terms.length).toBeLessThanOrEqual(2 + 3);
      // The bound holds: a row made of the expanded terms scores at most 1.
      const scores = scoreRows(x, fbRows);
      expect(scores.size).toBe(3);
      for (const s of scores.values()) expect(s).toBeGreaterThan(0), expect(s).toBeLessThanOrEqual(1);
      // With feedback weight on the question only, the expansion adds nothing.
      const same = expandQuery(db, q, fbRows.map(([, cols]) => [cols, 1]), { terms: 3, origWeight: 1 });
      expect(same.terms.length).toBeGreaterThan(q.idf.size);
      for (const t of same.terms) if (!q.idf.has(t)) expect(same.weights!.get(t)).toBe(0);
      // Terms found in more rows than the cap are left out (their df walk would be long).
      const capped = expandQuery(db, q, fbRows.map(([, cols]) => [cols, 1]), { terms: 3, origWeight: 0.5, dfCap: 2 });
      expect(capped.weights!.has('tokamak')).toBe(false);
      // No feedback rows: the question as it was.
      expect(expandQuery(db, q, [], { terms: 3, origWeight: 0.5 })).toBe(q);
    } finally {
      await c.close();
    }
  });

  test('cached document frequencies follow writes', async ({ dir }) => {
    const c = open(dir);
    try {
      const ds = await fixture(c);
      const db = dbOf(c);
      // "divertor" is in two fixture chunks; dfSum is the question's summed document frequency.
      expect(textQuery(db, 'divertor').dfSum).toBe(2);
      const [d] = await ds.uploadDocuments([{ display_name: 'more.txt', blob: enc('x') }]);
      await d!.addChunk({ content: 'a second divertor design' });
      expect(textQuery(db, 'divertor').dfSum).toBe(3);
      await d!.deleteChunks({ delete_all: true });
      expect(textQuery(db, 'divertor').dfSum).toBe(2);
    } finally {
      await c.close();
    }
  });
});

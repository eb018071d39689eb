import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { test, enc } from '../helpers.js';
import { Client, type RetrievalOptions } from '../../src/index.js';
import { agreement } from '../../src/search/retrieve.js';
import type { Engine } from '../../src/core/index.js';

// The default ranking's vector agreement (RetrievalOptions.vectorAgreement, src/search/retrieve.ts):
// with no vector_similarity_weight given, each candidate's vector similarity is shrunk towards the
// candidates' mean by a = (mean term score of the vector side's best k) / (that of the text side's
// best k); an explicit weight keeps RAGFlow's formula exactly.

const DIM = 8;
const MODEL = `stub-${DIM}@OpenAI-API-Compatible`;
const NO_FEEDBACK: Partial<RetrievalOptions> = { termFeedbackDocs: 0, feedbackDocs: 0 };
const unit = (i: number, eps = 0): Float32Array => {
  const v = new Float32Array(DIM).fill(eps);
  v[i] = 1;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

/**
 * A Client whose embedding model is `embed` (no server): every chunk and question goes through it.
 * The model is registered as a remote one and its live instance replaced (as bench/speed.ts does).
 */
function open(dir: string, embed: (text: string) => Float32Array, retrieval?: Partial<RetrievalOptions>): Client {
  const c = new Client({
    path: join(dir, 'kb.db'),
    models: [{ type: 'embedding', name: `stub-${DIM}`, factory: 'OpenAI-API-Compatible', base_url: 'http://127.0.0.1:9', dim: DIM }],
    retrieval,
  });
  const e = (c as unknown as { api: { engine: Engine } }).api.engine;
  (e.models as unknown as { embedders: Map<string, unknown> }).embedders.set(MODEL, {
    id: MODEL, dim: DIM, embed: async (texts: string[]) => texts.map(embed),
  });
  return c;
}

async function fixture(c: Client, texts: string[]): Promise<string> {
  const ds = await c.createDataset({ name: 'kb', embedding_model: MODEL });
  const docs = await ds.uploadDocuments(texts.map((_, i) => ({ display_name: `d${i}.txt`, blob: enc('x') })));
  for (const [i, d] of docs.entries()) await d.addChunk({ content: texts[i]! });
  return ds.id;
}

// Three chunks hold the question's rare words (the text side's whole evidence); the vector side,
// useless here, points the question at two chunks that hold none of them.
const MATCHES = [
  'zirconium ablation of a rocket nozzle liner, zirconium ablation measured',
  'zirconium ablation in a nozzle',
  'notes on zirconium',
];
const DECOYS = ['bread dough rises with yeast', 'a sonnet has fourteen lines'];
const FILLER = ['glaciers carve valleys slowly', 'violin strings are tuned in fifths', 'chess openings reward development', 'coral reefs host many fish'];
const QUESTION = 'zirconium ablation';
/** The question and the decoys share a direction; every other chunk is elsewhere. */
const useless = (t: string): Float32Array => (t === QUESTION || DECOYS.includes(t) ? unit(0, DECOYS.indexOf(t) === 1 ? 0.05 : 0) : unit(1 + (t.length % (DIM - 1)), 0.2));

type Row = { content: string; similarity: number; vector_similarity: number; term_similarity: number };
const ask = async (c: Client, ds: string, extra: Record<string, unknown> = {}) =>
  (await c.retrieve({ dataset_ids: [ds], question: QUESTION, similarity_threshold: 0, page_size: 100, ...extra })) as unknown as Row[];

describe('agreement()', () => {
  const cand = (rowid: number, vsim: number, tsim: number) => ({ rowid, vsim, tsim });

  test('the text score of the vector side\'s best k over the text side\'s best k, in [0, 1]', () => {
    const cs = [cand(1, 0.9, 0), cand(2, 0.8, 0.1), cand(3, 0.1, 0.5), cand(4, 0.2, 0.3)];
    // vector's best 2: rows 1, 2 (tsim 0 + 0.1); text's best 2: rows 3, 4 (0.5 + 0.3)
    expect(agreement(cs, 2)).toBeCloseTo(0.1 / 0.8, 12);
    // k = 1: vector's best (row 1) has no term score
    expect(agreement(cs, 1)).toBe(0);
    // both sides' best are the same chunk
    expect(agreement([cand(1, 0.9, 0.5), cand(2, 0.1, 0.2)], 1)).toBe(1);
    for (let k = 1; k <= 4; k++) {
      const a = agreement(cs, k);
      expect(a).toBeGreaterThanOrEqual(0);
      expect(a).toBeLessThanOrEqual(1);
    }
  });

  test('1 (nothing to adapt) with fewer than k term matches, none, or no candidate', () => {
    const cs = [cand(1, 0.9, 0), cand(2, 0.8, 0), cand(3, 0.1, 0.5)];
    expect(agreement(cs, 2)).toBe(1); // one incidental match is no evidence against the vector side
    expect(agreement([cand(1, 0.9, 0), cand(2, 0.8, 0)], 2)).toBe(1);
    expect(agreement([], 10)).toBe(1);
    // k larger than the candidates: all of them
    expect(agreement([cand(1, 0.9, 0.1), cand(2, 0.1, 0.4)], 10)).toBe(1);
  });
});

describe('vectorAgreement (the default when no weight is given)', () => {
  test('a useless vector side is shrunk to its mean: the text side ranks, similarity = w·v̄ + (1 − w)·t', async ({ dir }) => {
    const c = open(dir, useless, { ...NO_FEEDBACK, agreementDepth: 2, defaultWeight: 0.7 });
    try {
      const ds = await fixture(c, [...FILLER, ...DECOYS, ...MATCHES]);
      const text = await ask(c, ds, { vector_similarity_weight: 0 });
      const plain = await ask(c, ds, { vector_similarity_weight: 0.7 });
      const adaptive = await ask(c, ds);
      // RAGFlow's formula with an explicit 0.7: the decoys (cosine 1, no term) lead.
      expect(plain.slice(0, 2).map((r) => r.content).sort()).toEqual([...DECOYS].sort());
      for (const r of plain) expect(r.similarity).toBe(0.7 * r.vector_similarity + (1 - 0.7) * r.term_similarity);
      // No weight: a = 0 (the vector side's best 2 hold no question word), so the text side's order leads.
      expect(adaptive.slice(0, 3).map((r) => r.content)).toEqual(text.slice(0, 3).map((r) => r.content));
      expect(adaptive.slice(0, 3).map((r) => r.content).sort()).toEqual([...MATCHES].sort());
      const vbar = adaptive.reduce((s, r) => s + r.vector_similarity, 0) / adaptive.length;
      expect(adaptive.length).toBe(plain.length); // every candidate is on the page
      for (const r of adaptive) {
        expect(r.similarity).toBeCloseTo(0.7 * vbar + (1 - 0.7) * r.term_similarity, 12);
        for (const x of [r.similarity, r.vector_similarity, r.term_similarity]) {
          expect(x).toBeGreaterThanOrEqual(0);
          expect(x).toBeLessThanOrEqual(1);
        }
      }
      // The reported sides are the plain ones: only the mix differs.
      const byContent = new Map(plain.map((r) => [r.content, r]));
      for (const r of adaptive) {
        expect(r.vector_similarity).toBe(byContent.get(r.content)!.vector_similarity);
        expect(r.term_similarity).toBe(byContent.get(r.content)!.term_similarity);
      }
      // Ties (all chunks without a question word) still follow the vector side.
      const rest = adaptive.filter((r) => r.term_similarity === 0);
      expect(rest.map((r) => r.vector_similarity)).toEqual([...rest.map((r) => r.vector_similarity)].sort((a, b) => b - a));
    } finally {
      await c.close();
    }
  });

  test('an explicit weight keeps RAGFlow\'s formula; off, no weight is the plain default weight', async ({ dir }) => {
    const on = open(dir, useless, { agreementDepth: 2 });
    try {
      const ds = await fixture(on, [...FILLER, ...DECOYS, ...MATCHES]);
      const off = open(dir, useless, { agreementDepth: 2, vectorAgreement: false });
      const half = open(dir, useless, { agreementDepth: 2, vectorAgreement: false, defaultWeight: 0.5 });
      try {
        // With feedback too: an explicit weight ranks the same with the setting on or off.
        for (const w of [0, 0.3, 0.7, 1]) {
          const a = await ask(on, ds, { vector_similarity_weight: w });
          expect(a).toEqual(await ask(off, ds, { vector_similarity_weight: w }));
          for (const r of a) expect(r.similarity).toBe(w * r.vector_similarity + (1 - w) * r.term_similarity);
        }
        // Off: no weight is RAGFlow's 0.3 (or `defaultWeight`), exactly.
        expect(await ask(off, ds)).toEqual(await ask(off, ds, { vector_similarity_weight: 0.3 }));
        expect(await ask(half, ds)).toEqual(await ask(half, ds, { vector_similarity_weight: 0.5 }));
        // A weight given as null or '' is no weight (as the wire's defaults treat it).
        expect(await ask(on, ds, { vector_similarity_weight: null })).toEqual(await ask(on, ds));
        expect(await ask(on, ds)).not.toEqual(await ask(on, ds, { vector_similarity_weight: 0.3 }));
      } finally {
        await off.close();
        await half.close();
      }
    } finally {
      await on.close();
    }
  });

  test('sides that agree leave the formula as it is', async ({ dir }) => {
    // The question's direction is the text side's best match's (the shortest: the chunks, added
    // through the API, have no title terms): both sides' best chunk is the same (a = 1 at depth 1).
    const agreeing = (t: string): Float32Array => (t === QUESTION || t === MATCHES[1] ? unit(0) : unit(1 + (t.length % (DIM - 1)), 0.2));
    // (vectorMargin off: the match's cosine of 1 leads the others, which would protect it.)
    const c = open(dir, agreeing, { agreementDepth: 1, vectorMargin: 0 });
    try {
      const ds = await fixture(c, [...FILLER, ...DECOYS, ...MATCHES]);
      expect(await ask(c, ds)).toEqual(await ask(c, ds, { vector_similarity_weight: 0.3 }));
    } finally {
      await c.close();
    }
  });

  test('agreementFeedback: with a = 0 neither feedback step runs (any weight)', async ({ dir }) => {
    const c = open(dir, useless, { agreementDepth: 2, agreementFeedback: true, vectorAgreement: false });
    try {
      const ds = await fixture(c, [...FILLER, ...DECOYS, ...MATCHES]);
      const bare = open(dir, useless, { ...NO_FEEDBACK, vectorAgreement: false });
      const full = open(dir, useless, { vectorAgreement: false });
      try {
        const scaled = await ask(c, ds, { vector_similarity_weight: 0.3 });
        expect(scaled).toEqual(await ask(bare, ds, { vector_similarity_weight: 0.3 }));
        expect(scaled).not.toEqual(await ask(full, ds, { vector_similarity_weight: 0.3 }));
      } finally {
        await bare.close();
        await full.close();
      }
    } finally {
      await c.close();
    }
  });

  test('bad values are TypeErrors', ({ dir }) => {
    const bad = (retrieval: unknown) => () => new Client({ path: join(dir, 'never.db'), retrieval: retrieval as Partial<RetrievalOptions> });
    expect(bad({ defaultWeight: 1.5 })).toThrow(/retrieval\.defaultWeight must be a number in \[0, 1\], got 1\.5/);
    expect(bad({ defaultWeight: -0.1 })).toThrow(TypeError);
    expect(bad({ defaultWeight: '0.3' })).toThrow(TypeError);
    expect(bad({ defaultWeight: Number.NaN })).toThrow(TypeError);
    expect(bad({ vectorAgreement: 'yes' })).toThrow(/retrieval\.vectorAgreement must be a boolean/);
    expect(bad({ agreementFeedback: 1 })).toThrow(/retrieval\.agreementFeedback must be a boolean/);
    expect(bad({ agreementDepth: 0 })).toThrow(/retrieval\.agreementDepth must be an integer ≥ 1, got 0/);
    expect(bad({ agreementDepth: 2.5 })).toThrow(TypeError);
    expect(bad({ agreementWeight: true })).toThrow(/Unknown retrieval option "agreementWeight"/);
  });
});

/**
 * Retrieval quality with a vector side made (nearly) useless, on every collection in
 * ../shared/datasets: how far does each ranking fall below text-only when the embedding does not
 * know the collection? Each configuration runs every judged query through `client.retrieve`
 * (similarity_threshold 0, page_size 100) as bench/quality.ts does, with the embeddings changed:
 *
 *   npx tsx bench/degraded-vectors.ts [--mode project|centroid] [--k 8,16,32]
 *
 *   project  (default) every chunk's and question's embedding v becomes normalise(R·v), R a fixed
 *            random k×dim matrix: an embedding that keeps little of the meaning (k = 8: vector-only
 *            nDCG@10 ≈ 0.1; 32: ≈ 0.17). The in-memory vector copy of each Client is rewritten
 *            (its private arrays; benchmark only) and searched exactly (`exactVectors`).
 *   centroid only the question: normalise(q + k·c), c the mean embedding of 400 records (every chunk
 *            looks alike to the question; k = 1: vector-only ≈ 0.18).
 *
 * Prints nDCG@10 per collection and the mean, and query-by-query wins/losses against text-only.
 */
import { parseArgs } from 'node:util';
import { loadCollections, judgedQueries, ndcg } from './lib/collections.js';
import { openCollectionDb } from './lib/collection-db.js';
import { OptionClients } from './lib/option-clients.js';
import type { RetrievalOptions } from '../src/index.js';
import { datasetVectors } from '../src/search/index.js';

const { values: args } = parseArgs({ options: { mode: { type: 'string', default: 'project' }, k: { type: 'string' } } });
const mode = args.mode === 'centroid' ? 'centroid' : 'project';
const ks = (args.k ?? (mode === 'project' ? '8,16,32' : '1')).split(',').map(Number);
const NO_FEEDBACK = { termFeedbackDocs: 0, feedbackDocs: 0 };
/** [name, Client settings, vector_similarity_weight (undefined: none given)] */
const CONFIGS: Array<[string, Partial<RetrievalOptions>, number | undefined]> = [
  ['text only (w 0), no feedback', NO_FEEDBACK, 0],
  ['text only (w 0) + RM3', { feedbackDocs: 0 }, 0],
  ['vector only (w 1), no feedback', NO_FEEDBACK, 1],
  ['hybrid w 0.2, no feedback', NO_FEEDBACK, 0.2],
  ['plain formula w 0.3 + feedback (no vector agreement)', { vectorAgreement: false }, undefined],
  ['DEFAULT (no weight given: vector agreement)', {}, undefined],
  ['vector agreement + agreement-scaled feedback', { agreementFeedback: true }, undefined],
  ['no agreement, w 0.2, Rocchio 10 docs', { vectorAgreement: false, defaultWeight: 0.2, feedbackDocs: 10 }, undefined],
];

type Embedder = { embed(t: string[]): Promise<Float32Array[]> };
type EngineBits = { store: { search: import('../src/store/index.js').SearchReader }; models: { embedder(id: string): Embedder; embedders: Map<string, unknown> } };
const engineOf = (c: unknown) => (c as { api: { engine: EngineBits } }).api.engine;
const normalise = (v: Float32Array): Float32Array => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
};
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
}

for (const k of ks) {
  const means = new Map<string, number[]>();
  const perQuery = new Map<string, number[][]>();
  for (const c of loadCollections()) {
    const db = await openCollectionDb(c, { log: (s) => process.stderr.write(`${s}\n`) });
    const clients = new OptionClients(db.client, db.clientOptions);
    const model = db.dataset.embedding_model;
    const base = engineOf(db.client).models.embedder(model);
    const sample = await base.embed(c.docs.filter((d) => d.text.trim()).slice(0, 400).map((d) => d.text));
    const dim = sample[0]!.length;
    const rnd = lcg(777);
    const R = Array.from({ length: k }, () => Float32Array.from({ length: dim }, rnd));
    const project = (v: Float32Array): Float32Array => {
      const o = new Float32Array(dim);
      for (let j = 0; j < k; j++) {
        let s = 0;
        for (let i = 0; i < dim; i++) s += R[j]![i]! * v[i]!;
        o[j] = s;
      }
      return normalise(o);
    };
    const centre = new Float32Array(dim);
    for (const v of sample) for (let i = 0; i < dim; i++) centre[i]! += v[i]!;
    const pull = (q: Float32Array) => normalise(q.map((x, i) => x + k * normalise(centre)[i]!));
    for (const [name, options, w] of CONFIGS) {
      const client = clients.get(mode === 'project' ? { ...options, exactVectors: true } : options);
      const e = engineOf(client);
      const inner = e.models.embedder(model);
      if (mode === 'project') {
        // This Client's own copy of the dataset's vectors (one per connection), rewritten once.
        const ix = (await datasetVectors(e.store.search, dim, [db.dataset.id]))!.parts[0] as unknown as { vecs: Float32Array; n: number; degraded?: boolean };
        if (!ix.degraded) {
          for (let s = 0; s < ix.n; s++) ix.vecs.set(project(ix.vecs.subarray(s * dim, (s + 1) * dim)), s * dim);
          ix.degraded = true;
        }
      }
      e.models.embedders.set(model, { ...inner, embed: async (t: string[]) => (await inner.embed(t)).map(mode === 'project' ? project : pull) });
      const scores: number[] = [];
      for (const q of judgedQueries(c)) {
        const r = await client.retrieve({ dataset_ids: [db.dataset.id], question: q.text, page_size: 100, similarity_threshold: 0, ...(w === undefined ? {} : { vector_similarity_weight: w }) });
        scores.push(ndcg(r.map((ch) => db.recordOf.get(ch.document_id)!), c.qrels.get(q.id)!, 10));
      }
      e.models.embedders.set(model, inner);
      if (!means.has(name)) means.set(name, []);
      if (!perQuery.has(name)) perQuery.set(name, []);
      means.get(name)!.push(scores.reduce((a, b) => a + b, 0) / scores.length);
      perQuery.get(name)!.push(scores);
    }
    await clients.close();
    await db.client.close();
  }
  const cols = loadCollections().map((c) => c.name);
  const text = perQuery.get(CONFIGS[0]![0])!;
  console.log(`\n${mode} ${k}\n\n| configuration | ${cols.join(' | ')} | mean | vs text only (better↑ worse↓) |\n|---|${cols.map(() => '---:|').join('')}---:|---|`);
  for (const [name] of CONFIGS) {
    const m = means.get(name)!;
    const pw = perQuery.get(name)!.map((s, ci) => {
      let up = 0;
      let down = 0;
      s.forEach((x, i) => {
        if (x > text[ci]![i]! + 1e-9) up++;
        else if (x < text[ci]![i]! - 1e-9) down++;
      });
      return `${up}↑ ${down}↓`;
    });
    console.log(`| ${name} | ${m.map((x) => x.toFixed(3)).join(' | ')} | ${(m.reduce((a, b) => a + b, 0) / m.length).toFixed(3)} | ${pw.join(', ')} |`);
  }
}

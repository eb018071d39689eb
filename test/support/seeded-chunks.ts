/**
 * Chunks written straight through the store interface (no parse): seeded text of a few words and
 * random unit vectors of the built-in embedding model's size, the same rows on every store.
 */
import type { Api } from '../../src/api/index.js';

export const DIM = 256; // the built-in embedding model's
export const WORDS = ['wing', 'flow', 'heat', 'shock', 'layer', 'panel', 'boundary', 'pressure', 'nozzle', 'flutter', 'cylinder', 'plate', 'vortex', 'drag'];

/** Seeded pseudo-random numbers in [-0.5, 0.5). */
export const rng = (seed: number) => () => ((seed = (seed * 16807) % 2147483647) / 2147483647) - 0.5;

/** Writes `n` chunks (text of the seeded words, random unit vectors) into a new document `doc` of the dataset. */
export async function addChunks(api: Api, datasetId: string, doc: string, n: number, seed: number): Promise<void> {
  const [d] = (await api.call('documents.upload', { dataset_id: datasetId, files: [{ display_name: doc, blob: new TextEncoder().encode(doc) }] })) as Array<{ id: string }>;
  const store = api.engine.store;
  await store.parse.reset([d!.id], api.engine.local.tenantId);
  await store.parse.finish([], [{
    id: d!.id, dataset_id: datasetId, language: 'English', log: [], doneLines: [], failLine: '', seconds: 0, began: 0,
    chunks: Array.from({ length: n }, (_, j) => {
      const r = rng(seed * 100_003 + j + 1);
      const v = Float32Array.from({ length: DIM }, r);
      const norm = Math.hypot(...v);
      const text = Array.from({ length: 12 }, (_, k) => WORDS[Math.floor((r() + 0.5) * WORDS.length) % WORDS.length]! + (k % 3 === 0 ? ` ${j % 37}` : '')).join(' ');
      return {
        id: `${doc}-${j}`, document_id: d!.id, dataset_id: datasetId, content: text, title: doc, important_keywords: [], questions: [], tag_kwd: [],
        positions: [], available: true, chunk_order: j, token_num: 12, create_time: '2024-01-01 00:00:00', create_timestamp: 1_700_000_000,
        vector: v.map((x) => x / norm),
      };
    }),
  }], 1, Date.now());
}

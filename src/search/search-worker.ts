/**
 * A search thread of search-pool.ts: its own read-only store and in-memory indexes, built when it
 * starts (the term index, and each dataset's vectors while they fit its budget), then one ranking
 * (retrieve.ts `rank`) per message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from '../store/index.js';
import { rank } from './retrieve.js';
import { termIndex, termIndexOptions } from './term-index.js';
import { vectorSearchOptions } from './vector-index.js';
import { preloadDatasetVectors, setIndexMemory, termsPerDataset } from './dataset-vectors.js';
import type { FromSearchWorker, SearchWorkerData, ToSearchWorker } from './search-pool.js';

class EmbedFailed extends Error {}

const port = parentPort!;
const data = workerData as SearchWorkerData;
Object.assign(termIndexOptions, data.termIndex);
Object.assign(vectorSearchOptions, data.vectorSearch);
// Read through a memory map: a retrieval reads scattered chunk rows, and SQLite's own page cache
// (2 MB) holds few of them; mapped, a page is read without a copy (~35% off those look-ups).
const store = new SqliteStore(data.path, { readonly: true, mmapBytes: 1073741824 });
const reader = store.search;
setIndexMemory(reader, data.indexMemory ?? Infinity);
const send = (m: FromSearchWorker) => port.postMessage(m);

// Build the copies now, not on the first request a client waits for.
try {
  // Under a budget, each dataset's term index instead (preloaded below while it fits).
  if (!termsPerDataset(reader)) await termIndex(reader);
  // Every dataset's vectors while they fit the budget (the rest load on their first search).
  const datasets = (await store.datasets.analyses()).map((d) => d.id);
  await preloadDatasetVectors(reader, await reader.chunkDims(), datasets);
} catch {
  // A failure here shows again, with its request, on the first search.
}

port.on('message', (m: ToSearchWorker) => {
  void (async () => {
    try {
      const vector = m.vector;
      const result = await rank(reader, {
        ...m.req,
        embedQuestion: async () => {
          if (!vector) throw new EmbedFailed();
          return vector;
        },
      });
      send({ type: 'done', id: m.id, result });
    } catch (e) {
      if (e instanceof EmbedFailed) send({ type: 'embed-failed', id: m.id });
      else {
        const err = e as Error;
        send({ type: 'error', id: m.id, name: err?.name ?? 'Error', message: err?.message ?? String(e), stack: err?.stack });
      }
    }
  })();
});

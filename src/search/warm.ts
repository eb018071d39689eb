/**
 * Loading a process's search indexes ahead of its first searches (a server's start), so that no
 * client waits for them: what SQLite's search threads do when they start (search-worker.ts), for
 * a server whose searches run in its own thread (PostgreSQL).
 */
import type { SearchReader } from '../store/index.js';
import { preloadDatasetVectors, termsPerDataset } from './dataset-vectors.js';
import { buildTermIndexInBackground } from './term-index.js';

/**
 * In order: the full-text engine's copy (PostgreSQL's FTS5 copy, which searches read until the
 * term index is built), each of `datasets`' vectors while they fit the memory budget, then the
 * term index (under a budget: each dataset's, while they fit). Searches are served meanwhile and rank as they would with everything loaded: they
 * share a load under way (or load what they need themselves), and read FTS5 until the term index
 * is built. Resolves when done; a failure is reported through `log` (as the other background work
 * reports its own, e.g. memory extraction) and otherwise left to the searches, which load what
 * they need again and answer with an ApiError of their own if the store still fails them.
 */
export async function warmSearch(reader: SearchReader, datasets: readonly string[], log: (msg: string) => void = console.warn): Promise<void> {
  try {
    await reader.syncFullText?.('chunk_fts');
    await preloadDatasetVectors(reader, await reader.chunkDims(), datasets);
  } catch (e) {
    log(`ragloom search: preloading the search indexes failed: ${e instanceof Error ? e.message : String(e)}; each search loads what it needs`);
  }
  // Under a memory budget the term index is per dataset (preloaded above while it fits).
  if (!termsPerDataset(reader)) await buildTermIndexInBackground(reader);
}

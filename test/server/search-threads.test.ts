/**
 * `startServer({ searchThreads })`: retrievals run on worker threads with their own read-only
 * connections and indexes (src/search/search-pool.ts). They must answer exactly as the server's
 * own thread does, and see every write the moment it is committed.
 */
import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { SearchPool, attachSearchPool, detachSearchPool } from '../../src/search/index.js';
import { sqliteSearch, type Db } from '../../src/store/index.js';

const LINES = Array.from({ length: 300 }, (_, i) =>
  `note ${i}: the ${['harbour', 'pier', 'tide', 'lighthouse', 'ferry'][i % 5]} and the ${['north', 'south', 'east'][i % 3]} wall, entry ${i % 17}`);

/** Runs `f` with a pool of `threads` attached to the Client's connection; detaches and closes it after. */
async function withPool(c: Client, path: string, threads: number, f: (pool: SearchPool) => Promise<void>): Promise<void> {
  const db = sqliteSearch((c as unknown as { api: { engine: { db: Db } } }).api.engine.db);
  const pool = new SearchPool({ path, threads });
  attachSearchPool(db, pool);
  try {
    await f(pool);
  } finally {
    detachSearchPool(db);
    await pool.close();
  }
}

/** A dataset of one document holding these chunks, in a new Client over `path`. */
async function chunksKb(path: string, contents: string[]) {
  const c = new Client({ path });
  const ds = await c.createDataset({ name: 'kb' });
  const [doc] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: new TextEncoder().encode('x') }]);
  const chunks = [];
  for (const content of contents) chunks.push(await doc!.addChunk({ content }));
  return { c, ds, chunks };
}

describe('startServer({ searchThreads })', () => {
  test('retrieval on search threads equals retrieval in-process, and follows writes at once', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const threaded = await startServer({ path, port: 0, searchThreads: 2 });
    const local = new Client({ path });
    try {
      const remote = new Client({ baseUrl: threaded.url, apiKey: threaded.apiKey });
      const ds = await remote.createDataset({ name: 'kb', chunk_method: 'naive', parser_config: { chunk_token_num: 16, delimiter: '`\n`' } });
      const [doc] = await ds.uploadDocuments([{ display_name: 'notes.txt', blob: new TextEncoder().encode(LINES.join('\n')) }]);
      await ds.parseDocuments([doc!.id], { pollMs: 20 });
      const questions = ['harbour wall', 'the ferry entry 3', 'lighthouse north', 'tide', 'nothing like it', 'south wall entry 12'];
      for (const question of questions) {
        for (const extra of [{}, { page_size: 5, page: 3, similarity_threshold: 0 }, { vector_similarity_weight: 0.9, highlight: true }]) {
          const params = { dataset_ids: [ds.id], question, ...extra };
          // The local Client runs on this thread with its own indexes: the same answer, number for number.
          expect(await remote.retrieveWithTotals(params)).toEqual(await local.retrieveWithTotals(params));
        }
      }
      // A write through the server's own connection, seen by the next retrieval on any thread.
      const [d] = await ds.listDocuments({ id: doc!.id });
      for (let i = 0; i < 4; i++) {
        const added = await d!.addChunk({ content: `pelicanword${i} on the harbour wall` });
        const got = await remote.retrieve({ dataset_ids: [ds.id], question: `pelicanword${i}`, similarity_threshold: 0.05, vector_similarity_weight: 0.01 });
        expect(got.map((c) => c.id)).toEqual([added!.id]);
        await d!.deleteChunks({ ids: [added.id] });
        expect(await remote.retrieve({ dataset_ids: [ds.id], question: `pelicanword${i}`, similarity_threshold: 0.05, vector_similarity_weight: 0.01 })).toEqual([]);
      }
      // A write from another connection (another process, as far as the threads know).
      const [dl] = await (await local.listDatasets({ id: ds.id }))[0]!.listDocuments({ id: doc!.id });
      const other = await dl!.addChunk({ content: 'cormorantword dries its wings' });
      expect((await remote.retrieve({ dataset_ids: [ds.id], question: 'cormorantword', similarity_threshold: 0.05, vector_similarity_weight: 0.01 })).map((c) => c.id)).toEqual([other.id]);
      // Chats retrieve through the same threads.
      const chat = await remote.createChat({ name: 'c', dataset_ids: [ds.id] });
      const session = await chat.createSession();
      const answer = await session.ask('cormorantword', { stream: false });
      expect(JSON.stringify(answer)).toContain('cormorantword');
    } finally {
      await local.close();
      await threaded.close();
    }
  }, 120_000);

  test('a pool whose threads are gone: the search runs on the calling thread', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const { c, ds, chunks: [added] } = await chunksKb(path, ['ospreyword over the estuary']);
    try {
      const params = { dataset_ids: [ds.id], question: 'ospreyword', similarity_threshold: 0.05, vector_similarity_weight: 0.01 };
      const local = await c.retrieveWithTotals(params);
      await withPool(c, path, 1, async (pool) => {
        expect(await c.retrieveWithTotals(params)).toEqual(local);
        expect(pool.served).toBe(1); // ranked on the thread, not bypassed
        await pool.close();
        expect((await c.retrieve(params)).map((x) => x.id)).toEqual([added!.id]);
        expect(pool.served).toBe(1); // the closed pool's search ran here
      });
    } finally {
      await c.close();
    }
  }, 60_000);

  test('a thread dying with requests in flight: they rank on the calling thread, as do later ones', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const { c, ds } = await chunksKb(path, ['ospreyword over the estuary', 'the ospreyword nest on the pier', 'gulls over the estuary wall', 'a ferry at the pier']);
    try {
      const paramsList = ['ospreyword', 'estuary', 'pier', 'ospreyword estuary', 'nothing like it'].map((question) =>
        ({ dataset_ids: [ds.id], question, similarity_threshold: 0.05, vector_similarity_weight: 0.3 }));
      // The in-process answers, before any pool is attached.
      const local: Awaited<ReturnType<Client['retrieveWithTotals']>>[] = [];
      for (const p of paramsList) local.push(await c.retrieveWithTotals(p));
      expect(local[0]!.total).toBeGreaterThan(0);

      await withPool(c, path, 2, async (pool) => {
        // Test-side reach into the pool (no hook in src): its threads, its unanswered requests, and
        // its `run`, wrapped so that the threads are killed in the very tick the last request is
        // posted. They are still starting then (no index yet), so none can have answered: every
        // request is pending when its thread dies.
        const inner = pool as unknown as {
          workers: { w: { terminate(): Promise<number> }; dead: boolean }[];
          pending: Map<number, unknown>;
          run: SearchPool['run'];
        };
        const run = inner.run.bind(pool);
        let posted = 0;
        let terminated: Promise<unknown> | undefined;
        inner.run = (...args) => {
          const out = run(...args);
          if (++posted === paramsList.length) {
            expect(inner.pending.size).toBe(paramsList.length); // all in flight, on both threads
            terminated = Promise.all(inner.workers.map((x) => x.w.terminate()));
          }
          return out;
        };
        const got = await Promise.all(paramsList.map((p) => c.retrieveWithTotals(p)));
        expect(posted).toBe(paramsList.length); // each request did go to the pool
        expect(terminated).toBeDefined();
        await terminated;
        expect(got).toEqual(local); // number for number, as in-process
        expect(pool.served).toBe(0); // none was ranked by a thread
        expect(inner.pending.size).toBe(0);
        expect(inner.workers.every((x) => x.dead)).toBe(true);
        // No thread left: later requests are refused by the pool and run here.
        for (const [i, p] of paramsList.entries()) expect(await c.retrieveWithTotals(p)).toEqual(local[i]);
        expect(posted).toBe(2 * paramsList.length);
        expect(pool.served).toBe(0);
      });
    } finally {
      await c.close();
    }
  }, 15_000);

  test('rejects a bad thread count', async ({ dir }) => {
    await expect(startServer({ path: join(dir, 'kb.db'), port: 0, searchThreads: -1 })).rejects.toThrow(TypeError);
  });
});

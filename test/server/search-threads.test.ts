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
import type { Db } from '../../src/store/index.js';

const LINES = Array.from({ length: 300 }, (_, i) =>
  `note ${i}: the ${['harbour', 'pier', 'tide', 'lighthouse', 'ferry'][i % 5]} and the ${['north', 'south', 'east'][i % 3]} wall, entry ${i % 17}`);

describe('startServer({ searchThreads })', () => {
  test('retrieval on search threads equals retrieval in-process, and follows writes at once', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const threaded = await startServer({ path, port: 0, searchThreads: 2 });
    const local = new Client({ path });
    try {
      const remote = new Client({ baseUrl: threaded.url, apiKey: threaded.apiKey });
      const ds = await remote.createDataset({ name: 'kb', chunk_method: 'naive', parser_config: { chunk_token_num: 16, delimiter: '\n' } });
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
        expect(got.map((c) => c.id)).toEqual([added.id]);
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
    const c = new Client({ path });
    try {
      const ds = await c.createDataset({ name: 'kb' });
      const [doc] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: new TextEncoder().encode('x') }]);
      const added = await doc!.addChunk({ content: 'ospreyword over the estuary' });
      const params = { dataset_ids: [ds.id], question: 'ospreyword', similarity_threshold: 0.05, vector_similarity_weight: 0.01 };
      const local = await c.retrieveWithTotals(params);
      const db = (c as unknown as { api: { engine: { db: Db } } }).api.engine.db;
      const pool = new SearchPool({ path, threads: 1 });
      attachSearchPool(db, pool);
      try {
        expect(await c.retrieveWithTotals(params)).toEqual(local);
        expect(pool.served).toBe(1); // ranked on the thread, not bypassed
        await pool.close();
        expect((await c.retrieve(params)).map((x) => x.id)).toEqual([added.id]);
        expect(pool.served).toBe(1); // the closed pool's search ran here
      } finally {
        detachSearchPool(db);
        await pool.close();
      }
    } finally {
      await c.close();
    }
  }, 60_000);

  test('rejects a bad thread count', async ({ dir }) => {
    await expect(startServer({ path: join(dir, 'kb.db'), port: 0, searchThreads: -1 })).rejects.toThrow(TypeError);
  });
});

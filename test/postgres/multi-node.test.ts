/**
 * Three `ragloom serve` processes on one PostgreSQL database (issue 30): writers and readers
 * through all of them at once. Every document written through one node is found by a search on
 * every node (the lag measured), nothing is lost or duplicated, and the counters agree with the
 * rows at the end. Parse work goes to whichever node claims it first
 * from the shared queue (shared-parse.test.ts checks the split).
 */
import { afterAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import { Client } from '../../src/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { enc } from '../acceptance/modes.js';
import { documentsWithWrongCounts, serve, stopNodes, type ServeNode } from '../support/serve-node.js';

const server = await pgServer();
const reason = await pgSkipReason();

/** Letters only (the analyzer keeps them one term): a word no other document has. */
const word = (n: number, node: number) => `zq${'abcdefghij'[node]}${n.toString(26).replace(/\d/g, (d) => 'klmnopqrst'[Number(d)]!)}xv`;

const nodes: ServeNode[] = [];
const urls: string[] = [];
afterAll(async () => {
  await stopNodes(nodes);
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

describe.skipIf(!server)(`three servers on one database${reason ? ` (${reason})` : ''}`, () => {
  test('writes through every node are visible on every node; nothing lost or duplicated; counters match the rows', async () => {
    const db = await createStoreDatabase(server!, 'nodes');
    urls.push(db);
    nodes.push(await serve(db)); // the first start persists the admin key; the others share it
    nodes.push(...(await Promise.all([serve(db), serve(db)])));
    const key = nodes[0]!.apiKey!;
    expect(key).toMatch(/^ragflow-/);
    const clients = nodes.map((n) => new Client({ baseUrl: n.url, apiKey: key }));
    const ds = await clients[0]!.createDataset({ name: 'shared' });
    const sets = await Promise.all(clients.map(async (c) => (await c.listDatasets({ id: ds.id }))[0]!));

    const PER_NODE = 6;
    const lags: number[] = [];
    // Writers: each node uploads and parses its documents, one at a time; after each, every other
    // node is searched for the document's own word until it is found.
    await Promise.all(sets.map(async (set, i) => {
      for (let n = 0; n < PER_NODE; n++) {
        const w = word(n, i);
        const [doc] = await set.uploadDocuments([{ display_name: `n${i}-d${n}.txt`, blob: enc(`A note written through node ${i}. It mentions ${w} once, and the weather.`) }]);
        const done = await set.parseDocuments([doc!.id], { pollMs: 25 });
        expect(done[0]![1]).toBe('DONE');
        const written = Date.now();
        await Promise.all(clients.map(async (c, j) => {
          if (j === i) return;
          for (;;) {
            const hits = await c.retrieve({ question: w, dataset_ids: [ds.id] });
            if (hits.some((h) => h.content.includes(w))) break;
            if (Date.now() - written > 20_000) throw new Error(`node ${j} never saw ${w}`);
            await new Promise((r) => setTimeout(r, 20));
          }
          lags.push(Date.now() - written);
        }));
      }
    }));
    // Chunks added to one document through all nodes at once: every one stored, counted once.
    const [shared] = await sets[0]!.uploadDocuments([{ display_name: 'shared.txt', blob: enc('shared') }]);
    const docs = await Promise.all(sets.map(async (s) => (await s.listDocuments({ id: shared!.id }))[0]!));
    await Promise.all(docs.map(async (d, i) => {
      for (let k = 0; k < 5; k++) await d.addChunk({ content: `chunk ${k} through node ${i}` });
    }));

    // At the end, every node holds everything, once.
    const total = 3 * PER_NODE + 1;
    for (const c of clients) {
      const [d] = await c.listDatasets({ id: ds.id });
      expect(d!.document_count).toBe(total);
      expect(d!.chunk_count).toBe(3 * PER_NODE + 15);
      const listed = await (await c.listDatasets({ id: ds.id }))[0]!.listDocuments({ page_size: 100 });
      expect(new Set(listed.map((x) => x.name)).size).toBe(total);
      for (let i = 0; i < 3; i++) {
        const hits = await c.retrieve({ question: word(PER_NODE - 1, i), dataset_ids: [ds.id] });
        expect(hits.filter((h) => h.content.includes(word(PER_NODE - 1, i)))).toHaveLength(1);
      }
      expect((await (await c.listDatasets({ id: ds.id }))[0]!.listDocuments({ id: shared!.id }))[0]!.chunk_count).toBe(15);
    }
    // Integrity, read from the database itself: each document's and the dataset's counters are
    // the sums of the rows; chunk orders in the shared document are distinct.
    const pc = new pg.Client({ connectionString: db });
    await pc.connect();
    try {
      expect(await documentsWithWrongCounts(pc)).toEqual([]);
      const agg = await pc.query(`SELECT ds.doc_num = (SELECT count(*) FROM document WHERE dataset_id = ds.id) AS docs,
        ds.chunk_num = (SELECT count(*) FROM chunk WHERE dataset_id = ds.id) AS chunks FROM dataset ds`);
      expect(agg.rows).toEqual([{ docs: true, chunks: true }]);
      const orders = await pc.query('SELECT count(DISTINCT chunk_order)::int AS n FROM chunk WHERE document_id = $1', [shared!.id]);
      expect(orders.rows[0].n).toBe(15);
    } finally {
      await pc.end();
    }
    const sorted = [...lags].sort((a, b) => a - b);
    console.log(`visibility lag between nodes over ${lags.length} reads: p50 ${sorted[Math.floor(sorted.length / 2)]} ms, p95 ${sorted[Math.floor(sorted.length * 0.95)]} ms`);
    expect(lags).toHaveLength(3 * PER_NODE * 2);
    for (const c of clients) await c.close();
  }, 240_000);
});

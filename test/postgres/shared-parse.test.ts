/**
 * Parse work shared through the PostgreSQL queue (issue 30): `ragloom serve` processes on one
 * database claim queued documents from `parse_job` (SKIP LOCKED, leased), whichever node queued
 * them. Three nodes split one folder's documents, each parsed once; a node killed mid-parse has
 * its claimed documents parsed by another once their leases run out (seconds, not the sweep's
 * minute and a half).
 */
import { afterAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import { Client } from '../../src/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { enc, portable } from '../acceptance/modes.js';
import { documentsWithWrongCounts, serve, stopNodes, type ServeNode } from '../support/serve-node.js';

const server = await pgServer();
const reason = await pgSkipReason();
const LEASE_MS = 2000;
const ENV = { RAGLOOM_PARSE_LEASE_MS: String(LEASE_MS) };

const nodes: ServeNode[] = [];
const urls: string[] = [];
afterAll(async () => {
  await stopNodes(nodes);
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

/** A document of ~`paras` paragraphs, each with the document's own word: several chunks to embed. */
function text(i: number, paras: number): Uint8Array {
  const p = (k: number) => `Paragraph ${k} of note ${i} talks about rivers, bridges and the tides near the harbour, and the weather over the hills in spring. `.repeat(6);
  return enc(Array.from({ length: paras }, (_, k) => p(k)).join('\n\n'));
}

/** Documents done (parsed by a node) per node, from each node's `/system/status`. */
async function doneBy(n: ServeNode, key: string): Promise<number> {
  const r = await fetch(`${n.url}/api/v1/system/status`, { headers: { Authorization: `Bearer ${key}` } });
  const j = (await r.json()) as { data: { task_executor_heartbeats: Record<string, Array<{ done: number }>> } };
  return Object.values(j.data.task_executor_heartbeats)[0]![0]!.done;
}

/** Integrity of the database: counters are the sums of the rows, nothing queued, leased or claimed is left. */
async function integrity(db: string): Promise<void> {
  const pc = new pg.Client({ connectionString: db });
  await pc.connect();
  try {
    expect(await documentsWithWrongCounts(pc)).toEqual([]);
    const agg = await pc.query('SELECT ds.chunk_num = (SELECT count(*) FROM chunk WHERE dataset_id = ds.id) AS chunks FROM dataset ds');
    expect(agg.rows.every((r) => r.chunks)).toBe(true);
    expect((await pc.query('SELECT count(*)::int AS n FROM parse_job')).rows[0].n).toBe(0);
    expect((await pc.query('SELECT count(*)::int AS n FROM parse_owner')).rows[0].n).toBe(0);
    expect((await pc.query("SELECT count(*)::int AS n FROM document WHERE run <> '3'")).rows[0].n).toBe(0);
  } finally {
    await pc.end();
  }
}

async function allDone(set: { listDocuments(q: { page_size: number }): Promise<Array<{ run: string }>> }, n: number, ms: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const docs = await set.listDocuments({ page_size: 1000 });
    if (docs.length === n && docs.every((d) => d.run === 'DONE')) return Date.now() - t0;
    if (Date.now() - t0 > ms) throw new Error(`not all DONE after ${ms} ms: ${docs.map((d) => d.run).join(',')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!server)(`parse work shared through the queue${reason ? ` (${reason})` : ''}`, () => {
  test('three nodes split one folder\'s documents; each is parsed once, all DONE', async () => {
    const db = await createStoreDatabase(server!, 'split');
    urls.push(db);
    const first = await serve(db, ENV);
    nodes.push(first);
    const more = await Promise.all([serve(db, ENV), serve(db, ENV)]);
    nodes.push(...more);
    const three = [first, ...more];
    const key = first.apiKey!;
    const client = new Client({ baseUrl: first.url, apiKey: key });
    const set = await client.createDataset({ name: 'folder' });
    const N = 400; // more than one node holds at once (2 lanes × 2 jobs × PARSE_PULL.n = 256)
    const docs = await set.uploadDocuments(Array.from({ length: N }, (_, i) => ({ display_name: `note-${i}.txt`, blob: text(i, 4) })));
    // Queued through the first node only: the others take their share from the queue.
    const t0 = Date.now();
    await set.parseDocuments(docs.map((d) => d.id), { pollMs: 50 });
    await allDone(set, N, 60_000);
    const ms = Date.now() - t0;
    const done = await Promise.all(three.map((n) => doneBy(n, key)));
    console.log(`${N} documents queued through one node, all DONE in ${ms} ms; per node: ${done.join(' / ')}`);
    expect(done.reduce((a, b) => a + b, 0)).toBe(N); // each once
    expect(done.filter((d) => d > 0).length).toBeGreaterThanOrEqual(2); // split
    await integrity(db);
    await client.close();
    await stopNodes(three);
  }, 120_000);

  test('a node killed mid-parse: its claimed documents are parsed by another within the lease', async () => {
    const db = await createStoreDatabase(server!, 'killed');
    urls.push(db);
    const a = await serve(db, ENV);
    const b = await serve(db, ENV);
    nodes.push(a, b);
    const key = a.apiKey!;
    const ca = new Client({ baseUrl: a.url, apiKey: key });
    const set = await ca.createDataset({ name: 'folder' });
    const N = 24;
    const docs = await set.uploadDocuments(Array.from({ length: N }, (_, i) => ({ display_name: `note-${i}.txt`, blob: text(i, 12) })));
    const pc = new pg.Client({ connectionString: db });
    await pc.connect();
    try {
      // B stops pulling for a moment (SIGSTOP) so A claims the first share; A is killed as soon as it holds leases.
      b.proc.kill('SIGSTOP');
      const ids = docs.map((d) => d.id);
      void fetch(`${a.url}/api/v1/datasets/${set.id}/chunks`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ document_ids: ids }) })
        .then((r) => r.arrayBuffer()).catch(() => undefined); // A may be killed before it answers
      let held: string[] = [];
      for (const t0 = Date.now(); Date.now() - t0 < 20_000;) {
        held = (await pc.query('SELECT document_id FROM parse_job WHERE lease_owner LIKE $1', [`%:${a.proc.pid}`])).rows.map((r) => r.document_id as string);
        if (held.length) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(held.length).toBeGreaterThan(0);
      a.proc.kill('SIGKILL');
      const killed = Date.now();
      b.proc.kill('SIGCONT');
      await new Promise((r) => a.proc.once('exit', r));
      const cb = new Client({ baseUrl: b.url, apiKey: key });
      const setB = (await cb.listDatasets({ id: set.id }))[0]!;
      await allDone(setB, N, 60_000);
      const took = Date.now() - killed;
      const byB = await doneBy(b, key);
      console.log(`node killed holding ${held.length} leased documents; all ${N} DONE ${took} ms after the kill (lease ${LEASE_MS} ms); node B parsed ${byB}`);
      expect(byB).toBeGreaterThanOrEqual(held.length); // B parsed A's leased documents (A wrote none of them)
      // The leases, not the sweep: that one runs every 30 s and waits for a heartbeat a minute old.
      expect(took).toBeLessThan(20_000);
      await integrity(db);
      await cb.close();
    } finally {
      await pc.end();
    }
    await ca.close();
    await stopNodes([a, b]);
  }, 120_000);

  test('a small folder (60 documents) is split between three nodes, and ranks to the last digit as one SQLite process does', async () => {
    const db = await createStoreDatabase(server!, 'small');
    urls.push(db);
    const first = await serve(db, ENV); // persists the admin key the others share
    const three = [first, ...(await Promise.all([serve(db, ENV), serve(db, ENV)]))];
    nodes.push(...three);
    const key = first.apiKey!;
    const client = new Client({ baseUrl: three[0]!.url, apiKey: key });
    const local = new Client({ path: ':memory:' });
    try {
      const files = Array.from({ length: 60 }, (_, i) => ({ display_name: `note-${i}.txt`, blob: text(i, 1 + (i % 3)) }));
      const set = await client.createDataset({ name: 'folder' });
      const docs = await set.uploadDocuments(files);
      await set.parseDocuments(docs.map((d) => d.id), { pollMs: 50 });
      await allDone(set, 60, 60_000);
      const done = await Promise.all(three.map((n) => doneBy(n, key)));
      console.log(`60 documents queued through one node; per node: ${done.join(' / ')}`);
      expect(done.reduce((a, b) => a + b, 0)).toBe(60);
      expect(done.filter((d) => d > 0).length).toBe(3); // each node took a share
      await integrity(db);
      // One process on SQLite, the same files: the same responses, every score to the last digit.
      const one = await local.createDataset({ name: 'folder' });
      const up = await one.uploadDocuments(files);
      await one.parseDocuments(up.map((d) => d.id), { pollMs: 20 });
      for (const question of ['rivers and bridges near the harbour', 'weather over the hills in spring', 'note 17 tides']) {
        for (const opts of [{}, { vector_similarity_weight: 0.9, top_k: 64 }]) {
          const x = await client.retrieveWithTotals({ question, dataset_ids: [set.id], similarity_threshold: 0, ...opts });
          const y = await local.retrieveWithTotals({ question, dataset_ids: [one.id], similarity_threshold: 0, ...opts });
          expect(portable(x)).toEqual(portable(y));
        }
      }
    } finally {
      await client.close();
      await local.close();
      await stopNodes(three);
    }
  }, 120_000);
});

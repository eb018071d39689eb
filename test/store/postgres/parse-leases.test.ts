/**
 * Parse claims of the PostgreSQL queue as the store writes them (issue 30): a claim whose lease
 * ran out and went to another node writes nothing when it finishes late; a document queued again
 * while claimed stays RUNNING after the stale finish and is claimable once more.
 */
import { afterAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import { PgStore } from '../../../src/store/postgres/index.js';
import { RUN, type ParseOutcomeRow } from '../../../src/store/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../../support/postgres.js';
import { chunkOf, seedDataset, seedDocuments, seedTenant } from '../contract/seed.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
afterAll(async () => {
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

function outcome(d: { id: string; dataset_id: string }, text: string): ParseOutcomeRow {
  return {
    id: d.id, dataset_id: d.dataset_id, chunks: [{ ...chunkOf({ ...d, name: 'x.txt' }, text, 1), chunk_order: 0 }], language: 'English',
    log: ['received'], doneLines: ['done'], failLine: 'failed', seconds: 1, began: 1,
  };
}

/** One document queued for parsing and claimed by `a` (pid 1). */
async function claimedOne(a: PgStore) {
  const who = await seedTenant(a);
  const ds = await seedDataset(a, who);
  const [doc] = await seedDocuments(a, who, ds, ['a.txt']);
  await a.parse.reset([doc.id], who.tenantId);
  expect(await a.parse.claimNext(5, { pid: 1, host: 'a' }, 1)).toEqual([doc.id]);
  return { who, ds, doc: doc! };
}

describe.skipIf(!server)(`parse leases on PostgreSQL${reason ? ` (${reason})` : ''}`, () => {
  test('a lease lost to another node: the late finish writes nothing, the new claim writes', async () => {
    const url = await createStoreDatabase(server!, 'lease');
    urls.push(url);
    const a = await PgStore.open(url);
    const b = await PgStore.open(url);
    const pc = new pg.Client({ connectionString: url });
    await pc.connect();
    try {
      const { ds, doc } = await claimedOne(a);
      expect(await b.parse.claimNext(5, { pid: 2, host: 'b' }, 1)).toEqual([]); // leased
      await pc.query('UPDATE parse_job SET lease_until = 0'); // A stalled past its lease
      expect(await b.parse.claimNext(5, { pid: 2, host: 'b' }, 2)).toEqual([doc.id]);
      await a.parse.finish([], [outcome(doc, 'stale result of a')], 1, 3);
      expect((await a.documents.get(ds.id, doc.id))!.run).toBe(RUN.RUNNING);
      expect((await pc.query('SELECT count(*)::int AS n FROM chunk')).rows[0].n).toBe(0);
      await b.parse.finish([], [outcome(doc, 'result of b')], 2, 4);
      const chunks = await pc.query('SELECT content FROM chunk');
      expect(chunks.rows).toEqual([{ content: 'result of b' }]);
      expect((await a.documents.get(ds.id, doc.id))!.run).toBe(RUN.DONE);
      expect((await pc.query('SELECT count(*)::int AS n FROM parse_job')).rows[0].n).toBe(0);
    } finally {
      await pc.end();
      await a.close();
      await b.close();
    }
  }, 60_000);

  test('queued again while claimed: the stale finish leaves it RUNNING and queued; the next claim writes it', async () => {
    const url = await createStoreDatabase(server!, 'again');
    urls.push(url);
    const a = await PgStore.open(url);
    try {
      const { who, ds, doc } = await claimedOne(a);
      await a.parse.reset([doc.id], who.tenantId); // a new parse request while this one runs
      await a.parse.finish([], [outcome(doc, 'stale')], 1, 2);
      expect((await a.documents.get(ds.id, doc.id))!.run).toBe(RUN.RUNNING);
      expect(await a.parse.claimNext(5, { pid: 1, host: 'a' }, 3)).toEqual([doc.id]);
      await a.parse.finish([], [outcome(doc, 'fresh')], 1, 4);
      expect((await a.documents.get(ds.id, doc.id))!).toMatchObject({ run: RUN.DONE, chunk_num: 1 });
      expect(await a.parse.claimNext(5, { pid: 1, host: 'a' }, 5)).toEqual([]);
    } finally {
      await a.close();
    }
  }, 60_000);

  test('claims adapt to the queue: three claimers split a 60-document queue 20 / 20 / 20, one alone takes it all', async () => {
    const url = await createStoreDatabase(server!, 'share');
    urls.push(url);
    const stores = await Promise.all([0, 1, 2].map(() => PgStore.open(url)));
    const [a, b, c] = stores as [PgStore, PgStore, PgStore];
    const stops: Array<() => Promise<void>> = [];
    try {
      const who = await seedTenant(a);
      const ds = await seedDataset(a, who);
      const docs = await seedDocuments(a, who, ds, Array.from({ length: 60 }, (_, i) => `n${i}.txt`));
      await a.parse.reset(docs.map((d) => d.id), who.tenantId);
      // Alone (nobody else listening): one claim takes the whole folder, as one batch (up to n).
      expect(await a.parse.claimNext(64, { pid: 1, host: 'a' }, 1)).toHaveLength(60);
      await a.parse.release(docs.map((d) => d.id), 1);
      // Three nodes listening for parse work: each takes its third, and no more while it holds it.
      for (const s of stores) stops.push(await s.parse.watchQueue(() => undefined));
      const got = [];
      for (const [k, s] of [a, b, c].entries()) got.push(await s.parse.claimNext(64, { pid: k + 1, host: 'h' }, 2));
      expect(got.map((g) => g.length)).toEqual([20, 20, 20]);
      expect(new Set(got.flat()).size).toBe(60);
      expect(await a.parse.claimNext(64, { pid: 1, host: 'h' }, 3)).toEqual([]);
      // A node that finished its share comes back for a share of what is left.
      await a.parse.release(got[0]!, 1);
      await b.parse.finish([], got[1]!.map((id) => outcome(docs.find((d) => d.id === id)!, 'b')), 2, 4);
      expect(await b.parse.claimNext(64, { pid: 2, host: 'h' }, 5)).toHaveLength(14); // ceil(40 / 3)
    } finally {
      for (const stop of stops) await stop();
      for (const s of stores) await s.close();
    }
  }, 60_000);
});

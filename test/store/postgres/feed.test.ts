/**
 * The change feed against a real PostgreSQL: transactions that commit out of sequence order are
 * delivered once each and never missed (where "seq > last seen" misses them), rolled-back writes
 * never appear, trimming makes a reader behind the floor reload, and a follower on another
 * connection pool is woken by NOTIFY and catches up after its listening connection is killed.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { server, openDb, seedBase } from './fixture.js';
import { feedStart, readFeed, trimFeed, reportReader, FeedFollower, type Change, type FeedPosition, type PgDb } from '../../../src/store/postgres/index.js';

const INSERT = `INSERT INTO chunk (id, document_id, dataset_id, content, create_time, create_timestamp)
  VALUES ($1, 'doc0', 'd1', 'x', 't', 1) RETURNING rowid`;

async function client(db: PgDb): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: urlOf(db) });
  await c.connect();
  return c;
}
const urls = new WeakMap<PgDb, string>();
const urlOf = (db: PgDb) => urls.get(db)!;
/**
 * Trims until `want` rows went (or 2 s passed), then one more time; the rows deleted in all.
 * The horizon is the cluster's: a transaction another test file starts in its own database at the
 * same moment may count as possibly this database's (its xid not yet in pg_stat_activity) and
 * hold a trim back for a moment, as it should. The extra trim shows nothing more goes.
 */
async function trimUntil(db: PgDb, want: number, staleMs?: number): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < 100 && deleted < want; i++) {
    if (i) await new Promise((r) => setTimeout(r, 20));
    deleted += (await trimFeed(db, staleMs === undefined ? {} : { staleMs })).deleted;
  }
  return deleted + (await trimFeed(db, staleMs === undefined ? {} : { staleMs })).deleted;
}

async function newStore(): Promise<PgDb> {
  const { freshUrl } = await import('./fixture.js');
  const url = await freshUrl('feed');
  const db = await openDb(url);
  urls.set(db, url);
  await seedBase(db);
  return db;
}

/** Reads everything readable now. */
async function drain(db: PgDb, at: FeedPosition, limit?: number): Promise<{ changes: Change[]; at: FeedPosition; heldBack: boolean }> {
  const changes: Change[] = [];
  for (;;) {
    const p = await readFeed(db, at, { limit });
    expect(p.reload).toBe(false);
    changes.push(...p.changes);
    at = p.next;
    if (!p.more) return { changes, at, heldBack: p.heldBack };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!server)('PostgreSQL change feed', () => {
  it('delivers a transaction that took a lower seq but committed later, which "seq > last seen" misses', async () => {
    const db = await newStore();
    const start = await feedStart(db);
    const a = await client(db);
    const b = await client(db);
    await a.query('BEGIN');
    const ra = (await a.query(INSERT, ['a'])).rows[0].rowid as string;
    await b.query('BEGIN');
    const rb = (await b.query(INSERT, ['b'])).rows[0].rowid as string;
    await b.query('COMMIT');

    // The naive reader sees b (the higher seq) and moves past a's seq.
    const naive1 = await db.rows<{ seq: number; rid: number }>('SELECT seq, rid FROM change_log WHERE seq > 0 ORDER BY seq');
    expect(naive1.map((r) => r.rid)).toEqual([Number(rb)]);
    const naiveLast = naive1[0]!.seq;

    // The feed holds b back while a (the older transaction) is open, and says so.
    const held = await drain(db, start);
    expect(held.changes).toEqual([]);
    expect(held.heldBack).toBe(true);

    await a.query('COMMIT');
    const naive2 = await db.rows<{ rid: number }>('SELECT rid FROM change_log WHERE seq > $1 ORDER BY seq', [naiveLast]);
    expect(naive2).toEqual([]); // a's row is behind the naive reader: lost to it

    const after = await drain(db, held.at);
    expect(after.changes.map((c) => c.rid)).toEqual([Number(ra), Number(rb)]);
    expect(after.changes.every((c) => c.topic === 'chunk' && c.part === 'd1')).toBe(true);
    expect(after.heldBack).toBe(false);
    expect((await drain(db, after.at)).changes).toEqual([]); // nothing twice
    await a.end();
    await b.end();
  });

  it('concurrent writers committing in any order, some rolling back: every committed change once, nothing else', async () => {
    const db = await newStore();
    let at = await feedStart(db);
    const WRITERS = 6;
    const TXS = 25;
    const committed: number[] = [];
    const rolledBack = new Set<number>();
    let done = 0;
    const writer = async (w: number) => {
      const c = await client(db);
      const mine: number[] = [];
      for (let t = 0; t < TXS; t++) {
        await c.query('BEGIN');
        await sleep(Math.random() * 8);
        const rids: number[] = [];
        for (let i = 0, n = 1 + Math.floor(Math.random() * 3); i < n; i++) rids.push(Number((await c.query(INSERT, [`w${w}t${t}i${i}`])).rows[0].rowid));
        const del = mine.length && Math.random() < 0.3 ? mine.splice(Math.floor(Math.random() * mine.length), 1)[0]! : 0;
        if (del) await c.query('DELETE FROM chunk WHERE rowid = $1', [del]);
        await sleep(Math.random() * 8);
        if (Math.random() < 0.15) {
          await c.query('ROLLBACK');
          rids.forEach((r) => rolledBack.add(r));
          if (del) mine.push(del);
        } else {
          await c.query('COMMIT');
          committed.push(...rids);
          if (del) committed.push(del); // its delete is a second change of that row
          mine.push(...rids);
        }
      }
      await c.end();
      done++;
    };
    const seen: Change[] = [];
    const reader = async () => {
      while (done < WRITERS) {
        const p = await drain(db, at, 7); // small pages: page boundaries fall inside transactions
        seen.push(...p.changes);
        at = p.at;
        await sleep(1);
      }
      const last = await drain(db, at);
      seen.push(...last.changes);
      expect(last.heldBack).toBe(false);
    };
    await Promise.all([reader(), ...Array.from({ length: WRITERS }, (_, w) => writer(w))]);

    // Each log row once, in (txid, seq) order.
    for (let i = 1; i < seen.length; i++) {
      const [p, c] = [seen[i - 1]!, seen[i]!];
      expect(p.txid < c.txid || (p.txid === c.txid && p.seq < c.seq)).toBe(true);
    }
    const bySort = (x: number[]) => [...x].sort((p, q) => p - q);
    expect(bySort(seen.map((c) => c.rid))).toEqual(bySort(committed));
    expect(seen.some((c) => rolledBack.has(c.rid))).toBe(false);
    expect((await db.one<{ n: number }>('SELECT count(*)::int AS n FROM change_log'))!.n).toBe(seen.length);
  });

  it('logs updates of indexed columns only, and a move between partitions on both sides', async () => {
    const db = await newStore();
    const at = await feedStart(db);
    await db.tx(async (t) => {
      await t.run(`INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('d2', 't1', 'kb2', 'm', 'u1', 1, 1)`);
      await t.run(INSERT, ['u1']);
    });
    const ins = await drain(db, at);
    expect(ins.changes.map((c) => c.part)).toEqual(['d1']);
    await db.run("UPDATE chunk SET tag_kwd = '[\"x\"]', positions = '[[1]]'"); // not indexed: no change
    await db.run("UPDATE chunk SET available = 0");
    await db.run("UPDATE chunk SET dataset_id = 'd2'");
    const upd = await drain(db, ins.at);
    expect(upd.changes.map((c) => c.part)).toEqual(['d1', 'd2', 'd1']);
  });

  it('trimming keeps what a live reader has not read; a reader behind the floor is told to reload', async () => {
    const db = await newStore();
    const old = await feedStart(db);
    for (let i = 0; i < 5; i++) await db.run(INSERT, [`t${i}`]);
    const live = await feedStart(db);
    await reportReader(db, 'node-live', live);
    for (let i = 5; i < 8; i++) await db.run(INSERT, [`t${i}`]);

    expect(await trimUntil(db, 5)).toBe(5); // below the live reader only
    const fromLive = await drain(db, live);
    expect(fromLive.changes).toHaveLength(3);
    const behind = await readFeed(db, old);
    expect(behind.reload).toBe(true);
    expect(behind.changes).toEqual([]);
    // Starting again from where a reload would: nothing missed from then on.
    await db.run(INSERT, ['t8']);
    expect((await drain(db, behind.next)).changes.length).toBeGreaterThanOrEqual(1);

    // A reader not seen for the staleness limit holds nothing back.
    await db.run("UPDATE feed_reader SET seen_at = 0");
    expect(await trimUntil(db, 4, 60_000)).toBe(4);
    expect(await db.rows('SELECT node FROM feed_reader')).toEqual([]);
  });

  it('a follower on another pool is woken by NOTIFY, and catches up after its listening connection is killed', async () => {
    const writer = await newStore();
    const reader = await openDb(urlOf(writer));
    const got: Change[] = [];
    let reloads = 0;
    let waiting: { n: number; resolve: () => void } | null = null;
    const follower = new FeedFollower(reader, await feedStart(reader), {
      pollMs: 60_000, // only wake-ups (NOTIFY, reconnect) make it read here
      node: 'reader-1',
      apply(changes, reload) {
        if (reload) reloads++;
        got.push(...changes);
        if (waiting && got.length >= waiting.n) waiting.resolve();
      },
    });
    await follower.start();
    const until = (n: number) => new Promise<void>((resolve, reject) => {
      if (got.length >= n) return resolve();
      waiting = { n, resolve };
      setTimeout(() => reject(new Error(`follower got ${got.length} of ${n}`)), 5_000).unref();
    });

    const lags: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await writer.run(INSERT, [`n${i}`]);
      await until(i + 1);
      lags.push(performance.now() - t0);
    }
    expect(Math.max(...lags)).toBeLessThan(1_000);

    // Kill the follower's LISTEN connection; write while it is away; it reconnects and reads.
    const killed = await writer.rows<{ ok: boolean }>(`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'LISTEN%'`);
    expect(killed).toHaveLength(1);
    for (let i = 10; i < 15; i++) await writer.run(INSERT, [`n${i}`]);
    await until(15);
    expect(new Set(got.map((c) => `${c.txid}:${c.seq}`)).size).toBe(15);
    expect(reloads).toBe(0);
    await follower.stop();
    // Its position was recorded for the trimmer.
    expect(await reader.rows('SELECT node FROM feed_reader')).toEqual([{ node: 'reader-1' }]);
  });
});

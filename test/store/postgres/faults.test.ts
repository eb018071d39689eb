/**
 * Failures of a real PostgreSQL, on a cluster of this file's own (it is stopped and restarted):
 * a statement timeout, connections killed before and during COMMIT, idle connections dropped,
 * the server restarted in the middle of a stream of writes, and the server away for longer than
 * the store waits. Nothing committed is lost, nothing is written twice, a clear error (an ApiError
 * at the API layer) comes while the database cannot be reached, and the store recovers by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { pgServer, pgSkipReason, pgUrl, adminQuery, stopCluster, startCluster, type PgServer } from '../../support/postgres.js';
import { launchCluster, restartCluster } from '../../support/postgres-cluster.js';
import {
  openPostgres, FeedFollower, feedStart, StatementTimeoutError, CommitOutcomeUnknownError, DatabaseUnavailableError, type PgDb,
} from '../../../src/store/postgres/index.js';
import { exceptionError } from '../../../src/api/errors.js';

const shared = await pgServer();
const reason = (await pgSkipReason()) || (shared && !shared.dataDir ? 'PostgreSQL fault tests skipped: RAGLOOM_TEST_POSTGRES is an external server they cannot restart' : '');
if (reason) console.warn(reason);

let own: PgServer;
let url: string;
const dbs: PgDb[] = [];

beforeAll(async () => {
  if (reason) return;
  own = await launchCluster(process.pid);
  await adminQuery(own, 'CREATE DATABASE faults');
  url = pgUrl(own, 'faults');
}, 120_000);

afterAll(async () => {
  for (const d of dbs) await d.close().catch(() => undefined);
  if (own) {
    try {
      stopCluster(own.bin, own.dataDir, 'immediate');
    } catch {
      // already stopped
    }
    rmSync(own.home, { recursive: true, force: true });
  }
});

async function open(opts: { statementTimeoutMs?: number; unreachableMs?: number } = {}): Promise<PgDb> {
  const db = await openPostgres({ connection: url, ...opts });
  dbs.push(db);
  return db;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kill = (pid: number) => adminQuery(own, 'SELECT pg_terminate_backend($1)', [pid]);

describe.skipIf(!!reason)('PostgreSQL faults', () => {
  beforeAll(async () => {
    const db = await open();
    await db.run(`CREATE TABLE IF NOT EXISTS fault_row (k integer PRIMARY KEY, v text NOT NULL);
      CREATE TABLE IF NOT EXISTS slow_commit (k integer PRIMARY KEY);
      CREATE OR REPLACE FUNCTION slow_commit_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.6); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_commit_t AFTER INSERT ON slow_commit DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit_fn();`);
  });

  it('a statement past statement_timeout is cancelled with a clear error, its transaction saved nothing, the pool works on', async () => {
    const db = await open({ statementTimeoutMs: 200 });
    const e = await db.tx(async (t) => {
      await t.run("INSERT INTO fault_row (k, v) VALUES (-1, 'timed out')");
      await t.run('SELECT pg_sleep(2)');
    }).then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(StatementTimeoutError);
    expect((e as Error).message).toMatch(/ran longer than statement_timeout \(200 ms\) and was cancelled; nothing of its transaction was saved/);
    const api = exceptionError(e);
    expect(api.code).toBe(500);
    expect(api.data).toMatchObject({ code: 'STATEMENT_TIMEOUT', target: `127.0.0.1:${own.port}/faults` });
    expect(await db.rows('SELECT k FROM fault_row WHERE k = -1')).toEqual([]);
    expect(await db.one('SELECT 1 AS ok')).toEqual({ ok: 1 });
  });

  it('a connection killed before COMMIT: the unit of work runs again on a new connection and commits once', async () => {
    const db = await open();
    let attempts = 0;
    await db.tx(async (t) => {
      attempts++;
      await t.run("INSERT INTO fault_row (k, v) VALUES (1, 'once')");
      if (attempts === 1) {
        const { pid } = (await t.one<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!;
        await kill(pid);
        await t.run('SELECT 1'); // the dead connection fails here, before COMMIT
      }
    });
    expect(attempts).toBe(2);
    expect(await db.rows('SELECT v FROM fault_row WHERE k = 1')).toEqual([{ v: 'once' }]);
  });

  it('a connection lost during COMMIT: an idempotent unit runs again, another fails with CommitOutcomeUnknownError', async () => {
    const db = await open();
    const commitKilled = async (k: number, idempotent: boolean) => {
      let attempts = 0;
      const r = await db.tx(async (t) => {
        attempts++;
        await t.run('INSERT INTO slow_commit (k) VALUES ($1) ON CONFLICT DO NOTHING', [k]);
        if (attempts === 1) {
          const { pid } = (await t.one<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!;
          setTimeout(() => void kill(pid), 250); // while COMMIT runs the deferred trigger's sleep
        }
      }, { idempotent }).then(() => 'ok', (e: unknown) => e);
      return { r, attempts };
    };
    const retried = await commitKilled(1, true);
    expect(retried).toEqual({ r: 'ok', attempts: 2 });
    const unknown = await commitKilled(2, false);
    expect(unknown.attempts).toBe(1);
    expect(unknown.r).toBeInstanceOf(CommitOutcomeUnknownError);
    expect((unknown.r as Error).message).toMatch(/lost while committing: the change may or may not have been saved/);
    expect(await db.rows('SELECT k FROM slow_commit ORDER BY k')).toEqual([{ k: 1 }]); // the killed COMMIT did not commit
  });

  it('idle connections killed under the pool: the next calls reconnect without an error', async () => {
    const db = await open();
    await Promise.all(Array.from({ length: 4 }, () => db.one('SELECT pg_sleep(0.05)'))); // fill the pool
    expect(db.poolStats().idle).toBeGreaterThan(1);
    await adminQuery(own, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'faults' AND pid <> pg_backend_pid()");
    await sleep(50);
    for (let i = 0; i < 6; i++) expect(await db.one('SELECT $1::int AS i', [i])).toEqual({ i });
    expect(db.idleErrors).toBeGreaterThan(0);
  });

  it('PostgreSQL restarted in the middle of a stream of writes: each committed once, none lost, the caller told of any it cannot know', async () => {
    const db = await open({ unreachableMs: 20_000 });
    const watcher = await open();
    const seen = new Set<number>();
    const follower = new FeedFollower(watcher, await feedStart(watcher), { pollMs: 200, apply: () => undefined });
    await follower.start();
    const committed: number[] = [];
    const unknown: number[] = [];
    let restarted: Promise<void> | undefined;
    let restartDone = false;
    let k = 1000;
    // Writes go on before, during and after the restart (down for at least 300 ms).
    for (; k < 1300 || !restartDone; k++) {
      for (;;) {
        try {
          await db.tx((t) => t.run("INSERT INTO fault_row (k, v) VALUES ($1, 'stream')", [k]));
          committed.push(k);
          break;
        } catch (e) {
          if (!(e instanceof CommitOutcomeUnknownError)) throw e;
          unknown.push(k); // as the message says: read it back, and write it again if it is not there
          if (await db.one('SELECT 1 FROM fault_row WHERE k = $1', [k])) {
            committed.push(k);
            break;
          }
        }
      }
      if (k === 1100) restarted = restartCluster(own, 300).then(() => void (restartDone = true));
      await sleep(2);
    }
    await restarted;
    const total = k - 1000;
    const rows = (await db.rows<{ k: number }>("SELECT k FROM fault_row WHERE v = 'stream' ORDER BY k")).map((r) => r.k);
    expect(rows).toEqual(committed.sort((a, b) => a - b));
    expect(rows).toHaveLength(total);
    for (const r of rows) seen.add(r);
    expect(seen.size).toBe(total);
    expect(db.retries).toBeGreaterThan(0); // it waited the restart out
    // The follower reads on after the restart.
    await follower.catchUp();
    await follower.stop();
  });

  it('the server away longer than the store waits: DatabaseUnavailableError (an ApiError naming the server); back again, the same store works', async () => {
    const db = await open({ unreachableMs: 400 });
    expect(await db.one('SELECT 1 AS ok')).toEqual({ ok: 1 });
    stopCluster(own.bin, own.dataDir, 'fast');
    try {
      const t0 = Date.now();
      const e = await db.one('SELECT 1').then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(DatabaseUnavailableError);
      expect(Date.now() - t0).toBeLessThan(5_000);
      const api = exceptionError(e);
      expect(api.code).toBe(500);
      expect(api.message).toMatch(new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${own.port}/faults cannot be reached \\(ECONNREFUSED.*ragloom reconnects by itself`));
      expect(api.data).toMatchObject({ code: 'DB_UNAVAILABLE' });
      await expect(db.tx((t) => t.run("INSERT INTO fault_row (k, v) VALUES (-2, 'x')"))).rejects.toThrow(DatabaseUnavailableError);
    } finally {
      startCluster(own.bin, own.dataDir, own.home, own.port);
    }
    expect(await db.one('SELECT 1 AS ok')).toEqual({ ok: 1 });
    expect(await db.rows('SELECT k FROM fault_row WHERE k = -2')).toEqual([]);
    // A plain pg client confirms the server, not a cache, answered.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    expect((await c.query("SELECT count(*)::int AS n FROM fault_row WHERE v = 'stream'")).rows[0].n).toBeGreaterThanOrEqual(300);
    await c.end();
  });
});

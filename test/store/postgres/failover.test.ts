/**
 * Failover to a promoted streaming replica, on loopback: a primary and a standby made with
 * pg_basebackup (synchronous replication: a commit is acknowledged once the standby has it), and a
 * TCP proxy standing in for the endpoint a managed service gives (a name that follows the
 * primary). The primary crashes in the middle of a stream of writes, the standby is promoted and
 * the endpoint moves to it. The store reconnects by itself; every write it acknowledged is on the
 * new primary exactly once, a write whose COMMIT was cut is reported as unknown and resolved by
 * reading it back, and the change feed goes on on the new primary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pgServer, pgSkipReason, adminQuery, pgUrl, type PgServer } from '../../support/postgres.js';
import { Endpoint, addSyncStandby } from '../../support/pg-endpoint.js';
import { launchCluster, stopCluster, asPostgresAsync } from '../../support/postgres-cluster.js';
import { openPostgres, CommitOutcomeUnknownError, feedStart, readFeed, type PgDb } from '../../../src/store/postgres/index.js';

const shared = await pgServer();
const reason = (await pgSkipReason()) || (shared && !shared.dataDir ? 'PostgreSQL failover test skipped: RAGLOOM_TEST_POSTGRES is an external server' : '');
if (reason) console.warn(reason);

let primary: PgServer;
let standby: { dataDir: string; port: number };
let endpoint: Endpoint;
const dbs: PgDb[] = [];

beforeAll(async () => {
  if (reason) return;
  primary = await launchCluster(process.pid);
  await adminQuery(primary, 'CREATE DATABASE kb');
  standby = await addSyncStandby(primary, join(primary.home, 'standby'));
  endpoint = new Endpoint(primary.port);
  await endpoint.start();
}, 120_000);

afterAll(async () => {
  for (const d of dbs) await d.close().catch(() => undefined);
  await endpoint?.stop();
  if (primary) {
    for (const dir of [primary.dataDir, standby.dataDir]) {
      try {
        stopCluster(primary.bin, dir, 'immediate');
      } catch {
        // stopped already (the crashed primary)
      }
    }
    rmSync(primary.home, { recursive: true, force: true });
  }
});

describe.skipIf(!!reason)('PostgreSQL failover', () => {
  it('the primary crashes mid-stream and the standby is promoted: acknowledged writes all there once, the store reconnects by itself', async () => {
    const url = pgUrl({ ...primary, port: endpoint.port }, 'kb');
    const db = await openPostgres({ connection: url, unreachableMs: 30_000 });
    dbs.push(db);
    await db.run('CREATE TABLE stream (k integer PRIMARY KEY)');
    const feedFrom = await feedStart(db);
    await db.run(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t1', 'x', 'm', 1)`);

    const acked: number[] = [];
    const unknown: number[] = [];
    let failedOver: Promise<void> | undefined;
    for (let k = 0; k < 400; k++) {
      for (;;) {
        try {
          await db.run('INSERT INTO stream (k) VALUES ($1)', [k]);
          acked.push(k);
          break;
        } catch (e) {
          if (!(e instanceof CommitOutcomeUnknownError)) throw e;
          unknown.push(k);
          if (await db.one('SELECT 1 FROM stream WHERE k = $1', [k])) {
            acked.push(k);
            break;
          }
        }
      }
      if (k === 150) {
        failedOver = (async () => {
          stopCluster(primary.bin, primary.dataDir, 'immediate'); // a crash: no shutdown checkpoint, connections cut
          await asPostgresAsync(primary.bin, 'pg_ctl', ['-D', standby.dataDir, '-w', '-t', '60', 'promote']);
          endpoint.moveTo(standby.port);
        })();
      }
    }
    await failedOver;
    // Everything is on the new primary, once.
    const rows = (await db.rows<{ k: number }>('SELECT k FROM stream ORDER BY k')).map((r) => r.k);
    expect(rows).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(acked).toHaveLength(400);
    expect(await db.one('SELECT pg_is_in_recovery() AS standby')).toEqual({ standby: false });
    expect(db.retries).toBeGreaterThan(0);
    // The change feed goes on across the failover: the log written before it is there, and new writes are read.
    await db.run(`INSERT INTO "user" (id, nickname, create_time) VALUES ('u1', 'x', 1);
      INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('d1', 't1', 'kb', 'm', 'u1', 1, 1);
      INSERT INTO blob_content (create_time) VALUES (1);
      INSERT INTO blob (sha256, size, parts, content_id) SELECT 's', 0, 0, id FROM blob_content;
      INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
        VALUES ('doc0', 'd1', 'a', 'doc', 0, 's', 'a', 'naive', 'u1', 1, 1);
      INSERT INTO chunk (id, document_id, dataset_id, content, create_time, create_timestamp) VALUES ('c1', 'doc0', 'd1', 'after', 't', 1)`);
    const page = await readFeed(db, feedFrom);
    expect(page.changes.map((c) => c.topic)).toEqual(['chunk']);
  });
});

/**
 * The feed's horizon on a server shared with other databases: a transaction open in another
 * database (another application on the same server) does not hold this database's feed back; one
 * open in this database does. Also as a role that is not a superuser (pg_stat_activity shows it
 * less), where the horizon must stay safe.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { server, openDb, freshUrl, seedBase } from './fixture.js';
import { adminQuery } from '../../support/postgres.js';
import { feedStart, readFeed, type PgDb } from '../../../src/store/postgres/index.js';

const INSERT = `INSERT INTO chunk (id, document_id, dataset_id, content, create_time, create_timestamp) VALUES ($1, 'doc0', 'd1', 'x', 't', 1)`;

async function openTx(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT pg_current_xact_id()'); // takes an xid: an older transaction than the writes below
  return c;
}

/** Whether a row written now can be read from the feed at once (after reading all there is). */
async function visible(db: PgDb, id: string): Promise<boolean> {
  let at = await feedStart(db);
  for (let p = await readFeed(db, at); ; p = await readFeed(db, at)) {
    at = p.next;
    if (!p.more) break;
  }
  const { rowid } = (await db.one<{ rowid: number }>(`${INSERT} RETURNING rowid`, [id]))!;
  return (await readFeed(db, at)).changes.some((c) => c.rid === rowid);
}

describe.skipIf(!server)('PostgreSQL feed horizon', () => {
  for (const role of ['superuser', 'plain role'] as const) {
    it(`as a ${role}: a transaction open in another database does not hold the feed back, one in this database does`, async () => {
      let url = await freshUrl('horizon');
      if (role === 'plain role') {
        const name = `ragloom_plain_${process.pid}`;
        await adminQuery(server!, `DO $$ BEGIN CREATE ROLE ${name} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
        const db = new URL(url).pathname.slice(1);
        await adminQuery(server!, `ALTER DATABASE "${db}" OWNER TO ${name}`);
        const u = new URL(url);
        u.username = name;
        url = u.toString();
      }
      const db = await openDb(url);
      await seedBase(db);
      const other = await openTx(await freshUrl('elsewhere'));
      expect(await visible(db, 'a')).toBe(true);
      await other.query('ROLLBACK');
      await other.end();
      const same = await openTx(url);
      expect(await visible(db, 'b')).toBe(false);
      await same.query('ROLLBACK');
      await same.end();
    });
  }
});

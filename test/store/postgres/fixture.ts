/**
 * What the PostgreSQL store tests share: the run's server (or the reason they skip), a new
 * migrated database per test, dropped after the file, and the account/dataset/document rows the
 * other tables refer to.
 */
import { afterAll } from 'vitest';
import { pgServer, pgSkipReason, createDatabase, dropDatabase, type PgServer } from '../../support/postgres.js';
import { openPostgres, type PgDb, type PostgresOptions } from '../../../src/store/postgres/index.js';

export const server: PgServer | undefined = await pgServer();
const reason = await pgSkipReason();
if (reason) console.warn(reason);

const urls: string[] = [];
const open: PgDb[] = [];

afterAll(async () => {
  for (const d of open) await d.close().catch(() => undefined);
  if (server) for (const u of urls) await dropDatabase(server, u).catch(() => undefined);
});

/** A new, empty database's connection string. */
export async function freshUrl(prefix = 'pg'): Promise<string> {
  const url = await createDatabase(server!, prefix);
  urls.push(url);
  return url;
}

/** Opens `url` (a new database when omitted) with the store's schema; closed after the file. */
export async function openDb(url?: string, opts: Omit<PostgresOptions, 'connection'> = {}): Promise<PgDb> {
  const db = await openPostgres({ connection: url ?? (await freshUrl()), ...opts });
  open.push(db);
  return db;
}

/** Tenant t1, user u1, dataset d1 and `docs` documents doc0… (one shared blob). */
export async function seedBase(db: PgDb, docs = 1): Promise<void> {
  await db.tx(async (t) => {
    await t.run(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t1', 'local', 'm@Builtin', 1);
      INSERT INTO "user" (id, nickname, create_time) VALUES ('u1', 'local', 1);
      INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('d1', 't1', 'kb', 'm@Builtin', 'u1', 1, 1);
      INSERT INTO blob_content (create_time) VALUES (1);
      INSERT INTO blob (sha256, size, parts, content_id) SELECT 'seed', 0, 0, id FROM blob_content`);
    await t.run(`INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
      SELECT 'doc' || i, 'd1', 'doc' || i || '.txt', 'doc', 0, 'seed', 'x', 'naive', 'u1', 1, 1 FROM generate_series(0, $1 - 1) i`, [docs]);
  });
}

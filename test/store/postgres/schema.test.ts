/**
 * The PostgreSQL schema on a real server: an empty database gets it on first open, a missing one
 * is refused by name, every older version upgrades keeping its rows, steps are idempotent and
 * applied once when processes open a database at the same time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { pgServer, pgSkipReason, createDatabase, dropDatabase, pgUrl, adminQuery } from '../../support/postgres.js';
import {
  openPostgres, PgDb, PG_MIGRATIONS, PG_SCHEMA_VERSION, PG_TABLES, DatabaseMissingError, SchemaError, DatabaseUnavailableError,
} from '../../../src/store/postgres/index.js';
import { exceptionError } from '../../../src/api/errors.js';
import { openDatabase } from '../../../src/store/index.js';

const server = await pgServer();
const skip = await pgSkipReason();
if (skip) console.warn(skip);

const made: string[] = [];
async function newDb(): Promise<string> {
  const url = await createDatabase(server!, 'schema');
  made.push(url);
  return url;
}
afterAll(async () => {
  if (server) for (const u of made) await dropDatabase(server, u);
});

/** The rows of steps (after, upTo]: each step's tables, as that version takes them. */
async function seed(db: PgDb, after: number, upTo: number): Promise<void> {
  const step = (n: number) => n > after && n <= upTo;
  await db.tx(async (t) => {
    if (step(1)) await t.run(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t1', 'local', 'm@Builtin', 1);
      INSERT INTO "user" (id, nickname, email, create_time) VALUES ('u1', 'local', 'A@x.org', 1);
      INSERT INTO user_tenant (user_id, tenant_id) VALUES ('u1', 't1')`);
    if (step(2)) {
      await t.run(`INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('d1', 't1', 'Old', 'm@Builtin', 'u1', 1, 1);
        INSERT INTO blob_content (create_time) VALUES (1);
        INSERT INTO blob_part (content_id, n, data) SELECT id, 0, '\\x6869' FROM blob_content;
        INSERT INTO blob (sha256, size, parts, content_id) SELECT 'abc', 2, 1, id FROM blob_content;
        INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
          VALUES ('doc1', 'd1', 'old.txt', 'doc', 2, 'abc', 'old.txt', 'naive', 'u1', 1, 1)`);
    }
    if (step(3)) {
      await t.run(`INSERT INTO chunk (id, document_id, dataset_id, content, vec_dim, vector, create_time, create_timestamp)
        VALUES ('c1', 'doc1', 'd1', 'hello old chunk', 2, '\\x0000803f00000000', '2020-01-01 00:00:00', 1)`);
    }
    if (step(4)) await t.run("INSERT INTO parse_job (document_id, dataset_id, queued_at) VALUES ('doc1', 'd1', 1)");
    if (step(5)) await t.run("INSERT INTO chat (id, tenant_id, name, created_by, create_time, update_time) VALUES ('ch1', 't1', 'Helper', 'u1', 1, 1)");
    if (step(6)) {
      await t.run(`INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, created_by, create_time, update_time) VALUES ('m1', 't1', 'Notes', 'e', 'l', 'u1', 1, 1);
        INSERT INTO memory_message (memory_id, message_type, content, valid_at, fifo_at, size, create_time) VALUES ('m1', 'raw', 'hi', 1, 1, 2, 1)`);
    }
  });
}

describe.skipIf(!server)('PostgreSQL schema', () => {
  it('gives an empty database the whole schema on first open, and a second open changes nothing', async () => {
    const url = await newDb();
    const db = await openPostgres({ connection: url });
    const tables = (await db.rows<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema()")).map((r) => r.t);
    expect(tables.sort()).toEqual([...PG_TABLES, 'schema_version'].sort());
    const versions = await db.rows<{ version: number }>('SELECT version FROM schema_version ORDER BY version');
    expect(versions.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
    // No extension was needed.
    expect(await db.rows("SELECT extname FROM pg_extension WHERE extname <> 'plpgsql'")).toEqual([]);
    await db.close();
    const again = await openPostgres({ connection: url });
    expect((await again.one<{ n: number }>('SELECT count(*)::int AS n FROM schema_version'))!.n).toBe(PG_SCHEMA_VERSION);
    await again.close();
  });

  it('refuses a database that does not exist, naming it, and never creates it', async () => {
    const url = pgUrl(server!, 'no_such_ragloom_db');
    const e = await openPostgres({ connection: url }).then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(DatabaseMissingError);
    expect((e as Error).message).toContain('Database "no_such_ragloom_db" does not exist');
    expect((e as Error).message).toContain(`${server!.host}:${server!.port}`);
    // The API layer reports it as an ApiError with the same message.
    const api = exceptionError(e);
    expect(api.code).toBe(500);
    expect(api.message).toContain('no_such_ragloom_db');
    expect(await adminQuery(server!, "SELECT 1 FROM pg_database WHERE datname = 'no_such_ragloom_db'")).toEqual([]);
  });

  it('refuses a server that is not there with DatabaseUnavailableError after the wait, not a hang', async () => {
    const started = Date.now();
    const e = await openPostgres({ connection: `postgresql://postgres@127.0.0.1:1/x`, unreachableMs: 300 }).then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(DatabaseUnavailableError);
    expect((e as Error).message).toMatch(/PostgreSQL at 127\.0\.0\.1:1\/x cannot be reached \(ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('rejects bad options with a TypeError', async () => {
    await expect(openPostgres({ connection: 'mysql://x/y' })).rejects.toThrow(TypeError);
    await expect(openPostgres({ connection: 'mysql://u:secret@x/y' })).rejects.toThrow(/got 'mysql:\/\/u:\*\*\*@x\/y'/);
    await expect(openPostgres({ connection: 42 as unknown as string })).rejects.toThrow(TypeError);
    await expect(openPostgres({ connection: 'postgresql://x/y', statementTimeoutMs: -1 })).rejects.toThrow(/statementTimeoutMs/);
    await expect(openPostgres({ connection: 'postgresql://x/y', statmentTimeoutMs: 1 } as never)).rejects.toThrow(/Unknown PostgreSQL option 'statmentTimeoutMs'/);
  });

  it('refuses a database holding tables of its names that it did not create', async () => {
    const url = await newDb();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('CREATE TABLE dataset (x int)');
    await c.end();
    await expect(openPostgres({ connection: url })).rejects.toThrow(SchemaError);
    await expect(openPostgres({ connection: url })).rejects.toThrow(/tables ragloom did not create \(dataset\)/);
  });

  it('refuses a schema newer than this ragloom', async () => {
    const url = await newDb();
    const db = await openPostgres({ connection: url });
    await db.run("INSERT INTO schema_version (version, name, applied_at) VALUES ($1, 'future', 0)", [PG_SCHEMA_VERSION + 1]);
    await db.close();
    await expect(openPostgres({ connection: url })).rejects.toThrow(`schema version ${PG_SCHEMA_VERSION + 1} is newer than this ragloom (${PG_SCHEMA_VERSION})`);
  });

  for (let v = 0; v < PG_SCHEMA_VERSION; v++) {
    it(`upgrades from version ${v} keeping its rows`, async () => {
      const url = await newDb();
      const old = await openPostgres({ connection: url, targetVersion: v });
      if (v >= 1) {
        expect((await old.one<{ v: number }>('SELECT max(version) AS v FROM schema_version'))!.v).toBe(v);
        await seed(old, 0, v);
      }
      await old.close();
      const db = await openPostgres({ connection: url });
      expect((await db.one<{ v: number }>('SELECT max(version) AS v FROM schema_version'))!.v).toBe(PG_SCHEMA_VERSION);
      if (v >= 1) expect(await db.one('SELECT nickname FROM "user" WHERE id = $1', ['u1'])).toEqual({ nickname: 'local' });
      if (v >= 2) expect(await db.one('SELECT name, size FROM document WHERE id = $1', ['doc1'])).toEqual({ name: 'old.txt', size: 2 });
      if (v >= 3) {
        const c = await db.one<{ vector: Buffer }>("SELECT vector FROM chunk WHERE id = 'c1'");
        expect([...new Float32Array(new Uint8Array(c!.vector).buffer)]).toEqual([1, 0]);
      }
      if (v >= 6) expect(await db.one("SELECT content FROM memory_message WHERE memory_id = 'm1'")).toEqual({ content: 'hi' });
      // The later steps' tables take rows that refer to the rows written before the upgrade.
      await seed(db, v, PG_SCHEMA_VERSION);
      expect(await db.one("SELECT count(*)::int AS t, (SELECT count(*)::int FROM memory_message) AS m FROM tenant")).toEqual({ t: 1, m: 1 });
      await db.close();
    });
  }

  it('every step is idempotent: applied twice, it changes nothing and fails nothing', async () => {
    const url = await newDb();
    const db = await openPostgres({ connection: url });
    await seed(db, 0, PG_SCHEMA_VERSION);
    for (const m of PG_MIGRATIONS) await db.run(m.sql);
    expect((await db.one<{ n: number }>('SELECT count(*)::int AS n FROM chunk'))!.n).toBe(1);
    await db.close();
  });

  it('processes opening an empty database at once apply each step exactly once', async () => {
    const url = await newDb();
    const dbs = await Promise.all(Array.from({ length: 6 }, () => openPostgres({ connection: url })));
    const rows = await dbs[0]!.rows<{ version: number }>('SELECT version FROM schema_version ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
    await Promise.all(dbs.map((d) => d.close()));
  });

  it('holds every column of every SQLite table (a new SQLite column must be added here too)', async () => {
    // SQLite's own indexes and logs that PostgreSQL replaces: FTS5 and vec0 tables (in-memory
    // indexes here), their change logs (change_log), search_meta (meta), parse_owner (parse_job's lease).
    const replaced = /^(chunk_fts|memory_fts|vec_|memory_vec_log$|sqlite_|search_meta$|parse_owner$)/;
    const lite = openDatabase(':memory:');
    const want: string[] = [];
    for (const { name } of lite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]) {
      if (replaced.test(name)) continue;
      for (const c of lite.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[]) {
        // A blob's bytes are parts of it here (blob_part), streamed.
        if (!(name === 'blob' && c.name === 'data')) want.push(`${name}.${c.name}`);
      }
    }
    lite.close();
    expect(want.length).toBeGreaterThan(200);
    const db = await openPostgres({ connection: await newDb() });
    const have = new Set((await db.rows<{ c: string }>(`SELECT table_name || '.' || column_name AS c FROM information_schema.columns
      WHERE table_schema = current_schema()`)).map((r) => r.c));
    await db.close();
    expect(want.filter((c) => !have.has(c))).toEqual([]);
  });

  it('orders text by bytes and folds only ASCII letters in names, as SQLite does', async () => {
    const url = await newDb();
    const db = await openPostgres({ connection: url });
    await seed(db, 0, 1);
    const names = ['b', 'B', 'a', 'É', 'é', 'Z', '_x', '1'];
    await db.tx(async (t) => {
      for (const [i, n] of names.entries()) {
        await t.run(`INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ($1, 't1', $2, 'm', 'u1', 1, 1)`, [`d${i}`, `${n}-${i}`]);
      }
    });
    const ordered = (await db.rows<{ name: string }>('SELECT name FROM dataset ORDER BY name')).map((r) => r.name);
    expect(ordered).toEqual(names.map((n, i) => `${n}-${i}`).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    expect((await db.one<{ f: string }>("SELECT ragloom_nocase('AbÉé') AS f"))!.f).toBe('abÉé');
    await db.close();
  });
});

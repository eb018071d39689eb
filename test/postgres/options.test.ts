/**
 * `postgresOptions`: the PostgreSQL store's timing and pool settings through the Client, startServer
 * and the CLI (RAGLOOM_PG_* variables). Bad values are ApiError 101 naming the setting, before
 * anything connects; good ones reach the store. Their effect under faults is tested in
 * faults-client.test.ts.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Client, ApiError } from '../../src/index.js';
import { Api } from '../../src/api/index.js';
import { startServer } from '../../src/server/index.js';
import { PgStore } from '../../src/store/index.js';
import { storeOf } from '../../src/cli/args.js';
import { createDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { run } from '../cli/run.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
afterAll(async () => {
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

const URL_ = 'postgresql://u:secret@127.0.0.1:1/none';

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return null;
}

describe('postgresOptions: bad values are refused before anything connects', () => {
  test.each([
    [{ unreachableMs: -1 }, /"postgresOptions": "unreachableMs" must be a whole number of milliseconds from 0 to 86400000, got -1/],
    [{ statementTimeoutMs: 1.5 }, /"statementTimeoutMs" must be a whole number of milliseconds .* got 1\.5/],
    [{ poolSize: 0 }, /"poolSize" must be a whole number of connections from 1 to 1000, got 0/],
    [{ connectTimeoutMs: '500' }, /"connectTimeoutMs" must be a whole number of milliseconds from 100 .* got "500"/],
    [{ idleInTransactionMs: Number.NaN }, /"idleInTransactionMs" must be .* got null/],
    [{ unreachablems: 5 }, /unknown setting "unreachablems"; did you mean "unreachableMs"\?/],
    [{ retries: 3 }, /unknown setting "retries" \(known: unreachableMs, statementTimeoutMs, idleInTransactionMs, poolSize, connectTimeoutMs\)/],
    [5_000, /"postgresOptions": must be an object of unreachableMs/],
  ])('%j', async (bad, message) => {
    const e = thrown(() => new Client({ postgres: URL_, postgresOptions: bad as never }));
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe(101);
    expect((e as ApiError).message).toMatch(message);
    const s = await startServer({ postgres: URL_, postgresOptions: bad as never, port: 0 }).then(() => null, (x: unknown) => x);
    expect(s).toBeInstanceOf(ApiError);
    expect((s as ApiError).message).toMatch(message);
    await expect(Api.open({ postgres: URL_, postgresOptions: bad as never })).rejects.toThrow(message);
  });

  test('only with a PostgreSQL store; a remote Client cannot set them; the pool config and poolSize must agree', async () => {
    const onFile = thrown(() => new Client({ path: ':memory:', postgresOptions: { poolSize: 2 } }));
    expect(onFile).toBeInstanceOf(ApiError);
    expect((onFile as ApiError).message).toBe('"postgresOptions" go with "postgres" (a PostgreSQL store); a SQLite file has no such settings');
    await expect(startServer({ path: ':memory:', postgresOptions: { poolSize: 2 }, port: 0 })).rejects.toThrow(/go with "postgres"/);
    expect(() => new Client({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', postgresOptions: { poolSize: 2 } })).toThrow(/"postgresOptions" is the server's configuration/);
    await expect(PgStore.open({ connectionString: URL_, max: 3 }, { poolSize: 4 })).rejects.toThrow(/poolSize \(4\) and the pool config's max \(3\) disagree/);
  });

  test('the CLI reads RAGLOOM_PG_* for a postgresql:// --db, and refuses a value that is not a whole number', async () => {
    expect(storeOf('kb.db', { RAGLOOM_PG_POOL_SIZE: '3' })).toEqual({ path: 'kb.db' });
    expect(storeOf(URL_, {})).toEqual({ postgres: URL_ });
    expect(storeOf(URL_, { RAGLOOM_PG_UNREACHABLE_MS: '750', RAGLOOM_PG_POOL_SIZE: ' 3 ', RAGLOOM_PG_STATEMENT_TIMEOUT_MS: '' }))
      .toEqual({ postgres: URL_, postgresOptions: { unreachableMs: 750, poolSize: 3 } });
    expect(() => storeOf(URL_, { RAGLOOM_PG_STATEMENT_TIMEOUT_MS: '2s' })).toThrow("RAGLOOM_PG_STATEMENT_TIMEOUT_MS must be a whole number, got '2s'");
    const withEnv = async (name: string, value: string) => {
      process.env[name] = value;
      try {
        return await run(['list', '--db', URL_]);
      } finally {
        delete process.env[name];
      }
    };
    const range = await withEnv('RAGLOOM_PG_POOL_SIZE', '0');
    expect(range.code).not.toBe(0);
    expect(range.err).toMatch(/"postgresOptions": "poolSize" must be a whole number of connections from 1 to 1000, got 0/);
    const shape = await withEnv('RAGLOOM_PG_UNREACHABLE_MS', 'soon');
    expect(shape.code).toBe(1);
    expect(shape.err).toMatch(/RAGLOOM_PG_UNREACHABLE_MS must be a whole number, got 'soon'/);
  });
});

describe('unreachableMs bounds the wait for a server that never answers', () => {
  test('a listener that accepts and stays silent: DB_UNAVAILABLE after unreachableMs, not after a 5 s connection attempt', async () => {
    const held: Socket[] = [];
    const silent = createServer((s) => void held.push(s.on('error', () => undefined)));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const c = new Client({ postgres: `postgresql://u:secret@127.0.0.1:${port}/kb`, postgresOptions: { unreachableMs: 600 } });
    try {
      const t0 = Date.now();
      const e = await c.listDatasets().then(() => null, (x: unknown) => x);
      const waited = Date.now() - t0;
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).data).toMatchObject({ code: 'DB_UNAVAILABLE', target: `127.0.0.1:${port}/kb` });
      expect((e as ApiError).message).not.toContain('secret');
      expect(waited).toBeGreaterThanOrEqual(550);
      expect(waited).toBeLessThan(3_500);
    } finally {
      await c.close();
      for (const s of held) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe.skipIf(!server)(`postgresOptions reach the store${reason ? ` (${reason})` : ''}`, () => {
  test('settings in force on the pool and on the server session; the defaults without them', async () => {
    const url = await createDatabase(server!, 'opts');
    urls.push(url);
    const api = await Api.open({ postgres: url, postgresOptions: { unreachableMs: 1_500, statementTimeoutMs: 1_234, idleInTransactionMs: 4_321, poolSize: 2, connectTimeoutMs: 700 } });
    const plain = await Api.open({ postgres: url });
    try {
      const db = (api.engine.store as PgStore).db;
      expect(db.settings).toEqual({ unreachableMs: 1_500, statementTimeoutMs: 1_234, idleInTransactionMs: 4_321, poolSize: 2, connectTimeoutMs: 700 });
      expect(await db.one("SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i"))
        .toEqual({ s: '1234ms', i: '4321ms' });
      // Two connections at most: four slow reads take two rounds.
      const t0 = Date.now();
      await Promise.all(Array.from({ length: 4 }, () => db.one('SELECT pg_sleep(0.2)')));
      expect(Date.now() - t0).toBeGreaterThanOrEqual(390);
      expect(db.poolStats().total).toBe(2);
      expect((api.engine.store as PgStore).locator).toMatchObject({ kind: 'postgres', options: { poolSize: 2, unreachableMs: 1_500 } });
      expect((plain.engine.store as PgStore).db.settings).toEqual({ unreachableMs: 10_000, statementTimeoutMs: 30_000, idleInTransactionMs: 60_000, poolSize: 10, connectTimeoutMs: 5_000 });
    } finally {
      await api.close();
      await plain.close();
    }
  });
});

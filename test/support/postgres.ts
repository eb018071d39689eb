/**
 * A real PostgreSQL for the tests: a throw-away cluster (initdb + pg_ctl) on a loopback port,
 * started by the first test file that asks for it and shared by every file of the vitest run;
 * test/support/postgres-global.ts stops and removes it when the run ends. Nothing is mocked.
 *
 * - The server binaries come from `RAGLOOM_PG_BIN`, else Debian's /usr/lib/postgresql/<newest>/bin,
 *   else `pg_config --bindir`, else `initdb` on PATH. PostgreSQL refuses to run as root: as root
 *   every server command runs as the `postgres` user (`runuser`), in a folder that user owns.
 * - `RAGLOOM_TEST_POSTGRES=postgresql://user:pass@host:port/db` uses that server instead (its user
 *   must be allowed to create databases); the fault tests that stop the server then skip.
 * - Where neither is available the PostgreSQL tests skip, and say why (`pgSkipReason`).
 *
 * Each test file takes its own database (`createDatabase`), so files running in parallel forks
 * never see each other's rows. Files start the cluster under a lock in the run's folder, so the
 * two forks never start two clusters; a watchdog stops it if the vitest process dies without its
 * teardown (killed), so no postmaster outlives the run.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';
import pg from 'pg';
import { launchCluster, STATE, type PgServer, type RunState } from './postgres-cluster.js';

export type { PgServer } from './postgres-cluster.js';
export { asPostgres, freePort, initCluster, startCluster, stopCluster, findPgBin } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder for the shared cluster (postgres-global.ts); '' when there is no global setup. */
    pgRunDir: string;
    /** The vitest process: the watchdog stops the cluster when it is gone. */
    pgOwnerPid: number;
  }
}

const START_WAIT_MS = 120_000;

function external(): PgServer | undefined {
  const url = process.env.RAGLOOM_TEST_POSTGRES;
  if (!url) return undefined;
  const u = new URL(url);
  return {
    host: u.hostname, port: Number(u.port || 5432), user: decodeURIComponent(u.username || 'postgres'),
    password: u.password ? decodeURIComponent(u.password) : undefined, bin: '', dataDir: '', home: '', major: 0,
  };
}

let mine: Promise<RunState> | undefined;

/** The run's shared server: started here under the run's lock, or waited for when another fork starts it. */
async function shared(): Promise<RunState> {
  const ext = external();
  if (ext) return { server: ext };
  let runDir = '';
  let owner = process.pid;
  try {
    runDir = inject('pgRunDir');
    owner = inject('pgOwnerPid');
  } catch {
    // no global setup (a script, not vitest): a private cluster for this process
  }
  if (!runDir) {
    try {
      return { server: await launchCluster(process.pid) };
    } catch (e) {
      return { failed: (e as Error).message };
    }
  }
  const state = join(runDir, STATE);
  let starter = false;
  try {
    mkdirSync(join(runDir, 'lock'));
    starter = true;
  } catch {
    // another fork holds the lock: wait for its state file
  }
  if (starter) {
    let s: RunState;
    try {
      s = { server: await launchCluster(owner) };
    } catch (e) {
      s = { failed: (e as Error).message.split('\n').slice(0, 6).join(' ') };
    }
    writeFileSync(`${state}.tmp`, JSON.stringify(s));
    renameSync(`${state}.tmp`, state);
    return s;
  }
  const until = Date.now() + START_WAIT_MS;
  while (!existsSync(state)) {
    if (Date.now() > until) return { failed: 'timed out waiting for another test process to start PostgreSQL' };
    await new Promise((r) => setTimeout(r, 100));
  }
  return JSON.parse(readFileSync(state, 'utf8')) as RunState;
}

/** The shared server, or undefined (then `pgSkipReason()` says why). */
export async function pgServer(): Promise<PgServer | undefined> {
  mine ??= shared();
  return (await mine).server;
}

/** Why the PostgreSQL tests skip ('' when a server is available). */
export async function pgSkipReason(): Promise<string> {
  mine ??= shared();
  const s = await mine;
  return s.server ? '' : `PostgreSQL tests skipped: ${s.failed}`;
}

/** A connection string for database `db` on `s`. */
export function pgUrl(s: PgServer, db: string): string {
  const auth = s.password ? `${encodeURIComponent(s.user)}:${encodeURIComponent(s.password)}` : encodeURIComponent(s.user);
  return `postgresql://${auth}@${s.host}:${s.port}/${encodeURIComponent(db)}`;
}

/** Runs one statement on the server's `postgres` database (administration: CREATE DATABASE, pg_terminate_backend…). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(s: PgServer, sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: pgUrl(s, 'postgres') });
  c.on('error', () => undefined); // a restart ends it with an event; its calls still reject
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

let dbSeq = 0;

/** Creates a new, empty database for one test file (or test) and returns its connection string. */
export async function createDatabase(s: PgServer, prefix = 't'): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${dbSeq++}`.toLowerCase();
  await adminQuery(s, `CREATE DATABASE "${name}"`);
  return pgUrl(s, name);
}

/** Drops a database made by createDatabase, closing its remaining connections. */
export async function dropDatabase(s: PgServer, url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await adminQuery(s, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}


let template: Promise<string> | undefined;

/**
 * A new database holding the store's schema already (a copy of a migrated template made once per
 * test process: CREATE DATABASE … TEMPLATE copies files, a fraction of running the migrations).
 */
export async function createStoreDatabase(s: PgServer, prefix = 't'): Promise<string> {
  template ??= (async () => {
    const url = await createDatabase(s, 'tmpl');
    const { PgStore } = await import('../../src/store/postgres/store.js');
    await (await PgStore.open(url)).close();
    return decodeURIComponent(new URL(url).pathname.slice(1));
  })();
  const tmpl = await template;
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${dbSeq++}`.toLowerCase();
  await adminQuery(s, `CREATE DATABASE "${name}" TEMPLATE "${tmpl}"`);
  return pgUrl(s, name);
}

/**
 * The databases of one test file: `fresh()` makes one (with the store's schema already: `schema`,
 * else empty), and every one is dropped when the file ends.
 */
export function fileDatabases(s: PgServer | undefined, prefix: string, opts: { schema?: boolean } = {}): () => Promise<string> {
  const urls: string[] = [];
  afterAll(async () => {
    for (const u of urls) await dropDatabase(s!, u).catch(() => undefined);
  });
  return async () => {
    const u = await (opts.schema ? createStoreDatabase : createDatabase)(s!, prefix);
    urls.push(u);
    return u;
  };
}

/** Polls `probe` until it holds (a change made on another node arrives with its NOTIFY); false after `ms`. */
export async function eventually(probe: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A connection LISTENing on `channel` (the store's change feed notifies `ragloom_change`):
 * `heard(payload)` waits until a notification carrying `payload` has arrived since the last call.
 */
export async function listenTo(url: string, channel: string): Promise<{ heard(payload: string, ms?: number): Promise<boolean>; end(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  const got: string[] = [];
  c.on('notification', (m) => got.push(m.payload ?? ''));
  await c.query(`LISTEN ${channel}`);
  return {
    async heard(payload, ms = 3_000) {
      const ok = await eventually(async () => got.includes(payload), ms);
      got.length = 0;
      return ok;
    },
    end: () => c.end(),
  };
}

/**
 * A ragloom store's connection to PostgreSQL: a `pg` pool plus the rules for failures.
 *
 * - Every write runs in an explicit transaction (`tx`). A failure before COMMIT was sent means
 *   the transaction did not commit (the server rolls back a transaction whose connection dies),
 *   so the unit of work is run again on a new connection. A connection lost while COMMIT is in
 *   flight leaves the outcome unknown: the unit is run again only when it says it is idempotent,
 *   otherwise the caller gets CommitOutcomeUnknownError. A unit of work must therefore touch
 *   nothing but the database (it may run more than once).
 * - Serialization failures and deadlocks (the server rolled back) are run again, up to 8 times.
 * - While the database cannot be reached, calls wait for it with backoff for `unreachableMs`, then
 *   fail with DatabaseUnavailableError; the pool drops broken connections and the next call opens
 *   new ones, so the store recovers by itself when the server is back.
 * - Closing is prompt: from `beginClose` a call that would wait for the server fails at once
 *   (StoreClosedError), and when the server does not answer a quick probe, every connection is cut
 *   (the server rolls back what was not committed; a cut COMMIT is CommitOutcomeUnknownError), so
 *   a close takes under a second whatever the database does. On a database that answers, calls in
 *   flight finish first, as before.
 * - statement_timeout bounds every statement (StatementTimeoutError, not retried: it would time
 *   out again), and idle_in_transaction_session_timeout ends a transaction left open by a stuck
 *   process, which would otherwise hold back every node's change feed (feed.ts).
 */
import { hostname } from 'node:os';
import { cutConnection, loadPg, sturdyClient, typeParsers, type PgClient, type PgConnectionConfig, type PgModule, type PgPool, type PgPoolClient } from './driver.js';
import {
  CommitOutcomeUnknownError, DatabaseMissingError, DatabaseUnavailableError, SchemaError, StatementTimeoutError, StoreClosedError,
  isConnectionError, isMissingDatabase, isRetryableConflict, isStatementTimeout, type PgTarget,
} from './errors.js';

/**
 * ragloom's settings for a PostgreSQL store: how long calls wait and how many connections a
 * process opens. Public as `new Client({ postgres, postgresOptions })`, `startServer({
 * postgresOptions })` and the CLI's `RAGLOOM_PG_*` variables (docs/scaling.md).
 */
export interface PostgresTuning {
  /** How long a call waits for an unreachable database before it fails with DB_UNAVAILABLE (ms). @default 10_000 */
  unreachableMs?: number;
  /** Longest a statement may run before the server cancels it (STATEMENT_TIMEOUT; ms, 0 = no limit). @default 30_000 */
  statementTimeoutMs?: number;
  /** How long a transaction may sit idle before the server ends it (ms, 0 = no limit). @default 60_000 */
  idleInTransactionMs?: number;
  /** Connections of this process's pool (one more listens for wake-ups). @default 10 */
  poolSize?: number;
  /** Longest one connection attempt may take (ms). @default min(5_000, unreachableMs), at least 100 */
  connectTimeoutMs?: number;
}

export interface PostgresOptions extends PostgresTuning {
  /** A `postgresql://` or `postgres://` URL, or a `pg` pool config. */
  connection: string | PgConnectionConfig;
  /** Stop after this schema version (tests of migrations only). */
  targetVersion?: number;
}

export const PG_DEFAULTS = Object.freeze({
  statementTimeoutMs: 30_000 /* ms */,
  unreachableMs: 10_000 /* ms */,
  idleInTransactionMs: 60_000 /* ms */,
  poolSize: 10 /* connections per process */,
  connectTimeoutMs: 5_000 /* ms, one connection attempt, at most */,
  conflictRetries: 8,
});

/** The settings of `PostgresTuning`, with their bounds. */
const TUNING: Readonly<Record<keyof PostgresTuning, { min: number; max: number; unit: string }>> = Object.freeze({
  unreachableMs: { min: 0, max: 24 * 3600_000, unit: 'milliseconds' },
  statementTimeoutMs: { min: 0, max: 2_147_483_647, unit: 'milliseconds' },
  idleInTransactionMs: { min: 0, max: 2_147_483_647, unit: 'milliseconds' },
  poolSize: { min: 1, max: 1_000, unit: 'connections' },
  connectTimeoutMs: { min: 100, max: 3600_000, unit: 'milliseconds' },
});
export const PG_TUNING_KEYS = Object.freeze(Object.keys(TUNING) as Array<keyof PostgresTuning>);

const OPTION_KEYS = ['connection', 'targetVersion', ...PG_TUNING_KEYS];

/**
 * What is wrong with `o` as PostgresTuning (an object of the known keys, each an integer in its
 * range), or undefined when nothing is. The Client and the server turn it into an ApiError.
 */
export function tuningProblem(o: unknown): string | undefined {
  if (o === undefined) return undefined;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return `must be an object of ${PG_TUNING_KEYS.join(', ')}`;
  for (const [k, v] of Object.entries(o)) {
    const spec = TUNING[k as keyof PostgresTuning];
    if (!spec) {
      const near = PG_TUNING_KEYS.find((x) => x.toLowerCase() === k.toLowerCase());
      return `unknown setting "${k}"${near ? `; did you mean "${near}"?` : ''} (known: ${PG_TUNING_KEYS.join(', ')})`;
    }
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < spec.min || v > spec.max) {
      return `"${k}" must be a whole number of ${spec.unit} from ${spec.min} to ${spec.max}, got ${JSON.stringify(v) ?? String(v)}`;
    }
  }
  return undefined;
}

/** Reads in a transaction or on the pool. */
export interface PgQuery {
  rows<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  one<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R | undefined>;
}

/** A transaction's statements. */
export interface PgTx extends PgQuery {
  /** Runs a statement; returns the rows it changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
}

export interface TxOptions {
  /** Running the unit twice leaves the same state as once: it is retried even when a COMMIT's outcome is unknown. @default false */
  idempotent?: boolean;
  /** @default 'read committed' */
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
}

/** True when `s` is a connection string for the PostgreSQL store (`--db` and `path` values). */
export function isPostgresUrl(s: unknown): s is string {
  return typeof s === 'string' && /^postgres(?:ql)?:\/\//i.test(s);
}

function checkOptions(o: PostgresOptions): void {
  if (!o || typeof o !== 'object') throw new TypeError('PostgreSQL options must be an object with a `connection`');
  for (const k of Object.keys(o)) if (!OPTION_KEYS.includes(k)) throw new TypeError(`Unknown PostgreSQL option '${k}' (known: ${OPTION_KEYS.join(', ')})`);
  const c = o.connection;
  if (typeof c === 'string') {
    if (!/^postgres(?:ql)?:\/\//i.test(c)) throw new TypeError(`A PostgreSQL connection string starts with postgresql:// or postgres://, got '${String(c).replace(/:[^:@/]*@/, ':***@')}'`);
  } else if (!c || typeof c !== 'object' || Array.isArray(c)) {
    throw new TypeError('`postgres` must be a connection string (postgresql://user:pass@host:port/db) or a pg pool config object');
  }
  const { connection: _c, targetVersion: _v, ...tuning } = o;
  const problem = tuningProblem(tuning);
  if (problem) throw new TypeError(`PostgreSQL option ${problem}`);
  if (o.poolSize !== undefined && typeof c === 'object' && c.max !== undefined && c.max !== o.poolSize) {
    throw new TypeError(`poolSize (${o.poolSize}) and the pool config's max (${String(c.max)}) disagree: give one`);
  }
}

/** host:port/database of a connection, for messages (the password never appears). */
export function targetOf(c: string | PgConnectionConfig): { target: PgTarget; database: string } {
  if (typeof c === 'string') {
    const u = new URL(c);
    const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
    return { target: `${u.hostname || 'localhost'}:${u.port || 5432}/${database}`, database };
  }
  if (c.connectionString) return targetOf(c.connectionString);
  const database = String(c.database ?? process.env.PGDATABASE ?? c.user ?? process.env.PGUSER ?? 'postgres');
  return { target: `${c.host ?? process.env.PGHOST ?? 'localhost'}:${c.port ?? process.env.PGPORT ?? 5432}/${database}`, database };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a close lets calls in flight finish before it asks whether the server answers (ms). */
const CLOSE_GRACE_MS = 150;
/** How long that question waits for a connection and `SELECT 1` (ms): no answer, and the close cuts every connection. */
const CLOSE_PROBE_MS = 500;
/** How long a listener's connection may take to end politely at close (ms) before it is cut. */
const LISTEN_END_MS = 200;

/** A connection lost while COMMIT was in flight (internal: `attempt` decides what it means). */
class InCommit extends Error {
  constructor(readonly lost: unknown) {
    super('connection lost during COMMIT');
  }
}

export class PgDb implements PgQuery {
  private closed = false;
  /** Set by beginClose: waits for the server end (calls fail instead). */
  private readonly closing = new AbortController();
  /** Set when the server did not answer during a close: every connection was cut and new calls fail at once. */
  private readonly cut = new AbortController();
  private readonly listeners = new Set<() => Promise<void>>();
  /** Errors of idle connections the pool dropped (tests read it; nothing else needs them). */
  idleErrors = 0;
  /** Units of work run again after a connection loss or a conflict, or waiting for the server (tests and benchmarks read it). */
  retries = 0;
  /** Statements sent to the server by this pool's calls, transactions' BEGIN and COMMIT included (tests and benchmarks read it). */
  statements = 0;
  /** Called after every committed transaction of this pool (the store's search learns of its own writes at once). */
  onCommit: (() => void) | undefined;

  private constructor(
    private readonly pg: PgModule,
    private readonly pool: PgPool,
    private readonly config: Record<string, unknown>,
    readonly target: PgTarget,
    readonly database: string,
    private readonly opts: Required<Omit<PostgresOptions, 'targetVersion' | 'connection'>>,
    /** Every connection of this store (the pool's, the listeners'), until it ends. */
    private readonly live: Set<PgClient>,
  ) {}

  /** Connects (the database must exist) without migrating; `openPostgres` (open.ts) also migrates. */
  static async connect(options: PostgresOptions): Promise<PgDb> {
    checkOptions(options);
    const pg = await loadPg();
    const given = typeof options.connection === 'string' ? { connectionString: options.connection } : { ...options.connection };
    const live = new Set<PgClient>();
    const unreachableMs = options.unreachableMs ?? PG_DEFAULTS.unreachableMs;
    const opts = {
      statementTimeoutMs: options.statementTimeoutMs ?? PG_DEFAULTS.statementTimeoutMs,
      unreachableMs,
      idleInTransactionMs: options.idleInTransactionMs ?? PG_DEFAULTS.idleInTransactionMs,
      poolSize: options.poolSize ?? (typeof given.max === 'number' ? given.max : PG_DEFAULTS.poolSize),
      // One attempt never outlasts the wait for an unreachable server (a black-holed host would
      // otherwise hold a call for the whole attempt), nor goes below what a loopback connect needs.
      connectTimeoutMs: options.connectTimeoutMs ?? (typeof given.connectionTimeoutMillis === 'number' && given.connectionTimeoutMillis > 0
        ? given.connectionTimeoutMillis : Math.max(100, Math.min(PG_DEFAULTS.connectTimeoutMs, unreachableMs))),
    };
    const config: Record<string, unknown> = {
      keepAlive: true,
      application_name: `ragloom@${hostname()}`,
      ...given,
      max: opts.poolSize,
      connectionTimeoutMillis: opts.connectTimeoutMs,
      statement_timeout: opts.statementTimeoutMs,
      idle_in_transaction_session_timeout: opts.idleInTransactionMs,
      types: typeParsers(pg.types),
      Client: sturdyClient(pg, live),
    };
    const { target, database } = targetOf(options.connection);
    const pool = new pg.Pool(config);
    const db = new PgDb(pg, pool, config, target, database, opts, live);
    // An idle connection that dies (server restart, failover) is an event on the pool; unhandled
    // it would crash the process. The pool has dropped it already: the next call reconnects.
    pool.on('error', () => {
      db.idleErrors++;
    });
    try {
      const v = await db.one<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
      if (v!.v < 140000) throw new SchemaError(target, `PostgreSQL at ${target} is version ${v!.v}; ragloom needs PostgreSQL 14 or newer.`);
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw e;
    }
    return db;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Settings in force (tests). */
  get settings(): Readonly<typeof this.opts> {
    return this.opts;
  }

  /**
   * Runs `work` on a pooled connection: waits out an unreachable database (DatabaseUnavailableError
   * after `unreachableMs`), runs it again after a connection loss before COMMIT or a conflict, and
   * after a lost COMMIT only when `idempotent`.
   */
  private async attempt<T>(work: (c: PgPoolClient) => Promise<T>, idempotent: boolean): Promise<T> {
    let downSince = 0;
    let delay = 25;
    let conflicts = 0;
    for (;;) {
      if (this.closed || this.cut.signal.aborted) throw new StoreClosedError(this.target);
      let client: PgPoolClient;
      const tried = Date.now();
      try {
        client = await this.connectClient();
      } catch (e) {
        if (e instanceof StoreClosedError) throw e;
        if (isMissingDatabase(e)) throw new DatabaseMissingError(this.target, this.database, e);
        if (!isConnectionError(e)) throw e;
        // Closing: no waiting for the server.
        if (this.closing.signal.aborted) throw new StoreClosedError(this.target, e);
        downSince ||= tried; // the wait began with the attempt that failed (a connect timeout counts)
        if (Date.now() - downSince >= this.opts.unreachableMs) throw new DatabaseUnavailableError(this.target, Date.now() - downSince, e);
        this.retries++;
        await this.pause(delay);
        delay = Math.min(delay * 2, 1_000);
        continue;
      }
      // A checked-out connection that dies between statements (the server ended it) reports it as
      // an event; unheard, that event would crash the process. It is closed on release instead.
      let died: Error | null = null;
      const onError = (e: Error): void => {
        died ??= e;
      };
      client.on('error', onError);
      try {
        const r = await work(client);
        client.removeListener('error', onError);
        client.release(died ?? undefined);
        return r;
      } catch (e) {
        client.removeListener('error', onError);
        const lost = e instanceof InCommit || isConnectionError(e);
        // A broken connection is closed, never handed to the next caller.
        client.release(lost ? (e as Error) : died ?? undefined);
        if (e instanceof InCommit) {
          if (!idempotent) throw new CommitOutcomeUnknownError(this.target, e.lost);
        } else if (lost) {
          // not committed: run again
        } else if (isRetryableConflict(e) && conflicts < PG_DEFAULTS.conflictRetries) {
          conflicts++;
          await sleep(Math.random() * 10 * conflicts);
          this.retries++;
          continue;
        } else if (isStatementTimeout(e)) {
          throw new StatementTimeoutError(this.target, this.opts.statementTimeoutMs, e);
        } else {
          throw e;
        }
        if (this.closing.signal.aborted) throw new StoreClosedError(this.target, e instanceof InCommit ? e.lost : e);
        this.retries++;
        downSince ||= Date.now();
        if (Date.now() - downSince >= this.opts.unreachableMs) throw new DatabaseUnavailableError(this.target, Date.now() - downSince, e instanceof InCommit ? e.lost : e);
        await this.pause(delay);
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }

  /** A pooled connection; StoreClosedError once the close cut the store off (a connect still under way is released when it ends). */
  private connectClient(): Promise<PgPoolClient> {
    const pending = this.pool.connect();
    const cut = this.cut.signal;
    return new Promise((resolve, reject) => {
      let done = false;
      const onCut = (): void => {
        if (done) return;
        done = true;
        pending.then((c) => c.release(true), () => undefined);
        reject(new StoreClosedError(this.target));
      };
      cut.addEventListener('abort', onCut, { once: true });
      pending.then((c) => {
        cut.removeEventListener('abort', onCut);
        if (!done) (done = true, resolve(c));
      }, (e: unknown) => {
        cut.removeEventListener('abort', onCut);
        if (!done) (done = true, reject(e));
      });
    });
  }

  /** Waits `ms`, or less when the store begins to close (the caller then fails rather than wait). */
  private pause(ms: number): Promise<void> {
    const signal = this.closing.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async rows<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]> {
    return this.attempt(async (c) => {
      this.statements++;
      return (await c.query(sql, params)).rows as R[];
    }, true);
  }

  /**
   * `rows` through a statement prepared once per connection under `name` (pg keeps which of its
   * connections have it; a new connection, after a reconnect or a failover, prepares it again):
   * the server then skips parsing and planning, ~0.2 ms a call on loopback — for the one statement
   * of a warm search (PgSearch.pageChunks). `name` must always go with the same `sql`.
   */
  async prepared<R = Record<string, unknown>>(name: string, sql: string, params: unknown[]): Promise<R[]> {
    return this.attempt(async (c) => {
      this.statements++;
      return (await c.query({ name, text: sql, values: params })).rows as R[];
    }, true);
  }

  async one<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R | undefined> {
    return (await this.rows<R>(sql, params))[0];
  }

  /**
   * Runs `fn` in one transaction and commits it. `fn` may run more than once (see the module
   * comment): it must not touch anything but the database through `tx`.
   */
  async tx<T>(fn: (tx: PgTx) => Promise<T>, opts: TxOptions = {}): Promise<T> {
    const begin = opts.isolation && opts.isolation !== 'read committed' ? `BEGIN ISOLATION LEVEL ${opts.isolation.toUpperCase()}` : 'BEGIN';
    const r = await this.attempt(async (c) => {
      this.statements += 2; // BEGIN, COMMIT
      await c.query(begin);
      let result: T;
      try {
        result = await fn(wrap(c, this));
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
      try {
        await c.query('COMMIT');
      } catch (e) {
        if (isConnectionError(e)) throw new InCommit(e);
        throw e; // the server refused the COMMIT (a deferred check, a conflict): it rolled back
      }
      return result;
    }, opts.idempotent ?? false);
    this.onCommit?.();
    return r;
  }

  /** One statement in its own transaction (see `tx`); returns the rows it changed. */
  async run(sql: string, params?: unknown[], opts: TxOptions = {}): Promise<number> {
    return this.tx((t) => t.run(sql, params), opts);
  }

  /**
   * Listens on `channel` on a connection of its own, reconnecting with backoff when it drops.
   * `wake` is called on every notification and after every reconnect (notifications sent while
   * disconnected are lost: the caller catches up by reading). Returns the function that stops it.
   * `name` is the connection's application_name (others count listeners by it).
   */
  async listen(channel: string, wake: (why: 'notify' | 'reconnect') => void, name?: string): Promise<() => Promise<void>> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new TypeError(`Invalid channel name ${channel}`);
    let client: PgClient | null = null;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const connect = async (): Promise<void> => {
      // Its 'error' event is followed by 'end', which reconnects (sturdyClient hears the error).
      const c = new (this.config.Client as PgModule['Client'])({ ...this.config, statement_timeout: 0, ...(name ? { application_name: name } : {}) });
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      if (stopped) {
        cutConnection(c); // stopped while it connected
        return;
      }
      c.on('notification', () => wake('notify'));
      c.on('end', () => {
        if (stopped) return;
        client = null;
        schedule(50);
      });
      client = c;
    };
    const schedule = (ms: number): void => {
      if (stopped || timer) return;
      timer = setTimeout(() => {
        timer = null;
        connect().then(() => wake('reconnect'), () => schedule(Math.min(ms * 2, 2_000)));
      }, ms);
      timer.unref();
    };
    await connect();
    const stop = async (): Promise<void> => {
      stopped = true;
      if (timer) clearTimeout(timer);
      this.listeners.delete(stop);
      const c = client;
      if (!c) return;
      // Politely when the server answers; a server that does not never closes its side: cut then.
      await Promise.race([c.end().catch(() => undefined), sleep(LISTEN_END_MS)]);
      cutConnection(c);
    };
    this.listeners.add(stop);
    return stop;
  }

  /** Pool figures (tests, benchmarks). */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  /**
   * The store is about to close (see the module comment): calls stop waiting for the server, and
   * a watch begins that cuts every connection if the server leaves a probe unanswered.
   */
  beginClose(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    void this.watchClose();
  }

  /** Until the close ends: after a grace, asks the server; no answer, and every connection is cut. */
  private async watchClose(): Promise<void> {
    for (let wait = CLOSE_GRACE_MS; !this.ended; wait = CLOSE_PROBE_MS) {
      // Unref'd: a close that never comes to its end (a closer that threw) does not keep the process alive.
      await new Promise((r) => setTimeout(r, wait).unref());
      if (this.ended || (await this.answers())) continue;
      this.cut.abort();
      for (const c of this.live) cutConnection(c);
      return;
    }
  }

  /** Set once close() has ended the pool. */
  private ended = false;

  /** Whether the server answers a new connection's `SELECT 1` within CLOSE_PROBE_MS. */
  private async answers(): Promise<boolean> {
    const c = new (this.config.Client as PgModule['Client'])({ ...this.config, connectionTimeoutMillis: CLOSE_PROBE_MS, application_name: 'ragloom-close-probe' });
    const timer = sleep(CLOSE_PROBE_MS).then(() => false);
    try {
      return await Promise.race([c.connect().then(() => c.query('SELECT 1')).then(() => true, () => false), timer]);
    } finally {
      cutConnection(c);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.beginClose();
    this.closed = true;
    await Promise.all([...this.listeners].map((stop) => stop()));
    try {
      await this.pool.end();
    } finally {
      this.ended = true;
    }
  }
}

function wrap(c: PgPoolClient, counts: { statements: number }): PgTx {
  const query = (sql: string, params?: unknown[]) => {
    counts.statements++;
    return c.query(sql, params);
  };
  return {
    rows: async <R>(sql: string, params?: unknown[]) => (await query(sql, params)).rows as R[],
    one: async <R>(sql: string, params?: unknown[]) => (await query(sql, params)).rows[0] as R | undefined,
    run: async (sql: string, params?: unknown[]) => (await query(sql, params)).rowCount ?? 0,
  };
}

/**
 * node-postgres, loaded on first use: `pg` is an optional peer dependency, so a default install
 * (SQLite only) never carries it, and asking for PostgreSQL without it is a MissingPackageError
 * that names the package and the command that installs it.
 */
import { importOptional } from '../../util/index.js';

/** The parts of a `pg` pool config ragloom reads or sets; any other field is passed to `pg` as it is. */
export interface PgConnectionConfig {
  connectionString?: string;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string | (() => string | Promise<string>);
  ssl?: unknown;
  /** Pool size. @default 10 */
  max?: number;
  [key: string]: unknown;
}

/** The node-postgres module, as ragloom uses it (its own types stay out of ragloom's declarations). */
export interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool;
  Client: new (config: Record<string, unknown>) => PgClient;
  types: { getTypeParser(oid: number, format?: string): unknown };
}

export interface PgQueryResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  /** A named statement: pg prepares it on the connection at its first use, then only binds and runs it. */
  query(config: { name: string; text: string; values?: unknown[] }): Promise<PgQueryResult>;
}

export interface PgClient extends PgQueryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'notification', f: (n: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', f: (e?: Error) => void): unknown;
  removeAllListeners(event?: string): unknown;
}

export interface PgPoolClient extends PgQueryable {
  /** Returns the client to the pool; with an error (or true) the connection is closed instead. */
  release(destroy?: Error | boolean): void;
  on(event: 'error', f: (e: Error) => void): unknown;
  removeListener(event: 'error', f: (e: Error) => void): unknown;
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'error', f: (e: Error) => void): unknown;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

let loaded: Promise<PgModule> | undefined;

/**
 * pg's Client, with a listener for its 'error' event from birth. A connection the server ends
 * (restart, failover, pg_terminate_backend) reports it as that event, and an event nobody hears
 * crashes the process; pg-pool listens only while a client is idle in the pool, so one that dies
 * while it connects, or while checked out between two statements, would. The failure still
 * reaches whoever uses the client: its next query rejects, and the pool drops it.
 */
export function sturdyClient(pg: PgModule, live?: Set<PgClient>): PgModule['Client'] {
  const Base = pg.Client as unknown as new (config: Record<string, unknown>) => PgClient;
  return class SturdyClient extends Base {
    constructor(config: Record<string, unknown>) {
      super(config);
      this.on('error', () => undefined);
      // Every connection of the store, connecting or connected, until it ends: what a close cuts.
      if (live) {
        live.add(this);
        this.on('end', () => live.delete(this));
      }
    }
  } as unknown as PgModule['Client'];
}

/**
 * Ends a connection at once, whatever the server does: its socket is destroyed (pg's `end()` waits
 * for the server to close its side, which a server that does not answer never does). The server
 * rolls back a transaction whose connection is gone; a statement in flight rejects with a
 * connection error.
 */
export function cutConnection(c: PgClient): void {
  (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** The `pg` module; a MissingPackageError naming `pg` when it is not installed. */
export function loadPg(): Promise<PgModule> {
  loaded ??= importOptional('pg', 'A PostgreSQL store', () => import('pg')).then((m) => {
    const mod = ((m as { default?: unknown }).default ?? m) as PgModule;
    return mod;
  });
  // A failed load is not cached: installing the package and trying again works in the same process.
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

/** OIDs whose text form ragloom reads as a JS number: int8 (ids, sizes and times in ms stay below 2^53). */
const INT8 = 20;

/**
 * Per-pool type parsers (never pg's global ones, which would change other code in the same
 * process that uses `pg`): bigint columns as numbers.
 */
export function typeParsers(base: { getTypeParser(oid: number, format?: string): unknown }): { getTypeParser(oid: number, format?: string): unknown } {
  return {
    getTypeParser(oid: number, format?: string) {
      if (oid === INT8 && format !== 'binary') return (v: string) => Number(v);
      return base.getTypeParser(oid, format);
    },
  };
}

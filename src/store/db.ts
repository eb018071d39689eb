import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate, SCHEMA_VERSION } from './migrations.js';

export type Db = Database.Database;

// Prepared statements per connection: preparing costs more than running the small hot queries.
const statements = new WeakMap<Db, Map<string, Database.Statement>>();

/** The prepared statement for `sql` on `db`, prepared once per connection. */
export function cachedStatement(db: Db, sql: string): Database.Statement {
  let m = statements.get(db);
  if (!m) statements.set(db, (m = new Map()));
  let st = m.get(sql);
  if (!st) m.set(sql, (st = db.prepare(sql)));
  return st;
}

/** Page size of new database files (bytes). */
export const PAGE_SIZE = 16384;

export interface OpenOptions {
  /** Stop after this schema version (tests of migrations only). */
  targetVersion?: number;
  readonly?: boolean;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A read-only open cannot upgrade the schema, and the code expects the current one. */
function requireCurrentSchema(db: Db, path: string): void {
  const v = db.pragma('user_version', { simple: true }) as number;
  if (v === SCHEMA_VERSION) return;
  throw new Error(v > SCHEMA_VERSION
    ? `Database schema version ${v} is newer than this ragloom (${SCHEMA_VERSION}); upgrade ragloom.`
    : v === 0
      ? `${path} is not a ragloom store (schema version 0): a read-only open cannot create one`
      : `${path} has schema version ${v}, older than this ragloom's ${SCHEMA_VERSION}: open it once without readonly to upgrade it`);
}

/** Opens (creating if needed) a ragloom database file: WAL, foreign keys, sqlite-vec, migrated. */
export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  if (path !== ':memory:' && !opts.readonly) mkdirSync(dirname(path), { recursive: true });
  // A file this process may not write is refused before SQLite opens it: opened, a WAL database
  // gets -wal and -shm files created with the file's read-only mode, and those would keep it
  // unopenable after the mode is fixed.
  if (path !== ':memory:' && !opts.readonly && existsSync(path) && !writable(path)) {
    throw new Database.SqliteError('attempt to write a readonly database', 'SQLITE_READONLY');
  }
  // fileMustExist: a read-only open of a missing file is SQLITE_CANTOPEN, not a new empty store.
  const db = new Database(path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  try {
    sqliteVec.load(db);
    // 16 KiB pages for a new file (an existing file keeps its own: SQLite ignores this then). A
    // vec0 table keeps 1,024 vectors per blob (1.5 MiB at 384-d) and each insert writes into
    // one; larger pages make that blob's overflow chain 4x shorter and every commit write a
    // quarter of the WAL frames. Measured at 100k chunks (bench/speed.ts): ingest about 25%
    // faster, query p50 unchanged. Set before WAL mode, which writes the file's first page.
    if (!opts.readonly) db.pragma(`page_size = ${PAGE_SIZE}`);
    if (path !== ':memory:' && !opts.readonly) db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    // Statement journals (a DELETE that also writes through a trigger, FTS5 deletes) outgrow
    // SQLite's 64 KiB in-memory limit after four 16 KiB pages, and this build then writes them to
    // a file in /var/tmp: one create + unlink per such transaction. Kept in memory, an evicting
    // memory add goes from ~300 to ~140 µs (bench/memory.ts).
    db.pragma('temp_store = MEMORY');
    if (!opts.readonly) migrate(db, opts.targetVersion);
    else requireCurrentSchema(db, path);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

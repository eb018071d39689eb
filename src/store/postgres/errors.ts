/**
 * What a failure of PostgreSQL means to the store: whether the database could not be reached
 * (retry once it is back), whether a transaction is known not to have committed (safe to run
 * again), or whether its outcome is unknown (the connection died during COMMIT: only an idempotent
 * unit of work may be run again). api/errors.ts turns these errors into ApiErrors.
 */

/** A pg error's fields we read (node-postgres `DatabaseError`, or a socket error). */
interface PgErrorLike {
  code?: unknown;
  message?: unknown;
  constraint?: unknown;
}

const fields = (e: unknown): PgErrorLike => (e && typeof e === 'object' ? (e as PgErrorLike) : {});

/** Socket-level failures: the server is down, restarting, unreachable or dropped the connection. */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * SQLSTATEs of a server that is going away or not ready, or that ended the session: admin_shutdown
 * (57P01, also what pg_terminate_backend sends), crash_shutdown (57P02), cannot_connect_now
 * (57P03: starting up, in recovery), idle_session_timeout (57P05), the idle-in-transaction
 * timeout (25P03), too_many_connections (53300), and read_only_sql_transaction (25006: this server
 * is a standby now, after a failover; a new connection reaches the primary).
 */
const GONE_STATES = new Set(['57P01', '57P02', '57P03', '57P05', '25P03', '53300', '25006']);

/** node-postgres' own messages when the socket ends under it. */
const GONE_MESSAGE = /Connection terminated|Connection ended|connection (?:is )?closed|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed|Connection refused/i;

/**
 * True when `e` says the connection (or the server) is gone rather than the statement being
 * wrong: a transaction that failed this way before its COMMIT was sent did not commit.
 */
export function isConnectionError(e: unknown): boolean {
  const { code, message } = fields(e);
  if (typeof code === 'string') {
    if (NET_CODES.has(code) || GONE_STATES.has(code) || code.startsWith('08')) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return false; // any other SQLSTATE: the statement failed, the connection did not
  }
  return typeof message === 'string' && GONE_MESSAGE.test(message);
}

/** serialization_failure or deadlock_detected: the server rolled the transaction back; running it again is safe. */
export function isRetryableConflict(e: unknown): boolean {
  const { code } = fields(e);
  return code === '40001' || code === '40P01';
}

/** query_canceled: statement_timeout (or a cancel) stopped the statement; its transaction is rolled back. */
export function isStatementTimeout(e: unknown): boolean {
  return fields(e).code === '57014';
}

/** A unique index refused a row; with `constraint`, only that index's refusal. */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const f = fields(e);
  return f.code === '23505' && (constraint === undefined || f.constraint === constraint);
}

/** The database named in the connection does not exist (invalid_catalog_name). */
export function isMissingDatabase(e: unknown): boolean {
  return fields(e).code === '3D000';
}

/** Where a PostgreSQL store lives, for messages: `host:port/database` (never the password). */
export type PgTarget = string;

/** Base of the store's PostgreSQL errors: `target` names the server and database, `code` the cause. */
export class PostgresStoreError extends Error {
  override name = 'PostgresStoreError';
  constructor(readonly target: PgTarget, readonly code: string, message: string, opts?: ErrorOptions) {
    super(message, opts);
  }
}

/** The database could not be reached for as long as the store waits for it (`unreachableMs`). */
export class DatabaseUnavailableError extends PostgresStoreError {
  override name = 'DatabaseUnavailableError';
  constructor(target: PgTarget, waitedMs: number, cause: unknown) {
    const c = fields(cause);
    const why = typeof c.code === 'string' ? `${c.code}: ${String(c.message ?? '')}` : String(c.message ?? cause);
    super(target, 'DB_UNAVAILABLE', `PostgreSQL at ${target} cannot be reached (${why}); waited ${Math.round(waitedMs)} ms. ragloom reconnects by itself once it is back.`, { cause });
  }
}

/** The connection named a database that does not exist: ragloom never creates databases. */
export class DatabaseMissingError extends PostgresStoreError {
  override name = 'DatabaseMissingError';
  constructor(target: PgTarget, readonly database: string, cause: unknown) {
    super(target, 'DB_MISSING', `Database "${database}" does not exist on PostgreSQL at ${target.replace(/\/[^/]*$/, '')}: create it first (createdb ${database}, or CREATE DATABASE "${database}"); ragloom fills an empty database with its schema.`, { cause });
  }
}

/**
 * The connection was lost while COMMIT was in flight: the change may or may not have been saved.
 * Only thrown for units of work that are not idempotent (those are simply run again).
 */
export class CommitOutcomeUnknownError extends PostgresStoreError {
  override name = 'CommitOutcomeUnknownError';
  constructor(target: PgTarget, cause: unknown) {
    super(target, 'COMMIT_UNKNOWN', `The connection to PostgreSQL at ${target} was lost while committing: the change may or may not have been saved; read it back before repeating it.`, { cause });
  }
}

/**
 * The store was closed while the call waited for the database or ran on it, and the database did
 * not answer: the call was stopped before its COMMIT was sent, so nothing of it was saved (the
 * server rolls back a transaction whose connection is cut).
 */
export class StoreClosedError extends PostgresStoreError {
  override name = 'StoreClosedError';
  constructor(target: PgTarget, cause?: unknown) {
    super(target, 'STORE_CLOSED', `The PostgreSQL store at ${target} was closed while this call was waiting for it: nothing of the call was saved.`, { cause });
  }
}

/** statement_timeout stopped a statement; nothing of its transaction was saved. */
export class StatementTimeoutError extends PostgresStoreError {
  override name = 'StatementTimeoutError';
  constructor(target: PgTarget, timeoutMs: number, cause: unknown) {
    super(target, 'STATEMENT_TIMEOUT', `A statement on PostgreSQL at ${target} ran longer than statement_timeout (${timeoutMs} ms) and was cancelled; nothing of its transaction was saved.`, { cause });
  }
}

/** The schema in the database is not one this ragloom can use (newer, or tables it did not create). */
export class SchemaError extends PostgresStoreError {
  override name = 'SchemaError';
  constructor(target: PgTarget, message: string) {
    super(target, 'SCHEMA', message);
  }
}

/**
 * The SQLite change feed: what an in-memory copy of a table (src/search vector-index.ts,
 * term-index.ts) must apply to catch up
 * with the file: rows inserted past the highest id it holds, and the rows a change log
 * (`vec_log`, `memory_vec_log`: filled by triggers in the writer's transaction) names since the
 * last sequence number it applied. Writes of any connection or process are seen this way, and
 * rolled-back ones never are. The copies on a connection register as the log's followers, and
 * the log is trimmed only past what all of them applied (followLog, trimLog): the vector indexes
 * of every dimension and the term index share the chunks' `vec_log`.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db.js';

/** A SQLite feed position: the log's last seq applied and the highest row id applied. */
export interface LogAt {
  seq: number;
  maxRow: number;
}

/** What a copy must do to catch up (SQLite's positions). */
export type LogCatchUp =
  | { kind: 'reload' }
  | { kind: 'none' }
  | { kind: 'apply'; dirty: Set<number>; seq: number; maxRow: number; floor: number };

/** A copy that follows a log: the last seq it applied. */
export interface LogFollower {
  readonly logSeq: number;
}

export interface ChangeLogSql {
  /** [the log's trimmed floor, its last seq, the table's highest id], in one statement (one snapshot) */
  logState: string;
  /** rows with an id above ? */
  countFresh: string;
  /** logged ids with seq in (?, ?] */
  logged: string;
  /** ids in (?, ?] */
  freshIds: string;
}

/**
 * The rows to re-read since `at` (seq: the last log entry applied; maxRow: the highest id
 * applied), or 'reload' when the copy was never loaded, the log was trimmed past it, or so much
 * changed that a rebuild is cheaper.
 */
export function changesSince(stmt: (sql: string) => Statement, sql: ChangeLogSql, at: { position: LogAt | null; live: number }): LogCatchUp {
  const [f, max, maxRow] = stmt(sql.logState).raw().get() as [string | null, number, number];
  const floor = Number(f ?? 0);
  const p = at.position;
  if (!p || p.seq < floor) return { kind: 'reload' };
  if (max <= p.seq && maxRow <= p.maxRow) return { kind: 'none' };
  // Inserts are the rows past the highest id applied; updates and deletes come from the log.
  // A rowid is reused when the highest row is deleted and a row inserted after it (rowid =
  // max + 1): the high-water mark follows the table down, so that insert counts as fresh even
  // when the copy saw the delete in an earlier catch-up (another process wrote both).
  const fresh = maxRow > p.maxRow ? (stmt(sql.countFresh).pluck().get(p.maxRow) as number) : 0;
  const logged = max > p.seq ? (stmt(sql.logged).raw().all(p.seq, max) as [number][]) : [];
  if (fresh + logged.length > Math.max(20_000, at.live / 4)) return { kind: 'reload' };
  const dirty = new Set(logged.map((r) => r[0]));
  if (fresh) for (const [r] of stmt(sql.freshIds).raw().all(p.maxRow, maxRow) as [number][]) dirty.add(r);
  return { kind: 'apply', dirty, seq: max, maxRow, floor };
}

/** Entries past the floor before a log is trimmed. */
const LOG_TRIM_AT = 200_000;

/** The copies following each log (by table name) on a connection. */
const followers = new WeakMap<Db, Map<string, Set<LogFollower>>>();

/** Registers a copy that follows `log` on `db`: trimLog never drops what it has not applied. */
export function followLog(db: Db, log: string, f: LogFollower): void {
  let byLog = followers.get(db);
  if (!byLog) followers.set(db, (byLog = new Map()));
  let s = byLog.get(log);
  if (!s) byLog.set(log, (s = new Set()));
  s.add(f);
}

/** Unregisters a copy that is dropped (it no longer holds trimming back). */
export function unfollowLog(db: Db, log: string, f: LogFollower): void {
  followers.get(db)?.get(log)?.delete(f);
}

/**
 * Deletes `log`'s entries up to the lowest sequence every follower on `db` has applied, once
 * LOG_TRIM_AT of them lie past `floor`, and records the new floor (a copy behind it reloads).
 * Skipped on a read-only connection, inside a transaction, or when the file is busy: trimming
 * only saves space.
 */
export function trimLog(db: Db, log: string, sql: { trim: string; setFloor: string }, floor: number): void {
  let upTo = Infinity;
  for (const f of followers.get(db)?.get(log) ?? []) upTo = Math.min(upTo, f.logSeq);
  if (!Number.isFinite(upTo) || upTo - floor < LOG_TRIM_AT || db.readonly || db.inTransaction) return;
  try {
    db.transaction(() => {
      db.prepare(sql.trim).run(upTo);
      db.prepare(sql.setFloor).run(String(upTo));
    })();
  } catch {
    // Busy or read-only: trimming is an optimisation only.
  }
}

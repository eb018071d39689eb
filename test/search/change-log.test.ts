import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { followLog, trimLog, unfollowLog } from '../../src/store/sqlite/change-log.js';
import { openDatabase, type Db } from '../../src/store/index.js';

const SQL = {
  trim: 'DELETE FROM t_log WHERE seq <= ?',
  setFloor: "INSERT OR REPLACE INTO search_meta (key, value) VALUES ('t_log_floor', ?)",
};

describe('trimLog: a change log is trimmed only past what every copy following it has applied', () => {
  let dir: string;
  let db: Db;
  const count = () => db.prepare('SELECT COUNT(*) FROM t_log').pluck().get() as number;
  const floor = () => Number(db.prepare("SELECT value FROM search_meta WHERE key = 't_log_floor'").pluck().get() ?? 0);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ragloom-log-'));
    db = openDatabase(join(dir, 'kb.db'));
    db.exec('CREATE TABLE t_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL)');
    // 250,000 entries: past the 200,000 that make a trim worth it.
    db.exec('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250000) INSERT INTO t_log (rid) SELECT i FROM n');
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('up to the slowest follower, and the floor recorded; unfollowing releases it', () => {
    const fast = { logSeq: 250_000 };
    const slow = { logSeq: 210_000 };
    followLog(db, 't_log', fast);
    followLog(db, 't_log', slow);
    // Another log's follower, far behind, does not hold this one back.
    followLog(db, 'other_log', { logSeq: 5 });
    trimLog(db, 't_log', SQL, 0);
    expect(floor()).toBe(210_000);
    expect(count()).toBe(40_000);
    // Less than 200,000 past the floor: nothing to do.
    unfollowLog(db, 't_log', slow);
    trimLog(db, 't_log', SQL, 210_000);
    expect(count()).toBe(40_000);
    expect(floor()).toBe(210_000);
  });

  test('not past a follower that is far behind; not without followers; never inside a transaction or read-only', () => {
    const behind = { logSeq: 150_000 };
    followLog(db, 't_log', behind);
    followLog(db, 't_log', { logSeq: 250_000 });
    trimLog(db, 't_log', SQL, 0);
    expect(count()).toBe(250_000); // 150,000 − 0 < 200,000
    unfollowLog(db, 't_log', behind);
    db.transaction(() => trimLog(db, 't_log', SQL, 0))();
    expect(count()).toBe(250_000);
    const ro = openDatabase(join(dir, 'kb.db'), { readonly: true });
    try {
      followLog(ro, 't_log', { logSeq: 250_000 });
      trimLog(ro, 't_log', SQL, 0);
    } finally {
      ro.close();
    }
    expect(count()).toBe(250_000);
    trimLog(db, 't_log', SQL, 0);
    expect(count()).toBe(0);
    expect(floor()).toBe(250_000);
    // A connection no copy follows: nothing is trimmed.
    const other = openDatabase(join(dir, 'kb.db'));
    try {
      other.exec('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 210000) INSERT INTO t_log (rid) SELECT i FROM n');
      trimLog(other, 't_log', SQL, 0);
      expect(count()).toBe(210_000);
    } finally {
      other.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  execSql,
  exeSqlRefusal,
  isReadStatement,
  markdownTable,
  pyFloatRepr,
  splitSqlStatements,
  stripSqlFences,
} from '../../src/agent/ops/index.js';

let dir: string;
let dbFile: string;
let outside: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragloom-exesql-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ragloom-exesql-out-'));
  dbFile = path.join(dir, 'shop.db');
  const db = new Database(dbFile);
  db.exec(`
    CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, score REAL);
    INSERT INTO people VALUES (1, 'alice', 1.5), (2, 'bob', NULL), (10, '  x  ', 2.25);
    CREATE TABLE codes (a TEXT, b TEXT);
    INSERT INTO codes VALUES ('007', '1.5'), ('42', 'abc'), ('inf', NULL);
    CREATE TABLE notes (id INTEGER, body TEXT);
    INSERT INTO notes VALUES (1, 'semi;colon'), (NULL, 'it''s');
    CREATE TABLE big (n INTEGER);
    INSERT INTO big VALUES (9007199254740993), (5);
  `);
  db.close();
  fs.writeFileSync(path.join(outside, 'secret.db'), fs.readFileSync(dbFile));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

// Expected tables printed by tabulate 0.10.0 (what pandas' to_markdown calls) for the same values.
const PEOPLE = [
  '|   id | name   |    score |',
  '|-----:|:-------|---------:|',
  '|    1 | alice  | 1.500000 |',
  '|    2 | bob    |          |',
  '|   10 | x      | 2.250000 |',
].join('\n');
const CODES = [
  '|          a | b   |',
  '|-----------:|:----|',
  '|   7.000000 | 1.5 |',
  '|  42.000000 | abc |',
  '| inf        |     |',
].join('\n');

describe('execSql', () => {
  it('runs a SELECT and returns a pandas-style markdown table and the rows', async () => {
    const r = await execSql({ database: dbFile, sql: 'SELECT id, name, score FROM people ORDER BY id' });
    expect(r.formalized_content).toBe(PEOPLE);
    expect(r.json).toEqual([
      [
        { id: 1, name: 'alice', score: 1.5 },
        { id: 2, name: 'bob', score: null },
        { id: 10, name: '  x  ', score: 2.25 },
      ],
    ]);
  });

  it('treats numeric text as numbers in the table, as tabulate does', async () => {
    const r = await execSql({ database: dbFile, sql: 'SELECT a, b FROM codes' });
    expect(r.formalized_content).toBe(CODES);
    expect(r.json).toEqual([[{ a: '007', b: '1.5' }, { a: '42', b: 'abc' }, { a: 'inf', b: null }]]);
  });

  it('runs several statements, strips ```sql fences and [ID:n] markers, keeps ; inside strings', async () => {
    const sql = "```sql\nSELECT id, name, score FROM people ORDER BY id;\nSELECT a, b FROM codes [ID:3];\nSELECT body FROM notes WHERE body = 'semi;colon';\n```";
    const r = await execSql({ database: dbFile, sql });
    expect(r.formalized_content).toBe([PEOPLE, CODES, '| body       |\n|:-----------|\n| semi;colon |'].join('\n\n'));
    expect(r.json).toHaveLength(3);
    expect(r.json[2]).toEqual([{ body: 'semi;colon' }]);
  });

  it('gives the empty-result message and runs the statements after it', async () => {
    const r = await execSql({ database: dbFile, sql: "SELECT * FROM people WHERE name = 'nobody'; SELECT count(*) AS n FROM people" });
    expect(r.json).toEqual([{ content: 'No record in the database!' }, [{ n: 3 }]]);
    expect(r.formalized_content).toBe('No record in the database!\n\n|   n |\n|----:|\n|   3 |');
  });

  it('an integer column holding NULL prints as floats (pandas), big integers stay exact in json', async () => {
    const r = await execSql({ database: dbFile, sql: 'SELECT id FROM notes; SELECT n FROM big' });
    expect(r.formalized_content.split('\n\n')[0]).toBe('|       id |\n|---------:|\n| 1.000000 |\n|          |');
    expect(r.json[0]).toEqual([{ id: 1 }, { id: null }]);
    expect(r.json[1]).toEqual([{ n: '9007199254740993' }, { n: 5 }]);
  });

  it('limits rows to max_records (default 1024)', async () => {
    const many = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c';
    const r = await execSql({ database: dbFile, sql: many, max_records: 3 });
    expect(r.json).toEqual([[{ x: 1 }, { x: 2 }, { x: 3 }]]);
    const d = await execSql({ database: dbFile, sql: many });
    expect((d.json[0] as unknown[]).length).toBe(1024);
  });

  it('substitutes {refs} in the SQL through resolve', async () => {
    const r = await execSql({
      database: dbFile,
      sql: 'SELECT name FROM people WHERE id = {begin@id}',
      resolve: (ref) => (ref === 'begin@id' ? 10 : undefined),
    });
    expect(r.json).toEqual([[{ name: '  x  ' }]]);
  });

  it('accepts reads: WITH, VALUES, EXPLAIN and reporting PRAGMAs', async () => {
    const r = await execSql({
      database: dbFile,
      sql: "PRAGMA table_info(people); PRAGMA user_version; VALUES (1, 'a'); EXPLAIN QUERY PLAN SELECT * FROM people; -- note\nWITH t AS (SELECT 2 AS v) SELECT v FROM t",
    });
    expect(r.json).toHaveLength(5);
    expect((r.json[0] as Array<{ name: string }>).map((c) => c.name)).toEqual(['id', 'name', 'score']);
    expect(r.json[1]).toEqual([{ user_version: 0 }]);
    expect(r.json[4]).toEqual([{ v: 2 }]);
  });

  it('read-only: refuses writes and ATTACH before running anything and leaves the file untouched', async () => {
    const before = fs.readFileSync(dbFile);
    for (const sql of [
      'DELETE FROM people',
      "INSERT INTO people VALUES (99, 'eve', 0)",
      "UPDATE people SET name = 'z'",
      'DROP TABLE people',
      'CREATE TABLE t (x)',
      `ATTACH DATABASE '${path.join(outside, 'secret.db')}' AS s`,
      'PRAGMA user_version = 7',
      'PRAGMA journal_mode(WAL)',
      'VACUUM',
      'SELECT 1; DELETE FROM people',
      'WITH x AS (SELECT 1) DELETE FROM people',
      '/* hi */ REPLACE INTO people VALUES (1, "a", 1)',
    ]) {
      await expect(execSql({ database: dbFile, sql }), sql).rejects.toThrow(/^ExeSQL is read-only: refused/);
    }
    expect(fs.readFileSync(dbFile).equals(before)).toBe(true);
    const db = new Database(dbFile, { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM people').get()).toEqual({ n: 3 });
    db.close();
  });

  it('read-only off: RAGFlow refuses INSERT/UPDATE/DELETE with its message but runs other statements', async () => {
    const copy = path.join(dir, 'copy.db');
    fs.copyFileSync(dbFile, copy);
    const r = await execSql({
      database: copy,
      readonly: false,
      sql: "DELETE FROM people; CREATE TABLE t (x); SELECT count(*) AS n FROM people; insert into t values (1)",
    });
    expect(r.json).toEqual([
      { content: 'For security reasons, INSERT, UPDATE, and DELETE statements are not supported.' },
      { content: 'No record in the database!' },
      [{ n: 3 }],
      { content: 'For security reasons, INSERT, UPDATE, and DELETE statements are not supported.' },
    ]);
    const db = new Database(copy, { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 't'").get()).toEqual({ n: 1 });
    db.close();
  });

  it('refuses a path outside allowedDirs (.. and symlinks included), allows one inside', async () => {
    const secret = path.join(outside, 'secret.db');
    await expect(execSql({ database: secret, sql: 'SELECT 1', allowedDirs: [dir] })).rejects.toThrow(
      `ExeSQL may not open '${secret}': it is outside the allowed SQL directories (${dir}).`,
    );
    const dotdot = path.join(dir, '..', path.basename(outside), 'secret.db');
    await expect(execSql({ database: dotdot, sql: 'SELECT 1', allowedDirs: [dir] })).rejects.toThrow('outside the allowed SQL directories');
    const link = path.join(dir, 'link.db');
    fs.symlinkSync(secret, link);
    await expect(execSql({ database: link, sql: 'SELECT 1', allowedDirs: [dir] })).rejects.toThrow('outside the allowed SQL directories');
    await expect(execSql({ database: dbFile, sql: 'SELECT 1', allowedDirs: [] })).rejects.toThrow('ExeSQL is not enabled');
    // Relative paths are read from the first allowed directory.
    const r = await execSql({ database: 'shop.db', sql: 'SELECT count(*) AS n FROM people', allowedDirs: [dir] });
    expect(r.json).toEqual([[{ n: 3 }]]);
    await expect(execSql({ database: '../x/shop.db', sql: 'SELECT 1', allowedDirs: [dir] })).rejects.toThrow('outside the allowed SQL directories');
  });

  it('reports a missing file, an empty SQL, a non-SQLite db_type and SQL errors', async () => {
    const missing = path.join(dir, 'missing.db');
    await expect(execSql({ database: missing, sql: 'SELECT 1' })).rejects.toThrow(`Database Connection Failed! \nSQLite database file not found: ${missing}`);
    expect(fs.existsSync(missing)).toBe(false);
    await expect(execSql({ database: dbFile, sql: '  ' })).rejects.toThrow('SQL for `ExeSQL` MUST not be empty.');
    await expect(execSql({ database: dbFile, sql: 'SELECT 1', db_type: 'mysql' })).rejects.toThrow(
      "ExeSQL in ragloom supports SQLite files only; db_type 'mysql' is not available",
    );
    await expect(execSql({ database: dbFile, sql: 'SELECT nope FROM people' })).rejects.toThrow('no such column: nope');
    await expect(execSql({ database: dir, sql: 'SELECT 1' })).rejects.toThrow('Database Connection Failed!');
    // Only fences and blank statements: nothing to run.
    expect(await execSql({ database: dbFile, sql: '```sql\n;\n```' })).toEqual({ formalized_content: '', json: [] });
  });
});

describe('exeSqlRefusal', () => {
  it('validates db_type, database, max_records and the directory', () => {
    expect(exeSqlRefusal({ db_type: 'postgres', database: 'x' })).toBe(
      "ExeSQL in ragloom supports SQLite files only; db_type 'postgres' is not available (set db_type to 'sqlite' and database to the file's path).",
    );
    expect(exeSqlRefusal({ db_type: 'IBM DB2', database: 'x' })).toContain("db_type 'IBM DB2' is not available");
    expect(exeSqlRefusal({ db_type: 'sqlite', database: '' })).toBe('Database name does not support empty value.');
    expect(exeSqlRefusal({ database: 'a.db', max_records: 0 })).toBe('Maximum number of records 0 not supported, should be positive integer');
    expect(exeSqlRefusal({ database: 'a.db', max_records: 1.5 })).toBe('Maximum number of records 1.5 not supported, should be positive integer');
    expect(exeSqlRefusal({ db_type: 'SQLite', database: 'new.db', max_records: 10, allowedDirs: [dir] })).toBeUndefined();
    expect(exeSqlRefusal({ database: path.join(outside, 'later.db'), allowedDirs: [dir] })).toContain('outside the allowed SQL directories');
    expect(exeSqlRefusal({ database: dbFile })).toBeUndefined();
  });
});

describe('SQL helpers', () => {
  it('strips fences with or without a language tag', () => {
    expect(stripSqlFences('```sql\nSELECT 1\n```')).toBe('\nSELECT 1\n');
    expect(stripSqlFences('```SQLite SELECT 1```')).toBe(' SELECT 1');
    expect(stripSqlFences('```\nSELECT 1```')).toBe('\nSELECT 1');
  });

  it('splits on ; outside strings, identifiers and comments', () => {
    expect(splitSqlStatements("SELECT ';'; SELECT \"a;b\" -- c;d\n; SELECT [x;y] /* ; */; SELECT 'it''s;'")).toEqual([
      "SELECT ';'",
      ' SELECT "a;b" -- c;d\n',
      ' SELECT [x;y] /* ; */',
      " SELECT 'it''s;'",
    ]);
  });

  it('recognises read statements', () => {
    for (const s of ['select 1', '  -- c\n/* d */ WITH x AS (SELECT 1) SELECT * FROM x', 'VALUES (1)', 'explain select 1', 'PRAGMA main.table_info(t)', 'pragma page_count']) {
      expect(isReadStatement(s), s).toBe(true);
    }
    for (const s of ['PRAGMA user_version=1', 'PRAGMA optimize', 'PRAGMA wal_checkpoint(FULL)', 'ATTACH x AS y', 'DETACH y', 'BEGIN', 'SAVEPOINT a', 'ANALYZE', 'REINDEX', '']) {
      expect(isReadStatement(s), s).toBe(false);
    }
  });

  it('markdownTable and pyFloatRepr follow tabulate / Python', () => {
    // tabulate: an all-missing column is aligned as text; floats in a text column use repr().
    expect(markdownTable(['nothing'], [[null], [null]])).toBe('| nothing   |\n|:----------|\n|           |\n|           |');
    expect(markdownTable(['t', 'x', 'longheader'], [['héllo wörld', 2, 'a"b']])).toBe(
      '| t           |        x | longheader   |\n|:------------|---------:|:-------------|\n| héllo wörld | 2.000000 | a"b          |',
    );
    expect(markdownTable(['e', 'sp'], [['1e5', ' 3 '], ['2', '4']])).toBe(
      '|             e |   sp |\n|--------------:|-----:|\n| 100000.000000 |   3  |\n|      2.000000 |    4 |',
    );
    expect(markdownTable(['m'], [['a'], [2]])).toBe('| m   |\n|:----|\n| a   |\n| 2.0 |');
    expect([1e16, 1e-5, 123456789012345.6, 0.0001, 1.5e300, 2, -0.5, 0].map(pyFloatRepr)).toEqual([
      '1e+16', '1e-05', '123456789012345.6', '0.0001', '1.5e+300', '2.0', '-0.5', '0.0',
    ]);
  });
});

/**
 * ExeSQL (RAGFlow `agent/tools/exesql.py`) for SQLite files. RAGFlow connects to MySQL, Postgres,
 * MSSQL, DB2, Trino or OceanBase servers; ragloom runs in-process and opens SQLite files only.
 *
 * Output matches RAGFlow's: `formalized_content` is one pandas-style markdown table per statement
 * (`DataFrame.to_markdown(index=False, floatfmt=".6f")`, i.e. tabulate's "pipe" format) joined by a
 * blank line, and `json` is one entry per statement: its rows, or `{content: message}`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pyStr, renderTemplate, type Resolve } from './variables.js';

export const EXESQL_DEFAULT_MAX_RECORDS = 1024;
export const NO_RECORD = 'No record in the database!';
export const WRITE_REFUSED = 'For security reasons, INSERT, UPDATE, and DELETE statements are not supported.';

export interface ExeSqlParams {
  /** The SQLite file (absolute, or relative to the first of `allowedDirs`, else to the working directory). */
  database: string;
  sql: string;
  /** 'sqlite' (or 'sqlite3'); anything else is refused. @default 'sqlite' */
  db_type?: string;
  /** Rows read per statement. @default 1024 */
  max_records?: number;
  /** Open the file read-only and refuse every statement that is not a read. @default true */
  readonly?: boolean;
  /** Directories the file must be inside (symlinks resolved). Undefined: anywhere; empty: nowhere. */
  allowedDirs?: readonly string[];
  /** Substitutes `{ref}`s in `sql` (RAGFlow renders them before running). */
  resolve?: Resolve;
}

export type ExeSqlRow = Record<string, unknown>;
/** One statement's result: its rows, or a message (`{content}`), as RAGFlow's `json` output. */
export type ExeSqlStatementResult = ExeSqlRow[] | { content: string };

export interface ExeSqlResult {
  formalized_content: string;
  json: ExeSqlStatementResult[];
}

// ---------------------------------------------------------------------------------------------
// Validation

const isSqlite = (t: string): boolean => /^sqlite3?$/i.test(t.trim());

/** The realpath of the longest existing prefix plus the rest, so a file not created yet is placed too. */
function realish(p: string): string {
  const rest: string[] = [];
  let cur = p;
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..';
}

/** The absolute path the database names. */
export function exeSqlPath(database: string, allowedDirs?: readonly string[]): string {
  const base = allowedDirs?.length ? path.resolve(allowedDirs[0]!) : process.cwd();
  return path.resolve(base, database);
}

function pathRefusal(database: string, allowedDirs: readonly string[] | undefined): string | undefined {
  if (!allowedDirs) return undefined;
  if (!allowedDirs.length) return 'ExeSQL is not enabled: no directory is allowed for SQLite files (the allowed SQL directories list is empty).';
  const file = realish(exeSqlPath(database, allowedDirs));
  if (allowedDirs.some((d) => inside(realish(path.resolve(d)), file))) return undefined;
  return `ExeSQL may not open '${database}': it is outside the allowed SQL directories (${allowedDirs.join(', ')}).`;
}

/**
 * Why ExeSQL's parameters cannot run (create-time validation), or undefined. Checks the db_type
 * (SQLite only), the database path (present, inside `allowedDirs`) and `max_records`, with RAGFlow's
 * messages where RAGFlow has one. The file need not exist yet.
 */
export function exeSqlRefusal(params: {
  db_type?: unknown;
  database?: unknown;
  max_records?: unknown;
  allowedDirs?: readonly string[];
}): string | undefined {
  const type = params.db_type === undefined || params.db_type === null || params.db_type === '' ? 'sqlite' : String(params.db_type);
  if (!isSqlite(type)) {
    return `ExeSQL in ragloom supports SQLite files only; db_type '${type}' is not available (set db_type to 'sqlite' and database to the file's path).`;
  }
  if (!params.database) return 'Database name does not support empty value.';
  if (typeof params.database !== 'string') return `Database name ${pyStr(params.database)} not supported, should be string type`;
  const mr = params.max_records;
  if (mr !== undefined && mr !== null && (typeof mr !== 'number' || !Number.isInteger(mr) || mr <= 0)) {
    return `Maximum number of records ${pyStr(mr)} not supported, should be positive integer`;
  }
  return pathRefusal(params.database, params.allowedDirs);
}

// ---------------------------------------------------------------------------------------------
// Statements

/** Removes markdown code fences an LLM wraps SQL in (```sql … ```); RAGFlow drops only the backticks, leaving "sql". */
export function stripSqlFences(sql: string): string {
  return sql.replace(/```[ \t]*(?:sqlite3?|sql|mysql|postgres(?:ql)?|psql|tsql|plsql)?(?![A-Za-z0-9_])/gi, '');
}

/**
 * Splits on `;` outside quotes, bracketed identifiers and comments (RAGFlow's `sql.split(";")`
 * breaks a `';'` inside a string literal). Trigger bodies are not special-cased.
 */
export function splitSqlStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      i++;
      while (i < n) {
        if (sql[i] === close) {
          if (close !== ']' && sql[i + 1] === close) i += 2; // doubled quote escapes itself
          else break;
        } else i++;
      }
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === ';') {
      out.push(sql.slice(start, i));
      start = ++i;
    } else i++;
  }
  out.push(sql.slice(start));
  return out;
}

/** The statement without leading whitespace and comments. */
function leading(sql: string): string {
  let s = sql;
  for (;;) {
    s = s.replace(/^\s+/, '');
    if (s.startsWith('--')) {
      const nl = s.indexOf('\n');
      s = nl < 0 ? '' : s.slice(nl + 1);
    } else if (s.startsWith('/*')) {
      const end = s.indexOf('*/');
      s = end < 0 ? '' : s.slice(end + 2);
    } else return s;
  }
}

/** Pragmas that only report, with or without a parenthesised argument. */
const PRAGMA_INTROSPECT = new Set([
  'table_info', 'table_xinfo', 'table_list', 'index_list', 'index_info', 'index_xinfo', 'foreign_key_list',
  'foreign_key_check', 'integrity_check', 'quick_check', 'collation_list', 'database_list', 'function_list',
  'module_list', 'pragma_list', 'compile_options',
]);
/** Pragmas that only report when given no argument (with one they set). */
const PRAGMA_GETTERS = new Set([
  'user_version', 'application_id', 'schema_version', 'data_version', 'page_count', 'page_size', 'freelist_count',
  'encoding', 'journal_mode', 'foreign_keys', 'auto_vacuum', 'cache_size', 'busy_timeout', 'query_only',
  'synchronous', 'temp_store', 'recursive_triggers', 'max_page_count', 'locking_mode', 'secure_delete',
  'cell_size_check', 'automatic_index', 'ignore_check_constraints', 'defer_foreign_keys', 'legacy_alter_table',
  'reverse_unordered_selects', 'trusted_schema', 'mmap_size', 'journal_size_limit', 'wal_autocheckpoint',
]);

/** Whether a statement is a read by its text: SELECT, WITH, VALUES, EXPLAIN, or a reporting PRAGMA. */
export function isReadStatement(sql: string): boolean {
  const s = leading(sql);
  const kw = /^[A-Za-z]+/.exec(s)?.[0].toUpperCase();
  if (kw === 'SELECT' || kw === 'WITH' || kw === 'VALUES' || kw === 'EXPLAIN') return true;
  if (kw !== 'PRAGMA') return false;
  const m = /^PRAGMA\s+(?:[A-Za-z_][A-Za-z0-9_]*\s*\.\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*([\s\S]*)$/i.exec(s);
  if (!m) return false;
  const name = m[1]!.toLowerCase();
  const rest = leading(m[2]!).trim();
  if (rest === '') return PRAGMA_INTROSPECT.has(name) || PRAGMA_GETTERS.has(name);
  return rest.startsWith('(') && PRAGMA_INTROSPECT.has(name);
}

function readonlyRefusal(stmt: string): string {
  const s = leading(stmt).replace(/\s+/g, ' ');
  const preview = s.length > 60 ? `${s.slice(0, 57)}...` : s;
  return `ExeSQL is read-only: refused "${preview}". Only SELECT, WITH, VALUES, EXPLAIN and reporting PRAGMA statements run; INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH and other writes are refused.`;
}

// ---------------------------------------------------------------------------------------------
// Values and the markdown table

type Cell = null | bigint | number | string | Uint8Array;
type Kind = 'none' | 'int' | 'float' | 'str';

const PY_INT = /^\s*[+-]?\d(?:_?\d)*\s*$/;
const PY_FLOAT = /^\s*[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?\s*$/;
/** tabulate's `_isnumber` for text: what `float()` accepts, but only 'inf' / '-inf' / 'nan' of the specials. */
const isNumText = (s: string): boolean => PY_FLOAT.test(s) || ['inf', '-inf', 'nan'].includes(s.toLowerCase());

function blobText(b: Uint8Array): string {
  const buf = Buffer.from(b);
  // ASCII blobs read as text (tabulate's `str(val, "ascii")`); others as base64.
  return buf.every((x) => x < 0x80) ? buf.toString('latin1') : buf.toString('base64');
}

/** A value for the `json` output: exact integers become numbers (strings past 2^53), NaN/Infinity null (as RAGFlow's convert_decimals). */
function jsonValue(v: Cell): unknown {
  if (typeof v === 'bigint') {
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  }
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (v instanceof Uint8Array) return blobText(v);
  return v;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent outside 1e-4 ≤ |x| < 1e16, '.0' on integers. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expS] = x.toExponential().split('e') as [string, string];
  const exp = Number(expS);
  const neg = mant.startsWith('-');
  const digits = mant.replace(/[-.]/g, '');
  let body: string;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const int = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
      const frac = digits.slice(exp + 1);
      body = `${int}.${frac || '0'}`;
    } else body = `0.${'0'.repeat(-exp - 1)}${digits}`;
  } else {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    body = `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return neg ? `-${body}` : body;
}

/** `format(float(v), ".6f")`. */
function fixed6(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (Math.abs(x) >= 1e21) return `${BigInt(x).toString()}.000000`;
  return x.toFixed(6);
}

function textKind(v: Cell): Kind {
  if (v === null) return 'none';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float'; // SQLite REAL (integers arrive as bigint)
  if (typeof v === 'string') return PY_INT.test(v) ? 'int' : isNumText(v) ? 'float' : 'str';
  return 'str';
}

const width = (s: string): number => [...s].length;

/** tabulate's `_afterpoint`: digits after the decimal point (or exponent), -1 for integers and text. */
function afterPoint(s: string): number {
  if (!isNumText(s) || PY_INT.test(s)) return -1;
  let pos = s.lastIndexOf('.');
  if (pos < 0) pos = s.toLowerCase().lastIndexOf('e');
  return pos >= 0 ? s.length - pos - 1 : -1;
}

/**
 * `pd.DataFrame(rows).to_markdown(index=False, floatfmt=".6f")`: numeric columns (numbers, or text
 * that parses as one) are right / decimal aligned, floats printed with 6 decimals, integer columns
 * holding a NULL become floats as pandas makes them; missing values are blank; text left-aligned.
 */
export function markdownTable(columns: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const cols = columns.map((header, ci) => {
    const values = rows.map((r) => r[ci] ?? null);
    const kinds = values.map(textKind);
    const pandasFloat = values.some((v) => v === null) && values.some((v) => typeof v === 'bigint') &&
      values.every((v) => v === null || typeof v === 'bigint');
    let type: Kind | 'bool' = 'bool'; // tabulate's starting type: an all-NULL column aligns as text
    if (kinds.includes('str')) type = 'str';
    else if (kinds.includes('float') || pandasFloat) type = 'float';
    else if (kinds.includes('int')) type = 'int';
    let cells = values.map((v): string => {
      if (v === null) return '';
      if (type === 'float') {
        const n = typeof v === 'string' ? Number(v.trim().replace(/_/g, '').replace(/^([+-]?)inf$/i, '$1Infinity')) : Number(v);
        return fixed6(n);
      }
      if (typeof v === 'number') return pyFloatRepr(v);
      if (v instanceof Uint8Array) return blobText(v);
      return String(v);
    });
    const numeric = type === 'int' || type === 'float';
    if (numeric) {
      const dec = cells.map(afterPoint);
      const max = Math.max(...dec);
      cells = cells.map((s, i) => s + ' '.repeat(max - dec[i]!));
    } else cells = cells.map((s) => s.trim());
    const w = Math.max(width(header) + 2, ...cells.map(width));
    const pad = (s: string): string => (numeric ? ' '.repeat(w - width(s)) + s : s + ' '.repeat(w - width(s)));
    return {
      header: pad(header),
      cells: cells.map(pad),
      rule: numeric ? `${'-'.repeat(w + 1)}:` : `:${'-'.repeat(w + 1)}`,
    };
  });
  const line = (parts: string[]): string => `| ${parts.join(' | ')} |`;
  return [
    line(cols.map((c) => c.header)),
    `|${cols.map((c) => c.rule).join('|')}|`,
    ...rows.map((_, ri) => line(cols.map((c) => c.cells[ri]!))),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Running

/**
 * Runs the SQL against a SQLite file, as RAGFlow's ExeSQL does against a server: `{ref}`s rendered,
 * code fences and `[ID:n]` markers removed, statements split on `;` and run in order, each read
 * giving a markdown table of at most `max_records` rows, an empty read giving "No record in the
 * database!" (RAGFlow stops at it and leaves it out of formalized_content; here later statements
 * still run and the message is in both outputs). INSERT / UPDATE / DELETE give RAGFlow's security
 * message. Read-only mode (the default) opens the file read-only and refuses, before anything
 * runs, every statement that is not a read. The database is always closed.
 */
export async function execSql(p: ExeSqlParams): Promise<ExeSqlResult> {
  if (!p.sql || !String(p.sql).trim()) throw new Error('SQL for `ExeSQL` MUST not be empty.');
  const refusal = exeSqlRefusal(p);
  if (refusal) throw new Error(refusal);
  const readonly = p.readonly ?? true;
  const maxRecords = p.max_records ?? EXESQL_DEFAULT_MAX_RECORDS;

  let sql = p.resolve ? renderTemplate(p.sql, p.resolve) : p.sql;
  sql = stripSqlFences(sql);
  const statements = splitSqlStatements(sql)
    .map((s) => s.replace(/```/g, '').trim().replace(/\[ID:[0-9]+\]/g, ''))
    .filter((s) => leading(s) !== '');

  if (readonly) {
    const bad = statements.find((s) => !isReadStatement(s));
    if (bad) throw new Error(readonlyRefusal(bad));
  }

  const file = exeSqlPath(p.database, p.allowedDirs);
  let real: string;
  try {
    real = fs.realpathSync(file);
    if (!fs.statSync(real).isFile()) throw new Error(`not a file: ${file}`);
  } catch (e) {
    const msg = (e as NodeJS.ErrnoException).code === 'ENOENT' ? `SQLite database file not found: ${file}` : (e as Error).message;
    throw new Error(`Database Connection Failed! \n${msg}`);
  }

  let db: Database.Database;
  try {
    db = new Database(real, { readonly, fileMustExist: true });
  } catch (e) {
    throw new Error(`Database Connection Failed! \n${(e as Error).message}`);
  }
  try {
    db.defaultSafeIntegers(true); // INTEGER → bigint, REAL → number: the table tells ints from floats as pandas does
    const prepare = (s: string): Database.Statement => {
      const stmt = db.prepare(s);
      if (readonly && !stmt.readonly) throw new Error(readonlyRefusal(s));
      return stmt;
    };
    // Read-only: every statement is prepared (and checked) before the first one runs.
    const prepared = readonly ? statements.map(prepare) : undefined;

    const json: ExeSqlStatementResult[] = [];
    const tables: string[] = [];
    statements.forEach((s, i) => {
      if (/^(insert|update|delete)\b/i.test(s)) {
        json.push({ content: WRITE_REFUSED });
        tables.push(WRITE_REFUSED);
        return;
      }
      const stmt = prepared ? prepared[i]! : prepare(s);
      if (!stmt.reader) {
        const { changes } = stmt.run();
        const msg = changes ? `${changes} row(s) affected.` : NO_RECORD;
        json.push({ content: msg });
        tables.push(msg);
        return;
      }
      const columns = stmt.columns().map((c) => c.name);
      const rows: Cell[][] = [];
      const it = stmt.raw(true).iterate() as IterableIterator<Cell[]>;
      try {
        for (const row of it) {
          rows.push(row);
          if (rows.length >= maxRecords) break;
        }
      } finally {
        it.return?.();
      }
      if (!rows.length) {
        json.push({ content: NO_RECORD });
        tables.push(NO_RECORD);
        return;
      }
      json.push(rows.map((r) => Object.fromEntries(columns.map((c, ci) => [c, jsonValue(r[ci] ?? null)]))));
      tables.push(markdownTable(columns, rows));
    });
    return { formalized_content: tables.join('\n\n'), json };
  } finally {
    db.close();
  }
}

/** Small SQL helpers of the PostgreSQL store. */

/** `a = $k, b = $k+1` for an UPDATE of these columns; the values follow in the same order (`valuesOf`). */
export function setList(cols: readonly string[], from = 1): string {
  return cols.map((c, i) => `${quoteCol(c)} = $${from + i}`).join(', ');
}

/** The values of `row` for `cols`, in order. */
export const valuesOf = (row: Record<string, unknown>, cols: readonly string[]): unknown[] => cols.map((c) => row[c]);

/** An INSERT of `row`'s own columns into `table`. */
export function insertRow(table: string, row: Record<string, unknown>): { sql: string; params: unknown[] } {
  const cols = Object.keys(row);
  return { sql: `INSERT INTO ${table} (${cols.map(quoteCol).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, params: valuesOf(row, cols) };
}

/** Column names come from the interface's row types (never user input); `top` and `user` need quotes in PostgreSQL. */
function quoteCol(c: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(c)) throw new TypeError(`Invalid column name ${c}`);
  return c === 'top' || c === 'user' ? `"${c}"` : c;
}

/**
 * An ORDER BY column named by the caller (a column of the row type): checked to be an identifier,
 * quoted where PostgreSQL needs it, folded as SQLite's NOCASE columns compare (`nocase`).
 */
export function orderColumn(col: string, nocase: readonly string[] = [], prefix = ''): string {
  const c = quoteCol(col);
  return nocase.includes(col) ? `ragloom_nocase(${prefix}${c})` : `${prefix}${c}`;
}

/** SQLite's `ORDER BY … DESC` / `ASC` direction word. */
export const dir = (desc: boolean): string => (desc ? 'DESC' : 'ASC');

/** SQLite's LIMIT/OFFSET: a negative limit is no limit. */
export const limitSql = (limit: number): string | number => (limit < 0 ? 'ALL' : Math.floor(limit));

/** Vector bytes (float32 little-endian) as stored. */
export const vectorBytes = (v: Float32Array | null): Buffer | null => (v && v.length ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : null);

/** A stored vector, copied out of the driver's buffer. */
export function vectorOf(b: Buffer | null | undefined): Float32Array | null {
  if (!b || b.byteLength === 0 || b.byteLength % 4 !== 0) return null;
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** Row objects without the store's private columns (insertion order `ord`). */
export function strip<T>(row: Record<string, unknown> | undefined): T | undefined {
  if (!row) return undefined;
  if ('ord' in row) delete row.ord;
  return row as T;
}

export function stripAll<T>(rows: Record<string, unknown>[]): T[] {
  for (const r of rows) if ('ord' in r) delete r.ord;
  return rows as T[];
}

/**
 * Set (after a load's first statement, which takes its snapshot) so that each page of a load is
 * read in rowid order from an index. Without statistics (a table just filled, before autovacuum
 * analysed it) the planner took every matching row, sorted them on disk and kept 4,096 — for
 * every page: a 100k-chunk load took 14 s instead of 2.
 */
export const ORDERED_PAGES = 'SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off';

/** Rows read per statement while an index loads (tests make them small to run many pages). */
export const LOAD_PAGES = { vectors: 4_096, text: 5_000 };

/**
 * FTS5 as search's full-text engine (interface/search.ts FullTextEngine), over the tables shaped
 * like `chunk_fts` (title, content, keywords, questions; the same tokenizer and analyzer): chunks
 * (`chunk_fts`) and memory messages (`memory_fts`). Every statement is built once per table, so
 * each has one cached SQL string. Scores are FTS5's `bm25()` weighted as RAGFlow's field boosts
 * (FTS_COLUMN_WEIGHTS).
 */
import { cachedStatement as stmt, type Db } from '../db.js';
import { FTS_COLUMN_WEIGHTS, type FtsTable, type FullTextEngine } from '../interface/index.js';

/** How one FTS5 table is read. */
interface FtsSource {
  readonly table: FtsTable;
  /** Statements whose results change whenever the table's rows may have (the statistics' cache key). */
  readonly seqSql: string;
  readonly maxSql: string;
  /** FTS5's averages record (id 1 of the `_data` shadow table). */
  readonly avgSql: string;
  readonly dfSql: string;
  readonly dfCapSql: string;
  readonly allSql: string;
  readonly topSql: string;
  /** Prefix of the per-rowid scores statement (the `IN (…)` list follows). */
  readonly scoresSql: string;
  /** Rows in batches of ROW_BATCH: [rowid, content, index_text, keywords JSON, questions JSON, title, lang]. */
  readonly rowsSql: string;
  /** A searchable row's partition and filter columns (memory messages). */
  readonly filterSql: string | null;
}

const ROW_BATCH = 64;
const batchMarks = Array.from({ length: ROW_BATCH }, () => '?').join(',');

function ftsSource(table: FtsTable, rows: { log: string; maxSql: string; rowsSql: string; filterSql?: string }): FtsSource {
  const bm25 = `bm25(${table}, ${FTS_COLUMN_WEIGHTS.join(', ')})`;
  return {
    table,
    seqSql: `SELECT seq FROM sqlite_sequence WHERE name = '${rows.log}'`,
    maxSql: rows.maxSql,
    avgSql: `SELECT block FROM ${table}_data WHERE id = 1`,
    dfSql: `SELECT count(*) FROM ${table} WHERE ${table} MATCH ?`,
    dfCapSql: `SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH ? LIMIT ?)`,
    allSql: `SELECT rowid, ${bm25} AS s FROM ${table} WHERE ${table} MATCH ?`,
    topSql: `SELECT rowid, ${bm25} AS s FROM ${table} WHERE ${table} MATCH ? ORDER BY s LIMIT ? OFFSET ?`,
    scoresSql: `SELECT rowid, ${bm25} AS s FROM ${table} WHERE ${table} MATCH ? AND rowid IN (`,
    rowsSql: rows.rowsSql,
    filterSql: rows.filterSql ?? null,
  };
}

/**
 * The tables' sources. The statistics' key moves with the row table's change log (vec_log /
 * memory_vec_log: deletes and updates) and its highest id (inserts; ids only grow). A chunk's
 * full-text row is ftsTerms(document name, index text or content, keywords, questions); a memory
 * message's is ftsTerms('', content, [], []).
 */
const SOURCES: Readonly<Record<FtsTable, FtsSource>> = {
  chunk_fts: ftsSource('chunk_fts', {
    log: 'vec_log',
    maxSql: 'SELECT COALESCE(MAX(rowid), 0) FROM chunk',
    rowsSql: `SELECT c.rowid, c.content, c.index_text, c.important_keywords, c.questions, CASE WHEN c.titled THEN COALESCE(d.name, '') ELSE '' END, c.lang FROM chunk c
    LEFT JOIN document d ON d.id = c.document_id WHERE c.rowid IN (${batchMarks})`,
  }),
  memory_fts: ftsSource('memory_fts', {
    log: 'memory_vec_log',
    maxSql: 'SELECT COALESCE(MAX(id), 0) FROM memory_message',
    rowsSql: `SELECT id, content, NULL, '[]', '[]', '', NULL FROM memory_message WHERE id IN (${batchMarks})`,
    filterSql: `SELECT memory_id, agent_id, session_id, user_id FROM memory_message
    WHERE id = ? AND (status = 1 AND forget_at IS NULL)`,
  }),
};

function sourceOf(table: FtsTable | undefined): FtsSource {
  const t = table ?? 'chunk_fts';
  const src = Object.hasOwn(SOURCES, t) ? SOURCES[t] : undefined;
  if (!src) throw new RangeError(`Unknown full-text table '${String(table)}'`);
  return src;
}

/** SQLite's varint format (big-endian 7-bit groups; a 9th byte holds 8 bits). */
function varints(b: Buffer): number[] {
  const out: number[] = [];
  let p = 0;
  while (p < b.length) {
    let v = 0;
    for (let i = 0; i < 9 && p < b.length; i++) {
      const c = b[p++]!;
      if (i === 8) {
        v = v * 256 + c;
        break;
      }
      v = v * 128 + (c & 0x7f);
      if (!(c & 0x80)) break;
    }
    out.push(v);
  }
  return out;
}

export class SqliteFullText implements FullTextEngine {
  constructor(private readonly db: Db) {}

  statsKey(table: FtsTable): string {
    const src = sourceOf(table);
    const seq = (stmt(this.db, src.seqSql).pluck().get() as number | undefined) ?? 0;
    const max = stmt(this.db, src.maxSql).pluck().get() as number;
    return `${seq}:${max}`;
  }

  /** FTS5's averages record (id 1 of `<table>_data`): varints nRow, then each column's token total. */
  totals(table: FtsTable): number[] {
    const blob = stmt(this.db, sourceOf(table).avgSql).pluck().get() as Buffer | undefined;
    return blob ? varints(blob) : [];
  }

  count(table: FtsTable, match: string, limit?: number): number {
    const src = sourceOf(table);
    return (limit === undefined ? stmt(this.db, src.dfSql).pluck().get(match) : stmt(this.db, src.dfCapSql).pluck().get(match, limit)) as number;
  }

  all(table: FtsTable, match: string): Array<[number, number]> {
    return stmt(this.db, sourceOf(table).allSql).raw().all(match) as Array<[number, number]>;
  }

  top(table: FtsTable, match: string, limit: number, offset: number): Array<[number, number]> {
    return stmt(this.db, sourceOf(table).topSql).raw().all(match, limit, offset) as Array<[number, number]>;
  }

  scores(table: FtsTable, match: string, rowids: readonly number[]): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    const want = new Set(rowids);
    const prefix = sourceOf(table).scoresSql;
    for (let i = 0; i < rowids.length; i += 200) {
      const part = rowids.slice(i, i + 200);
      // Lists of one become `rowid = ?`, which FTS5 (3.53, contentless) does not always honour
      // together with MATCH: pad to two and check the rowids here.
      if (part.length === 1) part.push(part[0]!);
      const sql = `${prefix}${part.map(() => '?').join(',')})`;
      const rows = stmt(this.db, sql).raw().all(match, ...part) as Array<[number, number]>;
      for (const r of rows) if (want.has(r[0])) out.push(r);
    }
    return out;
  }

  texts(table: FtsTable, rowids: readonly number[]): Array<[number, string, string | null, string, string, string, string | null]> {
    const out: Array<[number, string, string | null, string, string, string, string | null]> = [];
    const sel = stmt(this.db, sourceOf(table).rowsSql).raw();
    for (let i = 0; i < rowids.length; i += ROW_BATCH) {
      const part = rowids.slice(i, i + ROW_BATCH);
      while (part.length < ROW_BATCH) part.push(-1);
      for (const r of sel.all(...part) as Array<[number, string, string | null, string, string, string, string | null]>) out.push(r);
    }
    return out;
  }

  messageFilter(id: number): { memory_id: string; agent_id: string; session_id: string; user_id: string } | undefined {
    return stmt(this.db, SOURCES.memory_fts.filterSql!).get(id) as { memory_id: string; agent_id: string; session_id: string; user_id: string } | undefined;
  }
}

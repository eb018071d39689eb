/**
 * What search reads from a SQLite store (interface/search.ts): the change feeds of the chunk and
 * memory-message tables (`vec_log`, `memory_vec_log`, filled by triggers in the writer's
 * transaction: migrations 4, 5 and 8), the row readers the in-memory indexes load from, the rows
 * of a ranked page, and FTS5 (fulltext.ts). Every read runs synchronously on the connection; the
 * async methods resolve with what they read when called.
 *
 * Row ids only grow (a reused rowid was deleted first), so new rows are the rows past the highest
 * id a copy applied; the log names every deleted, switched or re-embedded row (and a re-titled
 * chunk, store/chunks.ts retitleDocumentChunks). A log trimmed past a copy's position (its floor
 * key in `search_meta`), or a large backlog, makes the copy reload.
 */
import { cachedStatement, type Db } from '../db.js';
import { chunkRowidsOfDocuments } from '../chunks.js';
import type {
  ChangeFeed, CatchUp, FeedAt, FeedName, FeedPosition, LogFollower, PageChunk, SearchReader, TermRow, TextTokenizer, VectorRow, VectorSink, FullTextEngine,
} from '../interface/index.js';
import { VECTOR_SOURCES } from '../interface/index.js';
import { changesSince, followLog, trimLog, unfollowLog, type LogAt, type LogFollower as SeqFollower } from './change-log.js';
import { floatsOf, readVec0Shadow } from './vec0-shadow.js';
import { SqliteFullText } from './fulltext.js';
import { Fts5Tokenizer } from './fts5-tokenizer.js';

/**
 * Where a source's rows, vectors and change log live. Every name is an SQL identifier or
 * expression of the schema (never user input).
 */
interface VectorSource {
  /** The row table and its integer id column (ids only grow; a reused id was deleted first). */
  readonly rows: string;
  readonly id: string;
  /** The partition column: a search names the partitions it searches. */
  readonly partition: string;
  /** SQL expression over a row: true when the row may be found. */
  readonly searchable: string;
  /** The column holding the row's vector dimension (rows of other dimensions are not in the index). */
  readonly dim: string;
  /**
   * Where the vector blobs (float32 little-endian, unit length) live: a column of the row table,
   * or the vec0 table of the dimension named in `vec_index` (rowid = row id, with the partition
   * column and `embedding`).
   */
  readonly vectors: { readonly column: string } | { readonly vecIndex: true };
  /**
   * Row columns kept in memory for equality filters; only with vectors in a column. They must
   * never change after insert (the log triggers do not watch them).
   */
  readonly tags: readonly string[];
  /** The change log (seq AUTOINCREMENT, rid): ids of deleted rows and of rows updated in a watched column. */
  readonly log: string;
  /** `search_meta` key of the log's trimmed floor. */
  readonly floorKey: string;
}

/** Chunks: vectors in `vec_<dim>` (migrations 2, 4, 5). */
const CHUNK_VECTORS: VectorSource = {
  rows: 'chunk',
  id: 'rowid',
  partition: 'dataset_id',
  searchable: 'available = 1',
  dim: 'vec_dim',
  vectors: { vecIndex: true },
  tags: VECTOR_SOURCES.chunks.tags,
  log: 'vec_log',
  floorKey: 'vec_log_floor',
};

/** Memory messages: vectors in `memory_message.vector` (migration 8); searchable = enabled and not forgotten. */
const MEMORY_VECTORS: VectorSource = {
  rows: 'memory_message',
  id: 'id',
  partition: 'memory_id',
  searchable: 'status = 1 AND forget_at IS NULL',
  dim: 'dim',
  vectors: { column: 'vector' },
  tags: VECTOR_SOURCES.memory.tags,
  log: 'memory_vec_log',
  floorKey: 'memory_vec_log_floor',
};

const SOURCES: Readonly<Record<FeedName, VectorSource>> = { chunks: CHUNK_VECTORS, memory: MEMORY_VECTORS };

/** The statements of a feed (one per source). */
function feedSql(src: VectorSource) {
  const { rows, id } = src;
  return {
    /** floor, maxSeq and maxRow in one statement (one snapshot, one call) */
    logState: `SELECT (SELECT value FROM search_meta WHERE key = '${src.floorKey}'), (SELECT COALESCE(MAX(seq), 0) FROM ${src.log}),
      (SELECT COALESCE(MAX(${id}), 0) FROM ${rows})`,
    maxSeq: `SELECT COALESCE(MAX(seq), 0) FROM ${src.log}`,
    maxRow: `SELECT COALESCE(MAX(${id}), 0) FROM ${rows}`,
    countFresh: `SELECT COUNT(*) FROM ${rows} WHERE ${id} > ?`,
    logged: `SELECT rid FROM ${src.log} WHERE seq > ? AND seq <= ?`,
    freshIds: `SELECT ${id} FROM ${rows} WHERE ${id} > ? AND ${id} <= ?`,
    trim: `DELETE FROM ${src.log} WHERE seq <= ?`,
    setFloor: `INSERT OR REPLACE INTO search_meta (key, value) VALUES ('${src.floorKey}', ?)`,
  };
}

/** The statements of the vectors of one source and dimension. */
function vectorSql(src: VectorSource, vecTable: string | undefined) {
  const { rows, id } = src;
  const col = 'column' in src.vectors ? src.vectors.column : null;
  if (!col && !vecTable) throw new Error('vectors of this dimension have no table');
  const tags = src.tags.map((t) => `, ${t}`).join('');
  return {
    /** one row: (searchable, partition, dim[, vector, tags…]) */
    row: `SELECT (${src.searchable}), ${src.partition}, ${src.dim}${col ? `, ${col}${tags}` : ''} FROM ${rows} WHERE ${id} = ?`,
    /** one vector by rowid (vec0 sources) */
    vec: col ? null : `SELECT embedding FROM ${vecTable} WHERE rowid = ?`,
    /** rows of this dimension, to size the arrays (vec0 sources; a column source grows as it loads, sparing a scan) */
    count: col ? null : `SELECT COUNT(*) AS n FROM ${rows} WHERE ${src.dim} = ?`,
    /** vec0 sources: (id, searchable) of the rows of this dimension */
    state: col ? null : `SELECT ${id}, (${src.searchable}) FROM ${rows} WHERE ${src.dim} = ?`,
    /** (id, partition, vector) for vec0 sources; (id, partition, vector, searchable, tags…) for column sources */
    load: col
      ? `SELECT ${id}, ${src.partition}, ${col}, (${src.searchable})${tags} FROM ${rows} WHERE ${src.dim} = ? AND ${id} <= ?`
      : `SELECT rowid, ${src.partition}, embedding FROM ${vecTable}`,
  };
}

const NO_TAGS: readonly string[] = [];

/** SQLite's feed positions are LogAt objects (opaque to search). */
const position = (at: LogAt): FeedPosition => at as unknown as FeedPosition;
const logAt = (p: FeedPosition): LogAt => p as unknown as LogAt;

class SqliteFeed implements ChangeFeed {
  private readonly sql: ReturnType<typeof feedSql>;
  /** each follower as change-log.ts's registry sees it (its last seq) */
  private readonly seqOf = new Map<LogFollower, SeqFollower>();
  constructor(private readonly db: Db, private readonly src: VectorSource) {
    this.sql = feedSql(src);
  }

  /** The same, synchronously (loads and catch-ups inside one read). */
  changesNow(at: FeedAt): CatchUp {
    const c = changesSince((q) => cachedStatement(this.db, q), this.sql, { position: at.position && logAt(at.position), live: at.live });
    if (c.kind !== 'apply') return c;
    return { kind: 'apply', dirty: c.dirty, position: position({ seq: c.seq, maxRow: c.maxRow }), floor: position({ seq: c.floor, maxRow: 0 }) };
  }

  async changesSince(at: FeedAt): Promise<CatchUp> {
    return this.changesNow(at);
  }

  /** maxSeq and maxRow, read in the caller's transaction (or each as its own statement). */
  headNow(): LogAt {
    return {
      seq: cachedStatement(this.db, this.sql.maxSeq).pluck().get() as number,
      maxRow: cachedStatement(this.db, this.sql.maxRow).pluck().get() as number,
    };
  }

  async head(): Promise<FeedPosition> {
    return position(this.db.transaction(() => this.headNow())());
  }

  follow(f: LogFollower): void {
    // Not loaded (no position): seq 0, which holds trimming back.
    const s: SeqFollower = { get logSeq() { return f.position ? logAt(f.position).seq : 0; } };
    this.seqOf.set(f, s);
    followLog(this.db, this.src.log, s);
  }

  unfollow(f: LogFollower): void {
    const s = this.seqOf.get(f);
    if (!s) return;
    this.seqOf.delete(f);
    unfollowLog(this.db, this.src.log, s);
  }

  async trim(floor: FeedPosition): Promise<void> {
    trimLog(this.db, this.src.log, this.sql, logAt(floor).seq);
  }
}

const TERM_COLUMNS = `SELECT c.rowid, c.content, c.index_text, c.important_keywords, c.questions, CASE WHEN c.titled THEN COALESCE(d.name, '') ELSE '' END, c.document_id, c.lang, d.name FROM chunk c
    LEFT JOIN document d ON d.id = c.document_id`;
const TERM_SQL = {
  slice: `${TERM_COLUMNS} WHERE c.rowid > ? AND c.rowid <= ? ORDER BY c.rowid LIMIT ?`,
  // chunk_dataset (dataset_id) holds each dataset's rowids in order: no sort.
  datasetSlice: `${TERM_COLUMNS} WHERE c.dataset_id = ? AND c.rowid > ? AND c.rowid <= ? ORDER BY c.rowid LIMIT ?`,
  one: `${TERM_COLUMNS} WHERE c.rowid = ?`,
  datasetOne: `${TERM_COLUMNS} WHERE c.rowid = ? AND c.dataset_id = ?`,
  tokenizer: "SELECT sql FROM sqlite_master WHERE name = 'chunk_fts'",
};

const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

type PageTuple = [number, string, string, string, string, string, string, string, string, number, string, string, string, number, string | null, string, string | null];

/** The search side of one connection (one per connection: its in-memory indexes are cached by it). */
export class SqliteSearch implements SearchReader {
  private readonly feeds: Record<FeedName, SqliteFeed>;
  private readonly vecTables = new Map<number, string>();
  private tokenizer?: Fts5Tokenizer;
  readonly fullText: FullTextEngine;

  constructor(readonly db: Db) {
    this.feeds = { chunks: new SqliteFeed(db, CHUNK_VECTORS), memory: new SqliteFeed(db, MEMORY_VECTORS) };
    this.fullText = new SqliteFullText(db);
  }

  feed(name: FeedName): ChangeFeed {
    return this.feeds[name];
  }

  async chunkDims(): Promise<number[]> {
    return this.db.prepare('SELECT dim FROM vec_index').pluck().all() as number[];
  }

  /** The vec0 table of the chunks' `dim`-sized vectors, or undefined when none exists. */
  private vecTable(dim: number): string | undefined {
    let t = this.vecTables.get(dim);
    if (t === undefined) {
      t = (this.db.prepare('SELECT table_name FROM vec_index WHERE dim = ?').get(dim) as { table_name: string } | undefined)?.table_name;
      if (t !== undefined) this.vecTables.set(dim, t);
    }
    return t;
  }

  async hasChunkDim(dim: number): Promise<boolean> {
    return this.vecTable(dim) !== undefined;
  }

  async loadVectors(feed: FeedName, dim: number, sink: VectorSink, opts: { shadow?: boolean; partition?: string } = {}): Promise<FeedPosition> {
    const src = SOURCES[feed];
    const vecTable = 'vecIndex' in src.vectors ? this.vecTable(dim) : undefined;
    if ('vecIndex' in src.vectors && !vecTable) {
      sink.size(0);
      return this.feeds[feed].head(); // no vector of this dimension yet
    }
    const sql = vectorSql(src, vecTable);
    const db = this.db;
    // One read transaction: a consistent snapshot.
    return db.transaction(() => {
      const head = this.feeds[feed].headNow();
      const part = opts.partition;
      const count = sql.count ? (part === undefined ? (db.prepare(sql.count).get(dim) as { n: number }).n
        : (db.prepare(`${sql.count} AND ${src.partition} = ?`).get(dim, part) as { n: number }).n) : 0;
      sink.size(count);
      if (sql.state) {
        // vec0 vectors: the rows decide. A vector without its row (an orphan) is skipped, a
        // switched-off row is kept unsearchable. state[id]: 0 no row, 1 searchable, 2 switched
        // off (ids are dense: one byte each).
        const state = new Uint8Array(head.maxRow + 1);
        const states = part === undefined ? db.prepare(sql.state).raw().iterate(dim) : db.prepare(`${sql.state} AND ${src.partition} = ?`).raw().iterate(dim, part);
        for (const [r, a] of states as IterableIterator<[number, number]>) state[r] = a === 1 ? 1 : 2;
        const visit = (r: number, ds: string, v: Float32Array) => {
          if (r <= head.maxRow && state[r] && (part === undefined || ds === part)) sink.put(r, ds, state[r] === 1, v, NO_TAGS);
        };
        // The shadow tables when their layout is known (vec0-shadow.ts), else a scan of the table: the same rows in the same order.
        if (!(opts.shadow && readVec0Shadow(db, vecTable!, dim, visit, part))) {
          const it = db.prepare(sql.load).raw().iterate() as IterableIterator<[number | bigint, string, Buffer]>;
          for (const [rid, ds, blob] of it) visit(Number(rid), ds, floatsOf(blob));
        }
      } else {
        // Vectors in the row table: one pass (a row without a vector has none to index).
        const nTags = src.tags.length;
        const it = db.prepare(sql.load).raw().iterate(dim, head.maxRow) as IterableIterator<[number, string, Buffer | null, number, ...string[]]>;
        for (const r of it) if (r[2] && (part === undefined || r[1] === part)) sink.put(r[0], r[1], r[3] === 1, floatsOf(r[2]), nTags ? (r.slice(4) as string[]) : NO_TAGS);
      }
      return position(head);
    })();
  }

  async vectorRows(feed: FeedName, dim: number, ids: Iterable<number>, partition?: string): Promise<Array<[number, VectorRow | undefined]>> {
    const src = SOURCES[feed];
    const vecTable = 'vecIndex' in src.vectors ? this.vecTable(dim) : undefined;
    if ('vecIndex' in src.vectors && !vecTable) return [...ids].map((id): [number, VectorRow | undefined] => [id, undefined]);
    const sql = vectorSql(src, vecTable);
    const row = cachedStatement(this.db, sql.row).raw();
    const vec = sql.vec ? cachedStatement(this.db, sql.vec).pluck() : null;
    const nTags = src.tags.length;
    const out: Array<[number, VectorRow | undefined]> = [];
    for (const rid of ids) {
      // [searchable, partition, dim] and, for a column source, [vector, tags…]
      const c = row.get(rid) as [number, string, number, Buffer | null, ...string[]] | undefined;
      const blob = c && c[2] === dim && (partition === undefined || c[1] === partition) ? (vec ? (vec.get(BigInt(rid)) as Buffer | undefined) : c[3]) : undefined;
      out.push([rid, c && blob ? { searchable: c[0] === 1, partition: c[1], vector: floatsOf(blob), tags: nTags ? (c.slice(4) as string[]) : NO_TAGS } : undefined]);
    }
    return out;
  }

  async termRows(ids: Iterable<number>, dataset?: string): Promise<Map<number, TermRow>> {
    const one = cachedStatement(this.db, dataset === undefined ? TERM_SQL.one : TERM_SQL.datasetOne).raw();
    const out = new Map<number, TermRow>();
    for (const rid of ids) {
      const r = (dataset === undefined ? one.get(rid) : one.get(rid, dataset)) as TermRow | undefined;
      if (r) out.set(rid, r);
    }
    return out;
  }

  async termSlice(at: FeedPosition, after: number, limit: number, dataset?: string): Promise<TermRow[]> {
    if (dataset !== undefined) return cachedStatement(this.db, TERM_SQL.datasetSlice).raw().all(dataset, after, logAt(at).maxRow, limit) as TermRow[];
    return cachedStatement(this.db, TERM_SQL.slice).raw().all(after, logAt(at).maxRow, limit) as TermRow[];
  }

  async textTokenizer(): Promise<TextTokenizer> {
    if (!this.tokenizer) {
      const sql = (this.db.prepare(TERM_SQL.tokenizer).pluck().get() as string | undefined) ?? '';
      this.tokenizer = new Fts5Tokenizer(sql);
    }
    return this.tokenizer;
  }

  async datasetLanguages(datasetIds: readonly string[]): Promise<Array<string | null>> {
    return cachedStatement(this.db, `SELECT language FROM dataset WHERE id IN (${marks(datasetIds.length)})`).pluck().all(...datasetIds) as Array<string | null>;
  }

  async countChunks(datasetIds: readonly string[], cap: number): Promise<number> {
    return cachedStatement(this.db, `SELECT COUNT(*) FROM (SELECT 1 FROM chunk WHERE dataset_id IN (${marks(datasetIds.length)}) LIMIT ?)`)
      .pluck().get(...datasetIds, cap) as number;
  }

  async documentMeta(datasetIds: readonly string[]): Promise<Array<{ id: string; meta_fields: string }>> {
    return this.db.prepare(`SELECT id, meta_fields FROM document WHERE dataset_id IN (${marks(datasetIds.length)})`).all(...datasetIds) as { id: string; meta_fields: string }[];
  }

  async chunkRowidsOfDocuments(documentIds: readonly string[], availableOnly = true): Promise<number[]> {
    return chunkRowidsOfDocuments(this.db, [...documentIds], availableOnly);
  }

  /**
   * The rows of a page, by rowid. Read as arrays (raw) and shaped here: better-sqlite3's row
   * objects cost about as much as the look-ups themselves (30 rows of 100k: 0.22 → 0.15 ms).
   */
  async pageChunks(rowids: readonly number[]): Promise<Map<number, PageChunk>> {
    const out = new Map<number, PageChunk>();
    for (let i = 0; i < rowids.length; i += 500) {
      const part = rowids.slice(i, i + 500);
      const rows = cachedStatement(this.db, `SELECT c.rowid, c.id, c.document_id, c.dataset_id, c.content, c.important_keywords, c.questions, c.tag_kwd,
      c.positions, c.available, c.image_id, c.doc_type, c.create_time, c.create_timestamp, c.index_text, d.name, c.lang
      FROM chunk c JOIN document d ON d.id = c.document_id WHERE c.rowid IN (${marks(part.length)})`).raw().all(...part) as PageTuple[];
      for (const r of rows) {
        out.set(r[0], {
          rowid: r[0], id: r[1], document_id: r[2], dataset_id: r[3], content: r[4], important_keywords: r[5], questions: r[6], tag_kwd: r[7],
          positions: r[8], available: r[9], image_id: r[10], doc_type: r[11], create_time: r[12], create_timestamp: r[13], index_text: r[14], doc_name: r[15],
          lang: r[16],
        });
      }
    }
    return out;
  }

  /**
   * Documents' names, read in batches of fixed size (statements are reused). The term index knows
   * each chunk's document, so only the (few) documents are read, not the chunk rows (large and
   * scattered: ~3.5 µs a look-up at 100k chunks).
   */
  async pageRows(rowids: readonly number[], documentIds: readonly string[]): Promise<{ chunks: Map<number, PageChunk>; names: Map<string, string> }> {
    return { chunks: await this.pageChunks(rowids), names: documentIds.length ? await this.documentNames(documentIds) : new Map() };
  }

  async documentNames(ids: readonly string[]): Promise<Map<string, string>> {
    const B = 64;
    const names = new Map<string, string>();
    for (let i = 0; i < ids.length; i += B) {
      const part = ids.slice(i, i + B);
      while (part.length < B) part.push('');
      const rows = cachedStatement(this.db, `SELECT id, name FROM document WHERE id IN (${marks(B)})`).raw().all(...part) as Array<[string, string]>;
      for (const [id, name] of rows) names.set(id, name);
    }
    return names;
  }

  /** rowid → its document (id, name), in batches of fixed size so statements are reused. */
  async chunkDocuments(rowids: readonly number[]): Promise<Map<number, { id: string; name: string }>> {
    const out = new Map<number, { id: string; name: string }>();
    const B = 64;
    for (let i = 0; i < rowids.length; i += B) {
      const part = rowids.slice(i, i + B);
      while (part.length < B) part.push(-1);
      const rows = cachedStatement(this.db, `SELECT c.rowid, d.id, d.name FROM chunk c JOIN document d ON d.id = c.document_id WHERE c.rowid IN (${marks(B)})`)
        .raw().all(...part) as Array<[number, string, string]>;
      for (const [rid, id, name] of rows) out.set(rid, { id, name });
    }
    return out;
  }
}

const readers = new WeakMap<Db, SqliteSearch>();

/** The search side of a connection (one per connection: search caches its indexes by it). */
export function sqliteSearch(db: Db): SqliteSearch {
  let r = readers.get(db);
  if (!r) readers.set(db, (r = new SqliteSearch(db)));
  return r;
}


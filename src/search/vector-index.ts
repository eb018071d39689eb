/**
 * The vector side of retrieval: an in-memory copy of the `dim`-sized vectors of one source,
 * kept in step with SQLite, which stays the source of truth. One design for every source
 * (a VectorSource says where its rows, vectors and change log live): chunks (`CHUNK_VECTORS`,
 * vectors in the `vec_<dim>` tables) and memory messages (`MEMORY_VECTORS`, vectors in a column
 * of `memory_message`). The copies are cached per (connection, source, dim).
 *
 * - Below `exactBelow` live vectors a query is an exact scan (a dot product per vector over one
 *   contiguous Float32Array: ~0.3 µs per 384-d vector, faster than vec0's SSE-only scan).
 * - From `exactBelow` on, each vector also has a 1-bit code of its centred value (one bit per
 *   dimension). A query ranks every code by Hamming distance (WebAssembly popcount, ~10 ns per
 *   code), keeps the `max(minCandidates, oversample·k)` closest, and re-scores those exactly on
 *   the float vectors. The result is approximate: bench/speed reports its recall@10 against the
 *   exact scan. `{ exact: true }` forces the exact scan.
 *
 * Keeping in step: row ids only grow (a reused rowid was deleted first), so new rows are the
 * rows past the highest id applied; triggers on the row table (chunks: migrations 4–5, memory
 * messages: migration 8) append the id of every deleted, switched or re-embedded row to the
 * source's log (`vec_log`, `memory_vec_log`) in the writer's transaction, so a rolled-back write
 * leaves no trace. Before each search the index applies both; a log trimmed past its position
 * (the source's floor key in `search_meta`), or a large backlog, rebuilds it from the tables.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/index.js';
import { CodeStore } from './hamming.js';
import { RowSlots } from './row-slots.js';
import { changesSince, followLog, trimLog, unfollowLog } from './change-log.js';
import { dotAt, VectorStore } from './dots.js';
import { floatsOf, readVec0Shadow } from './vec0-shadow.js';

export interface VectorSearchOptions {
  /** Exact scan below this many live vectors. @default 4096 */
  exactBelow: number;
  /** Fewest codes kept for exact re-scoring. @default 500 */
  minCandidates: number;
  /** Codes kept per wanted result. @default 10 */
  oversample: number;
  /** Load vec0 vectors from the table's shadow tables when their layout is known (vec0-shadow.ts). @default true */
  vec0Shadow: boolean;
}

/** Process-wide settings of the vector side (benchmarks and tests change them). */
export const vectorSearchOptions: VectorSearchOptions = { exactBelow: 4096, minCandidates: 500, oversample: 10, vec0Shadow: true };

export interface VectorHit {
  rowid: number;
  /** Cosine similarity (vectors are unit length, so the dot product). */
  score: number;
}

export interface VectorFilter {
  /** partitions to search in: dataset ids (chunks), memory ids (memory messages) */
  datasets: string[];
  /** when set, only these row ids */
  rowids?: Iterable<number>;
  /** when set, only rows whose filter columns (VectorSource.tags) equal these values */
  tags?: Readonly<Record<string, string>>;
}

/**
 * Where a source's rows, vectors and change log live. Every name is an SQL identifier or
 * expression of the schema (never user input).
 */
export interface VectorSource {
  /** Short name, for messages. */
  readonly name: string;
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
   * Row columns kept in memory for equality filters (VectorFilter.tags); only with vectors in a
   * column. They must never change after insert (the log triggers do not watch them).
   */
  readonly tags: readonly string[];
  /** The change log (seq AUTOINCREMENT, rid): ids of deleted rows and of rows updated in a watched column. */
  readonly log: string;
  /** `search_meta` key of the log's trimmed floor. */
  readonly floorKey: string;
}

/** Chunks: vectors in `vec_<dim>` (migrations 2, 4, 5). */
export const CHUNK_VECTORS: VectorSource = {
  name: 'chunk',
  rows: 'chunk',
  id: 'rowid',
  partition: 'dataset_id',
  searchable: 'available = 1',
  dim: 'vec_dim',
  vectors: { vecIndex: true },
  tags: [],
  log: 'vec_log',
  floorKey: 'vec_log_floor',
};

/** Memory messages: vectors in `memory_message.vector` (migration 8); searchable = enabled and not forgotten. */
export const MEMORY_VECTORS: VectorSource = {
  name: 'memory message',
  rows: 'memory_message',
  id: 'id',
  partition: 'memory_id',
  searchable: 'status = 1 AND forget_at IS NULL',
  dim: 'dim',
  vectors: { column: 'vector' },
  tags: ['agent_id', 'session_id', 'user_id'],
  log: 'memory_vec_log',
  floorKey: 'memory_vec_log_floor',
};

const byDb = new WeakMap<Db, Map<VectorSource, Map<number, DimIndex>>>();

function cached(db: Db, source: VectorSource): Map<number, DimIndex> {
  let bySource = byDb.get(db);
  if (!bySource) byDb.set(db, (bySource = new Map()));
  let m = bySource.get(source);
  if (!m) bySource.set(source, (m = new Map()));
  return m;
}

/** The synced index of the chunks' `dim`-sized vectors of `db`, or undefined when no such table exists. */
export function vectorIndex(db: Db, dim: number): DimIndex | undefined {
  const m = cached(db, CHUNK_VECTORS);
  let ix = m.get(dim);
  if (!ix) {
    const t = db.prepare('SELECT table_name FROM vec_index WHERE dim = ?').get(dim) as { table_name: string } | undefined;
    if (!t) return undefined;
    m.set(dim, (ix = new DimIndex(db, dim, CHUNK_VECTORS, t.table_name)));
  }
  ix.sync();
  return ix;
}

/** The synced index of the memory messages' `dim`-sized vectors of `db` (empty when there are none). */
export function memoryVectorIndex(db: Db, dim: number): DimIndex {
  if (!Number.isInteger(dim) || dim <= 0) throw new RangeError(`Vector dimension must be a positive integer, got ${dim}`);
  const m = cached(db, MEMORY_VECTORS);
  let ix = m.get(dim);
  if (!ix) m.set(dim, (ix = new DimIndex(db, dim, MEMORY_VECTORS)));
  ix.sync();
  return ix;
}

/** Drops the in-memory copies of `db`, every source (next search rebuilds them). */
export function forgetVectorIndexes(db: Db): void {
  for (const m of byDb.get(db)?.values() ?? []) for (const ix of m.values()) unfollowLog(db, ix.source.log, ix);
  byDb.delete(db);
}

/** The statements of one DimIndex, built once from its source. */
interface IndexSql {
  /** floor, maxSeq and maxRow in one statement (one snapshot, one call) */
  logState: string;
  maxSeq: string;
  maxRow: string;
  countFresh: string;
  logged: string;
  freshIds: string;
  /** one row: (searchable, partition, dim[, vector, tags…]) */
  row: string;
  /** one vector by rowid (vec0 sources) */
  vec: string | null;
  trim: string;
  setFloor: string;
  /** rows of this dimension, to size the arrays (vec0 sources; a column source grows as it loads, sparing a scan) */
  count: string | null;
  /** vec0 sources: (id, searchable) of the rows of this dimension */
  state: string | null;
  /** (id, partition, vector) for vec0 sources; (id, partition, vector, searchable, tags…) for column sources */
  load: string;
}

function indexSql(src: VectorSource, dim: number, vecTable: string | undefined): IndexSql {
  const { rows, id } = src;
  const col = 'column' in src.vectors ? src.vectors.column : null;
  if (!col && !vecTable) throw new Error(`The ${src.name} vectors of dimension ${dim} have no table`);
  if (!col && src.tags.length) throw new Error('Filter columns need vectors in a column of the row table');
  const tags = src.tags.map((t) => `, ${t}`).join('');
  return {
    logState: `SELECT (SELECT value FROM search_meta WHERE key = '${src.floorKey}'), (SELECT COALESCE(MAX(seq), 0) FROM ${src.log}),
      (SELECT COALESCE(MAX(${id}), 0) FROM ${rows})`,
    maxSeq: `SELECT COALESCE(MAX(seq), 0) FROM ${src.log}`,
    maxRow: `SELECT COALESCE(MAX(${id}), 0) FROM ${rows}`,
    countFresh: `SELECT COUNT(*) FROM ${rows} WHERE ${id} > ?`,
    logged: `SELECT rid FROM ${src.log} WHERE seq > ? AND seq <= ?`,
    freshIds: `SELECT ${id} FROM ${rows} WHERE ${id} > ? AND ${id} <= ?`,
    row: `SELECT (${src.searchable}), ${src.partition}, ${src.dim}${col ? `, ${col}${tags}` : ''} FROM ${rows} WHERE ${id} = ?`,
    vec: col ? null : `SELECT embedding FROM ${vecTable} WHERE rowid = ?`,
    trim: `DELETE FROM ${src.log} WHERE seq <= ?`,
    setFloor: `INSERT OR REPLACE INTO search_meta (key, value) VALUES ('${src.floorKey}', ?)`,
    count: col ? null : `SELECT COUNT(*) AS n FROM ${rows} WHERE ${src.dim} = ?`,
    state: col ? null : `SELECT ${id}, (${src.searchable}) FROM ${rows} WHERE ${src.dim} = ?`,
    load: col
      ? `SELECT ${id}, ${src.partition}, ${col}, (${src.searchable})${tags} FROM ${rows} WHERE ${src.dim} = ? AND ${id} <= ?`
      : `SELECT rowid, ${src.partition}, embedding FROM ${vecTable}`,
  };
}

const NO_TAGS: readonly string[] = [];

export class DimIndex {
  private cap = 0;
  /** slots in use (live or freed) */
  private n = 0;
  private live = 0;
  /** the rows' vectors (dots.ts: in WebAssembly memory when it can); made by reload, which every index runs first */
  private store!: VectorStore;
  private get vecs(): Float32Array {
    return this.store.vecs;
  }
  /** scratch for the re-scoring's dot products */
  private dotBuf = new Float64Array(0);
  private rowids = new Float64Array(0);
  private part = new Int32Array(0);
  /** 1 = present and available */
  private ok = new Uint8Array(0);
  private readonly slotOf = new RowSlots();
  private free: number[] = [];
  private readonly parts = new Map<string, number>();
  private readonly partNames: string[] = [];
  /** live rows per partition */
  private partLive: number[] = [];
  /** Per filter column (source.tags), each slot's interned value. */
  private tagVals: Int32Array[];
  private readonly tagIds = new Map<string, number>();
  private codes: CodeStore | null = null;
  private mean: Float32Array | null = null;
  /** live count when the codes (and their centre) were built */
  private codesAt = 0;
  private seq = -1;
  /** highest row id applied */
  private maxRow = 0;
  private loaded = false;
  private readonly stmts = new Map<string, Statement>();
  private readonly sql: IndexSql;

  private stmt(sql: string): Statement {
    let st = this.stmts.get(sql);
    if (!st) this.stmts.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  /** `vecTable`: the vec0 table of `dim` (sources with `vectors.vecIndex`). */
  constructor(private readonly db: Db, readonly dim: number, readonly source: VectorSource = CHUNK_VECTORS, private readonly vecTable?: string) {
    this.sql = indexSql(source, dim, vecTable);
    followLog(db, source.log, this);
    this.tagVals = source.tags.map(() => new Int32Array(0));
  }

  get size(): number {
    return this.live;
  }

  /** Partition (dataset id of a chunk, memory id of a message) of a searchable row known to the index, or undefined. */
  datasetOf(rowid: number): string | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined || !this.ok[s] ? undefined : this.partNames[this.part[s]!];
  }

  /** Live rows in these partitions (switched-off rows included). */
  countIn(partitions: readonly string[]): number {
    let n = 0;
    for (const p of new Set(partitions)) {
      const id = this.parts.get(p);
      if (id !== undefined) n += this.partLive[id]!;
    }
    return n;
  }

  /** The share of live rows that lie in these partitions (0 when the index is empty). */
  shareOf(partitions: readonly string[]): number {
    return this.live === 0 ? 0 : this.countIn(partitions) / this.live;
  }

  /** The same as datasetOf, named for every source. */
  partitionOf(rowid: number): string | undefined {
    return this.datasetOf(rowid);
  }

  /**
   * A predicate equal to the filter's partition and tag conditions (not its rowids): true for a
   * searchable row the filter admits. For the text side of a hybrid search.
   */
  matcher(filter: Omit<VectorFilter, 'rowids'>): (rowid: number) => boolean {
    const partOk = this.partitionMask(filter.datasets);
    const tags = this.tagFilter(filter.tags);
    if (!partOk || !tags) return () => false;
    return (rowid) => {
      const s = this.slotOf.get(rowid);
      return s !== undefined && this.ok[s] === 1 && partOk[this.part[s]!] === 1 && tagsMatch(tags, s);
    };
  }

  /** The stored vector of a live row (a view: do not keep it). */
  vector(rowid: number): Float32Array | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined ? undefined : this.vecs.subarray(s * this.dim, (s + 1) * this.dim);
  }

  /** Cosine of `q` with a row's vector; undefined when the row has none here. */
  cosine(q: Float32Array, rowid: number): number | undefined {
    const s = this.slotOf.get(rowid);
    if (s === undefined) return undefined;
    return dotAt(q, this.vecs, s * this.dim, this.dim);
  }

  /**
   * cosine() of each row (NaN where the row has no vector here), four rows at a time as search's
   * re-scoring does: the same sums, fewer waits on memory.
   */
  cosines(q: Float32Array, rowids: readonly number[]): Float64Array {
    const out = new Float64Array(rowids.length).fill(NaN);
    const slots: number[] = [];
    const at: number[] = [];
    rowids.forEach((r, i) => {
      const s = this.slotOf.get(r);
      if (s !== undefined) {
        slots.push(s);
        at.push(i);
      }
    });
    const d = this.dotsOf(q, slots, slots.length);
    for (let k = 0; k < slots.length; k++) out[at[k]!] = d[k]!;
    return out;
  }

  // ------------------------------------------------------------------ keeping in step

  sync(): void {
    const sql = this.sql;
    const change = changesSince((q) => this.stmt(q), sql, { loaded: this.loaded, seq: this.seq, maxRow: this.maxRow, live: this.live });
    if (change.kind === 'reload') return this.reload();
    if (change.kind === 'none') return;
    const { dirty, floor } = change;
    const row = this.stmt(sql.row).raw();
    const vec = sql.vec ? this.stmt(sql.vec).pluck() : null;
    const nTags = this.source.tags.length;
    for (const rid of dirty) {
      // [searchable, partition, dim] and, for a column source, [vector, tags…]
      const c = row.get(rid) as [number, string, number, Buffer | null, ...string[]] | undefined;
      const blob = c && c[2] === this.dim ? (vec ? (vec.get(BigInt(rid)) as Buffer | undefined) : c[3]) : undefined;
      if (!c || !blob) this.remove(rid);
      else this.put(rid, c[1], c[0] === 1, floatsOf(blob), nTags ? (c.slice(4) as string[]) : NO_TAGS);
    }
    this.maxRow = change.maxRow;
    this.seq = change.seq;
    // The centre drifts as the collection grows: rebuild the codes when it has doubled.
    if (this.codes && this.live > 2 * this.codesAt) {
      this.codes = null;
      this.maybeBuildCodes(true);
    }
    trimLog(this.db, this.source.log, this.sql, floor);
  }

  /** The last log entry applied (change-log.ts: the log is not trimmed past it). */
  get logSeq(): number {
    return this.seq;
  }

  /** Rebuilds the whole copy from the tables, in one read transaction (a consistent snapshot). */
  reload(): void {
    this.loaded = false;
    const sql = this.sql;
    this.db.transaction(() => {
      this.seq = this.db.prepare(sql.maxSeq).pluck().get() as number;
      this.maxRow = this.db.prepare(sql.maxRow).pluck().get() as number;
      const count = sql.count ? (this.db.prepare(sql.count).get(this.dim) as { n: number }).n : 0;
      this.cap = 0;
      this.n = 0;
      this.live = 0;
      this.slotOf.clear();
      this.free = [];
      this.partLive.fill(0);
      this.codes = null;
      this.mean = null;
      // A new store each time: a WebAssembly memory never shrinks, and the rows may now be far fewer.
      this.store = new VectorStore(this.dim);
      this.grow(Math.max(count, 1024));
      if (sql.state) {
        // vec0 vectors: the rows decide. A vector without its row (an orphan) is skipped, a
        // switched-off row is kept unsearchable. state[id]: 0 no row, 1 searchable, 2 switched
        // off (ids are dense: one byte each).
        const state = new Uint8Array(this.maxRow + 1);
        for (const [r, a] of this.db.prepare(sql.state).raw().iterate(this.dim) as IterableIterator<[number, number]>) state[r] = a === 1 ? 1 : 2;
        const visit = (r: number, ds: string, v: Float32Array) => {
          if (r <= this.maxRow && state[r]) this.put(r, ds, state[r] === 1, v, NO_TAGS);
        };
        // The shadow tables when their layout is known (vec0-shadow.ts), else a scan of the table: the same rows in the same order.
        if (!(vectorSearchOptions.vec0Shadow && readVec0Shadow(this.db, this.vecTable!, this.dim, visit))) {
          const it = this.db.prepare(sql.load).raw().iterate() as IterableIterator<[number | bigint, string, Buffer]>;
          for (const [rid, ds, blob] of it) visit(Number(rid), ds, floatsOf(blob));
        }
      } else {
        // Vectors in the row table: one pass (a row without a vector has none to index).
        const nTags = this.source.tags.length;
        const it = this.db.prepare(sql.load).raw().iterate(this.dim, this.maxRow) as IterableIterator<[number, string, Buffer | null, number, ...string[]]>;
        for (const r of it) if (r[2]) this.put(r[0], r[1], r[3] === 1, floatsOf(r[2]), nTags ? (r.slice(4) as string[]) : NO_TAGS);
      }
    })();
    this.loaded = true;
    this.maybeBuildCodes(true);
  }

  private grow(min: number): void {
    if (min <= this.cap) return;
    const cap = Math.max(min, Math.ceil(this.cap * 1.5), 1024);
    this.store.reserve(cap, this.n);
    const r = new Float64Array(cap);
    r.set(this.rowids.subarray(0, this.n));
    this.rowids = r;
    const p = new Int32Array(cap);
    p.set(this.part.subarray(0, this.n));
    this.part = p;
    const o = new Uint8Array(cap);
    o.set(this.ok.subarray(0, this.n));
    this.ok = o;
    for (let t = 0; t < this.tagVals.length; t++) {
      const v = new Int32Array(cap);
      v.set(this.tagVals[t]!.subarray(0, this.n));
      this.tagVals[t] = v;
    }
    this.cap = cap;
    this.codes?.reserve(cap);
  }

  private partId(name: string): number {
    let id = this.parts.get(name);
    if (id === undefined) {
      id = this.partNames.length;
      this.parts.set(name, id);
      this.partNames.push(name);
      this.partLive.push(0);
    }
    return id;
  }

  private tagId(value: string): number {
    let id = this.tagIds.get(value);
    if (id === undefined) this.tagIds.set(value, (id = this.tagIds.size));
    return id;
  }

  /** Holds row `rid`'s vector `v` (copied: it may be a view of a buffer better-sqlite3 reuses). */
  private put(rid: number, ds: string, available: boolean, v: Float32Array, tags: readonly string[]): void {
    if (v.length !== this.dim) return;
    let s = this.slotOf.get(rid);
    if (s === undefined) {
      s = this.free.pop();
      if (s === undefined) {
        if (this.n >= this.cap) this.grow(this.n + 1);
        s = this.n++;
      }
      this.slotOf.set(rid, s);
      this.live++;
    } else this.partLive[this.part[s]!]!--;
    this.vecs.set(v, s * this.dim);
    this.rowids[s] = rid;
    const part = this.partId(ds);
    this.part[s] = part;
    this.partLive[part]!++;
    this.ok[s] = available ? 1 : 0;
    for (let t = 0; t < tags.length; t++) this.tagVals[t]![s] = this.tagId(String(tags[t] ?? ''));
    if (this.codes && this.mean) {
      this.codes.set(s, this.vecs, s * this.dim, this.dim, this.mean);
      this.codes.setOk(s, available);
    } else this.maybeBuildCodes(false);
  }

  private remove(rid: number): void {
    const s = this.slotOf.get(rid);
    if (s === undefined) return;
    this.slotOf.delete(rid);
    this.partLive[this.part[s]!]!--;
    this.ok[s] = 0;
    this.codes?.setOk(s, false);
    this.rowids[s] = -1;
    this.free.push(s);
    this.live--;
  }

  /** Builds the binary codes once the index is large enough (centre = the mean vector now). */
  private maybeBuildCodes(force: boolean): void {
    if (this.codes || this.live < vectorSearchOptions.exactBelow) return;
    if (!force && !this.loaded) return; // reload() builds them once at the end
    const dim = this.dim;
    const vecs = this.vecs; // a getter: once, not per element
    const rowids = this.rowids;
    const mean = new Float64Array(dim);
    let cnt = 0;
    for (let s = 0; s < this.n; s++) {
      if (rowids[s]! < 0) continue;
      const o = s * dim;
      for (let d = 0; d < dim; d++) mean[d]! += vecs[o + d]!;
      cnt++;
    }
    this.mean = Float32Array.from(mean, (x) => x / Math.max(1, cnt));
    const codes = new CodeStore(dim);
    codes.reserve(this.cap);
    for (let s = 0; s < this.n; s++) {
      codes.set(s, vecs, s * dim, dim, this.mean);
      codes.setOk(s, this.ok[s] === 1);
    }
    this.codes = codes;
    this.codesAt = this.live;
  }

  // ------------------------------------------------------------------ search

  /** 1 per partition searched; null when none of them is known here. */
  private partitionMask(names: readonly string[]): Uint8Array | null {
    const partOk = new Uint8Array(this.partNames.length);
    let anyPart = false;
    for (const d of names) {
      const id = this.parts.get(d);
      if (id !== undefined) {
        partOk[id] = 1;
        anyPart = true;
      }
    }
    return anyPart ? partOk : null;
  }

  /** The filter's tag conditions as [column values, wanted id] pairs; null when a value is unknown (nothing matches). */
  private tagFilter(tags: VectorFilter['tags']): TagCond[] | null {
    const out: TagCond[] = [];
    if (!tags) return out;
    for (const [col, value] of Object.entries(tags)) {
      const t = this.source.tags.indexOf(col);
      if (t < 0) throw new RangeError(`${this.source.name} vectors cannot be filtered by '${col}'`);
      const id = this.tagIds.get(value);
      if (id === undefined) return null;
      out.push([this.tagVals[t]!, id]);
    }
    return out;
  }

  /**
   * The `k` vectors most similar to `q` among searchable rows of the filter's partitions (and
   * rowids, and tag values), best first. Exact below `exactBelow` vectors, with a rowid filter,
   * or with `exact`.
   */
  search(q: Float32Array, k: number, filter: VectorFilter, opts: { exact?: boolean } = {}): VectorHit[] {
    if (q.length !== this.dim || k <= 0) return [];
    const partOk = this.partitionMask(filter.datasets);
    if (!partOk) return [];
    if (filter.tags && Object.keys(filter.tags).length) {
      const tags = this.tagFilter(filter.tags);
      return tags ? this.searchTagged(q, k, filter, partOk, tags, opts) : [];
    }
    // The usual case: every dataset in the index is searched, so no per-slot dataset check.
    const allParts = partOk.every((x) => x === 1);
    const top = new TopK(k);
    if (filter.rowids) {
      for (const rid of filter.rowids) {
        const s = this.slotOf.get(rid);
        if (s === undefined || !this.ok[s] || !partOk[this.part[s]!]) continue;
        top.push(s, dotAt(q, this.vecs, s * this.dim, this.dim));
      }
      return this.hits(top);
    }
    if (opts.exact || !this.codes || !this.mean || this.live < vectorSearchOptions.exactBelow) {
      const dim = this.dim;
      const vecs = this.vecs;
      for (let s = 0, o = 0; s < this.n; s++, o += dim) {
        if (!this.ok[s] || !partOk[this.part[s]!]) continue;
        top.push(s, dotAt(q, vecs, o, dim));
      }
      return this.hits(top);
    }
    // Binary prefilter: the `want` closest codes by Hamming distance, then exact re-scoring.
    const want = Math.max(vectorSearchOptions.minCandidates, k * vectorSearchOptions.oversample);
    const dim = this.dim;
    if (allParts) {
      const slots = this.codes.select(q, this.mean, this.n, want);
      this.pushDots(top, q, slots, slots.length);
      return this.hits(top);
    }
    const dist = this.codes.distances(q, this.mean, this.n);
    const hist = new Uint32Array(dim + 2);
    const ok = this.ok;
    const part = this.part;
    const n = this.n;
    for (let s = 0; s < n; s++) if (ok[s] && partOk[part[s]!]) hist[dist[s]!]!++;
    let cut = 0;
    for (let acc = 0; cut <= dim && acc + hist[cut]! < want; cut++) acc += hist[cut]!;
    const picked = new Int32Array(Math.min(n, want * 4));
    let count = 0;
    for (let s = 0; s < n; s++) {
      if (dist[s]! > cut || !ok[s] || !partOk[part[s]!]) continue;
      if (count === picked.length) {
        this.pushDots(top, q, picked, count);
        count = 0;
      }
      picked[count++] = s;
    }
    this.pushDots(top, q, picked, count);
    return this.hits(top);
  }

  /**
   * search() with tag conditions: the same paths (rowids, exact scan, binary prefilter with a
   * per-slot cut-off), every slot checked against the tags as well.
   */
  private searchTagged(q: Float32Array, k: number, filter: VectorFilter, partOk: Uint8Array, tags: TagCond[], opts: { exact?: boolean }): VectorHit[] {
    const dim = this.dim;
    const ok = this.ok;
    const part = this.part;
    const top = new TopK(k);
    const admit = (s: number): boolean => ok[s] === 1 && partOk[part[s]!] === 1 && tagsMatch(tags, s);
    if (filter.rowids) {
      for (const rid of filter.rowids) {
        const s = this.slotOf.get(rid);
        if (s !== undefined && admit(s)) top.push(s, dotAt(q, this.vecs, s * dim, dim));
      }
      return this.hits(top);
    }
    const n = this.n;
    if (opts.exact || !this.codes || !this.mean || this.live < vectorSearchOptions.exactBelow) {
      const vecs = this.vecs;
      for (let s = 0; s < n; s++) if (admit(s)) top.push(s, dotAt(q, vecs, s * dim, dim));
      return this.hits(top);
    }
    const want = Math.max(vectorSearchOptions.minCandidates, k * vectorSearchOptions.oversample);
    const dist = this.codes.distances(q, this.mean, n);
    const hist = new Uint32Array(dim + 2);
    for (let s = 0; s < n; s++) if (admit(s)) hist[dist[s]!]!++;
    let cut = 0;
    for (let acc = 0; cut <= dim && acc + hist[cut]! < want; cut++) acc += hist[cut]!;
    const picked: number[] = [];
    for (let s = 0; s < n; s++) if (dist[s]! <= cut && admit(s)) picked.push(s);
    this.pushDots(top, q, picked, picked.length);
    return this.hits(top);
  }

  /** The dot products of `q` with the rows slots[0..count) (a scratch array: read it at once). */
  private dotsOf(q: Float32Array, slots: ArrayLike<number>, count: number): Float64Array {
    if (this.dotBuf.length < count) this.dotBuf = new Float64Array(Math.max(count, 2 * this.dotBuf.length));
    this.store.dots(q, slots, count, this.dotBuf);
    return this.dotBuf;
  }

  /** top.push(slot, its dot product with `q`) for slots[0..count), in order. */
  private pushDots(top: TopK, q: Float32Array, slots: ArrayLike<number>, count: number): void {
    const d = this.dotsOf(q, slots, count);
    for (let k = 0; k < count; k++) top.push(slots[k]!, d[k]!);
  }

  private hits(top: TopK): VectorHit[] {
    return top.sorted().map(([s, score]) => ({ rowid: this.rowids[s]!, score }));
  }
}

/** A tag condition: each slot's interned value of one filter column, and the wanted value's id. */
type TagCond = [vals: Int32Array, id: number];

function tagsMatch(tags: TagCond[], s: number): boolean {
  for (let i = 0; i < tags.length; i++) if (tags[i]![0][s] !== tags[i]![1]) return false;
  return true;
}

/** The k largest (score, id) pairs: a binary min-heap. */
export class TopK {
  private readonly ids: Int32Array;
  private readonly scores: Float64Array;
  private len = 0;
  constructor(private readonly k: number) {
    this.ids = new Int32Array(k);
    this.scores = new Float64Array(k);
  }
  get size(): number {
    return this.len;
  }
  /** The smallest kept score (−Infinity while not full). */
  get floor(): number {
    return this.len < this.k ? -Infinity : this.scores[0]!;
  }
  push(id: number, score: number): void {
    const { ids, scores } = this;
    if (this.len < this.k) {
      let i = this.len++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (scores[p]! <= score) break;
        ids[i] = ids[p]!;
        scores[i] = scores[p]!;
        i = p;
      }
      ids[i] = id;
      scores[i] = score;
      return;
    }
    if (score <= scores[0]!) return;
    let i = 0;
    const n = this.len;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && scores[r]! < scores[l]! ? r : l;
      if (scores[c]! >= score) break;
      ids[i] = ids[c]!;
      scores[i] = scores[c]!;
      i = c;
    }
    ids[i] = id;
    scores[i] = score;
  }
  /** Best first. */
  sorted(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.len; i++) out.push([this.ids[i]!, this.scores[i]!]);
    return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  }
}

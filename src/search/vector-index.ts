/**
 * The vector side of retrieval: an in-memory copy of one `vec_<dim>` table, kept in step with
 * SQLite, which stays the source of truth.
 *
 * - Below `exactBelow` live vectors a query is an exact scan (a dot product per vector over one
 *   contiguous Float32Array: ~0.3 µs per 384-d vector, faster than vec0's SSE-only scan).
 * - From `exactBelow` on, each vector also has a 1-bit code of its centred value (one bit per
 *   dimension). A query ranks every code by Hamming distance (WebAssembly popcount, ~10 ns per
 *   code), keeps the `max(minCandidates, oversample·k)` closest, and re-scores those exactly on
 *   the float vectors. The result is approximate: bench/speed reports its recall@10 against the
 *   exact scan. `{ exact: true }` forces the exact scan.
 *
 * Keeping in step: chunk rowids only grow (a reused rowid was deleted first), so new chunks are
 * the rows past the highest rowid applied; triggers on the `chunk` table (migrations 4–5) append
 * the rowid of every deleted, switched or re-embedded chunk to `vec_log` in the writer's
 * transaction, so a rolled-back write leaves no trace. Before each search the index applies both;
 * a log trimmed past its position, or a large backlog, rebuilds it from the tables.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/index.js';
import { CodeStore } from './hamming.js';

export interface VectorSearchOptions {
  /** Exact scan below this many live vectors. @default 4096 */
  exactBelow: number;
  /** Fewest codes kept for exact re-scoring. @default 500 */
  minCandidates: number;
  /** Codes kept per wanted result. @default 10 */
  oversample: number;
}

/** Process-wide settings of the vector side (benchmarks change them). */
export const vectorSearchOptions: VectorSearchOptions = { exactBelow: 4096, minCandidates: 500, oversample: 10 };

export interface VectorHit {
  rowid: number;
  /** Cosine similarity (vectors are unit length, so the dot product). */
  score: number;
}

export interface VectorFilter {
  /** dataset ids to search in */
  datasets: string[];
  /** when set, only these chunk rowids */
  rowids?: Iterable<number>;
}

const LOG_TRIM_AT = 200_000;
const byDb = new WeakMap<Db, Map<number, DimIndex>>();

/** The synced index of `dim`-sized vectors of `db`, or undefined when no such table exists. */
export function vectorIndex(db: Db, dim: number): DimIndex | undefined {
  let m = byDb.get(db);
  if (!m) byDb.set(db, (m = new Map()));
  let ix = m.get(dim);
  if (!ix) {
    const t = db.prepare('SELECT table_name FROM vec_index WHERE dim = ?').get(dim) as { table_name: string } | undefined;
    if (!t) return undefined;
    m.set(dim, (ix = new DimIndex(db, dim, t.table_name)));
  }
  ix.sync();
  return ix;
}

/** Drops the in-memory copies of `db` (next search rebuilds them). */
export function forgetVectorIndexes(db: Db): void {
  byDb.delete(db);
}

export class DimIndex {
  private cap = 0;
  /** slots in use (live or freed) */
  private n = 0;
  private live = 0;
  private vecs = new Float32Array(0);
  private rowids = new Float64Array(0);
  private part = new Int32Array(0);
  /** 1 = present and available */
  private ok = new Uint8Array(0);
  private readonly slotOf = new Map<number, number>();
  private free: number[] = [];
  private readonly parts = new Map<string, number>();
  private readonly partNames: string[] = [];
  private codes: CodeStore | null = null;
  private mean: Float32Array | null = null;
  /** live count when the codes (and their centre) were built */
  private codesAt = 0;
  private seq = -1;
  /** highest chunk rowid applied */
  private maxRow = 0;
  private loaded = false;
  private readonly stmts = new Map<string, Statement>();

  private stmt(sql: string): Statement {
    let st = this.stmts.get(sql);
    if (!st) this.stmts.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  constructor(private readonly db: Db, readonly dim: number, private readonly table: string) {}

  get size(): number {
    return this.live;
  }

  /** Dataset id of a chunk known to the index, or undefined. */
  datasetOf(rowid: number): string | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined || !this.ok[s] ? undefined : this.partNames[this.part[s]!];
  }

  /** The stored vector of a live chunk (a view: do not keep it). */
  vector(rowid: number): Float32Array | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined ? undefined : this.vecs.subarray(s * this.dim, (s + 1) * this.dim);
  }

  /** Cosine of `q` with a chunk's vector; undefined when the chunk has none here. */
  cosine(q: Float32Array, rowid: number): number | undefined {
    const s = this.slotOf.get(rowid);
    if (s === undefined) return undefined;
    return dotAt(q, this.vecs, s * this.dim, this.dim);
  }

  // ------------------------------------------------------------------ keeping in step

  sync(): void {
    const floor = Number((this.stmt("SELECT value FROM search_meta WHERE key = 'vec_log_floor'").pluck().get() as string | undefined) ?? 0);
    if (!this.loaded || this.seq < floor) return this.reload();
    const max = (this.stmt('SELECT COALESCE(MAX(seq), 0) FROM vec_log').pluck().get() as number);
    const maxRow = (this.stmt('SELECT COALESCE(MAX(rowid), 0) FROM chunk').pluck().get() as number);
    if (max <= this.seq && maxRow <= this.maxRow) return;
    // Inserts are the rows past the highest rowid seen (rowids grow; a reused rowid was deleted
    // first, which the log records); updates and deletes come from the log.
    const fresh = maxRow > this.maxRow ? (this.stmt('SELECT COUNT(*) FROM chunk WHERE rowid > ?').pluck().get(this.maxRow) as number) : 0;
    const logged = max > this.seq ? (this.stmt('SELECT rid FROM vec_log WHERE seq > ? AND seq <= ?').raw().all(this.seq, max) as [number][]) : [];
    if (fresh + logged.length > Math.max(20_000, this.live / 4)) return this.reload();
    const dirty = new Set(logged.map((r) => r[0]));
    if (fresh) for (const [r] of this.stmt('SELECT rowid FROM chunk WHERE rowid > ? AND rowid <= ?').raw().all(this.maxRow, maxRow) as [number][]) dirty.add(r);
    const chunk = this.stmt('SELECT available, dataset_id, vec_dim FROM chunk WHERE rowid = ?');
    const vec = this.stmt(`SELECT embedding FROM ${this.table} WHERE rowid = ?`).pluck();
    for (const rid of dirty) {
      const c = chunk.get(rid) as { available: number; dataset_id: string; vec_dim: number } | undefined;
      const blob = c && c.vec_dim === this.dim ? (vec.get(BigInt(rid)) as Buffer | undefined) : undefined;
      if (!c || !blob) this.remove(rid);
      else this.put(rid, c.dataset_id, c.available === 1, blob);
    }
    this.maxRow = Math.max(this.maxRow, maxRow);
    this.seq = max;
    // The centre drifts as the collection grows: rebuild the codes when it has doubled.
    if (this.codes && this.live > 2 * this.codesAt) {
      this.codes = null;
      this.maybeBuildCodes(true);
    }
    this.trimLog(floor);
  }

  private trimLog(floor: number): void {
    if (this.seq - floor < LOG_TRIM_AT || this.db.readonly || this.db.inTransaction) return;
    try {
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM vec_log WHERE seq <= ?').run(this.seq);
        this.db.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('vec_log_floor', ?)").run(String(this.seq));
      })();
    } catch {
      // Busy or read-only: trimming is an optimisation only.
    }
  }

  /** Rebuilds the whole copy from the tables, in one read transaction (a consistent snapshot). */
  reload(): void {
    this.loaded = false;
    this.db.transaction(() => {
      this.seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS m FROM vec_log').get() as { m: number }).m;
      this.maxRow = (this.db.prepare('SELECT COALESCE(MAX(rowid), 0) AS m FROM chunk').get() as { m: number }).m;
      const count = (this.db.prepare('SELECT COUNT(*) AS n FROM chunk WHERE vec_dim = ?').get(this.dim) as { n: number }).n;
      this.cap = 0;
      this.n = 0;
      this.live = 0;
      this.slotOf.clear();
      this.free = [];
      this.codes = null;
      this.mean = null;
      this.grow(Math.max(count, 1024));
      // Chunk rows decide: a vector without its chunk (an orphan) is skipped, a switched-off chunk is kept unsearchable.
      // state[rowid]: 0 no chunk, 1 available, 2 switched off (rowids are dense: one byte each).
      const state = new Uint8Array(this.maxRow + 1);
      for (const [r, a] of this.db.prepare('SELECT rowid, available FROM chunk WHERE vec_dim = ?').raw().iterate(this.dim) as IterableIterator<[number, number]>) state[r] = a === 1 ? 1 : 2;
      const it = this.db.prepare(`SELECT rowid, dataset_id, embedding FROM ${this.table}`).raw().iterate() as IterableIterator<[number | bigint, string, Buffer]>;
      for (const [rid, ds, blob] of it) {
        const r = Number(rid);
        if (r <= this.maxRow && state[r]) this.put(r, ds, state[r] === 1, blob);
      }
    })();
    this.loaded = true;
    this.maybeBuildCodes(true);
  }

  private grow(min: number): void {
    if (min <= this.cap) return;
    const cap = Math.max(min, Math.ceil(this.cap * 1.5), 1024);
    const v = new Float32Array(cap * this.dim);
    v.set(this.vecs.subarray(0, this.n * this.dim));
    this.vecs = v;
    const r = new Float64Array(cap);
    r.set(this.rowids.subarray(0, this.n));
    this.rowids = r;
    const p = new Int32Array(cap);
    p.set(this.part.subarray(0, this.n));
    this.part = p;
    const o = new Uint8Array(cap);
    o.set(this.ok.subarray(0, this.n));
    this.ok = o;
    this.cap = cap;
    this.codes?.reserve(cap);
  }

  private partId(name: string): number {
    let id = this.parts.get(name);
    if (id === undefined) {
      id = this.partNames.length;
      this.parts.set(name, id);
      this.partNames.push(name);
    }
    return id;
  }

  private put(rid: number, ds: string, available: boolean, blob: Buffer): void {
    if (blob.byteLength !== this.dim * 4) return;
    let s = this.slotOf.get(rid);
    if (s === undefined) {
      s = this.free.pop();
      if (s === undefined) {
        if (this.n >= this.cap) this.grow(this.n + 1);
        s = this.n++;
      }
      this.slotOf.set(rid, s);
      this.live++;
    }
    // Copy the bytes: better-sqlite3 may reuse the Buffer's memory.
    const src = new Float32Array(blob.buffer, blob.byteOffset, this.dim);
    if (blob.byteOffset % 4 === 0) this.vecs.set(src, s * this.dim);
    else this.vecs.set(new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength)), s * this.dim);
    this.rowids[s] = rid;
    this.part[s] = this.partId(ds);
    this.ok[s] = available ? 1 : 0;
    if (this.codes && this.mean) {
      this.codes.set(s, this.vecs, s * this.dim, this.dim, this.mean);
      this.codes.setOk(s, available);
    } else this.maybeBuildCodes(false);
  }

  private remove(rid: number): void {
    const s = this.slotOf.get(rid);
    if (s === undefined) return;
    this.slotOf.delete(rid);
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
    const mean = new Float64Array(dim);
    let cnt = 0;
    for (let s = 0; s < this.n; s++) {
      if (this.rowids[s]! < 0) continue;
      const o = s * dim;
      for (let d = 0; d < dim; d++) mean[d]! += this.vecs[o + d]!;
      cnt++;
    }
    this.mean = Float32Array.from(mean, (x) => x / Math.max(1, cnt));
    const codes = new CodeStore(dim);
    codes.reserve(this.cap);
    for (let s = 0; s < this.n; s++) {
      codes.set(s, this.vecs, s * dim, dim, this.mean);
      codes.setOk(s, this.ok[s] === 1);
    }
    this.codes = codes;
    this.codesAt = this.live;
  }

  // ------------------------------------------------------------------ search

  /**
   * The `k` vectors most similar to `q` among available chunks of the filter's datasets (and
   * rowids), best first. Exact below `exactBelow` vectors, with a rowid filter, or with `exact`.
   */
  search(q: Float32Array, k: number, filter: VectorFilter, opts: { exact?: boolean } = {}): VectorHit[] {
    if (q.length !== this.dim || k <= 0) return [];
    const partOk = new Uint8Array(this.partNames.length);
    let anyPart = false;
    for (const d of filter.datasets) {
      const id = this.parts.get(d);
      if (id !== undefined) {
        partOk[id] = 1;
        anyPart = true;
      }
    }
    if (!anyPart) return [];
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
      for (let s = 0, o = 0; s < this.n; s++, o += dim) {
        if (!this.ok[s] || !partOk[this.part[s]!]) continue;
        top.push(s, dotAt(q, this.vecs, o, dim));
      }
      return this.hits(top);
    }
    // Binary prefilter: the `want` closest codes by Hamming distance, then exact re-scoring.
    const want = Math.max(vectorSearchOptions.minCandidates, k * vectorSearchOptions.oversample);
    const dim = this.dim;
    if (allParts) {
      const slots = this.codes.select(q, this.mean, this.n, want);
      for (let i = 0; i < slots.length; i++) {
        const s = slots[i]!;
        top.push(s, dotAt(q, this.vecs, s * dim, dim));
      }
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
    for (let s = 0; s < n; s++) {
      if (dist[s]! > cut || !ok[s] || !partOk[part[s]!]) continue;
      top.push(s, dotAt(q, this.vecs, s * dim, dim));
    }
    return this.hits(top);
  }

  private hits(top: TopK): VectorHit[] {
    return top.sorted().map(([s, score]) => ({ rowid: this.rowids[s]!, score }));
  }
}

function dotAt(q: Float32Array, v: Float32Array, o: number, dim: number): number {
  let a = 0, b = 0, c = 0, d = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    a += q[i]! * v[o + i]!;
    b += q[i + 1]! * v[o + i + 1]!;
    c += q[i + 2]! * v[o + i + 2]!;
    d += q[i + 3]! * v[o + i + 3]!;
  }
  for (; i < dim; i++) a += q[i]! * v[o + i]!;
  return a + b + c + d;
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

/**
 * The vector side of retrieval: an in-memory copy of the `dim`-sized vectors of one source,
 * kept in step with the store, which stays the source of truth. One design for every source (a
 * store feed, interface/search.ts): chunks (`'chunks'`, vectors of the chunk table) and memory
 * messages (`'memory'`, with filter columns for agent, session and user). The copies are cached
 * per (store reader, source, dim).
 *
 * - Below `exactBelow` live vectors a query is an exact scan (a dot product per vector over one
 *   contiguous Float32Array: ~0.3 µs per 384-d vector, faster than vec0's SSE-only scan).
 * - From `exactBelow` on, each vector also has a 1-bit code of its centred value (one bit per
 *   dimension). A query ranks every code by Hamming distance (WebAssembly popcount, ~10 ns per
 *   code), keeps the `max(minCandidates, oversample·k)` closest, and re-scores those exactly on
 *   the float vectors. The result is approximate: bench/speed reports its recall@10 against the
 *   exact scan. `{ exact: true }` forces the exact scan.
 *
 * Keeping in step: the index loads every row of its dimension in one snapshot
 * (`SearchReader.loadVectors`), then before each search applies what the store's change feed
 * reports since (`ChangeFeed.changesSince`: rows inserted past the highest id applied, and the ids
 * logged since the position applied — deleted, switched or re-embedded rows), reading those rows in
 * one batch (`vectorRows`). A feed trimmed past its position, or a large backlog, rebuilds it.
 * Syncs of one index run one after another, each applying what it read before the next reads.
 */
import type { FeedName, FeedPosition, SearchReader } from '../store/index.js';
import { VECTOR_SOURCES } from '../store/index.js';
import { CodeStore } from './hamming.js';
import { RowSlots } from './row-slots.js';
import { dotAt, VectorStore } from './dots.js';
// A cycle, read at call time only: dataset-vectors.ts builds on DimIndex.
import { forgetDatasetVectors } from './dataset-vectors.js';

export interface VectorSearchOptions {
  /** Exact scan below this many live vectors. @default 4096 */
  exactBelow: number;
  /** Fewest codes kept for exact re-scoring. @default 500 */
  minCandidates: number;
  /** Codes kept per wanted result. @default 10 */
  oversample: number;
  /** Load vectors through the store's faster private layout when it has one (SQLite: vec0's shadow tables). @default true */
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
  /** when set, only rows whose filter columns (VECTOR_SOURCES[feed].tags) equal these values */
  tags?: Readonly<Record<string, string>>;
}

const byReader = new WeakMap<SearchReader, Map<FeedName, Map<number, DimIndex>>>();

function cached(reader: SearchReader, feed: FeedName): Map<number, DimIndex> {
  let byFeed = byReader.get(reader);
  if (!byFeed) byReader.set(reader, (byFeed = new Map()));
  let m = byFeed.get(feed);
  if (!m) byFeed.set(feed, (m = new Map()));
  return m;
}

/** The synced index of the chunks' `dim`-sized vectors, or undefined when the store has none of that dimension. */
export async function vectorIndex(reader: SearchReader, dim: number): Promise<DimIndex | undefined> {
  const m = cached(reader, 'chunks');
  let ix = m.get(dim);
  if (!ix) {
    if (!(await reader.hasChunkDim(dim))) return undefined;
    ix = m.get(dim);
    if (!ix) m.set(dim, (ix = new DimIndex(reader, dim, 'chunks')));
  }
  await ix.sync();
  return ix;
}

/** The synced index of the memory messages' `dim`-sized vectors (empty when there are none). */
export async function memoryVectorIndex(reader: SearchReader, dim: number): Promise<DimIndex> {
  if (!Number.isInteger(dim) || dim <= 0) throw new RangeError(`Vector dimension must be a positive integer, got ${dim}`);
  const m = cached(reader, 'memory');
  let ix = m.get(dim);
  if (!ix) m.set(dim, (ix = new DimIndex(reader, dim, 'memory')));
  await ix.sync();
  return ix;
}

/** Drops the in-memory copies of `reader`, every source and every dataset's (next search rebuilds them). */
export function forgetVectorIndexes(reader: SearchReader): void {
  for (const [feed, m] of byReader.get(reader) ?? []) for (const ix of m.values()) reader.feed(feed).unfollow(ix);
  byReader.delete(reader);
  forgetDatasetVectors(reader);
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
  /** the feed position applied (null: never loaded) */
  private at: FeedPosition | null = null;
  private loaded = false;
  /** the last sync under way (each waits for the one before) */
  private syncing: Promise<void> = Promise.resolve();
  /** the source's name and filter columns */
  readonly source: { readonly name: string; readonly tags: readonly string[] };

  /** `partition`: this copy holds that partition's rows only (a dataset's chunks: datasetVectors). */
  constructor(private readonly reader: SearchReader, readonly dim: number, readonly feed: FeedName = 'chunks', readonly partition?: string) {
    this.source = VECTOR_SOURCES[feed];
    reader.feed(feed).follow(this);
    this.tagVals = this.source.tags.map(() => new Int32Array(0));
  }

  get size(): number {
    return this.live;
  }

  /**
   * Bytes held, as the memory budget counts them: per slot reserved its vector (dim × 4), rowid
   * (8), partition (4), flag (1), filter values (4 each) and 1-bit code (dim/8 rounded up to 8
   * once codes are built), plus the rowid → slot map.
   */
  get bytes(): number {
    const code = this.codes ? Math.ceil(this.dim / 64) * 8 + 7 : 0;
    return this.cap * (this.dim * 4 + 8 + 4 + 1 + 4 * this.tagVals.length + code) + this.slotOf.bytes + this.free.length * 8;
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

  /** Applies what changed in the store since the last sync (after any sync under way). */
  sync(): Promise<void> {
    const run = this.syncing.then(() => this.catchUp());
    this.syncing = run.catch(() => undefined);
    return run;
  }

  private async catchUp(): Promise<void> {
    const feed = this.reader.feed(this.feed);
    const change = await feed.changesSince({ position: this.loaded ? this.at : null, live: this.live });
    if (change.kind === 'reload') return this.load();
    if (change.kind === 'none') return;
    const { dirty, floor } = change;
    for (const [rid, row] of await this.reader.vectorRows(this.feed, this.dim, dirty, this.partition)) {
      if (!row) this.remove(rid);
      else this.put(rid, row.partition, row.searchable, row.vector, row.tags);
    }
    this.at = change.position;
    // The centre drifts as the collection grows: rebuild the codes when it has doubled.
    if (this.codes && this.live > 2 * this.codesAt) {
      this.codes = null;
      this.maybeBuildCodes(true);
    }
    await feed.trim(floor);
  }

  /** The feed position applied (the feed is not trimmed past it). */
  get position(): FeedPosition | null {
    return this.at;
  }

  /** Rebuilds the whole copy from the store (after any sync under way). */
  reload(): Promise<void> {
    const run = this.syncing.then(() => this.load());
    this.syncing = run.catch(() => undefined);
    return run;
  }

  /** Rebuilds the whole copy from the store, in one snapshot (loadVectors). */
  private async load(): Promise<void> {
    this.loaded = false;
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
    const head = await this.reader.loadVectors(this.feed, this.dim, {
      size: (count) => this.grow(count > 0 ? Math.max(count, 64) : 0), // a dataset without vectors of this size reserves nothing
      put: (rid, partition, searchable, vector, tags) => this.put(rid, partition, searchable, vector, tags),
    }, { shadow: vectorSearchOptions.vec0Shadow, ...(this.partition === undefined ? {} : { partition: this.partition }) });
    this.at = head;
    this.loaded = true;
    this.maybeBuildCodes(true);
  }

  private grow(min: number): void {
    if (min <= this.cap) return;
    const cap = Math.max(min, Math.ceil(this.cap * 1.5), 64);
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

  /** Holds row `rid`'s vector `v` (copied: it may be a view of a buffer the store reuses). */
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

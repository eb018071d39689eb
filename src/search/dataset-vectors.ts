/**
 * The chunks' vector indexes, one per (dataset, dimension), loaded on the first search of that
 * dataset and kept under a memory budget: when the loaded indexes (and the text side, which is
 * shared by every dataset) exceed it, the datasets searched least recently are dropped, and a
 * later search of one of them loads it again from the store. The same code serves SQLite and
 * PostgreSQL.
 *
 * Each dataset's index is a DimIndex of its rows only (vector-index.ts: one snapshot, then the
 * change feed), so a search ranks the same rows with the same cosines whether its datasets were
 * loaded once or evicted and loaded again: a write made while a dataset was not loaded is in
 * the store, and its next load reads it. A search over several datasets merges their hits (best
 * score first, then the lower rowid).
 *
 * A search needs every dataset it names in memory at once: when they alone exceed the budget
 * they are all loaded anyway (the budget is overshot while they stay the most recent), and the
 * next search of other datasets evicts them. docs/scaling.md ("Memory budget") gives the bytes
 * per chunk.
 *
 * Under a budget each dataset's term index is kept here too (`searchTerms`), loaded on the
 * dataset's first search and evicted in the same order; a search reads its datasets' term
 * indexes as one (dataset-terms.ts, FTS5's store-wide document frequencies). Without one, the
 * term index is the whole store's (term-index.ts).
 */
import type { SearchReader } from '../store/index.js';
import { DimIndex, type VectorFilter, type VectorHit } from './vector-index.js';
import { builtTermIndex, forgetTermIndex, termIndexBytes, termIndexOptions, TermIndex } from './term-index.js';
import { DatasetTerms } from './dataset-terms.js';

/**
 * `idleSyncMs`: a loaded dataset not searched for this long is brought up to date in the
 * background by another dataset's search (one per search), so that it does not hold back the
 * trimming of the change feed (a feed is trimmed only past what every copy applied) nor face a
 * long catch-up when it is searched again. @default 5000
 */
export const datasetVectorOptions = { idleSyncMs: 5_000 };

/** Per store reader: its loaded datasets (least recently searched first), its budget, its counters. */
class Budget {
  /** bytes; Infinity: no limit */
  limit = Infinity;
  /**
   * `${dim} ${datasetId}` → vector index, `t ${datasetId}` → term index (with a limit only), in
   * order of last search (oldest first)
   */
  readonly entries = new Map<string, DimIndex | TermIndex>();
  /** dimensions the store is known to have chunk vectors of */
  readonly dims = new Set<number>();
  /** when each loaded index last synced (ms) */
  readonly syncedAt = new Map<string, number>();
  loads = 0;
  evictions = 0;

  constructor(private readonly reader: SearchReader) {}

  /** Bytes the budget counts now: the loaded indexes plus the text side shared by every dataset (never evicted). */
  used(): number {
    let n = this.textBytes();
    for (const ix of this.entries.values()) n += ix.bytes;
    return n;
  }

  textBytes(): number {
    return termIndexBytes(this.reader) + (this.reader.fullTextBytes?.() ?? 0);
  }

  /** Drops the least recently searched indexes but those of the datasets in `keep` while over the limit. */
  fit(keep: ReadonlySet<string>): void {
    if (this.limit === Infinity) return;
    let used = this.used();
    for (const [key, ix] of this.entries) {
      if (used <= this.limit) break;
      if (keep.has(key.slice(key.indexOf(' ') + 1))) continue;
      used -= ix.bytes;
      this.drop(key, ix);
    }
  }

  /** Syncs, in the background, the least recently synced loaded index outside `skip` once it is idle. */
  keepInStep(skip: ReadonlySet<string>): void {
    const now = Date.now();
    let oldest: [string, DimIndex | TermIndex] | undefined;
    for (const e of this.entries) {
      if (skip.has(e[0].slice(e[0].indexOf(' ') + 1))) continue;
      if (!oldest || (this.syncedAt.get(e[0]) ?? 0) < (this.syncedAt.get(oldest[0]) ?? 0)) oldest = e;
    }
    if (!oldest || now - (this.syncedAt.get(oldest[0]) ?? 0) < datasetVectorOptions.idleSyncMs) return;
    this.syncedAt.set(oldest[0], now);
    oldest[1].sync().catch(() => undefined); // a store closed meanwhile: its next search says so
  }

  drop(key: string, ix: DimIndex | TermIndex): void {
    this.syncedAt.delete(key);
    this.entries.delete(key);
    this.reader.feed('chunks').unfollow(ix);
    this.evictions++;
  }
}

const budgets = new WeakMap<SearchReader, Budget>();

function budgetOf(reader: SearchReader): Budget {
  let b = budgets.get(reader);
  if (!b) budgets.set(reader, (b = new Budget(reader)));
  return b;
}

/**
 * Checks an `indexMemory` option (bytes the in-memory indexes may hold; `undefined` or
 * Infinity: no limit) and returns it. A TypeError names what is wrong.
 */
export function checkIndexMemory(v: unknown, name = 'indexMemory'): number {
  if (v === undefined || v === Infinity) return Infinity;
  if (typeof v !== 'number' || !Number.isFinite(v) || !Number.isInteger(v) || v < 1024 * 1024) {
    throw new TypeError(`"${name}" must be a whole number of bytes of at least 1 MiB (1048576), or Infinity for no limit; got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
  }
  return v;
}

/**
 * Sets the memory budget of `reader`'s indexes (bytes; Infinity: none) and evicts down to it.
 * With a budget the term index is per dataset (the store's is dropped); without, the store's
 * (the datasets' are dropped).
 */
export function setIndexMemory(reader: SearchReader, bytes: number): void {
  const b = budgetOf(reader);
  b.limit = checkIndexMemory(bytes);
  if (b.limit !== Infinity) forgetTermIndex(reader);
  else for (const [key, ix] of [...b.entries]) if (ix instanceof TermIndex) b.drop(key, ix);
  b.fit(new Set());
}

/** What a reader's indexes hold now (tests, benchmarks, `ragloom serve` logs). */
export function indexMemoryStats(reader: SearchReader): {
  limit: number; used: number; text: number; loaded: Array<{ dim: number; dataset: string; rows: number; bytes: number }>;
  terms: Array<{ dataset: string; rows: number; bytes: number }>; loads: number; evictions: number;
} {
  const b = budgetOf(reader);
  const loaded = [];
  const terms = [];
  for (const [key, ix] of b.entries) {
    const dataset = key.slice(key.indexOf(' ') + 1);
    if (ix instanceof DimIndex) loaded.push({ dim: ix.dim, dataset, rows: ix.size, bytes: ix.bytes });
    else terms.push({ dataset, rows: ix.size, bytes: ix.bytes });
  }
  return { limit: b.limit, used: b.used(), text: b.textBytes(), loaded, terms, loads: b.loads, evictions: b.evictions };
}

/** True when `reader`'s indexes are under a memory budget: the term index is then per dataset (datasetTerms). */
export function termsPerDataset(reader: SearchReader): boolean {
  return budgetOf(reader).limit !== Infinity;
}

/** Drops every dataset's vector and term index of `reader` (the next search of each loads it again). */
export function forgetDatasetVectors(reader: SearchReader): void {
  const b = budgets.get(reader);
  if (!b) return;
  for (const [key, ix] of [...b.entries]) b.drop(key, ix);
}

/**
 * The synced vector indexes of the datasets' `dim`-sized chunk vectors, loaded now where they are
 * not (then the least recently searched others are evicted to fit the budget); undefined when the
 * store has no chunk vector of that dimension.
 */
export async function datasetVectors(reader: SearchReader, dim: number, datasets: readonly string[]): Promise<DatasetVectors | undefined> {
  const b = budgetOf(reader);
  if (!b.dims.has(dim)) {
    if (!(await reader.hasChunkDim(dim))) return undefined;
    b.dims.add(dim);
  }
  const keys = [...new Set(datasets)].map((d) => `${dim} ${d}`);
  const mine = new Set(datasets);
  const parts: DimIndex[] = [];
  for (const key of keys) {
    let ix = b.entries.get(key) as DimIndex | undefined;
    if (ix) b.entries.delete(key); // re-inserted below: the most recently searched
    else {
      ix = new DimIndex(reader, dim, 'chunks', key.slice(key.indexOf(' ') + 1));
      b.loads++;
    }
    b.entries.set(key, ix);
    await ix.sync(); // the first sync loads it
    b.syncedAt.set(key, Date.now());
    parts.push(ix);
    b.fit(mine);
  }
  b.keepInStep(mine);
  return new DatasetVectors(parts);
}

/**
 * The text side's in-memory index for a search of `datasets`: without a memory budget the
 * store's term index once built (else undefined: FTS5 answers, and searches build it in steps);
 * under a budget each dataset's term index, loaded now where it is not and evicted with the
 * vectors (least recently searched first), read as one (DatasetTerms: FTS5's store-wide document
 * frequencies, so scores do not depend on which datasets are loaded). undefined when switched
 * off (`termIndexOptions.enabled`).
 */
export async function searchTerms(reader: SearchReader, datasets: readonly string[]): Promise<TermIndex | DatasetTerms | undefined> {
  const b = budgetOf(reader);
  if (b.limit === Infinity) return builtTermIndex(reader);
  if (!termIndexOptions.enabled || datasets.length === 0) return undefined;
  const mine = new Set(datasets);
  const parts: TermIndex[] = [];
  for (const d of mine) {
    const key = `t ${d}`;
    let ix = b.entries.get(key) as TermIndex | undefined;
    if (ix) b.entries.delete(key); // re-inserted below: the most recently searched
    else {
      ix = new TermIndex(reader, d);
      b.loads++;
    }
    b.entries.set(key, ix);
    if (!ix.ready) await ix.advance(Infinity);
    await ix.sync();
    b.syncedAt.set(key, Date.now());
    parts.push(ix);
    b.fit(mine);
  }
  return new DatasetTerms(reader, parts);
}

/**
 * Loads datasets' indexes ahead of their first search (a search thread starting), in the order
 * given, while they fit the budget: their vectors, then (under a budget) their term indexes.
 */
export async function preloadDatasetVectors(reader: SearchReader, dims: readonly number[], datasets: readonly string[]): Promise<void> {
  const b = budgetOf(reader);
  for (const dim of dims) {
    for (const d of datasets) {
      if (b.used() >= b.limit) return;
      await datasetVectors(reader, dim, [d]);
    }
  }
  if (b.limit === Infinity) return;
  for (const d of datasets) {
    if (b.used() >= b.limit) return;
    await searchTerms(reader, [d]);
  }
}

/** The vector side of one search: the indexes of its datasets, read as one. */
export class DatasetVectors {
  /** `parts`: each dataset's index, in the order the search named them. */
  constructor(readonly parts: readonly DimIndex[]) {}

  /** The index holding a row (searchable or not), or undefined. */
  private holder(rowid: number): DimIndex | undefined {
    for (const p of this.parts) if (p.vector(rowid)) return p;
    return undefined;
  }

  /** Live rows in these datasets. */
  countIn(datasets: readonly string[]): number {
    let n = 0;
    for (const p of this.parts) n += p.countIn(datasets);
    return n;
  }

  /** True for a searchable row of the filter's datasets (DimIndex.matcher over every part). */
  matcher(filter: Omit<VectorFilter, 'rowids'>): (rowid: number) => boolean {
    const ms = this.parts.map((p) => p.matcher(filter));
    if (ms.length === 1) return ms[0]!;
    return (rowid) => {
      for (const m of ms) if (m(rowid)) return true;
      return false;
    };
  }

  /** The `k` best hits over every part (DimIndex.search each), best first, ties to the lower rowid. */
  search(q: Float32Array, k: number, filter: VectorFilter, opts: { exact?: boolean } = {}): VectorHit[] {
    if (this.parts.length === 1) return this.parts[0]!.search(q, k, filter, opts);
    const all = this.parts.flatMap((p) => p.search(q, k, filter, opts));
    all.sort((a, b) => b.score - a.score || a.rowid - b.rowid);
    return all.slice(0, Math.max(0, k));
  }

  /** DimIndex.cosines over the parts (NaN where no part has the row). */
  cosines(q: Float32Array, rowids: readonly number[]): Float64Array {
    if (this.parts.length === 1) return this.parts[0]!.cosines(q, rowids);
    const out = new Float64Array(rowids.length).fill(NaN);
    for (const p of this.parts) {
      const c = p.cosines(q, rowids);
      for (let i = 0; i < c.length; i++) if (!Number.isNaN(c[i]!)) out[i] = c[i]!;
    }
    return out;
  }

  vector(rowid: number): Float32Array | undefined {
    return this.holder(rowid)?.vector(rowid);
  }

  datasetOf(rowid: number): string | undefined {
    return this.holder(rowid)?.datasetOf(rowid);
  }
}

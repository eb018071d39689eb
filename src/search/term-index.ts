/**
 * The full-text side of chunk retrieval in memory: a copy of `chunk_fts`'s rows that gives the
 * same BM25 scores as FTS5's bm25() (bit for bit: the same operations in the same order, and the
 * idf through SQLite's own log()), so a search over it ranks exactly as the FTS5 queries of
 * fulltext.ts do, at a fraction of their cost (FTS5 scores every match of every term).
 *
 * - Forward rows: each chunk's four analysed columns (title, content, keywords, questions) as
 *   term ids in text order, the same terms `rowTerms` re-analyses from the stored text. RM3's
 *   feedback rows, the JS cross-scores and `content_ltks` read them instead of re-analysing.
 * - Postings: per FTS5 token, the chunks holding it (in slot order) with the weighted frequency
 *   bm25() uses (Σ column weight per occurrence). A term of the analyser is one FTS5 token when it
 *   is plain ASCII `[a-z0-9]+`; any other term is tokenised once by SQLite itself (the table's own
 *   tokenizer, in a private in-memory database), so folding and splitting match FTS5's.
 * - Top k: term at a time into per-chunk accumulators, MaxScore-style (Turtle & Flood): once the
 *   k-th best partial sum beats what the remaining terms can add (per-token bounds: largest
 *   weighted frequency, shortest row), they only update the chunks still in reach. Pruning uses
 *   a 1e-9 margin; the survivors are scored again in the query's term order, as bm25() sums,
 *   so scores are exact. Ties go to the lower rowid, as FTS5's `ORDER BY bm25 LIMIT` returns
 *   them. FTS5's other path (every match, when the terms are rare) is `all`.
 *
 * Keeping in step, as vector-index.ts does: the store's chunk feed reports the rows inserted past
 * the highest one applied and every deleted or rewritten chunk; each search applies both first
 * (reading those rows in one batch), so writes of any connection or process are seen and
 * rolled-back ones never are. Deleted rows stay in the postings, skipped, until a compaction
 * rebuilds them from the forward rows (when a quarter of the slots are dead or appended).
 * A document's rename rewrites its chunks' FTS5 titles and logs them (store/chunks.ts
 * retitleDocumentChunks); like `rowTerms`, this copy reads the current name when it re-reads a chunk.
 *
 * Document names: each chunk's document is held (interned), with its name as the chunk's row last
 * read it, so a search counts its doc_aggs with their names without reading the store (on
 * PostgreSQL, ~80 names a search were most of its one statement's cost). A rename logs every chunk
 * of the document and a deletion deletes them, so the names follow the feed as the rows do (the
 * same visibility), and they live and go with the index they belong to: the store's, or a
 * dataset's under `indexMemory`, counted in `bytes` (no cache of their own to bound or evict).
 *
 * Memory: ~1.1–1.3 KB per ~200-word chunk (the forward rows' term ids, the postings). Building
 * takes ~2 s per 100k such chunks: retrieve.ts builds it a slice per search (`advance`; one
 * search's step at a time, the others skip theirs), FTS5 answering until it is built;
 * `termIndex(reader)` builds it at once (the search threads, tests), and a PostgreSQL-backed
 * server in the background from its start (`buildTermIndexInBackground`, warm.ts), searches then
 * building none of it. Its build steps and syncs run one after another. Under an `indexMemory`
 * budget, each dataset has its own instead (dataset-vectors.ts `searchTerms`, dataset-terms.ts).
 */
import type { FeedPosition, PageChunk, SearchReader, TextTokenizer } from '../store/index.js';
import type { FtsTerms } from '../text/index.js';
import { K1, B, COLUMN_WEIGHTS, termSimilarity } from './bm25.js';
import { RowSlots } from './row-slots.js';
import { TopK } from './vector-index.js';
import { bestTerms, termRowColumns, type TextQuery } from './fulltext.js';

/**
 * Process-wide settings. `enabled`: tests and benchmarks compare both paths; `RAGLOOM_TERM_INDEX=0`
 * starts a process with it off, every search then asks FTS5. `buildStepMs`: the longest one search
 * spends building the index while it is not built (retrieve.ts `rank`: about as long as the
 * search itself took, at least one slice of rows). @default { enabled: true, buildStepMs: 100 }
 */
export const termIndexOptions = {
  enabled: process.env.RAGLOOM_TERM_INDEX !== '0',
  buildStepMs: 100,
  /**
   * Hold each chunk's page row where the store sends it (SearchReader.termPages: PostgreSQL), so a
   * ranked page is served without a round trip. false (RAGLOOM_TERM_PAGES=0): a node short of RAM
   * reads each page instead (docs/scaling.md gives the bytes per chunk).
   */
  pages: process.env.RAGLOOM_TERM_PAGES !== '0',
};

/**
 * Rows read per statement while the copy is built: `step` by a search's build step (one slice is
 * the least it does), `bulk` by a build at once (`termIndex`, a background build). Tests make
 * them small to run many slices.
 */
export const TERM_SLICES = { step: 512, bulk: 4096 };

/** A chunk's full-text row, as the store wrote it (src/store/chunks.ts; stored: PostgreSQL) and rowTerms re-reads it. */
const rowCols = termRowColumns;

/** Terms FTS5's unicode61 keeps as they are: one token each, no folding. */
const PLAIN = /^[a-z0-9]{1,1000}$/;
/** Margins of the pruning bounds, far above the rounding of a sum of a few hundred terms. */
const SLACK = 1 + 1e-9;
const LOW = 1 - 1e-9;
const EMPTY_LIST: [Int32Array, Int32Array] = [new Int32Array(0), new Int32Array(0)];
const NCOLS = 4;
const W = COLUMN_WEIGHTS;
/** Bytes an interned document costs besides its two strings' characters (map entry, array slots, string headers). */
const DOC_OVERHEAD = 96;

const byReader = new WeakMap<SearchReader, TermIndex>();

/**
 * The synced term index of the store's chunks, built now if it is not yet; undefined when switched
 * off (`termIndexOptions.enabled`).
 */
export function termIndex(reader: SearchReader): Promise<TermIndex | undefined> {
  return termIndexStep(reader, Infinity);
}

/**
 * The synced term index of the store's chunks if it is built, else undefined (and nothing is
 * built): the caller asks FTS5, which ranks the same.
 */
export async function builtTermIndex(reader: SearchReader): Promise<TermIndex | undefined> {
  const ix = termIndexOptions.enabled ? byReader.get(reader) : undefined;
  if (!ix?.ready) return undefined;
  await ix.sync();
  return ix;
}

/**
 * Builds the store's term index for about `ms` (at least one slice of rows, `TermIndex.advance`);
 * the synced index once it is built, else undefined. While a background build (buildTermIndexInBackground)
 * or another search's step runs, it builds nothing: undefined at once (steps queued behind one
 * another made each of many concurrent searches wait for the steps of those before it).
 */
export async function termIndexStep(reader: SearchReader, ms: number): Promise<TermIndex | undefined> {
  if (!termIndexOptions.enabled) return undefined;
  let ix = byReader.get(reader);
  if (!ix) byReader.set(reader, (ix = new TermIndex(reader)));
  if (ix.inBackground || (ms !== Infinity && stepping.has(ix))) return undefined;
  if (ms !== Infinity) stepping.add(ix);
  try {
    if (!(await ix.advance(ms))) return undefined;
  } finally {
    if (ms !== Infinity) stepping.delete(ix);
  }
  await ix.sync();
  return ix;
}

/** Term indexes a search's build step is running on. */
const stepping = new WeakSet<TermIndex>();

/**
 * Builds the store's term index now, without searches waiting for it (a PostgreSQL-backed
 * server's start, as SQLite's search threads build theirs): until it is built, searches ask
 * FTS5 (the same ranking) and no longer each build a slice, which, queued behind one another,
 * made every search wait for the slices of the searches before it. Resolves when it is built
 * (or the build failed: then searches build it in slices again).
 */
export async function buildTermIndexInBackground(reader: SearchReader): Promise<void> {
  if (!termIndexOptions.enabled) return;
  let ix = byReader.get(reader);
  if (!ix) byReader.set(reader, (ix = new TermIndex(reader)));
  await ix.buildInBackground();
}

/**
 * Drops the store's term index of this process (a memory budget set: the term index is then per
 * dataset, dataset-vectors.ts searchTerms). A build under way finishes into the dropped copy.
 */
export function forgetTermIndex(reader: SearchReader): void {
  byReader.get(reader)?.close();
  byReader.delete(reader);
}

/** Bytes the store's term index holds in this process (0 when none is built or building). */
export function termIndexBytes(reader: SearchReader): number {
  return byReader.get(reader)?.bytes ?? 0;
}

/**
 * What the text side of a search reads from an in-memory term index (fulltext.ts textQuery,
 * textSide, expandWith): the store-wide TermIndex, or several datasets' indexes read as one
 * (dataset-terms.ts DatasetTerms). Tokens are ids of the source's own; idf and the average row
 * length are the caller's (FTS5's statistics, store-wide).
 */
export type TermSource = Pick<TermIndex, 'queryToken' | 'docFreq' | 'dfOf' | 'ftsIdf' | 'top' | 'all' | 'scoreRows'>;

/** One hit of `TermIndex.top`: bm25 as a positive number (FTS5's bm25() is its negation). */
export interface TermHit {
  rowid: number;
  score: number;
}

/** A growable Int32 array. */
class IntList {
  a: Int32Array;
  n = 0;
  constructor(cap = 16) {
    this.a = new Int32Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
}

export class TermIndex {
  // ---- dictionary: the analyser's terms; a term id is also the id of the FTS5 token it spells
  private readonly ids = new Map<string, number>();
  private readonly strs: string[] = [];
  /** per term: its FTS5 tokens when they are not the term itself (undefined: itself) */
  private readonly canon: Array<Int32Array | undefined> = [];
  /** terms not yet tokenised by SQLite */
  private pending: number[] = [];

  // ---- per token
  private df = new Int32Array(0);
  private maxWf = new Int32Array(0);
  private minLen = new Int32Array(0);
  /** postings built by the last compaction: CSR over tokens < baseVocab */
  private baseVocab = 0;
  private baseOff = new Float64Array(1);
  private baseSlot = new Int32Array(0);
  private baseWf = new Int32Array(0);
  /** postings appended since, per token: slots ascending */
  private readonly tails = new Map<number, { slot: IntList; wf: IntList }>();
  private tailCount = 0;

  // ---- per slot (a chunk's place; slots only grow until a compaction renumbers them)
  private n = 0;
  private cap = 0;
  private live = 0;
  private rowid = new Float64Array(0);
  private alive = new Uint8Array(0);
  /** FTS5's row length: tokens over all columns */
  private dlen = new Int32Array(0);
  /** pool offsets: start of the row, and the end of each of its columns */
  private start = new Float64Array(0);
  private colEnd = new Float64Array(0);
  // Small to start: a dataset's index (under a memory budget) may hold a few chunks.
  private pool = new Int32Array(1 << 10);
  private poolLen = 0;
  private dead = 0;
  private readonly slotOf = new RowSlots();
  /** per slot: its document (a chunk's document never changes), interned */
  private doc = new Int32Array(0);
  private docIds = new Map<string, number>();
  private docKeys: string[] = [];
  /** per interned document: its name as last read (null: the document was gone) */
  private docTitles: Array<string | null> = [];
  /** the documents' ids and names, in bytes (UTF-16) */
  private docBytes = 0;
  /** per slot: the chunk's page row as last read (SearchReader.termPages), doc_name taken from docTitles */
  private pages: Array<PageChunk | undefined> = [];
  /** the page rows, in bytes (estimated: UTF-16 strings and the object; shared ids counted once) */
  private pageBytes = 0;
  private readonly datasetKeys = new Map<string, string>();

  // ---- keeping in step
  /** the feed position applied (null: never loaded) */
  private at: FeedPosition | null = null;
  private loaded = false;
  /** A build in steps (advance): the feed position it started at, the last rowid read. */
  private building: { at: FeedPosition; next: number } | null = null;
  /** the last build step or sync under way (each waits for the one before) */
  private chain: Promise<unknown> = Promise.resolve();
  /** the store's tokenizer and logarithm (FTS5's own), fetched at the first build step */
  private tok?: TextTokenizer;
  /** scratch: weighted frequency per token while a row is read */
  private acc = new Int32Array(0);
  private readonly touched = new IntList(256);

  /**
   * `dataset`: hold that dataset's chunks only (read with the store's dataset filter, the feed's
   * changes to other datasets' chunks skipped). Its document frequencies and row count are then
   * the dataset's, not FTS5's: a search must take them from the store-wide full-text engine and
   * hand them to `top`/`all` (which take idf and the average length as arguments), as
   * docs/scaling.md ("Memory budget") describes. Without it: every chunk of the store.
   */
  constructor(private readonly reader: SearchReader, readonly dataset?: string) {
    reader.feed('chunks').follow(this);
  }

  /** Stops following the store's feed (a dataset's index dropped from memory). */
  close(): void {
    this.reader.feed('chunks').unfollow(this);
  }

  /** The feed position applied (the feed is not trimmed past it, nor past a build's start; null: neither, nothing is trimmed). */
  get position(): FeedPosition | null {
    return this.loaded ? this.at : this.building ? this.building.at : null;
  }

  /** Built and usable (then `sync` keeps it in step). */
  get ready(): boolean {
    return this.loaded;
  }

  /** Chunks held (every chunk row, available or not: FTS5's rows). */
  get size(): number {
    return this.live;
  }

  /** Runs `fn` after the build step or sync under way. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  // ------------------------------------------------------------------ keeping in step

  /** Applies what changed in the store since the last sync (after any step or sync under way). */
  sync(): Promise<void> {
    return this.serial(() => this.catchUp());
  }

  private async catchUp(): Promise<void> {
    const change = await this.reader.feed('chunks').changesSince({ position: this.loaded ? this.at : null, live: this.live });
    if (change.kind === 'reload') {
      this.loaded = false;
      this.building = null;
      await this.build(Infinity);
      return;
    }
    if (change.kind === 'none') return;
    const { dirty } = change;
    // With a dataset, another dataset's chunk reads as absent: removeRow skips what is not held.
    const rows = await this.reader.termRows(dirty, this.dataset);
    this.tok ??= await this.reader.textTokenizer();
    const added: number[] = [];
    for (const rid of dirty) {
      const r = rows.get(rid);
      const cols = r ? rowCols(r) : undefined;
      const old = this.slotOf.get(rid);
      // A switch (available) or a re-embedding leaves the full-text row as it was; a rename may
      // too (the same terms), its name is taken all the same.
      if (cols && old !== undefined && this.docKeys[this.doc[old]!] === r![6] && this.holds(old, cols)) {
        this.nameDocument(this.doc[old]!, r![8]);
        // Its page columns may have changed all the same (available, positions, the content's case).
        this.setPage(old, r![10]);
        continue;
      }
      this.removeRow(rid);
      if (cols) added.push(this.addRow(rid, cols, r![6], r![8], r![10]));
    }
    this.canonicalise();
    for (const s of added) this.post(s);
    this.at = change.position;
    if (this.dead > Math.max(1000, this.n / 4) || this.tailCount > Math.max(50_000, this.baseSlot.length / 4)) this.compact();
  }

  /** Rebuilds the whole copy from the store now. */
  reload(): Promise<void> {
    return this.serial(async () => {
      this.loaded = false;
      this.building = null;
      await this.build(Infinity);
    });
  }

  /**
   * Builds more of the copy, slice by slice, until `budgetMs` has passed (at least one slice of
   * TERM_SLICES.step chunks); true once it is built. The rows before a build's start are read in
   * slices, each its own snapshot: whatever changes meanwhile is in the feed past the start's seq
   * (held back from trimming) or is a row past its highest rowid, which `sync` then applies, as
   * it does for any write after a full read.
   */
  advance(budgetMs: number): Promise<boolean> {
    return this.serial(() => this.build(budgetMs));
  }

  /** A background build under way (buildInBackground). */
  private background: Promise<void> | null = null;

  /** True while buildInBackground runs. */
  get inBackground(): boolean {
    return this.background !== null;
  }

  /** Builds the whole copy (in large slices, each its own statement); searches meanwhile build nothing. */
  buildInBackground(): Promise<void> {
    this.background ??= this.advance(Infinity).then(() => undefined, () => undefined).finally(() => (this.background = null));
    return this.background;
  }

  private async build(budgetMs: number): Promise<boolean> {
    if (this.loaded) return true;
    const t0 = performance.now();
    this.tok ??= await this.reader.textTokenizer();
    if (!this.building) {
      this.n = 0;
      this.live = 0;
      this.dead = 0;
      this.poolLen = 0;
      this.slotOf.clear();
      this.df.fill(0);
      this.docIds = new Map();
      this.docKeys = [];
      this.docTitles = [];
      this.docBytes = 0;
      this.pages = [];
      this.pageBytes = 0;
      this.building = { at: await this.reader.feed('chunks').head(), next: 0 };
    }
    const b = this.building;
    // A build at once reads large slices (fewer statements); a step, one small slice at least.
    const slice = budgetMs === Infinity ? TERM_SLICES.bulk : TERM_SLICES.step;
    for (;;) {
      let read = 0;
      for (const r of await this.reader.termSlice(b.at, b.next, slice, this.dataset)) {
        this.addRow(r[0], rowCols(r), r[6], r[8], r[10]);
        b.next = r[0];
        read++;
      }
      if (read < slice) break;
      if (performance.now() - t0 >= budgetMs) return false;
    }
    this.canonicalise();
    this.compact();
    this.at = b.at;
    this.building = null;
    this.loaded = true;
    return true;
  }

  private grow(min: number): void {
    if (min <= this.cap) return;
    const cap = Math.max(min, Math.ceil(this.cap * 1.5), 1024);
    const f64 = (a: Float64Array, k = 1) => {
      const b = new Float64Array(cap * k);
      b.set(a.subarray(0, this.n * k));
      return b;
    };
    this.rowid = f64(this.rowid);
    this.start = f64(this.start);
    this.colEnd = f64(this.colEnd, NCOLS);
    const al = new Uint8Array(cap);
    al.set(this.alive.subarray(0, this.n));
    this.alive = al;
    const dl = new Int32Array(cap);
    dl.set(this.dlen.subarray(0, this.n));
    this.dlen = dl;
    const dc = new Int32Array(cap);
    dc.set(this.doc.subarray(0, this.n));
    this.doc = dc;
    this.cap = cap;
  }

  /** The interned document `id`, its name set to `name` (the latest read). */
  private docId(id: string, name: string | null): number {
    let k = this.docIds.get(id);
    if (k === undefined) {
      k = this.docKeys.length;
      this.docIds.set(id, k);
      this.docKeys.push(id);
      this.docTitles.push(null);
      this.docBytes += 2 * id.length + DOC_OVERHEAD;
    }
    this.nameDocument(k, name);
    return k;
  }

  private nameDocument(k: number, name: string | null): void {
    const was = this.docTitles[k]!;
    if (was === name) return;
    this.docBytes += 2 * ((name?.length ?? 0) - (was?.length ?? 0));
    this.docTitles[k] = name;
  }

  /** Interns again only the documents of live rows (the others' were deleted): their memory goes with them. */
  private internLiveDocuments(): void {
    const ids = new Map<string, number>();
    const keys: string[] = [];
    const titles: Array<string | null> = [];
    const to = new Int32Array(this.docKeys.length).fill(-1);
    let bytes = 0;
    for (let s = 0; s < this.n; s++) {
      const k = this.doc[s]!;
      if (to[k]! < 0) {
        to[k] = keys.length;
        ids.set(this.docKeys[k]!, keys.length);
        keys.push(this.docKeys[k]!);
        titles.push(this.docTitles[k]!);
        bytes += 2 * (this.docKeys[k]!.length + (this.docTitles[k]?.length ?? 0)) + DOC_OVERHEAD;
      }
      this.doc[s] = to[k]!;
    }
    this.docIds = ids;
    this.docKeys = keys;
    this.docTitles = titles;
    this.docBytes = bytes;
  }

  /** Slot `s`'s page row is now `page` (undefined: none held). */
  private setPage(s: number, page: PageChunk | undefined): void {
    if (!termIndexOptions.pages) page = undefined;
    const was = this.pages[s];
    if (was) this.pageBytes -= pageRowBytes(was);
    if (page) {
      // The row is the store's, fresh: its repeated strings are shared (the name comes from docTitles).
      page.doc_name = '';
      page.document_id = this.docKeys[this.doc[s]!]!;
      page.dataset_id = this.datasetKeys.get(page.dataset_id) ?? (this.datasetKeys.set(page.dataset_id, page.dataset_id), page.dataset_id);
    }
    this.pages[s] = page;
    if (page) this.pageBytes += pageRowBytes(page);
  }

  /**
   * The page row of a held chunk as of the last sync (its document's name the latest read), or
   * undefined: not held, the store sends none (SearchReader.termPages), pages off, or its
   * document was gone. The same row `pageChunks` reads at that snapshot.
   */
  pageOf(rowid: number): PageChunk | undefined {
    const s = this.slotOf.get(rowid);
    if (s === undefined) return undefined;
    const p = this.pages[s];
    const name = this.docTitles[this.doc[s]!];
    if (!p || name == null) return undefined;
    return { ...p, doc_name: name };
  }

  /** The document id of a chunk held here, or undefined. */
  documentOf(rowid: number): string | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined ? undefined : this.docKeys[this.doc[s]!];
  }

  /**
   * The name of a held chunk's document as of the last sync, or undefined (not held, or its
   * document was gone when the row was read).
   */
  documentNameOf(rowid: number): string | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined ? undefined : (this.docTitles[this.doc[s]!] ?? undefined);
  }

  private termId(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strs.length;
      this.ids.set(s, id);
      this.strs.push(s);
      this.canon.push(undefined);
      if (!PLAIN.test(s)) this.pending.push(id);
      if (id >= this.df.length) {
        const cap = Math.max(1024, this.df.length * 2);
        const g = (a: Int32Array) => {
          const b = new Int32Array(cap);
          b.set(a);
          return b;
        };
        this.df = g(this.df);
        this.maxWf = g(this.maxWf);
        this.minLen = g(this.minLen);
        this.acc = new Int32Array(cap);
      }
      this.minLen[id] = 0x7fffffff;
    }
    return id;
  }

  /** Appends a chunk's forward row; its postings follow (post) once its terms are tokenised. */
  private addRow(rid: number, cols: FtsTerms, documentId: string, documentName: string | null, page?: PageChunk): number {
    if (this.n >= this.cap) this.grow(this.n + 1);
    const s = this.n++;
    this.start[s] = this.poolLen;
    for (let c = 0; c < NCOLS; c++) {
      const text = cols[c]!;
      if (text) {
        // rowTerms splits the same way: one term per space.
        let from = 0;
        for (;;) {
          const sp = text.indexOf(' ', from);
          this.pushPool(this.termId(sp < 0 ? text.slice(from) : text.slice(from, sp)));
          if (sp < 0) break;
          from = sp + 1;
        }
      }
      this.colEnd[s * NCOLS + c] = this.poolLen;
    }
    this.rowid[s] = rid;
    this.alive[s] = 1;
    this.doc[s] = this.docId(documentId, documentName);
    this.pages[s] = undefined;
    this.setPage(s, page);
    this.slotOf.set(rid, s);
    this.live++;
    return s;
  }

  /** Slot `s` holds exactly these analysed columns. */
  private holds(s: number, cols: FtsTerms): boolean {
    let p = this.start[s]!;
    for (let c = 0; c < NCOLS; c++) {
      const end = this.colEnd[s * NCOLS + c]!;
      const from = p;
      let text = '';
      for (; p < end; p++) text += (p > from ? ' ' : '') + this.strs[this.pool[p]!]!;
      if (text !== cols[c]) return false;
    }
    return true;
  }

  private pushPool(id: number): void {
    if (this.poolLen === this.pool.length) {
      const b = new Int32Array(this.pool.length * 2);
      b.set(this.pool);
      this.pool = b;
    }
    this.pool[this.poolLen++] = id;
  }

  /**
   * Adds up a row's weighted frequency per token into `acc` (tokens listed in `touched`) and
   * returns its FTS5 length. The caller clears `acc` for the touched tokens.
   */
  private gather(s: number): number {
    const { pool, canon, acc, touched } = this;
    touched.n = 0;
    let d = 0;
    let p = this.start[s]!;
    for (let c = 0; c < NCOLS; c++) {
      const end = this.colEnd[s * NCOLS + c]!;
      const w = W[c]!;
      for (; p < end; p++) {
        const t = pool[p]!;
        const cn = canon[t];
        if (cn === undefined) {
          if (acc[t] === 0) touched.push(t);
          acc[t] += w;
          d++;
        } else {
          for (let j = 0; j < cn.length; j++) {
            const u = cn[j]!;
            if (acc[u] === 0) touched.push(u);
            acc[u] += w;
          }
          d += cn.length;
        }
      }
    }
    return d;
  }

  /** A new row's postings, appended to the tails. */
  private post(s: number): void {
    const d = (this.dlen[s] = this.gather(s));
    const { acc, touched } = this;
    for (let i = 0; i < touched.n; i++) {
      const t = touched.a[i]!;
      const wf = acc[t]!;
      acc[t] = 0;
      let tl = this.tails.get(t);
      if (!tl) this.tails.set(t, (tl = { slot: new IntList(4), wf: new IntList(4) }));
      tl.slot.push(s);
      tl.wf.push(wf);
      this.tailCount++;
      this.df[t]!++;
      if (wf > this.maxWf[t]!) this.maxWf[t] = wf;
      if (d < this.minLen[t]!) this.minLen[t] = d;
    }
  }

  private removeRow(rid: number): void {
    const s = this.slotOf.get(rid);
    if (s === undefined) return;
    this.slotOf.delete(rid);
    this.gather(s);
    const { acc, touched } = this;
    for (let i = 0; i < touched.n; i++) {
      const t = touched.a[i]!;
      acc[t] = 0;
      this.df[t]!--;
    }
    this.alive[s] = 0;
    this.setPage(s, undefined);
    this.live--;
    this.dead++;
  }

  /**
   * Renumbers the live rows densely (same order), packs their forward rows and rebuilds every
   * posting list from them (two passes: counts, then fill). Bounds are recomputed exactly.
   */
  private compact(): void {
    // Forward rows, packed.
    if (this.dead > 0 || this.poolLen > 0) {
      const pool = new Int32Array(Math.max(1 << 10, this.poolLen));
      let len = 0;
      let m = 0;
      for (let s = 0; s < this.n; s++) {
        if (!this.alive[s]) continue;
        const from = this.start[s]!;
        const to = this.colEnd[s * NCOLS + NCOLS - 1]!;
        pool.set(this.pool.subarray(from, to), len);
        const shift = len - from;
        this.start[m] = len;
        for (let c = 0; c < NCOLS; c++) this.colEnd[m * NCOLS + c] = this.colEnd[s * NCOLS + c]! + shift;
        this.rowid[m] = this.rowid[s]!;
        this.alive[m] = 1;
        this.dlen[m] = this.dlen[s]!;
        this.doc[m] = this.doc[s]!;
        this.pages[m] = this.pages[s];
        this.slotOf.set(this.rowid[m]!, m);
        len += to - from;
        m++;
      }
      this.pool = pool;
      this.poolLen = len;
      this.pages.length = m;
      this.n = m;
      this.dead = 0;
      this.internLiveDocuments();
    }
    const V = this.strs.length;
    const count = new Float64Array(V + 1);
    const { acc, touched } = this;
    for (let s = 0; s < this.n; s++) {
      this.dlen[s] = this.gather(s);
      for (let i = 0; i < touched.n; i++) {
        const t = touched.a[i]!;
        acc[t] = 0;
        count[t + 1]!++;
      }
    }
    for (let t = 0; t < V; t++) {
      this.df[t] = count[t + 1]!;
      count[t + 1]! += count[t]!;
    }
    const total = count[V]!;
    const slot = new Int32Array(total);
    const wfs = new Int32Array(total);
    const at = count.slice(0, V);
    this.maxWf.fill(0);
    this.minLen.fill(0x7fffffff);
    for (let s = 0; s < this.n; s++) {
      const d = this.gather(s);
      for (let i = 0; i < touched.n; i++) {
        const t = touched.a[i]!;
        const wf = acc[t]!;
        acc[t] = 0;
        const k = at[t]!++;
        slot[k] = s;
        wfs[k] = wf;
        if (wf > this.maxWf[t]!) this.maxWf[t] = wf;
        if (d < this.minLen[t]!) this.minLen[t] = d;
      }
    }
    this.baseVocab = V;
    this.baseOff = count;
    this.baseSlot = slot;
    this.baseWf = wfs;
    this.tails.clear();
    this.tailCount = 0;
  }

  // ------------------------------------------------------------------ FTS5 tokens of odd terms

  /** The FTS5 tokens of each text, by the table's own tokenizer (the store's, TextTokenizer). */
  private tokenise(texts: string[]): string[][] {
    return this.tok!.tokenise(texts);
  }

  /** Tokenises the terms FTS5 might read differently (anything but plain ASCII words). */
  private canonicalise(): void {
    while (this.pending.length) {
      const ids = this.pending;
      this.pending = [];
      for (let i = 0; i < ids.length; i += 5000) {
        const part = ids.slice(i, i + 5000);
        const toks = this.tokenise(part.map((id) => this.strs[id]!));
        part.forEach((id, j) => {
          const t = toks[j]!;
          this.canon[id] = t.length === 1 && t[0] === this.strs[id] ? undefined : Int32Array.from(t, (x) => this.termId(x));
        });
      }
    }
  }

  // ------------------------------------------------------------------ search

  /**
   * The token a query term stands for, as FTS5 reads `"term"`: its id (≥ 0), −1 when no row
   * holds it, −2 when it is not exactly one token (a phrase: use FTS5).
   */
  queryToken(term: string): number {
    const id = this.ids.get(term);
    if (id !== undefined) {
      const c = this.canon[id];
      return c === undefined ? id : c.length === 1 ? c[0]! : -2;
    }
    if (PLAIN.test(term)) return -1;
    const t = this.tokenise([term])[0]!;
    if (t.length !== 1) return -2;
    const u = this.ids.get(t[0]!);
    return u === undefined ? -1 : u;
  }

  /** Rows holding the token (FTS5's document frequency of `"term"`). */
  docFreq(token: number): number {
    return token < 0 ? 0 : this.df[token]!;
  }

  /** FTS5's document frequency of `"term"`; undefined when FTS5 reads it as a phrase. */
  dfOf(term: string): number | undefined {
    const t = this.queryToken(term);
    return t === -2 ? undefined : this.docFreq(t);
  }

  /** A token's postings: slots ascending, weighted frequencies. */
  private postings(t: number): [Int32Array, Int32Array] {
    const a = t < this.baseVocab ? this.baseOff[t]! : 0;
    const b = t < this.baseVocab ? this.baseOff[t + 1]! : 0;
    const tl = this.tails.get(t);
    if (!tl) return [this.baseSlot.subarray(a, b), this.baseWf.subarray(a, b)];
    const s = new Int32Array(b - a + tl.slot.n);
    const w = new Int32Array(b - a + tl.wf.n);
    s.set(this.baseSlot.subarray(a, b));
    s.set(tl.slot.a.subarray(0, tl.slot.n), b - a);
    w.set(this.baseWf.subarray(a, b));
    w.set(tl.wf.a.subarray(0, tl.wf.n), b - a);
    return [s, w];
  }

  /**
   * FTS5's idf of a phrase matching `hits` of `rows` rows: log((N − n + 0.5)/(n + 0.5)), at least
   * 1e-6, with SQLite's log() (V8's Math.log may differ in the last bit).
   */
  ftsIdf(rows: number, hits: number): number {
    // Cached by hits for the current row count (it changes with every insert or delete).
    if (rows !== this.idfRows || this.idfs.size >= 100_000) {
      this.idfs.clear();
      this.idfRows = rows;
    }
    let idf = this.idfs.get(hits);
    if (idf === undefined) {
      const v = this.tok!.ln((rows - hits + 0.5) / (hits + 0.5));
      idf = v === null || v <= 0 ? 1e-6 : v;
      this.idfs.set(hits, idf);
    }
    return idf;
  }
  /** ftsIdf's answers by hits, for `idfRows` rows */
  private readonly idfs = new Map<number, number>();
  private idfRows = -1;

  /**
   * The `k` best rows for the phrases (one token each, in the query's order, with their FTS5
   * idf) by bm25, ties to the lower rowid; only rows `accept` admits. The same rows, order and
   * scores as FTS5's `ORDER BY bm25(…) LIMIT k` over `accept`ed rows.
   *
   * Term at a time, highest bound first, into one accumulator per row. Once the k-th best
   * accepted partial sum beats what the remaining terms can add, no row they alone hold can
   * enter: they only update the rows still in reach (found by galloping, not by a scan), and
   * rows that fall out of reach are dropped. The survivors are scored again exactly, adding
   * the terms in the query's order as bm25() does. Bounds carry a 1e-9 margin (far above
   * rounding), so a row tied with the k-th is never dropped.
   */
  top(phrases: Int32Array, idf: Float64Array, avgdl: number, k: number, accept: (rowid: number) => boolean): TermHit[] {
    const m = phrases.length;
    if (m === 0 || k <= 0) return [];
    const lists = Array.from(phrases, (t) => (t >= 0 ? this.postings(t) : EMPTY_LIST));
    const ub = new Float64Array(m);
    for (let i = 0; i < m; i++) {
      const t = phrases[i]!;
      if (lists[i]![0].length === 0) continue;
      const f = this.maxWf[t]!;
      ub[i] = idf[i]! * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * this.minLen[t]!) / avgdl))) * SLACK;
    }
    const ord = Array.from({ length: m }, (_, i) => i).sort((a, b) => ub[b]! - ub[a]!);
    // rest[j]: the most the terms after ord[j] can add to a row.
    const rest = new Float64Array(m);
    for (let j = m - 2; j >= 0; j--) rest[j] = (rest[j + 1]! + ub[ord[j + 1]!]!) * SLACK;
    if (this.acc64.length < this.n) {
      this.acc64 = new Float64Array(this.cap);
      this.admit = new Uint8Array(this.cap);
    }
    const acc = this.acc64;
    const admit = this.admit; // per slot: 0 not asked yet, 1 accepted, 2 refused
    const { alive, dlen, rowid } = this;
    // Kept while the average length stays (it changes with the rows).
    const norms = this.norms?.avgdl === avgdl ? this.norms : (this.norms = new NormTable(avgdl));
    const anyDead = this.dead > 0;
    let touched: Int32Array = this.touchedBuf;
    let nt = 0;
    const accepted = (d: number): boolean => {
      let a = admit[d]!;
      if (a === 0) admit[d] = a = accept(rowid[d]!) ? 1 : 2;
      return a === 1;
    };
    // The k-th best accepted value of acc over slots[0..count) (−Infinity when fewer).
    const kth = (slots: Int32Array, count: number): number => {
      const best = new TopK(k);
      for (let x = 0; x < count; x++) {
        const d = slots[x]!;
        const v = acc[d]!;
        if (v > best.floor && accepted(d)) best.push(d, v);
      }
      return best.floor;
    };
    try {
      let theta = -Infinity;
      let done = 0;
      let j = 0;
      // touched is one ascending run of new slots per term read in full: runs[r] is where run r starts.
      const runs: number[] = [];
      for (; j < m; j++) {
        const i = ord[j]!;
        const [s, w] = lists[i]!;
        const id = idf[i]!;
        runs.push(nt);
        if (nt + s.length > touched.length) touched = grown(touched, nt + s.length);
        const tab = norms.t;
        for (let p = 0; p < s.length; p++) {
          const d = s[p]!;
          if (anyDead && !alive[d]) continue;
          const f = w[p]!;
          const len = dlen[d]!;
          let norm = len < NORM_TAB ? tab[len]! : -1;
          if (norm < 0) norm = norms.of(len);
          const c = id * ((f * (K1 + 1)) / (f + norm));
          if (acc[d] === 0) touched[nt++] = d;
          acc[d] += c;
        }
        if (j === m - 1) break;
        done += ub[i]!;
        // θ ≤ the best partial sum ≤ done, and the k-th is seldom above half of it: no use
        // looking for θ before `rest` falls below that (a guess: it only saves time).
        if (rest[j]! >= done * 0.5 || nt < k) continue;
        theta = kth(touched, nt);
        if (rest[j]! < theta * LOW) break; // no row outside `touched` can reach the k best
      }
      let cand: Int32Array = touched.subarray(0, nt);
      let nc = nt;
      if (j < m - 1) {
        if (this.candBuf.length < nt) this.candBuf = new Int32Array(nt);
        cand = this.candBuf;
        // Rows still in reach, in slot order for the galloping look-ups: each run filtered in
        // place, then the runs merged. A row not yet asked about stays (asking costs more than
        // the look-ups it saves when most rows are accepted); the final pass asks it.
        const r0 = rest[j]!;
        nc = 0;
        runs.push(nt);
        const ends: number[] = [];
        for (let r = 0; r + 1 < runs.length; r++) {
          for (let x = runs[r]!; x < runs[r + 1]!; x++) {
            const d = touched[x]!;
            if (acc[d]! + r0 >= theta * LOW && admit[d] !== 2) cand[nc++] = d;
          }
          ends.push(nc);
        }
        cand = mergeRuns(cand, ends, this.mergeBuf.length < nc ? (this.mergeBuf = new Int32Array(nc)) : this.mergeBuf);
        for (j++; j < m; j++) {
          const i = ord[j]!;
          const [s, w] = lists[i]!;
          const id = idf[i]!;
          let p = 0;
          let keep = 0;
          for (let x = 0; x < nc; x++) {
            const d = cand[x]!;
            p = seek(s, p, d);
            if (p < s.length && s[p] === d) {
              const f = w[p]!;
              acc[d] += id * ((f * (K1 + 1)) / (f + norms.of(dlen[d]!)));
            }
            if (acc[d]! + rest[j]! >= theta * LOW) cand[keep++] = d;
          }
          nc = keep;
          if (j < m - 1) theta = Math.max(theta, kth(cand, nc));
        }
      }
      // Each row's sum is bm25()'s own when the terms were added in the query's order, or when
      // there are at most two (a + b = b + a exactly; a term a row lacks adds 0): the k best are
      // read off the sums.
      if (m <= 2 || ord.every((x, i) => x === i)) {
        const heap = new HitHeap(k);
        for (let x = 0; x < nc; x++) {
          const d = cand[x]!;
          const v = acc[d]!;
          const r = rowid[d]!;
          if (heap.admits(v, r) && accepted(d)) heap.push(v, r);
        }
        return heap.sorted();
      }
      // Else the rows that may be among the k best: within the margin of the k-th best accepted
      // sum (found in the same pass: a row kept early and passed later is dropped below).
      const best = new TopK(k);
      const near: number[] = [];
      for (let x = 0; x < nc; x++) {
        const d = cand[x]!;
        const v = acc[d]!;
        if (v < best.floor * LOW || !accepted(d)) continue;
        if (v > best.floor) best.push(d, v);
        near.push(d);
      }
      theta = best.floor;
      // Their exact scores: bm25()'s own order of addition. In slot order, each list is searched
      // onwards from where the row before was found.
      const heap = new HitHeap(k);
      const at = new Int32Array(m);
      near.sort((a, b) => a - b);
      for (const d of near) {
        if (acc[d]! < theta * LOW) continue;
        const norm = norms.of(dlen[d]!);
        let score = 0;
        for (let i = 0; i < m; i++) {
          const [s, w] = lists[i]!;
          const p = (at[i] = seek(s, at[i]!, d));
          const f = p < s.length && s[p] === d ? w[p]! : 0;
          score += idf[i]! * ((f * (K1 + 1)) / (f + norm));
        }
        const r = rowid[d]!;
        if (heap.admits(score, r)) heap.push(score, r);
      }
      return heap.sorted();
    } finally {
      for (let x = 0; x < nt; x++) {
        acc[touched[x]!] = 0;
        admit[touched[x]!] = 0;
      }
      this.touchedBuf = touched;
    }
  }
  private touchedBuf: Int32Array = new Int32Array(1024);
  private norms?: NormTable;
  private mergeBuf: Int32Array = new Int32Array(1024);
  private candBuf: Int32Array = new Int32Array(1024);
  private acc64 = new Float64Array(0);
  private admit = new Uint8Array(0);

  /**
   * Every row holding a phrase, in rowid order, with its bm25 (positive): FTS5's
   * `SELECT rowid, bm25(…) … MATCH` (cost: the phrases' postings).
   */
  all(phrases: Int32Array, idf: Float64Array, avgdl: number): { rowids: Float64Array; scores: Float64Array } {
    const m = phrases.length;
    const lists = Array.from(phrases, (t) => (t >= 0 ? this.postings(t) : EMPTY_LIST));
    // Per matching slot, each phrase's frequency (slots are dense and few: at most Σ df).
    const freq = new Map<number, Float64Array>();
    for (let i = 0; i < m; i++) {
      const [s, w] = lists[i]!;
      for (let p = 0; p < s.length; p++) {
        const d = s[p]!;
        if (!this.alive[d]) continue;
        let f = freq.get(d);
        if (!f) freq.set(d, (f = new Float64Array(m)));
        f[i] = w[p]!;
      }
    }
    const slots = [...freq.keys()].sort((a, b) => this.rowid[a]! - this.rowid[b]!);
    const rowids = new Float64Array(slots.length);
    const scores = new Float64Array(slots.length);
    slots.forEach((d, j) => {
      const f = freq.get(d)!;
      const norm = K1 * (1 - B + (B * this.dlen[d]!) / avgdl);
      let score = 0;
      for (let i = 0; i < m; i++) score += idf[i]! * ((f[i]! * (K1 + 1)) / (f[i]! + norm));
      rowids[j] = this.rowid[d]!;
      scores[j] = score;
    });
    return { rowids, scores };
  }

  /**
   * fulltext.ts `scoreRows(q, rowTerms(rowids))` without building the rows' term arrays: the same
   * sums in the same order over the forward rows' term ids.
   */
  scoreRows(q: TextQuery, rowids: number[]): Map<number, number> {
    const out = new Map<number, number>();
    if (!q.match || q.upper <= 0) return out;
    if (this.posOf.length < this.strs.length) this.posOf = new Int32Array(this.df.length).fill(-1);
    const posOf = this.posOf;
    const f = new Float64Array(q.terms.length);
    const coef = q.terms.map((t) => (q.weights?.get(t) ?? 1) * (q.idf.get(t) ?? 0) * (K1 + 1));
    const set: number[] = [];
    q.terms.forEach((t, k) => {
      const id = this.ids.get(t);
      if (id !== undefined) {
        posOf[id] = k;
        set.push(id);
      }
    });
    try {
      for (const r of rowids) {
        const s = this.slotOf.get(r);
        if (s === undefined) continue;
        f.fill(0);
        let p = this.start[s]!;
        const len = this.colEnd[s * NCOLS + NCOLS - 1]! - p;
        for (let c = 0; c < NCOLS; c++) {
          const end = this.colEnd[s * NCOLS + c]!;
          const w = W[c]!;
          for (; p < end; p++) {
            const k = posOf[this.pool[p]!]!;
            if (k >= 0) f[k]! += w;
          }
        }
        const ts = termSimilarity(f, coef, len, q.avgdl, q.upper);
        if (ts > 0) out.set(r, ts);
      }
    } finally {
      for (const id of set) posOf[id] = -1;
    }
    return out;
  }
  private posOf = new Int32Array(0);

  /**
   * fulltext.ts expandQuery's relevance model over forward rows: for feedback rows (held here)
   * with their first-pass scores, the `terms` best [term, P(t|R)] — the same sums in the same
   * order as expandQuery over `rowTerms`, without building the rows' term arrays. null when the
   * feedback has no positive score (expandQuery then keeps the question).
   */
  relevanceModel(feedback: Array<[rowid: number, score: number]>, terms: number): Array<[string, number]> | null {
    const held = feedback.filter(([r]) => this.slotOf.get(r) !== undefined);
    if (held.length === 0) return null;
    const mass = held.reduce((a, [, s]) => a + Math.max(0, s), 0);
    if (mass <= 0) return null;
    if (this.model.length < this.strs.length) this.model = new Float64Array(this.df.length);
    const acc = this.model;
    const seen: number[] = [];
    for (const [r, score] of held) {
      const s = this.slotOf.get(r)!;
      const from = this.start[s]!;
      const to = this.colEnd[s * NCOLS + NCOLS - 1]!;
      const len = to - from;
      if (!len || score <= 0) continue;
      const wgt = score / mass / len;
      for (let p = from; p < to; p++) {
        const t = this.pool[p]!;
        if (acc[t] === 0) seen.push(t);
        acc[t] += wgt;
      }
    }
    const model: Array<[string, number]> = seen.map((t) => [this.strs[t]!, acc[t]!]);
    for (const t of seen) acc[t] = 0;
    return bestTerms(model, terms);
  }
  private model = new Float64Array(0);

  /** The analysed columns of the given rows, as `rowTerms` reads them (absent rowids are left out). */
  rowTerms(rowids: number[]): Map<number, string[][]> {
    const out = new Map<number, string[][]>();
    for (const r of rowids) {
      const s = this.slotOf.get(r);
      if (s === undefined) continue;
      const cols: string[][] = [];
      let p = this.start[s]!;
      for (let c = 0; c < NCOLS; c++) {
        const end = this.colEnd[s * NCOLS + c]!;
        const col: string[] = new Array(end - p);
        for (let j = 0; p < end; p++, j++) col[j] = this.strs[this.pool[p]!]!;
        cols.push(col);
      }
      out.set(r, cols);
    }
    return out;
  }

  /** FTS5's length of a row held here (tokens over all columns), or undefined. */
  rowLength(rowid: number): number | undefined {
    const s = this.slotOf.get(rowid);
    return s === undefined ? undefined : this.dlen[s];
  }

  /** A row's analysed content column (its index text's, when it has one), or undefined. */
  contentTerms(rowid: number): string[] | undefined {
    const s = this.slotOf.get(rowid);
    if (s === undefined) return undefined;
    const from = this.colEnd[s * NCOLS]!;
    const to = this.colEnd[s * NCOLS + 1]!;
    const out: string[] = new Array(to - from);
    for (let p = from, j = 0; p < to; p++, j++) out[j] = this.strs[this.pool[p]!]!;
    return out;
  }

  /** Memory held by the typed arrays, in bytes (bench/speed reports it). */
  get bytes(): number {
    return this.pool.byteLength + this.baseSlot.byteLength + this.baseWf.byteLength + this.baseOff.byteLength +
      this.cap * (8 + 1 + 4 + 4 + 8 + 8 * NCOLS) + this.df.byteLength * 3 + this.tailCount * 8 + this.docBytes + this.pageBytes;
  }
}

/** Fields of PageChunk (17): V8 holds each in 8 bytes, after a header of 24. */
const PAGE_OBJECT = 24 + 17 * 8;

/** A page row's bytes, estimated: its own strings as UTF-16 (V8 may hold them in one byte a character) and its object. */
function pageRowBytes(p: PageChunk): number {
  const chars = p.id.length + p.content.length + p.important_keywords.length + p.questions.length + p.tag_kwd.length + p.positions.length +
    (p.image_id?.length ?? 0) + (p.doc_type?.length ?? 0) + (p.create_time?.length ?? 0) + (p.index_text?.length ?? 0) + (p.lang?.length ?? 0);
  return PAGE_OBJECT + 2 * chars;
}

function grown(a: Int32Array, min = 0): Int32Array {
  const b = new Int32Array(Math.max(min, a.length * 2));
  b.set(a);
  return b;
}

const NORM_TAB = 4096;

/** bm25()'s length normalisation k1·(1 − b + b·D/avgdl) per row length, computed once per length. */
class NormTable {
  readonly t = new Float64Array(NORM_TAB).fill(-1);
  constructor(readonly avgdl: number) {}
  of(len: number): number {
    if (len >= NORM_TAB) return K1 * (1 - B + (B * len) / this.avgdl);
    let v = this.t[len]!;
    if (v < 0) this.t[len] = v = K1 * (1 - B + (B * len) / this.avgdl);
    return v;
  }
}

/**
 * The ascending runs a[0..ends[0]), a[ends[0]..ends[1]), … merged into one ascending array
 * (a itself or `tmp`, which must hold ends' last). Runs are few: one per term read in full.
 */
function mergeRuns(a: Int32Array, ends: number[], tmp: Int32Array): Int32Array {
  let src = a;
  let dst = tmp;
  let bounds = [0, ...ends];
  while (bounds.length > 2) {
    const next = [0];
    for (let r = 0; r + 1 < bounds.length; r += 2) {
      const lo = bounds[r]!, mid = bounds[r + 1]!;
      const hi = r + 2 < bounds.length ? bounds[r + 2]! : mid;
      let x = lo, y = mid, o = lo;
      while (x < mid && y < hi) dst[o++] = src[x]! <= src[y]! ? src[x++]! : src[y++]!;
      while (x < mid) dst[o++] = src[x++]!;
      while (y < hi) dst[o++] = src[y++]!;
      next.push(hi);
    }
    bounds = next;
    [src, dst] = [dst, src];
  }
  return src.subarray(0, bounds[bounds.length - 1]);
}

/** First position ≥ `from` in ascending `s` holding a value ≥ `d` (galloping, then binary search). */
function seek(s: Int32Array, from: number, d: number): number {
  const n = s.length;
  if (from >= n || s[from]! >= d) return from;
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < n && s[hi]! < d) {
    lo = hi;
    step *= 2;
    hi = from + step;
  }
  if (hi > n) hi = n;
  // s[lo] < d; s[hi] ≥ d or hi = n
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (s[mid]! < d) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The k best (score, rowid) pairs: higher score first, then lower rowid. A min-heap on that order. */
class HitHeap {
  private readonly keys: Float64Array;
  private readonly rids: Float64Array;
  private len = 0;
  constructor(private readonly k: number) {
    this.keys = new Float64Array(k);
    this.rids = new Float64Array(k);
  }
  /** (a, ra) ranks below (b, rb) */
  private static below(a: number, ra: number, b: number, rb: number): boolean {
    return a < b || (a === b && ra > rb);
  }
  admits(key: number, rid: number): boolean {
    return this.len < this.k || HitHeap.below(this.keys[0]!, this.rids[0]!, key, rid);
  }
  push(key: number, rid: number): void {
    const { keys, rids } = this;
    let i: number;
    if (this.len < this.k) {
      i = this.len++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!HitHeap.below(key, rid, keys[p]!, rids[p]!)) break;
        keys[i] = keys[p]!;
        rids[i] = rids[p]!;
        i = p;
      }
    } else {
      i = 0;
      const n = this.len;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && HitHeap.below(keys[r]!, rids[r]!, keys[l]!, rids[l]!) ? r : l;
        if (!HitHeap.below(keys[c]!, rids[c]!, key, rid)) break;
        keys[i] = keys[c]!;
        rids[i] = rids[c]!;
        i = c;
      }
    }
    keys[i] = key;
    rids[i] = rid;
  }
  sorted(): TermHit[] {
    const out: TermHit[] = [];
    for (let i = 0; i < this.len; i++) out.push({ rowid: this.rids[i]!, score: this.keys[i]! });
    return out.sort((a, b) => b.score - a.score || a.rowid - b.rowid);
  }
}

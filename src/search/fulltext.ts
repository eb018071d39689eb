/**
 * The full-text side of retrieval, one design for every FTS5 table shaped like `chunk_fts`
 * (title, content, keywords, questions; the same tokenizer and analyzer): chunks (`chunk_fts`,
 * the default) and memory messages (`memory_fts`). A TextQuery remembers its table, so the
 * functions below read the table the query was made for.
 *
 * FTS5 `bm25()` over the analysed columns, weighted as
 * RAGFlow's field boosts (title_tks^10, important_kwd^30, question_tks^20 against
 * content_ltks^2, i.e. title 5, content 1, keywords 15, questions 10), and normalised per query:
 *
 *   term_similarity = bm25 / Σ_{t ∈ q} idf(t)·(k1 + 1)
 *
 * FTS5 scores each term at most idf·(k1+1) whatever its frequency, so the ratio is in [0, 1]
 * and depends on the query and the collection only, never on which other chunks were found.
 * idf is FTS5's own: ln((N − n + 0.5)/(n + 0.5)), at least 1e-6, over the whole table.
 */
import { storedAnalysis, type FtsTable, type FullTextEngine, type SearchReader, type TermRow } from '../store/index.js';
import { analyze, ftsTerms, type Analysis, type FtsTerms } from '../text/index.js';
import { jsonList } from '../util/index.js';
import { TopK } from './vector-index.js';
import { K1, B, COLUMN_WEIGHTS, termSimilarity } from './bm25.js';
import type { TermSource } from './term-index.js';

export { K1, B, COLUMN_WEIGHTS };
export type { FtsTable };

/** The store's full-text engine (FTS5 on SQLite), which every function here reads; a clear error when the store has none. */
export function fts(reader: SearchReader): FullTextEngine {
  const f = reader.fullText;
  if (!f) throw new Error('This store has no full-text engine: full-text search needs the term index (src/search/term-index.ts)');
  return f;
}

function checkTable(table: FtsTable | undefined): FtsTable {
  const t = table ?? 'chunk_fts';
  if (t !== 'chunk_fts' && t !== 'memory_fts') throw new RangeError(`Unknown full-text table '${String(table)}'`);
  return t;
}

export interface TextQuery {
  /** The FTS5 table the query was made for (its statistics, and the table every function reads). */
  table: FtsTable;
  terms: string[];
  /** FTS5 MATCH expression: the quoted terms joined by OR; '' when there are none. */
  match: string;
  /** Σ idf·(k1+1) over the terms that occur; 0 when none does. */
  upper: number;
  /** Σ df over the terms: an upper bound of the number of matching rows. */
  dfSum: number;
  /** idf of each term that occurs */
  idf: Map<string, number>;
  /** FTS5's average row length in tokens (all columns) */
  avgdl: number;
  /** Per-term query weights (expanded queries); absent = 1 each. */
  weights?: Map<string, number>;
  /**
   * The in-memory copy of the table (chunk_fts only) that answers for FTS5, with the token of
   * each present term in order (`phrases`); absent when FTS5 must answer (a term it reads as a
   * phrase of several tokens).
   */
  index?: TermSource;
  phrases?: Int32Array;
  /** FTS5's row count when the query was made (its idf's N). */
  rows?: number;
}

/**
 * Below this many (estimated) matches, one FTS5 pass reads every match's score; above it, a
 * top-n query plus cross-scores computed here (FTS5 costs ~1 µs per returned row, and per-rowid
 * look-ups ~150 µs each at 1M rows).
 */
export const ALL_MATCHES_BELOW = 3_000;


/**
 * FTS5's own statistics: the row count and the total tokens over all columns (its averages
 * record), cached per reader and table until the rows may have changed (FullTextEngine.statsKey).
 */
interface Stats { table: FtsTable; key: string; n: number; tokens: number; df: Map<string, number> }
const statsCache = new WeakMap<SearchReader, Map<FtsTable, Stats>>();
function ftsStats(reader: SearchReader, table: FtsTable): Stats {
  const f = fts(reader);
  const key = f.statsKey(table);
  let byTable = statsCache.get(reader);
  if (!byTable) statsCache.set(reader, (byTable = new Map()));
  const hit = byTable.get(table);
  if (hit && hit.key === key) return hit;
  const v = f.totals(table);
  const out = { table, key, n: v[0] ?? 0, tokens: v.slice(1).reduce((a, b) => a + b, 0), df: new Map<string, number>() };
  byTable.set(table, out);
  return out;
}

/** FTS5's document frequency of `"term"` in chunk_fts (store-wide; cached until the rows change). */
export function ftsDocFreq(reader: SearchReader, term: string): number {
  return termDf(reader, ftsStats(reader, 'chunk_fts'), term);
}

/** Cached document frequencies per reader and table, dropped with the statistics when the rows change. */
const DF_CACHE_MAX = 100_000;

/**
 * The number of rows containing `term`; with `cap`, Infinity once more than `cap` rows do.
 * FTS5 stores no document frequencies: counting walks the term's doclist (~30 ns a row), so
 * results are cached until the rows change, and `cap` bounds the walk for optional terms.
 */
function termDf(reader: SearchReader, st: Stats, term: string, cap?: number): number {
  const hit = st.df.get(term);
  // A negative entry −c records "more than c rows" from a capped count.
  if (hit !== undefined && hit >= 0) return cap !== undefined && hit > cap ? Infinity : hit;
  if (hit !== undefined && cap !== undefined && cap <= -hit) return Infinity;
  const q = `"${term.replace(/"/g, '""')}"`;
  const d = cap === undefined ? fts(reader).count(st.table, q) : fts(reader).count(st.table, q, cap + 1);
  if (st.df.size >= DF_CACHE_MAX) st.df.clear();
  if (cap !== undefined && d > cap) {
    st.df.set(term, -cap);
    return Infinity;
  }
  st.df.set(term, d);
  return d;
}

/**
 * The analysed question with its terms' statistics over `opts.table` (default `chunk_fts`); every
 * function below that takes the query reads that table.
 */
export function textQuery(reader: SearchReader, question: string, opts: { table?: FtsTable; index?: TermSource; lang?: Analysis } = {}): TextQuery {
  return termsQuery(reader, [...new Set(analyze(question, opts.lang))], opts);
}

/** textQuery of terms already analysed (distinct). */
function termsQuery(reader: SearchReader, terms: string[], opts: { table?: FtsTable; index?: TermSource } = {}): TextQuery {
  const table = checkTable(opts.table);
  const idf = new Map<string, number>();
  if (!terms.length) return { table, terms, match: '', upper: 0, dfSum: 0, idf, avgdl: 1 };
  const st = ftsStats(reader, table);
  const { n, tokens } = st;
  const index = table === 'chunk_fts' ? opts.index : undefined;
  let upper = 0;
  let dfSum = 0;
  const present: string[] = [];
  const phrases: number[] = [];
  let indexed = !!index;
  for (const t of terms) {
    // The index's document frequency is FTS5's (it holds the same rows), without walking a doclist.
    const tok = index ? index.queryToken(t) : -2;
    if (tok === -2) indexed = false;
    const d = tok === -2 ? termDf(reader, st, t) : index!.docFreq(tok);
    if (d === 0) continue;
    present.push(t);
    phrases.push(tok);
    dfSum += d;
    const f = Math.max(1e-6, Math.log((n - d + 0.5) / (d + 0.5)));
    idf.set(t, f);
    upper += f * (K1 + 1);
  }
  const match = present.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
  const q: TextQuery = { table, terms, match, upper, dfSum, idf, avgdl: n > 0 ? tokens / n : 1, rows: n };
  if (index) q.index = index;
  if (indexed) q.phrases = Int32Array.from(phrases);
  return q;
}

/**
 * Exact term_similarity of the given rows, computed here the way FTS5's bm25() does (weighted
 * term frequency over the columns, row length = all columns' tokens, FTS5's idf and average
 * length) from the stored text re-analysed: cheaper than per-rowid FTS5 look-ups on large
 * tables. Rows without a matching term are absent.
 */
export function textScoresJs(reader: SearchReader, q: TextQuery, rowids: number[]): Map<number, number> {
  if (!q.match || q.upper <= 0 || rowids.length === 0) return new Map();
  return scoreRows(q, rowTerms(reader, rowids, q.table));
}

/** term_similarity of rows given as their analysed columns (see rowTerms); rows without a matching term are absent. */
export function scoreRows(q: TextQuery, rows: Iterable<[number, string[][]]>): Map<number, number> {
  const out = new Map<number, number>();
  if (!q.match || q.upper <= 0) return out;
  const f = new Float64Array(q.terms.length);
  const pos = new Map(q.terms.map((t, i) => [t, i]));
  const coef = q.terms.map((t) => (q.weights?.get(t) ?? 1) * (q.idf.get(t) ?? 0) * (K1 + 1));
  for (const [rid, cols] of rows) {
    f.fill(0);
    let len = 0;
    for (let c = 0; c < cols.length; c++) {
      const terms = cols[c]!;
      len += terms.length;
      const w = COLUMN_WEIGHTS[c]!;
      for (const t of terms) {
        const k = pos.get(t);
        if (k !== undefined) f[k]! += w;
      }
    }
    const ts = termSimilarity(f, coef, len, q.avgdl, q.upper);
    if (ts > 0) out.set(rid, ts);
  }
  return out;
}

/**
 * The analysed full-text columns (title, content, keywords, questions) of the given rows of
 * `table`'s row table (chunks by default), from their stored text through the same ftsTerms that
 * wrote their FTS rows.
 */
export function rowTerms(reader: SearchReader, rowids: number[], table: FtsTable = 'chunk_fts'): Map<number, string[][]> {
  const out = new Map<number, string[][]>();
  for (const [rid, content, indexText, kw, qs, title, lang] of fts(reader).texts(checkTable(table), rowids)) {
    out.set(rid, ftsTerms(title, indexText ?? content, jsonList(kw), jsonList(qs), storedAnalysis(lang)).map(splitTerms));
  }
  return out;
}

const splitTerms = (s: string): string[] => (s ? s.split(' ') : []);

/** A chunk's full-text row as the store wrote it (its stored terms, or its text analysed as the store analysed it). */
export const termRowColumns = ([, content, indexText, kw, qs, title, , lang, , stored]: TermRow): FtsTerms =>
  stored ?? ftsTerms(title, indexText ?? content, jsonList(kw), jsonList(qs), storedAnalysis(lang));

/**
 * rowTerms of chunks, from the store's rows (SearchReader.termRows) rather than the full-text
 * engine's: for an engine that holds no chunk texts (FullTextEngine.chunkTexts false).
 */
export async function storedRowTerms(reader: SearchReader, rowids: number[]): Promise<Map<number, string[][]>> {
  const out = new Map<number, string[][]>();
  if (!rowids.length) return out;
  const rows = await reader.termRows(rowids);
  for (const [rid, r] of rows) out.set(rid, termRowColumns(r).map(splitTerms));
  return out;
}

/**
 * Pseudo-relevance feedback on the text side (RM3, Lavrenko & Croft's relevance model mixed
 * with the question as in Anserini): the question's terms weigh `origWeight`/|q| each; the
 * `terms` most probable terms of the feedback rows' model P(t|R) = Σ_d p(d)·tf(t,d)/|d|, p(d)
 * proportional to the row's first-pass score, share 1 − origWeight. Every column counts once
 * (no field boosts: the model describes the text). The result carries per-term weights, so it
 * is scored by scoreRows (FTS5's bm25() has none).
 */
/**
 * Expansion terms found in more rows than this are left out: their document frequency would
 * cost a long doclist walk (≈ 0.3 ms per 10,000 rows) and their idf is low.
 */
export const EXPANSION_DF_CAP = 10_000;

export function expandQuery(reader: SearchReader, q: TextQuery, feedback: Array<[cols: string[][], score: number]>, opts: { terms: number; origWeight: number; dfCap?: number }): TextQuery {
  if (!q.match || feedback.length === 0) return q;
  const mass = feedback.reduce((a, [, s]) => a + Math.max(0, s), 0);
  if (mass <= 0) return q;
  const model = new Map<string, number>();
  for (const [cols, score] of feedback) {
    let len = 0;
    for (const col of cols) len += col.length;
    if (!len || score <= 0) continue;
    const wgt = score / mass / len;
    for (const col of cols) for (const t of col) model.set(t, (model.get(t) ?? 0) + wgt);
  }
  return expandWith(reader, q, bestTerms(model, opts.terms), opts);
}

/** The `terms` most probable terms of a relevance model, in the model's order of first sight; ties by term. */
export function bestTerms(model: Iterable<[string, number]>, terms: number): Array<[string, number]> {
  // Ties by term, so the expansion does not depend on Map order.
  const best: Array<[string, number]> = [];
  for (const e of model) {
    if (best.length === terms && e[1] <= best[best.length - 1]![1]) continue;
    let i = best.length;
    while (i > 0 && (best[i - 1]![1] < e[1] || (best[i - 1]![1] === e[1] && best[i - 1]![0] > e[0]))) i--;
    best.splice(i, 0, e);
    if (best.length > terms) best.pop();
  }
  return best;
}

/**
 * expandQuery's second half: the question's terms with the relevance model's `best` terms, weighted
 * and given their idf (`best` from bestTerms, or from TermIndex.relevanceModel).
 */
export function expandWith(reader: SearchReader, q: TextQuery, best: Array<[string, number]>, opts: { terms: number; origWeight: number; dfCap?: number }): TextQuery {
  const z = best.reduce((a, [, p]) => a + p, 0);
  const orig = [...q.idf.keys()];
  const weights = new Map<string, number>();
  // The question's share is split by its own weights (a bridged query's: bridgeQuery), else evenly.
  const qw = q.weights;
  const qTotal = qw ? orig.reduce((a, t) => a + (qw.get(t) ?? 1), 0) : orig.length;
  for (const t of orig) weights.set(t, qw ? (opts.origWeight * (qw.get(t) ?? 1)) / qTotal : opts.origWeight / orig.length);
  for (const [t, p] of best) weights.set(t, (weights.get(t) ?? 0) + (1 - opts.origWeight) * (p / z));
  const st = ftsStats(reader, q.table);
  const { n } = st;
  const idf = new Map(q.idf);
  const cap = opts.dfCap ?? EXPANSION_DF_CAP;
  for (const t of weights.keys()) {
    if (idf.has(t)) continue;
    const known = q.index?.dfOf(t);
    const d = known === undefined ? termDf(reader, st, t, cap) : known > cap ? Infinity : known;
    if (d === 0 || d === Infinity) weights.delete(t);
    else idf.set(t, Math.max(1e-6, Math.log((n - d + 0.5) / (d + 0.5))));
  }
  let upper = 0;
  for (const [t, wt] of weights) upper += wt * idf.get(t)! * (K1 + 1);
  const terms = [...weights.keys()];
  // Scored by scoreRows only (bm25() has no term weights): no FTS5 phrases.
  return { ...q, terms, idf, weights, upper, phrases: undefined, match: terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ') };
}

/**
 * term_similarity of every matching row, as parallel arrays (rowids, scores). One FTS5 pass:
 * cheaper than a top-n query plus per-rowid look-ups when the terms are not too common
 * (see ALL_MATCHES_BELOW).
 */
export function textAll(reader: SearchReader, q: TextQuery): { rowids: Float64Array; scores: Float64Array } {
  if (!q.match || q.upper <= 0) return { rowids: new Float64Array(0), scores: new Float64Array(0) };
  const rows = fts(reader).all(q.table, q.match);
  const rowids = new Float64Array(rows.length);
  const scores = new Float64Array(rows.length);
  const inv = -1 / q.upper;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    rowids[i] = r[0];
    scores[i] = Math.min(1, r[1] * inv);
  }
  return { rowids, scores };
}

/**
 * The `k` best-scoring accepted rows as [rowid, term_similarity], best first. Rows are fetched
 * in growing batches until `k` are accepted or the matches run out (the filter lives in memory).
 */
export function textTop(reader: SearchReader, q: TextQuery, k: number, accept: (rowid: number) => boolean): Array<[number, number]> {
  if (!q.match || q.upper <= 0 || k <= 0) return [];
  const out: Array<[number, number]> = [];
  const f = fts(reader);
  let offset = 0;
  let batch = Math.max(k, 16);
  for (;;) {
    const rows = f.top(q.table, q.match, batch, offset);
    for (const [rid, s] of rows) {
      if (!accept(rid)) continue;
      out.push([rid, Math.min(1, -s / q.upper)]);
      if (out.length >= k) return out;
    }
    if (rows.length < batch) return out;
    offset += batch;
    batch *= 4;
  }
}

/** Exact term_similarity of the given rows (absent from the result: no term matches). */
export function textScores(reader: SearchReader, q: TextQuery, rowids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  if (!q.match || q.upper <= 0 || rowids.length === 0) return out;
  for (const [rid, s] of fts(reader).scores(q.table, q.match, rowids)) out.set(rid, Math.min(1, -s / q.upper));
  return out;
}

/** The text side of a hybrid search (see textSide). */
export interface TextSide {
  /** The `k` best accepted rows as [rowid, term_similarity], best first. */
  top: Array<[number, number]>;
  /** Exact term_similarity of any rows (absent: no term matches). */
  scoresOf(rowids: number[]): Map<number, number>;
  /** scoresOf reads the rows' texts (textScoresJs): `scoreRows` over storedRowTerms gives the same. */
  readsTexts?: boolean;
}

/**
 * The text side of a hybrid search over the query's table: its `k` best accepted rows, and the
 * exact term_similarity of other candidates (the vector side's) on demand. One FTS5 pass over
 * every match when they are few (ALL_MATCHES_BELOW), else FTS5's top rows and the other rows'
 * scores computed in JS (textScoresJs), as the chunk retrieval does.
 *
 * `selective`: `accept` rejects most matches (a small partition of a shared table, a filter).
 * Then one pass over every match is cheaper than textTop, whose every growing batch runs the
 * whole FTS5 query again (bm25() costs ~0.2 µs per match, returning a row ~0.2 µs).
 */
export function textSide(reader: SearchReader, q: TextQuery, k: number, accept: (rowid: number) => boolean, opts: { selective?: boolean } = {}): TextSide {
  const few = opts.selective || q.dfSum <= ALL_MATCHES_BELOW;
  const ix = q.index && q.phrases && !opts.selective ? indexed(reader, q, q.index, q.phrases) : undefined;
  if (!few) {
    if (ix) return { top: ix.top(k, accept), scoresOf: (rids) => ix.index.scoreRows(q, rids) };
    return { top: textTop(reader, q, k, accept), scoresOf: (rids) => textScoresJs(reader, q, rids), readsTexts: true };
  }
  const { rowids, scores } = ix ? ix.all() : textAll(reader, q);
  const best = new TopK(Math.max(1, k));
  if (k > 0) {
    for (let i = 0; i < rowids.length; i++) {
      if (scores[i]! <= best.floor || !accept(rowids[i]!)) continue;
      best.push(i, scores[i]!);
    }
  }
  const top = best.sorted().map(([i, ts]): [number, number] => [rowids[i]!, ts]);
  return {
    top,
    scoresOf: (rids) => {
      const out = new Map<number, number>();
      if (!rids.length) return out;
      const want = new Set(rids);
      for (let i = 0; i < rowids.length; i++) if (want.has(rowids[i]!)) out.set(rowids[i]!, scores[i]!);
      return out;
    },
  };
}

/**
 * The in-memory index standing in for FTS5's two queries, number for number: `all` is textAll
 * (every match in rowid order, bm25 × −1/upper), `top` is textTop (the k best accepted rows by
 * bm25, ties to the lower rowid, divided by upper).
 */
function indexed(reader: SearchReader, q: TextQuery, index: TermSource, phrases: Int32Array) {
  const n = q.rows ?? ftsStats(reader, q.table).n;
  const idf = Float64Array.from(phrases, (t) => index.ftsIdf(n, index.docFreq(t)));
  return {
    index,
    all: (): { rowids: Float64Array; scores: Float64Array } => {
      if (!q.match || q.upper <= 0) return { rowids: new Float64Array(0), scores: new Float64Array(0) };
      const { rowids, scores } = index.all(phrases, idf, q.avgdl);
      const inv = -1 / q.upper;
      for (let i = 0; i < scores.length; i++) scores[i] = Math.min(1, -scores[i]! * inv);
      return { rowids, scores };
    },
    top: (k: number, accept: (rowid: number) => boolean): Array<[number, number]> => {
      if (!q.match || q.upper <= 0 || k <= 0) return [];
      return index.top(phrases, idf, q.avgdl, k, accept).map((h): [number, number] => [h.rowid, Math.min(1, h.score / q.upper)]);
    },
  };
}

/** What bridgeQuery found: the weighted query to score with, and the bridge terms alone (for candidates). */
export interface BridgedQuery {
  /** The question's present terms (weight 1 each) and the bridge terms (weight < 1); scored by scoreRows. */
  query: TextQuery;
  /** The bridge terms alone, unweighted: their best rows join the candidates. */
  only: TextQuery;
  /** absent question term → the present terms standing in for it */
  bridged: Map<string, string[]>;
}

/**
 * Bridges the question's terms that no row holds (document frequency 0: they add nothing to
 * BM25; with `rareDf`, also those at most that many rows hold, which stay in the query) to related
 * terms that rows do hold (RetrievalOptions.bridgeWeight): for each such term, its `terms` most related stems
 * (`related`, weighted in (0, 1]) found in 1 to `dfCap` rows, each weighing `weight` × its
 * relation's weight (the strongest when two absent terms bring it). The question's own terms keep
 * weight 1, and the bound Σ weight·idf·(k1+1) grows with the bridge terms, so term_similarity stays
 * in [0, 1]. null when no absent term bridges. Only document frequencies are read (the term
 * index's, or FTS5's), so every store bridges alike.
 */
export function bridgeQuery(
  reader: SearchReader,
  q: TextQuery,
  related: (stem: string) => Iterable<readonly [string, number]>,
  opts: { weight: number; terms: number; dfCap?: number; rareDf?: number },
): BridgedQuery | null {
  if (opts.weight <= 0 || opts.terms <= 0) return null;
  const st = ftsStats(reader, q.table);
  const rare = opts.rareDf ?? 0;
  const dfOfTerm = (t: string): number => q.index?.dfOf(t) ?? termDf(reader, st, t);
  const absent = q.terms.filter((t) => !q.idf.has(t) || (rare > 0 && dfOfTerm(t) <= rare));
  if (!absent.length) return null;
  const cap = opts.dfCap ?? EXPANSION_DF_CAP;
  const own = new Set(q.terms);
  const weights = new Map<string, number>();
  const bridged = new Map<string, string[]>();
  const df = new Map<string, number>();
  for (const a of absent) {
    // Strongest first, ties by stem (the table's own order may change with a rebuild).
    const cands = [...related(a)].filter(([r]) => !own.has(r)).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
    const took: string[] = [];
    for (const [r, rw] of cands) {
      if (took.length >= opts.terms) break;
      let d = df.get(r);
      if (d === undefined) {
        const known = q.index?.dfOf(r);
        d = known === undefined ? termDf(reader, st, r, cap) : known > cap ? Infinity : known;
        df.set(r, d);
      }
      if (d === 0 || d === Infinity) continue;
      took.push(r);
      weights.set(r, Math.max(weights.get(r) ?? 0, opts.weight * rw));
    }
    if (took.length) bridged.set(a, took);
  }
  if (!weights.size) return null;
  const only = termsQuery(reader, [...weights.keys()], { table: q.table, ...(q.index ? { index: q.index } : {}) });
  const idf = new Map(q.idf);
  const all = new Map<string, number>();
  for (const t of q.idf.keys()) all.set(t, 1);
  for (const [t, wt] of weights) {
    all.set(t, wt);
    idf.set(t, only.idf.get(t)!);
  }
  let upper = 0;
  for (const [t, wt] of all) upper += wt * idf.get(t)! * (K1 + 1);
  const terms = [...all.keys()];
  const query: TextQuery = { ...q, terms, idf, weights: all, upper, phrases: undefined, match: terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ') };
  return { query, only, bridged };
}

/**
 * Hybrid search over one or more datasets, as RAGFlow's POST /retrieval ranks and pages
 * (the wire parameters are checked in src/api/retrieval.ts).
 *
 * similarity = w·vector_similarity + (1−w)·term_similarity, w = vector_similarity_weight, where
 * vector_similarity is the cosine in [0, 1] and term_similarity the BM25 of src/search/fulltext.ts
 * normalised by the query's own bound. Candidates are the union of the full-text side's best n
 * (n = RAGFlow's result window up to the page) and the vector side's best min(top_k, n), every candidate
 * scored exactly on both sides; then pseudo-relevance feedback on both sides (Rocchio for the
 * vector, RM3 for the text). When the caller gives no weight, the vector side is first shrunk
 * towards its mean by how much the text side agrees with it (RetrievalOptions.vectorAgreement).
 * See docs/retrieval.md for every step.
 */
import { storedAnalysis, type PageChunk, type SearchReader } from '../store/index.js';
import { analyzeForIndex, languageSetting, questionLanguage, type Lang } from '../text/index.js';
import { highlight as highlightText } from './highlight.js';
import type { DimIndex } from './vector-index.js';
import { datasetVectors, searchTerms } from './dataset-vectors.js';
import { textQuery, textSide, expandQuery, expandWith, rowTerms, scoreRows, storedRowTerms, bridgeQuery, textScoresJs, type TextQuery } from './fulltext.js';
import { termIndexOptions, termIndexStep } from './term-index.js';
import { searchPoolOf, SearchPoolClosed } from './search-pool.js';
import { filterDocuments, type MetadataFilter } from './metadata.js';
import type { Reranker } from './rerank.js';

/**
 * Each term of a question read as English → its related stems with their weights, strongest first
 * (RetrievalOptions.bridgeWeight; core's questionRelated builds it from the related-word tables).
 */
export type QuestionRelated = Readonly<Record<string, ReadonlyArray<readonly [string, number]>>>;

/** A validated retrieval request (src/api/retrieval.ts checks the wire parameters). */
export interface SearchRequest {
  /**
   * The datasets searched, with their pagerank (0–100); one embedding model. `language`: the
   * dataset's setting, when the caller has its row (else the store is asked for it).
   */
  datasets: Array<{ id: string; pagerank: number; language?: string | null }>;
  /** The question, trimmed and not blank. */
  question: string;
  /** Embeds the question with the datasets' model (called once, unless the scope is empty). */
  embedQuestion: (question: string) => Promise<Float32Array>;
  /** Only chunks of these documents (already checked to belong to the datasets). */
  documentIds?: string[];
  metadata?: MetadataFilter | null;
  page: number;
  pageSize: number;
  threshold: number;
  /** vector_similarity_weight, in [0, 1] (the options' `defaultWeight` when the caller gave none) */
  weight: number;
  /**
   * false when the caller gave no vector_similarity_weight: then `weight` is the options'
   * `defaultWeight` and `vectorAgreement` may apply. Absent: given (RAGFlow's formula).
   */
  weightGiven?: boolean;
  /** top_k, > 0: the vector side's candidates (the text side's are the result window's) */
  topK: number;
  highlight: boolean;
  reranker?: Reranker;
  /** The client's ranking settings (`Engine.retrievalOptions`). */
  options: Readonly<RetrievalOptions>;
  /** The question's related words, when `options.bridgeWeight` bridges (plain data: it crosses to a search thread). */
  related?: QuestionRelated;
}

export interface DocAgg {
  doc_name: string;
  doc_id: string;
  count: number;
}

export interface RetrieveResult {
  total: number;
  chunks: Record<string, unknown>[];
  /** A list over the survivors; `{}` for a blank question, as RAGFlow sends. */
  doc_aggs: DocAgg[] | Record<string, never>;
  /** The question's terms (analysed) that no chunk of the file holds. */
  unknown?: string[];
}

/**
 * Ranking settings of one Client: `new Client({ retrieval: {...} })` / `startServer({ retrieval })`
 * (the Engine keeps them, frozen); RAGFlow has no wire parameter for any of them. Two Clients in
 * one process may differ. docs/retrieval.md describes each step.
 */
export interface RetrievalOptions {
  /** Rocchio pseudo-relevance feedback on the vector side: feedback chunks (0 = off). @default 5 */
  feedbackDocs: number;
  /** Weight of the feedback chunks' mean vector against the question's. @default 1 */
  feedbackWeight: number;
  /** Search the vector side again with the feedback vector (else only re-score). @default false */
  feedbackSearch: boolean;
  /**
   * RM3 pseudo-relevance feedback on the text side: how many first-pass chunks feed the
   * expansion (0 = off). Defaults are Anserini's RM3 defaults, not tuned here. @default 10
   */
  termFeedbackDocs: number;
  /** RM3: expansion terms added to the question. @default 10 */
  termFeedbackTerms: number;
  /**
   * RM3: the question's own share of the expanded query's weight, in [0, 1]. Anserini's 0.5 let the
   * expansion pull NPL and ADI below text-only; 0.7 is at or above text-only on Cranfield, NPL and
   * ADI and best on their mean (docs/retrieval.md). @default 0.7
   */
  termFeedbackQueryWeight: number;
  /**
   * RM3: how many of the window's best chunks are re-scored (0 = the whole window). 30 is
   * RAGFlow's smallest result window; each re-scored chunk costs ~5 µs from the term index (≈ 20 µs
   * per 120 words re-analysed without it), and Cranfield gains little from deeper re-scoring
   * (docs/benchmarks.md). @default 30
   */
  termFeedbackDepth: number;
  /** Force the exact vector scan even on large indexes. @default false */
  exactVectors: boolean;
  /**
   * The weight w used when the caller gives no vector_similarity_weight, in [0, 1]. An explicit
   * weight is always used as given. @default 0.3 (RAGFlow's)
   */
  defaultWeight: number;
  /**
   * When the caller gives no vector_similarity_weight: shrink each candidate's vector similarity
   * towards the candidates' mean by the sides' agreement a ∈ [0, 1] (`agreement` below),
   * similarity = w·(v̄ + a·(v − v̄)) + (1 − w)·t. a is the mean term_similarity of the vector
   * side's best `agreementDepth` first-pass candidates over that of the text side's best: a vector
   * side whose best chunks the text side finds no evidence for (an embedding that does not know
   * the collection's words, a look-up of one exact passage) barely moves the ranking, and the
   * similarity keeps its level, so `similarity_threshold` cuts about where it did. An explicit
   * weight keeps RAGFlow's formula. On Cranfield, NPL and ADI the mean nDCG@10 is unchanged
   * (0.4565); with a vector side made useless (bench/degraded-vectors.ts) it is never more than 0.008
   * below text-only on any of them, where the plain formula fell up to 0.08 below, and it finds 0.95 of the
   * known items of bench/speed.ts at 100k (plain: 0.82) (docs/retrieval.md). @default true
   */
  vectorAgreement: boolean;
  /**
   * Scale both feedback steps by the same agreement a (any weight, given or not): Rocchio's
   * `feedbackWeight`·a, and RM3's expansion share (1 − `termFeedbackQueryWeight`)·a. @default false
   */
  agreementFeedback: boolean;
  /** How many of each side's best first-pass candidates the agreement compares (≥ 1). @default 10 */
  agreementDepth: number;
  /**
   * When the caller gives no vector_similarity_weight: the vector side's best candidate, when its
   * cosine leads the next one by at least this margin (first pass, the question's own vector), ranks
   * by max(similarity, its vector similarity), so a chunk that shares one common word with the
   * question cannot push it out, and the threshold does not drop it. 0 turns it off. An explicit
   * weight keeps RAGFlow's formula. @default 0.1
   */
  vectorMargin: number;
  /**
   * Related words for the question's terms that no chunk holds (`bridgeQuery` in fulltext.ts):
   * each such term of an English question is replaced on the text side by its `bridgeTerms` most
   * related stems (models/ragloom-related-en: WordNet, GloVe) that chunks do hold, each weighing
   * this × its relation's weight (the question's own terms weigh 1); with any weight, given or not,
   * as RAGFlow adds WordNet synonyms to English questions whatever the weight. Measured on the
   * paraphrased questions of bench/qa.ts and on Cranfield, NPL and ADI, and not kept: it moved one
   * or two tuning questions and cost two held-out answers (docs/retrieval.md). 0 turns it off. @default 0
   */
  bridgeWeight: number;
  /** Related stems per bridged term (`bridgeWeight`). @default 3 */
  bridgeTerms: number;
  /** GloVe's neighbours too, not only WordNet's relations (`bridgeWeight`). @default true */
  bridgeGlove: boolean;
  /** Also bridge question terms that at most this many chunks hold, keeping them (`bridgeWeight`). @default 0 */
  bridgeDf: number;
}

/** The ranking defaults (frozen): what a Client without `retrieval` ranks with. */
export const DEFAULT_RETRIEVAL_OPTIONS: Readonly<RetrievalOptions> = Object.freeze({
  feedbackDocs: 5,
  feedbackWeight: 1,
  feedbackSearch: false,
  termFeedbackDocs: 10,
  termFeedbackTerms: 10,
  termFeedbackQueryWeight: 0.7,
  termFeedbackDepth: 30,
  exactVectors: false,
  defaultWeight: 0.3,
  vectorAgreement: true,
  agreementFeedback: false,
  agreementDepth: 10,
  vectorMargin: 0.1,
  bridgeWeight: 0,
  bridgeTerms: 3,
  bridgeGlove: true,
  bridgeDf: 0,
});

/** What each option must be: [check, description]. */
const OPTION_RULES: Record<keyof RetrievalOptions, [(v: unknown) => boolean, string]> = {
  feedbackDocs: [isCount, 'a non-negative integer'],
  feedbackWeight: [(v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'a finite number ≥ 0'],
  feedbackSearch: [(v) => typeof v === 'boolean', 'a boolean'],
  termFeedbackDocs: [isCount, 'a non-negative integer'],
  termFeedbackTerms: [isCount, 'a non-negative integer'],
  termFeedbackQueryWeight: [isUnit, 'a number in [0, 1]'],
  termFeedbackDepth: [isCount, 'a non-negative integer'],
  exactVectors: [(v) => typeof v === 'boolean', 'a boolean'],
  defaultWeight: [isUnit, 'a number in [0, 1]'],
  vectorAgreement: [(v) => typeof v === 'boolean', 'a boolean'],
  agreementFeedback: [(v) => typeof v === 'boolean', 'a boolean'],
  agreementDepth: [(v) => isCount(v) && (v as number) >= 1, 'an integer ≥ 1'],
  vectorMargin: [isUnit, 'a number in [0, 1]'],
  bridgeWeight: [isUnit, 'a number in [0, 1]'],
  bridgeTerms: [isCount, 'a non-negative integer'],
  bridgeGlove: [(v) => typeof v === 'boolean', 'a boolean'],
  bridgeDf: [isCount, 'a non-negative integer'],
};

function isUnit(v: unknown): boolean {
  return typeof v === 'number' && v >= 0 && v <= 1;
}

function isCount(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * Checks the `retrieval` option of a Client or server and fills the defaults: the result is a new
 * frozen object. Unknown keys (all of them named) and values of the wrong type or range throw a
 * TypeError. `undefined` gives the defaults.
 */
export function resolveRetrievalOptions(given: unknown): Readonly<RetrievalOptions> {
  if (given === undefined) return DEFAULT_RETRIEVAL_OPTIONS;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw new TypeError(`"retrieval" must be an object of ranking settings (${Object.keys(OPTION_RULES).join(', ')})`);
  }
  const known = Object.keys(OPTION_RULES);
  const unknown = Object.keys(given).filter((k) => !known.includes(k));
  if (unknown.length) {
    throw new TypeError(`Unknown retrieval option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; known: ${known.join(', ')}`);
  }
  const out: Record<string, unknown> = { ...DEFAULT_RETRIEVAL_OPTIONS };
  for (const [k, v] of Object.entries(given)) {
    if (v === undefined) continue;
    const [ok, what] = OPTION_RULES[k as keyof RetrievalOptions];
    if (!ok(v)) throw new TypeError(`retrieval.${k} must be ${what}, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
    out[k] = v;
  }
  return Object.freeze(out as unknown as RetrievalOptions);
}

interface Cand {
  rowid: number;
  vsim: number;
  tsim: number;
  sim: number;
  rank: number;
}

/** A SearchRequest as a search thread receives it (no functions: the question comes embedded). */
export type WireSearchRequest = Omit<SearchRequest, 'embedQuestion' | 'reranker'>;

/**
 * Runs a retrieval (see the module comment). With a search pool attached to `reader`
 * (search-pool.ts), a request without a rerank model is ranked on one of its threads and its
 * page's rows are read here; the question is embedded here first (an embedding error surfaces
 * only where the search would have asked for the vector, as it does in-process).
 */
export async function hybridSearch(reader: SearchReader, r: SearchRequest): Promise<RetrieveResult> {
  const pool = r.reranker ? undefined : searchPoolOf(reader);
  if (pool) {
    let vector: Float32Array | null = null;
    let embedError: unknown;
    try {
      vector = await r.embedQuestion(r.question);
    } catch (e) {
      embedError = e;
    }
    const { embedQuestion: _e, reranker: _r, ...wire } = r;
    try {
      // The thread ranks; the page's rows are read here (they would cross threads otherwise).
      return await materialize(reader, await pool.run(wire, vector, embedError), r.highlight ? r.question : undefined);
    } catch (e) {
      if (!(e instanceof SearchPoolClosed)) throw e;
      // The threads are gone (closing, or crashed): search here.
      return search(reader, { ...r, embedQuestion: async () => vector ?? Promise.reject(embedError) });
    }
  }
  return search(reader, r);
}

async function search(reader: SearchReader, r: SearchRequest): Promise<RetrieveResult> {
  return materialize(reader, await rank(reader, r), r.highlight ? r.question : undefined);
}

/** One chunk of a ranked page: its scores, and its analysed content when the term index has it. */
export interface PageRow {
  rowid: number;
  sim: number;
  vsim: number;
  tsim: number;
  ltks?: string;
}

/** A document's count among the survivors; its name is looked up by materialize when absent. */
export interface PageAgg {
  doc_name?: string;
  doc_id: string;
  count: number;
}

/** A ranked result: what a search thread sends back (small); materialize reads the page's rows. */
export interface RankedPage {
  total: number;
  page: PageRow[];
  /** most first (ties in order of first appearance) */
  doc_aggs: PageAgg[];
  /** The language the question was analysed as (its highlight reads it alike). */
  lang?: Lang;
  /** The question's terms that no chunk of the file holds (a chat's built-in model declines on one that names something). */
  unknown?: string[];
  /** The window's chunks, read for the rerank model (never from a search thread): the page is among them. */
  read?: Map<number, PageChunk>;
  /**
   * The page's rows the term index holds (SearchReader.termPages), as of the sync the ranking
   * read: materialize reads only the others (never from a search thread).
   */
  held?: Map<number, PageChunk>;
}

/**
 * Everything but reading the page's rows: candidates, scores, feedback, windows, threshold,
 * aggregates. The store is read before the ranking (scope, the indexes' syncs) and after it (the
 * survivors' documents while the term index is not built); the ranking itself is synchronous over
 * the in-memory indexes, so no other search's sync changes them while it runs.
 */
export async function rank(reader: SearchReader, r: SearchRequest): Promise<RankedPage> {
  const { question, page, pageSize, weight: w, topK, reranker, options: o } = r;
  const kbIds = r.datasets.map((k) => k.id);

  // ---- scope: document ids and metadata narrow the searched chunks
  let scopeDocs: Set<string> | undefined = r.documentIds?.length ? new Set(r.documentIds) : undefined;
  if (r.metadata) {
    const rows = await reader.documentMeta(kbIds);
    const hit = filterDocuments(scopeDocs ? rows.filter((d) => scopeDocs!.has(d.id)) : rows, r.metadata);
    if (hit.size === 0) return { total: 0, page: [], doc_aggs: [] };
    scopeDocs = hit;
  }
  const scope = scopeDocs ? new Set(await reader.chunkRowidsOfDocuments([...scopeDocs])) : undefined;

  // ---- RAGFlow's result window: ranks are computed over windows of W; page p lies in window ⌊(p−1)·size/W⌋
  let W = Math.max(30, Math.ceil(64 / pageSize) * pageSize);
  if (reranker) W = Math.min(W, topK, 64);
  const win = Math.floor(((page - 1) * pageSize) / W);
  // Candidates up to the end of the page's window: every text match that could rank there (the
  // text side's best `want`), and the vector side's best top_k of them. top_k limits the vector
  // side only, as RAGFlow's top_k is its KNN's k (rag/nlp/search.py; ES `knn(k=topk)`).
  const want = (win + 1) * W;

  // ---- candidates
  const qv = await r.embedQuestion(question);
  // A store whose FTS5 is a copy that follows it (PostgreSQL) brings it up to date, alongside the
  // vectors (on a fresh node both load: the database serves one while this process copies the other).
  const textSynced = reader.syncFullText?.('chunk_fts');
  textSynced?.catch(() => undefined); // awaited below
  // The datasets' vector indexes, each loaded on its dataset's first search (dataset-vectors.ts).
  const ix = await datasetVectors(reader, qv.length, kbIds);
  // Never more than the datasets hold: a huge top_k / page_size (1e308) would size the search's
  // buffers. Counting stops at `want` (a full count walks the dataset's index: 3.5 ms per 100k);
  // when the vector index alone holds that many of the datasets' chunks, no count is needed.
  const held = ix && ix.countIn(kbIds) >= want ? want : await reader.countChunks(kbIds, Math.min(want, 2 ** 53));
  const textN = Math.min(want, Math.max(1, held));
  const vectorN = Math.min(topK, textN);
  // A searchable row of the datasets (and the scope): the text side asks this of every row it touches.
  const inDatasets = ix ? ix.matcher({ datasets: kbIds }) : () => false;
  const accept = scope ? (rid: number): boolean => scope.has(rid) && inDatasets(rid) : inDatasets;
  // The in-memory copy of chunk_fts (term-index.ts) answers for FTS5 once it is built; until
  // then FTS5 answers (the same ranking) and each search builds a part of it (end of rank).
  const started = performance.now();
  // The question is read in the datasets' language (its own when theirs differ or are unset).
  const given = r.datasets.every((k) => k.language !== undefined);
  const settings = (given ? r.datasets.map((k) => k.language ?? null) : await reader.datasetLanguages(kbIds)).map(languageSetting);
  const lang = questionLanguage(settings, question);
  // Under a memory budget, the datasets' own term indexes (dataset-vectors.ts searchTerms).
  const tix = await searchTerms(reader, kbIds);
  await textSynced;
  const tq0 = textQuery(reader, question, { index: tix, lang });
  // English terms no chunk holds, bridged to related terms chunks do hold (RetrievalOptions.bridgeWeight).
  const rel = r.related;
  const bridge = rel && o.bridgeWeight > 0 && w < 1 && lang === 'en'
    ? bridgeQuery(reader, tq0, (t) => rel[t] ?? [], { weight: o.bridgeWeight, terms: o.bridgeTerms, rareDf: o.bridgeDf })
    : null;
  // The query every score below is computed with.
  const tq: TextQuery = bridge?.query ?? tq0;
  const cands = new Map<number, Cand>();
  const add = (rid: number): Cand => {
    let c = cands.get(rid);
    if (!c) cands.set(rid, (c = { rowid: rid, vsim: 0, tsim: 0, sim: 0, rank: 0 }));
    return c;
  };
  const filter = { datasets: kbIds, rowids: scope };
  const exact = o.exactVectors;
  // The vector side's hits come with their cosine (the same sums cosines() does): kept for the first scoring.
  const hitScore = new Map<number, number>();
  // At w = 0 the vector side adds nothing to a score: its own hits would come back with
  // similarity 0. RAGFlow's KNN is filtered by the text query, so it never returns such chunks;
  // here the vector side then brings no candidates (the text matches still get their cosine).
  if (ix && w > 0) {
    for (const h of ix.search(qv, vectorN, filter, { exact })) {
      add(h.rowid);
      hitScore.set(h.rowid, h.score);
    }
  }
  // Text side and exact cross-scores: one FTS5 pass over all matches when they are few, else the
  // top n from FTS5 and the vector-only candidates' BM25 computed in JS (fulltext.ts textSide).
  const text = textSide(reader, tq0, textN, accept);
  for (const [rid, ts] of text.top) add(rid).tsim = ts;
  const untexted = (): number[] => [...cands.values()].filter((c) => c.tsim === 0).map((c) => c.rowid);
  // A full-text engine without the chunks' texts (PostgreSQL's FTS5 copy) has them read from the
  // store (the same terms, the same sums) while the term index is not built.
  const textless = reader.fullText?.chunkTexts === false;
  // A bridged query has weights, which FTS5's bm25() has not: it is scored the way RM3 re-scores
  // (the term index's forward rows, or the rows re-analysed), the same sums on every store.
  const crossScores = async (rids: number[]): Promise<void> => {
    const ts = bridge
      ? tix ? tix.scoreRows(tq, rids) : textless ? scoreRows(tq, await storedRowTerms(reader, rids)) : textScoresJs(reader, tq, rids)
      : textless && text.readsTexts ? scoreRows(tq, await storedRowTerms(reader, rids)) : text.scoresOf(rids);
    for (const [rid, s] of ts) cands.get(rid)!.tsim = s;
  };
  if (bridge) {
    // The bridge terms' best rows join the candidates; every candidate is scored with the bridged query.
    for (const [rid] of textSide(reader, bridge.only, textN, accept).top) add(rid);
    await crossScores([...cands.keys()]);
  } else await crossScores(untexted());

  // Rocchio feedback: the question vector moves towards its best first-pass chunks, which
  // helps vague questions most; the candidates are then re-scored with it (and, with
  // feedbackSearch, the vector side is searched again).
  let qVec = qv;
  const clampCos = (x: number) => Math.max(0, Math.min(1, Number.isNaN(x) ? 0 : x)); // no vector here (NaN): 0
  // vectors: 'first' (the question's: the hits' own scores, cosines for the rest), 'moved' (all
  // again, after Rocchio moved the question), 'kept' (only the mix changes).
  const scoreAll = (vectors: 'first' | 'moved' | 'kept') => {
    const all = [...cands.values()];
    if (vectors !== 'kept') {
      const need = vectors === 'first' ? all.filter((c) => !hitScore.has(c.rowid)) : all;
      const cos = ix?.cosines(qVec, need.map((c) => c.rowid));
      need.forEach((c, i) => (c.vsim = clampCos(cos ? cos[i]! : NaN)));
      if (vectors === 'first') for (const c of all) if (hitScore.has(c.rowid)) c.vsim = clampCos(hitScore.get(c.rowid)!);
    }
    if (shrink !== 1) {
      vref = 0;
      for (const c of all) vref += c.vsim;
      vref /= all.length;
    }
    for (const c of all) c.sim = mix(c);
  };
  // similarity = w·v' + (1−w)·t, v' the vector similarity shrunk by `shrink` towards the candidates'
  // mean `vref` (RetrievalOptions.vectorAgreement); shrink 1: v itself, RAGFlow's formula.
  let shrink = 1;
  let vref = 0;
  // A confident vector match (RetrievalOptions.vectorMargin) ranks at least by its vector similarity.
  let confident = -1;
  const mix = (c: Cand): number => {
    const s = w * (shrink === 1 ? c.vsim : vref + shrink * (c.vsim - vref)) + (1 - w) * c.tsim;
    return c.rowid === confident ? Math.max(s, c.vsim) : s;
  };
  scoreAll('first');
  if (r.weightGiven === false && w > 0 && w < 1 && o.vectorMargin > 0) {
    confident = vectorLead([...cands.values()], o.vectorMargin);
    if (confident >= 0) scoreAll('kept');
  }
  // The sides' agreement on the first pass (RetrievalOptions.vectorAgreement): 1 when unused.
  const adapt = o.vectorAgreement && r.weightGiven === false && w > 0;
  const agree = ix && (adapt || o.agreementFeedback) ? agreement([...cands.values()], o.agreementDepth) : 1;
  if (adapt && agree < 1) {
    shrink = agree;
    scoreAll('kept');
  }
  const fbScale = o.agreementFeedback ? agree : 1;
  const fb = o.feedbackDocs;
  if (ix && w > 0 && fb > 0 && cands.size > fb && fbScale > 0) {
    const top = [...cands.values()].sort((a, b) => b.sim - a.sim).slice(0, fb);
    const q2 = Float32Array.from(qVec);
    const a = (o.feedbackWeight * fbScale) / top.length;
    for (const c of top) {
      const v = ix.vector(c.rowid)!;
      for (let d = 0; d < q2.length; d++) q2[d]! += a * v[d]!;
    }
    qVec = normalize(q2);
    if (o.feedbackSearch) {
      for (const h of ix.search(qVec, vectorN, filter, { exact })) add(h.rowid);
      await crossScores(untexted());
    }
    scoreAll('moved');
  }

  // ---- rank: similarity plus the dataset's pagerank (0–100, added raw as RAGFlow does), in windows
  const pagerank = new Map(r.datasets.map((k) => [k.id, k.pagerank]));
  for (const c of cands.values()) c.rank = c.sim + (pagerank.get(ix?.datasetOf(c.rowid) ?? '') ?? 0);
  // With the vector side shrunk, a tie (all of it when a = 0) still follows the vector side.
  const byRank = shrink === 1
    ? (a: Cand, b: Cand) => b.rank - a.rank || b.tsim - a.tsim || a.rowid - b.rowid
    : (a: Cand, b: Cand) => b.rank - a.rank || b.tsim - a.tsim || b.vsim - a.vsim || a.rowid - b.rowid;
  const ranked = [...cands.values()].sort(byRank);
  let windowed = ranked.slice(win * W, (win + 1) * W);
  let read: Map<number, PageChunk> | undefined;
  // Analysed rows of the feedback step, reused for the page's content_ltks.
  let analysed: Map<number, string[][]> | undefined;
  const tfb = o.termFeedbackDocs;
  if (tfb > 0 && w < 1 && ranked.length > tfb && tq.upper > 0 && fbScale > 0) {
    // RM3 on the text side: expand the question with its best first-pass chunks' terms and
    // re-score the window's term_similarity with it (the window itself stays the first pass's).
    const fbRows = ranked.slice(0, tfb);
    const depth = o.termFeedbackDepth;
    const depthRows = depth > 0 ? windowed.slice(0, depth) : windowed;
    const fx = { terms: o.termFeedbackTerms, origWeight: fbScale === 1 ? o.termFeedbackQueryWeight : 1 - (1 - o.termFeedbackQueryWeight) * fbScale };
    let ts: Map<number, number>;
    if (tix) {
      // The same model and scores from the term index's forward rows (term ids, no re-analysis).
      const best = tq.match ? tix.relevanceModel(fbRows.map((c) => [c.rowid, c.sim]), fx.terms) : null;
      const xq = best ? expandWith(reader, tq, best, fx) : tq;
      ts = tix.scoreRows(xq, depthRows.map((c) => c.rowid));
    } else {
      const ids = [...new Set([...fbRows, ...depthRows].map((c) => c.rowid))];
      const rows = textless ? await storedRowTerms(reader, ids) : rowTerms(reader, ids);
      analysed = rows;
      const feedback = fbRows.filter((c) => rows.has(c.rowid)).map((c): [string[][], number] => [rows.get(c.rowid)!, c.sim]);
      const xq = expandQuery(reader, tq, feedback, fx);
      ts = scoreRows(xq, depthRows.filter((c) => rows.has(c.rowid)).map((c): [number, string[][]] => [c.rowid, rows.get(c.rowid)!]));
    }
    for (const c of depthRows) {
      c.tsim = ts.get(c.rowid) ?? 0;
      c.sim = mix(c);
      c.rank = c.sim + (pagerank.get(ix?.datasetOf(c.rowid) ?? '') ?? 0);
    }
    windowed.sort(byRank);
  }
  if (reranker && windowed.length) {
    const rows = (read = await reader.pageChunks(windowed.map((c) => c.rowid)));
    const texts = windowed.map((c) => rerankText(rows.get(c.rowid)));
    const scores = await reranker.score(question, texts);
    windowed.forEach((c, i) => {
      c.vsim = scores[i]!;
      // The model's score replaces the cosine (RAGFlow's formula; the agreement measured the
      // embedding, so the model's score is not shrunk).
      c.sim = w * c.vsim + (1 - w) * c.tsim;
      c.rank = c.sim + (pagerank.get(ix?.datasetOf(c.rowid) ?? '') ?? 0);
    });
    windowed = windowed.sort(byRank);
  }
  const thr = w <= 0 ? 0 : r.threshold;
  const survivors = windowed.filter((c) => c.sim >= thr);
  const start = ((page - 1) * pageSize) % W;
  const pageRows = survivors.slice(start, start + pageSize);

  // ---- output: each survivor's document and its name (the term index knows both, as of its
  // sync; else a light join), counted here; materialize reads the page's rows (and the names
  // the index lacks: none unless a document went while its rows were read).
  const aggs = new Map<string, PageAgg>();
  const count = (id: string, name?: string) => {
    const a = aggs.get(id) ?? (name === undefined ? { doc_id: id, count: 0 } : { doc_name: name, doc_id: id, count: 0 });
    a.count++;
    aggs.set(id, a);
  };
  if (tix) {
    for (const c of survivors) {
      const id = tix.documentOf(c.rowid);
      if (id !== undefined) count(id, aggs.has(id) ? undefined : tix.documentNameOf(c.rowid));
    }
  } else {
    const docOf = await reader.chunkDocuments(survivors.map((c) => c.rowid));
    for (const c of survivors) {
      const d = docOf.get(c.rowid);
      if (d) count(d.id, d.name);
    }
  }
  // Building the term index costs about 20 µs a chunk (2 s per 100k), and pays off only for a
  // store searched many times: each search without it spends about as long again on building it
  // as it spent itself (at most termIndexOptions.buildStepMs), so one question to a large store
  // is not made to wait for the whole copy, and a store searched often has it after a few hundred.
  if (!tix) await termIndexStep(reader, Math.min(termIndexOptions.buildStepMs, performance.now() - started));
  // The page's rows from the same snapshot as the ranking, where the index holds them.
  let pageHeld: Map<number, PageChunk> | undefined;
  if (tix && reader.termPages && termIndexOptions.pages && !read) {
    pageHeld = new Map();
    for (const c of pageRows) {
      const p = tix.pageOf(c.rowid);
      if (p) pageHeld.set(c.rowid, p);
    }
  }
  return {
    total: survivors.length,
    page: pageRows.map((c) => {
      // The analysed content, for content_ltks of a chunk without index text.
      const ltks = analysed?.get(c.rowid)?.[1] ?? tix?.contentTerms(c.rowid);
      return { rowid: c.rowid, sim: c.sim, vsim: c.vsim, tsim: c.tsim, ...(ltks ? { ltks: ltks.join(' ') } : {}) };
    }),
    doc_aggs: [...aggs.values()].sort((a, b) => b.count - a.count),
    lang,
    unknown: tq0.terms.filter((t) => !tq0.idf.has(t)),
    ...(read ? { read } : {}),
    ...(pageHeld ? { held: pageHeld } : {}),
  };
}

/**
 * The rowid of the candidate with the highest vector similarity when it leads the next one by at
 * least `margin` (ties to the lower rowid), else -1.
 */
export function vectorLead(cands: ReadonlyArray<{ rowid: number; vsim: number }>, margin: number): number {
  let best: { rowid: number; vsim: number } | undefined;
  let second = -Infinity;
  for (const c of cands) {
    if (!best || c.vsim > best.vsim || (c.vsim === best.vsim && c.rowid < best.rowid)) {
      if (best) second = Math.max(second, best.vsim);
      best = c;
    } else second = Math.max(second, c.vsim);
  }
  if (!best) return -1;
  return best.vsim - (second === -Infinity ? 0 : second) >= margin ? best.rowid : -1;
}

/**
 * The sides' agreement in [0, 1]: the mean term_similarity of the `k` candidates with the highest
 * vector_similarity over the mean of the `k` highest term_similarity (ties to the lower rowid). The
 * text side's best k maximise that mean, so it is at most 1. 1 (nothing to adapt) when fewer than
 * k candidates (or none) have a term score: a text side with a few incidental matches, or none (a
 * question in another language than the chunks), is no evidence against the vector side.
 */
export function agreement(cands: ReadonlyArray<{ rowid: number; vsim: number; tsim: number }>, k: number): number {
  const n = Math.min(k, cands.length);
  let matched = 0;
  for (const c of cands) if (c.tsim > 0) matched++;
  if (n === 0 || matched < n) return 1;
  const byV = [...cands].sort((a, b) => b.vsim - a.vsim || a.rowid - b.rowid);
  const byT = [...cands].sort((a, b) => b.tsim - a.tsim || a.rowid - b.rowid);
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += byV[i]!.tsim;
    den += byT[i]!.tsim;
  }
  return Math.min(1, num / den);
}

/** The page's chunks, read and shaped as RAGFlow sends them (`question`: highlight them), and the aggregates' names. */
async function materialize(reader: SearchReader, ranked: RankedPage, question: string | undefined): Promise<RetrieveResult> {
  // The page's rows, and the names the term index lacked (none when it named them all), in one
  // read (one round trip on a networked store).
  const ids = ranked.page.map((c) => c.rowid);
  const unnamed = ranked.doc_aggs.filter((a) => a.doc_name === undefined).map((a) => a.doc_id);
  // A reranked page's rows were read for the model: only names the term index lacked remain.
  const { chunks: rows, names } = ranked.read
    ? { chunks: ranked.read, names: unnamed.length ? await reader.documentNames(unnamed) : new Map<string, string>() }
    : ranked.held ? await heldPage(reader, ranked.held, ids, unnamed) : await reader.pageRows(ids, unnamed);
  const doc_aggs = docNames(ranked.doc_aggs, names);
  const chunks: Record<string, unknown>[] = [];
  for (const c of ranked.page) {
    const row = rows.get(c.rowid);
    if (row) chunks.push(chunkOut(row, c, question, row.index_text === null ? c.ltks : undefined, ranked.lang));
  }
  return { total: ranked.total, chunks, doc_aggs, ...(ranked.unknown?.length ? { unknown: ranked.unknown } : {}) };
}

/** The page's rows the term index held, and the others (and the names it lacked) read in one go; no read when it held all. */
async function heldPage(reader: SearchReader, held: Map<number, PageChunk>, ids: number[], unnamed: string[]): Promise<{ chunks: Map<number, PageChunk>; names: Map<string, string> }> {
  const missing = ids.filter((id) => !held.has(id));
  if (!missing.length && !unnamed.length) return { chunks: held, names: new Map() };
  const read = await reader.pageRows(missing, unnamed);
  for (const [id, row] of read.chunks) held.set(id, row);
  return { chunks: held, names: read.names };
}

/** What a page's chunk is written from (chunkOut, rerankText). */
type Row = PageChunk;

/**
 * The aggregates with their documents' names (the term index's, or those read in one batch); a
 * document gone meanwhile (before the index's sync, or when the names were read) is left out,
 * as the survivors' join leaves it out.
 */
function docNames(aggs: PageAgg[], names: ReadonlyMap<string, string>): DocAgg[] {
  const out: DocAgg[] = [];
  for (const a of aggs) {
    const name = a.doc_name ?? names.get(a.doc_id);
    if (name !== undefined) out.push({ doc_name: name, doc_id: a.doc_id, count: a.count });
  }
  return out;
}

function rerankText(r: Row | undefined): string {
  if (!r) return '';
  const kw = JSON.parse(r.important_keywords) as string[];
  return kw.length ? `${r.content}\n${kw.join(' ')}` : r.content;
}

function chunkOut(r: Row, c: PageRow, hlQuestion: string | undefined, contentLtks?: string, lang?: Lang): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: r.id,
    content: r.content,
    content_ltks: contentLtks ?? analyzeForIndex(r.content, storedAnalysis(r.lang)),
    document_id: r.document_id,
    document_keyword: r.doc_name,
    document_name: r.doc_name,
    docnm_kwd: r.doc_name,
    dataset_id: r.dataset_id,
    kb_id: r.dataset_id,
    important_keywords: list(r.important_keywords),
    questions: list(r.questions),
    tag_kwd: list(r.tag_kwd),
    image_id: r.image_id,
    similarity: c.sim,
    vector_similarity: c.vsim,
    term_similarity: c.tsim,
    positions: list(r.positions),
    doc_type_kwd: r.doc_type,
    doc_type: r.doc_type,
    mom_id: '',
    row_id: r.rowid,
    available: r.available === 1,
    create_time: r.create_time,
    create_timestamp: r.create_timestamp,
  };
  if (hlQuestion !== undefined) out.highlight = highlightText(r.content, hlQuestion, lang) ?? r.content;
  return out;
}

/** A stored JSON list; most are empty. */
const list = (json: string): unknown[] => (json === '[]' ? [] : (JSON.parse(json) as unknown[]));

function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

export type { DimIndex };

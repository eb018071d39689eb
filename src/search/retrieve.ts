/**
 * Hybrid search over one or more datasets, as RAGFlow's POST /retrieval ranks and pages
 * (the wire parameters are checked in src/api/retrieval.ts).
 *
 * similarity = w·vector_similarity + (1−w)·term_similarity, w = vector_similarity_weight, where
 * vector_similarity is the cosine in [0, 1] and term_similarity the BM25 of src/search/fulltext.ts
 * normalised by the query's own bound. Candidates are the union of the vector side's and the
 * full-text side's best n each (n = top_k capped by RAGFlow's result window), every candidate
 * scored exactly on both sides; then pseudo-relevance feedback on both sides (Rocchio for the
 * vector, RM3 for the text). See docs/retrieval.md for every step.
 */
import { cachedStatement, chunkRowidsOfDocuments, type ChunkRow, type Db } from '../store/index.js';
import { analyzeForIndex } from '../text/index.js';
import { highlight as highlightText } from './highlight.js';
import { vectorIndex, type DimIndex } from './vector-index.js';
import { textQuery, textSide, expandQuery, rowTerms, scoreRows } from './fulltext.js';
import { filterDocuments, type MetadataFilter } from './metadata.js';
import type { Reranker } from './rerank.js';

/** A validated retrieval request (src/api/retrieval.ts checks the wire parameters). */
export interface SearchRequest {
  /** The datasets searched, with their pagerank (0–100); one embedding model. */
  datasets: Array<{ id: string; pagerank: number }>;
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
  /** vector_similarity_weight, in [0, 1] */
  weight: number;
  /** candidates per side, > 0 */
  topK: number;
  highlight: boolean;
  reranker?: Reranker;
  /** The client's ranking settings (`Engine.retrievalOptions`). */
  options: Readonly<RetrievalOptions>;
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
   * RAGFlow's smallest result window; each re-scored chunk is re-analysed (≈ 20 µs per 120 words),
   * and Cranfield gains little from deeper re-scoring (docs/benchmarks.md). @default 30
   */
  termFeedbackDepth: number;
  /** Force the exact vector scan even on large indexes. @default false */
  exactVectors: boolean;
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
});

/** What each option must be: [check, description]. */
const OPTION_RULES: Record<keyof RetrievalOptions, [(v: unknown) => boolean, string]> = {
  feedbackDocs: [isCount, 'a non-negative integer'],
  feedbackWeight: [(v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'a finite number ≥ 0'],
  feedbackSearch: [(v) => typeof v === 'boolean', 'a boolean'],
  termFeedbackDocs: [isCount, 'a non-negative integer'],
  termFeedbackTerms: [isCount, 'a non-negative integer'],
  termFeedbackQueryWeight: [(v) => typeof v === 'number' && v >= 0 && v <= 1, 'a number in [0, 1]'],
  termFeedbackDepth: [isCount, 'a non-negative integer'],
  exactVectors: [(v) => typeof v === 'boolean', 'a boolean'],
};

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

export async function hybridSearch(db: Db, r: SearchRequest): Promise<RetrieveResult> {
  const { question, page, pageSize, weight: w, topK, reranker, options: o } = r;
  const kbIds = r.datasets.map((k) => k.id);
  const inKbs = `dataset_id IN (${kbIds.map(() => '?').join(',')})`;

  // ---- scope: document ids and metadata narrow the searched chunks
  let scopeDocs: Set<string> | undefined = r.documentIds?.length ? new Set(r.documentIds) : undefined;
  if (r.metadata) {
    const rows = db.prepare(`SELECT id, meta_fields FROM document WHERE ${inKbs}`).all(...kbIds) as { id: string; meta_fields: string }[];
    const hit = filterDocuments(scopeDocs ? rows.filter((d) => scopeDocs!.has(d.id)) : rows, r.metadata);
    if (hit.size === 0) return { total: 0, chunks: [], doc_aggs: [] };
    scopeDocs = hit;
  }
  const scope = scopeDocs ? new Set(chunkRowidsOfDocuments(db, [...scopeDocs])) : undefined;

  // ---- RAGFlow's result window: ranks are computed over windows of W; page p lies in window ⌊(p−1)·size/W⌋
  let W = Math.max(30, Math.ceil(64 / pageSize) * pageSize);
  if (reranker) W = Math.min(W, topK, 64);
  const win = Math.floor(((page - 1) * pageSize) / W);
  // Never more than the datasets hold: a huge top_k / page_size (1e308) would size the search's buffers.
  const held = db.prepare(`SELECT COUNT(*) FROM chunk WHERE ${inKbs}`).pluck().get(...kbIds) as number;
  const perSide = Math.min(topK, (win + 1) * W, Math.max(1, held));

  // ---- candidates
  const qv = await r.embedQuestion(question);
  const ix = vectorIndex(db, qv.length);
  const kbSet = new Set(kbIds);
  const accept = (rid: number): boolean => {
    if (scope && !scope.has(rid)) return false;
    const ds = ix?.datasetOf(rid);
    return ds !== undefined && kbSet.has(ds);
  };
  const tq = textQuery(db, question);
  const cands = new Map<number, Cand>();
  const add = (rid: number): Cand => {
    let c = cands.get(rid);
    if (!c) cands.set(rid, (c = { rowid: rid, vsim: 0, tsim: 0, sim: 0, rank: 0 }));
    return c;
  };
  const filter = { datasets: kbIds, rowids: scope };
  const exact = o.exactVectors;
  if (ix) for (const h of ix.search(qv, perSide, filter, { exact })) add(h.rowid);
  // Text side and exact cross-scores: one FTS5 pass over all matches when they are few, else the
  // top n from FTS5 and the vector-only candidates' BM25 computed in JS (fulltext.ts textSide).
  const text = textSide(db, tq, perSide, accept);
  for (const [rid, ts] of text.top) add(rid).tsim = ts;
  const untexted = (): number[] => [...cands.values()].filter((c) => c.tsim === 0).map((c) => c.rowid);
  const crossScores = (rids: number[]): void => {
    for (const [rid, ts] of text.scoresOf(rids)) cands.get(rid)!.tsim = ts;
  };
  crossScores(untexted());

  // Rocchio feedback: the question vector moves towards its best first-pass chunks, which
  // helps vague questions most; the candidates are then re-scored with it (and, with
  // feedbackSearch, the vector side is searched again).
  let qVec = qv;
  const scoreAll = () => {
    for (const c of cands.values()) {
      c.vsim = Math.max(0, Math.min(1, ix?.cosine(qVec, c.rowid) ?? 0));
      c.sim = w * c.vsim + (1 - w) * c.tsim;
    }
  };
  scoreAll();
  const fb = o.feedbackDocs;
  if (ix && w > 0 && fb > 0 && cands.size > fb) {
    const top = [...cands.values()].sort((a, b) => b.sim - a.sim).slice(0, fb);
    const q2 = Float32Array.from(qVec);
    const a = o.feedbackWeight / top.length;
    for (const c of top) {
      const v = ix.vector(c.rowid)!;
      for (let d = 0; d < q2.length; d++) q2[d]! += a * v[d]!;
    }
    qVec = normalize(q2);
    if (o.feedbackSearch) {
      for (const h of ix.search(qVec, perSide, filter, { exact })) add(h.rowid);
      crossScores(untexted());
    }
    scoreAll();
  }

  // ---- rank: similarity plus the dataset's pagerank (0–100, added raw as RAGFlow does), in windows
  const pagerank = new Map(r.datasets.map((k) => [k.id, k.pagerank]));
  for (const c of cands.values()) c.rank = c.sim + (pagerank.get(ix?.datasetOf(c.rowid) ?? '') ?? 0);
  const byRank = (a: Cand, b: Cand) => b.rank - a.rank || b.tsim - a.tsim || a.rowid - b.rowid;
  const ranked = [...cands.values()].sort(byRank);
  let windowed = ranked.slice(win * W, (win + 1) * W);
  // Analysed rows of the feedback step, reused for the page's content_ltks.
  let analysed: Map<number, string[][]> | undefined;
  const tfb = o.termFeedbackDocs;
  if (tfb > 0 && w < 1 && ranked.length > tfb && tq.upper > 0) {
    // RM3 on the text side: expand the question with its best first-pass chunks' terms and
    // re-score the window's term_similarity with it (the window itself stays the first pass's).
    const fbRows = ranked.slice(0, tfb);
    const depth = o.termFeedbackDepth;
    const depthRows = depth > 0 ? windowed.slice(0, depth) : windowed;
    const rows = rowTerms(db, [...new Set([...fbRows, ...depthRows].map((c) => c.rowid))]);
    analysed = rows;
    const feedback = fbRows.filter((c) => rows.has(c.rowid)).map((c): [string[][], number] => [rows.get(c.rowid)!, c.sim]);
    const xq = expandQuery(db, tq, feedback, { terms: o.termFeedbackTerms, origWeight: o.termFeedbackQueryWeight });
    const ts = scoreRows(xq, depthRows.filter((c) => rows.has(c.rowid)).map((c): [number, string[][]] => [c.rowid, rows.get(c.rowid)!]));
    for (const c of depthRows) {
      c.tsim = ts.get(c.rowid) ?? 0;
      c.sim = w * c.vsim + (1 - w) * c.tsim;
      c.rank = c.sim + (pagerank.get(ix?.datasetOf(c.rowid) ?? '') ?? 0);
    }
    windowed.sort(byRank);
  }
  if (reranker && windowed.length) {
    const rows = chunkRows(db, windowed.map((c) => c.rowid));
    const texts = windowed.map((c) => rerankText(rows.get(c.rowid)));
    const scores = await reranker.score(question, texts);
    windowed.forEach((c, i) => {
      c.vsim = scores[i]!;
      c.sim = w * c.vsim + (1 - w) * c.tsim;
      c.rank = c.sim + (pagerank.get(ix?.datasetOf(c.rowid) ?? '') ?? 0);
    });
    windowed = windowed.sort(byRank);
  }
  const thr = w <= 0 ? 0 : r.threshold;
  const survivors = windowed.filter((c) => c.sim >= thr);
  const start = ((page - 1) * pageSize) % W;
  const pageRows = survivors.slice(start, start + pageSize);

  // ---- output: light rows (document) for every survivor, full rows for the page only
  const docOf = survivorDocs(db, survivors.map((c) => c.rowid));
  const aggs = new Map<string, DocAgg>();
  for (const c of survivors) {
    const d = docOf.get(c.rowid);
    if (!d) continue;
    const a = aggs.get(d.id) ?? { doc_name: d.name, doc_id: d.id, count: 0 };
    a.count++;
    aggs.set(d.id, a);
  }
  const rows = chunkRows(db, pageRows.map((c) => c.rowid));
  const chunks: Record<string, unknown>[] = [];
  for (const c of pageRows) {
    const row = rows.get(c.rowid);
    if (row) chunks.push(chunkOut(row, c, r.highlight ? question : undefined, row.index_text === null ? analysed?.get(c.rowid)?.[1] : undefined));
  }
  return { total: survivors.length, chunks, doc_aggs: [...aggs.values()].sort((a, b) => b.count - a.count) };
}

type Row = ChunkRow & { doc_name: string; index_text: string | null };

const stmt = (db: Db, sql: string) => cachedStatement(db, sql);
const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

/** rowid → its document (id, name), in batches of fixed size so statements are reused. */
function survivorDocs(db: Db, rowids: number[]): Map<number, { id: string; name: string }> {
  const out = new Map<number, { id: string; name: string }>();
  const B = 64;
  for (let i = 0; i < rowids.length; i += B) {
    const part = rowids.slice(i, i + B);
    while (part.length < B) part.push(-1);
    const rows = stmt(db, `SELECT c.rowid, d.id, d.name FROM chunk c JOIN document d ON d.id = c.document_id WHERE c.rowid IN (${marks(B)})`)
      .raw().all(...part) as Array<[number, string, string]>;
    for (const [rid, id, name] of rows) out.set(rid, { id, name });
  }
  return out;
}

function chunkRows(db: Db, rowids: number[]): Map<number, Row> {
  const out = new Map<number, Row>();
  for (let i = 0; i < rowids.length; i += 500) {
    const part = rowids.slice(i, i + 500);
    const rows = stmt(db, `SELECT c.*, d.name AS doc_name FROM chunk c JOIN document d ON d.id = c.document_id
      WHERE c.rowid IN (${marks(part.length)})`).all(...part) as Row[];
    for (const r of rows) out.set(r.rowid, r);
  }
  return out;
}

function rerankText(r: Row | undefined): string {
  if (!r) return '';
  const kw = JSON.parse(r.important_keywords) as string[];
  return kw.length ? `${r.content}\n${kw.join(' ')}` : r.content;
}

function chunkOut(r: Row, c: Cand, hlQuestion: string | undefined, contentTerms?: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: r.id,
    content: r.content,
    content_ltks: contentTerms ? contentTerms.join(' ') : analyzeForIndex(r.content),
    document_id: r.document_id,
    document_keyword: r.doc_name,
    document_name: r.doc_name,
    docnm_kwd: r.doc_name,
    dataset_id: r.dataset_id,
    kb_id: r.dataset_id,
    important_keywords: JSON.parse(r.important_keywords),
    questions: JSON.parse(r.questions),
    tag_kwd: JSON.parse(r.tag_kwd),
    image_id: r.image_id,
    similarity: c.sim,
    vector_similarity: c.vsim,
    term_similarity: c.tsim,
    positions: JSON.parse(r.positions),
    doc_type_kwd: r.doc_type,
    doc_type: r.doc_type,
    mom_id: '',
    row_id: r.rowid,
    available: r.available === 1,
    create_time: r.create_time,
    create_timestamp: r.create_timestamp,
  };
  if (hlQuestion !== undefined) out.highlight = highlightText(r.content, hlQuestion) ?? r.content;
  return out;
}

function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

export type { DimIndex };

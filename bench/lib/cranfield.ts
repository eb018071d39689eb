/**
 * Cranfield collection loader, a plain BM25 and the retrieval metrics used by ragloom's
 * quality benchmarks.
 *
 * Conventions (see shared/datasets/cranfield/README.md):
 * - query id = 1-based position in `cran.qry`;
 * - binary relevance (recall@k, MAP): codes 1..4 are relevant, `-1` and unlisted are not;
 * - graded relevance (nDCG@k): gain = 5 − code for codes 1..4, otherwise 0; linear gain,
 *   log2(rank + 1) discount, ideal ranking from all judged documents.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CranDoc { id: number; title: string; text: string }
export interface CranQuery { id: number; text: string }
export interface Cranfield {
  docs: CranDoc[];
  queries: CranQuery[];
  /** query id → (doc id → Cleverdon code: 1..4 or -1). */
  qrels: Map<number, Map<number, number>>;
}

/** `<repo>/../shared/datasets/cranfield`, or `RAGLOOM_CRANFIELD` when set. */
export function defaultCranfieldDir(): string {
  if (process.env.RAGLOOM_CRANFIELD) return process.env.RAGLOOM_CRANFIELD;
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, '..', '..', '..', 'shared', 'datasets', 'cranfield');
}

/** Loads the collection, or returns null when the folder is missing. */
export function loadCranfield(dir = defaultCranfieldDir()): Cranfield | null {
  const f = (n: string) => join(dir, n);
  if (!existsSync(f('cran.all.1400')) || !existsSync(f('cran.qry')) || !existsSync(f('cranqrel'))) return null;
  const read = (n: string) => readFileSync(f(n), 'utf8').replace(/\r/g, '');

  const docs: CranDoc[] = parseTagged(read('cran.all.1400')).map((r) => ({
    id: Number(r.I),
    title: clean(r.T ?? ''),
    // .W repeats the title first by convention, so it is the whole searchable text.
    text: clean(r.W ?? r.T ?? ''),
  }));
  const queries: CranQuery[] = parseTagged(read('cran.qry')).map((r, i) => ({ id: i + 1, text: clean(r.W ?? '') }));
  const qrels = new Map<number, Map<number, number>>();
  for (const line of read('cranqrel').split('\n')) {
    const p = line.trim().split(/\s+/);
    if (p.length < 3) continue;
    const [q, d, c] = p.map(Number) as [number, number, number];
    let m = qrels.get(q);
    if (!m) qrels.set(q, (m = new Map()));
    m.set(d, c);
  }
  return { docs, queries, qrels };
}

function clean(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function parseTagged(text: string): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  let cur: Record<string, string> | null = null;
  let field = '';
  for (const line of text.split('\n')) {
    const m = /^\.([A-Z])(?:\s+(.*))?$/.exec(line);
    if (m) {
      if (m[1] === 'I') {
        cur = { I: (m[2] ?? '').trim() };
        out.push(cur);
        field = '';
      } else {
        field = m[1]!;
        if (cur) cur[field] = '';
      }
      continue;
    }
    if (cur && field) cur[field] += `${line}\n`;
  }
  return out;
}

// ---------------------------------------------------------------- text analysis for BM25

/** A common English stop-word list (Lucene's classic list plus frequent function words). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves also may must shall upon whether within without'
  ).split(' '),
);

const require = createRequire(import.meta.url);
// Porter2 (Snowball English) stemmer shipped by wink-eng-lite-web-model (MIT).
const stem: (w: string) => string = require('wink-eng-lite-web-model/dist/porter-stemmer.js');

/** Lower-cases, splits on non-alphanumerics, drops stop words and stems (Porter2). */
export function analyze(text: string): string[] {
  const out: string[] = [];
  for (const t of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (!t || STOP_WORDS.has(t)) continue;
    out.push(stem(t));
  }
  return out;
}

// ---------------------------------------------------------------- BM25

export interface Bm25Options { k1?: number; b?: number }

/** Plain Okapi BM25 with the non-negative Lucene idf, log(1 + (N − df + 0.5)/(df + 0.5)). */
export class Bm25 {
  readonly k1: number;
  readonly b: number;
  private readonly postings = new Map<string, { doc: number; tf: number }[]>();
  private readonly lengths: Float64Array;
  private readonly avgdl: number;
  readonly n: number;

  constructor(texts: string[], opts: Bm25Options = {}) {
    this.k1 = opts.k1 ?? 1.2;
    this.b = opts.b ?? 0.75;
    this.n = texts.length;
    this.lengths = new Float64Array(texts.length);
    let total = 0;
    texts.forEach((text, doc) => {
      const toks = analyze(text);
      this.lengths[doc] = toks.length;
      total += toks.length;
      const tf = new Map<string, number>();
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, c] of tf) {
        let p = this.postings.get(t);
        if (!p) this.postings.set(t, (p = []));
        p.push({ doc, tf: c });
      }
    });
    this.avgdl = total / Math.max(1, texts.length);
  }

  idf(term: string): number {
    const df = this.postings.get(term)?.length ?? 0;
    return Math.log(1 + (this.n - df + 0.5) / (df + 0.5));
  }

  /** Scores of every document (by index) for the query's distinct terms. */
  scores(query: string): Float64Array {
    const s = new Float64Array(this.n);
    for (const t of new Set(analyze(query))) {
      const p = this.postings.get(t);
      if (!p) continue;
      const idf = this.idf(t);
      for (const { doc, tf } of p) {
        const norm = this.k1 * (1 - this.b + (this.b * this.lengths[doc]!) / this.avgdl);
        s[doc]! += (idf * tf * (this.k1 + 1)) / (tf + norm);
      }
    }
    return s;
  }

  /** The query's own score bound Σ_{t∈q} idf(t)·(k1+1): BM25 / bound is in [0, 1]. */
  upperBound(query: string): number {
    let u = 0;
    for (const t of new Set(analyze(query))) u += this.idf(t) * (this.k1 + 1);
    return u;
  }
}

// ---------------------------------------------------------------- metrics

/** Indices of the k highest scores, best first (ties: lower index first). */
export function topK(scores: ArrayLike<number>, k: number): number[] {
  const idx = Array.from({ length: scores.length }, (_, i) => i);
  idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
  return idx.slice(0, k);
}

const gain = (code: number | undefined) => (code !== undefined && code >= 1 && code <= 4 ? 5 - code : 0);
const relevant = (code: number | undefined) => code !== undefined && code >= 1 && code <= 4;

export function ndcgAt(ranked: number[], judged: Map<number, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((d, i) => (dcg += gain(judged.get(d)) / Math.log2(i + 2)));
  const ideal = [...judged.values()].map(gain).filter((g) => g > 0).sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => (idcg += g / Math.log2(i + 2)));
  return idcg > 0 ? dcg / idcg : 0;
}

export function recallAt(ranked: number[], judged: Map<number, number>, k: number): number {
  const rel = [...judged.entries()].filter(([, c]) => relevant(c)).length;
  if (!rel) return 0;
  return ranked.slice(0, k).filter((d) => relevant(judged.get(d))).length / rel;
}

export function averagePrecision(ranked: number[], judged: Map<number, number>): number {
  const rel = [...judged.entries()].filter(([, c]) => relevant(c)).length;
  if (!rel) return 0;
  let hits = 0;
  let sum = 0;
  ranked.forEach((d, i) => {
    if (relevant(judged.get(d))) sum += ++hits / (i + 1);
  });
  return sum / rel;
}

export interface QualityReport {
  queries: number;
  ndcg10: number;
  recall100: number;
  map: number;
  /** nDCG@10 of each evaluated query, in query order (for paired comparisons). */
  perQueryNdcg10: number[];
}

/**
 * Mean nDCG@10, recall@100 and MAP (over the top 1,000) for a scoring function that returns
 * one score per document index. Queries without a document of code 1..4 are skipped.
 */
export function evaluate(c: Cranfield, score: (q: CranQuery, qi: number) => ArrayLike<number>): QualityReport {
  let n = 0, ndcg = 0, recall = 0, map = 0;
  const perQueryNdcg10: number[] = [];
  c.queries.forEach((q, qi) => {
    const judged = c.qrels.get(q.id);
    if (!judged || ![...judged.values()].some(relevant)) return;
    const ranked = topK(score(q, qi), 1000).map((i) => c.docs[i]!.id);
    n++;
    const nd = ndcgAt(ranked, judged, 10);
    perQueryNdcg10.push(nd);
    ndcg += nd;
    recall += recallAt(ranked, judged, 100);
    map += averagePrecision(ranked, judged);
  });
  return { queries: n, ndcg10: ndcg / n, recall100: recall / n, map: map / n, perQueryNdcg10 };
}

/**
 * Paired bootstrap of mean(a − b) over queries (seeded): the mean difference and its 95% interval.
 */
export function pairedBootstrap(a: number[], b: number[], resamples = 2000, seed = 7): { diff: number; lo: number; hi: number } {
  if (a.length !== b.length || !a.length) throw new Error('pairedBootstrap: arrays must have the same, non-zero length');
  const d = a.map((x, i) => x - b[i]!);
  const mean = d.reduce((s, x) => s + x, 0) / d.length;
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let t = 0;
    for (let i = 0; i < d.length; i++) t += d[Math.floor(rnd() * d.length)]!;
    means.push(t / d.length);
  }
  means.sort((x, y) => x - y);
  return { diff: mean, lo: means[Math.floor(0.025 * resamples)]!, hi: means[Math.floor(0.975 * resamples)]! };
}

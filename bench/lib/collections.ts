/**
 * The IR test collections in ../shared/datasets as one shape, for the quality benchmark:
 * Cranfield (graded judgments), NPL and ADI (binary). Each README gives the format and quirks.
 *
 * Relevance: `grade` > 0 is relevant. Cranfield's codes become grades 5 − code (codes 1..4;
 * `-1` → 0), the others are 1. nDCG uses the grades as linear gains.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCranfield } from './cranfield.js';

export interface Doc { id: number; title: string; text: string }
export interface Query { id: number; text: string }
export interface Collection {
  name: string;
  docs: Doc[];
  queries: Query[];
  /** query id → (doc id → grade; > 0 relevant). */
  qrels: Map<number, Map<number, number>>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
export const DATASETS_DIR = process.env.RAGLOOM_DATASETS ?? resolve(HERE, '..', '..', '..', 'shared', 'datasets');

const clean = (s: string) => s.replace(/\s+/g, ' ').trim();

function addQrel(q: Map<number, Map<number, number>>, query: number, doc: number, grade: number): void {
  let m = q.get(query);
  if (!m) q.set(query, (m = new Map()));
  m.set(doc, grade);
}

export function cranfield(dir = join(DATASETS_DIR, 'cranfield')): Collection | null {
  const c = loadCranfield(dir);
  if (!c) return null;
  const qrels = new Map<number, Map<number, number>>();
  for (const [q, m] of c.qrels) for (const [d, code] of m) addQrel(qrels, q, d, code >= 1 && code <= 4 ? 5 - code : 0);
  return { name: 'cranfield', docs: c.docs, queries: c.queries, qrels };
}

/** NPL's records: an id alone on a line, text lines, a line of only `/`. */
function nplRecords(text: string): Array<{ id: number; text: string }> {
  const out: Array<{ id: number; text: string }> = [];
  let cur: { id: number; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!cur) {
      if (/^\d+$/.test(t)) cur = { id: Number(t), lines: [] };
      continue;
    }
    if (t === '/') {
      out.push({ id: cur.id, text: clean(cur.lines.join(' ')) });
      cur = undefined;
    } else cur.lines.push(t);
  }
  return out;
}

export function npl(dir = join(DATASETS_DIR, 'npl')): Collection | null {
  const f = (n: string) => join(dir, n);
  if (!['doc-text', 'query-text', 'rlv-ass'].every((n) => existsSync(f(n)))) return null;
  const read = (n: string) => readFileSync(f(n), 'utf8').replace(/\r/g, '');
  // No titles: the first few words name the document (as a file name would).
  const docs = nplRecords(read('doc-text')).filter((d) => d.text).map((d) => ({ id: d.id, title: d.text.split(' ').slice(0, 8).join(' '), text: d.text }));
  const queries = nplRecords(read('query-text')).map((q) => ({ id: q.id, text: q.text.toLowerCase() }));
  const qrels = new Map<number, Map<number, number>>();
  for (const r of nplRecords(read('rlv-ass'))) for (const d of r.text.split(' ').filter(Boolean)) addQrel(qrels, r.id, Number(d), 1);
  return { name: 'npl', docs, queries, qrels };
}

/** SMART tagged records (`.I n`, then `.T` / `.A` / `.W` blocks). */
function smart(text: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  let cur: Record<string, string> | undefined;
  let field = '';
  for (const line of text.split('\n')) {
    const m = /^\.([A-Z])(?:\s+(.*))?$/.exec(line);
    if (m) {
      if (m[1] === 'I') out.push((cur = { I: (m[2] ?? '').trim() }));
      else if (cur) cur[(field = m[1]!)] = '';
      continue;
    }
    if (cur && field) cur[field] += `${line}\n`;
  }
  return out;
}

export function adi(dir = join(DATASETS_DIR, 'adi')): Collection | null {
  const f = (n: string) => join(dir, n);
  if (!['ADI.ALL', 'ADI.QRY', 'ADI.REL'].every((n) => existsSync(f(n)))) return null;
  const read = (n: string) => readFileSync(f(n), 'utf8').replace(/\r/g, '');
  const docs = smart(read('ADI.ALL')).map((r) => ({ id: Number(r.I), title: clean(r.T ?? ''), text: clean(`${r.T ?? ''}\n${r.W ?? ''}`) }));
  const queries = smart(read('ADI.QRY')).map((r) => ({ id: Number(r.I), text: clean(r.W ?? '') }));
  const qrels = new Map<number, Map<number, number>>();
  for (const line of read('ADI.REL').split('\n')) {
    const p = line.trim().split(/\s+/);
    if (p.length >= 2 && p[0] && p[1]) addQrel(qrels, Number(p[0]), Number(p[1]), 1);
  }
  return { name: 'adi', docs, queries, qrels };
}

/** Every collection that is present. */
export function loadCollections(names = ['cranfield', 'npl', 'adi']): Collection[] {
  const loaders: Record<string, () => Collection | null> = { cranfield: () => cranfield(), npl: () => npl(), adi: () => adi() };
  return names.map((n) => loaders[n]?.() ?? null).filter((c): c is Collection => !!c);
}

// ---------------------------------------------------------------- metrics

/** nDCG@k with linear gains (the grades), log2(rank + 1) discount, ideal from all judged documents. */
export function ndcg(ranked: number[], judged: Map<number, number>, k: number): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) dcg += (judged.get(ranked[i]!) ?? 0) / Math.log2(i + 2);
  const ideal = [...judged.values()].filter((g) => g > 0).sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  return idcg ? dcg / idcg : 0;
}

export function recall(ranked: number[], judged: Map<number, number>, k: number): number {
  const rel = [...judged.entries()].filter(([, g]) => g > 0).map(([d]) => d);
  if (!rel.length) return 0;
  const top = new Set(ranked.slice(0, k));
  return rel.filter((d) => top.has(d)).length / rel.length;
}

export function averagePrecision(ranked: number[], judged: Map<number, number>): number {
  const nrel = [...judged.values()].filter((g) => g > 0).length;
  if (!nrel) return 0;
  let hits = 0;
  let sum = 0;
  ranked.forEach((d, i) => {
    if ((judged.get(d) ?? 0) > 0) sum += ++hits / (i + 1);
  });
  return sum / nrel;
}

/** The judged queries that have at least one relevant document. */
export function judgedQueries(c: Collection): Query[] {
  return c.queries.filter((q) => [...(c.qrels.get(q.id)?.values() ?? [])].some((g) => g > 0));
}

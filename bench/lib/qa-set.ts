/**
 * The single-fact question set of bench/qa.ts (bench/data/qa-set.json): loading its documents,
 * checking that an answer or a chunk holds a fact, the seeded tuning / held-out split, and
 * Wilson intervals for the rates.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { rng } from './synth.js';

export type Style = 'verbatim' | 'paraphrased';
export type Part = 'tune' | 'held-out';
/** Every entry must occur; an entry that is a list is satisfied by any one of its strings. */
export type Check = Array<string | string[]>;

export interface QaDocument { name: string; kind: string; source: string; sha256: string }
export interface QaFact { id: string; doc: string; topic: string; check: Check; part: Part }
export interface QaQuestion { id: string; fact: string; style: Style; question: string }
/** A question none of the documents answers: the right answer is a decline. */
export interface QaUnanswerable { id: string; part: Part; question: string }
export interface QaSet {
  description: string;
  written: string;
  split: { seed: number; method: string };
  documents: QaDocument[];
  facts: QaFact[];
  questions: QaQuestion[];
  unanswerable: QaUnanswerable[];
}

const CORPUS = resolve(import.meta.dirname, '../../../shared/docs-corpus');
const NODE_MODULES = resolve(import.meta.dirname, '../../node_modules');

/** Lower case, whitespace collapsed, every dash a hyphen, curly quotes straight. */
export function normalise(s: string): string {
  return s
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u201b]/g, "'")
    .replace(/[\u201c\u201d\u201f]/g, '"')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** Whether `text` holds the fact: every entry of `check` occurs in it. */
export function holds(text: string, check: Check): boolean {
  const t = normalise(text);
  return check.every((e) => (Array.isArray(e) ? e : [e]).some((s) => t.includes(normalise(s))));
}

/**
 * The split the file records (`split.method`): per document (in the file's order), its facts in id
 * order shuffled with mulberry32(seed), then dealt alternately, each document starting with the
 * part that holds fewer facts so far (ties: held-out), so that every kind of document is in both.
 */
export function seededSplit(facts: Array<{ id: string; doc: string }>, docs: string[], seed: number): Map<string, Part> {
  const rnd = rng(seed);
  const out = new Map<string, Part>();
  let tune = 0;
  let held = 0;
  for (const d of docs) {
    const ids = facts.filter((f) => f.doc === d).map((f) => f.id).sort();
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    let next: Part = tune < held ? 'tune' : 'held-out';
    for (const id of ids) {
      out.set(id, next);
      if (next === 'tune') tune++;
      else held++;
      next = next === 'tune' ? 'held-out' : 'tune';
    }
  }
  return out;
}

/** Reads the set and checks it: every question's fact and document exist, the parts are the seeded split. */
export function loadQaSet(path: string): QaSet {
  const set = JSON.parse(readFileSync(path, 'utf8')) as QaSet;
  const facts = new Map(set.facts.map((f) => [f.id, f]));
  const docs = new Set(set.documents.map((d) => d.name));
  for (const f of set.facts) if (!docs.has(f.doc)) throw new Error(`${path}: fact ${f.id} names an unknown document ${f.doc}`);
  for (const q of set.questions) if (!facts.has(q.fact)) throw new Error(`${path}: question ${q.id} names an unknown fact ${q.fact}`);
  const split = seededSplit(set.facts, set.documents.map((d) => d.name), set.split.seed);
  const wrong = set.facts.filter((f) => split.get(f.id) !== f.part).map((f) => f.id);
  const none = seededSplit(set.unanswerable.map((u) => ({ id: u.id, doc: '(none)' })), ['(none)'], set.split.seed);
  wrong.push(...set.unanswerable.filter((u) => none.get(u.id) !== u.part).map((u) => u.id));
  if (wrong.length) throw new Error(`${path}: the parts of ${wrong.join(', ')} are not the seeded split (seed ${set.split.seed})`);
  return set;
}

/**
 * The bytes of a document: `corpus:NAME` from ../shared/docs-corpus, `npm:PKG@VERSION/PATH` from
 * this checkout's node_modules. Undefined (with the reason) when absent or not the recorded bytes.
 */
export function documentBytes(d: QaDocument): { bytes?: Uint8Array; missing?: string } {
  let file: string;
  if (d.source.startsWith('corpus:')) file = join(CORPUS, d.source.slice('corpus:'.length));
  else {
    const m = /^npm:((?:@[^/]+\/)?[^@/]+)@([^/]+)\/(.+)$/.exec(d.source);
    if (!m) return { missing: `unknown source ${d.source}` };
    file = join(NODE_MODULES, m[1]!, m[3]!);
  }
  if (!existsSync(file)) return { missing: `${file} is absent` };
  const bytes = new Uint8Array(readFileSync(file));
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== d.sha256) return { missing: `${file} is not the recorded file (sha256 ${sha.slice(0, 12)}…, expected ${d.sha256.slice(0, 12)}…)` };
  return { bytes };
}

/** Wilson score interval (95%) of k successes in n trials. */
export function wilson(k: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - h), Math.min(1, c + h)];
}

/** `0.83 [0.71–0.91]`: a rate with its 95% interval. */
export function rateText(k: number, n: number): string {
  if (!n) return '—';
  const [lo, hi] = wilson(k, n);
  return `${(k / n).toFixed(2)} [${lo.toFixed(2)}–${hi.toFixed(2)}]`;
}

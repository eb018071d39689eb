/**
 * WordNet's relations between English stems, as the built-in answer model uses them: a sentence
 * that words a question's term differently ("mandatory" → "compulsory", "breach" → "violation")
 * gets part of the term's credit. The table is `models/ragloom-related-en/related.tsv.gz`, built
 * from WordNet 3.1 by scripts/related-terms/build.ts (see the model's README); it is read once,
 * on first use (~0.7 MB gzipped, 25k stems): by the built-in model before its first answer, off
 * the event loop (`ready`; reading and unzipping it in one go stalled a process ~90 ms), or at
 * the first look-up by a caller that does not wait for it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gunzipSync } from 'node:zlib';
import { builtinModelsDir } from '../embed/builtin-models.js';

/**
 * How a stem is related: WordNet's same synset, derivation or pertainym, similar / see-also
 * synset, hypernym; or a GloVe neighbour (`g`, its code holds the cosine × 100).
 */
export type Relation = 's' | 'd' | 'a' | 'h' | 'g';

/** Weight of each relation, and the factor per rank of the sense it comes from (WordNet's first sense is rank 0). */
export interface RelationWeights {
  s: number;
  d: number;
  a: number;
  h: number;
  /** A GloVe neighbour's weight is `g` × its cosine, from a cosine of `gMin` on. */
  g: number;
  gMin: number;
  /**
   * GloVe's neighbours of a term the passages hold as written count this share: where the
   * documents use the question's own word, its neighbour is as likely a contrast ("Tuesday" for
   * "Monday", "south" for "north") as another wording.
   */
  gHeld: number;
  /** Multiplies the weight once per sense rank. */
  senseDecay: number;
}

export const DEFAULT_RELATION_WEIGHTS: Readonly<RelationWeights> = Object.freeze({ s: 1, d: 0.8, a: 0.6, h: 0, g: 1, gMin: 0.6, gHeld: 0, senseDecay: 0.7 });

/**
 * A stem → its related stems, weighted in (0, 1]; `held`: the passages hold the stem itself (see
 * `gHeld`). `ready()` reads the tables without blocking; a look-up before it settles reads them at once.
 */
export type RelatedTerms = ((stem: string, held?: boolean) => ReadonlyMap<string, number>) & { ready?: () => Promise<void> };

const NONE: ReadonlyMap<string, number> = new Map();
let rows: Map<string, string> | undefined;
let loading: Promise<void> | undefined;
const gunzipAsync = promisify(gunzip);

/** The tables' files, shipped with the package: WordNet's relations, GloVe's neighbours. */
export function relatedTermsFiles(): string[] {
  return ['related.tsv.gz', 'neighbours.tsv.gz'].map((f) => join(builtinModelsDir(), 'ragloom-related-en', f));
}

const installed = (): string[] => relatedTermsFiles().filter((f) => existsSync(f));

/** Adds a file's lines (`stem\tstem:code …`) to `out`: stem → its row, both tables' joined. */
function addLines(out: Map<string, string>, lines: string[]): void {
  for (const line of lines) {
    const tab = line.indexOf('\t');
    if (tab <= 0) continue;
    const key = line.slice(0, tab);
    const had = out.get(key);
    out.set(key, had ? `${had} ${line.slice(tab + 1)}` : line.slice(tab + 1));
  }
}

/** The rows, read now if `ready` has not read them yet. */
function table(): Map<string, string> {
  if (rows) return rows;
  const out = new Map<string, string>();
  for (const f of installed()) addLines(out, gunzipSync(readFileSync(f)).toString('utf8').split('\n'));
  return (rows = out);
}

/**
 * Reads the rows with the event loop free: the files read and unzipped on libuv's threads, the
 * lines taken a slice at a time (the ~60k lines at once held it ~30 ms). Once.
 */
function load(): Promise<void> {
  return (loading ??= (async () => {
    const texts = await Promise.all(installed().map(async (f) => (await gunzipAsync(await readFile(f))).toString('utf8')));
    const out = new Map<string, string>();
    for (const text of texts) {
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i += 5_000) {
        if (rows) return; // a look-up that could not wait read them meanwhile
        addLines(out, lines.slice(i, i + 5_000));
        await new Promise((r) => setImmediate(r));
      }
    }
    rows ??= out;
  })());
}

/**
 * The related stems of a stem under `weights` (relations of weight 0 left out), or undefined when
 * the table is not installed. Nothing is read until `ready()` or the first look-up.
 */
export function wordnetRelatedTerms(weights: Partial<RelationWeights> = {}): RelatedTerms | undefined {
  if (!installed().length) return undefined;
  const w = { ...DEFAULT_RELATION_WEIGHTS, ...weights };
  const memo = new Map<string, ReadonlyMap<string, number>>();
  const related: RelatedTerms = (stem, held = false) => {
    const key = held ? `${stem} held` : stem;
    let out = memo.get(key);
    if (out) return out;
    const row = table().get(stem);
    if (!row) return NONE;
    const m = new Map<string, number>();
    for (const item of row.split(' ')) {
      const colon = item.lastIndexOf(':');
      const rel = item[colon + 1] as Relation;
      const n = Number(item.slice(colon + 2));
      const weight = rel === 'g' ? (n / 100 >= w.gMin ? ((held ? w.gHeld : 1) * w.g * n) / 100 : 0) : (w[rel] ?? 0) * w.senseDecay ** n;
      const stem = item.slice(0, colon);
      if (weight > (m.get(stem) ?? 0)) m.set(stem, weight);
    }
    out = m.size ? m : NONE;
    if (memo.size < 10_000) memo.set(key, out);
    return out;
  };
  related.ready = load;
  return related;
}

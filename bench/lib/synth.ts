/**
 * The synthetic workload of shared/reference/peer-bench.md, deterministic:
 *
 * - vocabulary: 20,000 pronounceable pseudo-words (peer-bench used a word list; any fixed
 *   vocabulary ranked by frequency works the same), ranked so that Zipf(s=1) draws rank r;
 * - chunk i: 100–140 words, each Zipf-drawn or, with probability 0.25, one of 40 content words of
 *   one of 500 topics; chunk i depends only on (seed, i), so 10k ⊂ 100k ⊂ 1M;
 * - vectors: 384-d unit vectors = normalise(Σ idf(w)·vec(w) + 0.15·noise), where the word
 *   vectors lie near a random 48-d subspace (vec(w) = A·z_w + 0.15·e_w);
 * - 100 queries of 2–4 content words from a random source chunk (< 10k), embedded the same way.
 */

export const DIM = 384;
const LATENT = 48;
const VOCAB = 20_000;
const TOPICS = 500;
const TOPIC_WORDS = 40;

/** mulberry32: a small, fast, seedable PRNG. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gauss(r: () => number): number {
  const u = Math.max(1e-12, r());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'ge', 'hu', 'ji', 'ba', 'fo', 'ly', 'wa', 'xe', 'qu',
  'tra', 'ple', 'sto', 'gri', 'bla', 'cre', 'dro', 'fla', 'glo', 'pri', 'sca', 'tho'];

export class Workload {
  readonly words: string[] = [];
  private readonly zipfCdf: Float64Array;
  private readonly topics: Int32Array;
  private readonly wordVecs: Float32Array;
  private readonly idf: Float32Array;

  constructor(readonly seed = 42) {
    const r = rng(seed);
    const seen = new Set<string>();
    while (this.words.length < VOCAB) {
      const n = 2 + Math.floor(r() * 3);
      let w = '';
      for (let i = 0; i < n; i++) w += SYL[Math.floor(r() * SYL.length)];
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    this.zipfCdf = new Float64Array(VOCAB);
    let acc = 0;
    for (let i = 0; i < VOCAB; i++) this.zipfCdf[i] = acc += 1 / (i + 1);
    for (let i = 0; i < VOCAB; i++) this.zipfCdf[i]! /= acc;
    // Topic words come from the mid-frequency band (ranks 500..20000).
    this.topics = new Int32Array(TOPICS * TOPIC_WORDS);
    for (let i = 0; i < this.topics.length; i++) this.topics[i] = 500 + Math.floor(r() * (VOCAB - 500));
    // Word vectors near a random 48-d subspace.
    const A = Float32Array.from({ length: DIM * LATENT }, () => gauss(r) / Math.sqrt(LATENT));
    this.wordVecs = new Float32Array(VOCAB * DIM);
    const z = new Float32Array(LATENT);
    for (let w = 0; w < VOCAB; w++) {
      for (let k = 0; k < LATENT; k++) z[k] = gauss(r);
      for (let d = 0; d < DIM; d++) {
        let s = 0;
        for (let k = 0; k < LATENT; k++) s += A[d * LATENT + k]! * z[k]!;
        this.wordVecs[w * DIM + d] = s + 0.15 * gauss(r);
      }
    }
    // idf proxy from the Zipf rank: frequent words weigh little.
    this.idf = Float32Array.from({ length: VOCAB }, (_, i) => Math.log(2 + i));
  }

  private zipf(u: number): number {
    let lo = 0, hi = VOCAB - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.zipfCdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Word ids of chunk i. */
  chunkWords(i: number): Int32Array {
    const r = rng((this.seed * 1_000_003) ^ (i * 2_654_435_761));
    const n = 100 + Math.floor(r() * 41);
    const topic = Math.floor(r() * TOPICS);
    const out = new Int32Array(n);
    for (let k = 0; k < n; k++) out[k] = r() < 0.25 ? this.topics[topic * TOPIC_WORDS + Math.floor(r() * TOPIC_WORDS)]! : this.zipf(r());
    return out;
  }

  text(ids: Int32Array): string {
    const parts: string[] = [];
    for (let k = 0; k < ids.length; k++) {
      let w = this.words[ids[k]!]!;
      if (k % 12 === 0) w = w[0]!.toUpperCase() + w.slice(1);
      parts.push(k % 12 === 11 || k === ids.length - 1 ? `${w}.` : w);
    }
    return parts.join(' ');
  }

  vector(ids: Int32Array, noiseSeed: number): Float32Array {
    const v = new Float32Array(DIM);
    for (let k = 0; k < ids.length; k++) {
      const w = ids[k]!;
      const f = this.idf[w]!;
      const o = w * DIM;
      for (let d = 0; d < DIM; d++) v[d]! += f * this.wordVecs[o + d]!;
    }
    let n = 0;
    for (let d = 0; d < DIM; d++) n += v[d]! * v[d]!;
    n = Math.sqrt(n) || 1;
    const r = rng(noiseSeed);
    let m = 0;
    for (let d = 0; d < DIM; d++) {
      v[d] = v[d]! / n + (0.15 * gauss(r)) / Math.sqrt(DIM);
      m += v[d]! * v[d]!;
    }
    m = Math.sqrt(m);
    for (let d = 0; d < DIM; d++) v[d]! /= m;
    return v;
  }

  chunk(i: number): { text: string; vector: Float32Array } {
    const ids = this.chunkWords(i);
    return { text: this.text(ids), vector: this.vector(ids, i * 7919 + 1) };
  }

  /** 100 queries: 2–4 mid-frequency words of a source chunk < 10k. */
  queries(n = 100): Array<{ text: string; vector: Float32Array; source: number }> {
    const r = rng(this.seed + 99);
    const out: Array<{ text: string; vector: Float32Array; source: number }> = [];
    while (out.length < n) {
      const src = Math.floor(r() * 10_000);
      const ids = [...new Set(this.chunkWords(src))].filter((w) => w >= 500);
      if (ids.length < 4) continue;
      const k = 2 + Math.floor(r() * 3);
      const pick: number[] = [];
      while (pick.length < k) {
        const w = ids[Math.floor(r() * ids.length)]!;
        if (!pick.includes(w)) pick.push(w);
      }
      const qi = Int32Array.from(pick);
      out.push({ text: pick.map((w) => this.words[w]).join(' '), vector: this.vector(qi, 1e9 + out.length), source: src });
    }
    return out;
  }
}

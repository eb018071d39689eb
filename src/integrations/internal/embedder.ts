/**
 * ragloom's embedding models outside a Client: the built-in ones (offline, shipped in the package)
 * or any model a ModelConfig describes (an OpenAI-compatible server, a local ONNX folder), for the
 * frameworks' embedding interfaces.
 */
import { ModelRegistry, DEFAULT_EMBEDDING_MODEL, type Embedder, type ModelConfig } from '../../embed/index.js';

export interface EmbeddingOptions {
  /**
   * `name@factory` of the model, or an Embedder instance. The same id as a dataset's
   * `embedding_model` gives the same vectors as ragloom's own question embedding.
   * @default 'ragloom-static-en-256@Builtin' (DEFAULT_EMBEDDING_MODEL)
   */
  model?: string | Embedder;
  /** Models that are not built in (`type: 'embedding'`), as `new Client({ models })` takes them. */
  models?: ModelConfig[];
}

/** The embedder the options name; a model that cannot be used throws a TypeError naming it. */
export function resolveEmbedder(o: EmbeddingOptions = {}): Embedder {
  if (o.model !== undefined && typeof o.model !== 'string') {
    if (typeof o.model?.embed !== 'function' || typeof o.model.id !== 'string') throw new TypeError('"model" must be a model id (name@factory) or an Embedder');
    return o.model;
  }
  const id = o.model ?? DEFAULT_EMBEDDING_MODEL;
  try {
    return new ModelRegistry(o.models ?? []).embedder(id);
  } catch (e) {
    throw new TypeError(`Embedding model "${id}": ${(e as Error).message} (built-in models: \`ragloom models ls\`; others need { models: [{ type: 'embedding', name, factory, base_url | path }] })`, { cause: e });
  }
}

/** Embeds texts as plain number arrays (what every framework's interface returns). */
export async function embedTexts(e: Embedder, texts: string[], signal?: AbortSignal): Promise<number[][]> {
  const vs = await e.embed(texts, signal ? { signal } : undefined);
  return vs.map((v) => Array.from(v));
}

/**
 * The model's id now, its embedder on first use: a store whose dataset ragloom embeds (a remote
 * server's own model) never needs the model here, so naming it must not require it.
 */
export function lazyEmbedder(o: EmbeddingOptions = {}): { readonly id: string; get(): Embedder } {
  if (o.model !== undefined && typeof o.model !== 'string') {
    const e = resolveEmbedder(o);
    return { id: e.id, get: () => e };
  }
  let e: Embedder | undefined;
  return { id: o.model ?? DEFAULT_EMBEDDING_MODEL, get: () => (e ??= resolveEmbedder(o)) };
}

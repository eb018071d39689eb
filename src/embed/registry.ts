import type { Embedder } from './types.js';
import { UseLiteEmbedder } from './use.js';
import { parseModelId } from './model-id.js';
import { OpenAIHttpEmbedder } from './providers/openai-http.js';
import { TransformersEmbedder } from './providers/transformers.js';
import { StaticEmbedder } from './providers/static.js';
import { BUILTIN_MODELS, DEFAULT_BUILTIN_MODEL } from './builtin-models.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RAGFLOW_EMBEDDING_MODELS, RAGFLOW_FACTORIES } from './catalogue.js';

export type ModelType = 'chat' | 'embedding' | 'rerank' | 'image2text';

/** A model the caller registers for its tenant (RAGFlow's "tenant LLM"). */
export interface ModelConfig {
  type: ModelType;
  name: string;
  factory: string;
  base_url?: string;
  api_key?: string;
  /** Local folder (transformers.js layout) for HuggingFace / local ONNX models. */
  path?: string;
  /** Vector size, when the provider cannot tell before the first call. */
  dim?: number;
  /** Chat models: the context window in tokens (knowledge and history are fitted to it). @default 8192 */
  max_tokens?: number;
}

export const BUILTIN_FACTORY = 'Builtin';

interface BuiltinEmbedding {
  name: string;
  dim: number;
  create(id: string): Embedder;
}

/**
 * Embedding models that ship with ragloom: offline, no configuration. The static models run in
 * plain TypeScript (`StaticEmbedder`): they need neither onnxruntime nor transformers.js.
 */
export const BUILTIN_EMBEDDINGS: BuiltinEmbedding[] = [
  ...BUILTIN_MODELS.map((m) => ({ name: m.name, dim: m.dim, create: (id: string) => new StaticEmbedder({ id, path: m.path, dim: m.dim }) })),
  { name: 'universal-sentence-encoder-lite', dim: 512, create: (id) => new UseLiteEmbedder(id) },
];

/** Chosen by measurement (docs/embeddings.md): best hybrid quality among models ≥ 2,000 chunks/s. */
export const DEFAULT_EMBEDDING_MODEL = `${DEFAULT_BUILTIN_MODEL}@Builtin`;

/** Where `ragloom models pull` puts hub models, and where HuggingFace models are looked up. */
export function modelCacheDir(): string {
  return process.env.RAGLOOM_MODELS_DIR ?? join(homedir(), '.cache', 'ragloom', 'models');
}

/** Names (and factories) compare as RAGFlow's database compares them: case-insensitively. Keyed by the lower-cased factory. */
const CATALOGUE = new Map(Object.entries(RAGFLOW_EMBEDDING_MODELS).map(([f, names]) => [f.toLowerCase(), new Set(names.map((n) => n.toLowerCase()))]));

/**
 * Is `id` an embedding model of RAGFlow's catalogue, as RAGFlow reads an id: `name@factory` when
 * the factory is one it knows (several '@': the last one splits, unchecked), else the whole id is
 * a name, found under any factory.
 */
export function inEmbeddingCatalogue(id: string): boolean {
  const parts = id.split('@');
  let name = id;
  let factory: string | undefined;
  if (parts.length > 2 || (parts.length === 2 && RAGFLOW_FACTORIES.has(parts[1]!))) {
    name = parts.slice(0, -1).join('@');
    factory = parts[parts.length - 1];
  }
  const key = name.toLowerCase();
  if (factory !== undefined) return CATALOGUE.get(factory.toLowerCase())?.has(key) ?? false;
  for (const names of CATALOGUE.values()) if (names.has(key)) return true;
  return false;
}

export type ModelStatus = 'ok' | 'unauthorized' | 'unsupported';

/** Which models a client (tenant) may use, and their live instances. */
export class ModelRegistry {
  private readonly models = new Map<string, ModelConfig>();
  private readonly embedders = new Map<string, Embedder>();

  constructor(models: ModelConfig[] = []) {
    for (const m of models) this.register(m);
  }

  register(m: ModelConfig): void {
    if (!m || typeof m.name !== 'string' || typeof m.factory !== 'string' || !m.name || !m.factory) {
      throw new TypeError('A model needs non-empty `name` and `factory` strings');
    }
    this.models.set(`${m.type}:${m.name}@${m.factory}`, { ...m });
    this.embedders.delete(`${m.name}@${m.factory}`);
  }

  get(type: ModelType, id: string): ModelConfig | undefined {
    return this.models.get(`${type}:${id}`);
  }

  list(type?: ModelType): ModelConfig[] {
    return [...this.models.values()].filter((m) => !type || m.type === type);
  }

  /**
   * Can this tenant embed with `id`? RAGFlow's verify_embedding_availability: a model the tenant
   * has (registered, or one of ragloom's built-in models) is ok; one of RAGFlow's catalogue the
   * tenant has not configured is unauthorized; anything else unsupported. (RAGFlow takes any
   * `…@Builtin` id; ragloom runs only its own built-in models, so another is unauthorized when
   * RAGFlow's catalogue lists it, else unsupported.)
   */
  embeddingStatus(id: string): ModelStatus {
    if (this.get('embedding', id)) return 'ok';
    const p = parseModelId(id);
    if (p?.factory === BUILTIN_FACTORY && BUILTIN_EMBEDDINGS.some((b) => b.name === p.name)) return 'ok';
    return inEmbeddingCatalogue(id) ? 'unauthorized' : 'unsupported';
  }

  /** The live embedder for `id` (created once). Throws when the model is not usable. */
  embedder(id: string): Embedder {
    const hit = this.embedders.get(id);
    if (hit) return hit;
    const e = this.createEmbedder(id);
    this.embedders.set(id, e);
    return e;
  }

  private createEmbedder(id: string): Embedder {
    const p = parseModelId(id);
    if (p?.factory === BUILTIN_FACTORY) {
      const b = BUILTIN_EMBEDDINGS.find((x) => x.name === p.name);
      if (b) return b.create(id);
    }
    const cfg = this.get('embedding', id);
    if (!cfg) throw new Error(`Unsupported model: ${id}`);
    // Every hosted factory we know speaks the OpenAI embeddings protocol (OpenAI, Ollama /v1,
    // vLLM, TEI's OpenAI route, LocalAI, Xinference …): a base URL is all it needs.
    if (cfg.base_url) {
      return new OpenAIHttpEmbedder({ id, model: cfg.name, baseUrl: cfg.base_url, apiKey: cfg.api_key });
    }
    // A local ONNX model in the transformers.js layout, or a hub model already pulled (offline).
    if (cfg.path) return new TransformersEmbedder({ id, path: cfg.path, dim: cfg.dim });
    if (cfg.factory === 'HuggingFace') return new TransformersEmbedder({ id, hubId: cfg.name, cacheDir: modelCacheDir(), dim: cfg.dim });
    throw new Error(`Model ${id} needs a base_url (HTTP API) or a path (local ONNX folder)`);
  }

  async close(): Promise<void> {
    await Promise.all([...this.embedders.values()].map((e) => e.close?.()));
    this.embedders.clear();
  }
}

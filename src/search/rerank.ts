/**
 * Rerank models for `rerank_id`: a cross-encoder run locally through transformers.js (ONNX, from
 * a local folder or the HuggingFace hub), or an HTTP rerank API that speaks the Jina / Cohere
 * wire format (`POST {base_url}/rerank {model, query, documents, top_n}` →
 * `{results: [{index, relevance_score}]}`).
 *
 * A model is registered for the tenant with `type: 'rerank'` (`client.registerModel`); `rerank_id`
 * names it as `name@factory` (or by its bare name when that is unambiguous; resolved in
 * src/api/retrieval.ts). Failures throw RerankError. Scores are in
 * [0, 1]: HTTP scores are clamped, cross-encoder logits go through a sigmoid.
 */
import { basename, dirname } from 'node:path';
import { importOptional } from '../util/index.js';
import type { ModelConfig } from '../embed/index.js';

export interface Reranker {
  readonly id: string;
  /** One relevance score in [0, 1] per text, in order. */
  score(query: string, texts: string[]): Promise<number[]>;
}

/** A rerank model that could not score: unreachable, an HTTP error, or a model that does not load. */
export class RerankError extends Error {
  constructor(readonly modelId: string, readonly detail: string, options?: { cause?: unknown }) {
    super(`Rerank model ${modelId} ${detail}`, options);
    this.name = 'RerankError';
  }
}

/** The reranker for a registered rerank model: an HTTP API when it has a `base_url`, else a cross-encoder. */
export function createReranker(cfg: ModelConfig): Reranker {
  const id = `${cfg.name}@${cfg.factory}`;
  if (cfg.base_url) return new HttpReranker(id, cfg);
  return new CrossEncoderReranker(id, cfg);
}

const clamp01 = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

/** Jina / Cohere-compatible rerank endpoint. */
export class HttpReranker implements Reranker {
  private readonly url: string;
  constructor(readonly id: string, private readonly cfg: ModelConfig) {
    const base = cfg.base_url!.replace(/\/+$/, '');
    this.url = /\/rerank$/.test(base) ? base : `${base}/rerank`;
  }

  async score(query: string, texts: string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.cfg.api_key) headers.authorization = `Bearer ${this.cfg.api_key}`;
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.cfg.name, query, documents: texts, top_n: texts.length }),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      throw new RerankError(this.id, `is unreachable: ${(err as Error).message}`, { cause: err });
    }
    const body = (await res.json().catch(() => null)) as { results?: Array<{ index?: number; relevance_score?: number; score?: number }> } | null;
    if (!res.ok || !body || !Array.isArray(body.results)) {
      throw new RerankError(this.id, `failed: HTTP ${res.status} ${JSON.stringify(body)?.slice(0, 200) ?? ''}`);
    }
    const out = new Array<number>(texts.length).fill(0);
    for (const r of body.results) {
      if (typeof r.index === 'number' && r.index >= 0 && r.index < texts.length) out[r.index] = clamp01(Number(r.relevance_score ?? r.score ?? 0));
    }
    return out;
  }
}

type TokenizerFn = (q: string[], o: { text_pair: string[]; padding: boolean; truncation: boolean }) => unknown;
type ModelFn = (inputs: unknown) => Promise<{ logits: { data: ArrayLike<number>; dims: number[] } }>;

/** A sequence-classification cross-encoder (e.g. bge-reranker, ms-marco-MiniLM) via transformers.js. */
export class CrossEncoderReranker implements Reranker {
  private loaded?: Promise<{ tok: TokenizerFn; model: ModelFn }>;
  constructor(readonly id: string, private readonly cfg: ModelConfig, private readonly batch = 16) {}

  private load(): Promise<{ tok: TokenizerFn; model: ModelFn }> {
    this.loaded ??= (async () => {
      const tf = (await importOptional('@huggingface/transformers', `Rerank model ${this.id}`, () => import('@huggingface/transformers'))) as unknown as {
        env: { localModelPath: string; allowLocalModels: boolean; allowRemoteModels: boolean };
        AutoTokenizer: { from_pretrained(id: string, o?: object): Promise<TokenizerFn> };
        AutoModelForSequenceClassification: { from_pretrained(id: string, o?: object): Promise<ModelFn> };
      };
      let name = this.cfg.name;
      const opts: Record<string, unknown> = {};
      if (this.cfg.path) {
        tf.env.allowLocalModels = true;
        tf.env.localModelPath = `${dirname(this.cfg.path)}/`;
        name = basename(this.cfg.path);
        opts.local_files_only = true;
      }
      const [tok, model] = await Promise.all([
        tf.AutoTokenizer.from_pretrained(name, opts),
        tf.AutoModelForSequenceClassification.from_pretrained(name, { ...opts, dtype: 'fp32' }),
      ]);
      return { tok, model };
    })();
    this.loaded.catch(() => { this.loaded = undefined; });
    return this.loaded;
  }

  async score(query: string, texts: string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    let m: { tok: TokenizerFn; model: ModelFn };
    try {
      m = await this.load();
    } catch (err) {
      throw new RerankError(this.id, `could not be loaded: ${(err as Error).message}`, { cause: err });
    }
    const out: number[] = [];
    for (let s = 0; s < texts.length; s += this.batch) {
      const part = texts.slice(s, s + this.batch);
      const inputs = m.tok(part.map(() => query), { text_pair: part, padding: true, truncation: true });
      const { logits } = await m.model(inputs);
      const cols = logits.dims[1] ?? 1;
      for (let i = 0; i < part.length; i++) {
        // One logit: relevance = sigmoid; two: softmax probability of the "relevant" class.
        const x = cols === 1 ? logits.data[i]! : logits.data[i * cols + 1]! - logits.data[i * cols]!;
        out.push(1 / (1 + Math.exp(-x)));
      }
    }
    return out;
  }
}

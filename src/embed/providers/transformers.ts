/**
 * Embeddings with ONNX models in the transformers.js layout (`config.json`, `tokenizer.json`,
 * `tokenizer_config.json`, `onnx/model.onnx`), run by `@huggingface/transformers` on
 * onnxruntime-node (CPU, fp32).
 *
 * A model comes from a local folder (`path`), or from the Hugging Face hub (`hubId`): files
 * already in `cacheDir` load offline; they are downloaded only when `allowRemote` is true.
 */
import { resolve } from 'node:path';
import type { Embedder } from '../types.js';
import { importOptional } from '../../util/index.js';

export interface TransformersEmbedderOptions {
  /** The model id, `name@factory`. */
  id: string;
  /** A local folder in the transformers.js layout. Wins over `hubId`. */
  path?: string;
  /** A Hugging Face hub id, e.g. `Xenova/all-MiniLM-L6-v2`, looked up in `cacheDir`. */
  hubId?: string;
  /** Where hub models are cached. @default transformers.js' own cache folder */
  cacheDir?: string;
  /** Allow downloading hub files that are not in `cacheDir`. @default false */
  allowRemote?: boolean;
  /**
   * How token vectors become one vector: `mean` (masked mean; a `sentence_embedding` output is
   * used as is when the graph has one), `cls` (first token) or `none` (the model's output is
   * already one vector per text: `sentence_embedding`, `pooler_output` or a 2-D output).
   * @default 'mean'
   */
  pooling?: 'mean' | 'cls' | 'none';
  /** L2-normalise the vectors. Leave on: the `Embedder` contract is unit vectors. @default true */
  normalize?: boolean;
  /** Texts per model call. @default 64 */
  batchSize?: number;
  /** The vector dimension, when known before loading (e.g. for built-in models). */
  dim?: number;
  /** ONNX Runtime intra-op threads. @default onnxruntime's default (the number of cores) */
  threads?: number;
}

export const TRANSFORMERS_DEFAULTS: Readonly<{ pooling: 'mean' | 'cls' | 'none'; normalize: boolean; batchSize: number; allowRemote: boolean }> =
  Object.freeze({
    pooling: 'mean',
    normalize: true,
    batchSize: 64 /* texts per model call */,
    allowRemote: false,
  });

type TJS = typeof import('@huggingface/transformers');
type TTensor = import('@huggingface/transformers').Tensor;
interface OrtSession {
  inputNames: readonly string[];
  outputNames: readonly string[];
  run(feeds: Record<string, unknown>, fetches?: readonly string[]): Promise<Record<string, { data: unknown; dims: readonly number[] }>>;
}
interface Loaded {
  tokenizer: (texts: string[], o: { padding: boolean; truncation: boolean }) => Record<string, TTensor>;
  model: ((inputs: Record<string, TTensor>) => Promise<Record<string, TTensor>>) & { dispose?: () => Promise<unknown> };
  session?: OrtSession;
  fast: boolean;
}

let tjs: Promise<TJS> | undefined;
/** Loads transformers.js once, with remote models off unless a provider asks for them per call. */
function transformers(id: string): Promise<TJS> {
  tjs ??= importOptional('@huggingface/transformers', `Embedding model ${id}`, () => import('@huggingface/transformers')).then((m) => {
    m.env.allowRemoteModels = false;
    return m;
  });
  tjs.catch(() => (tjs = undefined)); // installed later: the next load finds it
  return tjs;
}

/** transformers.js keeps `allowRemoteModels` in a global `env`: loads run one at a time. */
let loadChain: Promise<unknown> = Promise.resolve();

export class TransformersEmbedder implements Embedder {
  readonly id: string;
  dim?: number;
  private readonly o: TransformersEmbedderOptions & typeof TRANSFORMERS_DEFAULTS;
  private loading?: Promise<Loaded>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(opts: TransformersEmbedderOptions) {
    if (!opts || typeof opts !== 'object') throw new TypeError('TransformersEmbedder: options are required');
    if ('localPath' in opts) throw new TypeError('Unknown option "localPath"; did you mean "path"?');
    if (!opts.path && !opts.hubId) throw new TypeError('TransformersEmbedder: "path" or "hubId" is required');
    const batchSize = opts.batchSize ?? TRANSFORMERS_DEFAULTS.batchSize;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new TypeError('TransformersEmbedder: "batchSize" must be a positive integer');
    const pooling = opts.pooling ?? TRANSFORMERS_DEFAULTS.pooling;
    if (!['mean', 'cls', 'none'].includes(pooling)) throw new TypeError(`TransformersEmbedder: unknown pooling "${pooling}"`);
    this.id = opts.id;
    this.dim = opts.dim;
    this.o = { ...TRANSFORMERS_DEFAULTS, ...opts, batchSize, pooling };
  }

  /** Loads the tokenizer and the ONNX session (once; later calls share the promise). */
  load(): Promise<void> {
    return this.loaded().then(() => undefined);
  }

  private loaded(): Promise<Loaded> {
    this.loading ??= this.doLoad();
    // A failed load may be retried (e.g. after `ragloom models pull`).
    this.loading.catch(() => (this.loading = undefined));
    return this.loading;
  }

  private async doLoad(): Promise<Loaded> {
    const m = await transformers(this.id);
    const source = this.o.path ? resolve(this.o.path) : this.o.hubId!;
    const remote = !this.o.path && this.o.allowRemote;
    const opts = {
      local_files_only: !remote,
      ...(this.o.cacheDir ? { cache_dir: resolve(this.o.cacheDir) } : {}),
    };
    const run = async (): Promise<Loaded> => {
      const prev = m.env.allowRemoteModels;
      m.env.allowRemoteModels = remote;
      try {
        const [tokenizer, model] = await Promise.all([
          m.AutoTokenizer.from_pretrained(source, opts),
          m.AutoModel.from_pretrained(source, {
            ...opts,
            dtype: 'fp32',
            device: 'cpu',
            ...(this.o.threads ? { session_options: { intraOpNumThreads: this.o.threads, interOpNumThreads: 1 } } : {}),
          }),
        ]);
        return this.wrap(tokenizer as unknown as Loaded['tokenizer'], model as unknown as Loaded['model'] & { sessions?: Record<string, OrtSession>; config?: { hidden_size?: number } });
      } catch (err) {
        const where = this.o.path ? `folder ${source}` : `hub model "${source}"${this.o.cacheDir ? ` (cache ${resolve(this.o.cacheDir)})` : ''}`;
        const hint = !this.o.path && !remote ? `; it is not cached: run \`ragloom models pull ${source}\` on a machine with network access` : '';
        throw new Error(`Cannot load embedding model ${this.id} from ${where}${hint}: ${(err as Error).message}`, { cause: err });
      } finally {
        m.env.allowRemoteModels = prev;
      }
    };
    const p = loadChain.then(run, run);
    loadChain = p.catch(() => undefined);
    return p;
  }

  private wrap(
    tokenizer: Loaded['tokenizer'],
    model: Loaded['model'] & { sessions?: Record<string, OrtSession>; config?: { hidden_size?: number } },
  ): Loaded {
    const session = model.sessions?.model;
    // Fast path: a graph that pools itself, fed directly so that only `sentence_embedding`
    // is fetched (not the [batch, seq, dim] token tensor).
    const fast =
      !!session &&
      typeof session.run === 'function' &&
      this.o.pooling !== 'cls' &&
      session.outputNames.includes('sentence_embedding') &&
      session.inputNames.every((n) => n === 'input_ids' || n === 'attention_mask');
    const hidden = model.config?.hidden_size;
    if (this.dim === undefined && typeof hidden === 'number') this.dim = hidden;
    return { tokenizer, model, session, fast };
  }

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const m = await this.loaded();
    // One model call at a time: batches already use every core.
    const job = this.queue.then(() => this.embedAll(m, texts, opts.signal));
    this.queue = job.catch(() => undefined);
    return job;
  }

  private async embedAll(m: Loaded, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    const todo: number[] = [];
    texts.forEach((t, i) => (t.trim() === '' ? undefined : todo.push(i)));
    for (let s = 0; s < todo.length; s += this.o.batchSize) {
      signal?.throwIfAborted();
      const idx = todo.slice(s, s + this.o.batchSize);
      const vecs = await this.batch(m, idx.map((i) => texts[i]!));
      idx.forEach((i, j) => (out[i] = vecs[j]!));
    }
    for (let i = 0; i < out.length; i++) out[i] ??= new Float32Array(this.dim ?? 0);
    return out;
  }

  private async batch(m: Loaded, texts: string[]): Promise<Float32Array[]> {
    const enc = m.tokenizer(texts, { padding: true, truncation: true });
    let data: Float32Array;
    let dims: readonly number[];
    if (m.fast) {
      const feeds: Record<string, unknown> = {};
      for (const n of m.session!.inputNames) feeds[n] = (enc[n] as unknown as { ort_tensor: unknown }).ort_tensor;
      const r = (await m.session!.run(feeds, ['sentence_embedding'])).sentence_embedding!;
      data = r.data as Float32Array;
      dims = r.dims;
    } else {
      const r = await m.model(enc);
      ({ data, dims } = this.pool(r, enc.attention_mask!));
    }
    const [n, d] = dims as [number, number];
    if (n !== texts.length) throw new Error(`Embedding model ${this.id} returned ${n} vectors for ${texts.length} texts`);
    if (this.dim !== undefined && this.dim !== d && this.dim !== 0) {
      throw new Error(`Embedding model ${this.id} returned vectors of dimension ${d}, expected ${this.dim}`);
    }
    this.dim = d;
    const out: Float32Array[] = [];
    for (let i = 0; i < n; i++) {
      const v = data.slice(i * d, (i + 1) * d);
      if (this.o.normalize) {
        let s = 0;
        for (let k = 0; k < d; k++) s += v[k]! * v[k]!;
        if (s > 0) {
          const inv = 1 / Math.sqrt(s);
          for (let k = 0; k < d; k++) v[k]! *= inv;
        }
      }
      out.push(v);
    }
    return out;
  }

  /** Pools model outputs into [batch, dim] (generic models, or `cls` / `none`). */
  private pool(r: Record<string, TTensor>, mask: TTensor): { data: Float32Array; dims: number[] } {
    const f32 = (t: TTensor) => (t.data instanceof Float32Array ? t.data : Float32Array.from(t.data as ArrayLike<number>));
    if (this.o.pooling === 'none') {
      const t = r.sentence_embedding ?? r.pooler_output ?? Object.values(r).find((x) => x.dims.length === 2);
      if (!t || t.dims.length !== 2) throw new Error(`Embedding model ${this.id} has no pooled output; use pooling "mean" or "cls"`);
      return { data: f32(t), dims: t.dims };
    }
    if (this.o.pooling === 'mean' && r.sentence_embedding?.dims.length === 2) {
      return { data: f32(r.sentence_embedding), dims: r.sentence_embedding.dims };
    }
    const t = r.last_hidden_state ?? r.token_embeddings ?? r.logits;
    if (!t || t.dims.length !== 3) throw new Error(`Embedding model ${this.id} has no [batch, seq, dim] output to pool`);
    const [b, s, d] = t.dims as [number, number, number];
    const x = f32(t);
    const out = new Float32Array(b * d);
    if (this.o.pooling === 'cls') {
      for (let i = 0; i < b; i++) out.set(x.subarray(i * s * d, i * s * d + d), i * d);
      return { data: out, dims: [b, d] };
    }
    const mk = mask.data as BigInt64Array | Int32Array | Float32Array;
    for (let i = 0; i < b; i++) {
      let count = 0;
      for (let j = 0; j < s; j++) {
        if (!Number(mk[i * s + j])) continue;
        count++;
        const off = (i * s + j) * d;
        for (let k = 0; k < d; k++) out[i * d + k]! += x[off + k]!;
      }
      if (count > 0) for (let k = 0; k < d; k++) out[i * d + k]! /= count;
    }
    return { data: out, dims: [b, d] };
  }

  async close(): Promise<void> {
    const l = this.loading;
    this.loading = undefined;
    if (!l) return;
    const m = await l.catch(() => undefined);
    await this.queue.catch(() => undefined);
    await m?.model.dispose?.();
  }
}

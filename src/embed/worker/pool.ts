/**
 * Runs an embedder in worker threads, one model copy per worker, so that tokenisation and
 * pooling (JavaScript, single-threaded) use every core: a `StaticEmbedder` for the built-in
 * static models, a `TransformersEmbedder` (one ONNX Runtime thread per worker) otherwise.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BUILTIN_MODELS } from '../builtin-models.js';
import type { TransformersEmbedderOptions } from '../providers/transformers.js';
import type { Embedder } from '../types.js';

/** Which embedder a worker builds. */
export type WorkerProvider = 'static' | 'transformers';

export interface WorkerPoolEmbedderOptions {
  /**
   * Options of the embedder each worker builds (plain data only). A `StaticEmbedder` uses `id`,
   * `path`, `dim` and `batchSize`.
   */
  model: TransformersEmbedderOptions;
  /**
   * `static` (`StaticEmbedder`, plain TypeScript) or `transformers` (`TransformersEmbedder`,
   * onnxruntime). @default 'static' for the folder of a built-in model, else 'transformers'
   */
  provider?: WorkerProvider;
  /** Worker threads. @default os.availableParallelism() */
  workers?: number;
  /** Texts per job sent to a worker. @default 64 */
  jobSize?: number;
}

interface Job {
  texts: string[];
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}
interface Slot {
  worker: Worker;
  busy?: Job;
}

export class WorkerPoolEmbedder implements Embedder {
  readonly id: string;
  dim?: number;
  private readonly slots: Slot[] = [];
  private readonly pending: Job[] = [];
  private readonly jobSize: number;
  private readonly size: number;
  private readonly provider: WorkerProvider;
  private closed = false;

  constructor(private readonly opts: WorkerPoolEmbedderOptions) {
    if (!opts?.model) throw new TypeError('WorkerPoolEmbedder: "model" is required');
    this.id = opts.model.id;
    this.dim = opts.model.dim;
    this.size = Math.max(1, opts.workers ?? availableParallelism());
    this.jobSize = opts.jobSize ?? 64;
    if (opts.provider !== undefined && opts.provider !== 'static' && opts.provider !== 'transformers') {
      throw new TypeError(`WorkerPoolEmbedder: unknown provider "${String(opts.provider)}"`);
    }
    this.provider = opts.provider ?? (isBuiltinFolder(opts.model.path) ? 'static' : 'transformers');
  }

  private spawn(): Slot {
    const here = import.meta.url;
    const workerData = { provider: this.provider, model: { ...this.opts.model, threads: this.opts.model.threads ?? 1 } };
    // Built code runs worker.js; from source (tsx, vitest) the worker registers tsx first.
    const worker = here.endsWith('.ts')
      ? new Worker(
          `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(new URL('./worker.ts', here).href)}); });`,
          { eval: true, workerData },
        )
      : new Worker(new URL('./worker.js', here), { workerData });
    const slot: Slot = { worker };
    worker.on('message', (msg: { vectors?: Float32Array[]; dim?: number; error?: string }) => {
      const job = slot.busy;
      slot.busy = undefined;
      if (job) {
        if (msg.error !== undefined) job.reject(new Error(msg.error));
        else {
          if (msg.dim) this.dim = msg.dim;
          job.resolve(msg.vectors!);
        }
      }
      this.pump();
    });
    worker.on('error', (err) => {
      const job = slot.busy;
      slot.busy = undefined;
      this.slots.splice(this.slots.indexOf(slot), 1);
      job?.reject(err);
      for (const j of this.pending.splice(0)) j.reject(err);
    });
    worker.unref();
    return slot;
  }

  private pump(): void {
    while (this.pending.length) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.size) this.slots.push((slot = this.spawn()));
      if (!slot) return;
      const job = this.pending.shift()!;
      slot.busy = job;
      slot.worker.ref();
      slot.worker.postMessage({ texts: job.texts });
    }
    for (const s of this.slots) if (!s.busy) s.worker.unref();
  }

  private run(texts: string[]): Promise<Float32Array[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ texts, resolve, reject });
      this.pump();
    });
  }

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (this.closed) throw new Error(`Embedding model ${this.id}: the worker pool is closed`);
    opts.signal?.throwIfAborted();
    const jobs: Promise<Float32Array[]>[] = [];
    for (let s = 0; s < texts.length; s += this.jobSize) jobs.push(this.run(texts.slice(s, s + this.jobSize)));
    return (await Promise.all(jobs)).flat();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.pending.splice(0)) j.reject(new Error(`Embedding model ${this.id}: the worker pool was closed`));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}

/** Is `path` the folder of a built-in (static) model? */
function isBuiltinFolder(path: string | undefined): boolean {
  if (!path) return false;
  const p = resolve(path);
  return BUILTIN_MODELS.some((m) => resolve(m.path) === p);
}

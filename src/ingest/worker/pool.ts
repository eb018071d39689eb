import { Worker } from 'node:worker_threads';
import type { ChunkDraft } from '../types.js';
import type { AnalyzeItem, FromWorker, ToWorker } from './protocol.js';
import type { FtsTerms } from '../../text/index.js';

export interface IngestLimits {
  /** Longest a single file may take to parse and chunk. @default 180_000 (ms) */
  parseTimeoutMs: number;
  /** Heap a worker may use; a file needing more fails alone. @default 3072 (MiB) */
  maxHeapMb: number;
}

export const INGEST_DEFAULTS: Readonly<IngestLimits> = Object.freeze({ parseTimeoutMs: 180_000, maxHeapMb: 3072 });

export interface ParseOutcome {
  chunks: ChunkDraft[];
  /** Each chunk's full-text row, with the file name as title (the store's `NewChunk.terms`). */
  terms: FtsTerms[];
  notes: string[];
  blocks: number;
  pages?: number;
  warnings: string[];
}

/** A job failure whose message is fit for `progress_msg`. */
export class IngestError extends Error {
  override name = 'IngestError';
}

// From dist/ the worker is plain JS. From src/ (tests, tsx) it is TypeScript: a tiny bootstrap
// registers tsx's loader inside the thread first (loader flags do not reach worker threads).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
function spawnWorker(opts: ConstructorParameters<typeof Worker>[1]): Worker {
  const url = new URL(`./worker.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
  if (!FROM_SOURCE) return new Worker(url, opts);
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { ...opts, eval: true });
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

interface Pending {
  resolve: (m: FromWorker) => void;
  reject: (e: Error) => void;
  onProgress?: (p: number, msg: string) => void;
}

/**
 * One worker thread that runs jobs one at a time. A job that hangs, runs out of memory or is
 * cancelled terminates the thread; the next job gets a fresh one, so one bad file never hurts
 * the others.
 */
export class IngestWorker {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  /** The thread is up (ready resolved): jobs are posted at once, without waiting a microtask. */
  private up = false;
  private jobs = 0;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  constructor(private readonly limits: IngestLimits = INGEST_DEFAULTS) {}

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const w = spawnWorker({ resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb } });
    this.worker = w;
    w.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      const onReady = (m: FromWorker) => {
        if (m.type === 'ready') {
          w.off('message', onReady);
          if (this.worker === w) this.up = true;
          resolve();
        }
      };
      w.on('message', onReady);
      w.once('error', reject);
    });
    w.on('message', (m: FromWorker) => {
      if (m.type === 'ready') return;
      const p = this.pending.get(m.job);
      if (!p) return;
      if (m.type === 'progress') return p.onProgress?.(m.progress, m.message);
      this.pending.delete(m.job);
      if (m.type === 'error') p.reject(new IngestError(m.message));
      else p.resolve(m);
    });
    w.on('error', (e: Error & { code?: string }) => this.fail(w, e.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? new IngestError(`Out of memory: the file needs more than ${this.limits.maxHeapMb} MiB to parse`)
      : new IngestError(e.message)));
    w.on('exit', () => this.fail(w, new IngestError('The ingest worker stopped')));
    return this.ready;
  }

  private fail(w: Worker, e: Error): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.ready = null;
    this.up = false;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private async run<T extends FromWorker>(msg: DistributiveOmit<ToWorker, 'job'>, opts: { signal?: AbortSignal; timeoutMs?: number; onProgress?: Pending['onProgress']; transfer?: ArrayBuffer[] }): Promise<T> {
    if (this.closed) throw new IngestError('The ingest worker is closed');
    opts.signal?.throwIfAborted();
    // A running thread gets the job synchronously, so it works while the caller goes on (the
    // benchmark analyses the next batch while it writes this one).
    if (!this.up) {
      await this.start();
      opts.signal?.throwIfAborted(); // cancelled while the thread was starting
    }
    const w = this.worker!;
    const job = ++this.jobs;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      // Stopping a job mid-flight means stopping its thread: parsers cannot be interrupted.
      const kill = (e: Error) => {
        this.pending.delete(job);
        done();
        this.fail(w, e);
        void w.terminate();
        reject(e);
      };
      const onAbort = () => kill(Object.assign(new Error('Cancelled'), { name: 'AbortError' }));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.timeoutMs) timer = setTimeout(() => kill(new IngestError(`Parsing took longer than ${Math.round(opts.timeoutMs! / 1000)} s and was stopped`)), opts.timeoutMs);
      this.pending.set(job, {
        resolve: (m) => { done(); resolve(m as T); },
        reject: (e) => { done(); reject(e); },
        onProgress: opts.onProgress,
      });
      w.postMessage({ ...msg, job }, opts.transfer ?? []);
    });
  }

  /** Parses and chunks one file in the worker. */
  async parse(data: Uint8Array, filename: string, method: string, parserConfig: Record<string, unknown>,
    opts: { signal?: AbortSignal; onProgress?: (p: number, msg: string) => void } = {}): Promise<ParseOutcome> {
    const copy = new Uint8Array(data); // the store's buffer stays ours; the copy moves to the worker
    const m = await this.run<Extract<FromWorker, { type: 'parsed' }>>(
      { type: 'parse', data: copy, filename, method, parserConfig },
      { signal: opts.signal, timeoutMs: this.limits.parseTimeoutMs, onProgress: opts.onProgress, transfer: [copy.buffer as ArrayBuffer] },
    );
    return { chunks: m.chunks, terms: m.terms, notes: m.notes, blocks: m.blocks, pages: m.pages, warnings: m.warnings };
  }

  /** Embeds with a built-in (CPU-bound) model in the worker. */
  async embed(modelId: string, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const m = await this.run<Extract<FromWorker, { type: 'embedded' }>>({ type: 'embed', modelId, texts }, { signal });
    return m.vectors;
  }

  /** The full-text rows of chunks (`ftsTerms` per item), analysed in the worker. */
  async analyze(items: AnalyzeItem[], signal?: AbortSignal): Promise<FtsTerms[]> {
    const m = await this.run<Extract<FromWorker, { type: 'analyzed' }>>({ type: 'analyze', items }, { signal });
    return m.terms;
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.ready = null;
    this.up = false;
    for (const p of this.pending.values()) p.reject(new IngestError('The ingest worker is closed'));
    this.pending.clear();
    if (w) await w.terminate();
  }
}

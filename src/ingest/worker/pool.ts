import { Worker } from 'node:worker_threads';
import type { AnalyzeItem, FromWorker, ParseItem, ParseOutcome, ToWorker } from './protocol.js';
export type { ParseOutcome } from './protocol.js';
import type { FtsTerms } from '../../text/index.js';

export interface IngestLimits {
  /** Longest a single file may take to parse and chunk. @default 180_000 (ms) */
  parseTimeoutMs: number;
  /** Heap a worker may use; a file needing more fails alone. @default 3072 (MiB) */
  maxHeapMb: number;
}

export const INGEST_DEFAULTS: Readonly<IngestLimits> = Object.freeze({ parseTimeoutMs: 180_000, maxHeapMb: 3072 });

/** A job failure whose message is fit for `progress_msg`. */
export class IngestError extends Error {
  override name = 'IngestError';
  /**
   * Why the job's thread was stopped, when it was: `timeout` (this job took too long), `thread`
   * (it ran out of memory or died running this job), `queued` (it stopped for another job, before
   * this one ran: run it again).
   */
  constructor(message: string, readonly kind?: 'timeout' | 'thread' | 'queued') {
    super(message);
  }
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
  /** The worker started the job (its parsers loaded): its time bound starts. */
  onStart: () => void;
  /** First in line: it may be running, so stopping it stops the thread. */
  started: boolean;
}

/**
 * One worker thread that runs jobs one at a time, in the order they were posted; a caller may
 * post the next job before the last one ends, so the thread never waits for the caller. A job
 * that hangs, runs out of memory or is cancelled terminates the thread (jobs queued behind it
 * fail as `queued`, to be posted again); the next job gets a fresh thread, so one bad file never
 * hurts the others.
 */
export class IngestWorker {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  /** The thread is up (ready resolved): jobs are posted at once, without waiting a microtask. */
  private up = false;
  private jobs = 0;
  /** Jobs posted and not answered, in order: the first is running. */
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  /** Time this worker spent parsing and embedding (ms), for benchmarks. */
  readonly busy = { parseMs: 0, embedMs: 0 };

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
      if (m.type === 'started') return p.onStart();
      this.pending.delete(m.job);
      if (m.type === 'error') p.reject(new IngestError(m.message));
      else p.resolve(m);
      this.startNext();
    });
    w.on('error', (e: Error & { code?: string }) => this.fail(w, e.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? `Out of memory: the file needs more than ${this.limits.maxHeapMb} MiB to parse`
      : e.message));
    w.on('exit', () => this.fail(w, 'The ingest worker stopped'));
    return this.ready;
  }

  /** The thread died: the running job fails with why, the jobs queued behind it as `queued`. */
  private fail(w: Worker, message: string, kind: 'thread' | 'queued' = 'thread'): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.ready = null;
    this.up = false;
    const jobs = [...this.pending.values()];
    this.pending.clear();
    jobs.forEach((p, i) => p.reject(i === 0 ? new IngestError(message, kind) : new IngestError(`${message} (for another job)`, 'queued')));
  }

  /** Threads being terminated: close() waits for them, so nothing of a stopped thread outlives it. */
  private readonly ending = new Set<Promise<unknown>>();

  private end(w: Worker): void {
    const p = w.terminate().catch(() => undefined).finally(() => this.ending.delete(p));
    this.ending.add(p);
  }

  /** The first job in line is running, or about to. */
  private startNext(): void {
    const first = this.pending.values().next().value as Pending | undefined;
    if (first) first.started = true;
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
      // Stopping a running job means stopping its thread: parsers cannot be interrupted. A job
      // still waiting in line is only dropped.
      const stop = (e: Error) => {
        const entry = this.pending.get(job);
        if (!entry) return;
        this.pending.delete(job);
        done();
        reject(e);
        if (entry.started && this.worker === w) {
          this.fail(w, 'The ingest worker was stopped', 'queued');
          this.end(w);
        } else if (this.worker === w) {
          w.postMessage({ type: 'drop', job });
        }
      };
      const onAbort = () => stop(Object.assign(new Error('Cancelled'), { name: 'AbortError' }));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(job, {
        resolve: (m) => { done(); resolve(m as T); },
        reject: (e) => { done(); reject(e); },
        onProgress: opts.onProgress,
        onStart: () => {
          const ms = opts.timeoutMs;
          if (ms) timer = setTimeout(() => stop(new IngestError(`Parsing took longer than ${Math.round(ms / 1000)} s and was stopped`, 'timeout')), ms);
        },
        started: false,
      });
      w.postMessage({ ...msg, job }, opts.transfer ?? []);
      this.startNext();
    });
  }

  /** Parses and chunks one file in the worker; a parser's refusal rejects with its message. */
  async parse(data: Uint8Array, filename: string, method: string, parserConfig: Record<string, unknown>,
    opts: { signal?: AbortSignal; onProgress?: (p: number, msg: string) => void } = {}): Promise<ParseOutcome> {
    const [r] = await this.parseMany([{ data, filename, method, parserConfig }], opts);
    if (r instanceof IngestError) throw r;
    return r!;
  }

  /**
   * Parses and chunks several files in one job, one after the other: a file the parser refuses
   * is an `IngestError` in its place, the others go on. The time and memory bounds hold for the
   * whole job: a stopped thread rejects it (`kind` says why); run each file alone to find which.
   * Progress messages are sent for a job of one file only.
   */
  async parseMany(items: ParseItem[], opts: { signal?: AbortSignal; onProgress?: (p: number, msg: string) => void } = {}): Promise<Array<ParseOutcome | IngestError>> {
    // The store's buffers stay ours; the copies move to the worker.
    const copies = items.map((i) => ({ ...i, data: new Uint8Array(i.data) }));
    const m = await this.run<Extract<FromWorker, { type: 'parsed' }>>(
      { type: 'parse', items: copies },
      { signal: opts.signal, timeoutMs: this.limits.parseTimeoutMs, onProgress: opts.onProgress, transfer: copies.map((c) => c.data.buffer as ArrayBuffer) },
    );
    return m.results.map((r) => {
      if ('error' in r) return new IngestError(r.error);
      this.busy.parseMs += r.ms;
      return { chunks: r.chunks, terms: r.terms, langs: r.langs, tokens: r.tokens, shas: r.shas, notes: r.notes, blocks: r.blocks, pages: r.pages, warnings: r.warnings };
    });
  }

  /** Embeds with a built-in (CPU-bound) model in the worker. */
  async embed(modelId: string, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const m = await this.run<Extract<FromWorker, { type: 'embedded' }>>({ type: 'embed', modelId, texts }, { signal });
    this.busy.embedMs += m.ms;
    return Array.from({ length: texts.length }, (_, i) => m.flat.subarray(i * m.dim, (i + 1) * m.dim));
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
    if (w) this.end(w);
    await Promise.all(this.ending);
  }
}

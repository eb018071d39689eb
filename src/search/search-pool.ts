/**
 * Retrieval on more cores: worker threads that each run `hybridSearch` on their own read-only
 * connection to the same database file, with their own in-memory indexes (term-index.ts,
 * vector-index.ts). Each index follows the store's change feed as it does across processes, so a
 * write committed by any connection is seen by the next search of every thread. A server
 * attaches a pool to its store's reader (`attachSearchPool`); hybridSearch
 * then sends the ranking to the least busy thread, and the calling thread embeds the question
 * and reads the page's rows (a ranked page crosses threads, not 70 KB of chunks).
 *
 * Costs: each thread holds its own copy of the indexes (at 100k 256-d chunks ~210 MB each) and
 * builds it when it starts (a few seconds per 100k chunks, in the background). Requests with a
 * rerank model run on the calling thread.
 */
import { Worker } from 'node:worker_threads';
import type { SearchReader } from '../store/index.js';
import type { RankedPage, WireSearchRequest } from './retrieve.js';
import { termIndexOptions } from './term-index.js';
import { vectorSearchOptions } from './vector-index.js';

export interface SearchPoolOptions {
  /** The database file (a `:memory:` database cannot be shared). */
  path: string;
  /** Worker threads. */
  threads: number;
  /** Each thread's index memory budget, bytes (dataset-vectors.ts). @default Infinity */
  indexMemory?: number;
}

/** What a search thread starts with. */
export interface SearchWorkerData {
  path: string;
  termIndex: typeof termIndexOptions;
  vectorSearch: typeof vectorSearchOptions;
  indexMemory?: number;
}

/** What a search thread answers. */
export type FromSearchWorker =
  | { type: 'done'; id: number; result: RankedPage }
  | { type: 'embed-failed'; id: number }
  | { type: 'error'; id: number; name: string; message: string; stack?: string };

/** What a search thread is sent. */
export interface ToSearchWorker {
  id: number;
  req: WireSearchRequest;
  /** The question's vector; null when embedding it failed (the caller holds the error). */
  vector: Float32Array | null;
}

interface Slot {
  w: Worker;
  /** requests sent and not answered */
  busy: number;
  dead: boolean;
}

interface Pending {
  resolve: (r: RankedPage) => void;
  reject: (e: Error) => void;
  embedError: unknown;
  slot: Slot;
}

// From dist/ the worker is plain JS; from src/ (tests, tsx) a bootstrap registers tsx first, as
// src/ingest/worker/pool.ts does (loader flags do not reach worker threads).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
function spawn(workerData: unknown): Worker {
  const url = new URL(`./search-worker.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
  if (!FROM_SOURCE) return new Worker(url, { workerData });
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}

/** Thrown for requests of a pool whose threads stopped (the caller runs the search itself). */
export class SearchPoolClosed extends Error {
  override name = 'SearchPoolClosed';
}

export class SearchPool {
  private readonly workers: Slot[] = [];
  private readonly pending = new Map<number, Pending>();
  private next = 1;
  private closed = false;
  private answered = 0;

  /** Searches the threads have ranked (not those that fell back to the caller). */
  get served(): number {
    return this.answered;
  }

  constructor(readonly opts: SearchPoolOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new TypeError('SearchPool: "threads" must be a positive integer');
    if (opts.path === ':memory:') throw new TypeError('SearchPool: a :memory: database cannot be shared with threads');
    for (let i = 0; i < opts.threads; i++) this.startOne();
  }

  private startOne(): void {
    // The process-wide index switches as they are now (a thread reads them once, when it starts).
    const w = spawn({ path: this.opts.path, termIndex: { ...termIndexOptions }, vectorSearch: { ...vectorSearchOptions }, indexMemory: this.opts.indexMemory } satisfies SearchWorkerData);
    const slot: Slot = { w, busy: 0, dead: false };
    this.workers.push(slot);
    w.unref();
    w.on('message', (m: FromSearchWorker) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      slot.busy--;
      if (m.type === 'done') {
        this.answered++;
        p.resolve(m.result);
      }
      else if (m.type === 'embed-failed') p.reject(p.embedError as Error);
      else p.reject(Object.assign(new Error(m.message), { name: m.name, stack: m.stack }));
    });
    const died = (e: Error) => {
      slot.dead = true;
      // Requests in this thread fail over to the caller (hybridSearch runs them itself).
      for (const [id, p] of this.pending) {
        if (p.slot !== slot) continue;
        this.pending.delete(id);
        p.reject(new SearchPoolClosed(e.message));
      }
    };
    w.on('error', died);
    w.on('exit', () => died(new Error('search thread stopped')));
  }

  /** Runs a search on the least busy thread. Rejects with SearchPoolClosed when none is up. */
  run(req: WireSearchRequest, vector: Float32Array | null, embedError?: unknown): Promise<RankedPage> {
    const live = this.workers.filter((x) => !x.dead);
    if (this.closed || live.length === 0) return Promise.reject(new SearchPoolClosed('no search thread'));
    let slot = live[0]!;
    for (const x of live) if (x.busy < slot.busy) slot = x;
    const id = this.next++;
    slot.busy++;
    return new Promise<RankedPage>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, embedError, slot });
      const msg: ToSearchWorker = { id, req, vector };
      slot.w.postMessage(msg);
    });
  }

  /** Stops the threads (searches in flight are cut: callers run them themselves). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.workers.map((x) => x.w.terminate().catch(() => undefined)));
  }
}

const pools = new WeakMap<SearchReader, SearchPool>();

/** Sends the searches (hybridSearch) of `reader` to `pool`'s threads, which open the same store. */
export function attachSearchPool(reader: SearchReader, pool: SearchPool): void {
  pools.set(reader, pool);
}

export function detachSearchPool(reader: SearchReader): void {
  pools.delete(reader);
}

export function searchPoolOf(reader: SearchReader): SearchPool | undefined {
  return pools.get(reader);
}

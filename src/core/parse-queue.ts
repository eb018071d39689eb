import { availableParallelism, hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Engine } from './engine.js';
import { RUN, type DocumentRow } from './documents.js';
import { titleMix } from './embedding.js';
import type { CachedVector, NewChunk, ParseClaim, ParseOutcomeRow, ParseOwner } from '../store/index.js';
import { effectiveParserConfig } from '../ingest/chunkers/index.js';
import { IngestWorker, IngestError, type IngestLimits, type ParseOutcome, INGEST_DEFAULTS } from '../ingest/worker/index.js';
import { DEFAULTS as PARSER_DEFAULTS } from '../ingest/parsers/index.js';
import { parseModelId, BUILTIN_FACTORY } from '../embed/index.js';
import { chunkId, formatDateTime, faultPoint } from '../util/index.js';
import { languageSetting } from '../text/index.js';

const clock = () => new Date().toTimeString().slice(0, 8);

/** How the queue groups and paces its work. */
const PACE = Object.freeze({
  /** A document this small is parsed with others in one worker job and one transaction. */
  smallBytes: 64 * 1024, // bytes
  /** Most documents per batch. */
  batchDocs: 64,
  /** Most bytes per batch: a batch stays a few tens of ms of work (cancel, lock hold). */
  batchBytes: 512 * 1024,
  /** Parse jobs a lane keeps posted to its worker ahead of the one being embedded and written. */
  ahead: 2,
  /** Texts per embedding call: built-in models (in the worker), HTTP models (a request each). */
  embedBuiltin: 256,
  embedHttp: 64,
  /** Progress rows are written at most this often, in one transaction (another connection sees them this late at most). */
  progressMs: 200, // ms
});

/** Where the queue's time went (ms), for benchmarks: worker time parsing and embedding, main-thread time writing. */
export interface ParseStats { parseMs: number; embedMs: number; writeMs: number; documents: number; batches: number }

interface Job {
  doc: DocumentRow;
  kb: { parser_config: string; embd_id: string; language: string | null };
  log: string[];
  began: number;
  t0: number;
  cfg: Record<string, unknown>;
  parsed?: ParseOutcome;
  vectors?: Float32Array[];
  /** The FAIL message. */
  error?: string;
  /** Parsed again after this run (re-queued while it ran): this run's result is stale. */
  again?: boolean;
}

/**
 * Parses documents in the background: parse → chunk → embed → one transaction that swaps the
 * documents' chunks. Small documents go in batches (one worker job, one embedding call, one
 * transaction for up to `PACE.batchDocs`); each lane has its own worker thread, so one batch is
 * parsed and embedded while another is written. Nothing of a document is written until its swap,
 * so a cancel or a crash never leaves half a document indexed.
 */
export class ParseQueue {
  /** FIFO of ids; `queued` says which are still wanted (a cancel only drops it from the set). */
  private pending: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  /** Run alone: their batch's thread was stopped (time, memory), so each gets the bounds to itself. */
  private readonly alone = new Set<string>();
  /** Documents being parsed, with their job's abort (a cancel stops a single document's job only). */
  private readonly active = new Map<string, { job: Job; abort: AbortController; single: boolean }>();
  /** Workers with a lane running, and the lanes (awaited by stop). */
  private readonly busy = new Set<IngestWorker>();
  private readonly lanes = new Set<Promise<void>>();
  private stopped = false;
  /** One lane per worker thread (see drain). */
  private readonly workers: IngestWorker[];
  private readonly progress: ProgressWriter;
  private writeMs = 0;
  private documents = 0;
  private batches = 0;

  private heartbeat: NodeJS.Timeout | null = null;
  /** take() calls, one after another (lanes share the FIFO). */
  private taking: Promise<unknown> = Promise.resolve();
  /** This process, as its claims name it. */
  private readonly owner: ParseOwner = { pid: process.pid, host: hostname() };

  constructor(private readonly e: Engine, limits: IngestLimits = INGEST_DEFAULTS, lanes = Math.min(2, availableParallelism())) {
    this.workers = Array.from({ length: Math.max(1, lanes) }, () => new IngestWorker(limits));
    this.progress = new ProgressWriter(e);
    e.onClose(() => this.stop());
    if (e.readonly) return; // recovery writes; a read-only open leaves it to the next writer
    // Best effort: a document this fails to re-queue stays RUNNING for the next open.
    this.recovered = this.recover().catch(() => undefined);
    // A store many processes share (PostgreSQL): a node that dies is not followed by an open of
    // the same store on its host, so every node looks for dead owners' documents now and then.
    if (e.store.kind === 'postgres') {
      this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), PARSE_SWEEP.ms);
      this.sweeper.unref();
      // Work is pulled from the store's queue: every node takes a share of whatever any node queued,
      // and a dead node's documents once their leases run out. A NOTIFY at each queueing's commit
      // wakes idle nodes at once; the slow timer covers notifications lost while a connection was
      // down, and leases running out (nothing is sent then).
      this.pull = true;
      this.watching = e.store.parse.watchQueue(() => {
        this.woken = true;
        this.kick();
      }).catch(() => null);
      this.poller = setInterval(() => this.kick(), PARSE_PULL.ms);
      this.poller.unref();
    }
  }

  /** Documents are claimed from the store's queue (claimNext) rather than queued here by whoever reset them. */
  private readonly pull: boolean = false;
  private poller: NodeJS.Timeout | null = null;
  /**
   * A wake-up came after the last claim: a lane that was busy when it came (so was not started by
   * it) looks once more before it stops.
   */
  private woken = false;
  /** Stops the store's wake-ups (a shared store). */
  private watching: Promise<(() => Promise<void>) | null> = Promise.resolve(null);

  /** Each idle worker gets a lane. */
  private kick(): void {
    if (this.stopped || this.e.isClosed) return;
    for (const w of this.workers) {
      if (this.busy.has(w)) continue;
      const lane = this.drain(w).catch(() => undefined).finally(() => this.lanes.delete(lane));
      this.lanes.add(lane);
    }
  }

  private sweeper: NodeJS.Timeout | null = null;
  /** RUNNING documents without a claim at the last sweep (a claim follows a reset at once; one still missing a sweep later is orphaned). */
  private unclaimed = new Set<string>();

  /**
   * Re-queues RUNNING documents whose owner is gone (a dead pid here, a heartbeat over a minute
   * old elsewhere), never this process's own, and those left without a claim since the last sweep.
   * A document two nodes end up parsing is swapped once: the second swap finds it DONE.
   */
  private async sweep(): Promise<void> {
    if (this.stopped || this.e.isClosed) return;
    const rows = await this.e.store.parse.running();
    const mine = (c: ParseClaim) => c.pid === this.owner.pid && c.host === this.owner.host;
    const none = rows.filter((r) => r.claim === null).map((r) => r.id);
    const orphaned = rows.filter((r) => r.claim !== null && !mine(r.claim) && !ownerAlive(r.claim.pid, r.claim.host, r.claim.heartbeat)).map((r) => r.id)
      .concat(none.filter((id) => this.unclaimed.has(id) && !this.queued.has(id) && !this.active.has(id)));
    this.unclaimed = new Set(none);
    if (orphaned.length) await this.enqueue(orphaned);
  }

  /** Settles when the recovery of the engine's open is done. */
  readonly recovered: Promise<void> = Promise.resolve();

  /**
   * What a process killed mid-parse left: its RUNNING documents (with their old chunks intact)
   * are parsed again — unless another live process (a server, a script on the same file) is
   * parsing them now — and its claims of documents nobody parses any more are dropped.
   */
  private async recover(): Promise<void> {
    const parse = this.e.store.parse;
    const orphaned = (await parse.running()).filter((r) => r.claim === null || !ownerAlive(r.claim.pid, r.claim.host, r.claim.heartbeat));
    if (orphaned.length) await this.enqueue(orphaned.map((r) => r.id));
    // A process killed after its parse ended (between the last state write and the release) left
    // its claim behind: drop dead owners' claims of documents nobody is parsing. Best effort
    // (a busy or read-only file keeps them; they are harmless, only untidy).
    const gone = (await parse.staleClaims()).filter((r) => !ownerAlive(r.claim.pid, r.claim.host, r.claim.heartbeat));
    try {
      if (gone.length) await parse.dropClaims(gone.map((r) => ({ id: r.id, pid: r.claim.pid })));
    } catch {
      // left for a later open
    }
  }

  /** Documents queued and not yet started (`/system/status`). */
  get pendingCount(): number {
    return this.queued.size;
  }

  /** Worker time parsing and embedding, main-thread time writing (ms), documents and batches written. */
  get stats(): ParseStats {
    return {
      parseMs: this.workers.reduce((n, w) => n + w.busy.parseMs, 0), embedMs: this.workers.reduce((n, w) => n + w.busy.embedMs, 0),
      writeMs: this.writeMs, documents: this.documents, batches: this.batches,
    };
  }

  /** Queues documents already marked RUNNING by the caller; this process claims them until done. */
  async enqueue(ids: string[]): Promise<void> {
    if (this.pull) {
      // Queued by the reset (the store's queue; one already being parsed runs once more after): any node takes them.
      this.kick();
      return;
    }
    if (!this.e.isClosed && ids.length) {
      await this.e.store.parse.claim(ids, this.owner, Date.now());
      faultPoint('parse:owned');
      this.beat();
    }
    for (const id of ids) {
      const a = this.active.get(id);
      if (a) a.job.again = true; // re-queued when its current run ends
      else if (!this.queued.has(id)) {
        this.queued.add(id);
        this.pending.push(id);
      }
    }
    this.kick();
  }

  /** Stops a document's parse; returns false when it was neither queued nor running. */
  cancel(id: string): boolean {
    if (this.queued.delete(id)) {
      void this.release([id]); // never started: nobody owns it now
      return true;
    }
    const a = this.active.get(id);
    if (!a) return false;
    a.job.again = false;
    // A single document's thread is stopped; a batch runs on, and its swap skips the document
    // (no longer RUNNING).
    if (a.single) a.abort.abort();
    return true;
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    await (await this.watching)?.().catch(() => undefined);
    // Claimed from the shared queue and not started: another node may take them at once.
    const unstarted = [...this.queued];
    if (this.pull && unstarted.length) await this.e.store.parse.release(unstarted, process.pid).catch(() => undefined);
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.sweeper) clearInterval(this.sweeper);
    this.progress.stop();
    this.pending = [];
    this.head = 0;
    this.queued.clear();
    for (const a of this.active.values()) a.abort.abort();
    await Promise.all(this.lanes);
    await Promise.all(this.workers.map((w) => w.close()));
  }

  /**
   * The next job: one document, or several small ones, active (cancellable) from the moment they
   * leave the FIFO. Documents nobody wants parsed any more (cancelled or deleted meanwhile) are
   * released on the way. The candidates' rows are read in one batch first (as many as a batch can
   * take); one call at a time.
   */
  private take(): Promise<{ jobs: Job[]; abort: AbortController }> {
    const run = this.taking.then(() => this.takeNext());
    this.taking = run.catch(() => undefined);
    return run;
  }

  private async takeNext(): Promise<{ jobs: Job[]; abort: AbortController }> {
    const abort = new AbortController();
    const store = this.e.store.parse;
    const wanted: string[] = [];
    for (let i = this.head; i < this.pending.length && wanted.length < PACE.batchDocs; i++) {
      const id = this.pending[i]!;
      if (this.queued.has(id)) wanted.push(id);
    }
    if (!wanted.length && this.pull && !this.stopped && !this.e.isClosed) {
      // A few at a time, so that nodes pulling at once share a folder's documents.
      this.woken = false;
      for (const id of await store.claimNext(PARSE_PULL.n, this.owner, Date.now())) {
        if (this.queued.has(id) || this.active.has(id)) continue;
        this.queued.add(id);
        this.pending.push(id);
        wanted.push(id);
      }
      if (wanted.length) {
        faultPoint('parse:owned');
        this.beat();
      }
    }
    if (!wanted.length) return { jobs: [], abort };
    const read = new Set(wanted);
    const docs = await store.documents(wanted);
    const sets = await store.datasets([...docs.values()].map((d) => d.dataset_id));
    const jobs: Job[] = [];
    const gone: string[] = [];
    let bytes = 0;
    while (this.head < this.pending.length) {
      const id = this.pending[this.head]!;
      if (!this.queued.has(id)) {
        this.head++;
        continue;
      }
      if (!read.has(id)) break; // queued while the rows were read: the next take
      const doc = docs.get(id);
      const kb = doc && sets.get(doc.dataset_id);
      if (!doc || !kb || doc.run !== RUN.RUNNING) {
        this.head++;
        this.queued.delete(id);
        gone.push(id);
        continue;
      }
      const small = doc.size <= PACE.smallBytes && batchable(doc) && !this.alone.has(id);
      if (jobs.length && (!small || jobs.length >= PACE.batchDocs || bytes + doc.size > PACE.batchBytes)) break;
      this.head++;
      this.queued.delete(id);
      this.alone.delete(id);
      const job: Job = { doc, kb, log: [`${clock()} Task has been received.`], began: Date.now(), t0: performance.now(), cfg: {} };
      try {
        job.cfg = effectiveParserConfig(JSON.parse(kb.parser_config), JSON.parse(doc.parser_config));
      } catch (err) {
        job.error = err instanceof Error ? err.message : String(err);
      }
      // The parser's size limit, checked before the blob is read: a 1 GB file is refused
      // without a 1 GB read and a 1 GB copy to the worker.
      if (doc.size > PARSER_DEFAULTS.maxBytes) {
        const mib = (n: number) => Math.round((n / 1048576) * 10) / 10;
        job.error = `File is too large to parse (${mib(doc.size)} MiB; the limit is ${mib(PARSER_DEFAULTS.maxBytes)} MiB)`;
      }
      jobs.push(job);
      bytes += doc.size;
      if (!small) break;
    }
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
    for (const job of jobs) this.active.set(job.doc.id, { job, abort, single: jobs.length === 1 });
    if (gone.length) await this.release(gone);
    return { jobs, abort };
  }

  /** Drops this process's claims of documents it will not parse (best effort: a later open tidies up). */
  private async release(ids: string[]): Promise<void> {
    try {
      if (this.e.isClosed || this.stopped) return;
      await this.e.store.parse.release(ids, process.pid);
    } catch {
      // see above
    }
    faultPoint('parse:released');
  }

  /**
   * One lane per worker. Its thread runs jobs in the order they are posted, and the lane keeps
   * `PACE.ahead` parses posted: when a job's parse ends, the next parse is posted at once, then
   * this job's embedding (behind the parses), and this thread writes the job when its vectors come
   * back. The worker never waits for this thread, which may be busy writing the other lane's job.
   */
  private async drain(worker: IngestWorker): Promise<void> {
    this.busy.add(worker);
    try {
      const ahead: Lane[] = [];
      const fill = async () => {
        while (!this.stopped && ahead.length < PACE.ahead) {
          const next = await this.start(worker);
          if (!next) break;
          ahead.push(next);
        }
      };
      await fill();
      let finishing: Promise<void> | null = null;
      while (ahead.length) {
        const cur = ahead.shift()!;
        await cur.parsed;
        await fill();
        const done = this.finish(cur, worker);
        await finishing;
        finishing = done;
        if (!ahead.length) {
          await finishing;
          finishing = null;
          await fill(); // queued meanwhile
        }
      }
    } finally {
      this.busy.delete(worker);
      if (this.woken) this.kick();
    }
  }

  /** Takes the next job and posts its parse to `worker` at once. */
  private async start(worker: IngestWorker): Promise<Lane | null> {
    const { jobs, abort } = await this.take();
    if (!jobs.length) return null;
    const lane: Lane = { jobs, signal: abort.signal, parsed: Promise.resolve() };
    lane.parsed = this.parse(lane, worker).catch((err: unknown) => this.failed(lane, err));
    return lane;
  }

  /** Embeds and writes a parsed job, then lets its documents go (or queues them again). */
  private async finish(lane: Lane, worker: IngestWorker): Promise<void> {
    try {
      if (!lane.stop) {
        try {
          lane.puts = await this.embed(lane, worker);
        } catch (err) {
          this.failed(lane, err);
        }
      }
      if (!lane.stop && !this.e.isClosed && !this.stopped) {
        faultPoint('parse:embedded');
        await this.write(lane.jobs, lane.puts ?? []);
      }
    } catch {
      // The store refused even the failure record (a disk that filled up, a file made read-only):
      // the rows stay RUNNING, owned by this pid, and a later open parses them again. Nobody awaits
      // this loop, so a throw here would be an unhandled rejection, which ends the process.
    } finally {
      for (const job of lane.jobs) {
        this.active.delete(job.doc.id);
        if (job.again && !this.stopped && !this.queued.has(job.doc.id)) {
          this.queued.add(job.doc.id);
          this.pending.push(job.doc.id);
        }
      }
    }
  }

  /** While this process parses, its ownership rows stay fresh (another process reads them). */
  private beat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      if (this.e.isClosed || (!this.queued.size && !this.active.size)) {
        clearInterval(this.heartbeat!);
        this.heartbeat = null;
        return;
      }
      // Busy: the next beat tries again (a stale beat only lets another process re-queue later).
      this.e.store.parse.heartbeat(this.owner, Date.now()).catch(() => undefined);
    }, OWNER_BEAT_MS);
    this.heartbeat.unref();
  }

  /** Parses and chunks a job's documents in the worker, bounded in time and memory; a file's failure is its own. */
  private async parse(lane: Lane, worker: IngestWorker): Promise<void> {
    const e = this.e;
    const { jobs, signal } = lane;
    for (const j of jobs) this.progress.set(j.doc.id, 0, j.log, j.began);
    faultPoint('parse:started');
    const todo = jobs.filter((j) => !j.error);
    if (!todo.length) return;
    const single = jobs.length === 1 ? jobs[0]! : undefined;
    const note = single && ((p: number, msg?: string) => {
      if (msg) single.log.push(`${clock()} ${msg}`);
      this.progress.set(single.doc.id, p, single.log);
    });
    lane.note = note;
    const data = await Promise.all(todo.map(async (j) => (await (await e.store.documents.file(j.doc.blob_sha256))?.bytes()) ?? new Uint8Array()));
    const out = await worker.parseMany(todo.map((j, i) => ({ data: data[i]!, filename: j.doc.name, method: j.doc.parser_id, parserConfig: j.cfg, lang: languageSetting(j.kb.language) })),
      { signal, onProgress: note });
    out.forEach((r, i) => {
      const j = todo[i]!;
      if (r instanceof IngestError) {
        j.error = r.message;
        return;
      }
      j.parsed = r;
      for (const w of r.warnings) j.log.push(`${clock()} ${w}`);
      for (const n of r.notes) j.log.push(`${clock()} ${n}`);
      // RAGFlow's words for a document without text (an empty or blank file): it is done, with no chunk.
      j.log.push(r.chunks.length ? `${clock()} Chunked into ${r.chunks.length} chunks.` : `${clock()} No chunk built from ${j.doc.name}`);
      this.progress.set(j.doc.id, 0.4, j.log);
    });
  }

  /** A job's parse or embedding threw: record why on its documents, or queue them again. */
  private failed(lane: Lane, err: unknown): void {
    if (this.e.isClosed || this.stopped) {
      lane.stop = true; // still RUNNING and owned: the next open parses them again
      return;
    }
    const todo = lane.jobs.filter((j) => !j.error);
    if (lane.signal.aborted) {
      // The stop call already set CANCEL: the write records when it stopped.
    } else if (err instanceof IngestError && err.kind === 'queued') {
      for (const j of todo) j.again = true; // the thread stopped for another job first: again, as it was
    } else if (err instanceof IngestError && err.kind && lane.jobs.length > 1) {
      // The batch's thread was stopped (time, memory): each file goes again on its own, with
      // the bounds to itself, so only a file that breaks them alone fails.
      for (const j of todo) {
        this.alone.add(j.doc.id);
        j.again = true; // re-queued, neither written nor released
      }
    } else {
      const msg = err instanceof Error ? err.message : String(err);
      for (const j of todo) j.error ??= msg;
    }
    for (const j of todo) {
      j.parsed = undefined;
      j.vectors = undefined;
    }
  }

  /**
   * Every parsed document's chunk vectors: through the (model, sha256) cache, the misses embedded
   * in as few calls as possible — built-in models in the worker, HTTP models from here.
   */
  private async embed(lane: Lane, worker: IngestWorker): Promise<CachePut[]> {
    const e = this.e;
    const { signal, note } = lane;
    const jobs = lane.jobs.filter((j) => j.parsed && !j.error && !j.again);
    const puts: CachePut[] = [];
    const byModel = new Map<string, Job[]>();
    for (const j of jobs) {
      if (!j.parsed!.chunks.length) continue;
      const list = byModel.get(j.kb.embd_id);
      if (list) list.push(j);
      else byModel.set(j.kb.embd_id, [j]);
    }
    for (const [model, list] of byModel) {
      const got = new Map<string, Float32Array>();
      const need = new Map<string, string>(); // sha → text
      const cached = await e.store.chunks.cachedVectors(model, list.flatMap((j) => j.parsed!.shas));
      for (const j of list) {
        const { chunks, shas } = j.parsed!;
        shas.forEach((sha, k) => {
          if (got.has(sha) || need.has(sha)) return;
          const hit = cached.get(sha);
          if (hit) got.set(sha, hit);
          else need.set(sha, k === 0 ? j.doc.name : (chunks[k - 1]!.embedText ?? chunks[k - 1]!.content));
        });
      }
      // Built-in models are CPU-bound: they run in the worker. HTTP models are I/O: main thread.
      const builtin = parseModelId(model)?.factory === BUILTIN_FACTORY;
      const step = builtin ? PACE.embedBuiltin : PACE.embedHttp;
      const todo = [...need];
      for (let i = 0; i < todo.length; i += step) {
        signal?.throwIfAborted();
        const part = todo.slice(i, i + step);
        const texts = part.map(([, t]) => t);
        const vecs = builtin ? await worker.embed(model, texts, signal) : await e.models.embedder(model).embed(texts, { signal });
        if (e.isClosed) throw new Error('Client closed');
        part.forEach(([sha], k) => {
          got.set(sha, vecs[k]!);
          puts.push([model, sha, vecs[k]!]);
        });
        note?.(0.4 + 0.55 * Math.min(1, (i + step) / todo.length));
      }
      for (const j of list) {
        const weight = typeof j.cfg.filename_embd_weight === 'number' ? j.cfg.filename_embd_weight : 0.1;
        const [tv, ...vs] = j.parsed!.shas.map((s) => got.get(s)!);
        j.vectors = vs.map((v) => titleMix(tv!, v, weight));
      }
    }
    for (const j of jobs) j.vectors ??= [];
    signal?.throwIfAborted();
    return puts;
  }

  /**
   * One transaction for the whole job (ParseWorkStore.finish): the embedding cache rows, each
   * parsed document's chunks swapped in (DONE), failures recorded (FAIL, the old chunks and their
   * counts kept), cancelled ones timed; dataset counters moved by the differences; claims released.
   */
  private async write(jobs: Job[], puts: CachePut[]): Promise<void> {
    const e = this.e;
    const t0 = performance.now();
    const mine = jobs.filter((j) => !j.again);
    const now = Date.now();
    const time = formatDateTime(now);
    try {
      const rows = mine.map((j): ParseOutcomeRow => {
        const s = (performance.now() - j.t0) / 1000;
        return {
          id: j.doc.id, dataset_id: j.doc.dataset_id, log: j.log, seconds: s, began: j.began,
          chunks: j.vectors && !j.error ? chunkRows(j, now, time) : undefined, language: j.kb.language,
          doneLines: [`${clock()} Indexing done (${s.toFixed(2)}s).`, `${clock()} Task done (${s.toFixed(2)}s)`],
          failLine: `${clock()} [ERROR] ${j.error ?? 'Cancelled'}`,
        };
      });
      await e.store.parse.finish(puts, rows, process.pid, now);
    } catch (err) {
      await this.writeFailed(mine, err);
    } finally {
      this.progress.drop(mine.map((j) => j.doc.id));
      this.writeMs += performance.now() - t0;
      this.documents += mine.length;
      this.batches++;
    }
  }

  /**
   * The store refused the swap (SQLITE_FULL, SQLITE_IOERR_WRITE, …): FAIL each document with the
   * file's name and SQLite's code, old chunks kept. If even that is refused the rows stay RUNNING,
   * claimed by this pid, and a later open parses them again.
   */
  private async writeFailed(jobs: Job[], err: unknown): Promise<void> {
    const e = this.e;
    if (e.isClosed) return;
    const code = (err as { code?: unknown } | null)?.code;
    const text = err instanceof Error ? err.message : String(err);
    const msg = typeof code === 'string' && code.startsWith('SQLITE_') ? `Database ${e.store.name}: ${text} (${code})` : text;
    try {
      await e.store.parse.failAll(jobs.map((j) => ({ id: j.doc.id, dataset_id: j.doc.dataset_id, log: j.log, seconds: (performance.now() - j.t0) / 1000 })),
        `${clock()} [ERROR] ${msg}`, process.pid);
    } catch {
      // see above
    }
  }
}

type CachePut = CachedVector;

/** A job under way in a lane. */
interface Lane {
  jobs: Job[];
  signal: AbortSignal;
  /** Settles when the parse ended (failures recorded on the jobs). */
  parsed: Promise<void>;
  note?: (p: number, msg?: string) => void;
  puts?: CachePut[];
  /** The queue stopped: nothing is written (the next open parses the documents again). */
  stop?: boolean;
}

/** Documents that batch well: small, and never OCR'd (a PDF or an image can take seconds per page). */
function batchable(doc: DocumentRow): boolean {
  return doc.suffix !== 'pdf' && doc.type !== 'visual' && doc.parser_id !== 'picture';
}

function chunkRows(j: Job, now: number, time: string): NewChunk[] {
  const { doc, parsed, vectors } = j;
  return parsed!.chunks.map((c, i) => ({
    id: chunkId(c.content, doc.id), document_id: doc.id, dataset_id: doc.dataset_id, content: c.content, index_text: c.indexText,
    title: doc.name, important_keywords: c.important_keywords ?? [], questions: c.questions ?? [], tag_kwd: c.tag_kwd ?? [],
    positions: c.positions ?? [], available: doc.status === '1', doc_type: c.doc_type ?? '', chunk_order: i,
    page_num: c.page_num, top: c.top, token_num: parsed!.tokens[i]!, create_time: time, create_timestamp: now / 1000, vector: vectors![i]!,
    // Analysed in the worker in the dataset's language (ParseOutcomeRow.language), with doc.name as title.
    lang: parsed!.langs[i]!, terms: parsed!.terms[i],
  }));
}

/**
 * Progress rows, written at most every `PACE.progressMs` in one transaction: another connection
 * sees a document's progress that late at most, and a batch of small documents costs no write
 * before its swap (which supersedes what is still buffered).
 */
class ProgressWriter {
  private readonly rows = new Map<string, { progress: number; log: string[]; begin?: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly e: Engine) {}

  set(id: string, progress: number, log: string[], begin?: number): void {
    const prev = this.rows.get(id);
    this.rows.set(id, { progress, log, begin: begin ?? prev?.begin });
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), PACE.progressMs);
      this.timer.unref();
    }
  }

  drop(ids: string[]): void {
    for (const id of ids) this.rows.delete(id);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.rows.clear();
  }

  private flush(): void {
    this.timer = null;
    if (this.e.isClosed || !this.rows.size) return;
    const rows = [...this.rows];
    this.rows.clear();
    // Best effort (a full disk): the final write reports the failure. RUNNING only: a stop or a
    // swap that came first keeps its own state.
    this.e.store.parse.progress(rows.map(([id, r]) => ({ id, progress: r.progress, msg: r.log.join('\n'), begin: r.begin ?? null }))).then(
      () => faultPoint('parse:progress-written'),
      () => undefined, // the next update or the final state says what happened
    );
  }
}

const OWNER_BEAT_MS = 5_000;
/**
 * A node of a shared store claims up to `n` documents of the queue at a time (a batch), woken by
 * the store when work is queued, and looks for queued work every `ms` besides (lost wake-ups,
 * leases of dead nodes running out).
 */
export const PARSE_PULL = { n: PACE.batchDocs, ms: 2_000 };
/** How often a node of a shared store looks for documents of dead nodes (ms; tests lower it). */
export const PARSE_SWEEP = { ms: 30_000 };
/** An owner whose heartbeat is older than this is gone (a frozen or killed process elsewhere). */
const OWNER_STALE_MS = 60_000;

/** Is the process that owns a parse still there? On this host: its pid exists; anywhere: a fresh heartbeat. */
function ownerAlive(pid: number, host: string, heartbeat: number): boolean {
  if (pid === process.pid && host === hostname()) return false; // this process just opened: not parsing yet
  if (host === hostname()) {
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    }
  }
  return Date.now() - heartbeat < OWNER_STALE_MS;
}


import { availableParallelism, hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Engine } from './engine.js';
import { RUN, type DocumentRow } from './documents.js';
import { titleMix } from './embedding.js';
import { getBlob, upsertChunks, removeDocumentChunks, cachedStatement, toBlob, fromBlob, finishParseLogs, type NewChunk } from '../store/index.js';
import { effectiveParserConfig } from '../ingest/chunkers/index.js';
import { IngestWorker, IngestError, type IngestLimits, type ParseOutcome, INGEST_DEFAULTS } from '../ingest/worker/index.js';
import { DEFAULTS as PARSER_DEFAULTS } from '../ingest/parsers/index.js';
import { parseModelId, BUILTIN_FACTORY } from '../embed/index.js';
import { chunkId, formatDateTime, faultPoint } from '../util/index.js';
import { chunkLanguage, languageSetting, type LangSetting } from '../text/index.js';

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

  constructor(private readonly e: Engine, limits: IngestLimits = INGEST_DEFAULTS, lanes = Math.min(2, availableParallelism())) {
    this.workers = Array.from({ length: Math.max(1, lanes) }, () => new IngestWorker(limits));
    this.progress = new ProgressWriter(e);
    e.onClose(() => this.stop());
    if (e.readonly) return; // recovery writes; a read-only open leaves it to the next writer
    // A process killed mid-parse left these RUNNING with their old chunks intact: parse again —
    // unless another live process (a server, a script on the same file) is parsing them now.
    const stuck = e.db.prepare(`SELECT d.id, o.pid, o.host, o.heartbeat FROM document d LEFT JOIN parse_owner o ON o.document_id = d.id
      WHERE d.run = ?`).all(RUN.RUNNING) as Array<{ id: string; pid: number | null; host: string | null; heartbeat: number | null }>;
    const orphaned = stuck.filter((r) => r.pid === null || !ownerAlive(r.pid, r.host!, r.heartbeat!));
    if (orphaned.length) this.enqueue(orphaned.map((r) => r.id));
    // A process killed after its parse ended (between the last state write and the release) left
    // its ownership row behind: drop dead owners' rows of documents nobody is parsing. Best effort
    // (a busy or read-only file keeps them; they are harmless, only untidy).
    const ended = e.db.prepare(`SELECT o.document_id AS id, o.pid, o.host, o.heartbeat FROM parse_owner o
      LEFT JOIN document d ON d.id = o.document_id WHERE d.run IS NOT ?`).all(RUN.RUNNING) as Array<{ id: string; pid: number; host: string; heartbeat: number }>;
    const gone = ended.filter((r) => !ownerAlive(r.pid, r.host, r.heartbeat));
    try {
      if (gone.length) e.tx(() => gone.forEach((r) => e.db.prepare('DELETE FROM parse_owner WHERE document_id = ? AND pid = ?').run(r.id, r.pid)));
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

  /** Queues documents already marked RUNNING by the caller; this process owns them until done. */
  enqueue(ids: string[]): void {
    if (!this.e.isClosed && ids.length) {
      const own = cachedStatement(this.e.db, 'INSERT OR REPLACE INTO parse_owner (document_id, pid, host, heartbeat) VALUES (?, ?, ?, ?)');
      const now = Date.now();
      const host = hostname();
      this.e.tx(() => ids.forEach((id) => own.run(id, process.pid, host, now)));
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
    // Each idle worker gets a lane.
    for (const w of this.workers) {
      if (this.busy.has(w) || this.stopped) continue;
      const lane = this.drain(w).catch(() => undefined).finally(() => this.lanes.delete(lane));
      this.lanes.add(lane);
    }
  }

  /** Stops a document's parse; returns false when it was neither queued nor running. */
  cancel(id: string): boolean {
    if (this.queued.delete(id)) {
      this.release([id]); // never started: nobody owns it now
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
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.progress.stop();
    this.pending = [];
    this.head = 0;
    this.queued.clear();
    for (const a of this.active.values()) a.abort.abort();
    await Promise.all(this.lanes);
    await Promise.all(this.workers.map((w) => w.close()));
  }

  /**
   * The next job: one document, or several small ones. Documents nobody wants parsed any more
   * (cancelled or deleted meanwhile) are released on the way.
   */
  private take(): Job[] {
    const e = this.e;
    const getDoc = cachedStatement(e.db, 'SELECT * FROM document WHERE id = ?');
    const getKb = cachedStatement(e.db, 'SELECT parser_config, embd_id, language FROM dataset WHERE id = ?');
    const jobs: Job[] = [];
    const gone: string[] = [];
    let bytes = 0;
    const kbs = new Map<string, Job['kb'] | undefined>();
    while (this.head < this.pending.length) {
      const id = this.pending[this.head]!;
      if (!this.queued.has(id)) {
        this.head++;
        continue;
      }
      const doc = getDoc.get(id) as DocumentRow | undefined;
      if (!kbs.has(doc?.dataset_id ?? '')) kbs.set(doc?.dataset_id ?? '', doc && (getKb.get(doc.dataset_id) as Job['kb'] | undefined));
      const kb = kbs.get(doc?.dataset_id ?? '');
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
    if (gone.length) this.release(gone);
    return jobs;
  }

  /** Drops this process's ownership of documents it will not parse (best effort: a later open tidies up). */
  private release(ids: string[]): void {
    try {
      if (this.e.isClosed || this.stopped) return;
      const del = cachedStatement(this.e.db, 'DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
      this.e.tx(() => ids.forEach((id) => del.run(id, process.pid)));
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
      const fill = () => {
        while (!this.stopped && ahead.length < PACE.ahead) {
          const next = this.start(worker);
          if (!next) break;
          ahead.push(next);
        }
      };
      fill();
      let finishing: Promise<void> | null = null;
      while (ahead.length) {
        const cur = ahead.shift()!;
        await cur.parsed;
        fill();
        const done = this.finish(cur, worker);
        await finishing;
        finishing = done;
        if (!ahead.length) {
          await finishing;
          finishing = null;
          fill(); // queued meanwhile
        }
      }
    } finally {
      this.busy.delete(worker);
    }
  }

  /** Takes the next job and posts its parse to `worker` at once. */
  private start(worker: IngestWorker): Lane | null {
    const jobs = this.take();
    if (!jobs.length) return null;
    const abort = new AbortController();
    for (const job of jobs) this.active.set(job.doc.id, { job, abort, single: jobs.length === 1 });
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
        this.write(lane.jobs, lane.puts ?? []);
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
      try {
        this.e.db.prepare('UPDATE parse_owner SET heartbeat = ? WHERE pid = ? AND host = ?').run(Date.now(), process.pid, hostname());
      } catch {
        // Busy: the next beat tries again (a stale beat only lets another process re-queue later).
      }
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
    const out = await worker.parseMany(todo.map((j) => ({ data: getBlob(e.db, j.doc.blob_sha256) ?? new Uint8Array(), filename: j.doc.name, method: j.doc.parser_id, parserConfig: j.cfg, lang: languageSetting(j.kb.language) })),
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
    const get = cachedStatement(e.db, 'SELECT vector FROM embedding_cache WHERE model = ? AND sha256 = ?').pluck();
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
      for (const j of list) {
        const { chunks, shas } = j.parsed!;
        shas.forEach((sha, k) => {
          if (got.has(sha) || need.has(sha)) return;
          const hit = get.get(model, sha) as Buffer | undefined;
          if (hit) got.set(sha, fromBlob(hit));
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
   * One transaction for the whole job: the embedding cache rows, each parsed document's chunks
   * swapped in (DONE), failures recorded (FAIL, the old chunks and their counts kept), cancelled
   * ones timed; dataset counters moved by the differences; ownership released.
   */
  private write(jobs: Job[], puts: CachePut[]): void {
    const e = this.e;
    const t0 = performance.now();
    const mine = jobs.filter((j) => !j.again);
    const now = Date.now();
    const secs = (j: Job) => (performance.now() - j.t0) / 1000;
    try {
      e.tx(() => {
        const put = cachedStatement(e.db, 'INSERT OR REPLACE INTO embedding_cache (model, sha256, vector, create_time) VALUES (?, ?, ?, ?)');
        for (const [model, sha, v] of puts) put.run(model, sha, toBlob(v), now);
        const cur = cachedStatement(e.db, 'SELECT run, chunk_num, token_num FROM document WHERE id = ?');
        const state = new Map(mine.map((j) => [j, cur.get(j.doc.id) as { run: string; chunk_num: number; token_num: number } | undefined]));
        const live = mine.filter((j) => state.get(j)?.run === RUN.RUNNING);
        const swap = live.filter((j) => j.vectors && !j.error);
        removeDocumentChunks(e.db, swap.map((j) => j.doc.id)); // a re-parse's old chunks (none on a first parse)
        faultPoint('parse:old-removed');
        // A dataset whose language changed since its documents were analysed: the store analyses them again.
        const langNow = cachedStatement(e.db, 'SELECT language FROM dataset WHERE id = ?').pluck();
        const rows = new Map(swap.map((j) => [j, chunkRows(j, now, formatDateTime(now), languageSetting(langNow.get(j.doc.dataset_id) as string | null))]));
        upsertChunks(e.db, [...rows.values()].flat());
        faultPoint('parse:chunks-written');
        const counts = new Counts(e);
        const done = cachedStatement(e.db, `UPDATE document SET run = ?, progress = 1, progress_msg = ?, chunk_num = ?, token_num = ?,
          process_duration = ?, process_begin_at = ? WHERE id = ?`);
        for (const j of swap) {
          // Distinct ids: a chunk repeated in a document is stored once.
          const ids = new Map<string, number>();
          for (const c of rows.get(j)!) ids.set(c.id, c.token_num);
          let tokens = 0;
          for (const n of ids.values()) tokens += n;
          const s = secs(j);
          j.log.push(`${clock()} Indexing done (${s.toFixed(2)}s).`, `${clock()} Task done (${s.toFixed(2)}s)`);
          done.run(RUN.DONE, j.log.join('\n'), ids.size, tokens, s, j.began, j.doc.id);
          counts.moved(j.doc.dataset_id, state.get(j)!, ids.size, tokens);
        }
        const failed = cachedStatement(e.db, `UPDATE document SET run = ?, progress = -1, progress_msg = ?, process_duration = ?,
          process_begin_at = ? WHERE id = ?`);
        for (const j of live.filter((x) => !swap.includes(x))) {
          j.log.push(`${clock()} [ERROR] ${j.error ?? 'Cancelled'}`);
          failed.run(RUN.FAIL, j.log.join('\n'), secs(j), j.began, j.doc.id);
          counts.restore(j.doc.id, j.doc.dataset_id, state.get(j)!);
        }
        // Cancelled (by this process or another): the stop call set CANCEL and the counts; record when it stopped.
        const timed = cachedStatement(e.db, 'UPDATE document SET process_duration = ? WHERE id = ?');
        for (const j of mine.filter((x) => state.get(x)?.run === RUN.CANCEL)) {
          timed.run(secs(j), j.doc.id);
          counts.restore(j.doc.id, j.doc.dataset_id, state.get(j)!);
        }
        counts.apply();
        finishParseLogs(e.db, mine.map((j) => j.doc.id));
        const del = cachedStatement(e.db, 'DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
        for (const j of mine) del.run(j.doc.id, process.pid);
        faultPoint('parse:done-set');
      });
      faultPoint('parse:swapped');
    } catch (err) {
      this.writeFailed(mine, err);
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
   * owned by this pid, and a later open parses them again.
   */
  private writeFailed(jobs: Job[], err: unknown): void {
    const e = this.e;
    if (e.isClosed) return;
    const code = (err as { code?: unknown } | null)?.code;
    const text = err instanceof Error ? err.message : String(err);
    const msg = typeof code === 'string' && code.startsWith('SQLITE_') ? `Database ${e.db.name}: ${text} (${code})` : text;
    try {
      e.tx(() => {
        const cur = cachedStatement(e.db, 'SELECT run, chunk_num, token_num FROM document WHERE id = ?');
        const failed = cachedStatement(e.db, 'UPDATE document SET run = ?, progress = -1, progress_msg = ?, process_duration = ? WHERE id = ?');
        const del = cachedStatement(e.db, 'DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
        const counts = new Counts(e);
        for (const j of jobs) {
          const s = cur.get(j.doc.id) as { run: string; chunk_num: number; token_num: number } | undefined;
          if (s?.run === RUN.RUNNING) {
            failed.run(RUN.FAIL, [...j.log, `${clock()} [ERROR] ${msg}`].join('\n'), (performance.now() - j.t0) / 1000, j.doc.id);
            counts.restore(j.doc.id, j.doc.dataset_id, s);
          }
          del.run(j.doc.id, process.pid);
        }
        counts.apply();
        finishParseLogs(e.db, jobs.map((j) => j.doc.id));
      });
    } catch {
      // see above
    }
  }
}

type CachePut = [model: string, sha: string, vector: Float32Array];

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

function chunkRows(j: Job, now: number, time: string, setting: LangSetting): NewChunk[] {
  const { doc, parsed, vectors } = j;
  const fresh = setting === languageSetting(j.kb.language);
  return parsed!.chunks.map((c, i) => ({
    id: chunkId(c.content, doc.id), document_id: doc.id, dataset_id: doc.dataset_id, content: c.content, index_text: c.indexText,
    title: doc.name, important_keywords: c.important_keywords ?? [], questions: c.questions ?? [], tag_kwd: c.tag_kwd ?? [],
    positions: c.positions ?? [], available: doc.status === '1', doc_type: c.doc_type ?? '', chunk_order: i,
    page_num: c.page_num, top: c.top, token_num: parsed!.tokens[i]!, create_time: time, create_timestamp: now / 1000, vector: vectors![i]!,
    ...(fresh
      ? { lang: parsed!.langs[i]!, terms: parsed!.terms[i] } // analysed in the worker, with doc.name as title
      : { lang: chunkLanguage(setting, c.indexText ?? c.content, c.important_keywords, c.questions) }),
  }));
}

/**
 * Document counts set inside a transaction, and their datasets' counters moved by the same
 * differences: no count over a dataset's documents.
 */
class Counts {
  private readonly delta = new Map<string, [number, number]>();
  constructor(private readonly e: Engine) {}

  /** The document's counts went from `old` to (chunks, tokens), already written. */
  moved(datasetId: string, old: { chunk_num: number; token_num: number }, chunks: number, tokens: number): void {
    const d = this.delta.get(datasetId) ?? [0, 0];
    this.delta.set(datasetId, [d[0] + chunks - old.chunk_num, d[1] + tokens - old.token_num]);
  }

  /** Sets a document's counts from its chunk rows (the swap did not happen: the old chunks stay). */
  restore(id: string, datasetId: string, old: { chunk_num: number; token_num: number }): void {
    const r = cachedStatement(this.e.db, 'SELECT COUNT(*) AS n, COALESCE(SUM(token_num), 0) AS t FROM chunk WHERE document_id = ?').get(id) as { n: number; t: number };
    cachedStatement(this.e.db, 'UPDATE document SET chunk_num = ?, token_num = ? WHERE id = ?').run(r.n, r.t, id);
    this.moved(datasetId, old, r.n, r.t);
  }

  apply(): void {
    const up = cachedStatement(this.e.db, 'UPDATE dataset SET chunk_num = chunk_num + ?, token_num = token_num + ? WHERE id = ?');
    for (const [id, [c, t]] of this.delta) if (c || t) up.run(c, t, id);
    this.delta.clear();
  }
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
    try {
      const up = cachedStatement(this.e.db, `UPDATE document SET progress = ?, progress_msg = ?, process_begin_at = COALESCE(?, process_begin_at)
        WHERE id = ? AND run = '${RUN.RUNNING}'`);
      this.e.tx(() => rows.forEach(([id, r]) => up.run(r.progress, r.log.join('\n'), r.begin ?? null, id)));
      faultPoint('parse:progress-written');
    } catch {
      // the next update or the final state says what happened
    }
  }
}

const OWNER_BEAT_MS = 5_000;
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

/**
 * A parse that failed or was cancelled leaves the previous chunks in place (the swap never
 * happened): the documents' counts, zeroed when it started, say so again, and their datasets'
 * counters move with them. Inside a transaction.
 */
export function restoreCounts(e: Engine, ids: string[]): void {
  const cur = cachedStatement(e.db, 'SELECT dataset_id, chunk_num, token_num FROM document WHERE id = ?');
  const counts = new Counts(e);
  for (const id of ids) {
    const d = cur.get(id) as { dataset_id: string; chunk_num: number; token_num: number } | undefined;
    if (d) counts.restore(id, d.dataset_id, d);
  }
  counts.apply();
}

/**
 * Marks documents for parsing (counts zeroed, their datasets' counters lowered by as much) in one
 * transaction. Their old chunks stay searchable until the new ones replace them in one swap; a
 * failed or cancelled parse restores the counts.
 */
export function resetForParse(e: Engine, ids: string[]): void {
  const cur = cachedStatement(e.db, 'SELECT dataset_id, chunk_num, token_num FROM document WHERE id = ?');
  const reset = cachedStatement(e.db, `UPDATE document SET run = ?, progress = 0, progress_msg = '', chunk_num = 0, token_num = 0,
    process_duration = 0, process_begin_at = NULL WHERE id = ?`);
  e.tx(() => {
    const counts = new Counts(e);
    for (const id of ids) {
      const d = cur.get(id) as { dataset_id: string; chunk_num: number; token_num: number };
      reset.run(RUN.RUNNING, id);
      counts.moved(d.dataset_id, d, 0, 0);
    }
    counts.apply();
  });
}

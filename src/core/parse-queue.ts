import { availableParallelism, hostname } from 'node:os';
import type { Engine } from './engine.js';
import { RUN, type DocumentRow } from './documents.js';
import { refreshDatasetCounts } from './datasets.js';
import { chunkVectors } from './embedding.js';
import { getBlob, upsertChunks, removeDocumentChunks, cachedStatement } from '../store/index.js';
import { effectiveParserConfig, chunkTokenCount } from '../ingest/chunkers/index.js';
import type { ChunkDraft } from '../ingest/types.js';
import { IngestWorker, IngestError, type IngestLimits, INGEST_DEFAULTS } from '../ingest/worker/index.js';
import { DEFAULTS as PARSER_DEFAULTS } from '../ingest/parsers/index.js';
import { parseModelId, BUILTIN_FACTORY } from '../embed/index.js';
import { chunkId, formatDateTime, faultPoint } from '../util/index.js';

const clock = () => new Date().toTimeString().slice(0, 8);

/**
 * Parses documents one at a time in the background: parse → chunk → embed → one transaction that
 * swaps the document's chunks. Nothing is written until the end, so a cancel or a crash never
 * leaves half a document indexed.
 */
export class ParseQueue {
  private readonly pending: string[] = [];
  private readonly aborts = new Map<string, AbortController>();
  private running: Promise<void> | null = null;
  private stopped = false;
  /** One lane per worker thread; each lane parses one document at a time. */
  private readonly workers: IngestWorker[];

  private heartbeat: NodeJS.Timeout | null = null;

  constructor(private readonly e: Engine, limits: IngestLimits = INGEST_DEFAULTS, lanes = Math.min(2, availableParallelism())) {
    this.workers = Array.from({ length: Math.max(1, lanes) }, () => new IngestWorker(limits));
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

  /** Queues documents already marked RUNNING by the caller; this process owns them until done. */
  enqueue(ids: string[]): void {
    if (!this.e.isClosed && ids.length) {
      const own = this.e.db.prepare('INSERT OR REPLACE INTO parse_owner (document_id, pid, host, heartbeat) VALUES (?, ?, ?, ?)');
      const now = Date.now();
      this.e.tx(() => ids.forEach((id) => own.run(id, process.pid, hostname(), now)));
      faultPoint('parse:owned');
      this.beat();
    }
    for (const id of ids) if (!this.pending.includes(id) && !this.aborts.has(id)) this.pending.push(id);
    // Lanes overlap one document's parse with another's embedding and index writes.
    this.running ??= Promise.all(this.workers.map((w) => this.drain(w))).then(() => undefined).finally(() => { this.running = null; });
  }

  /** Stops a document's parse; returns false when it was neither queued nor running. */
  cancel(id: string): boolean {
    const i = this.pending.indexOf(id);
    if (i >= 0) {
      this.pending.splice(i, 1);
      return true;
    }
    const a = this.aborts.get(id);
    a?.abort();
    return !!a;
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.pending.length = 0;
    for (const a of this.aborts.values()) a.abort();
    await this.running?.catch(() => undefined);
    await Promise.all(this.workers.map((w) => w.close()));
  }

  private async drain(worker: IngestWorker): Promise<void> {
    while (this.pending.length && !this.stopped) {
      const id = this.pending.shift()!;
      const abort = new AbortController();
      this.aborts.set(id, abort);
      try {
        await this.runOne(id, abort.signal, worker);
      } catch {
        // The store refused even the failure record (a disk that filled up, a file made read-only):
        // the row stays RUNNING, owned by this pid, and a later open parses it again. Nobody awaits
        // this loop, so a throw here would be an unhandled rejection, which ends the process.
      } finally {
        this.aborts.delete(id);
        // Done, failed or cancelled: nobody owns it now. Stopped mid-parse (close): the row stays,
        // with this pid, so the next open sees a dead owner and parses it again.
        try {
          if (!this.e.isClosed && !this.stopped) this.e.db.prepare('DELETE FROM parse_owner WHERE document_id = ? AND pid = ?').run(id, process.pid);
        } catch {
          // As above: a later open sees a dead owner.
        }
        faultPoint('parse:released');
      }
    }
  }

  /** While this process parses, its ownership rows stay fresh (another process reads them). */
  private beat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      if (this.e.isClosed || (!this.pending.length && !this.aborts.size)) {
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

  private setState(id: string, fields: Record<string, unknown>): void {
    if (this.e.isClosed) return;
    const cols = Object.keys(fields);
    this.e.db.prepare(`UPDATE document SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`).run({ ...fields, id });
  }

  private async runOne(id: string, signal: AbortSignal, worker: IngestWorker): Promise<void> {
    const e = this.e;
    const doc = e.db.prepare('SELECT * FROM document WHERE id = ?').get(id) as DocumentRow | undefined;
    if (!doc || doc.run !== RUN.RUNNING) return;
    const kb = e.db.prepare('SELECT parser_config, embd_id FROM dataset WHERE id = ?').get(doc.dataset_id) as { parser_config: string; embd_id: string } | undefined;
    if (!kb) return;
    const began = Date.now();
    const log: string[] = [`${clock()} Task has been received.`];
    const progress = (p: number, msg?: string) => {
      if (msg) log.push(`${clock()} ${msg}`);
      // Best effort: it runs in the worker's message handler, where a throw (a full disk) would be
      // an uncaught exception; the final write reports the failure.
      try {
        this.setState(id, { progress: p, progress_msg: log.join('\n') });
      } catch {
        // the next update or the final state says what happened
      }
    };
    this.setState(id, { process_begin_at: began, progress: 0, progress_msg: log.join('\n') });
    faultPoint('parse:started');
    try {
      // The parser's size limit, checked before the blob is read: a 1 GB file is refused
      // without a 1 GB read and a 1 GB copy to the worker.
      if (doc.size > PARSER_DEFAULTS.maxBytes) {
        const mib = (n: number) => Math.round((n / 1048576) * 10) / 10;
        throw new IngestError(`File is too large to parse (${mib(doc.size)} MiB; the limit is ${mib(PARSER_DEFAULTS.maxBytes)} MiB)`);
      }
      const data = getBlob(e.db, doc.blob_sha256) ?? new Uint8Array();
      const cfg = effectiveParserConfig(JSON.parse(kb.parser_config), JSON.parse(doc.parser_config));
      // Parsing and chunking run in a worker thread, bounded in time and memory.
      const parsed = await worker.parse(data, doc.name, doc.parser_id, cfg, { signal, onProgress: (p, m) => progress(p, m) });
      const chunks = parsed.chunks;
      for (const w of parsed.warnings) log.push(`${clock()} ${w}`);
      for (const n of parsed.notes) log.push(`${clock()} ${n}`);
      progress(0.4, `Chunked into ${chunks.length} chunks.`);
      const weight = typeof cfg.filename_embd_weight === 'number' ? cfg.filename_embd_weight : 0.1;
      // Built-in models are CPU-bound: they run in the worker too. HTTP models are I/O: main thread.
      const builtin = parseModelId(kb.embd_id)?.factory === BUILTIN_FACTORY;
      const embed = builtin ? (id: string, texts: string[], sig?: AbortSignal) => worker.embed(id, texts, sig) : undefined;
      const vectors: Float32Array[] = [];
      const batch = 64;
      for (let i = 0; i < chunks.length; i += batch) {
        signal.throwIfAborted();
        const part = chunks.slice(i, i + batch);
        vectors.push(...await chunkVectors(e, kb.embd_id, doc.name, part.map((c) => c.embedText ?? c.content), weight, signal, embed));
        progress(0.4 + 0.55 * Math.min(1, (i + batch) / chunks.length));
      }
      signal.throwIfAborted();
      if (e.isClosed) return;
      faultPoint('parse:embedded');
      const now = Date.now();
      let tokens = 0;
      e.tx(() => {
        const cur = e.db.prepare('SELECT run FROM document WHERE id = ?').get(id) as { run: string } | undefined;
        if (!cur || cur.run !== RUN.RUNNING) return; // cancelled or deleted meanwhile
        removeDocumentChunks(e.db, [id]);
        faultPoint('parse:old-removed');
        upsertChunks(e.db, chunks.map((c: ChunkDraft, i: number) => {
          const n = chunkTokenCount(c);
          tokens += n;
          return {
            id: chunkId(c.content, id), document_id: id, dataset_id: doc.dataset_id, content: c.content, index_text: c.indexText,
            title: doc.name, important_keywords: c.important_keywords ?? [], questions: c.questions ?? [], tag_kwd: c.tag_kwd ?? [],
            positions: c.positions ?? [], available: doc.status === '1', doc_type: c.doc_type ?? '', chunk_order: i,
            page_num: c.page_num, top: c.top, token_num: n, create_time: formatDateTime(now), create_timestamp: now / 1000, vector: vectors[i]!,
            terms: parsed.terms[i], // analysed in the worker, with doc.name as title
          };
        }));
        faultPoint('parse:chunks-written');
        const count = (e.db.prepare('SELECT COUNT(*) AS n FROM chunk WHERE document_id = ?').get(id) as { n: number }).n;
        const secs = (Date.now() - began) / 1000;
        log.push(`${clock()} Indexing done (${secs.toFixed(2)}s).`, `${clock()} Task done (${secs.toFixed(2)}s)`);
        this.setState(id, { run: RUN.DONE, progress: 1, progress_msg: log.join('\n'), chunk_num: count, token_num: tokens, process_duration: secs });
        refreshDatasetCounts(e, doc.dataset_id);
        faultPoint('parse:done-set');
      });
      faultPoint('parse:swapped');
    } catch (err) {
      if (e.isClosed) return;
      const secs = (Date.now() - began) / 1000;
      if (signal.aborted) {
        // The stop call already set CANCEL; record when it stopped.
        this.setState(id, { process_duration: secs });
        this.recount(id, doc.dataset_id);
        return;
      }
      const code = (err as { code?: unknown } | null)?.code;
      const text = err instanceof Error ? err.message : String(err);
      // A storage failure names the file and SQLite's code (SQLITE_FULL, SQLITE_IOERR_WRITE, …).
      const msg = typeof code === 'string' && code.startsWith('SQLITE_') ? `Database ${e.db.name}: ${text} (${code})` : text;
      log.push(`${clock()} [ERROR] ${msg}`);
      this.setState(id, { run: RUN.FAIL, progress: -1, progress_msg: log.join('\n'), process_duration: secs });
      this.recount(id, doc.dataset_id);
    }
  }

  /** Best effort (a full disk): the counts are recomputed at the next successful parse anyway. */
  private recount(id: string, datasetId: string): void {
    try {
      this.e.tx(() => {
        restoreCounts(this.e, [id]);
        refreshDatasetCounts(this.e, datasetId);
      });
    } catch {
      // see above
    }
  }}

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
 * happened): the documents' counts, zeroed when it started, say so again. Inside a transaction.
 */
export function restoreCounts(e: Engine, ids: string[]): void {
  const sum = cachedStatement(e.db, 'SELECT COUNT(*) AS n, COALESCE(SUM(token_num), 0) AS t FROM chunk WHERE document_id = ?');
  const set = cachedStatement(e.db, 'UPDATE document SET chunk_num = ?, token_num = ? WHERE id = ?');
  for (const id of ids) {
    const r = sum.get(id) as { n: number; t: number };
    set.run(r.n, r.t, id);
  }
}

/**
 * Marks documents for parsing (counts zeroed) in one transaction. Their old chunks stay searchable
 * until the new ones replace them in one swap; a failed or cancelled parse restores the counts.
 */
export function resetForParse(e: Engine, ids: string[]): void {
  e.tx(() => {
    const datasets = new Set<string>();
    for (const id of ids) {
      const d = e.db.prepare('SELECT dataset_id FROM document WHERE id = ?').get(id) as { dataset_id: string };
      datasets.add(d.dataset_id);
      e.db.prepare(`UPDATE document SET run = ?, progress = 0, progress_msg = '', chunk_num = 0, token_num = 0,
        process_duration = 0, process_begin_at = NULL WHERE id = ?`).run(RUN.RUNNING, id);
    }
    for (const ds of datasets) refreshDatasetCounts(e, ds);
  });
}

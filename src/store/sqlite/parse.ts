/** Parse work on SQLite (interface/parse.ts): claims in parse_owner, the parse state of documents, the swap of chunks. */
import { cachedStatement, type Db } from '../db.js';
import { upsertChunks, removeDocumentChunks } from '../chunks.js';
import { CounterDeltas, RUN } from '../interface/index.js';
import type {
  CachedVector, DocumentRow, ParseClaim, ParseDataset, ParseLogOrder, ParseLogRow, ParseOutcomeRow, ParseOwner, ParseWorkStore,
} from '../interface/index.js';
import { recordParseStarts, finishParseLogs, getParseLog, PARSE_LOG_SELECT } from '../parse-log.js';
import { faultPoint } from '../../util/index.js';
import { chunkLanguage, languageSetting } from '../../text/index.js';
import type { SqliteConn } from './store.js';
import type { SqliteChunks } from './chunk-store.js';

/** Sets a document's counts from its chunk rows (the swap did not happen: the old chunks stay) and records the move. */
function restoreCounts(db: Db, counts: CounterDeltas, id: string, datasetId: string, old: { chunk_num: number; token_num: number }): void {
  const r = cachedStatement(db, 'SELECT COUNT(*) AS n, COALESCE(SUM(token_num), 0) AS t FROM chunk WHERE document_id = ?').get(id) as { n: number; t: number };
  cachedStatement(db, 'UPDATE document SET chunk_num = ?, token_num = ? WHERE id = ?').run(r.n, r.t, id);
  counts.moved(datasetId, old, r.n, r.t);
}

/** Moves the datasets' counters by the deltas gathered in this transaction. */
function applyCounts(db: Db, counts: CounterDeltas): void {
  const up = cachedStatement(db, 'UPDATE dataset SET chunk_num = chunk_num + ?, token_num = token_num + ? WHERE id = ?');
  for (const d of counts.take()) up.run(d.chunks, d.tokens, d.datasetId);
}

type RawClaim = { id: string; pid: number | null; host: string | null; heartbeat: number | null };

export class SqliteParseWork implements ParseWorkStore {
  constructor(private readonly c: SqliteConn, private readonly chunks: SqliteChunks) {}

  private get db() {
    return this.c.db;
  }

  /** running(), synchronously (the embedded engine recovers at open, in its constructor). */
  runningNow(): Array<{ id: string; claim: ParseClaim | null }> {
    const rows = this.db.prepare(`SELECT d.id, o.pid, o.host, o.heartbeat FROM document d LEFT JOIN parse_owner o ON o.document_id = d.id
      WHERE d.run = ?`).all(RUN.RUNNING) as RawClaim[];
    return rows.map((r) => ({ id: r.id, claim: r.pid === null ? null : { pid: r.pid, host: r.host!, heartbeat: r.heartbeat! } }));
  }

  async running(): Promise<Array<{ id: string; claim: ParseClaim | null }>> {
    return this.runningNow();
  }

  /** staleClaims(), synchronously. */
  staleClaimsNow(): Array<{ id: string; claim: ParseClaim }> {
    const rows = this.db.prepare(`SELECT o.document_id AS id, o.pid, o.host, o.heartbeat FROM parse_owner o
      LEFT JOIN document d ON d.id = o.document_id WHERE d.run IS NOT ?`).all(RUN.RUNNING) as Array<{ id: string; pid: number; host: string; heartbeat: number }>;
    return rows.map((r) => ({ id: r.id, claim: { pid: r.pid, host: r.host, heartbeat: r.heartbeat } }));
  }

  async staleClaims(): Promise<Array<{ id: string; claim: ParseClaim }>> {
    return this.staleClaimsNow();
  }

  /** dropClaims(), synchronously. */
  dropClaimsNow(claims: ReadonlyArray<{ id: string; pid: number }>): void {
    const del = this.db.prepare('DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
    this.c.tx(() => claims.forEach((r) => del.run(r.id, r.pid)));
  }

  async dropClaims(claims: ReadonlyArray<{ id: string; pid: number }>): Promise<void> {
    this.dropClaimsNow(claims);
  }

  async reset(ids: readonly string[], tenantId: string): Promise<void> {
    const db = this.db;
    const cur = cachedStatement(db, 'SELECT dataset_id, chunk_num, token_num FROM document WHERE id = ?');
    const reset = cachedStatement(db, `UPDATE document SET run = ?, progress = 0, progress_msg = '', chunk_num = 0, token_num = 0,
    process_duration = 0, process_begin_at = NULL WHERE id = ?`);
    this.c.tx(() => {
      const counts = new CounterDeltas();
      for (const id of ids) {
        const d = cur.get(id) as { dataset_id: string; chunk_num: number; token_num: number };
        reset.run(RUN.RUNNING, id);
        counts.moved(d.dataset_id, d, 0, 0);
      }
      applyCounts(db, counts);
      recordParseStarts(db, ids, tenantId);
    });
  }

  async claim(ids: readonly string[], owner: ParseOwner, now: number): Promise<void> {
    const own = cachedStatement(this.db, 'INSERT OR REPLACE INTO parse_owner (document_id, pid, host, heartbeat) VALUES (?, ?, ?, ?)');
    this.c.tx(() => ids.forEach((id) => own.run(id, owner.pid, owner.host, now)));
  }

  async claimNext(n: number, owner: ParseOwner, now: number): Promise<string[]> {
    if (!(n >= 1)) return [];
    const own = cachedStatement(this.db, 'INSERT INTO parse_owner (document_id, pid, host, heartbeat) VALUES (?, ?, ?, ?)');
    return this.c.tx(() => {
      const ids = (this.db.prepare(`SELECT d.id FROM document d WHERE d.run = ? AND NOT EXISTS (SELECT 1 FROM parse_owner o WHERE o.document_id = d.id)
        ORDER BY d.rowid LIMIT ?`).all(RUN.RUNNING, Math.floor(n)) as Array<{ id: string }>).map((r) => r.id);
      for (const id of ids) own.run(id, owner.pid, owner.host, now);
      return ids;
    });
  }

  async release(ids: readonly string[], pid: number): Promise<void> {
    const del = cachedStatement(this.db, 'DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
    this.c.tx(() => ids.forEach((id) => del.run(id, pid)));
  }

  async watchQueue(_wake: () => void): Promise<() => Promise<void>> {
    return async () => undefined;
  }

  async heartbeat(owner: ParseOwner, now: number): Promise<void> {
    this.db.prepare('UPDATE parse_owner SET heartbeat = ? WHERE pid = ? AND host = ?').run(now, owner.pid, owner.host);
  }

  async documents(ids: readonly string[]): Promise<Map<string, DocumentRow>> {
    const getDoc = cachedStatement(this.db, 'SELECT * FROM document WHERE id = ?');
    const out = new Map<string, DocumentRow>();
    for (const id of ids) {
      const d = getDoc.get(id) as DocumentRow | undefined;
      if (d) out.set(id, d);
    }
    return out;
  }

  async datasets(ids: readonly string[]): Promise<Map<string, ParseDataset>> {
    const getKb = cachedStatement(this.db, 'SELECT parser_config, embd_id, language FROM dataset WHERE id = ?');
    const out = new Map<string, ParseDataset>();
    for (const id of new Set(ids)) {
      const kb = getKb.get(id) as ParseDataset | undefined;
      if (kb) out.set(id, kb);
    }
    return out;
  }

  async progress(rows: ReadonlyArray<{ id: string; progress: number; msg: string; begin: number | null }>): Promise<void> {
    const up = cachedStatement(this.db, `UPDATE document SET progress = ?, progress_msg = ?, process_begin_at = COALESCE(?, process_begin_at)
        WHERE id = ? AND run = '${RUN.RUNNING}'`);
    this.c.tx(() => rows.forEach((r) => up.run(r.progress, r.msg, r.begin, r.id)));
  }

  async finish(puts: readonly CachedVector[], docs: readonly ParseOutcomeRow[], pid: number, time: number): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      this.chunks.putVectors(puts, time);
      const cur = cachedStatement(db, 'SELECT run, chunk_num, token_num FROM document WHERE id = ?');
      const state = new Map(docs.map((j) => [j, cur.get(j.id) as { run: string; chunk_num: number; token_num: number } | undefined]));
      const live = docs.filter((j) => state.get(j)?.run === RUN.RUNNING);
      const swap = live.filter((j) => j.chunks);
      removeDocumentChunks(db, swap.map((j) => j.id)); // a re-parse's old chunks (none on a first parse)
      faultPoint('parse:old-removed');
      // A dataset whose language changed since its documents were analysed: its chunks are analysed again.
      const langNow = cachedStatement(db, 'SELECT language FROM dataset WHERE id = ?').pluck();
      upsertChunks(db, swap.flatMap((j) => {
        const setting = languageSetting(langNow.get(j.dataset_id) as string | null);
        if (setting === languageSetting(j.language)) return j.chunks!;
        return j.chunks!.map(({ terms: _t, ...c }) => ({ ...c, lang: chunkLanguage(setting, c.index_text ?? c.content, c.important_keywords, c.questions) }));
      }));
      faultPoint('parse:chunks-written');
      const counts = new CounterDeltas();
      const done = cachedStatement(db, `UPDATE document SET run = ?, progress = 1, progress_msg = ?, chunk_num = ?, token_num = ?,
          process_duration = ?, process_begin_at = ? WHERE id = ?`);
      for (const j of swap) {
        // Distinct ids: a chunk repeated in a document is stored once.
        const ids = new Map<string, number>();
        for (const c of j.chunks!) ids.set(c.id, c.token_num);
        let tokens = 0;
        for (const n of ids.values()) tokens += n;
        j.log.push(...j.doneLines);
        done.run(RUN.DONE, j.log.join('\n'), ids.size, tokens, j.seconds, j.began, j.id);
        counts.moved(j.dataset_id, state.get(j)!, ids.size, tokens);
      }
      const failed = cachedStatement(db, `UPDATE document SET run = ?, progress = -1, progress_msg = ?, process_duration = ?,
          process_begin_at = ? WHERE id = ?`);
      for (const j of live.filter((x) => !swap.includes(x))) {
        j.log.push(j.failLine);
        failed.run(RUN.FAIL, j.log.join('\n'), j.seconds, j.began, j.id);
        restoreCounts(db, counts, j.id, j.dataset_id, state.get(j)!);
      }
      // Cancelled (by this process or another): the stop call set CANCEL and the counts; record when it stopped.
      const timed = cachedStatement(db, 'UPDATE document SET process_duration = ? WHERE id = ?');
      for (const j of docs.filter((x) => state.get(x)?.run === RUN.CANCEL)) {
        timed.run(j.seconds, j.id);
        restoreCounts(db, counts, j.id, j.dataset_id, state.get(j)!);
      }
      applyCounts(db, counts);
      finishParseLogs(db, docs.map((j) => j.id));
      const del = cachedStatement(db, 'DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
      for (const j of docs) del.run(j.id, pid);
      faultPoint('parse:done-set');
    });
    faultPoint('parse:swapped');
  }

  async failAll(docs: ReadonlyArray<Pick<ParseOutcomeRow, 'id' | 'dataset_id' | 'log' | 'seconds'>>, line: string, pid: number): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      const cur = cachedStatement(db, 'SELECT run, chunk_num, token_num FROM document WHERE id = ?');
      const failed = cachedStatement(db, 'UPDATE document SET run = ?, progress = -1, progress_msg = ?, process_duration = ? WHERE id = ?');
      const del = cachedStatement(db, 'DELETE FROM parse_owner WHERE document_id = ? AND pid = ?');
      const counts = new CounterDeltas();
      for (const j of docs) {
        const s = cur.get(j.id) as { run: string; chunk_num: number; token_num: number } | undefined;
        if (s?.run === RUN.RUNNING) {
          failed.run(RUN.FAIL, [...j.log, line].join('\n'), j.seconds, j.id);
          restoreCounts(db, counts, j.id, j.dataset_id, s);
        }
        del.run(j.id, pid);
      }
      applyCounts(db, counts);
      finishParseLogs(db, docs.map((j) => j.id));
    });
  }

  async cancel(ids: readonly string[]): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      const stop = db.prepare('UPDATE document SET run = ?, progress = 0 WHERE id = ?');
      for (const id of ids) stop.run(RUN.CANCEL, id);
      // and the dataset's counters, from the old chunks
      const cur = cachedStatement(db, 'SELECT dataset_id, chunk_num, token_num FROM document WHERE id = ?');
      const counts = new CounterDeltas();
      for (const id of ids) {
        const d = cur.get(id) as { dataset_id: string; chunk_num: number; token_num: number } | undefined;
        if (d) restoreCounts(db, counts, id, d.dataset_id, d);
      }
      applyCounts(db, counts);
      finishParseLogs(db, [...ids]);
    });
  }

  async log(id: string): Promise<ParseLogRow | undefined> {
    return getParseLog(this.db, id);
  }

  async logs(datasetId: string, q: { keywords?: string; orderby: ParseLogOrder; desc: boolean }): Promise<ParseLogRow[]> {
    const where = ['l.dataset_id = @ds'];
    const args: Record<string, unknown> = { ds: datasetId };
    if (q.keywords) (where.push('instr(LOWER(l.document_name), @kw) > 0'), (args.kw = q.keywords));
    const dir = q.desc ? 'DESC' : 'ASC';
    return this.db.prepare(`${PARSE_LOG_SELECT} WHERE ${where.join(' AND ')} ORDER BY l.${q.orderby} ${dir}, l.rowid ${dir}`).all(args) as ParseLogRow[];
  }
}

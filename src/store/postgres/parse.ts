/**
 * Parse work on PostgreSQL (interface/parse.ts): claims in `parse_owner` (pid, host, heartbeat:
 * a claim whose heartbeat stops is taken over by any process on any host), the parse state of
 * documents, the swap of a parsed document's chunks. Documents are locked (FOR UPDATE) by every
 * write that reads their state first, so a cancel and a finish on two processes take turns.
 */
import { CounterDeltas, RUN } from '../interface/index.js';
import type {
  CachedVector, DocumentRow, ParseClaim, ParseDataset, ParseLogOrder, ParseLogRow, ParseOutcomeRow, ParseOwner, ParseWorkStore,
} from '../interface/index.js';
import { faultPoint, newId } from '../../util/index.js';
import { chunkLanguage, languageSetting } from '../../text/index.js';
import type { PgDb, PgTx } from './db.js';
import { removeDocumentChunks, upsertChunks } from './chunk-rows.js';
import type { PgChunks } from './chunk-store.js';
import { dir, orderColumn, stripAll } from './sql.js';
import { PARSE_CHANNEL, PARSE_JOBS, PARSE_LISTENER, parseShare, LeaseKeeper, claimJobs, enqueueParse, finishParseJob, finishParseJobs, holdParseLeases, releaseLease, type Lease } from './claims.js';

/**
 * How long a parse claim of the queue lasts without renewal (renewed every third of it): a node
 * killed mid-parse has its documents claimed by another this long after its last renewal.
 * `RAGLOOM_PARSE_LEASE_MS` changes it (tests use a second or two).
 */
const PARSE_LEASE = { ms: Number(process.env.RAGLOOM_PARSE_LEASE_MS) > 0 ? Number(process.env.RAGLOOM_PARSE_LEASE_MS) : 30_000 };

type State = { run: string; chunk_num: number; token_num: number; dataset_id: string };

/** Opens one parse-log row per document being (re)queued; a row still open for it (a parse superseded) is closed as CANCEL (store/parse-log.ts). */
async function recordParseStarts(t: PgTx, documentIds: readonly string[], tenantId: string): Promise<void> {
  if (!documentIds.length) return;
  const now = Date.now();
  await t.run("UPDATE parse_log SET operation_status = '2', update_time = $1 WHERE document_id = ANY($2) AND operation_status = '1'", [now, [...documentIds]]);
  // In the order given (their insertion order is the log's).
  await t.run(`INSERT INTO parse_log (id, document_id, dataset_id, tenant_id, parser_id, document_name, document_suffix, document_type, source_from, create_time, update_time)
    SELECT x.lid, d.id, d.dataset_id, $2, d.parser_id, d.name, d.suffix, d.type, d.source_type, $3, $3
    FROM unnest($1::text[], $4::text[]) WITH ORDINALITY AS x(id, lid, k) JOIN document d ON d.id = x.id ORDER BY x.k`,
  [[...documentIds], tenantId, now, documentIds.map(() => newId())]);
}

/** Finishes the open parse-log rows of documents no longer RUNNING with their state. */
async function finishParseLogs(t: PgTx, documentIds: readonly string[]): Promise<void> {
  if (!documentIds.length) return;
  await t.run(`UPDATE parse_log l SET operation_status = d.run, progress = d.progress, progress_msg = d.progress_msg, process_begin_at = d.process_begin_at,
      process_duration = d.process_duration, update_time = $2
    FROM document d WHERE d.id = l.document_id AND l.document_id = ANY($1) AND l.operation_status = '1' AND d.run <> '1'`, [[...documentIds], Date.now()]);
}

/** A row as it reads now: one left open whose document is gone or no longer parsing reads as that state, or CANCEL. */
const PARSE_LOG_SELECT = `SELECT l.id, l.document_id, l.dataset_id, l.tenant_id, l.parser_id, l.document_name, l.document_suffix,
    l.document_type, l.source_from, l.progress, l.progress_msg, l.process_begin_at, l.process_duration,
    CASE WHEN l.operation_status = '1' AND (d.id IS NULL OR d.run <> '1') THEN COALESCE(d.run, '2') ELSE l.operation_status END AS operation_status,
    l.create_time, l.update_time
  FROM parse_log l LEFT JOIN document d ON d.id = l.document_id`;

/** Sets documents' counts from their chunk rows (the swap did not happen: the old chunks stay) and records the moves. One statement. */
async function restoreCounts(t: PgTx, counts: CounterDeltas, docs: ReadonlyArray<{ id: string; state: State }>): Promise<void> {
  if (!docs.length) return;
  const rows = await t.rows<{ id: string; n: number; tk: number }>(`UPDATE document d SET chunk_num = c.n, token_num = c.tk
    FROM (SELECT x.id, count(c.rowid)::int AS n, COALESCE(sum(c.token_num), 0)::bigint AS tk FROM unnest($1::text[]) AS x(id)
      LEFT JOIN chunk c ON c.document_id = x.id GROUP BY x.id) c
    WHERE d.id = c.id RETURNING d.id, c.n, c.tk`, [docs.map((d) => d.id)]);
  const by = new Map(rows.map((r) => [r.id, r]));
  for (const d of docs) {
    const r = by.get(d.id);
    if (r) counts.moved(d.state.dataset_id, d.state, r.n, r.tk);
  }
}

/** Moves the datasets' counters by the deltas gathered in this transaction (in id order: one lock order for all). */
async function applyCounts(t: PgTx, counts: CounterDeltas): Promise<void> {
  for (const d of counts.take()) await t.run('UPDATE dataset SET chunk_num = chunk_num + $1, token_num = token_num + $2 WHERE id = $3', [d.chunks, d.tokens, d.datasetId]);
}

/** The documents' states, locked until the transaction ends (in id order). */
async function lockStates(t: PgTx, ids: readonly string[]): Promise<Map<string, State>> {
  const rows = await t.rows<State & { id: string }>('SELECT id, run, chunk_num, token_num, dataset_id FROM document WHERE id = ANY($1) ORDER BY id FOR UPDATE', [[...new Set(ids)]]);
  return new Map(rows.map((r) => [r.id, r]));
}

export class PgParseWork implements ParseWorkStore {
  /** The parse_job leases this store holds (claimNext), by document id, kept alive by `keeper`. */
  private readonly leases = new Map<string, Lease<string>>();
  private readonly keeper: LeaseKeeper<string>;
  /**
   * RUNNING documents without a job (queued by a version before the queue) are queued once, at the
   * first claimNext: one such document a live older node is parsing is swapped in once (the later
   * finish finds it DONE).
   */
  private adopted = false;
  /** Listeners of this store on the parse channel (watchQueue): then pg_stat_activity counts this node among the claimers. */
  private watching = 0;

  constructor(private readonly db: PgDb, private readonly chunks: PgChunks, private readonly wrote: () => Promise<void>) {
    this.keeper = new LeaseKeeper<string>(db, PARSE_JOBS, PARSE_LEASE.ms, (lost) => {
      for (const id of lost) this.leases.delete(id);
    });
  }

  close(): void {
    this.keeper.stop();
    this.leases.clear();
  }

  /** The leases of these documents still held here. */
  private held(ids: readonly string[]): Lease<string>[] {
    return ids.flatMap((id) => (this.leases.has(id) ? [this.leases.get(id)!] : []));
  }

  /**
   * In a finishing transaction, after the documents are locked: which of their leases this claim
   * still holds (`holdLease`; the others' results are not written), and which of those were queued
   * again meanwhile (their result is stale: `finishParseJob` lets them run once more).
   */
  private async holdAll(t: PgTx, ids: readonly string[]): Promise<{ lost: Set<string>; again: Set<string>; held: Lease<string>[] }> {
    const mine = this.held(ids);
    const kept = await holdParseLeases(t, mine);
    const lost = new Set(mine.filter((l) => !kept.has(l.key)).map((l) => l.key));
    const again = new Set([...kept].filter(([, a]) => a).map(([k]) => k));
    const held = mine.filter((l) => kept.has(l.key));
    return { lost, again, held };
  }

  private let(held: readonly Lease<string>[]): void {
    for (const l of held) {
      this.leases.delete(l.key);
      this.keeper.remove(l);
    }
  }

  async claimNext(n: number, owner: ParseOwner, now: number): Promise<string[]> {
    if (!(n >= 1)) return [];
    if (!this.adopted) {
      await this.db.run(`INSERT INTO parse_job (document_id, dataset_id, queued_at, ord)
        SELECT d.id, d.dataset_id, ragloom_now_ms(), d.ord FROM document d WHERE d.run = $1
          AND NOT EXISTS (SELECT 1 FROM parse_job j WHERE j.document_id = d.id)
        ON CONFLICT (document_id) DO NOTHING`, [RUN.RUNNING], { idempotent: true });
      this.adopted = true;
    }
    const share = await parseShare(this.db, Math.floor(n), this.leases.size, !this.watching);
    if (!share) return [];
    const leases = await claimJobs<string>(this.db, PARSE_JOBS, share, PARSE_LEASE.ms);
    if (!leases.length) return [];
    const ids = await this.db.tx(async (t) => {
      const state = await lockStates(t, leases.map((l) => l.key));
      const out: string[] = [];
      for (const l of leases) {
        if (state.get(l.key)?.run === RUN.RUNNING) out.push(l.key);
        // Cancelled or deleted while queued: nothing to parse.
        else await finishParseJob(t, l);
      }
      await t.run(`INSERT INTO parse_owner (document_id, pid, host, heartbeat) SELECT id, $2::int, $3, $4::bigint FROM unnest($1::text[]) AS id
        ON CONFLICT (document_id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, heartbeat = EXCLUDED.heartbeat`, [out, owner.pid, owner.host, now]);
      return out;
    }, { idempotent: true });
    const keep = leases.filter((l) => ids.includes(l.key));
    for (const l of keep) this.leases.set(l.key, l);
    this.keeper.add(keep);
    return ids;
  }

  async running(): Promise<Array<{ id: string; claim: ParseClaim | null }>> {
    const rows = await this.db.rows<{ id: string; pid: number | null; host: string | null; heartbeat: number | null }>(`SELECT d.id, o.pid, o.host, o.heartbeat
      FROM document d LEFT JOIN parse_owner o ON o.document_id = d.id WHERE d.run = $1 ORDER BY d.ord`, [RUN.RUNNING]);
    return rows.map((r) => ({ id: r.id, claim: r.pid === null ? null : { pid: r.pid, host: r.host!, heartbeat: r.heartbeat! } }));
  }

  async staleClaims(): Promise<Array<{ id: string; claim: ParseClaim }>> {
    const rows = await this.db.rows<{ id: string; pid: number; host: string; heartbeat: number }>(`SELECT o.document_id AS id, o.pid, o.host, o.heartbeat FROM parse_owner o
      LEFT JOIN document d ON d.id = o.document_id WHERE d.run IS DISTINCT FROM $1 ORDER BY o.document_id`, [RUN.RUNNING]);
    return rows.map((r) => ({ id: r.id, claim: { pid: r.pid, host: r.host, heartbeat: r.heartbeat } }));
  }

  async dropClaims(claims: ReadonlyArray<{ id: string; pid: number }>): Promise<void> {
    if (!claims.length) return;
    await this.db.run('DELETE FROM parse_owner o USING unnest($1::text[], $2::int[]) AS x(id, pid) WHERE o.document_id = x.id AND o.pid = x.pid',
      [claims.map((c) => c.id), claims.map((c) => c.pid)], { idempotent: true });
  }

  async reset(ids: readonly string[], tenantId: string): Promise<void> {
    await this.db.tx(async (t) => {
      const states = await lockStates(t, ids);
      const counts = new CounterDeltas();
      await t.run(`UPDATE document SET run = $1, progress = 0, progress_msg = '', chunk_num = 0, token_num = 0, process_duration = 0, process_begin_at = NULL
        WHERE id = ANY($2)`, [RUN.RUNNING, [...states.keys()]]);
      for (const d of states.values()) counts.moved(d.dataset_id, d, 0, 0);
      await applyCounts(t, counts);
      await recordParseStarts(t, ids.filter((id) => states.has(id)), tenantId);
      await enqueueParse(t, [...states].map(([id, d]) => ({ document_id: id, dataset_id: d.dataset_id })));
    });
  }

  async claim(ids: readonly string[], owner: ParseOwner, now: number): Promise<void> {
    if (!ids.length) return;
    await this.db.run(`INSERT INTO parse_owner (document_id, pid, host, heartbeat) SELECT DISTINCT id, $2::int, $3, $4::bigint FROM unnest($1::text[]) AS id
      ON CONFLICT (document_id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, heartbeat = EXCLUDED.heartbeat`, [[...ids], owner.pid, owner.host, now], { idempotent: true });
  }

  async release(ids: readonly string[], pid: number): Promise<void> {
    if (!ids.length) return;
    await this.db.run('DELETE FROM parse_owner WHERE document_id = ANY($1) AND pid = $2', [[...ids], pid], { idempotent: true });
    const held = this.held(ids);
    for (const l of held) {
      await releaseLease(this.db, PARSE_JOBS, l);
      this.let([l]);
    }
    // Claimable again at once: idle nodes may take them.
    if (held.length) await this.db.run(`NOTIFY ${PARSE_CHANNEL}`, [], { idempotent: true });
  }

  async watchQueue(wake: () => void): Promise<() => Promise<void>> {
    const stop = await this.db.listen(PARSE_CHANNEL, () => wake(), PARSE_LISTENER);
    this.watching++;
    return async () => {
      this.watching--;
      await stop();
    };
  }

  async heartbeat(owner: ParseOwner, now: number): Promise<void> {
    await this.db.run('UPDATE parse_owner SET heartbeat = $1 WHERE pid = $2 AND host = $3', [now, owner.pid, owner.host], { idempotent: true });
  }

  async documents(ids: readonly string[]): Promise<Map<string, DocumentRow>> {
    const rows = stripAll<DocumentRow>(await this.db.rows('SELECT * FROM document WHERE id = ANY($1)', [[...new Set(ids)]]));
    const by = new Map(rows.map((r) => [r.id, r]));
    const out = new Map<string, DocumentRow>();
    for (const id of ids) if (by.has(id)) out.set(id, by.get(id)!);
    return out;
  }

  async datasets(ids: readonly string[]): Promise<Map<string, ParseDataset>> {
    const rows = await this.db.rows<ParseDataset & { id: string }>('SELECT id, parser_config, embd_id, language FROM dataset WHERE id = ANY($1)', [[...new Set(ids)]]);
    const by = new Map(rows.map(({ id, ...r }) => [id, r]));
    const out = new Map<string, ParseDataset>();
    for (const id of ids) if (by.has(id) && !out.has(id)) out.set(id, by.get(id)!);
    return out;
  }

  async progress(rows: ReadonlyArray<{ id: string; progress: number; msg: string; begin: number | null }>): Promise<void> {
    if (!rows.length) return;
    await this.db.run(`UPDATE document d SET progress = x.p, progress_msg = x.m, process_begin_at = COALESCE(x.b, d.process_begin_at)
      FROM unnest($1::text[], $2::float8[], $3::text[], $4::bigint[]) AS x(id, p, m, b) WHERE d.id = x.id AND d.run = '${RUN.RUNNING}'`,
    [rows.map((r) => r.id), rows.map((r) => r.progress), rows.map((r) => r.msg), rows.map((r) => r.begin)], { idempotent: true });
  }

  async finish(puts: readonly CachedVector[], all: readonly ParseOutcomeRow[], pid: number, time: number): Promise<void> {
    // The logs are arrays the caller keeps: a unit of work that runs again must not append twice.
    const logs = all.map((j) => [...j.log]);
    let ended: Lease<string>[] = [];
    await this.db.tx(async (t) => {
      all.forEach((j, i) => j.log.splice(0, j.log.length, ...logs[i]!));
      await this.chunks.putVectors(t, puts, time);
      const state = await lockStates(t, all.map((j) => j.id));
      // Queue claims lost to another claim write nothing; those queued again meanwhile stay RUNNING.
      const { lost, again, held } = await this.holdAll(t, all.map((j) => j.id));
      const docs = all.filter((j) => !lost.has(j.id));
      const live = docs.filter((j) => state.get(j.id)?.run === RUN.RUNNING && !again.has(j.id));
      const swap = live.filter((j) => j.chunks);
      await removeDocumentChunks(t, swap.map((j) => j.id)); // a re-parse's old chunks (none on a first parse)
      faultPoint('parse:old-removed');
      // A dataset whose language changed since its documents were analysed: its chunks are analysed again.
      const langs = new Map((await t.rows<{ id: string; language: string | null }>('SELECT id, language FROM dataset WHERE id = ANY($1)',
        [[...new Set(swap.map((j) => j.dataset_id))]])).map((r) => [r.id, r.language]));
      await upsertChunks(t, swap.flatMap((j) => {
        const setting = languageSetting(langs.get(j.dataset_id) ?? null);
        if (setting === languageSetting(j.language)) return j.chunks!;
        return j.chunks!.map(({ terms: _t, ...c }) => ({ ...c, lang: chunkLanguage(setting, c.index_text ?? c.content, c.important_keywords, c.questions) }));
      }));
      faultPoint('parse:chunks-written');
      const counts = new CounterDeltas();
      // Every document's end in one statement: DONE (counts set), FAIL (counts restored below), CANCEL (its duration).
      const ends: Array<{ id: string; run: string; progress: number; msg: string | null; chunks: number | null; tokens: number | null; began: number | null; seconds: number }> = [];
      for (const j of swap) {
        // Distinct ids: a chunk repeated in a document is stored once.
        const ids = new Map<string, number>();
        for (const c of j.chunks!) ids.set(c.id, c.token_num);
        let tokens = 0;
        for (const n of ids.values()) tokens += n;
        j.log.push(...j.doneLines);
        ends.push({ id: j.id, run: RUN.DONE, progress: 1, msg: j.log.join('\n'), chunks: ids.size, tokens, began: j.began, seconds: j.seconds });
        counts.moved(j.dataset_id, state.get(j.id)!, ids.size, tokens);
      }
      const failed = live.filter((x) => !swap.includes(x));
      for (const j of failed) {
        j.log.push(j.failLine);
        ends.push({ id: j.id, run: RUN.FAIL, progress: -1, msg: j.log.join('\n'), chunks: null, tokens: null, began: j.began, seconds: j.seconds });
      }
      // Cancelled (by this process or another): the stop call set CANCEL and the counts; record when it stopped.
      const cancelled = docs.filter((x) => state.get(x.id)?.run === RUN.CANCEL);
      for (const j of cancelled) ends.push({ id: j.id, run: RUN.CANCEL, progress: 0, msg: null, chunks: null, tokens: null, began: null, seconds: j.seconds });
      if (ends.length) {
        const col = <T>(f: (e: (typeof ends)[number]) => T): T[] => ends.map(f);
        // A CANCEL row keeps its run, progress, message and start (msg and began null).
        await t.run(`UPDATE document d SET run = x.run, progress = CASE WHEN x.msg IS NULL THEN d.progress ELSE x.p END,
            progress_msg = COALESCE(x.msg, d.progress_msg), chunk_num = COALESCE(x.n, d.chunk_num), token_num = COALESCE(x.tk, d.token_num),
            process_duration = x.s, process_begin_at = CASE WHEN x.msg IS NULL THEN d.process_begin_at ELSE x.b END
          FROM unnest($1::text[], $2::text[], $3::float8[], $4::text[], $5::int[], $6::bigint[], $7::bigint[], $8::float8[]) AS x(id, run, p, msg, n, tk, b, s)
          WHERE d.id = x.id`, [col((e) => e.id), col((e) => e.run), col((e) => e.progress), col((e) => e.msg), col((e) => e.chunks), col((e) => e.tokens),
          col((e) => e.began), col((e) => e.seconds)]);
      }
      await restoreCounts(t, counts, [...failed, ...cancelled].map((j) => ({ id: j.id, state: state.get(j.id)! })));
      await finishParseLogs(t, docs.map((j) => j.id));
      await t.run('DELETE FROM parse_owner WHERE document_id = ANY($1) AND pid = $2', [docs.map((j) => j.id), pid]);
      await finishParseJobs(t, held);
      // Last: the datasets' rows stay locked from here to the commit, which other lanes' swaps wait for.
      await applyCounts(t, counts);
      ended = [...held, ...this.held([...lost])];
      faultPoint('parse:done-set');
    });
    this.let(ended);
    faultPoint('parse:swapped');
    await this.wrote();
  }

  async failAll(all: ReadonlyArray<Pick<ParseOutcomeRow, 'id' | 'dataset_id' | 'log' | 'seconds'>>, line: string, pid: number): Promise<void> {
    let ended: Lease<string>[] = [];
    await this.db.tx(async (t) => {
      const state = await lockStates(t, all.map((j) => j.id));
      const { lost, again, held } = await this.holdAll(t, all.map((j) => j.id));
      const docs = all.filter((j) => !lost.has(j.id));
      const counts = new CounterDeltas();
      const failing = docs.filter((j) => state.get(j.id)?.run === RUN.RUNNING && !again.has(j.id));
      if (failing.length) {
        await t.run(`UPDATE document d SET run = $1, progress = -1, progress_msg = x.m, process_duration = x.s
          FROM unnest($2::text[], $3::text[], $4::float8[]) AS x(id, m, s) WHERE d.id = x.id`,
        [RUN.FAIL, failing.map((j) => j.id), failing.map((j) => [...j.log, line].join('\n')), failing.map((j) => j.seconds)]);
      }
      await restoreCounts(t, counts, failing.map((j) => ({ id: j.id, state: state.get(j.id)! })));
      await finishParseLogs(t, docs.map((j) => j.id));
      await t.run('DELETE FROM parse_owner WHERE document_id = ANY($1) AND pid = $2', [docs.map((j) => j.id), pid]);
      await finishParseJobs(t, held);
      await applyCounts(t, counts);
      ended = [...held, ...this.held([...lost])];
    }, { idempotent: true });
    this.let(ended);
  }

  async cancel(ids: readonly string[]): Promise<void> {
    await this.db.tx(async (t) => {
      const state = await lockStates(t, ids);
      await t.run('UPDATE document SET run = $1, progress = 0 WHERE id = ANY($2)', [RUN.CANCEL, [...state.keys()]]);
      const counts = new CounterDeltas();
      await restoreCounts(t, counts, [...state].map(([id, d]) => ({ id, state: d })));
      await applyCounts(t, counts);
      await finishParseLogs(t, [...ids]);
    }, { idempotent: true });
  }

  async log(id: string): Promise<ParseLogRow | undefined> {
    return this.db.one<ParseLogRow>(`${PARSE_LOG_SELECT} WHERE l.id = $1`, [id]);
  }

  async logs(datasetId: string, q: { keywords?: string; orderby: ParseLogOrder; desc: boolean }): Promise<ParseLogRow[]> {
    const p: unknown[] = [datasetId];
    let where = 'l.dataset_id = $1';
    if (q.keywords) (p.push(q.keywords), (where += ` AND strpos(ragloom_nocase(l.document_name), $2) > 0`));
    const d = dir(q.desc);
    return this.db.rows<ParseLogRow>(`${PARSE_LOG_SELECT} WHERE ${where} ORDER BY ${orderColumn(q.orderby, [], 'l.')} ${d}, l.ord ${d}`, p);
  }
}

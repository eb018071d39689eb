/**
 * Work shared by many processes on many hosts (parse jobs, memory extraction tasks), claimed with
 * row locks that skip locked rows and held with leases.
 *
 * - `claimJobs` takes up to n ready rows whose lease is absent or expired, in queue order, with
 *   `FOR UPDATE SKIP LOCKED` (claimers never wait on each other, and never take the same row), and
 *   stamps each with this owner, a fresh random token and `lease_until`. Times are the database
 *   server's clock (`ragloom_now_ms()`), so hosts whose clocks disagree still agree on leases.
 * - The claimer renews its leases while it works (`LeaseKeeper`, every third of the lease); a
 *   process that dies stops renewing, its leases run out and another process claims the rows.
 * - The result of a job is written in one transaction that first re-checks the lease
 *   (`holdLease`: the row still carries this claim's token, locked until commit). A claimer that
 *   stalled past its lease and lost the row to another finds a new token there and writes
 *   nothing: a job's result is written by one claim only, and never while another claim's lease
 *   is live.
 */
import { hostname } from 'node:os';
import { faultPoint } from '../../util/index.js';
import { PgDb, type PgTx } from './db.js';

/** A table of claimable rows. Every name is an identifier of the schema, never input. */
export interface LeaseQueue {
  readonly table: string;
  /** The key column. */
  readonly key: string;
  /** Queue order (oldest first). */
  readonly order: string;
  /** What else makes a row claimable. */
  readonly ready: string;
}

/** parse_job: a queued document, parsed by whichever process claims it first. */
// Within one queueing, the documents' own order (the order SQLite parses them in).
export const PARSE_JOBS: LeaseQueue = { table: 'parse_job', key: 'document_id', order: 'queued_at, ord, document_id', ready: 'TRUE' };

/** memory_task: a pending extraction, once its retry time (due_at) has come. */
export const MEMORY_TASKS: LeaseQueue = { table: 'memory_task', key: 'id', order: 'id', ready: "status = 'pending' AND due_at <= ragloom_now_ms()" };

export interface Lease<K = string | number> {
  readonly key: K;
  /** This claim's token: a later claim of the same row has another. */
  readonly token: string;
  /** How many times the row has been claimed (this claim included): a job that keeps killing its claimers shows here. */
  readonly claims: number;
  /** When the lease runs out (server ms), as last stamped. */
  until: number;
}

/** This process, as lease owners are named (for people reading the table: leases are checked by token). */
export function leaseOwner(): string {
  return `${hostname()}:${process.pid}`;
}

/** Claims up to `n` claimable rows of `q` for `leaseMs`. One short transaction. */
export async function claimJobs<K = string | number>(db: PgDb, q: LeaseQueue, n: number, leaseMs: number, owner = leaseOwner()): Promise<Lease<K>[]> {
  if (!(n >= 1) || !(leaseMs >= 1)) throw new RangeError('claimJobs: n and leaseMs must be ≥ 1');
  const rows = await db.tx((t) => t.rows<{ key: K; token: string; claims: number; until: number }>(`
    WITH c AS (
      SELECT ${q.key} FROM ${q.table}
      WHERE (${q.ready}) AND (lease_until IS NULL OR lease_until < ragloom_now_ms())
      ORDER BY ${q.order} LIMIT $1 FOR UPDATE SKIP LOCKED
    )
    UPDATE ${q.table} j SET lease_owner = $2, lease_token = gen_random_uuid(), lease_until = ragloom_now_ms() + $3, claims = j.claims + 1
    FROM c WHERE j.${q.key} = c.${q.key}
    RETURNING j.${q.key} AS key, j.lease_token::text AS token, j.claims, j.lease_until AS until`, [n, owner, leaseMs]));
  // A retried claim after a lost COMMIT would claim other rows and leave these leased to nobody
  // until they expire: harmless (they come due again), so the claim is not idempotent-retried.
  faultPoint('pg-claims:claimed');
  return rows.map((r) => ({ key: r.key, token: r.token, claims: r.claims, until: r.until }));
}

/**
 * Moves the leases on by `leaseMs`; returns the keys whose lease was lost (another claim took the
 * row, or it is gone): the caller must stop working on those.
 */
export async function renewLeases<K>(db: PgDb, q: LeaseQueue, leases: readonly Lease<K>[], leaseMs: number): Promise<K[]> {
  if (!leases.length) return [];
  const kept = await db.tx((t) => t.rows<{ token: string; until: number }>(`
    UPDATE ${q.table} j SET lease_until = ragloom_now_ms() + $2
    FROM unnest($1::uuid[]) AS l(token) WHERE j.lease_token = l.token
    RETURNING j.lease_token::text AS token, j.lease_until AS until`, [leases.map((l) => l.token), leaseMs]), { idempotent: true });
  const until = new Map(kept.map((r) => [r.token, r.until]));
  const lost: K[] = [];
  for (const l of leases) {
    const u = until.get(l.token);
    if (u === undefined) lost.push(l.key);
    else l.until = u;
  }
  return lost;
}

/**
 * Inside the transaction that writes a job's result: true when the row still carries this claim
 * (then it stays locked until commit, so no other claim can take it meanwhile); false when the
 * lease was lost — the caller must roll back.
 */
export async function holdLease(tx: PgTx, q: LeaseQueue, lease: Lease): Promise<boolean> {
  const r = await tx.one(`SELECT 1 FROM ${q.table} WHERE ${q.key} = $1 AND lease_token = $2 FOR UPDATE`, [lease.key, lease.token]);
  faultPoint('pg-claims:held');
  return r !== undefined;
}

/** Gives a claim up (the row is claimable again at once). In a transaction of the caller's, or its own. */
export async function releaseLease(db: PgDb | PgTx, q: LeaseQueue, lease: Lease): Promise<boolean> {
  const sql = `UPDATE ${q.table} SET lease_owner = NULL, lease_token = NULL, lease_until = NULL WHERE ${q.key} = $1 AND lease_token = $2`;
  const n = db instanceof PgDb ? await db.run(sql, [lease.key, lease.token], { idempotent: true }) : await db.run(sql, [lease.key, lease.token]);
  return n === 1;
}

/** Notified at the commit of every queueing of parse work (and a release of claimed jobs): idle nodes wake and claim. */
export const PARSE_CHANNEL = 'ragloom_parse';
/** The application_name of a node's connection listening on PARSE_CHANNEL: the nodes sharing parse work are counted by it. */
export const PARSE_LISTENER = 'ragloom parse node';

/**
 * How many parse jobs a node holding `held` of them may claim now, at most `n`: its even share of
 * the queue (every job queued or being parsed, over the nodes listening for parse work, this one
 * at least: `unlisted` when it is not listening itself), less what it holds. A small folder is split between the nodes instead of going
 * whole to the first to wake; a node that finishes its share comes back for a share of the rest.
 */
export async function parseShare(db: PgDb, n: number, held: number, unlisted = false): Promise<number> {
  const r = await db.one<{ queued: number; nodes: number }>(`SELECT (SELECT count(*) FROM parse_job)::int AS queued,
    (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1)::int AS nodes`, [PARSE_LISTENER]);
  const share = Math.ceil(r!.queued / Math.max(1, r!.nodes + (unlisted ? 1 : 0))) - held;
  return Math.max(0, Math.min(n, share));
}

/**
 * Queues documents for parsing (in the caller's transaction), at one time (then in the documents'
 * order). A document already queued keeps its place; one being parsed is marked to run once more when that run ends.
 */
export async function enqueueParse(tx: PgTx, docs: ReadonlyArray<{ document_id: string; dataset_id: string }>): Promise<void> {
  if (!docs.length) return;
  await tx.run(`INSERT INTO parse_job (document_id, dataset_id, queued_at, ord)
    SELECT d, s, t.now, COALESCE((SELECT o.ord FROM document o WHERE o.id = x.d), 0)
    FROM unnest($1::text[], $2::text[]) AS x(d, s), (SELECT ragloom_now_ms() AS now) t
    ON CONFLICT (document_id) DO UPDATE SET again = parse_job.lease_token IS NOT NULL`,
  [docs.map((d) => d.document_id), docs.map((d) => d.dataset_id)]);
  await tx.run(`NOTIFY ${PARSE_CHANNEL}`);
}

/**
 * Ends a parse claim in the transaction that writes its result (after holdLease): the job is
 * removed, or — when it was queued again meanwhile — released to run once more. False when the
 * lease was lost (then nothing changed).
 */
export async function finishParseJob(tx: PgTx, lease: Lease): Promise<boolean> {
  const again = await tx.run(`UPDATE parse_job SET again = false, lease_owner = NULL, lease_token = NULL, lease_until = NULL, queued_at = ragloom_now_ms()
    WHERE document_id = $1 AND lease_token = $2 AND again`, [lease.key, lease.token]);
  if (again) {
    await tx.run(`NOTIFY ${PARSE_CHANNEL}`);
    return true;
  }
  return (await tx.run('DELETE FROM parse_job WHERE document_id = $1 AND lease_token = $2', [lease.key, lease.token])) === 1;
}

/**
 * `holdLease` and the `again` flag for many parse claims in one statement (the finishing
 * transaction stays short: an open writing transaction holds back every node's change feed).
 * Returns the documents still held, each with whether it was queued again meanwhile.
 */
export async function holdParseLeases(tx: PgTx, leases: readonly Lease<string>[]): Promise<Map<string, boolean>> {
  if (!leases.length) return new Map();
  // A token belongs to one claim of one row: key and token lists match pairwise.
  const rows = await tx.rows<{ key: string; again: boolean }>(`SELECT document_id AS key, again FROM parse_job
    WHERE document_id = ANY($1) AND lease_token = ANY($2::uuid[]) ORDER BY document_id FOR UPDATE`, [leases.map((l) => l.key), leases.map((l) => l.token)]);
  faultPoint('pg-claims:held');
  return new Map(rows.map((r) => [r.key, r.again]));
}

/** `finishParseJob` for many held claims, in two statements. */
export async function finishParseJobs(tx: PgTx, leases: readonly Lease<string>[]): Promise<void> {
  if (!leases.length) return;
  const p = [leases.map((l) => l.key), leases.map((l) => l.token)];
  const again = await tx.run(`UPDATE parse_job SET again = false, lease_owner = NULL, lease_token = NULL, lease_until = NULL, queued_at = ragloom_now_ms()
    WHERE document_id = ANY($1) AND lease_token = ANY($2::uuid[]) AND again`, p);
  if (again) await tx.run(`NOTIFY ${PARSE_CHANNEL}`);
  await tx.run('DELETE FROM parse_job WHERE document_id = ANY($1) AND lease_token = ANY($2::uuid[])', p);
}

/**
 * Keeps this process's leases of one queue alive while it works: renews them every third of the
 * lease, and reports the keys it lost (another process took them after this one stalled).
 */
export class LeaseKeeper<K = string | number> {
  private readonly held = new Map<string, Lease<K>>();
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly db: PgDb,
    private readonly q: LeaseQueue,
    private readonly leaseMs: number,
    private readonly onLost: (keys: K[]) => void = () => undefined,
  ) {}

  add(leases: readonly Lease<K>[]): void {
    for (const l of leases) this.held.set(l.token, l);
    if (!this.timer && this.held.size) {
      this.timer = setInterval(() => void this.beat(), Math.max(10, Math.floor(this.leaseMs / 3)));
      this.timer.unref();
    }
  }

  remove(lease: Lease<K>): void {
    this.held.delete(lease.token);
    if (!this.held.size && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  get size(): number {
    return this.held.size;
  }

  private async beat(): Promise<void> {
    if (this.busy || !this.held.size) return;
    this.busy = true;
    try {
      const leases = [...this.held.values()];
      const lost = await renewLeases(this.db, this.q, leases, this.leaseMs);
      if (lost.length) {
        const gone = new Set(lost);
        for (const l of leases) if (gone.has(l.key)) this.held.delete(l.token);
        this.onLost(lost);
      }
    } catch {
      // The database is away: the next beat tries again (the lease has two more before it runs out).
    } finally {
      this.busy = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.held.clear();
  }
}

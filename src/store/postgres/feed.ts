/**
 * The change feed on PostgreSQL: what each process's in-memory indexes apply to stay in step with
 * the database (chunks: topic 'chunk', partition = dataset; memory messages: 'memory', partition =
 * memory). Triggers write one `change_log` row per inserted, deleted or re-indexed row in the
 * writer's own transaction (migrations.ts), so a rolled-back write leaves no trace.
 *
 * Commit order: `seq` comes from a sequence, taken when the row is written, not when its
 * transaction commits, so reading "seq greater than the last one seen" misses a row whose
 * transaction took a lower seq but committed later. Each row therefore carries its transaction's
 * id (`txid`, xid8) and is read in (txid, seq) order, and only below the horizon: the oldest
 * transaction still running in the read's snapshot (`ragloom_feed_horizon()`, migrations.ts;
 * transactions of other databases on the same server are left out, as they cannot write here).
 * Every transaction below it has ended, so its rows are all visible now and no row can appear
 * below it later: a reader that has delivered everything up to a position never sees a row appear
 * behind it (nothing missed), and moves forward only (nothing seen twice). The price: a row
 * becomes readable once every transaction of this database that started writing before it has
 * ended, so a long write transaction delays the feed (for every node) by its length; store
 * writes keep transactions short, and idle_in_transaction_session_timeout (db.ts) ends a
 * forgotten one.
 *
 * LISTEN/NOTIFY is only a wake-up: the triggers notify `ragloom_change` at commit, a follower then
 * reads. Notifications can be coalesced or lost while disconnected, so a follower also reads on a
 * timer and after every reconnect, and reads again soon when rows are held back by an open
 * transaction.
 *
 * Trimming: readers record their position in `feed_reader`; `trimFeed` deletes rows below every
 * live reader's position and records the new floor in `meta`. A reader behind the floor (it was
 * away longer than the staleness limit) is told to reload its copy from the tables.
 */
import type { PgDb, PgQuery } from './db.js';

/** Delivered every row up to and including (txid, seq); seq -1 = none of txid's rows yet. */
export interface FeedPosition {
  readonly txid: bigint;
  readonly seq: number;
}

export interface Change {
  readonly topic: string;
  /** The row's partition: its dataset (chunks) or memory (memory messages). */
  readonly part: string;
  /** The row's id (chunk.rowid, memory_message.id). */
  readonly rid: number;
  readonly txid: bigint;
  readonly seq: number;
}

export interface FeedPage {
  /** In (txid, seq) order. */
  readonly changes: Change[];
  /** Where the next read starts. */
  readonly next: FeedPosition;
  /** The page was full: read again at once for the rest. */
  readonly more: boolean;
  /** The log was trimmed past the reader's position: rebuild the copy from the tables (and start from `next`). */
  readonly reload: boolean;
  /** Committed rows wait behind a transaction still open: read again shortly. */
  readonly heldBack: boolean;
}

export const FEED_CHANNEL = 'ragloom_change';
/** Rows per page. */
const PAGE = 5_000;

const xid = (v: unknown): bigint => BigInt(String(v));

/**
 * Where a copy built from the tables now must start following: every transaction below the
 * current horizon has finished, so the copy's reads (started after this call) see all of them;
 * anything later comes through the feed (a row read both ways is simply re-read: followers
 * re-read rows by id, they do not apply deltas).
 */
export async function feedStart(db: PgQuery): Promise<FeedPosition> {
  const r = await db.one<{ hi: string }>('SELECT ragloom_feed_horizon()::text AS hi');
  return { txid: xid(r!.hi), seq: -1 };
}

/** The next page of changes after `after` (topics: only these; all when omitted). */
export async function readFeed(db: PgQuery, after: FeedPosition, opts: { limit?: number; topics?: readonly string[] } = {}): Promise<FeedPage> {
  const limit = opts.limit ?? PAGE;
  // One statement, one snapshot: the horizon, the floor and the rows agree.
  const rows = await db.rows<{ hi: string; floor: string | null; held: boolean; txid: string | null; seq: number | null; topic: string | null; part: string | null; rid: number | null }>(`
    WITH s AS (
      SELECT ragloom_feed_horizon() AS hi, (SELECT value FROM meta WHERE key = 'feed_floor') AS floor
    )
    SELECT s.hi::text AS hi, s.floor,
      EXISTS (SELECT 1 FROM change_log h WHERE h.txid >= s.hi) AS held,
      c.txid::text AS txid, c.seq, c.topic, c.part, c.rid
    FROM s LEFT JOIN LATERAL (
      SELECT txid, seq, topic, part, rid FROM change_log
      WHERE (txid, seq) > ($1::xid8, $2::bigint) AND txid < s.hi AND ($4::text[] IS NULL OR topic = ANY($4))
      ORDER BY txid, seq LIMIT $3
    ) c ON true`, [after.txid.toString(), after.seq, limit, opts.topics ?? null]);
  const head = rows[0]!;
  const hi = xid(head.hi);
  const floor = head.floor === null ? 0n : xid(head.floor);
  if (after.txid < floor) return { changes: [], next: { txid: floor > hi ? floor : hi, seq: -1 }, more: false, reload: true, heldBack: head.held };
  const changes: Change[] = head.txid === null ? [] : rows.map((r) => ({ topic: r.topic!, part: r.part!, rid: r.rid!, txid: xid(r.txid), seq: r.seq! }));
  const more = changes.length === limit;
  const last = changes[changes.length - 1];
  // A full page continues after its last row; otherwise everything below the horizon is read.
  const next = more ? { txid: last!.txid, seq: last!.seq } : hi > after.txid ? { txid: hi, seq: -1 } : after;
  return { changes, next, more, reload: false, heldBack: head.held };
}

/** Records where node `node`'s reader is (trimFeed keeps what it has not read). */
export async function reportReader(db: PgDb, node: string, at: FeedPosition): Promise<void> {
  await db.run(`INSERT INTO feed_reader (node, txid, seen_at) VALUES ($1, $2::xid8, ragloom_now_ms())
    ON CONFLICT (node) DO UPDATE SET txid = EXCLUDED.txid, seen_at = EXCLUDED.seen_at`, [node, at.txid.toString()], { idempotent: true });
}

/** Forgets a node's reader (a node that stops for good). */
export async function dropReader(db: PgDb, node: string): Promise<void> {
  await db.run('DELETE FROM feed_reader WHERE node = $1', [node], { idempotent: true });
}

/**
 * Deletes the log below every live reader's position (and below the current horizon), records
 * the floor, and forgets readers not seen for `staleMs` (they reload when they come back).
 * Returns the rows deleted and the floor.
 */
export async function trimFeed(db: PgDb, opts: { staleMs?: number } = {}): Promise<{ deleted: number; floor: bigint }> {
  const staleMs = opts.staleMs ?? 15 * 60_000;
  return db.tx(async (t) => {
    // One trimmer at a time (the floor only moves up).
    await t.run("SELECT pg_advisory_xact_lock(hashtext('ragloom_feed_trim'))");
    await t.run('DELETE FROM feed_reader WHERE seen_at < ragloom_now_ms() - $1', [staleMs]);
    const r = await t.one<{ up: string }>(`SELECT LEAST(ragloom_feed_horizon(), (SELECT min(txid) FROM feed_reader))::text AS up`);
    const up = xid(r!.up);
    const old = await t.one<{ value: string }>("SELECT value FROM meta WHERE key = 'feed_floor'");
    if (old && xid(old.value) >= up) return { deleted: 0, floor: xid(old.value) };
    const deleted = await t.run('DELETE FROM change_log WHERE txid < $1::xid8', [up.toString()]);
    await t.run("INSERT INTO meta (key, value) VALUES ('feed_floor', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [up.toString()]);
    return { deleted, floor: up };
  }, { idempotent: true });
}

export interface FollowerOptions {
  /** Topics to deliver (all when omitted). */
  topics?: readonly string[];
  /** This node's name in `feed_reader` (trimming waits for it); none = not recorded. */
  node?: string;
  /** Read at least this often without a wake-up (ms). @default 1_000 */
  pollMs?: number;
  /** Read again this soon when rows are held back behind an open transaction (ms). @default 25 */
  heldBackMs?: number;
  /** Applies a batch of changes (in order); `reload` = rebuild the copy from the tables first. */
  apply(changes: readonly Change[], reload: boolean): void | Promise<void>;
  /** A failed read (the database is away): the follower keeps trying. */
  onError?(e: unknown): void;
}

/**
 * Follows the feed from `from`: reads on every wake-up (NOTIFY), on a timer and after reconnects,
 * and hands each batch to `apply`, one read at a time. `catchUp()` reads now (a search calls it
 * first, so it sees every write committed before it started, wake-up or not).
 */
export class FeedFollower {
  private pos: FeedPosition;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private stopped = false;
  private reported = 0;

  constructor(private readonly db: PgDb, from: FeedPosition, private readonly opts: FollowerOptions) {
    this.pos = from;
  }

  get position(): FeedPosition {
    return this.pos;
  }

  /** Starts listening and polling. */
  async start(): Promise<void> {
    this.unlisten = await this.db.listen(FEED_CHANNEL, () => this.wake());
    if (this.opts.node) {
      await reportReader(this.db, this.opts.node, this.pos);
      this.reported = Date.now();
    }
    this.schedule(this.opts.pollMs ?? 1_000);
  }

  /**
   * Reads until nothing more is readable. A call made while a read runs joins it, and that read
   * then goes round once more, so every call sees what was committed before it was made.
   */
  catchUp(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          await this.readAll();
        } while (this.again && !this.stopped);
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  private wake(): void {
    if (this.stopped) return;
    this.catchUp().catch((e) => this.opts.onError?.(e));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
      this.schedule(this.opts.pollMs ?? 1_000);
    }, ms);
    this.timer.unref();
  }

  private async readAll(): Promise<void> {
    for (;;) {
      const page = await readFeed(this.db, this.pos, { topics: this.opts.topics });
      if (page.reload || page.changes.length) await this.opts.apply(page.changes, page.reload);
      this.pos = page.next;
      if (page.heldBack) this.schedule(this.opts.heldBackMs ?? 25);
      if (!page.more) break;
    }
    if (this.opts.node && Date.now() - this.reported > 5_000) {
      this.reported = Date.now();
      await reportReader(this.db, this.opts.node, this.pos);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.unlisten?.();
    await this.reading?.catch(() => undefined);
  }
}

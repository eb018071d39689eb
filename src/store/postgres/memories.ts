/**
 * The FIFO byte budget of a memory on PostgreSQL: the same rules as src/memory/allocator.ts (the
 * SQLite store's), made exact when several processes add to one memory at once.
 *
 * Every operation runs in the caller's transaction and starts by locking the memory's row
 * (`SELECT … FOR UPDATE`): adders to one memory take turns from reading the totals to commit, so
 * `used_bytes` / `message_count` stay the sums of the rows and never exceed `memory_size`, and no
 * two adders evict the same message. Adders to different memories never wait for each other.
 *
 * Victims are read in pages in FIFO order (forgotten first by forget_at, then by fifo_at, ties by
 * id: the index memory_message_fifo), a raw message taking its extracted items along, and deleted
 * in one statement once enough room is found; when even everything else would not make room,
 * nothing is deleted. Messages' costs are computed by the caller (content UTF-8 bytes + 4 × dim,
 * memory/allocator.ts `messageCost`) and stored on the rows, so eviction frees what was charged.
 */
import { faultPoint } from '../../util/index.js';
import type { PgTx } from './db.js';
import { vectorBytes } from './sql.js';
import type { NewMessage } from '../interface/index.js';

/** A message to store (interface/memories.ts NewMessage) with its cost in bytes (`messageCost`). */
export type PgNewMessage = NewMessage & { size: number };

export interface PgUsage {
  used: number;
  budget: number;
  messages: number;
}

export type InsertOutcome =
  | { ok: true; ids: number[]; evicted: number[] }
  | { ok: false; gone: true }
  /** Nothing written: one message is larger than the whole budget (`single`), or the batch cannot fit even after evicting everything else. */
  | { ok: false; gone?: false; needed: number; budget: number; single: boolean };

/** Victims read per statement while making room. */
const PAGE = 256;

/** Locks the memory's row until the transaction ends and returns its totals (undefined: no such memory). */
export async function lockMemory(tx: PgTx, memoryId: string): Promise<PgUsage | undefined> {
  const r = await tx.one<{ used_bytes: number; memory_size: number; message_count: number }>(
    'SELECT used_bytes, memory_size, message_count FROM memory WHERE id = $1 FOR UPDATE', [memoryId]);
  return r && { used: r.used_bytes, budget: r.memory_size, messages: r.message_count };
}

interface Victim {
  id: number;
  source_id: number;
  size: number;
}

/**
 * Evicts in FIFO order until `need` more bytes fit (`used + need <= budget`), never touching
 * `protect` (a raw message whose items are being added) or its items. Returns the evicted ids
 * (each unit's items before its raw message), or null when even evicting everything else would
 * not make room (then nothing is evicted). The memory must be locked (lockMemory).
 */
export async function evictFor(tx: PgTx, memoryId: string, usage: PgUsage, need: number, protect = 0): Promise<number[] | null> {
  let excess = usage.used + need - usage.budget;
  if (excess <= 0) return [];
  const gone = new Set<number>();
  const order: number[] = [];
  let freed = 0;
  let after: [boolean, number, number] | null = null;
  while (excess > 0) {
    const page: Array<Victim & { k1: boolean; k2: number }> = await tx.rows(`
      SELECT id, source_id, size, (forget_at IS NULL) AS k1, COALESCE(forget_at, fifo_at) AS k2 FROM memory_message
      WHERE memory_id = $1 AND id <> $2 AND source_id <> $3
        AND ($4::boolean IS NULL OR ((forget_at IS NULL), COALESCE(forget_at, fifo_at), id) > ($4::boolean, $5::bigint, $6::bigint))
      ORDER BY (forget_at IS NULL), COALESCE(forget_at, fifo_at), id LIMIT ${PAGE}`,
    [memoryId, protect, protect || -1, after?.[0] ?? null, after?.[1] ?? null, after?.[2] ?? null]);
    if (!page.length) return null;
    const last = page[page.length - 1]!;
    after = [last.k1, last.k2, last.id];
    // The items of this page's raw messages, read at once.
    const raws = page.filter((v) => v.source_id === 0).map((v) => v.id);
    const items = new Map<number, Victim[]>();
    if (raws.length) {
      for (const c of await tx.rows<Victim>('SELECT id, source_id, size FROM memory_message WHERE memory_id = $1 AND source_id = ANY($2) ORDER BY id', [memoryId, raws])) {
        let l = items.get(c.source_id);
        if (!l) items.set(c.source_id, (l = []));
        l.push(c);
      }
    }
    for (const v of page) {
      if (excess <= 0) break;
      if (gone.has(v.id)) continue; // an item already taken with its raw message
      let unit = 0;
      for (const c of v.source_id === 0 ? items.get(v.id) ?? [] : []) {
        if (gone.has(c.id)) continue;
        gone.add(c.id);
        order.push(c.id);
        unit += c.size;
      }
      gone.add(v.id);
      order.push(v.id);
      unit += v.size;
      excess -= unit;
      freed += unit;
    }
  }
  await tx.run('DELETE FROM memory_message WHERE id = ANY($1)', [order]);
  await tx.run('UPDATE memory SET used_bytes = used_bytes - $2, message_count = message_count - $3 WHERE id = $1', [memoryId, freed, order.length]);
  usage.used -= freed;
  usage.messages -= order.length;
  return order;
}

/**
 * Stores messages in one memory, evicting first to make room for all of them together (in the
 * caller's transaction, which must not have locked other memories first in another order).
 * Nothing is written when a message alone is larger than the budget or the batch cannot fit.
 */
export async function insertMessages(tx: PgTx, memoryId: string, msgs: readonly PgNewMessage[], opts: { now: number; protect?: number }): Promise<InsertOutcome> {
  const u = await lockMemory(tx, memoryId);
  if (!u) return { ok: false, gone: true };
  const big = msgs.find((m) => m.size > u.budget);
  if (big) return { ok: false, needed: big.size, budget: u.budget, single: true };
  const total = msgs.reduce((a, m) => a + m.size, 0);
  const evicted = await evictFor(tx, memoryId, u, total, opts.protect ?? 0);
  if (evicted === null) return { ok: false, needed: total, budget: u.budget, single: false };
  faultPoint('pg-memory:evicted');
  if (!msgs.length) return { ok: true, ids: [], evicted };
  // Ids first (one statement), so they follow the batch's order whatever order rows are written in.
  const ids = (await tx.rows<{ id: number }>("SELECT nextval(pg_get_serial_sequence('memory_message', 'id')) AS id FROM generate_series(1, $1)", [msgs.length]))
    .map((r) => r.id).sort((a, b) => a - b);
  await tx.run(`INSERT INTO memory_message (id, memory_id, message_type, source_id, user_id, agent_id, session_id, content, dim, vector,
      valid_at, invalid_at, forget_at, fifo_at, status, size, create_time)
    SELECT id, $1, t, s, u, a, ss, c, d, v, va, ia, NULL, f, 1, sz, $2
    FROM unnest($3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::bytea[],
      $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[]) AS x(id, t, s, u, a, ss, c, d, v, va, ia, f, sz)`, [
    memoryId, opts.now, ids, msgs.map((m) => m.message_type), msgs.map((m) => m.source_id), msgs.map((m) => m.user_id),
    msgs.map((m) => m.agent_id), msgs.map((m) => m.session_id), msgs.map((m) => m.content), msgs.map((m) => m.vector?.length ?? 0),
    msgs.map((m) => vectorBytes(m.vector)), msgs.map((m) => m.valid_at), msgs.map((m) => m.invalid_at), msgs.map((m) => m.fifo_at),
    msgs.map((m) => m.size),
  ]);
  faultPoint('pg-memory:rows-written');
  await tx.run('UPDATE memory SET used_bytes = used_bytes + $2, message_count = message_count + $3 WHERE id = $1', [memoryId, total, msgs.length]);
  return { ok: true, ids, evicted };
}

/** Applies a new budget at once (FIFO evictions when it is smaller); returns the evicted ids (undefined: no such memory). */
export async function resizeMemory(tx: PgTx, memoryId: string, budget: number): Promise<number[] | undefined> {
  const u = await lockMemory(tx, memoryId);
  if (!u) return undefined;
  await tx.run('UPDATE memory SET memory_size = $2 WHERE id = $1', [memoryId, budget]);
  u.budget = budget;
  return (await evictFor(tx, memoryId, u, 0)) ?? [];
}

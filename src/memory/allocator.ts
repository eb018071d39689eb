/**
 * The FIFO eviction allocator of a memory's byte budget (`memory_size`).
 *
 * - A message costs the bytes it occupies: its content's UTF-8 bytes plus its vector (4 bytes ×
 *   dimensions). The cost is stored on the row (`size`), so what is freed on eviction is exactly
 *   what was charged.
 * - `memory.used_bytes` / `memory.message_count` are running totals, changed in the same
 *   transaction as each insert and eviction: never recomputed by scanning.
 * - Victims come from the index `memory_message_fifo` (memory_id, forget_at IS NULL,
 *   COALESCE(forget_at, fifo_at), id): forgotten messages first (earliest forget_at), then the
 *   oldest (fifo_at, ties by id). One victim costs one index seek and one delete: O(log n).
 * - A raw message and the items extracted from it are one unit: evicting the raw message takes its
 *   children along (they would be orphans), while a forgotten child can be evicted on its own.
 *   Children carry their parent's fifo_at, so in FIFO order they never go before their parent.
 * - After every operation `used_bytes <= memory_size`. A message larger than the whole budget is
 *   refused and nothing changes.
 *
 * Every function here runs inside the caller's transaction (better-sqlite3 is synchronous).
 */
import type { Database } from 'better-sqlite3';
import { utf8Length, faultPoint } from '../util/index.js';
import { ftsTerms } from '../text/index.js';
import { cachedStatement } from '../store/index.js';

/** Bytes charged for a message: UTF-8 content plus a float32 vector. */
export function messageCost(content: string, dim: number): number {
  return utf8Length(content) + 4 * dim;
}

export class MemoryFullError extends Error {
  override name = 'MemoryFullError';
  constructor(readonly needed: number, readonly budget: number, message: string) {
    super(message);
  }
}

export interface NewMessage {
  message_type: 'raw' | 'semantic' | 'episodic' | 'procedural';
  /** 0 for raw messages; the raw message's id for extracted items. */
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  vector: Float32Array | null;
  valid_at: number;
  invalid_at: number | null;
  /** The eviction position: a raw message's own time; an extracted item's parent's. */
  fifo_at: number;
}

export interface Usage {
  /** Bytes charged now. */
  used: number;
  /** memory_size. */
  budget: number;
  /** Messages stored (raw and extracted). */
  messages: number;
}

const st = cachedStatement;

/**
 * Test-only hooks (test/memory/allocator-crash): called inside the transaction after the
 * evictions and after the inserts, so a test can kill the process at exactly those points.
 */
export const allocatorHooks: { afterEvict?: () => void; afterInsert?: () => void } = {};

export function usage(db: Database, memoryId: string): Usage | undefined {
  const r = st(db, 'SELECT used_bytes, memory_size, message_count FROM memory WHERE id = ?').get(memoryId) as
    | { used_bytes: number; memory_size: number; message_count: number }
    | undefined;
  return r && { used: r.used_bytes, budget: r.memory_size, messages: r.message_count };
}

/** Removes one message row (and its full-text row) and takes its cost off the totals. */
function removeRow(db: Database, memoryId: string, id: number, size: number): void {
  st(db, 'DELETE FROM memory_message WHERE id = ?').run(id);
  faultPoint('memory.evict:row-deleted');
  st(db, 'DELETE FROM memory_fts WHERE rowid = ?').run(BigInt(id));
  faultPoint('memory.evict:fts-deleted');
  st(db, 'UPDATE memory SET used_bytes = used_bytes - ?, message_count = message_count - 1 WHERE id = ?').run(size, memoryId);
}

/** Removes a message; a raw message takes its extracted children along. Returns the ids removed and the bytes freed. */
function removeUnit(db: Database, memoryId: string, row: { id: number; source_id: number; size: number }): { ids: number[]; freed: number } {
  const ids: number[] = [];
  let freed = 0;
  if (row.source_id === 0) {
    for (const c of st(db, 'SELECT id, size FROM memory_message WHERE source_id = ? AND memory_id = ?').all(row.id, memoryId) as Array<{ id: number; size: number }>) {
      removeRow(db, memoryId, c.id, c.size);
      ids.push(c.id);
      freed += c.size;
    }
  }
  removeRow(db, memoryId, row.id, row.size);
  ids.push(row.id);
  return { ids, freed: freed + row.size };
}

/**
 * Evicts in FIFO order until `need` more bytes fit under the budget (`used + need <= budget`),
 * never touching the unit of `protect` (a raw message whose children are being added). Returns
 * the evicted ids, or null when even evicting everything else would not make room (nothing is
 * evicted then: the caller's transaction must not half-apply).
 */
export function evictFor(db: Database, memoryId: string, need: number, protect = 0): number[] | null {
  const u = usage(db, memoryId)!;
  let excess = u.used + need - u.budget;
  if (excess <= 0) return [];
  const next = st(db, `SELECT id, source_id, size FROM memory_message WHERE memory_id = ? AND id != ? AND source_id != ?
    ORDER BY (forget_at IS NULL), COALESCE(forget_at, fifo_at), id LIMIT 1`);
  const evicted: number[] = [];
  const sp = `evict_${Math.random().toString(36).slice(2)}`;
  db.exec(`SAVEPOINT ${sp}`);
  try {
    while (excess > 0) {
      const v = next.get(memoryId, protect, protect || -1) as { id: number; source_id: number; size: number } | undefined;
      if (!v) {
        db.exec(`ROLLBACK TO ${sp}`);
        db.exec(`RELEASE ${sp}`);
        return null;
      }
      const gone = removeUnit(db, memoryId, v);
      evicted.push(...gone.ids);
      excess -= gone.freed;
    }
    db.exec(`RELEASE ${sp}`);
    return evicted;
  } catch (e) {
    db.exec(`ROLLBACK TO ${sp}`);
    db.exec(`RELEASE ${sp}`);
    throw e;
  }
}

/**
 * Stores messages in one memory, evicting first to make room for all of them together. Throws
 * MemoryFullError (and stores nothing) when one message alone is larger than the budget, or when
 * the batch cannot fit even after evicting everything else.
 */
export function insertMessages(db: Database, memoryId: string, msgs: NewMessage[], opts: { now: number; protect?: number }): { ids: number[]; evicted: number[] } {
  const u = usage(db, memoryId);
  if (!u) throw new Error(`Memory '${memoryId}' not found.`);
  const sizes = msgs.map((m) => messageCost(m.content, m.vector?.length ?? 0));
  for (let i = 0; i < msgs.length; i++) {
    if (sizes[i]! > u.budget) {
      throw new MemoryFullError(sizes[i]!, u.budget, `A message of ${sizes[i]} bytes is larger than the memory's whole budget (memory_size ${u.budget} bytes).`);
    }
  }
  const total = sizes.reduce((a, b) => a + b, 0);
  const evicted = evictFor(db, memoryId, total, opts.protect ?? 0);
  if (evicted === null) {
    throw new MemoryFullError(total, u.budget, `${msgs.length} messages of ${total} bytes do not fit in the memory's budget (memory_size ${u.budget} bytes).`);
  }
  allocatorHooks.afterEvict?.();
  faultPoint('memory.insert:evicted');
  const ins = st(db, `INSERT INTO memory_message (memory_id, message_type, source_id, user_id, agent_id, session_id, content, dim, vector,
    valid_at, invalid_at, forget_at, fifo_at, status, size, create_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 1, ?, ?)`);
  const fts = st(db, 'INSERT INTO memory_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)');
  const ids: number[] = [];
  msgs.forEach((m, i) => {
    const dim = m.vector?.length ?? 0;
    const blob = m.vector && dim ? Buffer.from(m.vector.buffer, m.vector.byteOffset, m.vector.byteLength) : null;
    const r = ins.run(memoryId, m.message_type, m.source_id, m.user_id, m.agent_id, m.session_id, m.content, dim, blob, m.valid_at, m.invalid_at, m.fifo_at, sizes[i], opts.now);
    const id = Number(r.lastInsertRowid);
    fts.run(BigInt(id), ...ftsTerms('', m.content, [], [], 'v2'));
    ids.push(id);
  });
  allocatorHooks.afterInsert?.();
  faultPoint('memory.insert:rows-written');
  st(db, 'UPDATE memory SET used_bytes = used_bytes + ?, message_count = message_count + ? WHERE id = ?').run(total, msgs.length, memoryId);
  return { ids, evicted };
}

/** Applies a new, smaller budget at once (FIFO); returns the evicted ids. */
export function resize(db: Database, memoryId: string, budget: number): number[] {
  st(db, 'UPDATE memory SET memory_size = ? WHERE id = ?').run(budget, memoryId);
  return evictFor(db, memoryId, 0) ?? [];
}

/**
 * Memories on SQLite (interface/memories.ts): the FIFO eviction allocator of a memory's byte
 * budget, the messages, their extraction tasks.
 *
 * The allocator of `memory_size`:
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
 * The allocator's functions run inside the caller's transaction (better-sqlite3 is synchronous);
 * the SqliteMemories methods hold the transactions.
 */
import type { Database } from 'better-sqlite3';
import { utf8Length, faultPoint, duplicateName } from '../../util/index.js';
import { ftsTerms } from '../../text/index.js';
import { cachedStatement } from '../db.js';
import { MemoryFullError } from '../interface/index.js';
import type {
  MemoryChanges, MemoryListQuery, MemoryRow, MemoryStore, MessageListQuery, MessageRow, NewMessage, RawMessageAdd, RawMessageResult,
  RecentQuery, StoreItemsResult, TaskClaim, TaskInput, TaskLease, TaskRow, TaskState, Usage,
} from '../interface/index.js';
import { fromBlob, toBlob } from '../vectors.js';
import { marks } from './sql.js';
import type { SqliteConn } from './store.js';

/** Bytes charged for a message: UTF-8 content plus a float32 vector. */
export function messageCost(content: string, dim: number): number {
  return utf8Length(content) + 4 * dim;
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
export function insertMessages(db: Database, memoryId: string, msgs: readonly NewMessage[], opts: { now: number; protect?: number }): { ids: number[]; evicted: number[] } {
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
    const blob = m.vector && dim ? toBlob(m.vector) : null;
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

/** The columns of a message as listed (MessageRow). */
const COLS = 'id, memory_id, message_type, source_id, user_id, agent_id, session_id, content, valid_at, invalid_at, forget_at, status';

export class SqliteMemories implements MemoryStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  async get(id: string): Promise<MemoryRow | undefined> {
    return cachedStatement(this.db, 'SELECT * FROM memory WHERE id = ?').get(id) as MemoryRow | undefined;
  }

  /** `name`, or duplicateName's next one while another memory of the tenant holds it (case-insensitively). */
  private uniqueName(tenantId: string, name: string, exceptId = ''): string {
    const taken = this.db.prepare('SELECT 1 FROM memory WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND id != ?');
    return duplicateName(name, (c) => !!taken.get(tenantId, c, exceptId));
  }

  async create(row: MemoryRow): Promise<string> {
    return this.c.tx(() => {
      const r = { ...row, name: this.uniqueName(row.tenant_id, row.name) };
      const cols = Object.keys(r);
      this.db.prepare(`INSERT INTO memory (${cols.join(', ')}) VALUES (${cols.map((k) => `@${k}`).join(', ')})`).run(r);
      return r.name;
    });
  }

  async update(id: string, tenantId: string, changes: MemoryChanges, time: number): Promise<string | undefined> {
    return this.c.tx(() => {
      const { memory_size, ...rest } = changes;
      if (rest.name !== undefined) rest.name = this.uniqueName(tenantId, rest.name, id);
      const cols = Object.keys(rest);
      this.db.prepare(`UPDATE memory SET ${[...cols.map((k) => `${k} = @${k}`), 'update_time = @update_time'].join(', ')} WHERE id = @id`).run({ ...rest, update_time: time, id });
      if (memory_size !== undefined) resize(this.db, id, memory_size); // a smaller budget evicts at once
      return rest.name;
    });
  }

  async list(q: MemoryListQuery): Promise<{ total: number; rows: MemoryRow[] }> {
    // Another tenant's memories are visible only when shared with the team.
    const where = [`tenant_id IN (${marks(q.tenantIds.length)})`, "(tenant_id = ? OR permissions = 'team')"];
    const args: unknown[] = [...q.tenantIds, q.ownTenantId];
    if (q.typeMask !== undefined) (where.push('(memory_type & ?) != 0'), args.push(q.typeMask));
    if (q.storageType !== undefined) (where.push('storage_type = ?'), args.push(q.storageType));
    // instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
    if (q.keywords !== undefined) (where.push('instr(LOWER(name), ?) > 0'), args.push(q.keywords));
    const w = where.join(' AND ');
    const total = this.db.prepare(`SELECT COUNT(*) FROM memory WHERE ${w}`).pluck().get(...args) as number;
    const rows = this.db.prepare(`SELECT * FROM memory WHERE ${w} ORDER BY update_time DESC, rowid DESC LIMIT ? OFFSET ?`).all(...args, q.limit, q.offset) as MemoryRow[];
    return { total, rows };
  }

  async delete(id: string): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      const ids = db.prepare('SELECT id FROM memory_message WHERE memory_id = ?').pluck().all(id) as number[];
      const fts = db.prepare('DELETE FROM memory_fts WHERE rowid = ?');
      for (const m of ids) fts.run(BigInt(m));
      db.prepare('DELETE FROM memory_message WHERE memory_id = ?').run(id);
      db.prepare('DELETE FROM memory_task WHERE memory_id = ?').run(id);
      db.prepare('DELETE FROM memory WHERE id = ?').run(id);
    });
  }

  async usage(id: string): Promise<Usage | undefined> {
    return usage(this.db, id);
  }

  async addRaw(adds: readonly RawMessageAdd[], now: number): Promise<RawMessageResult[]> {
    const db = this.db;
    const out = this.c.tx(() => adds.map((a): RawMessageResult => {
      // Deleted while the caller embedded (here or by another process on the file).
      if (!usage(db, a.memoryId)) return { ok: false, gone: true };
      let r: RawMessageResult;
      try {
        // A message that does not fit is refused before anything is written (evictions roll back to a savepoint).
        const { ids } = insertMessages(db, a.memoryId, [a.message], { now });
        if (a.queueTask) st(db, 'INSERT INTO memory_task (memory_id, message_id, create_time, update_time) VALUES (?, ?, ?, ?)').run(a.memoryId, ids[0], now, now);
        r = { ok: true, id: ids[0]! };
      } catch (err) {
        if (!(err instanceof MemoryFullError)) throw err;
        r = { ok: false, full: err };
      }
      faultPoint('memory.add:stored');
      return r;
    }));
    faultPoint('memory.add:committed');
    return out;
  }

  async insert(memoryId: string, msgs: readonly NewMessage[], opts: { now: number; protect?: number }): Promise<{ ids: number[]; evicted: number[] }> {
    return this.c.tx(() => insertMessages(this.db, memoryId, msgs, opts));
  }

  async listMessages(q: MessageListQuery): Promise<{ total: number; rows: Array<{ message: MessageRow; items: MessageRow[]; task: TaskState | undefined }> }> {
    const db = this.db;
    const where = ['memory_id = ?', 'source_id = 0'];
    const args: unknown[] = [q.memoryId];
    // One JSON parameter for the list: one placeholder per id would stop at SQLite's 32,766 variables.
    if (q.agentIds?.length) (where.push('agent_id IN (SELECT value FROM json_each(?))'), args.push(JSON.stringify(q.agentIds)));
    // instr(), not LIKE (whose patterns stop at 50,000 bytes); LOWER on both sides folds ASCII as LIKE does.
    if (q.keywords !== undefined) (where.push('instr(LOWER(session_id), LOWER(?)) > 0'), args.push(q.keywords));
    const w = where.join(' AND ');
    const total = db.prepare(`SELECT COUNT(*) FROM memory_message WHERE ${w}`).pluck().get(...args) as number;
    const rows = db.prepare(`SELECT ${COLS} FROM memory_message WHERE ${w} ORDER BY valid_at DESC, id DESC LIMIT ? OFFSET ?`).all(...args, q.limit, q.offset) as MessageRow[];
    const kids = db.prepare(`SELECT ${COLS} FROM memory_message WHERE source_id = ? ORDER BY id`);
    const task = db.prepare('SELECT status, attempts, progress_msg, update_time FROM memory_task WHERE memory_id = ? AND message_id = ? ORDER BY id DESC LIMIT 1');
    return {
      total,
      rows: rows.map((r) => ({ message: r, items: kids.all(r.id) as MessageRow[], task: task.get(q.memoryId, r.id) as TaskState | undefined })),
    };
  }

  async getMessage(memoryId: string, id: number): Promise<(MessageRow & { vector: Float32Array | null }) | undefined> {
    const m = st(this.db, `SELECT ${COLS}, dim, vector FROM memory_message WHERE id = ? AND memory_id = ?`).get(id, memoryId) as
      | (MessageRow & { dim: number; vector: Buffer | null })
      | undefined;
    if (!m) return undefined;
    const { dim, vector, ...rest } = m;
    return { ...rest, vector: vector && dim ? fromBlob(vector.subarray(0, dim * 4)) : null };
  }

  async forget(id: number, time: number): Promise<void> {
    this.db.prepare('UPDATE memory_message SET forget_at = ? WHERE id = ? AND forget_at IS NULL').run(time, id);
  }

  async setStatus(id: number, enabled: boolean): Promise<void> {
    this.db.prepare('UPDATE memory_message SET status = ? WHERE id = ?').run(enabled ? 1 : 0, id);
  }

  async recent(q: RecentQuery): Promise<MessageRow[]> {
    const where = [`memory_id IN (${marks(q.memoryIds.length)})`, 'forget_at IS NULL'];
    const args: unknown[] = [...q.memoryIds];
    if (q.agentId !== undefined) (where.push('agent_id = ?'), args.push(q.agentId));
    if (q.sessionId !== undefined) (where.push('session_id = ?'), args.push(q.sessionId));
    return this.db.prepare(`SELECT ${COLS} FROM memory_message WHERE ${where.join(' AND ')} ORDER BY valid_at DESC, id DESC LIMIT ?`).all(...args, q.limit) as MessageRow[];
  }

  async countMessages(memoryIds: readonly string[]): Promise<number> {
    return this.db.prepare('SELECT COUNT(*) FROM memory_message WHERE memory_id IN (SELECT value FROM json_each(?))').pluck().get(JSON.stringify(memoryIds)) as number;
  }

  async messages(ids: readonly number[]): Promise<Map<number, MessageRow>> {
    const get = st(this.db, `SELECT ${COLS} FROM memory_message WHERE id = ?`);
    const out = new Map<number, MessageRow>();
    for (const id of ids) {
      const m = get.get(id) as MessageRow | undefined;
      if (m) out.set(id, m);
    }
    return out;
  }

  // ---------------------------------------------------------------- extraction tasks

  async pendingTasks(): Promise<number> {
    return (st(this.db, "SELECT COUNT(*) FROM memory_task WHERE status = 'pending'").pluck().get() as number) ?? 0;
  }

  async nextDue(): Promise<number | null> {
    return st(this.db, "SELECT MIN(update_time) FROM memory_task WHERE status = 'pending'").pluck().get() as number | null;
  }

  async claimTask(now: number, leaseMs: number): Promise<TaskClaim | undefined> {
    // One statement: pick and stamp, so two processes on one file never win the same task.
    const until = now + leaseMs;
    const task = st(this.db, `UPDATE memory_task SET update_time = ? WHERE id = (
      SELECT id FROM memory_task WHERE status = 'pending' AND update_time <= ? ORDER BY id LIMIT 1)
      RETURNING id, memory_id, message_id, attempts`).get(until, now) as TaskRow | undefined;
    return task && { task, lease: { id: task.id, mark: until } };
  }

  async renewTask(lease: TaskLease, now: number, leaseMs: number): Promise<boolean> {
    const next = now + leaseMs;
    const ok = st(this.db, "UPDATE memory_task SET update_time = ? WHERE id = ? AND status = 'pending' AND update_time = ?").run(next, lease.id, lease.mark).changes === 1;
    if (ok) lease.mark = next;
    return ok;
  }

  async watchTasks(_wake: () => void): Promise<() => Promise<void>> {
    return async () => undefined;
  }

  async releaseTasks(leases: readonly TaskLease[], now: number): Promise<void> {
    if (!leases.length || !this.db.open) return;
    const release = this.db.prepare("UPDATE memory_task SET update_time = ? WHERE id = ? AND status = 'pending' AND update_time = ?");
    for (const l of leases) release.run(now, l.id, l.mark);
  }

  /** finishTask inside the caller's transaction, or as its own statement. */
  private finishNow(t: TaskRow, lease: TaskLease, status: 'done' | 'failed', msg: string, now: number): boolean {
    // Only while holding the lease: a task another process took over is its to finish.
    return st(this.db, "UPDATE memory_task SET status = ?, progress_msg = ?, attempts = ?, update_time = ? WHERE id = ? AND status = 'pending' AND update_time = ?")
      .run(status, msg, t.attempts + 1, now, t.id, lease.mark).changes !== 0;
  }

  async finishTask(t: TaskRow, lease: TaskLease, status: 'done' | 'failed', msg: string, now: number): Promise<boolean> {
    return this.finishNow(t, lease, status, msg, now);
  }

  async retryTask(t: TaskRow, lease: TaskLease, msg: string, due: number): Promise<void> {
    st(this.db, "UPDATE memory_task SET attempts = attempts + 1, progress_msg = ?, update_time = ? WHERE id = ? AND status = 'pending' AND update_time = ?")
      .run(msg, due, t.id, lease.mark);
  }

  async taskInput(t: TaskRow): Promise<TaskInput | undefined> {
    const db = this.db;
    const memory = st(db, 'SELECT id, memory_type, embd_id, llm_id, temperature, system_prompt, user_prompt FROM memory WHERE id = ?').get(t.memory_id) as TaskInput['memory'] | undefined;
    const raw = st(db, "SELECT id, user_id, agent_id, session_id, content, valid_at, fifo_at FROM memory_message WHERE id = ? AND message_type = 'raw'").get(t.message_id) as TaskInput['raw'] | undefined;
    return memory && raw ? { memory, raw } : undefined;
  }

  async storeItems(t: TaskRow, lease: TaskLease, rawId: number, items: readonly NewMessage[], msgs: { done: string; gone: string; full: (e: MemoryFullError) => string }, now: number): Promise<StoreItemsResult> {
    const db = this.db;
    const r = this.c.tx((): StoreItemsResult => {
      // Stalled past the lease and another process took the task: its items are that one's to store.
      if (st(db, "SELECT update_time FROM memory_task WHERE id = ? AND status = 'pending'").pluck().get(t.id) !== lease.mark) return 'lost-lease';
      // The raw message may have been evicted while the model was answering.
      if (!st(db, 'SELECT 1 FROM memory_message WHERE id = ?').get(rawId)) {
        this.finishNow(t, lease, 'failed', msgs.gone, now);
        return 'raw-gone';
      }
      try {
        insertMessages(db, t.memory_id, items, { now, protect: rawId });
        faultPoint('memory.extract:stored');
        this.finishNow(t, lease, 'done', msgs.done, now);
        return 'stored';
      } catch (e) {
        if (!(e instanceof MemoryFullError)) throw e;
        this.finishNow(t, lease, 'failed', msgs.full(e), now);
        return { full: e };
      }
    });
    faultPoint('memory.extract:committed');
    return r;
  }
}

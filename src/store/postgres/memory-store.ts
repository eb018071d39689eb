/**
 * Memories on PostgreSQL (interface/memories.ts): the FIFO byte budget (memories.ts: the memory's
 * row locked from reading its totals to commit, so two processes adding to one memory stay
 * exact), the messages, and extraction tasks claimed through memory_task's queue (claims.ts:
 * FOR UPDATE SKIP LOCKED, a random token per claim, a lease on the server's clock; results written
 * only while the token is still the task's).
 */
import { duplicateName, faultPoint } from '../../util/index.js';
import { MemoryFullError } from '../interface/index.js';
import type {
  MemoryChanges, MemoryListQuery, MemoryRow, MemoryStore, MessageListQuery, MessageRow, NewMessage, RawMessageAdd, RawMessageResult,
  RecentQuery, StoreItemsResult, TaskClaim, TaskInput, TaskLease, TaskRow, TaskState, Usage,
} from '../interface/index.js';
import { messageCost } from '../sqlite/memories.js';
import type { PgDb, PgTx } from './db.js';
import { claimJobs, holdLease, MEMORY_TASKS, releaseLease, renewLeases, type Lease } from './claims.js';
import { lockNames } from './datasets.js';
import { insertMessages, resizeMemory, type InsertOutcome } from './memories.js';
import { foldAscii } from './names.js';
import { insertRow, setList, strip, stripAll, valuesOf, vectorOf } from './sql.js';

/** Notified at the commit of a queued (or released) extraction task: idle nodes wake and claim. */
const TASK_CHANNEL = 'ragloom_memory_task';

const COLS = 'id, memory_id, message_type, source_id, user_id, agent_id, session_id, content, valid_at, invalid_at, forget_at, status';

/** The allocator's refusal as SQLite's store words it. */
function fullError(o: Extract<InsertOutcome, { needed: number }>, count: number): MemoryFullError {
  return o.single
    ? new MemoryFullError(o.needed, o.budget, `A message of ${o.needed} bytes is larger than the memory's whole budget (memory_size ${o.budget} bytes).`)
    : new MemoryFullError(o.needed, o.budget, `${count} messages of ${o.needed} bytes do not fit in the memory's budget (memory_size ${o.budget} bytes).`);
}

async function insert(t: PgTx, memoryId: string, msgs: readonly NewMessage[], opts: { now: number; protect?: number }): Promise<{ ids: number[]; evicted: number[] }> {
  const sized = msgs.map((m) => ({ ...m, size: messageCost(m.content, m.vector?.length ?? 0) }));
  const o = await insertMessages(t, memoryId, sized, opts);
  if (o.ok) return { ids: o.ids, evicted: o.evicted };
  if (o.gone) throw new Error(`Memory '${memoryId}' not found.`);
  throw fullError(o, msgs.length);
}

let savepoints = 0;

export class PgMemories implements MemoryStore {
  constructor(private readonly db: PgDb, private readonly wrote: () => Promise<void>) {}

  async get(id: string): Promise<MemoryRow | undefined> {
    return strip(await this.db.one('SELECT * FROM memory WHERE id = $1', [id]));
  }

  private async uniqueName(t: PgTx, tenantId: string, name: string, exceptId = ''): Promise<string> {
    await lockNames(t, 'memory', tenantId);
    const taken = new Set((await t.rows<{ n: string }>('SELECT ragloom_nocase(name) AS n FROM memory WHERE tenant_id = $1 AND id <> $2', [tenantId, exceptId])).map((r) => r.n));
    return duplicateName(name, (c) => taken.has(foldAscii(c)));
  }

  async create(row: MemoryRow): Promise<string> {
    return this.db.tx(async (t) => {
      const r = { ...row, name: await this.uniqueName(t, row.tenant_id, row.name) };
      const ins = insertRow('memory', r as unknown as Record<string, unknown>);
      await t.run(ins.sql, ins.params);
      return r.name;
    });
  }

  async update(id: string, tenantId: string, changes: MemoryChanges, time: number): Promise<string | undefined> {
    const name = await this.db.tx(async (t) => {
      const { memory_size, ...rest } = changes;
      if (rest.name !== undefined) rest.name = await this.uniqueName(t, tenantId, rest.name, id);
      const set: Record<string, unknown> = { ...rest, update_time: time };
      const cols = Object.keys(set);
      await t.run(`UPDATE memory SET ${setList(cols, 2)} WHERE id = $1`, [id, ...valuesOf(set, cols)]);
      if (memory_size !== undefined) await resizeMemory(t, id, memory_size); // a smaller budget evicts at once
      return rest.name;
    });
    if (changes.memory_size !== undefined) await this.wrote();
    return name;
  }

  async list(q: MemoryListQuery): Promise<{ total: number; rows: MemoryRow[] }> {
    const p: unknown[] = [[...q.tenantIds], q.ownTenantId];
    const where = ['tenant_id = ANY($1)', "(tenant_id = $2 OR permissions = 'team')"];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.typeMask !== undefined) add((k) => `(memory_type & ${k}::int) <> 0`, q.typeMask);
    if (q.storageType !== undefined) add((k) => `storage_type = ${k}`, q.storageType);
    if (q.keywords !== undefined) add((k) => `strpos(ragloom_nocase(name), ${k}) > 0`, q.keywords);
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM memory WHERE ${w}`, p))!.n;
    const rows = await this.db.rows(`SELECT * FROM memory WHERE ${w} ORDER BY update_time DESC, ord DESC
      LIMIT ${q.limit < 0 ? 'ALL' : Math.floor(q.limit)} OFFSET ${Math.max(0, Math.floor(q.offset))}`, p);
    return { total, rows: stripAll(rows) };
  }

  async delete(id: string): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('DELETE FROM memory_message WHERE memory_id = $1', [id]);
      await t.run('DELETE FROM memory_task WHERE memory_id = $1', [id]);
      await t.run('DELETE FROM memory WHERE id = $1', [id]);
    }, { idempotent: true });
    await this.wrote();
  }

  async usage(id: string): Promise<Usage | undefined> {
    const r = await this.db.one<{ used_bytes: number; memory_size: number; message_count: number }>('SELECT used_bytes, memory_size, message_count FROM memory WHERE id = $1', [id]);
    return r && { used: r.used_bytes, budget: r.memory_size, messages: r.message_count };
  }

  async addRaw(adds: readonly RawMessageAdd[], now: number): Promise<RawMessageResult[]> {
    // Memories locked in id order (each add locks its memory): two calls over the same memories never deadlock.
    const order = adds.map((a, i) => [a, i] as const).sort((x, y) => (x[0].memoryId < y[0].memoryId ? -1 : x[0].memoryId > y[0].memoryId ? 1 : x[1] - y[1]));
    const out = await this.db.tx(async (t) => {
      const res = new Array<RawMessageResult>(adds.length);
      for (const [a, i] of order) {
        // A message that does not fit is refused before anything of it is written.
        const sp = `ragloom_add_${++savepoints}`;
        await t.run(`SAVEPOINT ${sp}`);
        const o = await insertMessages(t, a.memoryId, [{ ...a.message, size: messageCost(a.message.content, a.message.vector?.length ?? 0) }], { now });
        if (o.ok) {
          if (a.queueTask) {
            await t.run('INSERT INTO memory_task (memory_id, message_id, create_time, update_time) VALUES ($1, $2, $3, $3)', [a.memoryId, o.ids[0], now]);
            await t.run(`NOTIFY ${TASK_CHANNEL}`); // at commit: idle nodes claim it
          }
          await t.run(`RELEASE SAVEPOINT ${sp}`);
          res[i] = { ok: true, id: o.ids[0]! };
        } else {
          await t.run(`ROLLBACK TO SAVEPOINT ${sp}`);
          res[i] = o.gone ? { ok: false, gone: true } : { ok: false, full: fullError(o, 1) };
        }
        faultPoint('memory.add:stored');
      }
      return res;
    });
    faultPoint('memory.add:committed');
    await this.wrote();
    return out;
  }

  async insert(memoryId: string, msgs: readonly NewMessage[], opts: { now: number; protect?: number }): Promise<{ ids: number[]; evicted: number[] }> {
    const r = await this.db.tx((t) => insert(t, memoryId, msgs, opts));
    await this.wrote();
    return r;
  }

  async listMessages(q: MessageListQuery): Promise<{ total: number; rows: Array<{ message: MessageRow; items: MessageRow[]; task: TaskState | undefined }> }> {
    const p: unknown[] = [q.memoryId];
    const where = ['memory_id = $1', 'source_id = 0'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.agentIds?.length) add((k) => `agent_id = ANY(${k})`, [...q.agentIds]);
    if (q.keywords !== undefined) add((k) => `strpos(ragloom_nocase(session_id), ragloom_nocase(${k})) > 0`, q.keywords);
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM memory_message WHERE ${w}`, p))!.n;
    const rows = await this.db.rows<MessageRow>(`SELECT ${COLS} FROM memory_message WHERE ${w} ORDER BY valid_at DESC, id DESC
      LIMIT ${q.limit < 0 ? 'ALL' : Math.floor(q.limit)} OFFSET ${Math.max(0, Math.floor(q.offset))}`, p);
    const ids = rows.map((r) => r.id);
    const kids = await this.db.rows<MessageRow>(`SELECT ${COLS} FROM memory_message WHERE source_id = ANY($1) ORDER BY id`, [ids]);
    const tasks = await this.db.rows<TaskState & { message_id: number }>(`SELECT DISTINCT ON (message_id) message_id, status, attempts, progress_msg, update_time
      FROM memory_task WHERE memory_id = $1 AND message_id = ANY($2) ORDER BY message_id, id DESC`, [q.memoryId, ids]);
    const taskOf = new Map(tasks.map(({ message_id, ...s }) => [message_id, s]));
    return {
      total,
      rows: rows.map((r) => ({ message: r, items: kids.filter((k) => k.source_id === r.id), task: taskOf.get(r.id) })),
    };
  }

  async getMessage(memoryId: string, id: number): Promise<(MessageRow & { vector: Float32Array | null }) | undefined> {
    const m = await this.db.one<MessageRow & { dim: number; vector: Buffer | null }>(`SELECT ${COLS}, dim, vector FROM memory_message WHERE id = $1 AND memory_id = $2`, [id, memoryId]);
    if (!m) return undefined;
    const { dim, vector, ...rest } = m;
    return { ...rest, vector: vector && dim ? vectorOf(vector.subarray(0, dim * 4)) : null };
  }

  async forget(id: number, time: number): Promise<void> {
    await this.db.run('UPDATE memory_message SET forget_at = $1 WHERE id = $2 AND forget_at IS NULL', [time, id], { idempotent: true });
    await this.wrote();
  }

  async setStatus(id: number, enabled: boolean): Promise<void> {
    await this.db.run('UPDATE memory_message SET status = $1 WHERE id = $2', [enabled ? 1 : 0, id], { idempotent: true });
    await this.wrote();
  }

  async recent(q: RecentQuery): Promise<MessageRow[]> {
    const p: unknown[] = [[...q.memoryIds]];
    const where = ['memory_id = ANY($1)', 'forget_at IS NULL'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.agentId !== undefined) add((k) => `agent_id = ${k}`, q.agentId);
    if (q.sessionId !== undefined) add((k) => `session_id = ${k}`, q.sessionId);
    return this.db.rows(`SELECT ${COLS} FROM memory_message WHERE ${where.join(' AND ')} ORDER BY valid_at DESC, id DESC LIMIT ${q.limit < 0 ? 'ALL' : Math.floor(q.limit)}`, p);
  }

  async countMessages(memoryIds: readonly string[]): Promise<number> {
    return (await this.db.one<{ n: number }>('SELECT count(*) AS n FROM memory_message WHERE memory_id = ANY($1)', [[...memoryIds]]))!.n;
  }

  async messages(ids: readonly number[]): Promise<Map<number, MessageRow>> {
    const rows = await this.db.rows<MessageRow>(`SELECT ${COLS} FROM memory_message WHERE id = ANY($1)`, [[...ids]]);
    const by = new Map(rows.map((r) => [r.id, r]));
    const out = new Map<number, MessageRow>();
    for (const id of ids) if (by.has(id)) out.set(id, by.get(id)!);
    return out;
  }

  // ---------------------------------------------------------------- extraction tasks

  async pendingTasks(): Promise<number> {
    return (await this.db.one<{ n: number }>("SELECT count(*) AS n FROM memory_task WHERE status = 'pending'"))!.n;
  }

  async nextDue(): Promise<number | null> {
    // Due and lease times are the server's clock: handed back as a wait from this process's now.
    const r = await this.db.one<{ wait: number | null }>(`SELECT min(GREATEST(due_at, COALESCE(lease_until, 0))) - ragloom_now_ms() AS wait
      FROM memory_task WHERE status = 'pending'`);
    return r?.wait == null ? null : Date.now() + Number(r.wait);
  }

  async claimTask(_now: number, leaseMs: number): Promise<TaskClaim | undefined> {
    const [l] = await claimJobs<number>(this.db, MEMORY_TASKS, 1, leaseMs);
    if (!l) return undefined;
    const task = await this.db.one<TaskRow>('SELECT id, memory_id, message_id, attempts FROM memory_task WHERE id = $1', [l.key]);
    // Deleted with its memory between the two statements: nothing to do.
    return task && { task, lease: { id: task.id, mark: l.token } };
  }

  async renewTask(lease: TaskLease, _now: number, leaseMs: number): Promise<boolean> {
    return (await renewLeases(this.db, MEMORY_TASKS, [queueLease(lease)], leaseMs)).length === 0;
  }

  async watchTasks(wake: () => void): Promise<() => Promise<void>> {
    return this.db.listen(TASK_CHANNEL, () => wake());
  }

  async releaseTasks(leases: readonly TaskLease[], _now: number): Promise<void> {
    if (this.db.isClosed || !leases.length) return;
    for (const l of leases) await releaseLease(this.db, MEMORY_TASKS, queueLease(l));
    await this.db.run(`NOTIFY ${TASK_CHANNEL}`, [], { idempotent: true }); // claimable again at once
  }

  private async finishIn(q: PgDb | PgTx, t: TaskRow, lease: TaskLease, status: 'done' | 'failed', msg: string, now: number): Promise<boolean> {
    // Only while holding the lease: a task another claim took over is that one's to finish.
    return (await q.run(`UPDATE memory_task SET status = $1, progress_msg = $2, attempts = $3, update_time = $4, lease_owner = NULL, lease_token = NULL, lease_until = NULL
      WHERE id = $5 AND status = 'pending' AND lease_token = $6`, [status, msg, t.attempts + 1, now, t.id, lease.mark])) !== 0;
  }

  async finishTask(t: TaskRow, lease: TaskLease, status: 'done' | 'failed', msg: string, now: number): Promise<boolean> {
    return this.finishIn(this.db, t, lease, status, msg, now);
  }

  async retryTask(t: TaskRow, lease: TaskLease, msg: string, due: number): Promise<void> {
    // Due again after the same wait on the server's clock; the lease ends so any process may take it then.
    const now = Date.now();
    await this.db.run(`UPDATE memory_task SET attempts = attempts + 1, progress_msg = $1, update_time = $2, due_at = ragloom_now_ms() + $3,
      lease_owner = NULL, lease_token = NULL, lease_until = NULL WHERE id = $4 AND status = 'pending' AND lease_token = $5`,
    [msg, due, Math.max(0, due - now), t.id, lease.mark]);
  }

  async taskInput(t: TaskRow): Promise<TaskInput | undefined> {
    const memory = await this.db.one<TaskInput['memory']>('SELECT id, memory_type, embd_id, llm_id, temperature, system_prompt, user_prompt FROM memory WHERE id = $1', [t.memory_id]);
    const raw = await this.db.one<TaskInput['raw']>("SELECT id, user_id, agent_id, session_id, content, valid_at, fifo_at FROM memory_message WHERE id = $1 AND message_type = 'raw'", [t.message_id]);
    return memory && raw ? { memory, raw } : undefined;
  }

  async storeItems(t: TaskRow, lease: TaskLease, rawId: number, items: readonly NewMessage[], msgs: { done: string; gone: string; full: (e: MemoryFullError) => string }, now: number): Promise<StoreItemsResult> {
    const r = await this.db.tx(async (tx): Promise<StoreItemsResult> => {
      // The task's row locked while this claim's token is on it: no other claim can take it until commit.
      if (!(await holdLease(tx, MEMORY_TASKS, queueLease(lease)))) return 'lost-lease';
      if (!(await tx.one('SELECT 1 FROM memory_message WHERE id = $1', [rawId]))) {
        await this.finishIn(tx, t, lease, 'failed', msgs.gone, now);
        return 'raw-gone';
      }
      const sp = `ragloom_items_${++savepoints}`;
      await tx.run(`SAVEPOINT ${sp}`);
      try {
        await insert(tx, t.memory_id, items, { now, protect: rawId });
        await tx.run(`RELEASE SAVEPOINT ${sp}`);
        faultPoint('memory.extract:stored');
        await this.finishIn(tx, t, lease, 'done', msgs.done, now);
        return 'stored';
      } catch (e) {
        if (!(e instanceof MemoryFullError)) throw e;
        await tx.run(`ROLLBACK TO SAVEPOINT ${sp}`);
        await this.finishIn(tx, t, lease, 'failed', msgs.full(e), now);
        return { full: e };
      }
    });
    faultPoint('memory.extract:committed');
    await this.wrote();
    return r;
  }
}

/** A store lease as claims.ts checks it (by token). */
function queueLease(l: TaskLease): Lease<number> {
  return { key: l.id, token: String(l.mark), claims: 0, until: 0 };
}

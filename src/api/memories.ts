/**
 * Memories and their messages (RAGFlow's `/memories` and `/messages`, reference §11): the checks,
 * defaults, codes and messages of RAGFlow 0.25.6, over the allocator of src/memory.
 */
import type { Engine, Ctx } from '../core/index.js';
import { chatModelExists } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyRepr, pyStr } from './pyfmt.js';
import { sqlCount, toNumber } from './validate.js';
import { newId, nowMs, formatDateTime, duplicateName, faultPoint } from '../util/index.js';
import {
  insertMessages, resize, usage, MemoryFullError, extractionSystemPrompt, typesToMask, maskToTypes, MEMORY_TYPES,
  type ExtractionQueue, type Usage,
} from '../memory/index.js';
import { searchMemoryMessages } from '../search/index.js';
import { cachedStatement } from '../store/index.js';

type P = Record<string, unknown>;

export const MEMORY_SIZE_LIMIT = 10 * 1024 * 1024;
export const MEMORY_SIZE_DEFAULT = 5 * 1024 * 1024;
const NAME_LIMIT = 128;

const argError = (m: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, m);
};
const notFound = (m: string): never => {
  throw new ApiError(RetCode.NOT_FOUND, m);
};

interface MemoryRow {
  id: string;
  tenant_id: string;
  name: string;
  avatar: string;
  memory_type: number;
  storage_type: string;
  embd_id: string;
  llm_id: string;
  permissions: string;
  description: string;
  memory_size: number;
  forgetting_policy: string;
  temperature: number;
  system_prompt: string;
  user_prompt: string;
  used_bytes: number;
  message_count: number;
  created_by: string;
  create_time: number;
  update_time: number;
}

function ownerName(e: Engine, tenantId: string): string | null {
  const r = cachedStatement(e.db, "SELECT u.nickname FROM user_tenant ut JOIN user u ON u.id = ut.user_id WHERE ut.tenant_id = ? AND ut.role = 'owner'").get(tenantId) as { nickname: string } | undefined;
  return r?.nickname ?? null;
}

/** RAGFlow's `format_ret_data_from_memory`. */
function memoryToWire(e: Engine, m: MemoryRow): Record<string, unknown> {
  return {
    id: m.id, name: m.name, avatar: m.avatar, tenant_id: m.tenant_id, owner_name: ownerName(e, m.tenant_id),
    memory_type: maskToTypes(m.memory_type), storage_type: m.storage_type, embd_id: m.embd_id, llm_id: m.llm_id,
    permissions: m.permissions, description: m.description, memory_size: m.memory_size, forgetting_policy: m.forgetting_policy,
    temperature: m.temperature, system_prompt: m.system_prompt, user_prompt: m.user_prompt,
    create_time: m.create_time, create_date: formatDateTime(m.create_time), update_time: m.update_time, update_date: formatDateTime(m.update_time),
  };
}

/** The tenants the caller belongs to (its own first). */
function joinedTenants(e: Engine, ctx: Ctx): string[] {
  const others = cachedStatement(e.db, 'SELECT tenant_id FROM user_tenant WHERE user_id = ? AND tenant_id != ?').pluck().all(ctx.userId, ctx.tenantId) as string[];
  return [ctx.tenantId, ...others];
}

/** Own memories, and `team` memories of tenants the caller is a member of. */
function accessible(e: Engine, ctx: Ctx, id: unknown): MemoryRow | undefined {
  if (typeof id !== 'string' || !id) return undefined;
  const m = cachedStatement(e.db, 'SELECT * FROM memory WHERE id = ?').get(id) as MemoryRow | undefined;
  if (!m) return undefined;
  if (m.tenant_id === ctx.tenantId) return m;
  return m.permissions === 'team' && joinedTenants(e, ctx).includes(m.tenant_id) ? m : undefined;
}

const requireMemory = (e: Engine, ctx: Ctx, id: unknown): MemoryRow => accessible(e, ctx, id) ?? notFound(`Memory '${pyStr(id)}' not found.`);

/** Python's repr of a set of strings, as RAGFlow's messages print it. */
const pySet = (xs: unknown[]): string => `{${xs.map((x) => (typeof x === 'string' ? `'${x}'` : pyRepr(x))).join(', ')}}`;

function checkTypes(v: unknown): string[] {
  if (!Array.isArray(v)) return argError('Memory type must be a list.');
  const set = [...new Set(v as unknown[])];
  const bad = set.filter((t) => typeof t !== 'string' || !(MEMORY_TYPES as readonly string[]).includes(t));
  if (bad.length) argError(`Memory type '${pySet(bad)}' is not supported.`);
  return set as string[];
}

function checkName(v: unknown): string {
  const name = typeof v === 'string' ? v.trim() : '';
  if (!name) argError('Memory name cannot be empty or whitespace.');
  if ([...name].length > NAME_LIMIT) argError(`Memory name '${name}' exceeds limit of ${NAME_LIMIT}.`);
  return name;
}

function checkModels(e: Engine, p: { llm_id?: unknown; embd_id?: unknown }): void {
  if (p.llm_id !== undefined && (typeof p.llm_id !== 'string' || !chatModelExists(e, p.llm_id))) {
    argError(`Tenant Model with name ${pyStr(p.llm_id)} and type chat not found`);
  }
  if (p.embd_id !== undefined && (typeof p.embd_id !== 'string' || e.models.embeddingStatus(p.embd_id) !== 'ok')) {
    argError(`Tenant Model with name ${pyStr(p.embd_id)} and type embedding not found`);
  }
}

function uniqueName(e: Engine, tenantId: string, name: string, exceptId = ''): string {
  const taken = e.db.prepare('SELECT 1 FROM memory WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND id != ?');
  return duplicateName(name, (c) => !!taken.get(tenantId, c, exceptId));
}

export function createMemory(e: Engine, ctx: Ctx, req: P): Record<string, unknown> {
  const missing = ['name', 'memory_type', 'embd_id', 'llm_id'].filter((k) => req[k] === undefined || req[k] === null);
  if (missing.length) argError(`required argument are missing: ${missing.join(',')}; `);
  let name = checkName(req.name);
  const types = checkTypes(req.memory_type);
  checkModels(e, { llm_id: req.llm_id, embd_id: req.embd_id });
  name = uniqueName(e, ctx.tenantId, name);
  const t = nowMs();
  const row: MemoryRow = {
    id: newId(), tenant_id: ctx.tenantId, name, avatar: '', memory_type: typesToMask(types), storage_type: 'table',
    embd_id: req.embd_id as string, llm_id: req.llm_id as string, permissions: 'me', description: '', memory_size: MEMORY_SIZE_DEFAULT,
    forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: extractionSystemPrompt(types), user_prompt: '', used_bytes: 0,
    message_count: 0, created_by: ctx.userId, create_time: t, update_time: t,
  };
  const cols = Object.keys(row);
  e.db.prepare(`INSERT INTO memory (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(row);
  return memoryToWire(e, row);
}

export function updateMemory(e: Engine, ctx: Ctx, memoryId: string, req: P): Record<string, unknown> {
  const cur = requireMemory(e, ctx, memoryId);
  const set: Partial<MemoryRow> = {};
  if ('name' in req) set.name = checkName(req.name);
  if (req.permissions) {
    if (req.permissions !== 'me' && req.permissions !== 'team') argError(`Unknown permission '${pyStr(req.permissions)}'.`);
    set.permissions = req.permissions as string;
  }
  if (('tenant_llm_id' in req || 'tenant_embd_id' in req) && !(req.llm_id || req.embd_id)) {
    argError('Do not set tenant_llm_id or tenant_embd_id directly; update llm_id and/or embd_id instead.');
  }
  if (req.llm_id || req.embd_id) {
    checkModels(e, { llm_id: req.llm_id || cur.llm_id, ...(req.embd_id ? { embd_id: req.embd_id } : {}) });
    if (req.llm_id) set.llm_id = req.llm_id as string;
    if (req.embd_id) set.embd_id = req.embd_id as string;
  }
  let types: string[] | undefined;
  if (req.memory_type) {
    types = checkTypes(req.memory_type);
    set.memory_type = typesToMask(types);
  }
  // RAGFlow skips a falsy memory_size (0 is silently ignored); ragloom refuses it as out of range.
  if (req.memory_size !== undefined && req.memory_size !== null) {
    const n = toNumber(req.memory_size);
    if (!Number.isInteger(n) || !(n > 0 && n <= MEMORY_SIZE_LIMIT)) argError(`Memory size should be in range (0, ${MEMORY_SIZE_LIMIT}] Bytes.`);
    set.memory_size = n;
  }
  if (req.forgetting_policy) {
    if (req.forgetting_policy !== 'FIFO') argError(`Forgetting policy '${pyStr(req.forgetting_policy)}' is not supported.`);
    set.forgetting_policy = 'FIFO';
  }
  if ('temperature' in req) {
    const t = toNumber(req.temperature);
    if (typeof req.temperature === 'boolean' || !Number.isFinite(t) || t < 0 || t > 1) argError('Temperature should be in range [0, 1].');
    set.temperature = t;
  }
  for (const k of ['avatar', 'description', 'system_prompt', 'user_prompt'] as const) {
    if (k in req) set[k] = req[k] === null || req[k] === undefined ? '' : pyStr(req[k]);
  }
  // Only real changes count (RAGFlow compares with the stored record).
  const changed = Object.fromEntries(Object.entries(set).filter(([k, v]) => (cur as unknown as P)[k] !== v)) as Partial<MemoryRow>;
  if (!Object.keys(changed).length) return memoryToWire(e, cur);
  if ('name' in changed) changed.name = uniqueName(e, cur.tenant_id, changed.name!, cur.id);
  const frozen = (['embd_id', 'memory_type'] as const).filter((k) => k in changed && cur.message_count > 0);
  if (frozen.length) argError(`Can't update [${frozen.map((f) => `'${f}'`).join(', ')}] when memory isn't empty.`);
  if (types && !('system_prompt' in changed) && cur.system_prompt === extractionSystemPrompt(maskToTypes(cur.memory_type))) {
    // The stored prompt was the default for the old types: assemble the one for the new types.
    changed.system_prompt = extractionSystemPrompt(types);
  }
  e.tx(() => {
    const { memory_size, ...rest } = changed;
    const cols = Object.keys(rest);
    e.db.prepare(`UPDATE memory SET ${[...cols.map((c) => `${c} = @${c}`), 'update_time = @update_time'].join(', ')} WHERE id = @id`).run({ ...rest, update_time: nowMs(), id: cur.id });
    if (memory_size !== undefined) resize(e.db, cur.id, memory_size); // a smaller budget evicts at once
  });
  return memoryToWire(e, cachedStatement(e.db, 'SELECT * FROM memory WHERE id = ?').get(cur.id) as MemoryRow);
}

export function listMemory(e: Engine, ctx: Ctx, q: P): { memory_list: Record<string, unknown>[]; total_count: number } {
  const split = (v: unknown): string[] => (v === undefined || v === null || v === '' ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => pyStr(x).split(',')).map((x) => x.trim()).filter(Boolean));
  const page = Math.max(1, Math.trunc(toNumber(q.page ?? 1)) || 1);
  const size = Math.trunc(toNumber(q.page_size ?? 50)) || 50;
  const joined = joinedTenants(e, ctx);
  // The local user id stands for its own tenant too (RAGFlow's tenant id is its owner's user id).
  let tenants = split(q.tenant_id ?? q.owner_ids).map((t) => (t === ctx.userId ? ctx.tenantId : t));
  if (tenants.length) {
    tenants = [...new Set(tenants.filter((t) => joined.includes(t)))];
    if (!tenants.length) return { memory_list: [], total_count: 0 };
  } else tenants = joined;
  // Another tenant's memories are visible only when shared with the team.
  const where = [`tenant_id IN (${tenants.map(() => '?').join(',')})`, "(tenant_id = ? OR permissions = 'team')"];
  const args: unknown[] = [...tenants, ctx.tenantId];
  // RAGFlow reads only the first memory_type value of the query string (comma-split).
  const mt = Array.isArray(q.memory_type) ? q.memory_type[0] : q.memory_type;
  const types = split(mt).filter((t) => (MEMORY_TYPES as readonly string[]).includes(t));
  if (types.length) (where.push('(memory_type & ?) != 0'), args.push(typesToMask(types)));
  if (q.storage_type) (where.push('storage_type = ?'), args.push(pyStr(q.storage_type)));
  // instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
  if (q.keywords) (where.push('instr(LOWER(name), ?) > 0'), args.push(pyStr(q.keywords).toLowerCase()));
  const w = where.join(' AND ');
  const total = e.db.prepare(`SELECT COUNT(*) FROM memory WHERE ${w}`).pluck().get(...args) as number;
  const rows = e.db.prepare(`SELECT * FROM memory WHERE ${w} ORDER BY update_time DESC, rowid DESC LIMIT ? OFFSET ?`).all(...args, sqlCount(size), sqlCount((page - 1) * size)) as MemoryRow[];
  return {
    memory_list: rows.map((m) => {
      const x = memoryToWire(e, m);
      return Object.fromEntries(['id', 'name', 'avatar', 'tenant_id', 'owner_name', 'memory_type', 'storage_type', 'permissions', 'description', 'create_time', 'create_date'].map((k) => [k, x[k]]));
    }),
    total_count: total,
  };
}

export function getMemoryConfig(e: Engine, ctx: Ctx, memoryId: string): Record<string, unknown> {
  return memoryToWire(e, requireMemory(e, ctx, memoryId));
}

/** The memory and its messages and tasks go in one transaction. */
export function deleteMemory(e: Engine, ctx: Ctx, memoryId: string): true {
  const m = requireMemory(e, ctx, memoryId);
  e.tx(() => {
    const ids = e.db.prepare('SELECT id FROM memory_message WHERE memory_id = ?').pluck().all(m.id) as number[];
    const fts = e.db.prepare('DELETE FROM memory_fts WHERE rowid = ?');
    for (const id of ids) fts.run(BigInt(id));
    e.db.prepare('DELETE FROM memory_message WHERE memory_id = ?').run(m.id);
    e.db.prepare('DELETE FROM memory_task WHERE memory_id = ?').run(m.id);
    e.db.prepare('DELETE FROM memory WHERE id = ?').run(m.id);
  });
  return true;
}

export function memoryUsage(e: Engine, ctx: Ctx, memoryId: string): Usage {
  return usage(e.db, requireMemory(e, ctx, memoryId).id)!;
}

// ---------------------------------------------------------------- messages

interface MessageRow {
  id: number;
  memory_id: string;
  message_type: string;
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  dim: number;
  vector: Buffer | null;
  valid_at: number;
  invalid_at: number | null;
  forget_at: number | null;
  status: number;
}

const date = (ms: number | null): string => (ms === null ? '-' : formatDateTime(ms));

function messageToWire(m: MessageRow): Record<string, unknown> {
  return {
    message_id: m.id, message_type: m.message_type, source_id: m.source_id, memory_id: m.memory_id, user_id: m.user_id,
    agent_id: m.agent_id, session_id: m.session_id, content: m.content, valid_at: date(m.valid_at), invalid_at: date(m.invalid_at),
    forget_at: date(m.forget_at), status: m.status === 1,
  };
}

const COLS = 'id, memory_id, message_type, source_id, user_id, agent_id, session_id, content, valid_at, invalid_at, forget_at, status';

function memoryIds(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  return (Array.isArray(v) ? v : pyStr(v).split(',')).map((x) => pyStr(x).trim()).filter(Boolean);
}

/**
 * `POST /messages`: per memory, the raw message is embedded and stored now (evicting in FIFO order
 * to fit), and its extraction queued. Resolves to RAGFlow's `All add to task.`. Every memory's
 * message is written in ONE transaction once all are embedded: a crash never leaves the message in
 * some of the memories and not in the others (a memory it does not fit is reported and skipped).
 */
export async function addMessage(e: Engine, ctx: Ctx, queue: ExtractionQueue, req: P): Promise<string> {
  const missing = ['memory_id', 'agent_id', 'session_id', 'user_input', 'agent_response'].filter((k) => req[k] === undefined || req[k] === null);
  if (missing.length) argError(`required argument are missing: ${missing.join(',')}; `);
  const mems = memoryIds(req.memory_id).map((id) => accessible(e, ctx, id)).filter((m): m is MemoryRow => !!m);
  if (!mems.length) throw new ApiError(RetCode.SERVER_ERROR, 'Some messages failed to add. Detail:Memory not found.');
  const content = `User Input: ${pyStr(req.user_input)}\nAgent Response: ${pyStr(req.agent_response)}`;
  const errors: string[] = [];
  let queued = false;
  // Embedded first, once per embedding model. Not through the embedding cache: a conversation turn
  // is embedded once, and the cache's own transaction would double the writes of an add.
  const vectors = new Map<string, Float32Array | null>();
  const ready: MemoryRow[] = [];
  for (const m of mems) {
    if (!vectors.has(m.embd_id)) {
      try {
        const [v] = await e.models.embedder(m.embd_id).embed([content]);
        vectors.set(m.embd_id, v && v.length ? v : null);
      } catch (err) {
        errors.push(`${m.id}: ${(err as Error).message}`);
        continue;
      }
    }
    ready.push(m);
  }
  faultPoint('memory.add:embedded');
  const now = nowMs();
  e.tx(() => {
    for (const m of ready) {
      // Deleted while embedding (here or by another process on the file).
      if (!usage(e.db, m.id)) {
        errors.push(`${m.id}: Memory not found.`);
        continue;
      }
      try {
        // A message that does not fit is refused before anything is written (evictions roll back to a savepoint).
        const { ids } = insertMessages(e.db, m.id, [{
          message_type: 'raw', source_id: 0, user_id: pyStr(req.user_id ?? ''), agent_id: pyStr(req.agent_id), session_id: pyStr(req.session_id),
          content, vector: vectors.get(m.embd_id) ?? null, valid_at: now, invalid_at: null, fifo_at: now,
        }], { now });
        if (maskToTypes(m.memory_type).some((t) => t !== 'raw')) {
          cachedStatement(e.db, 'INSERT INTO memory_task (memory_id, message_id, create_time, update_time) VALUES (?, ?, ?, ?)').run(m.id, ids[0], now, now);
          queued = true;
        }
      } catch (err) {
        if (!(err instanceof MemoryFullError)) throw err;
        errors.push(`${m.id}: ${err.message}`);
      }
      faultPoint('memory.add:stored');
    }
  });
  faultPoint('memory.add:committed');
  if (queued) queue.kick();
  if (errors.length) throw new ApiError(RetCode.SERVER_ERROR, `Some messages failed to add. Detail:${errors.join('; ')}`);
  return 'All add to task.';
}

/** Raw messages (newest first) with their extracted items; keywords match the session id. */
export function listMemoryMessages(e: Engine, ctx: Ctx, memoryId: string, q: P): Record<string, unknown> {
  const m = requireMemory(e, ctx, memoryId);
  const page = Math.max(1, Math.trunc(toNumber(q.page ?? 1)) || 1);
  const size = Math.trunc(toNumber(q.page_size ?? 50)) || 50;
  const where = ['memory_id = ?', 'source_id = 0'];
  const args: unknown[] = [m.id];
  const agents = memoryIds(q.agent_id);
  // One JSON parameter for the list: one placeholder per id would stop at SQLite's 32,766 variables.
  if (agents.length) (where.push('agent_id IN (SELECT value FROM json_each(?))'), args.push(JSON.stringify(agents)));
  // instr(), not LIKE (whose patterns stop at 50,000 bytes); LOWER on both sides folds ASCII as LIKE does.
  if (q.keywords) (where.push('instr(LOWER(session_id), LOWER(?)) > 0'), args.push(pyStr(q.keywords)));
  const w = where.join(' AND ');
  const total = e.db.prepare(`SELECT COUNT(*) FROM memory_message WHERE ${w}`).pluck().get(...args) as number;
  const rows = e.db.prepare(`SELECT ${COLS} FROM memory_message WHERE ${w} ORDER BY valid_at DESC, id DESC LIMIT ? OFFSET ?`).all(...args, sqlCount(size), sqlCount((page - 1) * size)) as MessageRow[];
  const kids = e.db.prepare(`SELECT ${COLS} FROM memory_message WHERE source_id = ? ORDER BY id`);
  const task = e.db.prepare('SELECT status, attempts, progress_msg, update_time FROM memory_task WHERE memory_id = ? AND message_id = ? ORDER BY id DESC LIMIT 1');
  return {
    messages: {
      message_list: rows.map((r) => ({
        ...messageToWire(r),
        task: task.get(m.id, r.id) ?? {},
        extract: (kids.all(r.id) as MessageRow[]).map(messageToWire),
      })),
      total_count: total,
    },
    storage_type: m.storage_type,
  };
}

function findMessage(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown): { m: MemoryRow; msg: MessageRow } {
  const m = requireMemory(e, ctx, memoryId);
  const id = toNumber(messageId);
  const msg = Number.isInteger(id) ? (cachedStatement(e.db, `SELECT ${COLS}, dim, vector FROM memory_message WHERE id = ? AND memory_id = ?`).get(id, m.id) as MessageRow | undefined) : undefined;
  if (!msg) notFound(`Message '${pyStr(messageId)}' in memory '${memoryId}' not found.`);
  return { m, msg: msg! };
}

/** Sets forget_at (the first time): hidden from search and recent messages, evicted first. */
export function forgetMessage(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown): true {
  const { msg } = findMessage(e, ctx, memoryId, messageId);
  e.db.prepare('UPDATE memory_message SET forget_at = ? WHERE id = ? AND forget_at IS NULL').run(nowMs(), msg.id);
  return true;
}

export function updateMessageStatus(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown, status: unknown): true {
  if (typeof status !== 'boolean') argError('Status must be a boolean.');
  const { msg } = findMessage(e, ctx, memoryId, messageId);
  e.db.prepare('UPDATE memory_message SET status = ? WHERE id = ?').run(status ? 1 : 0, msg.id);
  return true;
}

export function getMessageContent(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown): Record<string, unknown> {
  const { msg } = findMessage(e, ctx, memoryId, messageId);
  const v = msg.vector && msg.dim ? Array.from(new Float32Array(msg.vector.buffer.slice(msg.vector.byteOffset, msg.vector.byteOffset + msg.dim * 4))) : [];
  return { ...messageToWire(msg), content_embed: v };
}

export function getRecentMessages(e: Engine, ctx: Ctx, q: P): Record<string, unknown>[] {
  const ids = memoryIds(q.memory_id);
  if (!ids.length) argError('memory_ids is required.');
  const mems = [...new Set(ids.map((id) => accessible(e, ctx, id)).filter((m): m is MemoryRow => !!m).map((m) => m.id))];
  if (!mems.length) return [];
  const limit = Math.max(0, Math.trunc(toNumber(q.limit ?? 10)) || 10);
  const where = [`memory_id IN (${mems.map(() => '?').join(',')})`, 'forget_at IS NULL'];
  const args: unknown[] = [...mems];
  if (q.agent_id) (where.push('agent_id = ?'), args.push(pyStr(q.agent_id)));
  if (q.session_id) (where.push('session_id = ?'), args.push(pyStr(q.session_id)));
  const rows = e.db.prepare(`SELECT ${COLS} FROM memory_message WHERE ${where.join(' AND ')} ORDER BY valid_at DESC, id DESC LIMIT ?`).all(...args, sqlCount(limit)) as MessageRow[];
  return rows.map(messageToWire);
}

/**
 * Hybrid search over enabled, not forgotten messages. `keywords_similarity_weight` is, as in
 * RAGFlow 0.25.6, the weight of the VECTOR side (the name says the opposite): similarity =
 * kw·cosine + (1 − kw)·term_similarity. docs/memory.md.
 */
export async function searchMessage(e: Engine, ctx: Ctx, q: P): Promise<Record<string, unknown>[]> {
  const ids = memoryIds(q.memory_id);
  const mems = [...new Map(ids.map((id) => accessible(e, ctx, id)).filter((m): m is MemoryRow => !!m).map((m) => [m.id, m])).values()];
  if (!mems.length) return [];
  const num = (v: unknown, d: number, name: string) => {
    if (v === undefined || v === null || v === '') return d;
    const n = toNumber(v);
    if (!Number.isFinite(n) || typeof v === 'boolean') argError(`\`${name}\` should be a number`);
    return n;
  };
  const threshold = num(q.similarity_threshold, 0.2, 'similarity_threshold');
  const kw = num(q.keywords_similarity_weight, 0.7, 'keywords_similarity_weight');
  if (kw < 0 || kw > 1) argError('`keywords_similarity_weight` should be in [0, 1]');
  const topN = Math.trunc(num(q.top_n, 5, 'top_n'));
  const question = pyStr(q.query ?? '').trim();
  if (!question || topN <= 0) return [];
  // Memories searched together must share one embedding model for their vectors to compare.
  const embd = mems[0]!.embd_id;
  const same = mems.filter((m) => m.embd_id === embd);
  const [qv] = await e.models.embedder(embd).embed([question]);
  // More than the memories hold cannot be found; a larger top_n (2^53) would size the search's buffers.
  const held = e.db.prepare('SELECT COUNT(*) FROM memory_message WHERE memory_id IN (SELECT value FROM json_each(?))').pluck().get(JSON.stringify(same.map((m) => m.id))) as number;
  const hits = await searchMemoryMessages(e.store.search, {
    memoryIds: same.map((m) => m.id), question, questionVector: qv && qv.length ? qv : null, dim: qv?.length ?? 0,
    threshold, vectorWeight: kw, topN: Math.min(topN, Math.max(1, held)),
    agentId: q.agent_id ? pyStr(q.agent_id) : undefined, sessionId: q.session_id ? pyStr(q.session_id) : undefined, userId: q.user_id ? pyStr(q.user_id) : undefined,
  });
  const get = cachedStatement(e.db, `SELECT ${COLS} FROM memory_message WHERE id = ?`);
  return hits.map((h) => ({ ...messageToWire(get.get(h.id) as MessageRow), similarity: h.similarity, vector_similarity: h.vector_similarity, term_similarity: h.term_similarity }));
}


/**
 * Memories and their messages (RAGFlow's `/memories` and `/messages`, reference §11): the checks,
 * defaults, codes and messages of RAGFlow 0.25.6, over the allocator of src/memory.
 */
import type { Engine, Ctx } from '../core/index.js';
import { chatModelExists } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyRepr, pyStr } from './pyfmt.js';
import { sqlCount, toNumber } from './validate.js';
import { newId, nowMs, formatDateTime, faultPoint, pyListRepr } from '../util/index.js';
import { extractionSystemPrompt, typesToMask, maskToTypes, MEMORY_TYPES, type ExtractionQueue, type Usage } from '../memory/index.js';
import { searchMemoryMessages } from '../search/index.js';
import type { MemoryRow, MessageRow } from '../store/index.js';

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

/** RAGFlow's `format_ret_data_from_memory`, for memories whose tenants' owners are named in `owners`. */
function memoryToWire(m: MemoryRow, owners: Map<string, string>): Record<string, unknown> {
  return {
    id: m.id, name: m.name, avatar: m.avatar, tenant_id: m.tenant_id, owner_name: owners.get(m.tenant_id) ?? null,
    memory_type: maskToTypes(m.memory_type), storage_type: m.storage_type, embd_id: m.embd_id, llm_id: m.llm_id,
    permissions: m.permissions, description: m.description, memory_size: m.memory_size, forgetting_policy: m.forgetting_policy,
    temperature: m.temperature, system_prompt: m.system_prompt, user_prompt: m.user_prompt,
    create_time: m.create_time, create_date: formatDateTime(m.create_time), update_time: m.update_time, update_date: formatDateTime(m.update_time),
  };
}

/** One memory in its wire shape. */
async function oneToWire(e: Engine, m: MemoryRow): Promise<Record<string, unknown>> {
  return memoryToWire(m, await e.store.accounts.ownerNicknames([m.tenant_id]));
}

/** Own memories, and `team` memories of tenants the caller is a member of. */
async function accessible(e: Engine, ctx: Ctx, id: unknown): Promise<MemoryRow | undefined> {
  if (typeof id !== 'string' || !id) return undefined;
  const m = await e.store.memories.get(id);
  if (!m) return undefined;
  if (m.tenant_id === ctx.tenantId) return m;
  return m.permissions === 'team' && (await e.store.accounts.joinedTenants(ctx)).includes(m.tenant_id) ? m : undefined;
}

/** The accessible ones among `ids`, in order. */
async function accessibleAll(e: Engine, ctx: Ctx, ids: unknown[]): Promise<MemoryRow[]> {
  const out: MemoryRow[] = [];
  for (const id of ids) {
    const m = await accessible(e, ctx, id);
    if (m) out.push(m);
  }
  return out;
}

const requireMemory = async (e: Engine, ctx: Ctx, id: unknown): Promise<MemoryRow> => (await accessible(e, ctx, id)) ?? notFound(`Memory '${pyStr(id)}' not found.`);

/** Python's repr of a set of strings, as RAGFlow's messages print it. */
const pySet = (xs: unknown[]): string => `{${xs.map((x) => pyRepr(x)).join(', ')}}`;

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

export async function createMemory(e: Engine, ctx: Ctx, req: P): Promise<Record<string, unknown>> {
  const missing = ['name', 'memory_type', 'embd_id', 'llm_id'].filter((k) => req[k] === undefined || req[k] === null);
  if (missing.length) argError(`required argument are missing: ${missing.join(',')}; `);
  let name = checkName(req.name);
  const types = checkTypes(req.memory_type);
  checkModels(e, { llm_id: req.llm_id, embd_id: req.embd_id });
  const t = nowMs();
  const row: MemoryRow = {
    id: newId(), tenant_id: ctx.tenantId, name, avatar: '', memory_type: typesToMask(types), storage_type: 'table',
    embd_id: req.embd_id as string, llm_id: req.llm_id as string, permissions: 'me', description: '', memory_size: MEMORY_SIZE_DEFAULT,
    forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: extractionSystemPrompt(types), user_prompt: '', used_bytes: 0,
    message_count: 0, created_by: ctx.userId, create_time: t, update_time: t,
  };
  // The name is made free in the same transaction as the insert.
  row.name = await e.store.memories.create(row);
  return oneToWire(e, row);
}

export async function updateMemory(e: Engine, ctx: Ctx, memoryId: string, req: P): Promise<Record<string, unknown>> {
  const cur = await requireMemory(e, ctx, memoryId);
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
  if (!Object.keys(changed).length) return oneToWire(e, cur);
  const frozen = (['embd_id', 'memory_type'] as const).filter((k) => k in changed && cur.message_count > 0);
  if (frozen.length) argError(`Can't update ${pyListRepr(frozen)} when memory isn't empty.`);
  if (types && !('system_prompt' in changed) && cur.system_prompt === extractionSystemPrompt(maskToTypes(cur.memory_type))) {
    // The stored prompt was the default for the old types: assemble the one for the new types.
    changed.system_prompt = extractionSystemPrompt(types);
  }
  // A new name is made free, and a smaller budget evicts at once, in the update's transaction.
  await e.store.memories.update(cur.id, cur.tenant_id, changed, nowMs());
  return oneToWire(e, (await e.store.memories.get(cur.id))!);
}

export async function listMemory(e: Engine, ctx: Ctx, q: P): Promise<{ memory_list: Record<string, unknown>[]; total_count: number }> {
  const split = (v: unknown): string[] => (v === undefined || v === null || v === '' ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => pyStr(x).split(',')).map((x) => x.trim()).filter(Boolean));
  const page = Math.max(1, Math.trunc(toNumber(q.page ?? 1)) || 1);
  const size = Math.trunc(toNumber(q.page_size ?? 50)) || 50;
  const joined = await e.store.accounts.joinedTenants(ctx);
  // The local user id stands for its own tenant too (RAGFlow's tenant id is its owner's user id).
  let tenants = split(q.tenant_id ?? q.owner_ids).map((t) => (t === ctx.userId ? ctx.tenantId : t));
  if (tenants.length) {
    tenants = [...new Set(tenants.filter((t) => joined.includes(t)))];
    if (!tenants.length) return { memory_list: [], total_count: 0 };
  } else tenants = joined;
  // RAGFlow reads only the first memory_type value of the query string (comma-split).
  const mt = Array.isArray(q.memory_type) ? q.memory_type[0] : q.memory_type;
  const types = split(mt).filter((t) => (MEMORY_TYPES as readonly string[]).includes(t));
  const { total, rows } = await e.store.memories.list({
    tenantIds: tenants, ownTenantId: ctx.tenantId,
    ...(types.length ? { typeMask: typesToMask(types) } : {}),
    ...(q.storage_type ? { storageType: pyStr(q.storage_type) } : {}),
    ...(q.keywords ? { keywords: pyStr(q.keywords).toLowerCase() } : {}),
    limit: sqlCount(size), offset: sqlCount((page - 1) * size),
  });
  const owners = await e.store.accounts.ownerNicknames(rows.map((m) => m.tenant_id));
  return {
    memory_list: rows.map((m) => {
      const x = memoryToWire(m, owners);
      return Object.fromEntries(['id', 'name', 'avatar', 'tenant_id', 'owner_name', 'memory_type', 'storage_type', 'permissions', 'description', 'create_time', 'create_date'].map((k) => [k, x[k]]));
    }),
    total_count: total,
  };
}

export async function getMemoryConfig(e: Engine, ctx: Ctx, memoryId: string): Promise<Record<string, unknown>> {
  return oneToWire(e, await requireMemory(e, ctx, memoryId));
}

/** The memory and its messages and tasks go in one transaction. */
export async function deleteMemory(e: Engine, ctx: Ctx, memoryId: string): Promise<true> {
  const m = await requireMemory(e, ctx, memoryId);
  await e.store.memories.delete(m.id);
  return true;
}

export async function memoryUsage(e: Engine, ctx: Ctx, memoryId: string): Promise<Usage> {
  return (await e.store.memories.usage((await requireMemory(e, ctx, memoryId)).id))!;
}

// ---------------------------------------------------------------- messages

const date = (ms: number | null): string => (ms === null ? '-' : formatDateTime(ms));

function messageToWire(m: MessageRow): Record<string, unknown> {
  return {
    message_id: m.id, message_type: m.message_type, source_id: m.source_id, memory_id: m.memory_id, user_id: m.user_id,
    agent_id: m.agent_id, session_id: m.session_id, content: m.content, valid_at: date(m.valid_at), invalid_at: date(m.invalid_at),
    forget_at: date(m.forget_at), status: m.status === 1,
  };
}

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
  const mems = await accessibleAll(e, ctx, memoryIds(req.memory_id));
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
  // One transaction for every memory: a memory deleted while embedding (here or by another
  // process) is reported; a message that does not fit is refused before anything of it is written.
  const results = await e.store.memories.addRaw(ready.map((m) => ({
    memoryId: m.id,
    message: {
      message_type: 'raw', source_id: 0, user_id: pyStr(req.user_id ?? ''), agent_id: pyStr(req.agent_id), session_id: pyStr(req.session_id),
      content, vector: vectors.get(m.embd_id) ?? null, valid_at: now, invalid_at: null, fifo_at: now,
    },
    queueTask: maskToTypes(m.memory_type).some((t) => t !== 'raw'),
  })), now);
  results.forEach((r, i) => {
    const m = ready[i]!;
    if (r.ok) queued ||= maskToTypes(m.memory_type).some((t) => t !== 'raw');
    else if ('gone' in r) errors.push(`${m.id}: Memory not found.`);
    else errors.push(`${m.id}: ${r.full.message}`);
  });
  if (queued) queue.kick();
  if (errors.length) throw new ApiError(RetCode.SERVER_ERROR, `Some messages failed to add. Detail:${errors.join('; ')}`);
  return 'All add to task.';
}

/** Raw messages (newest first) with their extracted items; keywords match the session id. */
export async function listMemoryMessages(e: Engine, ctx: Ctx, memoryId: string, q: P): Promise<Record<string, unknown>> {
  const m = await requireMemory(e, ctx, memoryId);
  const page = Math.max(1, Math.trunc(toNumber(q.page ?? 1)) || 1);
  const size = Math.trunc(toNumber(q.page_size ?? 50)) || 50;
  const agents = memoryIds(q.agent_id);
  const { total, rows } = await e.store.memories.listMessages({
    memoryId: m.id, ...(agents.length ? { agentIds: agents } : {}), ...(q.keywords ? { keywords: pyStr(q.keywords) } : {}),
    limit: sqlCount(size), offset: sqlCount((page - 1) * size),
  });
  return {
    messages: {
      message_list: rows.map((r) => ({ ...messageToWire(r.message), task: r.task ?? {}, extract: r.items.map(messageToWire) })),
      total_count: total,
    },
    storage_type: m.storage_type,
  };
}

async function findMessage(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown): Promise<{ m: MemoryRow; msg: MessageRow & { vector: Float32Array | null } }> {
  const m = await requireMemory(e, ctx, memoryId);
  const id = toNumber(messageId);
  const msg = Number.isInteger(id) ? await e.store.memories.getMessage(m.id, id) : undefined;
  if (!msg) notFound(`Message '${pyStr(messageId)}' in memory '${memoryId}' not found.`);
  return { m, msg: msg! };
}

/** Sets forget_at (the first time): hidden from search and recent messages, evicted first. */
export async function forgetMessage(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown): Promise<true> {
  const { msg } = await findMessage(e, ctx, memoryId, messageId);
  await e.store.memories.forget(msg.id, nowMs());
  return true;
}

export async function updateMessageStatus(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown, status: unknown): Promise<true> {
  if (typeof status !== 'boolean') argError('Status must be a boolean.');
  const { msg } = await findMessage(e, ctx, memoryId, messageId);
  await e.store.memories.setStatus(msg.id, status as boolean);
  return true;
}

export async function getMessageContent(e: Engine, ctx: Ctx, memoryId: string, messageId: unknown): Promise<Record<string, unknown>> {
  const { msg } = await findMessage(e, ctx, memoryId, messageId);
  const { vector, ...row } = msg;
  return { ...messageToWire(row), content_embed: vector ? Array.from(vector) : [] };
}

export async function getRecentMessages(e: Engine, ctx: Ctx, q: P): Promise<Record<string, unknown>[]> {
  const ids = memoryIds(q.memory_id);
  if (!ids.length) argError('memory_ids is required.');
  const mems = [...new Set((await accessibleAll(e, ctx, ids)).map((m) => m.id))];
  if (!mems.length) return [];
  const limit = Math.max(0, Math.trunc(toNumber(q.limit ?? 10)) || 10);
  const rows = await e.store.memories.recent({
    memoryIds: mems, ...(q.agent_id ? { agentId: pyStr(q.agent_id) } : {}), ...(q.session_id ? { sessionId: pyStr(q.session_id) } : {}), limit: sqlCount(limit),
  });
  return rows.map(messageToWire);
}

/**
 * Hybrid search over enabled, not forgotten messages. `keywords_similarity_weight` is, as in
 * RAGFlow 0.25.6, the weight of the VECTOR side (the name says the opposite): similarity =
 * kw·cosine + (1 − kw)·term_similarity. docs/memory.md.
 */
export async function searchMessage(e: Engine, ctx: Ctx, q: P): Promise<Record<string, unknown>[]> {
  const ids = memoryIds(q.memory_id);
  const mems = [...new Map((await accessibleAll(e, ctx, ids)).map((m) => [m.id, m])).values()];
  if (!mems.length) return [];
  const num = (v: unknown, d: number, name: string) => {
    if (v === undefined || v === null || v === '') return d;
    const n = toNumber(v);
    if (!Number.isFinite(n) || typeof v === 'boolean') argError(`\`${name}\` should be a number`);
    return n;
  };
  const threshold = num(q.similarity_threshold, 0.2, 'similarity_threshold');
  if (threshold < 0 || threshold > 1) argError('`similarity_threshold` should be in [0, 1]');
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
  const held = await e.store.memories.countMessages(same.map((m) => m.id));
  const hits = await searchMemoryMessages(e.store.search, {
    memoryIds: same.map((m) => m.id), question, questionVector: qv && qv.length ? qv : null, dim: qv?.length ?? 0,
    threshold, vectorWeight: kw, topN: Math.min(topN, Math.max(1, held)),
    agentId: q.agent_id ? pyStr(q.agent_id) : undefined, sessionId: q.session_id ? pyStr(q.session_id) : undefined, userId: q.user_id ? pyStr(q.user_id) : undefined,
  });
  const rows = await e.store.memories.messages(hits.map((h) => h.id));
  return hits.map((h) => ({ ...messageToWire(rows.get(h.id)!), similarity: h.similarity, vector_similarity: h.vector_similarity, term_similarity: h.term_similarity }));
}


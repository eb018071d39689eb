/**
 * Chat assistants and their sessions (RAGFlow's `/chats` and `/chats/{id}/sessions`): the checks
 * in RAGFlow's order, its defaults, codes and messages (reference §7–8; chat_api.py of v0.25.6).
 */
import type { Engine, Ctx } from '../core/index.js';
import {
  chatToWire, chatsToWire, ownedChat, chatNameTaken, sessionToWire, sessionsToWire, getSession,
  DEFAULT_PROMPT_CONFIG, CHAT_DEFAULTS, type ChatRow, type SessionRow, type PromptConfig,
} from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { newId, nowMs, utf8Length, isPlainObject, pyListRepr } from '../util/index.js';
import { chatModelExists, rerankModelExists } from './models.js';
import { pyStr } from './pyfmt.js';
import { intArg, orderColumn, paginate } from './listing.js';
import type { ChatListQuery, SessionListQuery } from '../store/index.js';

type P = Record<string, unknown>;

/** RAGFlow's `get_data_error_result` (code 102). */
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
const noAuthorization = (): never => {
  throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
};

/** A message RAGFlow sends with a successful result (partial deletes); the server puts it in the envelope. */
export const RESULT_MESSAGE = Symbol.for('ragloom.resultMessage');
function withMessage<T extends object>(data: T, message: string): T {
  Object.defineProperty(data, RESULT_MESSAGE, { value: message, enumerable: false });
  return data;
}

// ---------------------------------------------------------------- validation

function validateName(v: unknown, required: boolean): string | undefined {
  if (v === undefined || v === null) {
    if (required) dataError('`name` is required.');
    return undefined;
  }
  if (typeof v !== 'string') return dataError('Chat name must be a string.');
  const name = v.trim();
  if (!name) dataError(required ? '`name` is required.' : '`name` cannot be empty.');
  const bytes = utf8Length(name);
  if (bytes > 255) dataError(`Chat name length is ${bytes} which is larger than 255.`);
  return name;
}

/** RAGFlow's `_validate_dataset_ids`: owned, parsed, one embedding model. */
async function validateDatasetIds(e: Engine, ctx: Ctx, v: unknown): Promise<string[]> {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) return dataError('`dataset_ids` should be a list.');
  const ids = (v as unknown[]).filter((x) => !!x);
  const embd: string[] = [];
  const out: string[] = [];
  const visible = await e.store.datasets.getVisibleMany(ids.filter((id): id is string => typeof id === 'string'), ctx);
  for (const id of ids) {
    const kb = typeof id === 'string' ? visible.get(id) : undefined;
    if (!kb || kb.status !== '1') return dataError(`You don't own the dataset ${pyStr(id)}`);
    if (kb.chunk_num === 0) return dataError(`The dataset ${pyStr(id)} doesn't own parsed file`);
    embd.push(kb.embd_id);
    if (!out.includes(kb.id)) out.push(kb.id);
  }
  // RAGFlow compares the model names without their factories.
  if (new Set(embd.map((m) => m.split('@')[0])).size > 1) {
    dataError(`Datasets use different embedding models: ${pyListRepr(embd)}`);
  }
  return out;
}

function validateLlmId(e: Engine, v: unknown): void {
  if (v === undefined || v === null || v === '') return;
  if (typeof v !== 'string' || !chatModelExists(e, v)) dataError(`\`llm_id\` ${pyStr(v)} doesn't exist`);
}

function validateRerankId(e: Engine, v: unknown): void {
  if (v === undefined || v === null || v === '') return;
  if (typeof v !== 'string' || !rerankModelExists(e, v)) dataError(`\`rerank_id\` ${pyStr(v)} doesn't exist`);
}

function validateParameters(pc: P): void {
  const ps = pc.parameters;
  // (The string checks below apply whether or not `parameters` is given.)
  const ok = ps === undefined || (Array.isArray(ps) && ps.every((p) => isPlainObject(p) && typeof p.key === 'string' && p.key && (p.optional === undefined || typeof p.optional === 'boolean')));
  if (!ok) dataError('`prompt_config.parameters` should be a list of objects like {"key": "knowledge", "optional": false}.');
  for (const k of ['system', 'prologue', 'empty_response'] as const) {
    if (pc[k] !== undefined && pc[k] !== null && typeof pc[k] !== 'string') dataError(`\`prompt_config.${k}\` should be a string.`);
  }
}

/**
 * The retrieval settings a chat stores. RAGFlow writes whatever it is sent (a bad value fails
 * later, at ask time, or in the database); ragloom refuses it up front with 102.
 */
function validateNumbers(p: P): void {
  const frac = (k: string) => {
    const v = p[k];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) dataError(`\`${k}\` should be a number in [0, 1].`);
  };
  const posInt = (k: string) => {
    const v = p[k];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) dataError(`\`${k}\` should be a positive integer.`);
  };
  frac('similarity_threshold');
  frac('vector_similarity_weight');
  posInt('top_n');
  posInt('top_k');
  if (p.llm_setting !== undefined && p.llm_setting !== null && !isPlainObject(p.llm_setting)) dataError('`llm_setting` should be an object.');
  for (const k of ['icon', 'description', 'language'] as const) {
    if (p[k] !== undefined && p[k] !== null && typeof p[k] !== 'string') dataError(`\`${k}\` should be a string.`);
  }
}

/** RAGFlow's `_apply_prompt_defaults`: a missing key (or an empty system prompt) takes the default. */
function withPromptDefaults(given: P, hasDatasets: boolean): PromptConfig {
  const pc: P = { ...given };
  for (const [k, v] of Object.entries(DEFAULT_PROMPT_CONFIG)) {
    if ((k === 'system' && !pc.system) || !(k in pc)) pc[k] = structuredClone(v);
  }
  const params = pc.parameters as unknown[];
  if (hasDatasets && (!Array.isArray(params) || params.length === 0) && String(pc.system).includes('{knowledge}')) {
    pc.parameters = [{ key: 'knowledge', optional: false }];
  }
  return pc as PromptConfig;
}

// ---------------------------------------------------------------- chats

export async function createChat(e: Engine, ctx: Ctx, req: P): Promise<Record<string, unknown>> {
  if (req.tenant_id) dataError('`tenant_id` must not be provided.');
  const name = validateName(req.name, true)!;
  const datasetIds = 'dataset_ids' in req ? await validateDatasetIds(e, ctx, req.dataset_ids) : [];
  if ('llm_id' in req) validateLlmId(e, req.llm_id);
  if ('rerank_id' in req) validateRerankId(e, req.rerank_id);
  if ('prompt_config' in req && !isPlainObject(req.prompt_config)) dataError('`prompt_config` should be an object.');
  if (isPlainObject(req.prompt_config)) validateParameters(req.prompt_config);
  validateNumbers(req);
  const promptConfig = withPromptDefaults(isPlainObject(req.prompt_config) ? req.prompt_config : {}, datasetIds.length > 0);
  const llmId = typeof req.llm_id === 'string' && req.llm_id ? req.llm_id : (await e.tenantRow(ctx.tenantId)).llm_id || (await defaultChatModel(e, ctx));
  if (await chatNameTaken(e, ctx.tenantId, name)) dataError('Duplicated chat name in creating chat.');
  const t = nowMs();
  const row: ChatRow = {
    id: newId(),
    tenant_id: ctx.tenantId,
    name,
    description: typeof req.description === 'string' ? req.description : CHAT_DEFAULTS.description,
    icon: typeof req.icon === 'string' ? req.icon : CHAT_DEFAULTS.icon,
    language: typeof req.language === 'string' ? req.language : 'English',
    dataset_ids: JSON.stringify(datasetIds),
    llm_id: llmId,
    llm_setting: JSON.stringify(isPlainObject(req.llm_setting) ? req.llm_setting : {}),
    prompt_config: JSON.stringify(promptConfig),
    meta_data_filter: JSON.stringify(isPlainObject(req.meta_data_filter) ? req.meta_data_filter : {}),
    similarity_threshold: (req.similarity_threshold as number | undefined) ?? CHAT_DEFAULTS.similarity_threshold,
    vector_similarity_weight: (req.vector_similarity_weight as number | undefined) ?? CHAT_DEFAULTS.vector_similarity_weight,
    top_n: (req.top_n as number | undefined) ?? CHAT_DEFAULTS.top_n,
    top_k: (req.top_k as number | undefined) ?? CHAT_DEFAULTS.top_k,
    rerank_id: typeof req.rerank_id === 'string' ? req.rerank_id : CHAT_DEFAULTS.rerank_id,
    status: '1',
    created_by: ctx.userId,
    create_time: t,
    update_time: t,
  };
  // The name is checked again in the insert's transaction.
  if (!(await e.store.chats.create(row))) dataError('Duplicated chat name in creating chat.');
  return chatToWire(e, row);
}

/** The tenant's default chat model: the configured one, else the built-in extractive model. */
export async function defaultChatModel(e: Engine, ctx: Ctx): Promise<string> {
  return defaultModelOf(await e.tenantRow(ctx.tenantId));
}

/** defaultChatModel of a tenant already read. */
export function defaultModelOf(tenant: { llm_id: string }): string {
  return tenant.llm_id || 'ragloom-extractive@Builtin';
}

/**
 * PATCH (the SDK's `Chat.update`): prompt_config and llm_setting are merged into the stored ones.
 * `replace: true` is PUT: they are replaced.
 */
export async function updateChat(e: Engine, ctx: Ctx, chatId: string, req: P, replace = false): Promise<Record<string, unknown>> {
  const cur = (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  if (req.tenant_id) dataError('`tenant_id` must not be provided.');
  const set: Partial<ChatRow> = {};
  if ('name' in req) {
    const name = validateName(req.name, replace);
    if (name !== undefined) set.name = name;
  }
  if ('dataset_ids' in req) set.dataset_ids = JSON.stringify(await validateDatasetIds(e, ctx, req.dataset_ids));
  if ('llm_id' in req) {
    validateLlmId(e, req.llm_id);
    if (typeof req.llm_id === 'string') set.llm_id = req.llm_id;
  }
  if ('rerank_id' in req) {
    validateRerankId(e, req.rerank_id);
    set.rerank_id = typeof req.rerank_id === 'string' ? req.rerank_id : '';
  }
  if ('prompt_config' in req) {
    if (!isPlainObject(req.prompt_config)) dataError('`prompt_config` should be an object.');
    const pc = replace ? { ...(req.prompt_config as P) } : { ...(JSON.parse(cur.prompt_config) as P), ...(req.prompt_config as P) };
    validateParameters(pc);
    set.prompt_config = JSON.stringify(pc);
  }
  validateNumbers(req);
  if ('llm_setting' in req) {
    const ls = isPlainObject(req.llm_setting) ? req.llm_setting : {};
    set.llm_setting = JSON.stringify(replace ? ls : { ...(JSON.parse(cur.llm_setting) as P), ...ls });
  }
  for (const k of ['similarity_threshold', 'vector_similarity_weight', 'top_n', 'top_k'] as const) {
    if (typeof req[k] === 'number') (set as Record<string, unknown>)[k] = req[k];
  }
  for (const k of ['icon', 'description', 'language'] as const) if (typeof req[k] === 'string') set[k] = req[k] as string;
  if (isPlainObject(req.meta_data_filter)) set.meta_data_filter = JSON.stringify(req.meta_data_filter);
  const rename = set.name !== undefined && set.name.toLowerCase() !== cur.name.toLowerCase();
  if (rename && (await chatNameTaken(e, ctx.tenantId, set.name!, cur.id))) dataError('Duplicated chat name.');
  set.update_time = nowMs();
  // A new name is checked again in the update's transaction.
  if (!(await e.store.chats.update(cur.id, ctx.tenantId, set, rename))) dataError('Duplicated chat name.');
  return chatToWire(e, (await ownedChat(e, ctx, cur.id))!);
}

export async function getChat(e: Engine, ctx: Ctx, chatId: string): Promise<Record<string, unknown>> {
  return chatToWire(e, (await ownedChat(e, ctx, chatId)) ?? noAuthorization());
}

/** GET /chats: page / page_size 0 (the default) = everything; keywords ignored when id or name is given. */
export async function listChats(e: Engine, ctx: Ctx, q: P): Promise<{ chats: Record<string, unknown>[]; total: number }> {
  const page = intArg(q.page, 0);
  const size = intArg(q.page_size, 0);
  const id = q.id ? pyStr(q.id) : '';
  const name = q.name ? pyStr(q.name) : '';
  const keywords = id || name ? '' : pyStr(q.keywords ?? '');
  const desc = pyStr(q.desc ?? 'true').toLowerCase() !== 'false';
  const orderby = orderColumn('Dialog', q.orderby, 'create_time');
  const authorized = new Set([ctx.tenantId, ctx.userId]);
  let owners = [ctx.tenantId];
  if (q.owner_ids !== undefined && q.owner_ids !== null && q.owner_ids !== '') {
    const asked = (Array.isArray(q.owner_ids) ? q.owner_ids : [q.owner_ids]).map((x) => pyStr(x));
    if (asked.some((o) => !authorized.has(o))) throw new ApiError(RetCode.OPERATING_ERROR, 'Only authorized owner_ids can be queried.');
    // The local user and its tenant are one owner.
    owners = [ctx.tenantId];
  }
  const { total, rows } = await e.store.chats.list({
    tenantIds: owners,
    ...(id ? { id } : {}),
    ...(name ? { name } : {}),
    ...(keywords ? { keywords: keywords.toLowerCase() } : {}),
    orderby: orderby as ChatListQuery['orderby'], desc,
    ...(page && size ? { page: paginate(page, size) } : {}),
  });
  return { chats: await chatsToWire(e, rows), total };
}

function duplicates(ids: unknown[], kind: string): { unique: unknown[]; messages: string[] } {
  const count = new Map<unknown, number>();
  for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
  return { unique: [...count.keys()], messages: [...count].filter(([, n]) => n > 1).map(([id]) => `Duplicate ${kind} ids: ${pyStr(id)}`) };
}

/** Soft delete (status '0'); sessions stay, as in RAGFlow. */
export async function deleteChats(e: Engine, ctx: Ctx, req: P): Promise<Record<string, unknown> | true> {
  if (!req || Object.keys(req).length === 0) return {};
  let ids = req.ids as unknown[] | null | undefined;
  if (!ids || (Array.isArray(ids) && ids.length === 0)) {
    if (req.delete_all !== true) return {};
    ids = await e.store.chats.liveIds(ctx.tenantId);
    if (!ids.length) return {};
  }
  if (!Array.isArray(ids)) ids = [ids];
  const { unique, messages } = duplicates(ids, 'chat');
  const errors: string[] = [];
  let success = 0;
  // One transaction; an id that is not a string is no chat.
  const deleted = await e.store.chats.softDelete(ctx.tenantId, unique.map((id) => (typeof id === 'string' ? id : '')), nowMs());
  unique.forEach((id, i) => {
    if (deleted[i]) success++;
    else errors.push(`Chat(${pyStr(id)}) not found.`);
  });
  const all = [...errors, ...messages];
  if (all.length) {
    if (success > 0) return withMessage({ success_count: success, errors: all }, `Partially deleted ${success} chats with ${all.length} errors`);
    dataError(all.join('; '));
  }
  return { success_count: success };
}

// ---------------------------------------------------------------- sessions

export async function createSession(e: Engine, ctx: Ctx, chatId: string, req: P): Promise<Record<string, unknown>> {
  const chat = (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  const raw = req.name === undefined ? 'New session' : req.name;
  if (typeof raw !== 'string' || !raw.trim()) dataError('`name` can not be empty.');
  const name = [...(raw as string).trim()].slice(0, 255).join('');
  const prologue = String((JSON.parse(chat.prompt_config) as P).prologue ?? '');
  const t = nowMs();
  const row: SessionRow = {
    id: newId(),
    chat_id: chat.id,
    name,
    user_id: typeof req.user_id === 'string' && req.user_id ? req.user_id : ctx.userId,
    create_time: t,
    update_time: t,
  };
  await e.store.chats.createSession(row, [{ role: 'assistant', content: prologue }], { inserted: 'sessions.create:session-inserted', committed: 'sessions.create:committed' });
  return sessionToWire(e, row);
}

export async function listSessions(e: Engine, ctx: Ctx, chatId: string, q: P): Promise<Record<string, unknown>[]> {
  (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  const page = intArg(q.page, 1);
  const size = intArg(q.page_size, 30);
  const desc = pyStr(q.desc ?? 'true').toLowerCase() !== 'false';
  const orderby = orderColumn('Conversation', q.orderby, 'create_time');
  const limits = size > 0 ? paginate(page, size) : undefined;
  const rows = await e.store.chats.listSessions({
    chatId,
    ...(q.id ? { id: pyStr(q.id) } : {}),
    ...(q.name ? { name: pyStr(q.name) } : {}),
    ...(q.user_id ? { userId: pyStr(q.user_id) } : {}),
    orderby: orderby as SessionListQuery['orderby'], desc,
    ...(limits ? { page: limits } : {}),
  });
  if (size === 0) return []; // RAGFlow runs the query, then answers nothing for page_size 0
  return sessionsToWire(e, rows);
}

export async function getSessionOp(e: Engine, ctx: Ctx, chatId: string, sessionId: string): Promise<Record<string, unknown>> {
  const chat = (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  const s = (await getSession(e, sessionId)) ?? dataError('Session not found!');
  if (s.chat_id !== chatId) dataError('Session does not belong to this chat!');
  return { ...(await sessionToWire(e, s!)), avatar: chat.icon };
}

export async function updateSession(e: Engine, ctx: Ctx, chatId: string, sessionId: string, req: P): Promise<Record<string, unknown>> {
  (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  const s = await getSession(e, sessionId);
  if (!s || s.chat_id !== chatId) dataError('Session not found!');
  if ('message' in req || 'messages' in req) dataError('`messages` cannot be changed.');
  if ('reference' in req) dataError('`reference` cannot be changed.');
  let name = s!.name;
  if (req.name !== undefined && req.name !== null) {
    if (typeof req.name !== 'string' || !req.name.trim()) dataError('`name` can not be empty.');
    name = [...(req.name as string).trim()].slice(0, 255).join('');
  }
  await e.store.chats.renameSession(s!.id, name, nowMs());
  return sessionToWire(e, (await getSession(e, s!.id))!);
}

export async function deleteSessions(e: Engine, ctx: Ctx, chatId: string, req: P): Promise<Record<string, unknown> | true> {
  (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  if (!req || Object.keys(req).length === 0) return {};
  let ids = req.ids as unknown[] | null | undefined;
  if (!ids || (Array.isArray(ids) && ids.length === 0)) {
    if (req.delete_all !== true) return {};
    ids = await e.store.chats.sessionIds(chatId);
    if (!ids.length) return {};
  }
  if (!Array.isArray(ids)) ids = [ids];
  const { unique, messages } = duplicates(ids, 'session');
  const errors: string[] = [];
  let success = 0;
  // One transaction; an id that is not a string is no session.
  const deleted = await e.store.chats.deleteSessions(chatId, unique.map((id) => (typeof id === 'string' ? id : '')));
  unique.forEach((id, i) => {
    if (deleted[i]) success++;
    else errors.push(`The chat doesn't own the session ${pyStr(id)}`);
  });
  const all = [...errors, ...messages];
  if (all.length) {
    if (success > 0) return withMessage({ success_count: success, errors: all }, `Partially deleted ${success} sessions with ${all.length} errors`);
    dataError(all.join('; '));
  }
  return true;
}


/** `DELETE /chats/{chat_id}` (chat_api.delete_chat): one chat, soft-deleted as the bulk delete does; `data: true`. */
export async function deleteChat(e: Engine, ctx: Ctx, chatId: string): Promise<true> {
  (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  await e.store.chats.softDelete(ctx.tenantId, [chatId], nowMs());
  return true;
}

/** The session of a message route: the caller's chat (109 otherwise) and its session (102 `Session not found!`). */
async function chatSession(e: Engine, ctx: Ctx, chatId: string, sessionId: string): Promise<SessionRow> {
  (await ownedChat(e, ctx, chatId)) ?? noAuthorization();
  const s = await getSession(e, sessionId);
  if (!s || s.chat_id !== chatId) dataError('Session not found!');
  return s!;
}

/**
 * `DELETE /chats/{chat_id}/sessions/{session_id}/messages/{msg_id}`: removes a question and its
 * answer (they share the id; the answer's reference goes with it); answers the session. An id
 * that is no question's: nothing changes. RAGFlow asserts the answer follows its question: a
 * question left without one is 100 `AssertionError()` / `IndexError('list index out of range')`.
 */
export async function deleteSessionMessage(e: Engine, ctx: Ctx, chatId: string, sessionId: string, messageId: string): Promise<Record<string, unknown>> {
  const s = await chatSession(e, ctx, chatId, sessionId);
  const r = await e.store.chats.deleteExchange(s.id, messageId, nowMs());
  if (r === 'unanswered') throw new ApiError(RetCode.EXCEPTION_ERROR, "IndexError('list index out of range')");
  if (r === 'mismatched') throw new ApiError(RetCode.EXCEPTION_ERROR, 'AssertionError()');
  return sessionToWire(e, (await getSession(e, s.id))!);
}

/**
 * `PUT …/messages/{msg_id}/feedback {thumbup: bool, feedback?}`: marks an answer liked or not (a
 * dislike keeps the `feedback` text); answers the session. ragloom does not reweigh the cited
 * chunks as RAGFlow's chunk feedback does.
 */
export async function messageFeedback(e: Engine, ctx: Ctx, chatId: string, sessionId: string, messageId: string, req: P): Promise<Record<string, unknown>> {
  const s = await chatSession(e, ctx, chatId, sessionId);
  if (typeof req.thumbup !== 'boolean') dataError('thumbup must be a boolean');
  await e.store.chats.rateAnswer(s.id, messageId, req.thumbup as boolean, req.feedback);
  return sessionToWire(e, (await getSession(e, s.id))!);
}

/**
 * Agents (canvas DSL), their versions and their sessions: RAGFlow's `/agents` routes (reference
 * §10; agent_api.py and bot_api.py of v0.25.6) with its checks in its order, codes and messages.
 *
 * ragloom adds, before anything is written: the DSL must be runnable here (`validateDsl`: 101
 * naming what cannot run), a title is unique per owner and category on update too (RAGFlow checks
 * it on create only), `permission` / `description` / `avatar` / `canvas_type` / `tags` are
 * type-checked (101). Deleting an agent deletes its versions and sessions (RAGFlow leaves them).
 */
import type { Engine, Ctx } from '../core/index.js';
import {
  accessibleAgent, ownedAgent, agentTitleTaken, userNickname, joinedTenants, agentToWire, agentListItems,
  latestVersionTitle, agentDslForRun, buildVersionTitle, getVersion, versionToWire, prologueOf, sessionDslFrom,
  getAgentSession, insertAgentSession, agentSessionsToWire, agentSessionRecord, type AgentRow,
} from '../core/agents.js';
import { validateDsl } from '../agent/catalog.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { toNumber } from './validate.js';
import { orderColumn, paginate } from './listing.js';
import { isPlainObject, newId, nowMs } from '../util/index.js';
import type { AgentListQuery, AgentSessionListQuery } from '../store/index.js';

type P = Record<string, unknown>;

const argError = (message: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, message);
};
/** RAGFlow's `get_data_error_result` (code 102). */
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
const operatingError = (message: string): never => {
  throw new ApiError(RetCode.OPERATING_ERROR, message);
};
const noAccess = (): never => operatingError('Make sure you have permission to access the agent.');

const CATEGORIES = ['agent_canvas', 'dataflow_canvas'];

/** Python's truthiness (`bool(x)`), as RAGFlow reads `release`. */
function pyTruthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  return true;
}

/** Python's type name of a JSON value (for the repr of RAGFlow's unguarded `.strip()`). */
function pyType(v: unknown): string {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  if (isPlainObject(v)) return 'dict';
  return typeof v;
}

/** `title.strip()`: a non-string fails as RAGFlow's does (code 100, the AttributeError's repr). */
function stripTitle(v: unknown): string {
  if (typeof v !== 'string') throw new ApiError(RetCode.EXCEPTION_ERROR, `AttributeError("'${pyType(v)}' object has no attribute 'strip'")`);
  return v.trim();
}

/** RAGFlow's `normalize_dsl`: a JSON string is parsed; the result must be a JSON object. */
function normalizeDsl(v: unknown): P {
  let dsl = v;
  if (typeof dsl === 'string') {
    try {
      dsl = JSON.parse(dsl);
    } catch {
      argError('Invalid DSL JSON string.');
    }
  }
  if (!isPlainObject(dsl)) return argError('DSL must be a JSON object.');
  try {
    return JSON.parse(JSON.stringify(dsl)) as P;
  } catch {
    return argError('DSL is not JSON-serializable.');
  }
}

/** The DSL must run here: 101 naming every component, tool or reference that cannot. */
function checkRunnable(dsl: P): void {
  const why = validateDsl(dsl);
  if (why) argError(why);
}

/** RAGFlow's `update_tags` normalisation: comma-free, ≤ 64 chars each, case-insensitive unique, ≤ 512 chars joined. */
function normalizeTags(v: unknown): string {
  if (v === undefined || v === null) return '';
  let list: string[];
  if (Array.isArray(v)) list = v.filter((t) => t !== null && t !== undefined && pyStr(t).trim()).map((t) => pyStr(t).replace(/,/g, ' ').trim());
  else if (typeof v === 'string') list = v.split(',').map((t) => t.trim()).filter(Boolean);
  else return argError('`tags` should be a list of strings or a comma-separated string.');
  const seen = new Set<string>();
  const out: string[] = [];
  let used = 0;
  for (let t of list) {
    t = t.slice(0, 64);
    if (seen.has(t.toLowerCase())) continue;
    const extra = t.length + (out.length ? 1 : 0);
    if (used + extra > 512) break;
    seen.add(t.toLowerCase());
    out.push(t);
    used += extra;
  }
  return out.join(',');
}

/** The optional string fields of an agent, checked (ragloom; RAGFlow stores what it is sent). */
function optionalFields(req: P): Partial<AgentRow> {
  const set: Partial<AgentRow> = {};
  for (const k of ['avatar', 'description', 'canvas_type'] as const) {
    if (!(k in req)) continue;
    if (typeof req[k] !== 'string') argError(`\`${k}\` should be a string.`);
    set[k] = req[k] as string;
  }
  if ('permission' in req) {
    if (req.permission !== 'me' && req.permission !== 'team') argError("`permission` should be 'me' or 'team'.");
    set.permission = req.permission as string;
  }
  if ('canvas_category' in req && req.canvas_category) {
    if (!CATEGORIES.includes(req.canvas_category as string)) argError("`canvas_category` should be 'agent_canvas' or 'dataflow_canvas'.");
    set.canvas_category = req.canvas_category as string;
  }
  if ('tags' in req) set.tags = normalizeTags(req.tags);
  return set;
}

/** Request keys whose value is None are dropped, as RAGFlow does first. */
const dropNull = (req: P): P => Object.fromEntries(Object.entries(req ?? {}).filter(([, v]) => v !== null && v !== undefined));

// ---------------------------------------------------------------- agents

/**
 * POST /agents (RAGFlow's create_agent): 101 `No DSL data in request.` / `Invalid DSL JSON string.` /
 * `DSL must be a JSON object.` / `No title in request.`; 102 `{title} already exists.` (same owner,
 * title and category); then 101 when the DSL cannot run here. The agent and its first version are
 * written in one transaction.
 */
export async function createAgent(e: Engine, ctx: Ctx, raw: P): Promise<Record<string, unknown>> {
  const req = dropNull(raw);
  const release = pyTruthy(req.release ?? '');
  if (req.dsl === undefined) argError('No DSL data in request.');
  const dsl = normalizeDsl(req.dsl);
  if (req.title === undefined) argError('No title in request.');
  const title = stripTitle(req.title);
  const fields = optionalFields(req);
  const category = fields.canvas_category ?? 'agent_canvas';
  if (await agentTitleTaken(e, ctx.tenantId, title, category)) dataError(`${title} already exists.`);
  checkRunnable(dsl);
  const t = nowMs();
  const row: AgentRow = {
    id: newId(),
    tenant_id: ctx.tenantId,
    title,
    avatar: fields.avatar ?? '',
    description: fields.description ?? null,
    permission: fields.permission ?? 'me',
    release: release ? 1 : 0,
    canvas_type: fields.canvas_type ?? '',
    canvas_category: category,
    tags: fields.tags ?? '',
    dsl: JSON.stringify(dsl),
    create_time: t,
    update_time: t,
  };
  // The agent and its first version in one transaction, which checks the title again.
  const versionTitle = buildVersionTitle(await userNickname(e, ctx.userId), title, t);
  if (!(await e.store.agents.create(row, { dsl, title: versionTitle, release, time: t, newId: newId() }))) dataError(`${title} already exists.`);
  return agentToWire(e, row);
}


/** A query value RAGFlow splits on commas (`owner_ids`, `tags`); arrays (local calls) are taken as they are. */
function csv(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const parts = Array.isArray(v) ? v.flatMap((x) => pyStr(x).split(',')) : pyStr(v).trim().split(',');
  return parts.map((x) => x.trim()).filter(Boolean);
}

const intParam = (v: unknown, d: number): number => {
  if (v === undefined || v === null || v === '') return d;
  const n = toNumber(v);
  if (!Number.isFinite(n)) throw new ApiError(RetCode.EXCEPTION_ERROR, `ValueError("invalid literal for int() with base 10: '${pyStr(v)}'")`);
  return Math.trunc(n);
};

// Substring matches use instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
const needle = (s: string) => s.toLowerCase();

/**
 * GET /agents (RAGFlow's list_agents): the caller's agents and the `team` agents of the tenants it
 * belongs to; page / page_size 0 (the default) = all; keywords (title, case-insensitive),
 * canvas_category, tags (any of them), owner_ids (103 `Only authorized owner_ids can be queried.`).
 * → `{canvas, total}`.
 */
export async function listAgents(e: Engine, ctx: Ctx, q: P): Promise<{ canvas: Record<string, unknown>[]; total: number }> {
  const page = intParam(q.page, 0);
  const size = intParam(q.page_size, 0);
  const orderby = orderColumn('UserCanvas', q.orderby, 'create_time');
  const desc = q.desc === undefined ? true : typeof q.desc === 'boolean' ? q.desc : pyStr(q.desc).toLowerCase() !== 'false';
  const joined = await joinedTenants(e, ctx);
  // The caller's user id stands for its own tenant too (RAGFlow's tenant id is its owner's user id).
  const asked = csv(q.owner_ids).map((o) => (o === ctx.userId ? ctx.tenantId : o));
  if (asked.some((o) => !joined.includes(o))) operatingError('Only authorized owner_ids can be queried.');
  const owners = asked.length ? [...new Set(asked)] : joined;
  const keywords = typeof q.keywords === 'string' ? q.keywords : '';
  const tags = csv(q.tags);
  const { total, rows } = await e.store.agents.list({
    tenantIds: owners, ownTenantId: ctx.tenantId,
    ...(keywords ? { keywords: needle(keywords) } : {}),
    ...(q.canvas_category ? { category: pyStr(q.canvas_category) } : {}),
    // Each a whole item of the comma-separated list ('ml' does not match 'ml-ops').
    ...(tags.length ? { tags: tags.map((t) => needle(t)) } : {}),
    orderby: orderby as AgentListQuery['orderby'], desc,
    ...(page && size ? { page: paginate(page, size) } : {}),
  });
  return { canvas: await agentListItems(e, rows), total };
}

/** GET /agents/{id}: 102 `canvas not found.` when missing or not accessible; with `last_publish_time`. */
export async function getAgentOp(e: Engine, ctx: Ctx, agentId: string): Promise<Record<string, unknown>> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? dataError('canvas not found.');
  const released = await e.store.agents.lastPublished(a.id);
  return { ...(await agentToWire(e, a)), last_publish_time: released ?? null };
}

/**
 * PUT /agents/{id} (RAGFlow's update_agent) → true. 103 without access; the DSL normalised and
 * checked as on create; a new title must not clash (102 `{title} already exists.`). `release` is
 * `bool(release)` of the request (absent = false) and is written on every update, as RAGFlow does;
 * with a dsl, a version is saved (`save_or_replace_latest`, titled with the caller's nickname).
 */
export async function updateAgent(e: Engine, ctx: Ctx, agentId: string, raw: P): Promise<true> {
  const cur = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  const req = dropNull(raw);
  const release = pyTruthy(req.release ?? '');
  const dsl = req.dsl !== undefined ? normalizeDsl(req.dsl) : undefined;
  const set: Partial<AgentRow> = { ...optionalFields(req), release: release ? 1 : 0 };
  if (req.title !== undefined) set.title = stripTitle(req.title);
  const category = set.canvas_category ?? cur.canvas_category;
  const title = set.title ?? cur.title;
  const titleChecked = set.title !== undefined || category !== cur.canvas_category;
  if (titleChecked && (await agentTitleTaken(e, cur.tenant_id, title, category, cur.id))) {
    dataError(`${title} already exists.`);
  }
  if (dsl) {
    checkRunnable(dsl);
    set.dsl = JSON.stringify(dsl);
  }
  const t = nowMs();
  set.update_time = t;
  // The agent and, with a dsl, a version in one transaction, which checks a changed title again.
  const version = dsl ? { dsl, title: buildVersionTitle(await userNickname(e, ctx.userId), set.title || cur.title, t), release, time: t, newId: newId() } : null;
  if (!(await e.store.agents.update(cur.id, set, version, titleChecked ? { title, category } : null))) dataError(`${title} already exists.`);
  return true;
}

/** DELETE /agents/{id}: the owner only (103 `Only the owner of the agent is authorized for this operation.`); versions and sessions go too. */
export async function deleteAgent(e: Engine, ctx: Ctx, agentId: string): Promise<true> {
  const a = (await ownedAgent(e, ctx, agentId)) ?? operatingError('Only the owner of the agent is authorized for this operation.');
  await e.store.agents.delete(a.id); // its versions, sessions and their messages too
  return true;
}

/** GET /agents/{id}/versions: newest first (by update_time), without their dsl. */
export async function listVersions(e: Engine, ctx: Ctx, agentId: string): Promise<Record<string, unknown>[]> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  return (await e.store.agents.versions(a.id)).map((v) => versionToWire(v));
}

/** GET /agents/{id}/versions/{version_id}: the whole version; 102 `Version not found.`. */
export async function getVersionOp(e: Engine, ctx: Ctx, agentId: string, versionId: string): Promise<Record<string, unknown>> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  const v = await getVersion(e, versionId);
  if (!v || v.agent_id !== a.id) dataError('Version not found.');
  return versionToWire(v!, true);
}

// ---------------------------------------------------------------- sessions

/**
 * POST /agents/{id}/sessions (RAGFlow's create_agent_session): the draft canvas, or with `release`
 * the newest published version (102 `No available published version`), reset for a new session;
 * the first message is the Begin prologue. `user_id` defaults to the caller.
 */
export async function createAgentSession(e: Engine, ctx: Ctx, agentId: string, req: P): Promise<Record<string, unknown>> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  const userId = pyTruthy(req.user_id) ? pyStr(req.user_id) : ctx.userId;
  const release = pyTruthy(req.release ?? false);
  const dsl = sessionDslFrom(await agentDslForRun(e, a, release));
  presetBeginInputs(dsl, req);
  const name = req.name === undefined || req.name === null ? '' : pyStr(req.name);
  const message = [{ role: 'assistant', content: prologueOf(dsl) }];
  const versionTitle = await latestVersionTitle(e, a.id, release);
  const id = newId();
  await insertAgentSession(e, { id, agent_id: a.id, user_id: userId, name, dsl, messages: message, version_title: versionTitle, source: 'agent' });
  // The conversation as RAGFlow returns it (normalised; `reference` removed).
  return { id, name, user_id: userId, exp_user_id: userId, message, source: 'agent', dsl, version_title: versionTitle, agent_id: a.id };
}

/**
 * Values for the Begin form given when the session is created (api-map `createSession({ …begin
 * inputs })`): `inputs: {field: {value}}` or the field names themselves. They answer the form on
 * every run of the session unless that run's `inputs` answers it again. Other keys are ignored.
 */
function presetBeginInputs(dsl: Record<string, unknown>, req: P): void {
  const begin = (dsl.components as Record<string, { obj?: { params?: { inputs?: Record<string, P> } } }> | undefined)?.begin;
  const form = begin?.obj?.params?.inputs;
  if (!form || typeof form !== 'object') return;
  const given = req.inputs && typeof req.inputs === 'object' && !Array.isArray(req.inputs) ? (req.inputs as P) : {};
  for (const [k, decl] of Object.entries(form)) {
    if (!decl || typeof decl !== 'object') continue;
    const raw = k in given ? given[k] : k in req && !['name', 'user_id', 'release', 'inputs', 'agent_id'].includes(k) ? req[k] : undefined;
    if (raw === undefined) continue;
    decl.value = raw && typeof raw === 'object' && !Array.isArray(raw) && 'value' in (raw as P) ? (raw as P).value : raw;
  }
}


/** A date bound of the sessions list (RAGFlow's `_normalize_query_date`) as epoch ms, local time. */
function dateBound(v: string, end: boolean): number {
  let ms: number;
  if (v.includes('T')) ms = Date.parse(v);
  else if (v.length === 10) ms = new Date(`${v}T${end ? '23:59:59' : '00:00:00'}`).getTime();
  else ms = new Date(v.replace(' ', 'T')).getTime();
  if (!Number.isFinite(ms)) throw new ApiError(RetCode.EXCEPTION_ERROR, `ValueError("Invalid isoformat string: '${v}'")`);
  return end ? ms + 999 : ms;
}

/**
 * GET /agents/{id}/sessions (RAGFlow's list_agent_sessions) → `{data, total}` (the route puts
 * `total` next to `data`). page 1, page_size 30, orderby update_time, desc; filters id, user_id,
 * keywords (message text, case-insensitive), from_date / to_date; `dsl: false` leaves the canvas out.
 * With `exp_user_id`: that user's sessions as `{id, name}`, newest first.
 */
export async function listAgentSessions(e: Engine, ctx: Ctx, agentId: string, q: P): Promise<{ data: Record<string, unknown>[]; total: number }> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  const page = intParam(q.page, 1);
  const size = intParam(q.page_size, 30);
  if (q.exp_user_id) {
    const names = await e.store.agents.sessionNames(a.id, pyStr(q.exp_user_id));
    return { data: names, total: names.length };
  }
  const flag = (v: unknown) => (v === undefined ? true : typeof v === 'boolean' ? v : !['false', 'False'].includes(pyStr(v)));
  const desc = flag(q.desc);
  const includeDsl = flag(q.dsl);
  const orderby = orderColumn('API4Conversation', q.orderby, 'update_time');
  const dateColumn = orderby.startsWith('update_') ? 'update_time' : 'create_time';
  // page_size 0: the total alone; API4Conversation.get_list pages whatever else it is given (page
  // 0 is page 1; a negative one fails).
  const limits = size === 0 ? { limit: 0, offset: 0 } : paginate(page, size);
  const { total, rows } = await e.store.agents.listSessions({
    agentId: a.id,
    ...(q.id ? { id: pyStr(q.id) } : {}),
    ...(q.user_id ? { userId: pyStr(q.user_id) } : {}),
    ...(typeof q.keywords === 'string' && q.keywords ? { keywords: needle(q.keywords) } : {}),
    dateColumn,
    ...(typeof q.from_date === 'string' && q.from_date ? { from: dateBound(q.from_date, false) } : {}),
    ...(typeof q.to_date === 'string' && q.to_date ? { to: dateBound(q.to_date, true) } : {}),
    orderby: orderby as AgentSessionListQuery['orderby'], desc,
    page: limits,
  });
  if (size === 0) return { data: [], total };
  return { data: await agentSessionsToWire(e, rows, includeDsl), total };
}

/**
 * GET /agents/{id}/sessions/{session_id}: the stored record (RAGFlow's `conv.to_dict()`); 102
 * `Session not found!`, also for a session of another agent (RAGFlow does not check that).
 */
export async function getAgentSessionOp(e: Engine, ctx: Ctx, agentId: string, sessionId: string): Promise<Record<string, unknown>> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  const s = await getAgentSession(e, sessionId);
  if (!s || s.agent_id !== a.id) dataError('Session not found!');
  return agentSessionRecord(e, s!);
}

function duplicates(ids: unknown[]): { unique: unknown[]; messages: string[] } {
  const count = new Map<unknown, number>();
  for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
  return { unique: [...count.keys()], messages: [...count].filter(([, n]) => n > 1).map(([id]) => `Duplicate session ids: ${pyStr(id)}`) };
}

/**
 * DELETE /agents/{id}/sessions `{ids | delete_all}` (RAGFlow's bot_api.delete_agent_session): the
 * owner only (102 `You don't own the agent {id}`). Unknown ids: `The agent doesn't own the session
 * {id}`; duplicates: `Duplicate session ids: {id}`. When some were deleted the answer is
 * `{success_count, errors}`, else 102 with the messages; all deleted → nothing (`{"code": 0}`).
 */
export async function deleteAgentSessions(e: Engine, ctx: Ctx, agentId: string, req: P): Promise<Record<string, unknown> | undefined> {
  const a = (await ownedAgent(e, ctx, agentId)) ?? dataError(`You don't own the agent ${agentId}`);
  if (!req || Object.keys(req).length === 0) return undefined;
  let ids = req.ids as unknown;
  if (!pyTruthy(ids)) {
    if (req.delete_all !== true) return undefined;
    ids = await e.store.agents.sessionIds(a.id);
    if (!(ids as string[]).length) return undefined;
  }
  const list = Array.isArray(ids) ? ids : [ids];
  const { unique, messages } = duplicates(list);
  const errors: string[] = [];
  let success = 0;
  // One transaction; an id that is not a string deletes nothing.
  const deleted = await e.store.agents.deleteSessions(a.id, unique.map((id) => (typeof id === 'string' ? id : '')));
  unique.forEach((id, i) => {
    if (deleted[i]) success++;
    else errors.push(`The agent doesn't own the session ${pyStr(id)}`);
  });
  if (errors.length) {
    if (success > 0) return { success_count: success, errors };
    dataError(errors.join('; '));
  }
  if (messages.length) {
    if (success > 0) return { success_count: success, errors: messages };
    dataError(messages.join(';'));
  }
  return undefined;
}

/**
 * DELETE /agents/{id}/sessions/{session_id} (agent_api.delete_agent_session_item): 103 without
 * access; `data` is how many sessions were deleted (1, or 0 for an id the agent has not).
 */
export async function deleteAgentSession(e: Engine, ctx: Ctx, agentId: string, sessionId: string): Promise<number> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  return (await e.store.agents.deleteSessions(a.id, [sessionId]))[0] ? 1 : 0;
}

/** GET /agents/tags[?canvas_category]: `[{tag, count}]` over the agents the caller can see, most used first. */
export async function listAgentTags(e: Engine, ctx: Ctx, q: P): Promise<Array<{ tag: string; count: number }>> {
  const joined = await joinedTenants(e, ctx);
  const lists = await e.store.agents.tagLists({ tenantIds: joined, ownTenantId: ctx.tenantId, ...(q.canvas_category ? { category: pyStr(q.canvas_category) } : {}) });
  const counts = new Map<string, number>();
  for (const tags of lists) {
    for (const t of tags.split(',').map((x) => x.trim()).filter(Boolean)) counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([tag, count]) => ({ tag, count }));
}

/** PUT /agents/{id}/tags {tags}: replaces an agent's tags (RAGFlow's normalisation); 103 `Agent not found or no permission.`. */
export async function updateAgentTags(e: Engine, ctx: Ctx, agentId: string, req: P): Promise<true> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? operatingError('Agent not found or no permission.');
  await e.store.agents.update(a.id, { tags: normalizeTags(req.tags ?? ''), update_time: nowMs() }, null, null);
  return true;
}

/**
 * GET /agents/{id}/logs/{message_id}: a run's logs. RAGFlow keeps them in Redis for a while;
 * ragloom keeps none (a run's trace comes back with the answer: `return_trace`), so `{}` — RAGFlow's
 * answer for a message without logs.
 */
export async function agentLogs(e: Engine, ctx: Ctx, agentId: string): Promise<Record<string, never>> {
  (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  return {};
}

/** POST /agents/{id}/reset: the agent's canvas state cleared as a new session's is (RAGFlow's `canvas.reset()`); the canvas. */
export async function resetAgent(e: Engine, ctx: Ctx, agentId: string): Promise<Record<string, unknown>> {
  const a = (await accessibleAgent(e, ctx, agentId)) ?? noAccess();
  const dsl = sessionDslFrom(JSON.parse(a.dsl));
  await e.store.agents.update(a.id, { dsl: JSON.stringify(dsl), update_time: nowMs() }, null, null);
  return dsl;
}

/**
 * GET /agents/{id}/webhook/logs?since_ts&webhook_id: the events of webhook runs after `since_ts`.
 * ragloom runs no agents on webhooks, so there are none: RAGFlow's answer for that (`events: []`).
 * The owner only (102 `Canvas not found.`).
 */
export async function webhookLogs(e: Engine, ctx: Ctx, agentId: string, q: P): Promise<P> {
  (await ownedAgent(e, ctx, agentId)) ?? dataError('Canvas not found.');
  // The query string's value (a string); an in-process caller may pass a number.
  const raw = typeof q.since_ts === 'number' ? q.since_ts : typeof q.since_ts === 'string' && q.since_ts.trim() ? Number(q.since_ts) : NaN;
  const since = Number.isFinite(raw) ? raw : null;
  return { webhook_id: null, events: [], next_since_ts: since ?? Date.now() / 1000, finished: false };
}

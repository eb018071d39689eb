/**
 * Agents as stored (tables `agent`, `agent_version`, `agent_session`, `agent_message`; migration
 * 11) and their wire shapes: RAGFlow's user_canvas, user_canvas_version and api_4_conversation
 * as its REST interface returns them (api/apps/restful_apis/agent_api.py, v0.25.6).
 *
 * Helpers over the store (src/store AgentStore) only: no validation of requests, no HTTP. The
 * operations are in src/api/agents.ts; the agent completion (src/api) reads sessions and saves
 * turns with the helpers below.
 */
import type { Engine, Ctx } from './engine.js';
import { AskError } from './ask.js';
import type { AgentRow, AgentSessionRow, AgentTurnMessage, AgentVersionRow } from '../store/index.js';
import { formatDateTime, isPlainObject, jsonEqual, nowMs } from '../util/index.js';

type P = Record<string, unknown>;

export type { AgentRow, AgentVersionRow, AgentSessionRow, AgentTurnMessage };
export { jsonEqual };
export { UNRELEASED_VERSIONS_KEPT } from '../store/index.js';

/** RAGFlow's BeginParam default prologue. */
export const DEFAULT_AGENT_PROLOGUE = "Hi! I'm your smart assistant. What can I do for you?";

const parse = <T>(s: string | null | undefined, dflt: T): T => {
  if (s === null || s === undefined) return dflt;
  try {
    return JSON.parse(s) as T;
  } catch {
    return dflt;
  }
};

// ---------------------------------------------------------------- agents

export async function getAgent(e: Engine, id: unknown): Promise<AgentRow | undefined> {
  if (typeof id !== 'string' || !id) return undefined;
  return e.store.agents.get(id);
}

/** The tenants the caller belongs to, its own first (RAGFlow's `UserTenantService.query(user_id=)`). */
export function joinedTenants(e: Engine, ctx: Ctx): Promise<string[]> {
  return e.store.accounts.joinedTenants(ctx);
}

/**
 * RAGFlow's `UserCanvasService.accessible`: the caller's own agent, or a `team` agent of a tenant
 * the caller is a member of.
 */
export async function accessibleAgent(e: Engine, ctx: Ctx, id: unknown): Promise<AgentRow | undefined> {
  const a = await getAgent(e, id);
  if (!a) return undefined;
  if (a.tenant_id === ctx.tenantId) return a;
  return a.permission === 'team' && (await joinedTenants(e, ctx)).includes(a.tenant_id) ? a : undefined;
}

/** The caller's own agent (RAGFlow's `UserCanvasService.query(user_id=tenant_id, id=agent_id)`). */
export async function ownedAgent(e: Engine, ctx: Ctx, id: unknown): Promise<AgentRow | undefined> {
  const a = await getAgent(e, id);
  return a && a.tenant_id === ctx.tenantId ? a : undefined;
}

/** Another agent of the owner with this title in this category (titles compare case-insensitively). */
export function agentTitleTaken(e: Engine, tenantId: string, title: string, category: string, exceptId = ''): Promise<boolean> {
  return e.store.agents.titleTaken(tenantId, title, category, exceptId);
}

/** A user's nickname (the user id when unknown), as RAGFlow's `_get_user_nickname`. */
export async function userNickname(e: Engine, userId: string): Promise<string> {
  return (await e.store.accounts.nicknames([userId])).get(userId) || userId;
}

/**
 * The agent as GET /agents/{id} and POST /agents return it (RAGFlow's `get_by_canvas_id`: the
 * owner as `user_id`, its `nickname`, `tenant_avatar`), plus ragloom's `canvas_type`, `release`
 * and `tags`. `last_publish_time` is added by the get.
 */
export async function agentToWire(e: Engine, a: AgentRow): Promise<Record<string, unknown>> {
  const owners = await e.store.accounts.ownerNicknames([a.tenant_id]);
  return {
    id: a.id,
    avatar: a.avatar,
    title: a.title,
    dsl: parse<P>(a.dsl, {}),
    description: a.description,
    permission: a.permission,
    user_id: a.tenant_id,
    canvas_type: a.canvas_type,
    canvas_category: a.canvas_category,
    release: a.release === 1,
    tags: a.tags,
    nickname: owners.get(a.tenant_id) ?? null,
    // ragloom users have no avatar.
    tenant_avatar: null,
    create_time: a.create_time,
    create_date: formatDateTime(a.create_time),
    update_time: a.update_time,
    update_date: formatDateTime(a.update_time),
  };
}

/**
 * Items of GET /agents (RAGFlow's `get_by_tenant_ids` fields + `release_time`; no dsl), plus
 * `canvas_type` and `create_time`: the owners' nicknames and release times read in one batch each.
 */
export async function agentListItems(e: Engine, rows: AgentRow[]): Promise<Record<string, unknown>[]> {
  const owners = await e.store.accounts.ownerNicknames(rows.map((a) => a.tenant_id));
  const released = await e.store.agents.releaseTimes(rows.map((a) => a.id));
  return rows.map((a) => ({
    id: a.id,
    avatar: a.avatar,
    title: a.title,
    description: a.description,
    permission: a.permission,
    tenant_id: a.tenant_id,
    nickname: owners.get(a.tenant_id) ?? null,
    tenant_avatar: null,
    canvas_type: a.canvas_type,
    canvas_category: a.canvas_category,
    tags: a.tags,
    create_time: a.create_time,
    update_time: a.update_time,
    release_time: released.get(a.id) ?? null,
  }));
}

// ---------------------------------------------------------------- versions

/** The newest version (optionally the newest released one), or undefined. */
export function latestVersion(e: Engine, agentId: string, onlyReleased = false): Promise<AgentVersionRow | undefined> {
  return e.store.agents.latestVersion(agentId, onlyReleased);
}

/** RAGFlow's `get_latest_version_title`: the newest (released, with `release`) version's title, or null. */
export async function latestVersionTitle(e: Engine, agentId: string, release: boolean): Promise<string | null> {
  return (await latestVersion(e, agentId, release))?.title ?? null;
}

/**
 * The canvas a run starts from: the agent's draft, or with `release` the newest released
 * version's (RAGFlow's `get_agent_dsl_with_release`). 102 `No available published version`.
 */
export async function agentDslForRun(e: Engine, agent: AgentRow, release: boolean): Promise<Record<string, unknown>> {
  if (!release) return parse<P>(agent.dsl, {});
  const v = await latestVersion(e, agent.id, true);
  if (!v) throw new AskError(102, 'No available published version');
  return parse<P>(v.dsl, {});
}

/** RAGFlow's `build_version_title`: `<nickname>_<title>_<local time>`. */
export function buildVersionTitle(nickname: string, title: string, ms = nowMs()): string {
  return `${nickname.trim() || 'tenant'}_${title.trim() || 'agent'}_${formatDateTime(ms)}`;
}

export async function getVersion(e: Engine, id: unknown): Promise<AgentVersionRow | undefined> {
  if (typeof id !== 'string' || !id) return undefined;
  return e.store.agents.getVersion(id);
}

/** A version as GET /agents/{id}/versions lists it (RAGFlow's `list_by_canvas_id` fields), or with `full` its whole record. */
export function versionToWire(v: AgentVersionRow, full = false): Record<string, unknown> {
  const out: P = {
    id: v.id,
    user_canvas_id: v.agent_id,
    title: v.title,
    release: v.release === 1,
    create_time: v.create_time,
    create_date: formatDateTime(v.create_time),
    update_time: v.update_time,
    update_date: formatDateTime(v.update_time),
  };
  if (full) {
    out.description = v.description;
    out.dsl = parse<P>(v.dsl, {});
  }
  return out;
}

// ---------------------------------------------------------------- canvas state

/** The Begin component's prologue (RAGFlow's `canvas.get_prologue()`), or the default one. */
export function prologueOf(dsl: unknown): string {
  const begin = isPlainObject(dsl) && isPlainObject(dsl.components) ? dsl.components.begin : undefined;
  const obj = isPlainObject(begin) ? begin.obj : undefined;
  const params = isPlainObject(obj) ? obj.params : undefined;
  const p = isPlainObject(params) ? params.prologue : undefined;
  return p === undefined || p === null ? DEFAULT_AGENT_PROLOGUE : String(p);
}

/** What `reset()` makes of a `sys.*` value: the empty value of its Python type (a bool is an int). */
function emptyLike(v: unknown): unknown {
  if (typeof v === 'string') return '';
  if (typeof v === 'number' || typeof v === 'boolean') return 0;
  if (Array.isArray(v)) return [];
  if (isPlainObject(v)) return {};
  return null;
}

/** An `env.*` value after `reset()`: the variable's value, else the empty value of its declared type. */
function envDefault(variables: unknown, key: string): unknown {
  if (!isPlainObject(variables) || !Object.prototype.hasOwnProperty.call(variables, key)) return '';
  const variable = variables[key];
  const value = isPlainObject(variable) ? variable.value : undefined;
  if (value !== undefined && value !== null) return structuredClone(value);
  const type = isPlainObject(variable) && typeof variable.type === 'string' ? variable.type : '';
  if (type === 'number') return 0;
  if (type === 'boolean') return false;
  if (type === 'object') return {};
  if (type.startsWith('array')) return [];
  return '';
}

/** The value slots of a component's `inputs` / `outputs` emptied (RAGFlow's `ComponentBase.reset`). */
function clearValues(slots: unknown): void {
  if (!isPlainObject(slots)) return;
  for (const s of Object.values(slots)) if (isPlainObject(s)) s.value = null;
}

/**
 * A deep copy of an agent's canvas ready for a new session: RAGFlow's `canvas.reset()` then
 * `str(canvas)`. `path`, `history`, `retrieval` and `memory` emptied; every component's output and
 * input values null; `globals` as `Canvas.load` + `reset` leave them: the default `sys.*` keys
 * when there are none, every `sys.*` emptied by type (`''`, `0`, `[]`, `{}`), every `env.*` set
 * from `variables` (its value, else the empty value of its type). Other keys are kept.
 */
export function sessionDslFrom(dsl: unknown): Record<string, unknown> {
  const out: P = isPlainObject(dsl) ? structuredClone(dsl) : {};
  out.path = [];
  out.history = [];
  out.retrieval = [];
  out.memory = [];
  if (isPlainObject(out.components)) {
    for (const cpn of Object.values(out.components)) {
      const params = isPlainObject(cpn) && isPlainObject(cpn.obj) ? cpn.obj.params : undefined;
      if (!isPlainObject(params)) continue;
      clearValues(params.outputs);
      clearValues(params.inputs);
      if ('debug_inputs' in params) params.debug_inputs = {};
    }
  }
  const globals: P = isPlainObject(out.globals)
    ? out.globals
    : { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [], 'sys.date': '' };
  if (!('sys.history' in globals)) globals['sys.history'] = [];
  if (!('sys.date' in globals)) globals['sys.date'] = '';
  for (const k of Object.keys(globals)) {
    if (k.startsWith('sys.')) globals[k] = emptyLike(globals[k]);
    else if (k.startsWith('env.')) globals[k] = envDefault(out.variables, k.slice(4));
  }
  out.globals = globals;
  return out;
}

// ---------------------------------------------------------------- sessions

export async function getAgentSession(e: Engine, id: unknown): Promise<AgentSessionRow | undefined> {
  if (typeof id !== 'string' || !id) return undefined;
  return e.store.agents.getSession(id);
}

/** Stores a new session with its first messages (one transaction). `exp_user_id` = `user_id`, as RAGFlow sets it. */
export function insertAgentSession(e: Engine, s: {
  id: string; agent_id: string; user_id: string; name?: string; dsl: object; messages: AgentTurnMessage[];
  version_title: string | null; source?: string;
}): Promise<void> {
  return e.store.agents.createSession(s, nowMs());
}

/** A session's messages, oldest first, each with its stored reference when it has one. */
export async function agentSessionMessages(e: Engine, sessionId: string): Promise<AgentTurnMessage[]> {
  return (await e.store.agents.messages([sessionId])).get(sessionId)!;
}

/**
 * Saves one run of a session in ONE transaction: appends the messages, replaces the canvas state,
 * adds one round and the run's duration (RAGFlow's `append_message`), sets `errors` when given.
 * Returns false, writing nothing, when the session was deleted meanwhile.
 */
export function saveAgentTurn(e: Engine, sessionId: string, turn: { append: AgentTurnMessage[]; dsl: object; errors?: string; durationSec?: number }): Promise<boolean> {
  return e.store.agents.saveTurn(sessionId, turn, nowMs());
}

/** A reference chunk as `_normalize_agent_session` flattens it onto an answer. */
function referenceChunks(ref: unknown): Array<Record<string, unknown>> {
  if (!isPlainObject(ref)) return [];
  let chunks: unknown = 'chunks' in ref || 'doc_aggs' in ref ? ref.chunks : (ref.reference ?? ref.chunks);
  if (isPlainObject(chunks)) chunks = Object.values(chunks);
  if (!Array.isArray(chunks)) return [];
  const pick = (c: P, a: string, b: string) => (a in c ? c[a] : c[b]);
  return chunks.filter(isPlainObject).map((c) => ({
    id: pick(c, 'chunk_id', 'id'),
    content: pick(c, 'content_with_weight', 'content'),
    document_id: pick(c, 'doc_id', 'document_id'),
    document_name: pick(c, 'docnm_kwd', 'document_name'),
    dataset_id: pick(c, 'kb_id', 'dataset_id'),
    image_id: pick(c, 'image_id', 'img_id'),
    positions: pick(c, 'positions', 'position_int'),
  }));
}

/**
 * The sessions as GET /agents/{id}/sessions lists them (RAGFlow's `_normalize_agent_session` of
 * the conversation record): `agent_id`, messages without their `prompt`, each answer after the
 * prologue carrying its reference chunks; `dsl` left out when `includeDsl` is false. Their
 * messages are read in one batch.
 */
export async function agentSessionsToWire(e: Engine, rows: AgentSessionRow[], includeDsl = true): Promise<Record<string, unknown>[]> {
  const messages = await e.store.agents.messages(rows.map((s) => s.id));
  return rows.map((s) => agentSessionToWire(s, messages.get(s.id)!, includeDsl));
}

function agentSessionToWire(s: AgentSessionRow, messages: AgentTurnMessage[], includeDsl: boolean): Record<string, unknown> {
  const message = messages.map((m, i) => {
    const { prompt: _p, reference, ...rest } = m;
    const out: P = { ...rest };
    if (i !== 0 && m.role !== 'user' && reference !== undefined) out.reference = referenceChunks(reference);
    return out;
  });
  const out: P = { id: s.id, name: s.name, agent_id: s.agent_id, ...sessionFields(s), message };
  if (includeDsl) out.dsl = parse<P>(s.dsl, {});
  return out;
}

/** The columns both session shapes carry as they are. */
function sessionFields(s: AgentSessionRow): P {
  return {
    user_id: s.user_id, exp_user_id: s.exp_user_id, tokens: s.tokens, source: s.source, duration: s.duration, round: s.round,
    thumb_up: s.thumb_up, errors: s.errors, version_title: s.version_title,
    create_time: s.create_time, create_date: formatDateTime(s.create_time), update_time: s.update_time, update_date: formatDateTime(s.update_time),
  };
}

/**
 * The session record as GET /agents/{id}/sessions/{session_id} returns it (RAGFlow's
 * `conv.to_dict()`, not normalised: `dialog_id`, the raw messages, `reference` as a list), plus
 * `agent_id`.
 */
export async function agentSessionRecord(e: Engine, s: AgentSessionRow): Promise<Record<string, unknown>> {
  const msgs = await agentSessionMessages(e, s.id);
  return {
    id: s.id, name: s.name, dialog_id: s.agent_id, agent_id: s.agent_id, ...sessionFields(s),
    message: msgs.map(({ reference: _r, ...m }) => m),
    reference: msgs.filter((m) => m.reference !== undefined).map((m) => m.reference),
    dsl: parse<P>(s.dsl, {}),
  };
}

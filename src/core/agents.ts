/**
 * Agents as stored (tables `agent`, `agent_version`, `agent_session`, `agent_message`; migration
 * 11) and their wire shapes: RAGFlow's user_canvas, user_canvas_version and api_4_conversation
 * as its REST interface returns them (api/apps/restful_apis/agent_api.py, v0.25.6).
 *
 * Storage helpers only: no validation of requests, no HTTP. The operations are in src/api/agents.ts;
 * the agent completion (src/api) reads sessions and saves turns with the helpers below.
 */
import type { Engine, Ctx } from './engine.js';
import { AskError } from './ask.js';
import { cachedStatement } from '../store/index.js';
import { formatDateTime, isPlainObject, newId, nowMs, faultPoint } from '../util/index.js';

type P = Record<string, unknown>;

export interface AgentRow {
  id: string;
  /** The owner (RAGFlow's `user_id`: the owner's own tenant). */
  tenant_id: string;
  title: string;
  avatar: string;
  description: string | null;
  permission: string;
  release: number;
  canvas_type: string;
  canvas_category: string;
  tags: string;
  /** The draft canvas, JSON. */
  dsl: string;
  create_time: number;
  update_time: number;
}

export interface AgentVersionRow {
  id: string;
  agent_id: string;
  title: string | null;
  description: string | null;
  release: number;
  dsl: string;
  create_time: number;
  update_time: number;
}

export interface AgentSessionRow {
  id: string;
  agent_id: string;
  name: string;
  user_id: string;
  exp_user_id: string | null;
  source: string;
  /** The session's own canvas state (RAGFlow's `str(canvas)`), JSON. */
  dsl: string;
  version_title: string | null;
  tokens: number;
  duration: number;
  round: number;
  thumb_up: number;
  errors: string | null;
  create_time: number;
  update_time: number;
}

/** One message of an agent session as the runtime writes it. */
export interface AgentTurnMessage {
  role: string;
  content: string;
  id?: string;
  created_at?: number;
  reference?: unknown;
  [k: string]: unknown;
}

/** RAGFlow's BeginParam default prologue. */
export const DEFAULT_AGENT_PROLOGUE = "Hi! I'm your smart assistant. What can I do for you?";

/** RAGFlow keeps at most this many unreleased versions per agent (`delete_all_versions`). */
export const UNRELEASED_VERSIONS_KEPT = 20;

const parse = <T>(s: string | null | undefined, dflt: T): T => {
  if (s === null || s === undefined) return dflt;
  try {
    return JSON.parse(s) as T;
  } catch {
    return dflt;
  }
};

// ---------------------------------------------------------------- agents

export function getAgent(e: Engine, id: unknown): AgentRow | undefined {
  if (typeof id !== 'string' || !id) return undefined;
  return cachedStatement(e.db, 'SELECT * FROM agent WHERE id = ?').get(id) as AgentRow | undefined;
}

/** The tenants the caller belongs to, its own first (RAGFlow's `UserTenantService.query(user_id=)`). */
export function joinedTenants(e: Engine, ctx: Ctx): string[] {
  const others = cachedStatement(e.db, 'SELECT tenant_id FROM user_tenant WHERE user_id = ? AND tenant_id != ?').pluck().all(ctx.userId, ctx.tenantId) as string[];
  return [ctx.tenantId, ...others];
}

/**
 * RAGFlow's `UserCanvasService.accessible`: the caller's own agent, or a `team` agent of a tenant
 * the caller is a member of.
 */
export function accessibleAgent(e: Engine, ctx: Ctx, id: unknown): AgentRow | undefined {
  const a = getAgent(e, id);
  if (!a) return undefined;
  if (a.tenant_id === ctx.tenantId) return a;
  return a.permission === 'team' && joinedTenants(e, ctx).includes(a.tenant_id) ? a : undefined;
}

/** The caller's own agent (RAGFlow's `UserCanvasService.query(user_id=tenant_id, id=agent_id)`). */
export function ownedAgent(e: Engine, ctx: Ctx, id: unknown): AgentRow | undefined {
  const a = getAgent(e, id);
  return a && a.tenant_id === ctx.tenantId ? a : undefined;
}

/** Another agent of the owner with this title in this category (titles compare case-insensitively). */
export function agentTitleTaken(e: Engine, tenantId: string, title: string, category: string, exceptId = ''): boolean {
  return !!cachedStatement(e.db, 'SELECT 1 FROM agent WHERE tenant_id = ? AND title = ? AND canvas_category = ? AND id != ?').get(tenantId, title, category, exceptId);
}

/** A user's nickname (the user id when unknown), as RAGFlow's `_get_user_nickname`. */
export function userNickname(e: Engine, userId: string): string {
  const r = cachedStatement(e.db, 'SELECT nickname FROM user WHERE id = ?').get(userId) as { nickname: string } | undefined;
  return r?.nickname || userId;
}

/** The nickname of a tenant's owner (RAGFlow joins the owner's user row). */
function ownerNickname(e: Engine, tenantId: string): string | null {
  const r = cachedStatement(e.db, "SELECT u.nickname FROM user_tenant ut JOIN user u ON u.id = ut.user_id WHERE ut.tenant_id = ? AND ut.role = 'owner'").get(tenantId) as { nickname: string } | undefined;
  return r?.nickname ?? null;
}

/**
 * The agent as GET /agents/{id} and POST /agents return it (RAGFlow's `get_by_canvas_id`: the
 * owner as `user_id`, its `nickname`, `tenant_avatar`), plus ragloom's `canvas_type`, `release`
 * and `tags`. `last_publish_time` is added by the get.
 */
export function agentToWire(e: Engine, a: AgentRow): Record<string, unknown> {
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
    nickname: ownerNickname(e, a.tenant_id),
    // ragloom users have no avatar.
    tenant_avatar: null,
    create_time: a.create_time,
    create_date: formatDateTime(a.create_time),
    update_time: a.update_time,
    update_date: formatDateTime(a.update_time),
  };
}

/** An item of GET /agents (RAGFlow's `get_by_tenant_ids` fields + `release_time`; no dsl), plus `canvas_type` and `create_time`. */
export function agentListItem(e: Engine, a: AgentRow): Record<string, unknown> {
  const released = cachedStatement(e.db, 'SELECT MAX(create_time) FROM agent_version WHERE agent_id = ? AND release = 1').pluck().get(a.id) as number | null;
  return {
    id: a.id,
    avatar: a.avatar,
    title: a.title,
    description: a.description,
    permission: a.permission,
    tenant_id: a.tenant_id,
    nickname: ownerNickname(e, a.tenant_id),
    tenant_avatar: null,
    canvas_type: a.canvas_type,
    canvas_category: a.canvas_category,
    tags: a.tags,
    create_time: a.create_time,
    update_time: a.update_time,
    release_time: released ?? null,
  };
}

// ---------------------------------------------------------------- versions

/** The newest version (optionally the newest released one), or undefined. */
export function latestVersion(e: Engine, agentId: string, onlyReleased = false): AgentVersionRow | undefined {
  const sql = onlyReleased
    ? 'SELECT * FROM agent_version WHERE agent_id = ? AND release = 1 ORDER BY create_time DESC, rowid DESC LIMIT 1'
    : 'SELECT * FROM agent_version WHERE agent_id = ? ORDER BY create_time DESC, rowid DESC LIMIT 1';
  return cachedStatement(e.db, sql).get(agentId) as AgentVersionRow | undefined;
}

/** RAGFlow's `get_latest_version_title`: the newest (released, with `release`) version's title, or null. */
export function latestVersionTitle(e: Engine, agentId: string, release: boolean): string | null {
  return latestVersion(e, agentId, release)?.title ?? null;
}

/**
 * The canvas a run starts from: the agent's draft, or with `release` the newest released
 * version's (RAGFlow's `get_agent_dsl_with_release`). 102 `No available published version`.
 */
export function agentDslForRun(e: Engine, agent: AgentRow, release: boolean): Record<string, unknown> {
  if (!release) return parse<P>(agent.dsl, {});
  const v = latestVersion(e, agent.id, true);
  if (!v) throw new AskError(102, 'No available published version');
  return parse<P>(v.dsl, {});
}

/** RAGFlow's `build_version_title`: `<nickname>_<title>_<local time>`. */
export function buildVersionTitle(nickname: string, title: string, ms = nowMs()): string {
  return `${nickname.trim() || 'tenant'}_${title.trim() || 'agent'}_${formatDateTime(ms)}`;
}

/** Structural equality of two JSON values (key order ignored, as Python's dict ==). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * RAGFlow's `save_or_replace_latest`; the caller holds the transaction. The same dsl as the newest
 * version updates that version in place (its title kept; `release` set), except that a released
 * newest version is never touched by an unreleased save: a new version is written instead. A
 * changed dsl writes a new version. Then unreleased versions beyond the newest 20 are pruned;
 * released ones are kept. Returns the id of the version written or updated.
 */
export function saveVersion(e: Engine, agentId: string, v: { dsl: P; title?: string | null; description?: string | null; release?: boolean }): string {
  const t = nowMs();
  const latest = latestVersion(e, agentId);
  let id: string;
  if (latest && jsonEqual(parse<unknown>(latest.dsl, null), v.dsl) && !(latest.release && !v.release)) {
    const set: P = { dsl: JSON.stringify(v.dsl), update_time: t };
    if (v.description !== undefined && v.description !== null) set.description = v.description;
    if (v.release !== undefined) set.release = v.release ? 1 : 0;
    const cols = Object.keys(set);
    e.db.prepare(`UPDATE agent_version SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`).run({ ...set, id: latest.id });
    id = latest.id;
  } else {
    id = newId();
    // Later than the newest version even within one millisecond: "newest" is by create_time.
    const created = latest ? Math.max(t, latest.create_time + 1) : t;
    e.db.prepare(`INSERT INTO agent_version (id, agent_id, title, description, release, dsl, create_time, update_time)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(id, agentId, v.title ?? null, v.description ?? null, v.release ? 1 : 0, JSON.stringify(v.dsl), created, created);
  }
  faultPoint('agents.version:written');
  const stale = e.db.prepare('SELECT id FROM agent_version WHERE agent_id = ? AND release = 0 ORDER BY create_time DESC, rowid DESC LIMIT -1 OFFSET ?')
    .pluck().all(agentId, UNRELEASED_VERSIONS_KEPT) as string[];
  const del = e.db.prepare('DELETE FROM agent_version WHERE id = ?');
  for (const s of stale) del.run(s);
  faultPoint('agents.version:pruned');
  return id;
}

export function getVersion(e: Engine, id: unknown): AgentVersionRow | undefined {
  if (typeof id !== 'string' || !id) return undefined;
  return cachedStatement(e.db, 'SELECT * FROM agent_version WHERE id = ?').get(id) as AgentVersionRow | undefined;
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

export function getAgentSession(e: Engine, id: unknown): AgentSessionRow | undefined {
  if (typeof id !== 'string' || !id) return undefined;
  return cachedStatement(e.db, 'SELECT * FROM agent_session WHERE id = ?').get(id) as AgentSessionRow | undefined;
}

/** Appends messages after the session's last one; the caller holds the transaction. */
function appendAgentMessages(e: Engine, sessionId: string, msgs: readonly AgentTurnMessage[]): void {
  let seq = (cachedStatement(e.db, 'SELECT COALESCE(MAX(seq), 0) FROM agent_message WHERE session_id = ?').pluck().get(sessionId) as number);
  const ins = cachedStatement(e.db, 'INSERT INTO agent_message (session_id, seq, role, content, extra, reference) VALUES (?, ?, ?, ?, ?, ?)');
  for (const { role, content, reference, ...extra } of msgs) {
    ins.run(sessionId, ++seq, String(role), typeof content === 'string' ? content : String(content ?? ''), JSON.stringify(extra), reference === undefined || reference === null ? null : JSON.stringify(reference));
  }
}

/** Stores a new session with its first messages (one transaction). `exp_user_id` = `user_id`, as RAGFlow sets it. */
export function insertAgentSession(e: Engine, s: {
  id: string; agent_id: string; user_id: string; name?: string; dsl: object; messages: AgentTurnMessage[];
  version_title: string | null; source?: string;
}): void {
  const t = nowMs();
  e.tx(() => {
    cachedStatement(e.db, `INSERT INTO agent_session (id, agent_id, name, user_id, exp_user_id, source, dsl, version_title, create_time, update_time)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(s.id, s.agent_id, s.name ?? '', s.user_id, s.user_id, s.source ?? 'agent', JSON.stringify(s.dsl), s.version_title, t, t);
    faultPoint('agents.session:inserted');
    appendAgentMessages(e, s.id, s.messages);
  });
  faultPoint('agents.session:committed');
}

/** A session's messages, oldest first, each with its stored reference when it has one. */
export function agentSessionMessages(e: Engine, sessionId: string): AgentTurnMessage[] {
  const rows = cachedStatement(e.db, 'SELECT role, content, extra, reference FROM agent_message WHERE session_id = ? ORDER BY seq').raw().all(sessionId) as Array<[string, string, string, string | null]>;
  return rows.map(([role, content, extra, reference]) => {
    const m: AgentTurnMessage = { role, content, ...parse<P>(extra, {}) };
    if (reference !== null) m.reference = parse<unknown>(reference, null);
    return m;
  });
}

/**
 * Saves one run of a session in ONE transaction: appends the messages, replaces the canvas state,
 * adds one round and the run's duration (RAGFlow's `append_message`), sets `errors` when given.
 * Returns false, writing nothing, when the session was deleted meanwhile.
 */
export function saveAgentTurn(e: Engine, sessionId: string, turn: { append: AgentTurnMessage[]; dsl: object; errors?: string; durationSec?: number }): boolean {
  return e.tx(() => {
    if (!getAgentSession(e, sessionId)) return false;
    appendAgentMessages(e, sessionId, turn.append);
    faultPoint('agents.turn:messages-appended');
    cachedStatement(e.db, `UPDATE agent_session SET dsl = ?, round = round + 1, duration = duration + ?, errors = CASE WHEN ? THEN ? ELSE errors END,
      update_time = ? WHERE id = ?`).run(JSON.stringify(turn.dsl), turn.durationSec ?? 0, turn.errors === undefined ? 0 : 1, turn.errors ?? null, nowMs(), sessionId);
    return true;
  });
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
 * The session as GET /agents/{id}/sessions lists it (RAGFlow's `_normalize_agent_session` of the
 * conversation record): `agent_id`, messages without their `prompt`, each answer after the
 * prologue carrying its reference chunks; `dsl` left out when `includeDsl` is false.
 */
export function agentSessionToWire(e: Engine, s: AgentSessionRow, includeDsl = true): Record<string, unknown> {
  const message = agentSessionMessages(e, s.id).map((m, i) => {
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
export function agentSessionRecord(e: Engine, s: AgentSessionRow): Record<string, unknown> {
  const msgs = agentSessionMessages(e, s.id);
  return {
    id: s.id, name: s.name, dialog_id: s.agent_id, agent_id: s.agent_id, ...sessionFields(s),
    message: msgs.map(({ reference: _r, ...m }) => m),
    reference: msgs.filter((m) => m.reference !== undefined).map((m) => m.reference),
    dsl: parse<P>(s.dsl, {}),
  };
}

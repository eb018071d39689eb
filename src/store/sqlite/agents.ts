/** Agents, their versions and sessions on SQLite (interface/agents.ts). */
import { cachedStatement } from '../db.js';
import { UNRELEASED_VERSIONS_KEPT } from '../interface/index.js';
import type {
  AgentChanges, AgentListQuery, AgentRow, AgentSessionListQuery, AgentSessionRow, AgentStore, AgentTurnMessage, AgentVersionRow, NewAgentSession,
  VersionSave,
} from '../interface/index.js';
import { faultPoint, jsonEqual, parseJson } from '../../util/index.js';
import { marks, setList } from './sql.js';
import type { SqliteConn } from './store.js';

type P = Record<string, unknown>;

const parse = parseJson;

export class SqliteAgents implements AgentStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  async get(id: string): Promise<AgentRow | undefined> {
    if (!id) return undefined;
    return cachedStatement(this.db, 'SELECT * FROM agent WHERE id = ?').get(id) as AgentRow | undefined;
  }

  private taken(tenantId: string, title: string, category: string, exceptId = ''): boolean {
    return !!cachedStatement(this.db, 'SELECT 1 FROM agent WHERE tenant_id = ? AND title = ? AND canvas_category = ? AND id != ?').get(tenantId, title, category, exceptId);
  }

  async titleTaken(tenantId: string, title: string, category: string, exceptId?: string): Promise<boolean> {
    return this.taken(tenantId, title, category, exceptId);
  }

  private latest(agentId: string, onlyReleased: boolean): AgentVersionRow | undefined {
    const sql = onlyReleased
      ? 'SELECT * FROM agent_version WHERE agent_id = ? AND release = 1 ORDER BY create_time DESC, rowid DESC LIMIT 1'
      : 'SELECT * FROM agent_version WHERE agent_id = ? ORDER BY create_time DESC, rowid DESC LIMIT 1';
    return cachedStatement(this.db, sql).get(agentId) as AgentVersionRow | undefined;
  }

  /**
   * RAGFlow's `save_or_replace_latest`, inside the caller's transaction. The same dsl as the newest
   * version updates that version in place (its title kept; `release` set), except that a released
   * newest version is never touched by an unreleased save: a new version is written instead. A
   * changed dsl writes a new version. Then unreleased versions beyond the newest 20 are pruned;
   * released ones are kept. Returns the id of the version written or updated.
   */
  private saveVersion(agentId: string, v: VersionSave): string {
    const db = this.db;
    const t = v.time;
    const latest = this.latest(agentId, false);
    let id: string;
    if (latest && jsonEqual(parse<unknown>(latest.dsl, null), v.dsl) && !(latest.release && !v.release)) {
      const set: P = { dsl: JSON.stringify(v.dsl), update_time: t };
      if (v.description !== undefined && v.description !== null) set.description = v.description;
      if (v.release !== undefined) set.release = v.release ? 1 : 0;
      db.prepare(`UPDATE agent_version SET ${setList(Object.keys(set))} WHERE id = @id`).run({ ...set, id: latest.id });
      id = latest.id;
    } else {
      id = v.newId;
      // Later than the newest version even within one millisecond: "newest" is by create_time.
      const created = latest ? Math.max(t, latest.create_time + 1) : t;
      db.prepare(`INSERT INTO agent_version (id, agent_id, title, description, release, dsl, create_time, update_time)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(id, agentId, v.title ?? null, v.description ?? null, v.release ? 1 : 0, JSON.stringify(v.dsl), created, created);
    }
    faultPoint('agents.version:written');
    const stale = db.prepare('SELECT id FROM agent_version WHERE agent_id = ? AND release = 0 ORDER BY create_time DESC, rowid DESC LIMIT -1 OFFSET ?')
      .pluck().all(agentId, UNRELEASED_VERSIONS_KEPT) as string[];
    const del = db.prepare('DELETE FROM agent_version WHERE id = ?');
    for (const s of stale) del.run(s);
    faultPoint('agents.version:pruned');
    return id;
  }

  async create(row: AgentRow, version: VersionSave): Promise<boolean> {
    const ok = this.c.tx(() => {
      if (this.taken(row.tenant_id, row.title, row.canvas_category)) return false;
      const cols = Object.keys(row);
      this.db.prepare(`INSERT INTO agent (${cols.join(', ')}) VALUES (${cols.map((k) => `@${k}`).join(', ')})`).run(row);
      faultPoint('agents.create:agent-inserted');
      this.saveVersion(row.id, version);
      return true;
    });
    if (ok) faultPoint('agents.create:committed');
    return ok;
  }

  async update(id: string, changes: AgentChanges, version: VersionSave | null, checkTitle: { title: string; category: string } | null): Promise<boolean> {
    const ok = this.c.tx(() => {
      if (checkTitle) {
        const tenant = (cachedStatement(this.db, 'SELECT * FROM agent WHERE id = ?').get(id) as AgentRow | undefined)?.tenant_id ?? '';
        if (this.taken(tenant, checkTitle.title, checkTitle.category, id)) return false;
      }
      this.db.prepare(`UPDATE agent SET ${setList(Object.keys(changes))} WHERE id = @id`).run({ ...changes, id });
      faultPoint('agents.update:agent-updated');
      if (version) this.saveVersion(id, version);
      return true;
    });
    if (ok) faultPoint('agents.update:committed');
    return ok;
  }

  async delete(id: string): Promise<void> {
    // The foreign keys cascade to versions, sessions and their messages.
    this.c.tx(() => this.db.prepare('DELETE FROM agent WHERE id = ?').run(id));
  }

  async sessionFigures(tenantId: string, from: number, to: number): Promise<Array<{ t: number; user_id: string; tokens: number; duration: number; round: number; thumb_up: number }>> {
    return this.db.prepare(`SELECT s.create_time AS t, s.user_id AS user_id, s.tokens AS tokens, s.duration AS duration, s.round AS round, s.thumb_up AS thumb_up
    FROM agent_session s JOIN agent a ON a.id = s.agent_id WHERE a.tenant_id = ? AND s.create_time >= ? AND s.create_time <= ? ORDER BY s.create_time`)
      .all(tenantId, from, to) as Array<{ t: number; user_id: string; tokens: number; duration: number; round: number; thumb_up: number }>;
  }

  async tagLists(q: Pick<AgentListQuery, 'tenantIds' | 'ownTenantId' | 'category'>): Promise<string[]> {
    const args: unknown[] = [...q.tenantIds, q.ownTenantId];
    let sql = `SELECT tags FROM agent WHERE tenant_id IN (${marks(q.tenantIds.length)}) AND (tenant_id = ? OR permission = 'team') AND tags != ''`;
    if (q.category) (sql += ' AND canvas_category = ?'), args.push(q.category);
    return this.db.prepare(sql).pluck().all(...args) as string[];
  }

  async list(q: AgentListQuery): Promise<{ total: number; rows: AgentRow[] }> {
    const where = [`tenant_id IN (${q.tenantIds.map(() => '?').join(',')})`, "(tenant_id = ? OR permission = 'team')"];
    const args: unknown[] = [...q.tenantIds, q.ownTenantId];
    // Substring matches use instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
    if (q.keywords !== undefined) (where.push('instr(LOWER(title), ?) > 0'), args.push(q.keywords));
    if (q.category !== undefined) (where.push('canvas_category = ?'), args.push(q.category));
    if (q.tags?.length) {
      // Wrapped in commas so that 'ml' does not match 'ml-ops'.
      // One JSON parameter for the list: one placeholder per tag would stop at SQLite's 32,766 variables.
      where.push("EXISTS (SELECT 1 FROM json_each(?) t WHERE instr(',' || LOWER(tags) || ',', t.value) > 0)");
      args.push(JSON.stringify(q.tags.map((t) => `,${t},`)));
    }
    const w = where.join(' AND ');
    const total = this.db.prepare(`SELECT COUNT(*) FROM agent WHERE ${w}`).pluck().get(...args) as number;
    const dir = q.desc ? 'DESC' : 'ASC';
    let sql = `SELECT * FROM agent WHERE ${w} ORDER BY ${q.orderby} ${dir}, rowid ${dir}`;
    if (q.page) (sql += ' LIMIT ? OFFSET ?'), args.push(q.page.limit, q.page.offset);
    return { total, rows: this.db.prepare(sql).all(...args) as AgentRow[] };
  }

  async releaseTimes(agentIds: readonly string[]): Promise<Map<string, number>> {
    const sel = cachedStatement(this.db, 'SELECT MAX(create_time) FROM agent_version WHERE agent_id = ? AND release = 1').pluck();
    const out = new Map<string, number>();
    for (const id of new Set(agentIds)) {
      const t = sel.get(id) as number | null;
      if (t !== null) out.set(id, t);
    }
    return out;
  }

  async lastPublished(agentId: string): Promise<number | null> {
    return this.db.prepare('SELECT MAX(update_time) FROM agent_version WHERE agent_id = ? AND release = 1').pluck().get(agentId) as number | null;
  }

  async versions(agentId: string): Promise<AgentVersionRow[]> {
    return this.db.prepare('SELECT * FROM agent_version WHERE agent_id = ? ORDER BY update_time DESC, create_time DESC, rowid DESC').all(agentId) as AgentVersionRow[];
  }

  async getVersion(id: string): Promise<AgentVersionRow | undefined> {
    if (!id) return undefined;
    return cachedStatement(this.db, 'SELECT * FROM agent_version WHERE id = ?').get(id) as AgentVersionRow | undefined;
  }

  async latestVersion(agentId: string, onlyReleased: boolean): Promise<AgentVersionRow | undefined> {
    return this.latest(agentId, onlyReleased);
  }

  private session(id: string): AgentSessionRow | undefined {
    if (!id) return undefined;
    return cachedStatement(this.db, 'SELECT * FROM agent_session WHERE id = ?').get(id) as AgentSessionRow | undefined;
  }

  async getSession(id: string): Promise<AgentSessionRow | undefined> {
    return this.session(id);
  }

  /** Appends messages after the session's last one; inside the caller's transaction. */
  private append(sessionId: string, msgs: readonly AgentTurnMessage[]): void {
    let seq = cachedStatement(this.db, 'SELECT COALESCE(MAX(seq), 0) FROM agent_message WHERE session_id = ?').pluck().get(sessionId) as number;
    const ins = cachedStatement(this.db, 'INSERT INTO agent_message (session_id, seq, role, content, extra, reference) VALUES (?, ?, ?, ?, ?, ?)');
    for (const { role, content, reference, ...extra } of msgs) {
      ins.run(sessionId, ++seq, String(role), typeof content === 'string' ? content : String(content ?? ''), JSON.stringify(extra),
        reference === undefined || reference === null ? null : JSON.stringify(reference));
    }
  }

  async createSession(s: NewAgentSession, time: number): Promise<void> {
    this.c.tx(() => {
      cachedStatement(this.db, `INSERT INTO agent_session (id, agent_id, name, user_id, exp_user_id, source, dsl, version_title, create_time, update_time)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(s.id, s.agent_id, s.name ?? '', s.user_id, s.user_id, s.source ?? 'agent', JSON.stringify(s.dsl), s.version_title, time, time);
      faultPoint('agents.session:inserted');
      this.append(s.id, s.messages);
    });
    faultPoint('agents.session:committed');
  }

  async listSessions(q: AgentSessionListQuery): Promise<{ total: number; rows: AgentSessionRow[] }> {
    const where = ['agent_id = ?'];
    const args: unknown[] = [q.agentId];
    if (q.id !== undefined) (where.push('id = ?'), args.push(q.id));
    if (q.userId !== undefined) (where.push('user_id = ?'), args.push(q.userId));
    if (q.keywords !== undefined) {
      where.push('EXISTS (SELECT 1 FROM agent_message m WHERE m.session_id = agent_session.id AND instr(LOWER(m.content), ?) > 0)');
      args.push(q.keywords);
    }
    if (q.from !== undefined) (where.push(`${q.dateColumn} >= ?`), args.push(q.from));
    if (q.to !== undefined) (where.push(`${q.dateColumn} <= ?`), args.push(q.to));
    const w = where.join(' AND ');
    const total = this.db.prepare(`SELECT COUNT(*) FROM agent_session WHERE ${w}`).pluck().get(...args) as number;
    if (q.page && q.page.limit === 0) return { total, rows: [] };
    const dir = q.desc ? 'DESC' : 'ASC';
    let sql = `SELECT * FROM agent_session WHERE ${w} ORDER BY ${q.orderby} ${dir}, rowid ${dir}`;
    if (q.page) (sql += ' LIMIT ? OFFSET ?'), args.push(q.page.limit, q.page.offset);
    return { total, rows: this.db.prepare(sql).all(...args) as AgentSessionRow[] };
  }

  async sessionNames(agentId: string, expUserId: string): Promise<Array<{ id: string; name: string }>> {
    return this.db.prepare('SELECT id, name FROM agent_session WHERE agent_id = ? AND exp_user_id = ? ORDER BY create_time DESC, rowid DESC').all(agentId, expUserId) as Array<{ id: string; name: string }>;
  }

  async sessionIds(agentId: string): Promise<string[]> {
    return this.db.prepare('SELECT id FROM agent_session WHERE agent_id = ?').pluck().all(agentId) as string[];
  }

  async deleteSessions(agentId: string, ids: readonly string[]): Promise<boolean[]> {
    return this.c.tx(() => {
      const del = this.db.prepare('DELETE FROM agent_session WHERE id = ? AND agent_id = ?');
      return ids.map((id) => typeof id === 'string' && del.run(id, agentId).changes > 0);
    });
  }

  async messages(sessionIds: readonly string[]): Promise<Map<string, AgentTurnMessage[]>> {
    const sel = cachedStatement(this.db, 'SELECT role, content, extra, reference FROM agent_message WHERE session_id = ? ORDER BY seq').raw();
    const out = new Map<string, AgentTurnMessage[]>();
    for (const id of sessionIds) {
      if (out.has(id)) continue;
      const rows = sel.all(id) as Array<[string, string, string, string | null]>;
      out.set(id, rows.map(([role, content, extra, reference]) => {
        const m: AgentTurnMessage = { role, content, ...parse<P>(extra, {}) };
        if (reference !== null) m.reference = parse<unknown>(reference, null);
        return m;
      }));
    }
    return out;
  }

  async saveTurn(sessionId: string, turn: { append: AgentTurnMessage[]; dsl: object; errors?: string; durationSec?: number }, time: number): Promise<boolean> {
    return this.c.tx(() => {
      if (!this.session(sessionId)) return false;
      this.append(sessionId, turn.append);
      faultPoint('agents.turn:messages-appended');
      cachedStatement(this.db, `UPDATE agent_session SET dsl = ?, round = round + 1, duration = duration + ?, errors = CASE WHEN ? THEN ? ELSE errors END,
      update_time = ? WHERE id = ?`).run(JSON.stringify(turn.dsl), turn.durationSec ?? 0, turn.errors === undefined ? 0 : 1, turn.errors ?? null, time, sessionId);
      return true;
    });
  }
}

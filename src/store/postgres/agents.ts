/** Agents, their versions and sessions on PostgreSQL (interface/agents.ts). */
import { UNRELEASED_VERSIONS_KEPT } from '../interface/index.js';
import type {
  AgentChanges, AgentListQuery, AgentRow, AgentSessionListQuery, AgentSessionRow, AgentStore, AgentTurnMessage, AgentVersionRow, NewAgentSession,
  VersionSave,
} from '../interface/index.js';
import { faultPoint, jsonEqual, parseJson } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';
import { lockNames } from './datasets.js';
import { dir, insertRow, orderColumn, setList, strip, stripAll, valuesOf } from './sql.js';

type P = Record<string, unknown>;

const page = (p: { limit: number; offset: number } | undefined) =>
  p ? ` LIMIT ${p.limit < 0 ? 'ALL' : Math.floor(p.limit)} OFFSET ${Math.max(0, Math.floor(p.offset))}` : '';

export class PgAgents implements AgentStore {
  constructor(private readonly db: PgDb) {}

  async get(id: string): Promise<AgentRow | undefined> {
    if (!id) return undefined;
    return strip(await this.db.one('SELECT * FROM agent WHERE id = $1', [id]));
  }

  private async taken(q: PgDb | PgTx, tenantId: string, title: string, category: string, exceptId = ''): Promise<boolean> {
    // Titles compare as SQLite's NOCASE column does (ASCII letters folded).
    return !!(await q.one('SELECT 1 FROM agent WHERE tenant_id = $1 AND ragloom_nocase(title) = ragloom_nocase($2) AND canvas_category = $3 AND id <> $4', [tenantId, title, category, exceptId]));
  }

  async titleTaken(tenantId: string, title: string, category: string, exceptId?: string): Promise<boolean> {
    return this.taken(this.db, tenantId, title, category, exceptId);
  }

  private async latest(q: PgDb | PgTx, agentId: string, onlyReleased: boolean): Promise<AgentVersionRow | undefined> {
    return strip(await q.one(`SELECT * FROM agent_version WHERE agent_id = $1${onlyReleased ? ' AND release = 1' : ''} ORDER BY create_time DESC, ord DESC LIMIT 1`, [agentId]));
  }

  /** RAGFlow's `save_or_replace_latest`, inside the caller's transaction (see SQLite's agents.ts). */
  private async saveVersion(t: PgTx, agentId: string, v: VersionSave): Promise<string> {
    const time = v.time;
    const latest = await this.latest(t, agentId, false);
    let id: string;
    if (latest && jsonEqual(parseJson<unknown>(latest.dsl, null), v.dsl) && !(latest.release && !v.release)) {
      const set: P = { dsl: JSON.stringify(v.dsl), update_time: time };
      if (v.description !== undefined && v.description !== null) set.description = v.description;
      if (v.release !== undefined) set.release = v.release ? 1 : 0;
      const cols = Object.keys(set);
      await t.run(`UPDATE agent_version SET ${setList(cols, 2)} WHERE id = $1`, [latest.id, ...valuesOf(set, cols)]);
      id = latest.id;
    } else {
      id = v.newId;
      const created = latest ? Math.max(time, latest.create_time + 1) : time;
      await t.run(`INSERT INTO agent_version (id, agent_id, title, description, release, dsl, create_time, update_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
        [id, agentId, v.title ?? null, v.description ?? null, v.release ? 1 : 0, JSON.stringify(v.dsl), created]);
    }
    faultPoint('agents.version:written');
    await t.run(`DELETE FROM agent_version WHERE id IN (SELECT id FROM agent_version WHERE agent_id = $1 AND release = 0
      ORDER BY create_time DESC, ord DESC OFFSET $2)`, [agentId, UNRELEASED_VERSIONS_KEPT]);
    faultPoint('agents.version:pruned');
    return id;
  }

  async create(row: AgentRow, version: VersionSave): Promise<boolean> {
    const ok = await this.db.tx(async (t) => {
      await lockNames(t, 'agent', row.tenant_id);
      if (await this.taken(t, row.tenant_id, row.title, row.canvas_category)) return false;
      const ins = insertRow('agent', { ...row });
      await t.run(ins.sql, ins.params);
      faultPoint('agents.create:agent-inserted');
      await this.saveVersion(t, row.id, version);
      return true;
    });
    if (ok) faultPoint('agents.create:committed');
    return ok;
  }

  async update(id: string, changes: AgentChanges, version: VersionSave | null, checkTitle: { title: string; category: string } | null): Promise<boolean> {
    const ok = await this.db.tx(async (t) => {
      if (checkTitle) {
        const tenant = (await t.one<{ tenant_id: string }>('SELECT tenant_id FROM agent WHERE id = $1', [id]))?.tenant_id ?? '';
        await lockNames(t, 'agent', tenant);
        if (await this.taken(t, tenant, checkTitle.title, checkTitle.category, id)) return false;
      }
      const cols = Object.keys(changes);
      if (cols.length) await t.run(`UPDATE agent SET ${setList(cols, 2)} WHERE id = $1`, [id, ...valuesOf(changes as P, cols)]);
      faultPoint('agents.update:agent-updated');
      if (version) await this.saveVersion(t, id, version);
      return true;
    });
    if (ok) faultPoint('agents.update:committed');
    return ok;
  }

  async delete(id: string): Promise<void> {
    // The foreign keys cascade to versions, sessions and their messages.
    await this.db.run('DELETE FROM agent WHERE id = $1', [id], { idempotent: true });
  }

  async list(q: AgentListQuery): Promise<{ total: number; rows: AgentRow[] }> {
    const p: unknown[] = [[...q.tenantIds], q.ownTenantId];
    const where = ['tenant_id = ANY($1)', "(tenant_id = $2 OR permission = 'team')"];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.keywords !== undefined) add((k) => `strpos(ragloom_nocase(title), ${k}) > 0`, q.keywords);
    if (q.category !== undefined) add((k) => `canvas_category = ${k}`, q.category);
    // Wrapped in commas so that 'ml' does not match 'ml-ops'.
    if (q.tags?.length) add((k) => `EXISTS (SELECT 1 FROM unnest(${k}::text[]) g WHERE strpos(',' || ragloom_nocase(tags) || ',', g) > 0)`, q.tags.map((g) => `,${g},`));
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM agent WHERE ${w}`, p))!.n;
    const d = dir(q.desc);
    const order = orderColumn(q.orderby, ['title']);
    return { total, rows: stripAll(await this.db.rows(`SELECT * FROM agent WHERE ${w} ORDER BY ${order} ${d}, ord ${d}${page(q.page)}`, p)) };
  }

  async sessionFigures(tenantId: string, from: number, to: number): Promise<Array<{ t: number; user_id: string; tokens: number; duration: number; round: number; thumb_up: number }>> {
    return this.db.rows(`SELECT s.create_time AS t, s.user_id, s.tokens, s.duration, s.round, s.thumb_up FROM agent_session s JOIN agent a ON a.id = s.agent_id
      WHERE a.tenant_id = $1 AND s.create_time >= $2 AND s.create_time <= $3 ORDER BY s.create_time, s.ord`, [tenantId, from, to]);
  }

  async tagLists(q: Pick<AgentListQuery, 'tenantIds' | 'ownTenantId' | 'category'>): Promise<string[]> {
    const p: unknown[] = [[...q.tenantIds], q.ownTenantId];
    let sql = "SELECT tags FROM agent WHERE tenant_id = ANY($1) AND (tenant_id = $2 OR permission = 'team') AND tags <> ''";
    if (q.category) (p.push(q.category), (sql += ` AND canvas_category = $${p.length}`));
    return (await this.db.rows<{ tags: string }>(`${sql} ORDER BY ord`, p)).map((r) => r.tags);
  }

  async releaseTimes(agentIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.db.rows<{ agent_id: string; t: number }>('SELECT agent_id, max(create_time) AS t FROM agent_version WHERE agent_id = ANY($1) AND release = 1 GROUP BY agent_id',
      [[...new Set(agentIds)]]);
    return new Map(rows.map((r) => [r.agent_id, r.t]));
  }

  async lastPublished(agentId: string): Promise<number | null> {
    return (await this.db.one<{ t: number | null }>('SELECT max(update_time) AS t FROM agent_version WHERE agent_id = $1 AND release = 1', [agentId]))?.t ?? null;
  }

  async versions(agentId: string): Promise<AgentVersionRow[]> {
    return stripAll(await this.db.rows('SELECT * FROM agent_version WHERE agent_id = $1 ORDER BY update_time DESC, create_time DESC, ord DESC', [agentId]));
  }

  async getVersion(id: string): Promise<AgentVersionRow | undefined> {
    if (!id) return undefined;
    return strip(await this.db.one('SELECT * FROM agent_version WHERE id = $1', [id]));
  }

  async latestVersion(agentId: string, onlyReleased: boolean): Promise<AgentVersionRow | undefined> {
    return this.latest(this.db, agentId, onlyReleased);
  }

  async getSession(id: string): Promise<AgentSessionRow | undefined> {
    if (!id) return undefined;
    return strip(await this.db.one('SELECT * FROM agent_session WHERE id = $1', [id]));
  }

  /** Appends messages after the session's last one (the session locked by the caller). */
  private async append(t: PgTx, sessionId: string, msgs: readonly AgentTurnMessage[]): Promise<void> {
    if (!msgs.length) return;
    const base = (await t.one<{ n: number }>('SELECT COALESCE(max(seq), 0) AS n FROM agent_message WHERE session_id = $1', [sessionId]))!.n;
    const rows = msgs.map(({ role, content, reference, ...extra }) => [String(role), typeof content === 'string' ? content : String(content ?? ''), JSON.stringify(extra),
      reference === undefined || reference === null ? null : JSON.stringify(reference)]);
    const col = (k: number) => rows.map((r) => r[k]);
    await t.run(`INSERT INTO agent_message (session_id, seq, role, content, extra, reference)
      SELECT $1, $2 + k, r, c, e, f FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS x(r, c, e, f, k)`,
    [sessionId, base, col(0), col(1), col(2), col(3)]);
  }

  async createSession(s: NewAgentSession, time: number): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run(`INSERT INTO agent_session (id, agent_id, name, user_id, exp_user_id, source, dsl, version_title, create_time, update_time)
        VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $8)`, [s.id, s.agent_id, s.name ?? '', s.user_id, s.source ?? 'agent', JSON.stringify(s.dsl), s.version_title, time]);
      faultPoint('agents.session:inserted');
      await this.append(t, s.id, s.messages);
    });
    faultPoint('agents.session:committed');
  }

  async listSessions(q: AgentSessionListQuery): Promise<{ total: number; rows: AgentSessionRow[] }> {
    const p: unknown[] = [q.agentId];
    const where = ['agent_id = $1'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.id !== undefined) add((k) => `id = ${k}`, q.id);
    if (q.userId !== undefined) add((k) => `user_id = ${k}`, q.userId);
    if (q.keywords !== undefined) add((k) => `EXISTS (SELECT 1 FROM agent_message m WHERE m.session_id = agent_session.id AND strpos(ragloom_nocase(m.content), ${k}) > 0)`, q.keywords);
    const col = q.dateColumn === 'update_time' ? 'update_time' : 'create_time';
    if (q.from !== undefined) add((k) => `${col} >= ${k}`, q.from);
    if (q.to !== undefined) add((k) => `${col} <= ${k}`, q.to);
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM agent_session WHERE ${w}`, p))!.n;
    if (q.page && q.page.limit === 0) return { total, rows: [] };
    const d = dir(q.desc);
    const order = orderColumn(q.orderby);
    return { total, rows: stripAll(await this.db.rows(`SELECT * FROM agent_session WHERE ${w} ORDER BY ${order} ${d}, ord ${d}${page(q.page)}`, p)) };
  }

  async sessionNames(agentId: string, expUserId: string): Promise<Array<{ id: string; name: string }>> {
    return this.db.rows('SELECT id, name FROM agent_session WHERE agent_id = $1 AND exp_user_id = $2 ORDER BY create_time DESC, ord DESC', [agentId, expUserId]);
  }

  async sessionIds(agentId: string): Promise<string[]> {
    return (await this.db.rows<{ id: string }>('SELECT id FROM agent_session WHERE agent_id = $1 ORDER BY ord', [agentId])).map((r) => r.id);
  }

  async deleteSessions(agentId: string, ids: readonly string[]): Promise<boolean[]> {
    return this.db.tx(async (t) => {
      const res: boolean[] = [];
      for (const id of ids) res.push(typeof id === 'string' && (await t.run('DELETE FROM agent_session WHERE id = $1 AND agent_id = $2', [id, agentId])) > 0);
      return res;
    });
  }

  async messages(sessionIds: readonly string[]): Promise<Map<string, AgentTurnMessage[]>> {
    const ids = [...new Set(sessionIds)];
    const rows = await this.db.rows<{ session_id: string; role: string; content: string; extra: string; reference: string | null }>(
      'SELECT session_id, role, content, extra, reference FROM agent_message WHERE session_id = ANY($1) ORDER BY session_id, seq', [ids]);
    const out = new Map<string, AgentTurnMessage[]>(ids.map((id) => [id, []]));
    for (const r of rows) {
      const m: AgentTurnMessage = { role: r.role, content: r.content, ...parseJson<P>(r.extra, {}) };
      if (r.reference !== null) m.reference = parseJson<unknown>(r.reference, null);
      out.get(r.session_id)!.push(m);
    }
    return out;
  }

  async saveTurn(sessionId: string, turn: { append: AgentTurnMessage[]; dsl: object; errors?: string; durationSec?: number }, time: number): Promise<boolean> {
    return this.db.tx(async (t) => {
      if (!(await t.one('SELECT 1 FROM agent_session WHERE id = $1 FOR UPDATE', [sessionId]))) return false;
      await this.append(t, sessionId, turn.append);
      faultPoint('agents.turn:messages-appended');
      await t.run(`UPDATE agent_session SET dsl = $1, round = round + 1, duration = duration + $2, errors = CASE WHEN $3 THEN $4 ELSE errors END, update_time = $5
        WHERE id = $6`, [JSON.stringify(turn.dsl), turn.durationSec ?? 0, turn.errors !== undefined, turn.errors ?? null, time, sessionId]);
      return true;
    });
  }
}

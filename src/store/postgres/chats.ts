/** Chats, their sessions and messages on PostgreSQL (interface/chats.ts). */
import type { ChatChanges, ChatListQuery, ChatRow, ChatStore, SessionListQuery, SessionRow, StoredMessage, Transcript } from '../interface/index.js';
import { ratedAnswer } from '../interface/chats.js';
import { faultPoint, parseJson } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';
import { lockNames } from './datasets.js';
import { dir, insertRow, orderColumn, setList, strip, stripAll, valuesOf } from './sql.js';

/** chat.name is NOCASE on SQLite (its order folds ASCII case); chat_session.name is not. */
const CHAT_NOCASE = ['name'];

export class PgChats implements ChatStore {
  constructor(private readonly db: PgDb) {}

  async getOwned(id: string, tenantId: string): Promise<ChatRow | undefined> {
    if (!id) return undefined;
    return strip(await this.db.one("SELECT * FROM chat WHERE id = $1 AND tenant_id = $2 AND status = '1'", [id, tenantId]));
  }

  private async taken(q: PgDb | PgTx, tenantId: string, name: string, exceptId = ''): Promise<boolean> {
    return !!(await q.one("SELECT 1 FROM chat WHERE tenant_id = $1 AND ragloom_nocase(name) = ragloom_nocase($2) AND status = '1' AND id <> $3", [tenantId, name, exceptId]));
  }

  async nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean> {
    return this.taken(this.db, tenantId, name, exceptId);
  }

  async create(row: ChatRow): Promise<boolean> {
    return this.db.tx(async (t) => {
      await lockNames(t, 'chat', row.tenant_id);
      if (await this.taken(t, row.tenant_id, row.name)) return false;
      const ins = insertRow('chat', { ...row });
      await t.run(ins.sql, ins.params);
      return true;
    });
  }

  async update(id: string, tenantId: string, changes: ChatChanges, checkName: boolean): Promise<boolean> {
    return this.db.tx(async (t) => {
      if (checkName && changes.name !== undefined) {
        await lockNames(t, 'chat', tenantId);
        if (await this.taken(t, tenantId, changes.name, id)) return false;
      }
      const cols = Object.keys(changes);
      if (cols.length) await t.run(`UPDATE chat SET ${setList(cols, 2)} WHERE id = $1`, [id, ...valuesOf(changes, cols)]);
      return true;
    }, { idempotent: true });
  }

  async list(q: ChatListQuery): Promise<{ total: number; rows: ChatRow[] }> {
    const p: unknown[] = [[...q.tenantIds]];
    const where = ["status = '1'", 'tenant_id = ANY($1)'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.id !== undefined) add((k) => `id = ${k}`, q.id);
    if (q.name !== undefined) add((k) => `ragloom_nocase(name) = ragloom_nocase(${k})`, q.name);
    if (q.keywords !== undefined) add((k) => `strpos(ragloom_nocase(name), ${k}) > 0`, q.keywords);
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM chat WHERE ${w}`, p))!.n;
    const d = dir(q.desc);
    let sql = `SELECT * FROM chat WHERE ${w} ORDER BY ${orderColumn(q.orderby, CHAT_NOCASE)} ${d}, ord ${d}`;
    if (q.page) sql += ` LIMIT ${q.page.limit < 0 ? 'ALL' : Math.floor(q.page.limit)} OFFSET ${Math.max(0, Math.floor(q.page.offset))}`;
    return { total, rows: stripAll(await this.db.rows(sql, p)) };
  }

  async liveIds(tenantId: string): Promise<string[]> {
    return (await this.db.rows<{ id: string }>("SELECT id FROM chat WHERE tenant_id = $1 AND status = '1' ORDER BY ord", [tenantId])).map((r) => r.id);
  }

  async softDelete(tenantId: string, ids: readonly string[], time: number): Promise<boolean[]> {
    const out = await this.db.tx(async (t) => {
      const res: boolean[] = [];
      for (const id of ids) {
        const n = id ? await t.run("UPDATE chat SET status = '0', update_time = $1 WHERE id = $2 AND tenant_id = $3 AND status = '1'", [time, id, tenantId]) : 0;
        faultPoint('chats.delete:one-deleted');
        res.push(n > 0);
      }
      return res;
    });
    faultPoint('chats.delete:committed');
    return out;
  }

  async getSession(id: string): Promise<SessionRow | undefined> {
    if (!id) return undefined;
    return strip(await this.db.one('SELECT * FROM chat_session WHERE id = $1', [id]));
  }

  /** Appends messages (an answer with its reference) to a session, in order; inside the caller's transaction. */
  private async append(t: PgTx, sessionId: string, msgs: readonly StoredMessage[]): Promise<void> {
    if (!msgs.length) return;
    const rows = msgs.map(({ role, content, reference, ...extra }) => [role, content, JSON.stringify(extra), reference === undefined ? null : JSON.stringify(reference)]);
    const col = (k: number) => rows.map((r) => r[k]);
    await t.run(`INSERT INTO chat_message (session_id, role, content, extra, reference)
      SELECT $1, r, c, e, f FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS x(r, c, e, f, k) ORDER BY k`,
    [sessionId, col(0), col(1), col(2), col(3)]);
  }

  async createSession(row: SessionRow, messages: readonly StoredMessage[], points: { inserted?: string; committed?: string } = {}): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('INSERT INTO chat_session (id, chat_id, name, user_id, create_time, update_time) VALUES ($1, $2, $3, $4, $5, $6)',
        [row.id, row.chat_id, row.name, row.user_id, row.create_time, row.update_time]);
      if (points.inserted) faultPoint(points.inserted);
      await this.append(t, row.id, messages);
    });
    if (points.committed) faultPoint(points.committed);
  }

  async listSessions(q: SessionListQuery): Promise<SessionRow[]> {
    const p: unknown[] = [q.chatId];
    const where = ['chat_id = $1'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.id !== undefined) add((k) => `id = ${k}`, q.id);
    if (q.name !== undefined) add((k) => `ragloom_nocase(name) = ragloom_nocase(${k})`, q.name);
    if (q.userId !== undefined) add((k) => `user_id = ${k}`, q.userId);
    const d = dir(q.desc);
    let sql = `SELECT * FROM chat_session WHERE ${where.join(' AND ')} ORDER BY ${orderColumn(q.orderby)} ${d}, ord ${d}`;
    if (q.page) sql += ` LIMIT ${q.page.limit < 0 ? 'ALL' : Math.floor(q.page.limit)} OFFSET ${Math.max(0, Math.floor(q.page.offset))}`;
    return stripAll(await this.db.rows(sql, p));
  }

  async sessionIds(chatId: string): Promise<string[]> {
    return (await this.db.rows<{ id: string }>('SELECT id FROM chat_session WHERE chat_id = $1 ORDER BY ord', [chatId])).map((r) => r.id);
  }

  async renameSession(id: string, name: string, time: number): Promise<void> {
    await this.db.run('UPDATE chat_session SET name = $1, update_time = $2 WHERE id = $3', [name, time, id], { idempotent: true });
  }

  async deleteSessions(chatId: string, ids: readonly string[]): Promise<boolean[]> {
    const out = await this.db.tx(async (t) => {
      const res: boolean[] = [];
      for (const id of ids) {
        const n = id ? await t.run('DELETE FROM chat_session WHERE id = $1 AND chat_id = $2', [id, chatId]) : 0;
        if (n) faultPoint('sessions.delete:one-deleted');
        res.push(n > 0);
      }
      return res;
    });
    faultPoint('sessions.delete:committed');
    return out;
  }

  async transcripts(sessionIds: readonly string[]): Promise<Map<string, Transcript>> {
    const ids = [...new Set(sessionIds)];
    const rows = await this.db.rows<{ session_id: string; role: string; content: string; extra: string; reference: string | null }>(
      'SELECT session_id, role, content, extra, reference FROM chat_message WHERE session_id = ANY($1) ORDER BY session_id, seq', [ids]);
    const out = new Map<string, Transcript>(ids.map((id) => [id, { messages: [], references: [] }]));
    for (const r of rows) {
      const tr = out.get(r.session_id)!;
      tr.messages.push({ role: r.role, content: r.content, ...parseJson<Record<string, unknown>>(r.extra, {}) });
      if (r.reference !== null) tr.references.push(parseJson<unknown>(r.reference, {}));
    }
    return out;
  }

  async deleteExchange(sessionId: string, messageId: string, time: number): Promise<'deleted' | 'absent' | 'unanswered' | 'mismatched'> {
    return this.db.tx(async (t) => {
      await t.run('SELECT 1 FROM chat_session WHERE id = $1 FOR UPDATE', [sessionId]);
      const rows = await t.rows<{ seq: number; extra: string }>('SELECT seq, extra FROM chat_message WHERE session_id = $1 ORDER BY seq', [sessionId]);
      const idOf = (r: { extra: string }) => (JSON.parse(r.extra) as { id?: unknown }).id;
      const i = rows.findIndex((r) => idOf(r) === messageId);
      if (i < 0) return 'absent';
      if (i + 1 >= rows.length) return 'unanswered';
      if (idOf(rows[i + 1]!) !== messageId) return 'mismatched';
      await t.run('DELETE FROM chat_message WHERE seq = ANY($1)', [[rows[i]!.seq, rows[i + 1]!.seq]]);
      await t.run('UPDATE chat_session SET update_time = $1 WHERE id = $2', [time, sessionId]);
      return 'deleted';
    });
  }

  async rateAnswer(sessionId: string, messageId: string, thumbup: boolean, feedback: unknown): Promise<void> {
    await this.db.tx(async (t) => {
      const rows = await t.rows<{ seq: number; extra: string }>("SELECT seq, extra FROM chat_message WHERE session_id = $1 AND role = 'assistant' ORDER BY seq FOR UPDATE", [sessionId]);
      const rated = ratedAnswer(rows, messageId, thumbup, feedback);
      if (!rated) return;
      await t.run('UPDATE chat_message SET extra = $1 WHERE seq = $2', [rated.extra, rated.seq]);
    }, { idempotent: true });
  }

  async saveTurn(sessionId: string, turn: { replace: boolean; append: readonly StoredMessage[]; time: number }): Promise<boolean> {
    const ok = await this.db.tx(async (t) => {
      // Locked: two turns of one session append in turn.
      if (!(await t.one('SELECT 1 FROM chat_session WHERE id = $1 FOR UPDATE', [sessionId]))) return false; // deleted while answering
      if (turn.replace) {
        // RAGFlow's pass_all_history_messages: the request's history replaces the stored one.
        await t.run('DELETE FROM chat_message WHERE session_id = $1', [sessionId]);
        faultPoint('completion:history-cleared');
      }
      await this.append(t, sessionId, turn.append);
      faultPoint('completion:messages-appended');
      await t.run('UPDATE chat_session SET update_time = $1 WHERE id = $2', [turn.time, sessionId]);
      return true;
    });
    faultPoint('completion:saved');
    return ok;
  }
}

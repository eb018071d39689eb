/** Chats, their sessions and messages on SQLite (interface/chats.ts). */
import { cachedStatement } from '../db.js';
import type { ChatChanges, ChatListQuery, ChatRow, ChatStore, SessionListQuery, SessionRow, StoredMessage, Transcript } from '../interface/index.js';
import { ratedAnswer } from '../interface/chats.js';
import { faultPoint, parseJson } from '../../util/index.js';
import { setList } from './sql.js';
import type { SqliteConn } from './store.js';

const parse = parseJson;

export class SqliteChats implements ChatStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  private owned(id: string, tenantId: string): ChatRow | undefined {
    if (!id) return undefined;
    // Prepared once per connection: deleting 100,000 ids would otherwise prepare (and hold) 100,000 statements.
    return cachedStatement(this.db, "SELECT * FROM chat WHERE id = ? AND tenant_id = ? AND status = '1'").get(id, tenantId) as ChatRow | undefined;
  }

  async getOwned(id: string, tenantId: string): Promise<ChatRow | undefined> {
    return this.owned(id, tenantId);
  }

  private taken(tenantId: string, name: string, exceptId = ''): boolean {
    return !!this.db.prepare("SELECT 1 FROM chat WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND status = '1' AND id != ?").get(tenantId, name, exceptId);
  }

  async nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean> {
    return this.taken(tenantId, name, exceptId);
  }

  async create(row: ChatRow): Promise<boolean> {
    return this.c.tx(() => {
      if (this.taken(row.tenant_id, row.name)) return false;
      const cols = Object.keys(row);
      this.db.prepare(`INSERT INTO chat (${cols.join(', ')}) VALUES (${cols.map((k) => `@${k}`).join(', ')})`).run(row);
      return true;
    });
  }

  async update(id: string, tenantId: string, changes: ChatChanges, checkName: boolean): Promise<boolean> {
    return this.c.tx(() => {
      if (checkName && changes.name !== undefined && this.taken(tenantId, changes.name, id)) return false;
      const cols = Object.keys(changes);
      this.db.prepare(`UPDATE chat SET ${setList(cols)} WHERE id = @id`).run({ ...changes, id });
      return true;
    });
  }

  async list(q: ChatListQuery): Promise<{ total: number; rows: ChatRow[] }> {
    const where = ["status = '1'", `tenant_id IN (${q.tenantIds.map(() => '?').join(',')})`];
    const args: unknown[] = [...q.tenantIds];
    if (q.id !== undefined) (where.push('id = ?'), args.push(q.id));
    if (q.name !== undefined) (where.push('name = ? COLLATE NOCASE'), args.push(q.name));
    // instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
    if (q.keywords !== undefined) (where.push('instr(LOWER(name), ?) > 0'), args.push(q.keywords));
    const w = where.join(' AND ');
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM chat WHERE ${w}`).get(...args) as { n: number }).n;
    const dir = q.desc ? 'DESC' : 'ASC';
    let sql = `SELECT * FROM chat WHERE ${w} ORDER BY ${q.orderby} ${dir}, rowid ${dir}`;
    if (q.page) (sql += ' LIMIT ? OFFSET ?'), args.push(q.page.limit, q.page.offset);
    return { total, rows: this.db.prepare(sql).all(...args) as ChatRow[] };
  }

  async liveIds(tenantId: string): Promise<string[]> {
    return (this.db.prepare("SELECT id FROM chat WHERE tenant_id = ? AND status = '1'").all(tenantId) as { id: string }[]).map((r) => r.id);
  }

  async softDelete(tenantId: string, ids: readonly string[], time: number): Promise<boolean[]> {
    const out = this.c.tx(() => ids.map((id) => {
      if (!this.owned(id, tenantId)) return false;
      const n = this.db.prepare("UPDATE chat SET status = '0', update_time = ? WHERE id = ?").run(time, id).changes;
      faultPoint('chats.delete:one-deleted');
      return n > 0;
    }));
    faultPoint('chats.delete:committed');
    return out;
  }

  private session(id: string): SessionRow | undefined {
    if (!id) return undefined;
    return cachedStatement(this.db, 'SELECT * FROM chat_session WHERE id = ?').get(id) as SessionRow | undefined;
  }

  async getSession(id: string): Promise<SessionRow | undefined> {
    return this.session(id);
  }

  /** Appends messages (an answer with its reference) to a session; inside the caller's transaction. */
  private append(sessionId: string, msgs: readonly StoredMessage[]): void {
    const ins = this.db.prepare('INSERT INTO chat_message (session_id, role, content, extra, reference) VALUES (?, ?, ?, ?, ?)');
    for (const { role, content, reference, ...extra } of msgs) {
      ins.run(sessionId, role, content, JSON.stringify(extra), reference === undefined ? null : JSON.stringify(reference));
    }
  }

  async createSession(row: SessionRow, messages: readonly StoredMessage[], points: { inserted?: string; committed?: string } = {}): Promise<void> {
    this.c.tx(() => {
      this.db.prepare(`INSERT INTO chat_session (id, chat_id, name, user_id, create_time, update_time)
      VALUES (@id, @chat_id, @name, @user_id, @create_time, @update_time)`).run(row);
      if (points.inserted) faultPoint(points.inserted);
      this.append(row.id, messages);
    });
    if (points.committed) faultPoint(points.committed);
  }

  async listSessions(q: SessionListQuery): Promise<SessionRow[]> {
    const where = ['chat_id = ?'];
    const args: unknown[] = [q.chatId];
    if (q.id !== undefined) (where.push('id = ?'), args.push(q.id));
    if (q.name !== undefined) (where.push('name = ? COLLATE NOCASE'), args.push(q.name));
    if (q.userId !== undefined) (where.push('user_id = ?'), args.push(q.userId));
    const dir = q.desc ? 'DESC' : 'ASC';
    let sql = `SELECT * FROM chat_session WHERE ${where.join(' AND ')} ORDER BY ${q.orderby} ${dir}, rowid ${dir}`;
    if (q.page) (sql += ' LIMIT ? OFFSET ?'), args.push(q.page.limit, q.page.offset);
    return this.db.prepare(sql).all(...args) as SessionRow[];
  }

  async sessionIds(chatId: string): Promise<string[]> {
    return (this.db.prepare('SELECT id FROM chat_session WHERE chat_id = ?').all(chatId) as { id: string }[]).map((r) => r.id);
  }

  async renameSession(id: string, name: string, time: number): Promise<void> {
    this.db.prepare('UPDATE chat_session SET name = ?, update_time = ? WHERE id = ?').run(name, time, id);
  }

  async deleteSessions(chatId: string, ids: readonly string[]): Promise<boolean[]> {
    const out = this.c.tx(() => ids.map((id) => {
      const s = this.session(id);
      if (!s || s.chat_id !== chatId) return false;
      this.db.prepare('DELETE FROM chat_session WHERE id = ?').run(s.id);
      faultPoint('sessions.delete:one-deleted');
      return true;
    }));
    faultPoint('sessions.delete:committed');
    return out;
  }

  async transcripts(sessionIds: readonly string[]): Promise<Map<string, Transcript>> {
    const msgs = this.db.prepare('SELECT role, content, extra FROM chat_message WHERE session_id = ? ORDER BY seq').raw();
    const refs = this.db.prepare('SELECT reference FROM chat_message WHERE session_id = ? AND reference IS NOT NULL ORDER BY seq').pluck();
    const out = new Map<string, Transcript>();
    for (const id of sessionIds) {
      if (out.has(id)) continue;
      const rows = msgs.all(id) as Array<[string, string, string]>;
      out.set(id, {
        messages: rows.map(([role, content, extra]) => ({ role, content, ...parse<Record<string, unknown>>(extra, {}) })),
        references: (refs.all(id) as string[]).map((r) => parse<unknown>(r, {})),
      });
    }
    return out;
  }

  async saveTurn(sessionId: string, turn: { replace: boolean; append: readonly StoredMessage[]; time: number }): Promise<boolean> {
    const ok = this.c.tx(() => {
      if (!this.session(sessionId)) return false; // deleted while answering
      if (turn.replace) {
        // RAGFlow's pass_all_history_messages: the request's history replaces the stored one.
        this.db.prepare('DELETE FROM chat_message WHERE session_id = ?').run(sessionId);
        faultPoint('completion:history-cleared');
      }
      this.append(sessionId, turn.append);
      faultPoint('completion:messages-appended');
      this.db.prepare('UPDATE chat_session SET update_time = ? WHERE id = ?').run(turn.time, sessionId);
      return true;
    });
    faultPoint('completion:saved');
    return ok;
  }

  async deleteExchange(sessionId: string, messageId: string, time: number): Promise<'deleted' | 'absent' | 'unanswered' | 'mismatched'> {
    const db = this.db;
    return this.c.tx(() => {
      const rows = db.prepare('SELECT seq, extra FROM chat_message WHERE session_id = ? ORDER BY seq').all(sessionId) as Array<{ seq: number; extra: string }>;
      const idOf = (r: { extra: string }) => (JSON.parse(r.extra) as { id?: unknown }).id;
      const i = rows.findIndex((r) => idOf(r) === messageId);
      if (i < 0) return 'absent';
      if (i + 1 >= rows.length) return 'unanswered';
      if (idOf(rows[i + 1]!) !== messageId) return 'mismatched';
      db.prepare('DELETE FROM chat_message WHERE seq IN (?, ?)').run(rows[i]!.seq, rows[i + 1]!.seq);
      db.prepare('UPDATE chat_session SET update_time = ? WHERE id = ?').run(time, sessionId);
      return 'deleted';
    });
  }

  async rateAnswer(sessionId: string, messageId: string, thumbup: boolean, feedback: unknown): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      const rows = db.prepare("SELECT seq, extra FROM chat_message WHERE session_id = ? AND role = 'assistant' ORDER BY seq").all(sessionId) as Array<{ seq: number; extra: string }>;
      const rated = ratedAnswer(rows, messageId, thumbup, feedback);
      if (!rated) return;
      db.prepare('UPDATE chat_message SET extra = ? WHERE seq = ?').run(rated.extra, rated.seq);
    });
  }
}

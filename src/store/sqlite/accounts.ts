/** Tenants, users, memberships and API keys on SQLite (interface/accounts.ts). */
import { cachedStatement } from '../db.js';
import type { AccountStore, Ctx, LocalAccountDefaults, NewAccount, NewApiKey, TenantRow, UserRow } from '../interface/index.js';
import { newId, nowMs } from '../../util/index.js';
import type { SqliteConn } from './store.js';

export class SqliteAccounts implements AccountStore {
  constructor(private readonly c: SqliteConn, private readonly readonly: boolean) {}

  private get db() {
    return this.c.db;
  }

  /** ensureLocal, synchronously (the embedded engine opens the store in its constructor). */
  ensureLocalNow(d: LocalAccountDefaults): Ctx {
    const db = this.db;
    const row = db.prepare(`SELECT u.user_id AS userId, u.tenant_id AS tenantId FROM user_tenant u
      WHERE u.role = 'owner' ORDER BY rowid LIMIT 1`).get() as Ctx | undefined;
    if (this.readonly) {
      if (!row) throw new Error(`${db.name} holds no ragloom store yet (no account): nothing to read`);
      return row;
    }
    if (row) {
      // The client's configuration is the tenant's: keep the stored defaults in step with it. The
      // default chat model persists: a client opened without one keeps the stored choice.
      db.prepare('UPDATE tenant SET embd_id = ? WHERE id = ?').run(d.embd_id, row.tenantId);
      if (d.llm_id) db.prepare('UPDATE tenant SET llm_id = ? WHERE id = ?').run(d.llm_id, row.tenantId);
      return row;
    }
    const ctx = { tenantId: newId(), userId: newId() };
    const t = nowMs();
    this.c.tx(() => {
      db.prepare('INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES (?, ?, ?, ?, ?)').run(ctx.tenantId, 'local', d.embd_id, d.llm_id, t);
      db.prepare('INSERT INTO user (id, nickname, create_time) VALUES (?, ?, ?)').run(ctx.userId, 'local', t);
      db.prepare("INSERT INTO user_tenant (user_id, tenant_id, role) VALUES (?, ?, 'owner')").run(ctx.userId, ctx.tenantId);
    });
    return ctx;
  }

  async ensureLocal(d: LocalAccountDefaults): Promise<Ctx> {
    return this.ensureLocalNow(d);
  }

  async tenant(id: string): Promise<TenantRow | undefined> {
    return this.db.prepare('SELECT id, embd_id, llm_id FROM tenant WHERE id = ?').get(id) as TenantRow | undefined;
  }

  async joinedTenants(who: Ctx): Promise<string[]> {
    const others = cachedStatement(this.db, 'SELECT tenant_id FROM user_tenant WHERE user_id = ? AND tenant_id != ?').pluck().all(who.userId, who.tenantId) as string[];
    return [who.tenantId, ...others];
  }

  async nicknames(userIds: readonly string[]): Promise<Map<string, string>> {
    const nick = cachedStatement(this.db, 'SELECT nickname FROM user WHERE id = ?');
    const out = new Map<string, string>();
    for (const id of new Set(userIds)) {
      const r = nick.get(id) as { nickname: string } | undefined;
      if (r) out.set(id, r.nickname);
    }
    return out;
  }

  async ownerNicknames(tenantIds: readonly string[]): Promise<Map<string, string>> {
    const sel = cachedStatement(this.db, "SELECT u.nickname FROM user_tenant ut JOIN user u ON u.id = ut.user_id WHERE ut.tenant_id = ? AND ut.role = 'owner'");
    const out = new Map<string, string>();
    for (const id of new Set(tenantIds)) {
      const r = sel.get(id) as { nickname: string } | undefined;
      if (r) out.set(id, r.nickname);
    }
    return out;
  }

  async getUser(id: string): Promise<UserRow | undefined> {
    return this.db.prepare('SELECT id, nickname, email, is_superuser, create_time FROM user WHERE id = ?').get(id) as UserRow | undefined;
  }

  async isSuperuser(userId: string): Promise<boolean> {
    const r = this.db.prepare('SELECT is_superuser FROM user WHERE id = ?').get(userId) as { is_superuser: number } | undefined;
    return !!r?.is_superuser;
  }

  async emailTaken(email: string): Promise<boolean> {
    return !!this.db.prepare('SELECT 1 FROM user WHERE email = ? COLLATE NOCASE').get(email);
  }

  async role(userId: string, tenantId: string): Promise<string | undefined> {
    return (this.db.prepare('SELECT role FROM user_tenant WHERE user_id = ? AND tenant_id = ?').get(userId, tenantId) as { role: string } | undefined)?.role;
  }

  async setRole(userId: string, tenantId: string, role: string): Promise<void> {
    this.db.prepare('INSERT INTO user_tenant (user_id, tenant_id, role) VALUES (?, ?, ?) ON CONFLICT (user_id, tenant_id) DO UPDATE SET role = excluded.role')
      .run(userId, tenantId, role);
  }

  private insertKey(who: Ctx, key: NewApiKey, time: number): void {
    this.db.prepare('INSERT INTO api_token (token_sha256, tenant_id, user_id, create_time, source, hint) VALUES (?, ?, ?, ?, ?, ?)')
      .run(key.token_sha256, who.tenantId, who.userId, time, key.source, key.hint);
  }

  async addKey(who: Ctx, key: NewApiKey, time: number): Promise<void> {
    this.c.tx(() => this.insertKey(who, key, time));
  }

  async keysOf(who: Ctx): Promise<Array<{ hint: string; source: string; create_time: number }>> {
    return this.db.prepare('SELECT hint, source, create_time FROM api_token WHERE user_id = ? AND tenant_id = ? ORDER BY create_time, rowid')
      .all(who.userId, who.tenantId) as Array<{ hint: string; source: string; create_time: number }>;
  }

  async deleteKey(who: Ctx, tokenSha256: string): Promise<void> {
    this.db.prepare('DELETE FROM api_token WHERE token_sha256 = ? AND tenant_id = ? AND user_id = ?').run(tokenSha256, who.tenantId, who.userId);
  }

  async createAccount(a: NewAccount): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      db.prepare('INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES (?, ?, ?, ?, ?)')
        .run(a.tenant.id, a.tenant.name, a.tenant.embd_id, a.tenant.llm_id, a.create_time);
      db.prepare('INSERT INTO user (id, nickname, email, create_time, password) VALUES (?, ?, ?, ?, ?)')
        .run(a.user.id, a.user.nickname, a.user.email, a.create_time, a.user.password);
      db.prepare("INSERT INTO user_tenant (user_id, tenant_id, role) VALUES (?, ?, 'owner')").run(a.user.id, a.tenant.id);
      this.insertKey({ tenantId: a.tenant.id, userId: a.user.id }, a.key, a.create_time);
    });
  }

  async hasKey(userId: string, source: string): Promise<boolean> {
    return !!this.db.prepare('SELECT 1 FROM api_token WHERE user_id = ? AND source = ?').get(userId, source);
  }

  async makeAdmin(who: Ctx, key: NewApiKey | null, now: number): Promise<void> {
    this.c.tx(() => {
      this.db.prepare('UPDATE user SET is_superuser = 1 WHERE id = ?').run(who.userId);
      if (key) this.insertKey(who, key, now);
    });
  }

  async keyOwner(tokenSha256: string): Promise<Ctx | undefined> {
    const row = this.db.prepare(`SELECT t.tenant_id, t.user_id FROM api_token t JOIN user u ON u.id = t.user_id
    JOIN tenant n ON n.id = t.tenant_id WHERE t.token_sha256 = ?`).get(tokenSha256) as { tenant_id: string; user_id: string } | undefined;
    return row && { tenantId: row.tenant_id, userId: row.user_id };
  }
}

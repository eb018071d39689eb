/** Tenants, users, memberships and API keys on PostgreSQL (interface/accounts.ts). */
import type { AccountStore, Ctx, LocalAccountDefaults, NewAccount, NewApiKey, TenantRow, UserRow } from '../interface/index.js';
import { newId, nowMs } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';

/** Advisory lock key of the local account's creation ('rloc'): two processes opening an empty database make one owner. */
const LOCAL_ACCOUNT_LOCK = 0x726c6f63;

export class PgAccounts implements AccountStore {
  constructor(private readonly db: PgDb, private readonly readonly: boolean) {}

  private firstOwner(q: PgDb | PgTx): Promise<Ctx | undefined> {
    return q.one<Ctx>(`SELECT user_id AS "userId", tenant_id AS "tenantId" FROM user_tenant WHERE role = 'owner' ORDER BY ord LIMIT 1`);
  }

  async ensureLocal(d: LocalAccountDefaults): Promise<Ctx> {
    if (this.readonly) {
      const row = await this.firstOwner(this.db);
      if (!row) throw new Error(`${this.db.target} holds no ragloom store yet (no account): nothing to read`);
      return row;
    }
    return this.db.tx(async (t) => {
      await t.run('SELECT pg_advisory_xact_lock($1)', [LOCAL_ACCOUNT_LOCK]);
      const row = await this.firstOwner(t);
      if (row) {
        // The client's configuration is the tenant's; a client opened without a chat model keeps the stored one.
        await t.run('UPDATE tenant SET embd_id = $1 WHERE id = $2', [d.embd_id, row.tenantId]);
        if (d.llm_id) await t.run('UPDATE tenant SET llm_id = $1 WHERE id = $2', [d.llm_id, row.tenantId]);
        return row;
      }
      const ctx = { tenantId: newId(), userId: newId() };
      const time = nowMs();
      await t.run('INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES ($1, $2, $3, $4, $5)', [ctx.tenantId, 'local', d.embd_id, d.llm_id, time]);
      await t.run('INSERT INTO "user" (id, nickname, create_time) VALUES ($1, $2, $3)', [ctx.userId, 'local', time]);
      await t.run("INSERT INTO user_tenant (user_id, tenant_id, role) VALUES ($1, $2, 'owner')", [ctx.userId, ctx.tenantId]);
      return ctx;
    }, { idempotent: true });
  }

  async tenant(id: string): Promise<TenantRow | undefined> {
    return this.db.one<TenantRow>('SELECT id, embd_id, llm_id FROM tenant WHERE id = $1', [id]);
  }

  async joinedTenants(who: Ctx): Promise<string[]> {
    const others = await this.db.rows<{ tenant_id: string }>('SELECT tenant_id FROM user_tenant WHERE user_id = $1 AND tenant_id <> $2 ORDER BY ord', [who.userId, who.tenantId]);
    return [who.tenantId, ...others.map((r) => r.tenant_id)];
  }

  async nicknames(userIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.db.rows<{ id: string; nickname: string }>('SELECT id, nickname FROM "user" WHERE id = ANY($1)', [[...new Set(userIds)]]);
    return new Map(rows.map((r) => [r.id, r.nickname]));
  }

  async ownerNicknames(tenantIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.db.rows<{ tenant_id: string; nickname: string }>(`SELECT DISTINCT ON (ut.tenant_id) ut.tenant_id, u.nickname
      FROM user_tenant ut JOIN "user" u ON u.id = ut.user_id WHERE ut.tenant_id = ANY($1) AND ut.role = 'owner' ORDER BY ut.tenant_id, ut.ord`, [[...new Set(tenantIds)]]);
    return new Map(rows.map((r) => [r.tenant_id, r.nickname]));
  }

  async getUser(id: string): Promise<UserRow | undefined> {
    return this.db.one<UserRow>('SELECT id, nickname, email, is_superuser, create_time FROM "user" WHERE id = $1', [id]);
  }

  async isSuperuser(userId: string): Promise<boolean> {
    const r = await this.db.one<{ is_superuser: number }>('SELECT is_superuser FROM "user" WHERE id = $1', [userId]);
    return !!r?.is_superuser;
  }

  async emailTaken(email: string): Promise<boolean> {
    return !!(await this.db.one('SELECT 1 FROM "user" WHERE ragloom_nocase(email) = ragloom_nocase($1)', [email]));
  }

  async role(userId: string, tenantId: string): Promise<string | undefined> {
    return (await this.db.one<{ role: string }>('SELECT role FROM user_tenant WHERE user_id = $1 AND tenant_id = $2', [userId, tenantId]))?.role;
  }

  async setRole(userId: string, tenantId: string, role: string): Promise<void> {
    await this.db.run(`INSERT INTO user_tenant (user_id, tenant_id, role) VALUES ($1, $2, $3)
      ON CONFLICT (user_id, tenant_id) DO UPDATE SET role = EXCLUDED.role`, [userId, tenantId, role], { idempotent: true });
  }

  private async insertKey(t: PgTx, who: Ctx, key: NewApiKey, time: number): Promise<void> {
    await t.run('INSERT INTO api_token (token_sha256, tenant_id, user_id, create_time, source, hint) VALUES ($1, $2, $3, $4, $5, $6)',
      [key.token_sha256, who.tenantId, who.userId, time, key.source, key.hint]);
  }

  async createAccount(a: NewAccount): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES ($1, $2, $3, $4, $5)',
        [a.tenant.id, a.tenant.name, a.tenant.embd_id, a.tenant.llm_id, a.create_time]);
      await t.run('INSERT INTO "user" (id, nickname, email, create_time, password) VALUES ($1, $2, $3, $4, $5)',
        [a.user.id, a.user.nickname, a.user.email, a.create_time, a.user.password]);
      await t.run("INSERT INTO user_tenant (user_id, tenant_id, role) VALUES ($1, $2, 'owner')", [a.user.id, a.tenant.id]);
      await this.insertKey(t, { tenantId: a.tenant.id, userId: a.user.id }, a.key, a.create_time);
    });
  }

  async hasKey(userId: string, source: string): Promise<boolean> {
    return !!(await this.db.one('SELECT 1 FROM api_token WHERE user_id = $1 AND source = $2', [userId, source]));
  }

  async makeAdmin(who: Ctx, key: NewApiKey | null, now: number): Promise<void> {
    await this.db.tx(async (t) => {
      await t.run('UPDATE "user" SET is_superuser = 1 WHERE id = $1', [who.userId]);
      if (key) await this.insertKey(t, who, key, now);
    });
  }

  async addKey(who: Ctx, key: NewApiKey, time: number): Promise<void> {
    await this.db.tx((t) => this.insertKey(t, who, key, time));
  }

  async keysOf(who: Ctx): Promise<Array<{ hint: string; source: string; create_time: number }>> {
    return this.db.rows('SELECT hint, source, create_time FROM api_token WHERE user_id = $1 AND tenant_id = $2 ORDER BY create_time, ord', [who.userId, who.tenantId]);
  }

  async deleteKey(who: Ctx, tokenSha256: string): Promise<void> {
    await this.db.run('DELETE FROM api_token WHERE token_sha256 = $1 AND tenant_id = $2 AND user_id = $3', [tokenSha256, who.tenantId, who.userId], { idempotent: true });
  }

  async keyOwner(tokenSha256: string): Promise<Ctx | undefined> {
    const row = await this.db.one<{ tenant_id: string; user_id: string }>(`SELECT t.tenant_id, t.user_id FROM api_token t JOIN "user" u ON u.id = t.user_id
      JOIN tenant n ON n.id = t.tenant_id WHERE t.token_sha256 = $1`, [tokenSha256]);
    return row && { tenantId: row.tenant_id, userId: row.user_id };
  }
}

/**
 * Identity for `ragloom serve`: API keys, users, tenants and their members.
 *
 * - An API key is `ragflow-<43 url-safe chars>` (RAGFlow's `generate_confirmation_token` shape). It
 *   is shown once, when issued; the store keeps only its sha256 (`api_token.token_sha256`), bound to
 *   one user acting in one tenant: a request with that key runs as `ctx = {tenantId, userId}`.
 * - The admin is the store's first (owner) user, the one the embedded Client acts as
 *   (`engine.local`); it is marked `is_superuser`. On a store's first serve it gets a persisted
 *   admin key (`auth.bootstrap` → `first_start: true`). On later serves `auth.bootstrap` issues a
 *   fresh key for the same admin that is held in memory only (its hash), valid until the Api
 *   closes: the persisted key was shown once and cannot be shown again.
 * - `users.create` (admin only) makes a user in a new tenant of its own, with its own key.
 * - `tenants.members.add` (an owner or admin of that tenant) adds a user to a tenant as `normal`
 *   or `admin`; members see the tenant's `team` datasets (RAGFlow's permission model).
 */
import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import type { Engine, Ctx } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { newId, nowMs, formatDateTime } from '../util/index.js';

type P = Record<string, unknown>;

const RESULT_MESSAGE = Symbol.for('ragloom.resultMessage');

/** RAGFlow's API key prefix. */
export const API_KEY_PREFIX = 'ragflow-';

/** A new API key: `ragflow-` + 32 random bytes, base64url (as Python's `secrets.token_urlsafe(32)`). */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** What the store keeps of a key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A password hash (scrypt, N=16384, r=8, p=1, 16-byte salt): `scrypt$<salt b64>$<hash b64>`. */
export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64')}$${scryptSync(password, salt, 32).toString('base64')}`;
}

export function verifyPassword(password: string, stored: string): boolean {
  const [kind, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const want = Buffer.from(hash, 'base64');
  const got = scryptSync(password, Buffer.from(salt, 'base64'), want.length);
  return timingSafeEqual(want, got);
}

/** Keys issued for one open engine only (later serves' admin keys): hash → who. */
const sessionKeys = new WeakMap<Engine, Map<string, Ctx>>();

function insertKey(e: Engine, ctx: Ctx, key: string, source: string): void {
  e.db.prepare('INSERT INTO api_token (token_sha256, tenant_id, user_id, create_time, source, hint) VALUES (?, ?, ?, ?, ?, ?)')
    .run(hashApiKey(key), ctx.tenantId, ctx.userId, nowMs(), source, `${key.slice(0, API_KEY_PREFIX.length + 4)}…`);
}

export interface BootstrapResult {
  /** The key, in clear: shown now, never again. */
  api_key: string;
  /** The store had no admin key yet: this one is persisted. */
  first_start: boolean;
  /** Stored in `api_token` (true), or held in memory until the Api closes (false). */
  persisted: boolean;
  user_id: string;
  tenant_id: string;
}

/**
 * `auth.bootstrap`: makes the store's first owner user the admin and gives it a key — persisted on
 * the first serve (or when `new_admin_key: true`), else valid only while this Api is open.
 */
export function bootstrapAdmin(e: Engine, p: P): BootstrapResult {
  const admin = e.local;
  const key = newApiKey();
  const persistedBefore = !!e.db.prepare("SELECT 1 FROM api_token WHERE user_id = ? AND source = 'admin'").get(admin.userId);
  const persist = !persistedBefore || p.new_admin_key === true;
  e.tx(() => {
    e.db.prepare('UPDATE user SET is_superuser = 1 WHERE id = ?').run(admin.userId);
    if (persist) insertKey(e, admin, key, 'admin');
  });
  if (!persist) {
    let m = sessionKeys.get(e);
    if (!m) sessionKeys.set(e, (m = new Map()));
    m.set(hashApiKey(key), { ...admin });
  }
  return { api_key: key, first_start: !persistedBefore, persisted: persist, user_id: admin.userId, tenant_id: admin.tenantId };
}

/** `auth.verify`: who a key belongs to (`{tenant_id, user_id}`), or null for an unknown key. */
export function verifyApiKey(e: Engine, p: P): { tenant_id: string; user_id: string } | null {
  const key = p.api_key;
  if (typeof key !== 'string' || !key) return null;
  const h = hashApiKey(key);
  const s = sessionKeys.get(e)?.get(h);
  if (s) return { tenant_id: s.tenantId, user_id: s.userId };
  const row = e.db.prepare(`SELECT t.tenant_id, t.user_id FROM api_token t JOIN user u ON u.id = t.user_id
    JOIN tenant n ON n.id = t.tenant_id WHERE t.token_sha256 = ?`).get(h) as { tenant_id: string; user_id: string } | undefined;
  return row ?? null;
}

const noAuthorization = (): never => {
  throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
};
const missing = (keys: string[]): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, `required argument are missing: ${keys.join(',')}; `);
};

// RAGFlow's user_add check (\w is Unicode-aware in Python).
const EMAIL = /^[\p{L}\p{N}_.-]+@([\p{L}\p{N}_-]+\.)+[\p{L}\p{N}_-]{2,}$/u;

/**
 * `users.create` `{email, nickname, password?}` (admin key): a user in a new tenant of its own,
 * returned with its `api_key` (shown once). Errors: 109 `No authorization.` (not an admin),
 * 101 `required argument are missing: …`, 103 `Invalid email address: X!`,
 * 103 `Email: X has already registered!`.
 */
export function createUser(e: Engine, ctx: Ctx, p: P): Record<string, unknown> {
  const caller = e.db.prepare('SELECT is_superuser FROM user WHERE id = ?').get(ctx.userId) as { is_superuser: number } | undefined;
  if (!caller?.is_superuser) noAuthorization();
  const absent = ['email', 'nickname'].filter((k) => p[k] === undefined);
  if (absent.length) missing(absent);
  if (typeof p.email !== 'string' || !EMAIL.test(p.email)) throw new ApiError(RetCode.OPERATING_ERROR, `Invalid email address: ${pyStr(p.email)}!`);
  if (typeof p.nickname !== 'string' || !p.nickname.trim()) throw new ApiError(RetCode.ARGUMENT_ERROR, '`nickname` should be a non-empty string.');
  if (p.password !== undefined && p.password !== null && typeof p.password !== 'string') throw new ApiError(RetCode.ARGUMENT_ERROR, '`password` should be a string.');
  const email = p.email;
  const nickname = p.nickname.trim();
  if (e.db.prepare('SELECT 1 FROM user WHERE email = ? COLLATE NOCASE').get(email)) {
    throw new ApiError(RetCode.OPERATING_ERROR, `Email: ${email} has already registered!`);
  }
  const home = e.tenant(e.local.tenantId);
  const user: Ctx = { tenantId: newId(), userId: newId() };
  const key = newApiKey();
  const t = nowMs();
  e.tx(() => {
    e.db.prepare('INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES (?, ?, ?, ?, ?)')
      .run(user.tenantId, `${nickname}'s Kingdom`, home.embd_id, home.llm_id, t);
    e.db.prepare('INSERT INTO user (id, nickname, email, create_time, password) VALUES (?, ?, ?, ?, ?)')
      .run(user.userId, nickname, email, t, typeof p.password === 'string' && p.password ? hashPassword(p.password) : '');
    e.db.prepare("INSERT INTO user_tenant (user_id, tenant_id, role) VALUES (?, ?, 'owner')").run(user.userId, user.tenantId);
    insertKey(e, user, key, 'user');
  });
  const out = {
    id: user.userId, email, nickname, tenant_id: user.tenantId, is_superuser: false,
    create_time: t, create_date: formatDateTime(t), api_key: key,
  };
  Object.defineProperty(out, RESULT_MESSAGE, { value: `${nickname}, welcome aboard!`, enumerable: false });
  return out;
}

const ROLES = ['normal', 'admin'] as const;

/**
 * `tenants.members.add` `{tenant_id, user_id, role = 'normal'}` (an owner or admin of the tenant):
 * adds the user to the tenant, or changes a member's role. Errors: 109 `No authorization.`,
 * 101 `required argument are missing: user_id; ` / `` `role` must be 'normal' or 'admin'. ``,
 * 102 `User not found.` / `X is the owner of the team.` / `X is already in the team.`.
 */
export function addMember(e: Engine, ctx: Ctx, p: P): Record<string, unknown> {
  const tenantId = typeof p.tenant_id === 'string' ? p.tenant_id : '';
  const mine = e.db.prepare('SELECT role FROM user_tenant WHERE user_id = ? AND tenant_id = ?').get(ctx.userId, tenantId) as { role: string } | undefined;
  if (!mine || (mine.role !== 'owner' && mine.role !== 'admin')) noAuthorization();
  if (p.user_id === undefined) missing(['user_id']);
  const role = p.role === undefined || p.role === null ? 'normal' : p.role;
  if (!(ROLES as readonly unknown[]).includes(role)) throw new ApiError(RetCode.ARGUMENT_ERROR, "`role` must be 'normal' or 'admin'.");
  const user = e.db.prepare('SELECT id, nickname, email FROM user WHERE id = ?').get(pyStr(p.user_id)) as { id: string; nickname: string; email: string } | undefined;
  if (!user) throw new ApiError(RetCode.DATA_ERROR, 'User not found.');
  const who = user.email || user.id;
  const cur = e.db.prepare('SELECT role FROM user_tenant WHERE user_id = ? AND tenant_id = ?').get(user.id, tenantId) as { role: string } | undefined;
  if (cur?.role === 'owner') throw new ApiError(RetCode.DATA_ERROR, `${who} is the owner of the team.`);
  if (cur?.role === role) throw new ApiError(RetCode.DATA_ERROR, `${who} is already in the team.`);
  e.db.prepare('INSERT INTO user_tenant (user_id, tenant_id, role) VALUES (?, ?, ?) ON CONFLICT (user_id, tenant_id) DO UPDATE SET role = excluded.role')
    .run(user.id, tenantId, role);
  return { tenant_id: tenantId, user_id: user.id, nickname: user.nickname, email: user.email, role };
}

/**
 * `GET /system/tokens`: the caller's API keys in its tenant. The store keeps no key in clear, so
 * `token` is null and `hint` shows its first characters (RAGFlow lists the keys themselves).
 */
export function listTokens(e: Engine, ctx: Ctx): Record<string, unknown>[] {
  const rows = e.db.prepare('SELECT hint, source, create_time FROM api_token WHERE user_id = ? AND tenant_id = ? ORDER BY create_time, rowid')
    .all(ctx.userId, ctx.tenantId) as Array<{ hint: string; source: string; create_time: number }>;
  return rows.map((r) => ({
    tenant_id: ctx.tenantId, token: null, hint: r.hint, beta: null, dialog_id: null, source: r.source || null,
    create_time: r.create_time, create_date: formatDateTime(r.create_time), update_time: null, update_date: null,
  }));
}

/** `POST /system/tokens`: a new key for the caller in its tenant, in clear this once. */
export function newToken(e: Engine, ctx: Ctx): Record<string, unknown> {
  const key = newApiKey();
  e.tx(() => insertKey(e, ctx, key, 'user'));
  const t = nowMs();
  return { tenant_id: ctx.tenantId, token: key, beta: null, create_time: t, create_date: formatDateTime(t), update_time: null, update_date: null };
}

/** `DELETE /system/tokens/{token}`: revokes one of the caller's keys in its tenant (an unknown key too answers `true`, as RAGFlow). */
export function deleteToken(e: Engine, ctx: Ctx, token: string): true {
  e.db.prepare('DELETE FROM api_token WHERE token_sha256 = ? AND tenant_id = ? AND user_id = ?').run(hashApiKey(token), ctx.tenantId, ctx.userId);
  sessionKeys.get(e)?.delete(hashApiKey(token));
  return true;
}

/** `GET /users/me`: the caller (RAGFlow's `to_safe_dict`: no password, no access token). */
export function currentUser(e: Engine, ctx: Ctx): Record<string, unknown> {
  const u = e.db.prepare('SELECT id, nickname, email, is_superuser, create_time FROM user WHERE id = ?').get(ctx.userId) as
    { id: string; nickname: string; email: string; is_superuser: number; create_time: number } | undefined;
  if (!u) throw new ApiError(RetCode.DATA_ERROR, 'User not found.');
  return {
    id: u.id, nickname: u.nickname, email: u.email, avatar: null, is_superuser: !!u.is_superuser, is_active: '1', status: '1',
    tenant_id: ctx.tenantId, create_time: u.create_time, create_date: formatDateTime(u.create_time),
  };
}

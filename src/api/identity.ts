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
import type { NewApiKey } from '../store/index.js';

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

/** What the store keeps of a key: its hash, where it came from, a short hint. */
function storedKey(key: string, source: string): NewApiKey {
  return { token_sha256: hashApiKey(key), source, hint: `${key.slice(0, API_KEY_PREFIX.length + 4)}…` };
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
export async function bootstrapAdmin(e: Engine, p: P): Promise<BootstrapResult> {
  const admin = e.local;
  const key = newApiKey();
  const persistedBefore = await e.store.accounts.hasKey(admin.userId, 'admin');
  const persist = !persistedBefore || p.new_admin_key === true;
  await e.store.accounts.makeAdmin(admin, persist ? storedKey(key, 'admin') : null, nowMs());
  if (!persist) {
    let m = sessionKeys.get(e);
    if (!m) sessionKeys.set(e, (m = new Map()));
    m.set(hashApiKey(key), { ...admin });
  }
  return { api_key: key, first_start: !persistedBefore, persisted: persist, user_id: admin.userId, tenant_id: admin.tenantId };
}

/** `auth.verify`: who a key belongs to (`{tenant_id, user_id}`), or null for an unknown key. */
export async function verifyApiKey(e: Engine, p: P): Promise<{ tenant_id: string; user_id: string } | null> {
  const key = p.api_key;
  if (typeof key !== 'string' || !key) return null;
  const h = hashApiKey(key);
  const s = sessionKeys.get(e)?.get(h);
  if (s) return { tenant_id: s.tenantId, user_id: s.userId };
  const who = await e.store.accounts.keyOwner(h);
  return who ? { tenant_id: who.tenantId, user_id: who.userId } : null;
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
export async function createUser(e: Engine, ctx: Ctx, p: P): Promise<Record<string, unknown>> {
  if (!(await e.store.accounts.isSuperuser(ctx.userId))) noAuthorization();
  const absent = ['email', 'nickname'].filter((k) => p[k] === undefined);
  if (absent.length) missing(absent);
  if (typeof p.email !== 'string' || !EMAIL.test(p.email)) throw new ApiError(RetCode.OPERATING_ERROR, `Invalid email address: ${pyStr(p.email)}!`);
  if (typeof p.nickname !== 'string' || !p.nickname.trim()) throw new ApiError(RetCode.ARGUMENT_ERROR, '`nickname` should be a non-empty string.');
  if (p.password !== undefined && p.password !== null && typeof p.password !== 'string') throw new ApiError(RetCode.ARGUMENT_ERROR, '`password` should be a string.');
  const email = p.email;
  const nickname = p.nickname.trim();
  if (await e.store.accounts.emailTaken(email)) {
    throw new ApiError(RetCode.OPERATING_ERROR, `Email: ${email} has already registered!`);
  }
  const home = await e.tenantRow(e.local.tenantId);
  const user: Ctx = { tenantId: newId(), userId: newId() };
  const key = newApiKey();
  const t = nowMs();
  await e.store.accounts.createAccount({
    tenant: { id: user.tenantId, name: `${nickname}'s Kingdom`, embd_id: home.embd_id, llm_id: home.llm_id },
    user: { id: user.userId, nickname, email, password: typeof p.password === 'string' && p.password ? hashPassword(p.password) : '' },
    key: storedKey(key, 'user'), create_time: t,
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
export async function addMember(e: Engine, ctx: Ctx, p: P): Promise<Record<string, unknown>> {
  const tenantId = typeof p.tenant_id === 'string' ? p.tenant_id : '';
  const mine = await e.store.accounts.role(ctx.userId, tenantId);
  if (mine !== 'owner' && mine !== 'admin') noAuthorization();
  if (p.user_id === undefined) missing(['user_id']);
  const role = p.role === undefined || p.role === null ? 'normal' : p.role;
  if (!(ROLES as readonly unknown[]).includes(role)) throw new ApiError(RetCode.ARGUMENT_ERROR, "`role` must be 'normal' or 'admin'.");
  const user = await e.store.accounts.getUser(pyStr(p.user_id));
  if (!user) throw new ApiError(RetCode.DATA_ERROR, 'User not found.');
  const who = user.email || user.id;
  const cur = await e.store.accounts.role(user.id, tenantId);
  if (cur === 'owner') throw new ApiError(RetCode.DATA_ERROR, `${who} is the owner of the team.`);
  if (cur === role) throw new ApiError(RetCode.DATA_ERROR, `${who} is already in the team.`);
  await e.store.accounts.setRole(user.id, tenantId, role as string);
  return { tenant_id: tenantId, user_id: user.id, nickname: user.nickname, email: user.email, role };
}

/**
 * `GET /system/tokens`: the caller's API keys in its tenant. The store keeps no key in clear, so
 * `token` is null and `hint` shows its first characters (RAGFlow lists the keys themselves).
 */
export async function listTokens(e: Engine, ctx: Ctx): Promise<Record<string, unknown>[]> {
  const rows = await e.store.accounts.keysOf(ctx);
  return rows.map((r) => ({
    tenant_id: ctx.tenantId, token: null, hint: r.hint, beta: null, dialog_id: null, source: r.source || null,
    create_time: r.create_time, create_date: formatDateTime(r.create_time), update_time: null, update_date: null,
  }));
}

/** `POST /system/tokens`: a new key for the caller in its tenant, in clear this once. */
export async function newToken(e: Engine, ctx: Ctx): Promise<Record<string, unknown>> {
  const key = newApiKey();
  await e.store.accounts.addKey(ctx, storedKey(key, 'user'), nowMs());
  const t = nowMs();
  return { tenant_id: ctx.tenantId, token: key, beta: null, create_time: t, create_date: formatDateTime(t), update_time: null, update_date: null };
}

/** `DELETE /system/tokens/{token}`: revokes one of the caller's keys in its tenant (an unknown key too answers `true`, as RAGFlow). */
export async function deleteToken(e: Engine, ctx: Ctx, token: string): Promise<true> {
  await e.store.accounts.deleteKey(ctx, hashApiKey(token));
  sessionKeys.get(e)?.delete(hashApiKey(token));
  return true;
}

/** `GET /users/me`: the caller (RAGFlow's `to_safe_dict`: no password, no access token). */
export async function currentUser(e: Engine, ctx: Ctx): Promise<Record<string, unknown>> {
  const u = await e.store.accounts.getUser(ctx.userId);
  if (!u) throw new ApiError(RetCode.DATA_ERROR, 'User not found.');
  return {
    id: u.id, nickname: u.nickname, email: u.email, avatar: null, is_superuser: !!u.is_superuser, is_active: '1', status: '1',
    tenant_id: ctx.tenantId, create_time: u.create_time, create_date: formatDateTime(u.create_time),
  };
}

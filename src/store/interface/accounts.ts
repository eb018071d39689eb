/** Tenants, users, their memberships and API keys (tables tenant, user, user_tenant, api_token). */

/** Who is calling: every operation runs for one user inside one tenant. */
export interface Ctx {
  tenantId: string;
  userId: string;
}

export interface TenantRow {
  id: string;
  embd_id: string;
  llm_id: string;
}

/** The defaults a store's local owner account is opened with (the embedded Client's configuration). */
export interface LocalAccountDefaults {
  /** `name@factory` of the default embedding model: stored on the tenant at every open. */
  embd_id: string;
  /** `name@factory` of the default chat model; '' keeps the stored one (a new tenant gets ''). */
  llm_id: string;
}

export interface UserRow {
  id: string;
  nickname: string;
  email: string;
  is_superuser: number;
  create_time: number;
}

/** A user in a new tenant of its own, with its first API key (hash), as `users.create` makes it. */
export interface NewAccount {
  tenant: { id: string; name: string; embd_id: string; llm_id: string };
  user: { id: string; nickname: string; email: string; password: string };
  key: NewApiKey;
  create_time: number;
}

/** What the store keeps of an API key: its sha256, never the key. */
export interface NewApiKey {
  token_sha256: string;
  /** 'admin' | 'user' */
  source: string;
  /** A short prefix to tell keys apart. */
  hint: string;
}

export interface AccountStore {
  /**
   * The store's local owner (the first owner user, as the embedded Client acts), created with
   * `defaults` when there is none; an existing tenant's `embd_id` (and `llm_id` when not '') is
   * set to `defaults`. A read-only store never writes: it rejects when there is no account.
   */
  ensureLocal(defaults: LocalAccountDefaults): Promise<Ctx>;
  tenant(id: string): Promise<TenantRow | undefined>;
  /** The tenants the user belongs to, `ownTenant` first (RAGFlow's `UserTenantService.query(user_id=)`). */
  joinedTenants(who: Ctx): Promise<string[]>;
  /** Nicknames of users, by id (unknown ids absent). */
  nicknames(userIds: readonly string[]): Promise<Map<string, string>>;
  /** The nickname of each tenant's owner (tenants without one absent). */
  ownerNicknames(tenantIds: readonly string[]): Promise<Map<string, string>>;
  getUser(id: string): Promise<UserRow | undefined>;
  isSuperuser(userId: string): Promise<boolean>;
  /** An e-mail already registered (compared case-insensitively). */
  emailTaken(email: string): Promise<boolean>;
  /** The user's role in the tenant ('owner' | 'admin' | 'normal'), or undefined. */
  role(userId: string, tenantId: string): Promise<string | undefined>;
  /** Adds the user to the tenant with `role`, or changes its role there. */
  setRole(userId: string, tenantId: string, role: string): Promise<void>;
  /** Tenant, user, owner membership and key, in one transaction. */
  createAccount(a: NewAccount): Promise<void>;
  /** Whether the user has a key of this source ('admin'). */
  hasKey(userId: string, source: string): Promise<boolean>;
  /** Marks the user the admin and, with `key`, stores that key; one transaction. */
  makeAdmin(who: Ctx, key: NewApiKey | null, now: number): Promise<void>;
  /** Stores another API key of the user in the tenant. */
  addKey(who: Ctx, key: NewApiKey, time: number): Promise<void>;
  /** The user's keys in the tenant (what is kept of them), oldest first. */
  keysOf(who: Ctx): Promise<Array<{ hint: string; source: string; create_time: number }>>;
  /** Revokes a key (by its sha256) of the user in the tenant; an unknown one changes nothing. */
  deleteKey(who: Ctx, tokenSha256: string): Promise<void>;
  /** Who a key (by its sha256) acts as; undefined when unknown or its user or tenant is gone. */
  keyOwner(tokenSha256: string): Promise<Ctx | undefined>;
}

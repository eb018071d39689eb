import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore } from './harness.js';
import { EMBD, seedOtherTenant, seedTenant } from './seed.js';

const key = (n: string) => ({ token_sha256: `sha-${n}`, source: 'user', hint: `ragflow-${n}…` });

export function accountsContract(f: StoreFactory): void {
  describe('AccountStore', () => {
    const { s, extra } = freshStore(f);

    test('ensureLocal: one owner account, created once; its defaults follow every open, an empty llm_id keeps the stored one', async () => {
      const a = await s().accounts.ensureLocal({ embd_id: 'a@F', llm_id: 'chat@F' });
      const b = await s().accounts.ensureLocal({ embd_id: 'b@F', llm_id: '' });
      expect(b).toEqual(a);
      expect(await s().accounts.tenant(a.tenantId)).toEqual({ id: a.tenantId, embd_id: 'b@F', llm_id: 'chat@F' });
      await s().accounts.ensureLocal({ embd_id: 'b@F', llm_id: 'other@F' });
      expect((await s().accounts.tenant(a.tenantId))!.llm_id).toBe('other@F');
      expect(await s().accounts.role(a.userId, a.tenantId)).toBe('owner');
      expect(await s().accounts.tenant('nope')).toBeUndefined();
    });

    test('ensureLocal on a read-only connection: the account when there is one, a rejection when there is none', async () => {
      const ro = await f.connect(s().locator, { readonly: true });
      extra(ro);
      await expect(ro.accounts.ensureLocal({ embd_id: EMBD, llm_id: '' })).rejects.toThrow(/no account/);
      const who = await s().accounts.ensureLocal({ embd_id: EMBD, llm_id: '' });
      expect(await ro.accounts.ensureLocal({ embd_id: 'other@F', llm_id: '' })).toEqual(who);
      expect((await s().accounts.tenant(who.tenantId))!.embd_id).toBe(EMBD); // nothing written through it
    });

    test('createAccount, roles, nicknames, e-mails (case-insensitive), superusers and keys', async () => {
      const local = await s().accounts.ensureLocal({ embd_id: EMBD, llm_id: '' });
      const u = { tenantId: newId(), userId: newId() };
      await s().accounts.createAccount({
        tenant: { id: u.tenantId, name: "ann's Kingdom", embd_id: EMBD, llm_id: '' }, user: { id: u.userId, nickname: 'ann', email: 'Ann@Example.com', password: '' },
        key: key('ann'), create_time: 1,
      });
      expect(await s().accounts.getUser(u.userId)).toMatchObject({ id: u.userId, nickname: 'ann', email: 'Ann@Example.com', is_superuser: 0 });
      expect(await s().accounts.getUser('nope')).toBeUndefined();
      expect(await s().accounts.emailTaken('ann@example.COM')).toBe(true);
      expect(await s().accounts.emailTaken('bob@example.com')).toBe(false);
      expect(await s().accounts.keyOwner('sha-ann')).toEqual(u);
      expect(await s().accounts.keyOwner('sha-nobody')).toBeUndefined();
      expect(await s().accounts.hasKey(u.userId, 'user')).toBe(true);
      expect(await s().accounts.hasKey(u.userId, 'admin')).toBe(false);
      expect(await s().accounts.role(u.userId, u.tenantId)).toBe('owner');
      expect(await s().accounts.role(u.userId, local.tenantId)).toBeUndefined();
      await s().accounts.setRole(u.userId, local.tenantId, 'normal');
      await s().accounts.setRole(u.userId, local.tenantId, 'admin');
      expect(await s().accounts.role(u.userId, local.tenantId)).toBe('admin');
      expect(await s().accounts.joinedTenants(u)).toEqual([u.tenantId, local.tenantId]);
      expect(await s().accounts.joinedTenants(local)).toEqual([local.tenantId]);
      expect(await s().accounts.nicknames([u.userId, local.userId, 'nope', u.userId])).toEqual(new Map([[u.userId, 'ann'], [local.userId, 'local']]));
      expect(await s().accounts.ownerNicknames([u.tenantId, local.tenantId, 'nope'])).toEqual(new Map([[u.tenantId, 'ann'], [local.tenantId, 'local']]));
      // A second account with the same e-mail is refused by the store, and nothing of it is written.
      const dup = { tenantId: newId(), userId: newId() };
      await expect(s().accounts.createAccount({
        tenant: { id: dup.tenantId, name: 'x', embd_id: EMBD, llm_id: '' }, user: { id: dup.userId, nickname: 'x', email: 'ANN@example.com', password: '' },
        key: key('x'), create_time: 2,
      })).rejects.toThrow();
      expect(await s().accounts.tenant(dup.tenantId)).toBeUndefined();
      expect(await s().accounts.keyOwner('sha-x')).toBeUndefined();
    });

    test('makeAdmin: the superuser flag, with or without a stored key', async () => {
      const who = await s().accounts.ensureLocal({ embd_id: EMBD, llm_id: '' });
      expect(await s().accounts.isSuperuser(who.userId)).toBe(false);
      await s().accounts.makeAdmin(who, null, 5);
      expect(await s().accounts.isSuperuser(who.userId)).toBe(true);
      expect(await s().accounts.hasKey(who.userId, 'admin')).toBe(false);
      await s().accounts.makeAdmin(who, { token_sha256: 'sha-admin', source: 'admin', hint: 'h' }, 6);
      expect(await s().accounts.hasKey(who.userId, 'admin')).toBe(true);
      expect(await s().accounts.keyOwner('sha-admin')).toEqual(who);
      expect(await s().accounts.isSuperuser('nope')).toBe(false);
    });

    test('API keys: addKey, keysOf (oldest first, only the user\'s in that tenant), deleteKey; probe reads every part', async () => {
      const who = await seedTenant(s());
      const other = await seedOtherTenant(s());
      await s().accounts.addKey(who, { token_sha256: 'k1', source: 'user', hint: 'rag-1…' }, 10);
      await s().accounts.addKey(who, { token_sha256: 'k2', source: '', hint: 'rag-2…' }, 20);
      expect(await s().accounts.keysOf(who)).toEqual([{ hint: 'rag-1…', source: 'user', create_time: 10 }, { hint: 'rag-2…', source: '', create_time: 20 }]);
      expect(await s().accounts.keyOwner('k2')).toEqual(who);
      await s().accounts.deleteKey(other, 'k1'); // not theirs: nothing happens
      await s().accounts.deleteKey(who, 'k1');
      await s().accounts.deleteKey(who, 'unknown');
      expect((await s().accounts.keysOf(who)).map((k) => k.hint)).toEqual(['rag-2…']);
      expect(await s().accounts.keyOwner('k1')).toBeUndefined();
      for (const part of ['records', 'search', 'files'] as const) await expect(s().probe(part)).resolves.toBeUndefined();
    });
  });
}

import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import type { NewSearchApp } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore, inChild } from './harness.js';
import { seedOtherTenant, seedTenant } from './seed.js';

const app = (tenant: string, name: string, t: number): NewSearchApp => ({
  id: newId(), tenant_id: tenant, name, description: '', avatar: '', search_config: '{"kb_ids":[]}', created_by: 'u', create_time: t, update_time: t,
});

export function searchAppsContract(f: StoreFactory): void {
  describe('SearchAppStore', () => {
    const { s } = freshStore(f);

    test('create makes the name free in its tenant (case-insensitively); get, nameTaken, update, delete', async () => {
      const who = await seedTenant(s());
      const other = await seedOtherTenant(s());
      const a = app(who.tenantId, 'Finder', 1);
      expect(await s().searchApps.create(a)).toBe('Finder');
      expect(await s().searchApps.create(app(who.tenantId, 'finder', 2))).toBe('finder(1)');
      expect(await s().searchApps.create(app(other.tenantId, 'finder', 3))).toBe('finder');
      expect(await s().searchApps.get(a.id)).toEqual({ ...a, status: '1' });
      expect(await s().searchApps.get('nope')).toBeUndefined();
      expect(await s().searchApps.nameTaken(who.tenantId, 'FINDER')).toBe(true);
      expect(await s().searchApps.nameTaken(who.tenantId, 'other')).toBe(false);
      await s().searchApps.update(a.id, { name: 'Renamed', search_config: '{"kb_ids":["x"]}', update_time: 9 });
      expect(await s().searchApps.get(a.id)).toMatchObject({ name: 'Renamed', search_config: '{"kb_ids":["x"]}', update_time: 9, description: '' });
      await s().searchApps.delete(a.id);
      expect(await s().searchApps.get(a.id)).toBeUndefined();
      expect(await s().searchApps.nameTaken(who.tenantId, 'renamed')).toBe(false);
    });

    test('list: the owners\' apps, keywords, order and page, the total of all', async () => {
      const who = await seedTenant(s());
      const other = await seedOtherTenant(s());
      for (const [i, n] of ['alpha one', 'beta', 'Alpha two'].entries()) await s().searchApps.create(app(who.tenantId, n, 10 + i));
      await s().searchApps.create(app(other.tenantId, 'alpha theirs', 20));
      const names = async (q: object) => (await s().searchApps.list({ tenantIds: [who.tenantId], orderby: 'create_time', desc: false, ...q })).rows.map((r) => r.name);
      expect(await names({})).toEqual(['alpha one', 'beta', 'Alpha two']);
      expect(await names({ keywords: 'alpha', desc: true })).toEqual(['Alpha two', 'alpha one']);
      expect(await names({ tenantIds: [who.tenantId, other.tenantId], keywords: 'alpha' })).toEqual(['alpha one', 'Alpha two', 'alpha theirs']);
      expect(await names({ orderby: 'name' })).toEqual(['alpha one', 'Alpha two', 'beta']); // names compare case-insensitively
      const page = await s().searchApps.list({ tenantIds: [who.tenantId], orderby: 'create_time', desc: false, page: { limit: 1, offset: 1 } });
      expect([page.total, page.rows.map((r) => r.name)]).toEqual([3, ['beta']]);
    });

    test('two processes creating one name at once never get the same name', async () => {
      const who = await seedTenant(s());
      const at = Date.now() + 1500;
      const [x, y] = await Promise.all([0, 1].map(() => inChild<string[]>(s().locator, 'searchApps.create', { tenant: who.tenantId, name: 'race', n: 10, at })));
      expect(new Set([...x!, ...y!].map((n) => n.toLowerCase())).size).toBe(20);
    }, 60_000);
  });
}

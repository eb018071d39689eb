import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore, inChild } from './harness.js';
import { chunkOf, seedDataset, seedDocuments, seedOtherTenant, seedTenant } from './seed.js';

export function datasetsContract(f: StoreFactory): void {
  describe('DatasetStore', () => {
    const { s } = freshStore(f);

    test('create makes the name free (case-insensitively) in one transaction; get, getOwned, getVisible, exists, nameTaken', async () => {
      const who = await seedTenant(s());
      const a = await seedDataset(s(), who, 'Notes');
      const b = await seedDataset(s(), who, 'notes');
      const c = await seedDataset(s(), who, 'NOTES');
      expect([a.name, b.name, c.name]).toEqual(['Notes', 'notes(1)', 'NOTES(2)']);
      expect(await s().datasets.nameTaken(who.tenantId, 'nOtEs')).toBe(true);
      expect(await s().datasets.nameTaken(who.tenantId, 'notes', a.id)).toBe(false); // only a has it
      expect(await s().datasets.nameTaken(who.tenantId, 'notes(1)', a.id)).toBe(true);
      expect(await s().datasets.nameTaken(who.tenantId, 'other')).toBe(false);
      expect(await s().datasets.exists(a.id)).toBe(true);
      expect(await s().datasets.exists(newId())).toBe(false);
      expect(await s().datasets.getOwned(a.id, who.tenantId)).toEqual(a);
      expect(await s().datasets.getOwned(a.id, 'another tenant')).toBeUndefined();
      expect(a).toMatchObject({ tenant_id: who.tenantId, status: '1', doc_num: 0, chunk_num: 0, token_num: 0, pagerank: 0, permission: 'me' });
      // Another tenant sees it only when it is shared with the team and that tenant's user is a member.
      const other = await seedOtherTenant(s());
      expect(await s().datasets.getVisible(a.id, other)).toBeUndefined();
      await s().datasets.update(a.id, { permission: 'team' });
      expect(await s().datasets.getVisible(a.id, other)).toBeUndefined();
      await s().accounts.setRole(other.userId, who.tenantId, 'normal');
      expect((await s().datasets.getVisible(a.id, other))?.id).toBe(a.id);
      expect((await s().datasets.getVisible(a.id, who))?.id).toBe(a.id);
    });

    test('getOwnedMany and getVisibleMany: of the ids given, the owned / readable ones by id (any status), the others absent', async () => {
      const who = await seedTenant(s());
      const a = await seedDataset(s(), who, 'a');
      const b = await seedDataset(s(), who, 'b');
      const other = await seedOtherTenant(s());
      const theirs = await seedDataset(s(), other, 'theirs');
      const shared = await seedDataset(s(), other, 'shared', { permission: 'team' });
      const ghost = newId();
      const owned = await s().datasets.getOwnedMany([b.id, theirs.id, ghost, a.id, b.id], who.tenantId);
      expect(new Set(owned.keys())).toEqual(new Set([a.id, b.id]));
      expect(owned.get(a.id)).toEqual(a);
      expect((await s().datasets.getOwnedMany([a.id, theirs.id], other.tenantId)).has(theirs.id)).toBe(true);
      expect((await s().datasets.getOwnedMany([], who.tenantId)).size).toBe(0);
      // Readable: one's own, and a team dataset of a tenant one joined (not before joining; never a 'me' one).
      const ids = [a.id, theirs.id, shared.id, ghost];
      expect(new Set((await s().datasets.getVisibleMany(ids, who)).keys())).toEqual(new Set([a.id]));
      await s().accounts.setRole(who.userId, other.tenantId, 'normal');
      const visible = await s().datasets.getVisibleMany(ids, who);
      expect(new Set(visible.keys())).toEqual(new Set([a.id, shared.id]));
      expect(visible.get(shared.id)).toEqual(shared);
      // Each agrees with its single-id form.
      for (const id of ids) {
        expect(visible.get(id)).toEqual(await s().datasets.getVisible(id, who));
        expect(owned.get(id)).toEqual(await s().datasets.getOwned(id, who.tenantId));
      }
    });

    test('list: visible live datasets, filters, order and pages; runCounts; live; idsOfTenant', async () => {
      const who = await seedTenant(s());
      const ds = [];
      for (let i = 0; i < 5; i++) ds.push(await seedDataset(s(), who, `d${i}`, { create_time: 100 + i, update_time: 200 - i }));
      const page = async (q: object) => (await s().datasets.list({ who, orderby: 'create_time', desc: true, limit: -1, offset: 0, ...q })).rows.map((r) => r.name);
      expect(await page({})).toEqual(['d4', 'd3', 'd2', 'd1', 'd0']);
      expect(await page({ desc: false, limit: 2, offset: 1 })).toEqual(['d1', 'd2']);
      expect(await page({ orderby: 'update_time', desc: true, limit: 2 })).toEqual(['d0', 'd1']);
      expect(await page({ name: 'D3' })).toEqual(['d3']);
      expect(await page({ id: ds[2]!.id })).toEqual(['d2']);
      expect((await s().datasets.list({ who, orderby: 'create_time', desc: true, limit: 1, offset: 0 })).total).toBe(5);
      // A limit of 0 counts without rows (GET /datasets checks an id or a name is visible so).
      expect(await s().datasets.list({ who, orderby: 'create_time', desc: true, limit: 0, offset: 0, name: 'd1' })).toEqual({ total: 1, rows: [] });
      expect((await s().datasets.list({ who, orderby: 'create_time', desc: true, limit: 0, offset: 0, id: newId() })).total).toBe(0);
      expect(await s().datasets.idsOfTenant(who.tenantId)).toHaveLength(5);
      const docs = await seedDocuments(s(), who, ds[0]!, ['a.txt', 'b.txt']);
      await s().parse.reset([docs[0]!.id], who.tenantId);
      expect(await s().datasets.runCounts([ds[0]!.id, ds[1]!.id])).toEqual(new Map([[ds[0]!.id, { '0': 1, '1': 1 }], [ds[1]!.id, {}]]));
      expect((await s().datasets.live([ds[3]!.id, newId(), ds[1]!.id])).map((d) => d.name)).toEqual(['d3', 'd1']);
      const [l] = await s().datasets.live([ds[1]!.id]);
      expect(l).toEqual({ id: ds[1]!.id, name: 'd1', embd_id: ds[1]!.embd_id, pagerank: 0, language: ds[1]!.language });
    });

    test('list by keywords and chunk method; filesSize sums the documents\' file sizes', async () => {
      const who = await seedTenant(s());
      await seedDataset(s(), who, 'Alpha notes');
      const b = await seedDataset(s(), who, 'beta NOTES', { parser_id: 'qa' });
      await seedDataset(s(), who, 'gamma');
      const names = async (q: object) => (await s().datasets.list({ who, orderby: 'create_time', desc: false, limit: -1, offset: 0, ...q })).rows.map((r) => r.name);
      expect(await names({ keywords: 'notes' })).toEqual(['Alpha notes', 'beta NOTES']);
      expect(await names({ keywords: 'notes', parser_id: 'qa' })).toEqual(['beta NOTES']);
      expect(await names({ parser_id: 'naive' })).toEqual(['Alpha notes', 'gamma']);
      expect(await s().datasets.filesSize(b.id)).toBe(0);
      await seedDocuments(s(), who, b, ['x.txt', 'y.txt'], (n) => new TextEncoder().encode(n === 'x.txt' ? 'four' : 'sixsix'));
      expect(await s().datasets.filesSize(b.id)).toBe(10);
    });

    test('update writes only the given columns', async () => {
      const who = await seedTenant(s());
      const a = await seedDataset(s(), who, 'a');
      await s().datasets.update(a.id, { name: 'b', pagerank: 7, parser_config: '{"x":1}', update_time: 999 });
      expect(await s().datasets.get(a.id)).toEqual({ ...a, name: 'b', pagerank: 7, parser_config: '{"x":1}', update_time: 999 });
    });

    test('delete removes the datasets with their documents, chunks, full-text and vector rows and the blobs no one else uses', async () => {
      const who = await seedTenant(s());
      const a = await seedDataset(s(), who, 'a');
      const b = await seedDataset(s(), who, 'b');
      const [da] = await seedDocuments(s(), who, a, ['same.txt'], () => new TextEncoder().encode('shared bytes'));
      const [db] = await seedDocuments(s(), who, b, ['same.txt'], () => new TextEncoder().encode('shared bytes'));
      const [dOnly] = await seedDocuments(s(), who, a, ['only.txt'], () => new TextEncoder().encode('only in a'));
      await s().chunks.add(a.id, chunkOf(da!, 'alpha words', 1));
      await s().chunks.add(b.id, chunkOf(db!, 'beta words', 2));
      await s().datasets.delete([a.id]);
      expect(await s().datasets.get(a.id)).toBeUndefined();
      expect(await s().documents.get(a.id, da!.id)).toBeUndefined();
      expect(await s().documents.file(dOnly!.blob_sha256)).toBeUndefined();
      expect(await (await s().documents.file(db!.blob_sha256))!.bytes()).toEqual(new TextEncoder().encode('shared bytes'));
      expect(await s().search.countChunks([a.id], 100)).toBe(0);
      expect(await s().search.countChunks([b.id], 100)).toBe(1);
    });

    test('two processes creating one name at once never get the same name', async () => {
      const who = await seedTenant(s());
      const at = Date.now() + 1500;
      const [x, y] = await Promise.all([0, 1].map(() => inChild<string[]>(s().locator, 'datasets.create', { tenant: who.tenantId, user: who.userId, name: 'race', n: 15, at })));
      const names = [...x!, ...y!].map((n) => n.toLowerCase());
      expect(new Set(names).size).toBe(30);
      expect((await s().datasets.list({ who, orderby: 'create_time', desc: true, limit: -1, offset: 0 })).total).toBe(30);
    }, 60_000);
  });
}

import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore, inChild } from './harness.js';
import { chunkOf, DIM, seedDataset, seedDocuments, seedTenant, vec } from './seed.js';

export function chunksContract(f: StoreFactory): void {
  describe('ChunkStore', () => {
    const { s } = freshStore(f);

    test('the embedding cache: misses absent, puts replace, one model\'s vectors apart from another\'s', async () => {
      expect(await s().chunks.cachedVectors('m', ['a', 'b'])).toEqual(new Map());
      await s().chunks.cacheVectors([['m', 'a', vec(4, 1)], ['m', 'b', vec(4, 2)], ['n', 'a', vec(4, 3)]], 10);
      await s().chunks.cacheVectors([['m', 'b', vec(4, 4)]], 11);
      const got = await s().chunks.cachedVectors('m', ['a', 'b', 'c', 'a']);
      expect([...got.keys()]).toEqual(['a', 'b']);
      expect([...got.get('a')!]).toEqual([...vec(4, 1)]);
      expect([...got.get('b')!]).toEqual([...vec(4, 4)]);
      expect([...(await s().chunks.cachedVectors('n', ['a'])).get('a')!]).toEqual([...vec(4, 3)]);
    });

    test('add: after the last chunk, counters moved up by it, the same id replaced (and counted again, as RAGFlow counts); a document gone (or of another dataset) gets nothing', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const other = await seedDataset(s(), who, 'other');
      const [d] = await seedDocuments(s(), who, ds, ['d.txt']);
      const a = (await s().chunks.add(ds.id, chunkOf(d!, 'one two three', 1)))!;
      const b = (await s().chunks.add(ds.id, chunkOf(d!, 'four five', 2, { important_keywords: ['kw'], questions: ['why?'], positions: [[1, 2, 3, 4, 5]] })))!;
      expect(a).toMatchObject({ document_id: d!.id, dataset_id: ds.id, content: 'one two three', chunk_order: 0, available: 1, vec_dim: DIM, token_num: 3 });
      expect(b).toMatchObject({ chunk_order: 1, important_keywords: '["kw"]', questions: '["why?"]', positions: '[[1,2,3,4,5]]' });
      expect(await s().documents.get(ds.id, d!.id)).toMatchObject({ chunk_num: 2, token_num: 5 });
      expect(await s().datasets.get(ds.id)).toMatchObject({ chunk_num: 2, token_num: 5 });
      const again = (await s().chunks.add(ds.id, { ...chunkOf(d!, 'one two three again', 3), id: a.id }))!;
      expect(again.rowid).not.toBe(a.rowid);
      expect(await s().chunks.get(d!.id, a.id)).toMatchObject({ content: 'one two three again' });
      // RAGFlow's increment_chunk_num: one more chunk and its tokens, whether or not the id was there.
      expect(await s().documents.get(ds.id, d!.id)).toMatchObject({ chunk_num: 3, token_num: 9 });
      expect(await s().datasets.get(ds.id)).toMatchObject({ chunk_num: 3, token_num: 9 });
      expect(await s().chunks.add(other.id, chunkOf(d!, 'wrong dataset', 4))).toBeUndefined();
      expect(await s().chunks.add(ds.id, chunkOf({ ...d!, id: newId() }, 'no such document', 5))).toBeUndefined();
      expect((await s().documents.get(ds.id, d!.id))!.chunk_num).toBe(3);
    });

    test('list by position (no positions last), search by terms, get', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d, e] = await seedDocuments(s(), who, ds, ['d.txt', 'e.txt']);
      await s().chunks.add(ds.id, chunkOf(d!, 'no position alpha', 1));
      await s().chunks.add(ds.id, chunkOf(d!, 'page two beta', 2, { positions: [[2, 0, 0, 10, 20]], page_num: 2, top: 10 }));
      await s().chunks.add(ds.id, chunkOf(d!, 'page one gamma alpha', 3, { positions: [[1, 0, 0, 50, 60]], page_num: 1, top: 50 }));
      await s().chunks.add(ds.id, chunkOf(e!, 'alpha elsewhere', 4));
      const all = await s().chunks.list(d!.id, -1, 0);
      expect(all.total).toBe(3);
      expect(all.rows.map((r) => r.content)).toEqual(['page one gamma alpha', 'page two beta', 'no position alpha']);
      expect((await s().chunks.list(d!.id, 1, 1)).rows.map((r) => r.content)).toEqual(['page two beta']);
      const found = await s().chunks.search(d!.id, ['alpha'], -1, 0);
      expect(found.total).toBe(2);
      expect(found.rows.map((r) => r.content).sort()).toEqual(['no position alpha', 'page one gamma alpha']);
      expect((await s().chunks.search(d!.id, ['zzz'], -1, 0)).total).toBe(0);
      expect(await s().chunks.get(e!.id, all.rows[0]!.id)).toBeUndefined();
    });

    test('rewrite keeps the rowid (the id may change) and moves the token counters by the difference; a chunk gone or moved to another rowid is refused', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d] = await seedDocuments(s(), who, ds, ['d.txt']);
      const a = (await s().chunks.add(ds.id, chunkOf(d!, 'before rewrite', 1)))!;
      const c = { id: a.id, dataset_id: ds.id, content: 'after the rewrite here', title: d!.name, important_keywords: ['k'], questions: [], tag_kwd: ['t'],
        positions: [[3, 0, 0, 5, 6]], page_num: 3, top: 5, available: false, token_num: 4, vector: vec(DIM, 9) };
      expect(await s().chunks.rewrite({ rowid: a.rowid, id: a.id, document_id: d!.id, dataset_id: ds.id }, c)).toBe(true);
      expect(await s().chunks.get(d!.id, a.id)).toMatchObject({ rowid: a.rowid, content: 'after the rewrite here', tag_kwd: '["t"]', available: 0, page_num: 3, top: 5, token_num: 4 });
      expect(await s().documents.get(ds.id, d!.id)).toMatchObject({ chunk_num: 1, token_num: 4 });
      expect(await s().datasets.get(ds.id)).toMatchObject({ chunk_num: 1, token_num: 4 });
      expect(await s().chunks.rewrite({ rowid: a.rowid + 1000, id: a.id, document_id: d!.id, dataset_id: ds.id }, c)).toBe(false);
      expect(await s().chunks.rewrite({ rowid: a.rowid, id: 'gone', document_id: d!.id, dataset_id: ds.id }, c)).toBe(false);
      expect((await s().documents.get(ds.id, d!.id))!.token_num).toBe(4);
    });

    test('images: add and rewrite keep a chunk\'s image (image_id <dataset>-<chunk>, doc_type image); image() reads it back', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d] = await seedDocuments(s(), who, ds, ['d.txt']);
      const png = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
      const a = (await s().chunks.add(ds.id, chunkOf(d!, 'with a picture', 1), png))!;
      expect(a).toMatchObject({ image_id: `${ds.id}-${a.id}`, doc_type: 'image' });
      expect(await s().chunks.image(`${ds.id}-${a.id}`)).toEqual(png);
      const b = (await s().chunks.add(ds.id, chunkOf(d!, 'without', 2)))!;
      expect(b.image_id).toBe('');
      const other = new Uint8Array([9, 9]);
      expect(await s().chunks.rewrite({ rowid: b.rowid, id: b.id, document_id: d!.id, dataset_id: ds.id }, { ...chunkOf(d!, 'now with one', 3), id: b.id }, other)).toBe(true);
      expect(await s().chunks.get(d!.id, b.id)).toMatchObject({ image_id: `${ds.id}-${b.id}`, doc_type: 'image' });
      expect(await s().chunks.image(`${ds.id}-${b.id}`)).toEqual(other);
      expect(await s().chunks.image('nope-nope')).toBeUndefined();
    });

    test('list and search by availability; search reads the title too; setAvailable is all or nothing', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const other = await seedDataset(s(), who, 'other');
      const [d] = await seedDocuments(s(), who, ds, ['report.txt']);
      const [o] = await seedDocuments(s(), who, other, ['o.txt']);
      const on = (await s().chunks.add(ds.id, chunkOf(d!, 'alpha on', 1)))!;
      const off = (await s().chunks.add(ds.id, chunkOf(d!, 'alpha off', 2, { available: false })))!;
      const elsewhere = (await s().chunks.add(other.id, chunkOf(o!, 'alpha there', 3)))!;
      const ids = async (q: Promise<{ rows: Array<{ id: string }> }>) => (await q).rows.map((r) => r.id).sort();
      expect(await ids(s().chunks.list(d!.id, -1, 0, 1))).toEqual([on.id]);
      expect(await ids(s().chunks.list(d!.id, -1, 0, 0))).toEqual([off.id]);
      expect((await s().chunks.list(d!.id, -1, 0, null)).total).toBe(2);
      expect(await ids(s().chunks.search(d!.id, ['alpha'], -1, 0, 0))).toEqual([off.id]);
      expect((await s().chunks.search(d!.id, ['report'], -1, 0)).total).toBe(2); // the title field (the document's name)
      expect(await s().chunks.setAvailable(ds.id, [off.id, elsewhere.id], true)).toBe(false);
      expect((await s().chunks.get(d!.id, off.id))!.available).toBe(0); // none switched
      expect(await s().chunks.setAvailable(ds.id, [off.id, on.id], false)).toBe(true);
      expect((await s().chunks.list(d!.id, -1, 0, 0)).total).toBe(2);
    });

    test('tagCounts over datasets, editTags in one transaction; embeddingSamples and storedVectors', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const other = await seedDataset(s(), who, 'other');
      const [d] = await seedDocuments(s(), who, ds, ['d.txt']);
      const [o] = await seedDocuments(s(), who, other, ['o.txt']);
      const a = (await s().chunks.add(ds.id, chunkOf(d!, 'one', 1, { tag_kwd: ['x', 'y'] })))!;
      const b = (await s().chunks.add(ds.id, chunkOf(d!, 'two', 2, { tag_kwd: ['x'], available: false })))!;
      await s().chunks.add(other.id, chunkOf(o!, 'three', 3, { tag_kwd: ['y', 'z'] }));
      expect(await s().chunks.tagCounts([ds.id])).toEqual([['x', 2], ['y', 1]]);
      expect(await s().chunks.tagCounts([ds.id, other.id])).toEqual([['x', 2], ['y', 2], ['z', 1]]);
      await s().chunks.editTags(ds.id, [{ tag: 'x', change: (t) => t.filter((v) => v !== 'x') }, { tag: 'y', change: (t) => [...t, 'w'] }]);
      expect(await s().chunks.tagCounts([ds.id])).toEqual([['w', 1], ['y', 1]]);
      expect(await s().chunks.tagCounts([other.id])).toEqual([['y', 1], ['z', 1]]);
      await expect(s().chunks.editTags(ds.id, [{ tag: 'w', change: (t) => [...t, 'v'] }, { tag: 'y', change: () => { throw new Error('refused'); } }])).rejects.toThrow('refused');
      expect(await s().chunks.tagCounts([ds.id])).toEqual([['w', 1], ['y', 1]]); // the first edit rolled back too
      const samples = await s().chunks.embeddingSamples(ds.id, 10);
      expect(samples.map((c) => [c.id, c.name])).toEqual([[a.id, 'd.txt']]); // switched-on chunks only
      const vectors = await s().chunks.storedVectors([...samples, { rowid: b.rowid + 1000, vec_dim: DIM }]);
      expect([...vectors.keys()]).toEqual([a.rowid]);
      expect([...vectors.get(a.rowid)!].map((x) => x.toFixed(5))).toEqual([...vec(DIM, 1)].map((x) => x.toFixed(5)));
    });

    test('rowidsOf and remove: rows and their index entries go, counts follow', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d] = await seedDocuments(s(), who, ds, ['d.txt']);
      const rows = [];
      for (let i = 0; i < 4; i++) rows.push((await s().chunks.add(ds.id, chunkOf(d!, `chunk number ${i}`, i)))!);
      expect(await s().chunks.rowidsOf(d!.id, [rows[2]!.id, 'nope', rows[0]!.id])).toEqual([rows[2]!.rowid, rows[0]!.rowid]);
      expect((await s().chunks.rowidsOf(d!.id, 'all')).sort((a, b) => a - b)).toEqual(rows.map((r) => r.rowid).sort((a, b) => a - b));
      await s().chunks.remove(d!, [rows[0]!.rowid, rows[2]!.rowid]);
      expect((await s().chunks.list(d!.id, -1, 0)).rows.map((r) => r.id)).toEqual([rows[1]!.id, rows[3]!.id]);
      expect(await s().documents.get(ds.id, d!.id)).toMatchObject({ chunk_num: 2, token_num: 6 });
      expect(await s().datasets.get(ds.id)).toMatchObject({ chunk_num: 2, token_num: 6 });
      // Rows no longer there (deleted meanwhile) are not counted down twice.
      await s().chunks.remove(d!, [rows[0]!.rowid, rows[1]!.rowid]);
      expect(await s().documents.get(ds.id, d!.id)).toMatchObject({ chunk_num: 1, token_num: 3 });
      expect((await s().search.termRows([rows[0]!.rowid, rows[1]!.rowid])).has(rows[0]!.rowid)).toBe(false);
      expect((await s().search.vectorRows('chunks', DIM, [rows[0]!.rowid]))[0]![1]).toBeUndefined();
    });

    test("languages: a chunk is analysed in its dataset's language at the write; a language change re-indexed slice by slice (rewritten rows in the feed), recorded only while the language holds", async () => {
      const who = await seedTenant(s());
      const de = await seedDataset(s(), who, 'de');
      const en = await seedDataset(s(), who, 'en');
      await s().datasets.update(de.id, { language: 'German' });
      const [d] = await seedDocuments(s(), who, de, ['d.txt']);
      const [e] = await seedDocuments(s(), who, en, ['e.txt']);
      const a = (await s().chunks.add(de.id, chunkOf(d!, 'Die Häuser sind groß', 1)))!;
      const b = (await s().chunks.add(en.id, chunkOf(e!, 'the houses are running', 2)))!;
      const c = (await s().chunks.add(en.id, chunkOf(e!, '42', 3)))!;
      const r = s().search;
      expect([...(await r.termRows([a.rowid, b.rowid])).values()].map((t) => t[7])).toEqual(['de', 'en']);
      expect((await r.datasetLanguages([de.id, en.id, 'nope'])).sort()).toEqual(['English', 'German']);
      const head = await r.feed('chunks').head();
      await s().datasets.update(en.id, { language: 'German' });
      // 'the houses are running' has other terms in German; '42' has the same ones, so only its lang changes.
      expect(await s().chunks.reindexSlice(en.id, 0, 1, () => 'de')).toEqual({ last: b.rowid, rewritten: 1 });
      expect(await s().chunks.reindexSlice(en.id, b.rowid, 10, () => 'de')).toEqual({ last: c.rowid, rewritten: 0 });
      expect(await s().chunks.reindexSlice(en.id, c.rowid, 10, () => 'de')).toEqual({ last: null, rewritten: 0 });
      expect([...(await r.termRows([b.rowid, c.rowid])).values()].map((t) => t[7])).toEqual(['de', 'de']);
      const change = await r.feed('chunks').changesSince({ position: head, live: 3 });
      expect(change.kind === 'apply' && [...change.dirty]).toEqual([b.rowid]);
      expect(await s().datasets.markReindexed(en.id, 'English', 'de')).toBe(false);
      expect(await s().datasets.markReindexed(en.id, 'German', 'de')).toBe(true);
      const analyses = (await s().datasets.analyses()).filter((x) => x.id === en.id || x.id === de.id);
      expect(analyses.map((x) => x.id)).toEqual([de.id, en.id]); // by creation
      expect(analyses[1]).toEqual({ id: en.id, language: 'German', fts_language: 'de' });
    });

    test('two processes adding to one document at once: every chunk stored, the counts exact', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d] = await seedDocuments(s(), who, ds, ['d.txt']);
      const at = Date.now() + 1500;
      const added = await Promise.all([0, 1].map((k) => inChild<number>(s().locator, 'chunks.add', { doc: d, n: 25, tag: `p${k}`, seed: k * 100, at })));
      expect(added).toEqual([25, 25]);
      expect(await s().documents.get(ds.id, d!.id)).toMatchObject({ chunk_num: 50, token_num: 150 });
      const orders = (await s().chunks.list(d!.id, -1, 0)).rows.map((r) => r.chunk_order).sort((a, b) => a - b);
      expect(orders).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }, 60_000);
  });
}

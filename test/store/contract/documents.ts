import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import { RUN } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore } from './harness.js';
import { chunkOf, seedDataset, seedDocuments, seedTenant } from './seed.js';

const enc = (s: string) => new TextEncoder().encode(s);

export function documentsContract(f: StoreFactory): void {
  describe('DocumentStore', () => {
    const { s } = freshStore(f);

    test('upload: names made free case-insensitively against stored names and the call\'s own, bytes stored once, counters moved', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who, 'kb', { parser_config: '{"chunk_token_num":64}' });
      const first = await seedDocuments(s(), who, ds, ['Notes.txt'], () => enc('same'));
      const more = await seedDocuments(s(), who, ds, ['notes.txt', 'NOTES.TXT', 'other.md'], (n) => enc(n === 'other.md' ? 'different' : 'same'));
      expect([...first, ...more].map((d) => d.name)).toEqual(['Notes.txt', 'notes(1).txt', 'NOTES(2).TXT', 'other.md']);
      expect(more[0]).toMatchObject({ dataset_id: ds.id, location: 'notes(1).txt', suffix: 'txt', type: 'doc', parser_id: 'naive', parser_config: '{"chunk_token_num":64}', size: 4, run: RUN.UNSTART, created_by: who.userId });
      expect(more[0]!.blob_sha256).toBe(first[0]!.blob_sha256);
      expect((await s().datasets.get(ds.id))!.doc_num).toBe(4);
      expect(await s().documents.nameExists(ds.id, 'OTHER.MD')).toBe(true);
      expect(await s().documents.nameExists(ds.id, 'missing.md')).toBe(false);
      expect(await s().documents.exactNameTaken(ds.id, 'notes(1).txt', first[0]!.id)).toBe(true);
      expect(await s().documents.exactNameTaken(ds.id, 'NOTES(1).txt', first[0]!.id)).toBe(false);
      expect(await s().documents.exactNameTaken(ds.id, 'notes(1).txt', more[0]!.id)).toBe(false);
    });

    test('upload asks each file\'s kind by its final name and its index in the call', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      await seedDocuments(s(), who, ds, ['README']);
      const asked: Array<[string, number]> = [];
      const ids = [newId(), newId(), newId()];
      await s().documents.upload({
        dataset_id: ds.id, parser_config: '{}', created_by: who.userId, time: 1,
        // Types by position, as an extensionless name is typed by its content.
        kindOf: (n, i) => (asked.push([n, i]), { suffix: '', type: ['doc', 'pdf', 'visual'][i]!, parser_id: ['naive', 'paper', 'picture'][i]! }),
      }, [{ name: 'README', bytes: enc('text') }, { name: 'README', bytes: enc('%PDF-1.4') }, { name: 'photo', bytes: enc('x') }], ids);
      expect(asked).toEqual([['README(1)', 0], ['README(2)', 1], ['photo', 2]]);
      const got = await s().documents.getMany(ds.id, ids);
      expect(ids.map((id) => [got.get(id)!.name, got.get(id)!.type, got.get(id)!.parser_id])).toEqual([
        ['README(1)', 'doc', 'naive'], ['README(2)', 'pdf', 'paper'], ['photo', 'visual', 'picture'],
      ]);
    });

    test('upload is one transaction: a file that fails leaves none of the call written', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const ids = [newId(), newId()];
      await expect(s().documents.upload(
        { dataset_id: ds.id, parser_config: '{}', created_by: who.userId, time: 1, kindOf: (n) => { if (n === 'bad.txt') throw new Error('refused'); return { suffix: 'txt', type: 'doc', parser_id: 'naive' }; } },
        [{ name: 'good.txt', bytes: enc('good') }, { name: 'bad.txt', bytes: enc('bad') }], ids,
      )).rejects.toThrow('refused');
      expect((await s().documents.getMany(ds.id, ids)).size).toBe(0);
      expect((await s().datasets.get(ds.id))!.doc_num).toBe(0);
    });

    test('get, getMany, allOf, list with every filter, order and page', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const other = await seedDataset(s(), who, 'other');
      const docs = await seedDocuments(s(), who, ds, ['b.md', 'a.txt', 'Report.PDF', 'c.txt']);
      const [foreign] = await seedDocuments(s(), who, other, ['z.txt']);
      expect(await s().documents.get(ds.id, docs[0]!.id)).toEqual(docs[0]);
      expect(await s().documents.get(other.id, docs[0]!.id)).toBeUndefined();
      const many = await s().documents.getMany(ds.id, [docs[1]!.id, foreign!.id, 'nope']);
      expect([...many.keys()]).toEqual([docs[1]!.id]);
      expect((await s().documents.allOf(ds.id)).length).toBe(4);
      await s().parse.reset([docs[2]!.id], who.tenantId);
      const names = async (q: object) => (await s().documents.list({ dataset_id: ds.id, orderby: 'create_time', desc: false, limit: -1, offset: 0, ...q })).rows.map((d) => d.name);
      expect(await names({ orderby: 'name' })).toEqual(['Report.PDF', 'a.txt', 'b.md', 'c.txt']);
      expect(await names({ orderby: 'name', desc: true, limit: 2, offset: 1 })).toEqual(['b.md', 'a.txt']);
      expect(await names({ name: 'A.TXT' })).toEqual(['a.txt']);
      expect(await names({ ids: [docs[3]!.id, docs[0]!.id, foreign!.id], orderby: 'name' })).toEqual(['b.md', 'c.txt']);
      expect(await names({ keywords: 'report' })).toEqual(['Report.PDF']);
      expect(await names({ suffixes: ['txt'], orderby: 'name' })).toEqual(['a.txt', 'c.txt']);
      expect(await names({ types: ['visual'] })).toEqual([]);
      expect(await names({ runs: [RUN.RUNNING] })).toEqual(['Report.PDF']);
      expect((await s().documents.list({ dataset_id: ds.id, orderby: 'size', desc: true, limit: 1, offset: 0 })).total).toBe(4);
    });

    test('update: columns, a rename re-titles the chunks, a switch reaches the chunks, a reset drops them and recounts', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d] = await seedDocuments(s(), who, ds, ['old.txt']);
      await s().chunks.add(ds.id, chunkOf(d!, 'some words here', 1));
      await s().documents.update(d!, { changes: { name: 'zebra.txt', location: 'zebra.txt', meta_fields: '{"k":1}', update_time: 5 }, resetChunks: false });
      let cur = (await s().documents.get(ds.id, d!.id))!;
      expect(cur).toMatchObject({ name: 'zebra.txt', location: 'zebra.txt', meta_fields: '{"k":1}', update_time: 5, chunk_num: 1 });
      const [rowid] = await s().chunks.rowidsOf(d!.id, 'all');
      expect((await s().search.termRows([rowid!])).get(rowid!)![5]).toBe('zebra.txt');
      await s().documents.update(d!, { changes: { status: '0' }, resetChunks: false });
      expect((await s().search.pageChunks([rowid!])).get(rowid!)!.available).toBe(0);
      await s().documents.update(d!, { changes: { parser_id: 'qa' }, resetChunks: true });
      cur = (await s().documents.get(ds.id, d!.id))!;
      expect(cur).toMatchObject({ parser_id: 'qa', run: RUN.UNSTART, chunk_num: 0, token_num: 0, progress: 0 });
      expect(await s().chunks.rowidsOf(d!.id, 'all')).toEqual([]);
      expect((await s().datasets.get(ds.id))!.chunk_num).toBe(0);
    });

    test('delete: rows, chunks and unused blobs in one go, the dataset recounted; a shared blob stays', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [a, b, c] = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt', 'c.txt'], (n) => enc(n === 'c.txt' ? 'c' : 'ab'));
      await s().chunks.add(ds.id, chunkOf(a!, 'words of a', 1));
      await s().chunks.add(ds.id, chunkOf(c!, 'words of c', 2));
      await s().documents.delete(ds.id, [a!, c!]);
      expect(await s().documents.get(ds.id, a!.id)).toBeUndefined();
      expect(await s().documents.file(c!.blob_sha256)).toBeUndefined();
      expect(await s().documents.file(b!.blob_sha256)).toBeDefined();
      expect(await s().datasets.get(ds.id)).toMatchObject({ doc_num: 1, chunk_num: 0, token_num: 0 });
    });

    test('file: the bytes whole and streamed in pieces; an unknown sha256 is undefined', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7) & 255);
      const [d] = await seedDocuments(s(), who, ds, ['big.bin'], () => bytes);
      const file = (await s().documents.file(d!.blob_sha256))!;
      expect(file.size).toBe(bytes.length);
      expect(Buffer.from(await file.bytes()).equals(Buffer.from(bytes))).toBe(true);
      const parts: Uint8Array[] = [];
      for await (const p of file.stream(65_536)) parts.push(p);
      expect(parts.map((p) => p.length)).toEqual([65_536, 65_536, 65_536, 65_536, 37_856]);
      expect(Buffer.concat(parts).equals(Buffer.from(bytes))).toBe(true);
      expect(await s().documents.file('0'.repeat(64))).toBeUndefined();
    });

    test('files: whole small files by sha256 in one call (each once, absent ones left out, an empty file empty)', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const docs = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt', 'empty.txt'], (n) => enc(n === 'empty.txt' ? '' : `bytes of ${n}`));
      const got = await s().documents.files([...docs.map((d) => d.blob_sha256), docs[0]!.blob_sha256, 'f'.repeat(64)]);
      expect([...got.keys()].sort()).toEqual(docs.map((d) => d.blob_sha256).sort());
      expect(docs.map((d) => Buffer.from(got.get(d.blob_sha256)!).toString())).toEqual(['bytes of a.txt', 'bytes of b.txt', '']);
    });

    test('upload takes streamed bytes (parts of any size, beside bytes in memory): stored whole, hashed as bytes, identical ones once', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const big = Uint8Array.from({ length: 2_500_000 }, (_, i) => (i * 13) & 255);
      async function* pieces(b: Uint8Array, size: number): AsyncIterable<Uint8Array> {
        for (let at = 0; at < b.length; at += size) yield b.slice(at, at + size);
      }
      const ids = [newId(), newId(), newId(), newId()];
      await s().documents.upload({ dataset_id: ds.id, parser_config: '{}', created_by: who.userId, time: 1, kindOf: () => ({ suffix: 'bin', type: 'doc', parser_id: 'naive' }) },
        [{ name: 'streamed.bin', bytes: pieces(big, 77_777) }, { name: 'inline.txt', bytes: enc('inline') }, { name: 'same.bin', bytes: big },
          { name: 'empty.bin', bytes: pieces(new Uint8Array(0), 1) }], ids);
      const got = await s().documents.getMany(ds.id, ids);
      expect(ids.map((id) => got.get(id)!.size)).toEqual([big.length, 6, big.length, 0]);
      expect(got.get(ids[0]!)!.blob_sha256).toBe(got.get(ids[2]!)!.blob_sha256);
      expect(Buffer.from(await (await s().documents.file(got.get(ids[0]!)!.blob_sha256))!.bytes()).equals(Buffer.from(big))).toBe(true);
      expect((await (await s().documents.file(got.get(ids[3]!)!.blob_sha256))!.bytes()).length).toBe(0);
      expect((await s().datasets.get(ds.id))!.doc_num).toBe(4);
    });

    test('upload: a stream that fails midway (after others were read) leaves nothing of the call, and the store takes the next upload', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const big = Uint8Array.from({ length: 3_000_000 }, (_, i) => (i * 31) & 255);
      async function* failing(): AsyncIterable<Uint8Array> {
        yield big.subarray(0, 1_500_000);
        yield big.subarray(1_500_000, 2_200_000);
        throw new Error('client went away');
      }
      async function* whole(): AsyncIterable<Uint8Array> {
        yield big;
      }
      const ids = [newId(), newId(), newId()];
      const target = { dataset_id: ds.id, parser_config: '{}', created_by: who.userId, time: 1, kindOf: () => ({ suffix: 'bin', type: 'doc', parser_id: 'naive' }) };
      await expect(s().documents.upload(target, [{ name: 'first.bin', bytes: whole() }, { name: 'small.txt', bytes: enc('small') }, { name: 'cut.bin', bytes: failing() }], ids))
        .rejects.toThrow('client went away');
      expect((await s().documents.getMany(ds.id, ids)).size).toBe(0);
      expect((await s().datasets.get(ds.id))!.doc_num).toBe(0);
      // Nothing of the first (fully read) file was kept either.
      const { createHash } = await import('node:crypto');
      expect(await s().documents.file(createHash('sha256').update(big).digest('hex'))).toBeUndefined();
      const again = [newId()];
      await s().documents.upload(target, [{ name: 'first.bin', bytes: whole() }], again);
      expect((await s().documents.getMany(ds.id, again)).get(again[0]!)!.size).toBe(big.length);
    });

    test('replaceContent: new bytes under the same document, reset to UNSTART, the old blob pruned; gone and running refused', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d, e] = await seedDocuments(s(), who, ds, ['d.txt', 'e.txt'], (n) => enc(`old ${n}`));
      expect(await s().documents.replaceContent(d!, enc('new bytes!'), 77)).toBe('replaced');
      const cur = (await s().documents.get(ds.id, d!.id))!;
      expect(cur).toMatchObject({ size: 10, run: RUN.UNSTART, progress: 0, update_time: 77 });
      expect(await (await s().documents.file(cur.blob_sha256))!.bytes()).toEqual(enc('new bytes!'));
      expect(await s().documents.file(d!.blob_sha256)).toBeUndefined();
      expect((await s().datasets.get(ds.id))!.update_time).toBe(77);
      await s().parse.reset([e!.id], who.tenantId);
      expect(await s().documents.replaceContent(e!, enc('x'), 78)).toBe('running');
      expect((await s().documents.get(ds.id, e!.id))!.blob_sha256).toBe(e!.blob_sha256);
      expect(await s().documents.replaceContent({ id: newId(), dataset_id: ds.id }, enc('x'), 79)).toBe('gone');
    });

    test('replaceContent takes a stream as an upload does: read in pieces, the same bytes change nothing, a failing stream changes nothing', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [d] = await seedDocuments(s(), who, ds, ['d.bin'], () => enc('old'));
      // Over a PostgreSQL part (1 MiB): written part by part there.
      const big = Uint8Array.from({ length: 2_500_000 }, (_, i) => (i * 7 + (i >> 12)) & 255);
      async function* pieces(bytes: Uint8Array, cut?: number): AsyncIterable<Uint8Array> {
        for (let at = 0; at < bytes.byteLength; at += 700_000) {
          if (cut !== undefined && at >= cut) throw new Error('client went away');
          yield bytes.subarray(at, Math.min(bytes.byteLength, at + 700_000));
        }
      }
      expect(await s().documents.replaceContent(d!, pieces(big), 80)).toBe('replaced');
      const cur = (await s().documents.get(ds.id, d!.id))!;
      const { createHash } = await import('node:crypto');
      expect(cur).toMatchObject({ size: big.byteLength, run: RUN.UNSTART, update_time: 80, blob_sha256: createHash('sha256').update(big).digest('hex') });
      expect(Buffer.compare(Buffer.from(await (await s().documents.file(cur.blob_sha256))!.bytes()), Buffer.from(big))).toBe(0);
      expect(await s().documents.file(d!.blob_sha256)).toBeUndefined();
      // The same bytes again, streamed: nothing written.
      expect(await s().documents.replaceContent(d!, pieces(big), 81)).toBe('same');
      expect((await s().documents.get(ds.id, d!.id))!.update_time).toBe(80);
      // A stream that fails half-way: the document keeps its file, and the new bytes are nowhere.
      const other = big.map((x) => x ^ 1);
      await expect(s().documents.replaceContent(d!, pieces(other, 1_400_000), 82)).rejects.toThrow('client went away');
      expect((await s().documents.get(ds.id, d!.id))!).toMatchObject({ blob_sha256: cur.blob_sha256, size: big.byteLength, update_time: 80 });
      expect(await s().documents.file(createHash('sha256').update(other.subarray(0, 1_400_000)).digest('hex'))).toBeUndefined();
      // A small file in memory is 'same' too when it is the stored one.
      expect(await s().documents.replaceContent(d!, big, 83)).toBe('same');
      expect(await s().documents.replaceContent({ id: newId(), dataset_id: ds.id }, pieces(enc('x')), 84)).toBe('gone');
    });

    test('setStatus switches the dataset\'s documents and their chunks, one transaction, an outcome per id; setRun', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const other = await seedDataset(s(), who, 'other');
      const [a, b] = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt']);
      const [o] = await seedDocuments(s(), who, other, ['o.txt']);
      const c = (await s().chunks.add(ds.id, chunkOf(a!, 'alpha', 1)))!;
      expect(await s().documents.setStatus(ds.id, [a!.id, 'nope', o!.id, b!.id], '0', 77)).toEqual(['set', 'absent', 'elsewhere', 'set']);
      expect(await s().documents.get(ds.id, a!.id)).toMatchObject({ status: '0', update_time: 77 });
      expect((await s().chunks.get(a!.id, c.id))!.available).toBe(0);
      expect((await s().documents.get(other.id, o!.id))!.status).toBe('1');
      expect(await s().documents.setStatus(ds.id, [a!.id], '0', 99)).toEqual(['set']);
      expect((await s().documents.get(ds.id, a!.id))!.update_time).toBe(77); // unchanged: not written
      await s().documents.setRun([a!.id, b!.id], RUN.FAIL);
      expect((await s().documents.getMany(ds.id, [a!.id, b!.id])).get(b!.id)).toMatchObject({ run: RUN.FAIL, progress: 0 });
    });

    test('metaFieldsOf by creation (all, or those with metadata); editMetaFields reads and writes in one transaction; list without metadata and by any column; facetRows', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const docs = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt', 'c.txt']);
      const n = await s().documents.editMetaFields(ds.id, [docs[2]!.id, docs[0]!.id, 'nope'], (d) => (d.id === docs[0]!.id ? '{"k":1}' : JSON.stringify({ k: 3 })), 50);
      expect(n).toBe(2);
      expect(await s().documents.metaFieldsOf(ds.id)).toEqual([
        { id: docs[0]!.id, meta_fields: '{"k":1}' }, { id: docs[1]!.id, meta_fields: '{}' }, { id: docs[2]!.id, meta_fields: '{"k":3}' },
      ]);
      expect((await s().documents.metaFieldsOf(ds.id, true)).map((d) => d.id)).toEqual([docs[0]!.id, docs[2]!.id]);
      expect((await s().documents.get(ds.id, docs[0]!.id))!.update_time).toBe(50);
      expect(await s().documents.editMetaFields(ds.id, [docs[1]!.id], () => null, 60)).toBe(0);
      expect((await s().documents.get(ds.id, docs[1]!.id))!.update_time).not.toBe(60);
      await expect(s().documents.editMetaFields(ds.id, [docs[0]!.id, docs[1]!.id], (d) => { if (d.id === docs[1]!.id) throw new Error('refused'); return '{"k":9}'; }, 70)).rejects.toThrow('refused');
      expect((await s().documents.get(ds.id, docs[0]!.id))!.meta_fields).toBe('{"k":1}');
      const names = async (q: object) => (await s().documents.list({ dataset_id: ds.id, orderby: 'create_time', desc: false, limit: -1, offset: 0, ...q })).rows.map((d) => d.name);
      expect(await names({ noMetadata: true })).toEqual(['b.txt']);
      expect(await names({ noMetadata: true, ids: [docs[0]!.id] })).toEqual([]);
      await s().documents.setRun([docs[1]!.id], RUN.DONE);
      expect(await s().documents.facetRows(ds.id, {})).toEqual([
        { suffix: 'txt', run: RUN.UNSTART, meta_fields: '{"k":1}' }, { suffix: 'txt', run: RUN.DONE, meta_fields: '{}' }, { suffix: 'txt', run: RUN.UNSTART, meta_fields: '{"k":3}' },
      ]);
      expect((await s().documents.facetRows(ds.id, { runs: [RUN.DONE], keywords: 'b' })).length).toBe(1);
      expect(await s().documents.facetRows(ds.id, { suffixes: ['pdf'] })).toEqual([]);
      expect(await names({ orderby: 'meta_fields', desc: true })).toEqual(['b.txt', 'c.txt', 'a.txt']); // '{}' sorts after '{"k":…'
    });

    test('metaFields and inDatasets answer for the ids asked, absent ones left out', async () => {
      const who = await seedTenant(s());
      const a = await seedDataset(s(), who, 'a');
      const b = await seedDataset(s(), who, 'b');
      const [da] = await seedDocuments(s(), who, a, ['x.txt']);
      const [db] = await seedDocuments(s(), who, b, ['y.txt']);
      await s().documents.update(da!, { changes: { meta_fields: '{"year":2024}' }, resetChunks: false });
      expect(await s().documents.metaFields([da!.id, 'nope', db!.id])).toEqual(new Map([[da!.id, '{"year":2024}'], [db!.id, '{}']]));
      expect(await s().documents.inDatasets([da!.id, db!.id, 'nope'], [a.id])).toEqual(new Set([da!.id]));
      expect(await s().documents.inDatasets([da!.id, db!.id], [a.id, b.id])).toEqual(new Set([da!.id, db!.id]));
    });
  });
}

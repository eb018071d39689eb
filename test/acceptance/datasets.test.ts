/**
 * Datasets and documents, written once and run against the embedded engine and a server.
 */
import { describe, expect } from 'vitest';
import { MODES, acceptance, failure, enc, NOT_AN_ID } from './modes.js';

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('Client#createDataset() / listDatasets() / DataSet#update() / deleteDatasets()', () => {
    test('only required params', async ({ client }) => {
      const ds = await client.createDataset({ name: 'kb' });
      expect(ds.toJSON()).toMatchObject({ name: 'kb', chunk_method: 'naive', permission: 'me', document_count: 0, chunk_count: 0, description: null });
      expect(ds.id).toMatch(/^[0-9a-f]{32}$/);
      expect((await client.listDatasets()).map((d) => d.id)).toEqual([ds.id]);
      await ds.update({ name: 'kb2' });
      expect(ds.name).toBe('kb2');
      expect((await client.getDataset('kb2')).id).toBe(ds.id);
      await client.deleteDatasets({ ids: [ds.id] });
      expect(await client.listDatasets()).toEqual([]);
    });

    test('required and optional params', async ({ client }) => {
      const a = await client.createDataset({ name: 'alpha', description: 'first', permission: 'team', chunk_method: 'qa', parser_config: null, embedding_model: null, avatar: null });
      expect(a).toMatchObject({ name: 'alpha', description: 'first', permission: 'team', chunk_method: 'qa' });
      const b = await client.createDataset({ name: 'beta', chunk_method: 'naive', parser_config: { chunk_token_num: 256, delimiter: '\n' } });
      expect(b.parser_config).toMatchObject({ chunk_token_num: 256, delimiter: '\n' });
      expect((await client.createDataset({ name: 'alpha' })).name).toBe('alpha(1)');

      expect((await client.listDatasets({ orderby: 'create_time', desc: false })).map((d) => d.name)).toEqual(['alpha', 'beta', 'alpha(1)']);
      expect((await client.listDatasets({ page: 2, page_size: 2, desc: false })).map((d) => d.name)).toEqual(['alpha(1)']);
      expect((await client.listDatasets({ id: b.id })).map((d) => d.name)).toEqual(['beta']);
      expect((await client.listDatasets({ name: 'alpha', include_parsing_status: true })).map((d) => d.id)).toEqual([a.id]);

      await b.update({ description: 'second', parser_config: { chunk_token_num: 128 } });
      expect(b.description).toBe('second');
      expect(b.parser_config).toMatchObject({ chunk_token_num: 128 });
      await client.deleteDatasets({ delete_all: true });
      expect(await client.listDatasets()).toEqual([]);
    });

    test('errors', async ({ client }) => {
      const ds = await client.createDataset({ name: 'kb' });
      expect(await failure(client.createDataset({ name: '' }))).toEqual([101, 'Field: <name> - Message: <String should have at least 1 character> - Value: <>']);
      expect(await failure(client.createDataset({ name: 'x', foo: 1 } as never))).toEqual([101, 'Field: <foo> - Message: <Extra inputs are not permitted> - Value: <1>']);
      expect(await failure(client.listDatasets({ page: 0 }))).toEqual([101, 'Field: <page> - Message: <Input should be greater than or equal to 1> - Value: <0>']);
      const [code, message] = await failure(client.listDatasets({ name: 'nope' }));
      expect([code, message]).toEqual([102, `User '${ds.tenant_id}' lacks permission for dataset 'nope'`]);
      expect(await failure(ds.update({}))).toEqual([102, 'No properties were modified']);
      expect(await failure(client.deleteDatasets({ ids: ['xyz'] }))).toEqual([101, "Field: <ids> - Message: <Invalid UUID1 format> - Value: <['xyz']>"]);
      expect(await failure(client.getDataset('nope'))).toEqual([102, 'Dataset nope not found']);
      // Nothing was written by the failures.
      expect((await client.listDatasets()).map((d) => d.name)).toEqual(['kb']);
    });
  });

  describe('DataSet#uploadDocuments() / listDocuments() / Document#update() / download() / deleteDocuments()', () => {
    // Every byte value, and a name that is not ASCII: both must come back unchanged.
    const BINARY = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) % 256);
    const FILES = [
      { display_name: 'notes.md', blob: enc('# Notes\n\nThe moon pulls the tides.') },
      { display_name: 'café ü «1».txt', blob: enc('Ünïcödé text — with “quotes” and 日本語.') },
      { display_name: 'bytes.txt', blob: BINARY },
    ];

    test('upload, list, update, download byte-identical, delete', async ({ client }) => {
      const ds = await client.createDataset({ name: 'kb' });
      const docs = await ds.uploadDocuments(FILES);
      expect(docs.map((d) => [d.name, d.size, d.run, d.dataset_id])).toEqual(FILES.map((f) => [f.display_name, f.blob.length, 'UNSTART', ds.id]));
      for (const [i, d] of docs.entries()) expect(Buffer.from(await d.download()).equals(Buffer.from(FILES[i]!.blob))).toBe(true);

      // Uploading the same name again gets a suffix, as in RAGFlow.
      const [again] = await ds.uploadDocuments([FILES[0]!]);
      expect(again!.name).toBe('notes(1).md');

      const all = await ds.listDocuments({ orderby: 'create_time', desc: false, page: 1, page_size: 30 });
      expect(all.map((d) => d.name)).toEqual([...FILES.map((f) => f.display_name), 'notes(1).md']);
      expect((await ds.listDocuments({ page: 2, page_size: 3, desc: false })).map((d) => d.name)).toEqual(['notes(1).md']);
      expect((await ds.listDocuments({ keywords: 'café' })).map((d) => d.id)).toEqual([docs[1]!.id]);
      expect((await ds.listDocuments({ id: docs[2]!.id })).map((d) => d.name)).toEqual(['bytes.txt']);
      expect((await ds.listDocuments({ ids: [docs[0]!.id, again!.id], desc: false })).map((d) => d.name)).toEqual(['notes.md', 'notes(1).md']);
      expect((await ds.listDocuments({ run: ['UNSTART'] })).length).toBe(4);

      await again!.update({ name: 'renamed.md', meta_fields: { author: 'ada', year: 1843 } });
      expect(again).toMatchObject({ name: 'renamed.md', meta_fields: { author: 'ada', year: 1843 } });
      expect((await ds.listDocuments({ id: again!.id }))[0]!.meta_fields).toEqual({ author: 'ada', year: 1843 });

      await ds.deleteDocuments({ ids: [docs[0]!.id, again!.id] });
      expect((await ds.listDocuments({ desc: false })).map((d) => d.name)).toEqual(['café ü «1».txt', 'bytes.txt']);
      expect((await client.listDatasets())[0]!.document_count).toBe(2);
      await ds.deleteDocuments({ delete_all: true });
      expect(await ds.listDocuments()).toEqual([]);
    });

    test('errors', async ({ client }) => {
      const ds = await client.createDataset({ name: 'kb' });
      const [doc, empty] = await ds.uploadDocuments([FILES[0]!, { display_name: 'empty.txt', blob: new Uint8Array(0) }]);
      expect(await failure(ds.uploadDocuments([]))).toEqual([101, 'No file part!']);
      expect(await failure(ds.uploadDocuments([{ display_name: '', blob: enc('x') }]))).toEqual([101, 'No file selected!']);
      expect(await failure(ds.uploadDocuments([{ display_name: 'x.exe', blob: enc('x') }]))).toEqual([500, 'x.exe: This type of file has not been supported yet!']);
      expect(await failure(ds.uploadDocuments([{ display_name: `${'n'.repeat(300)}.txt`, blob: enc('x') }]))).toEqual([101, 'File name must be 255 bytes or less.']);
      expect(await failure(ds.uploadDocuments([{ display_name: 'x.txt', blob: 'text' as never }]))).toEqual([101, 'x.txt: `blob` must be a Uint8Array, a Buffer or a stream of them']);
      expect(await failure(empty!.download())).toEqual([102, 'This file is empty.']);
      expect(await failure(doc!.update({ name: 'notes.pdf' }))).toEqual([101, "The extension of file can't be changed"]);
      expect(await failure(ds.listDocuments({ run: ['BOGUS'] }))).toEqual([102, 'Invalid filter run status conditions: BOGUS']);
      expect(await failure(ds.listDocuments({ id: doc!.id, ids: [doc!.id] }))).toEqual([101, "Cannot use both 'id' and 'ids' parameters at the same time."]);
      expect(await failure(ds.deleteDocuments({ ids: ['nope'] }))).toEqual([102, `These documents do not belong to dataset ${ds.id} or Document not found: nope`]);
      const other = await client.createDataset({ name: 'other' });
      await client.deleteDatasets({ ids: [other.id] });
      expect(await failure(other.listDocuments())).toEqual([102, `You don't own the dataset ${other.id}. `]);
      expect(await failure(client.deleteDatasets({ ids: [NOT_AN_ID] }))).toEqual([101, `Field: <ids> - Message: <Invalid UUID1 format> - Value: <['${NOT_AN_ID}']>`]);
      expect((await ds.listDocuments()).length).toBe(2);
    });
  });
});

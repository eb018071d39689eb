/** `documents.replaceContent` / Document#replaceContent(): new bytes under the same document, re-parsed with an atomic swap. */
import { describe, expect } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test, apiError, enc } from '../helpers.js';
import { Client, type DataSet, type Document } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { Api } from '../../src/api/index.js';

const TIDES = '# Tides\n\nThe pull of the moon raises the ocean tides twice a day.\n';
const GLACIERS = '# Glaciers\n\nGlaciers carve fjords into the granite of the coast.\n';

async function parsed(client: Client, name = 'kb'): Promise<{ ds: DataSet; doc: Document }> {
  const ds = await client.createDataset({ name });
  const [doc] = await ds.uploadDocuments([{ display_name: 'notes.md', blob: enc(TIDES) }]);
  await ds.parseDocuments([doc!.id], { pollMs: 20 });
  const [fresh] = await ds.listDocuments({ id: doc!.id });
  return { ds, doc: fresh! };
}

const top = async (client: Client, ds: DataSet, question: string) =>
  (await client.retrieve({ question, dataset_ids: [ds.id], similarity_threshold: 0, vector_similarity_weight: 0 }))[0]?.content ?? '';

describe('Document#replaceContent()', () => {
  test('identical bytes: resolves false and changes nothing', async ({ client }) => {
    const { ds, doc } = await parsed(client);
    const before = doc.toJSON();
    expect(await doc.replaceContent(enc(TIDES))).toBe(false);
    const [after] = await ds.listDocuments({ id: doc.id });
    expect(after!.toJSON()).toEqual(before);
    expect(after!.run).toBe('DONE');
  });

  test('other bytes: same id, UNSTART, old chunks searchable until the parse swaps in the new ones', async ({ client }) => {
    const { ds, doc } = await parsed(client);
    expect(await doc.replaceContent(enc(GLACIERS))).toBe(true);
    expect([doc.id, doc.name, doc.run, doc.progress, doc.size]).toEqual([doc.id, 'notes.md', 'UNSTART', 0, enc(GLACIERS).length]);
    // The old chunks stay (and are counted) until the next parse.
    expect(doc.chunk_count).toBe(1);
    expect(await top(client, ds, 'moon tides')).toContain('moon');
    expect(Buffer.from(await doc.download()).toString()).toBe(GLACIERS);

    const [[id, status]] = await ds.parseDocuments([doc.id], { pollMs: 20 });
    expect([id, status]).toEqual([doc.id, 'DONE']);
    expect(await top(client, ds, 'glaciers fjords granite')).toContain('Glaciers carve fjords');
    const hits = await client.retrieve({ question: 'moon tides', dataset_ids: [ds.id], similarity_threshold: 0, vector_similarity_weight: 0 });
    expect(hits.some((c) => c.content.includes('moon'))).toBe(false);
    const docs = await ds.listDocuments();
    expect(docs.map((d) => [d.id, d.name])).toEqual([[doc.id, 'notes.md']]);
  });

  test("the old file's blob is dropped unless another document holds the same bytes", async ({ client, dir }) => {
    const { ds, doc } = await parsed(client);
    const [twin] = await ds.uploadDocuments([{ display_name: 'twin.md', blob: enc(TIDES) }]);
    const [other] = await ds.uploadDocuments([{ display_name: 'other.md', blob: enc('# Other\n\nsomething else\n') }]);
    await doc.replaceContent(enc(GLACIERS));
    expect(Buffer.from(await twin!.download()).toString()).toBe(TIDES);
    await other!.replaceContent(enc('# Other\n\nchanged\n'));
    const raw = new Database(join(dir, 'kb.db'), { readonly: true });
    try {
      // tides (twin), glaciers (doc), the changed other: the first 'other' blob is gone.
      expect((raw.prepare('SELECT COUNT(*) AS n FROM blob').get() as { n: number }).n).toBe(3);
      expect((raw.prepare('SELECT COUNT(*) AS n FROM blob b WHERE NOT EXISTS (SELECT 1 FROM document d WHERE d.blob_sha256 = b.sha256)').get() as { n: number }).n).toBe(0);
    } finally {
      raw.close();
    }
  });

  test('refused with 102 while the document is being parsed; bad input with 101 / 102', async ({ client }) => {
    const { ds, doc } = await parsed(client);
    await ds.asyncParseDocuments([doc.id]); // RUNNING from here until the parse ends
    const e = await apiError(doc.replaceContent(enc(GLACIERS)));
    expect([e.code, e.message]).toEqual([102, "Can't replace the file of a document that is currently being processed"]);
    while ((await ds.listDocuments({ id: doc.id }))[0]!.run === 'RUNNING') await new Promise((r) => setTimeout(r, 20));
    const bad = await apiError(doc.replaceContent('text' as unknown as Uint8Array));
    expect([bad.code, bad.message]).toEqual([101, 'notes.md: `blob` must be a Uint8Array, a Buffer or a stream of them']);
    // The refused calls changed nothing.
    const [after] = await ds.listDocuments({ id: doc.id });
    expect(Buffer.from(await after!.download()).toString()).toBe(TIDES);
  });

  test('a stream of bytes (a Node Readable) replaces the file as an upload\'s does; the same bytes streamed resolve false; a stream of non-bytes is 101 and changes nothing', async ({ client }) => {
    const { Readable } = await import('node:stream');
    const { ds, doc } = await parsed(client);
    const pieces = (text: string) => Readable.from([enc(text.slice(0, 10)), enc(text.slice(10))]);
    expect(await doc.replaceContent(pieces(GLACIERS))).toBe(true);
    expect([doc.run, doc.size]).toEqual(['UNSTART', enc(GLACIERS).length]);
    expect(Buffer.from(await doc.download()).toString()).toBe(GLACIERS);
    expect(await doc.replaceContent(pieces(GLACIERS))).toBe(false);
    const bad = await apiError(doc.replaceContent(Readable.from(['not bytes'], { objectMode: true })));
    expect([bad.code, bad.message]).toEqual([101, 'notes.md: `blob` must be a Uint8Array, a Buffer or a stream of them']);
    expect(Buffer.from(await doc.download()).toString()).toBe(GLACIERS);
    const [[, status]] = await ds.parseDocuments([doc.id], { pollMs: 20 });
    expect(status).toBe('DONE');
    expect(await top(client, ds, 'glaciers fjords granite')).toContain('Glaciers carve fjords');
  });

  test('Api: unknown dataset or document (102), a file larger than the store holds (500)', async ({ dir }) => {
    const api = new Api({ path: join(dir, 'api.db') });
    try {
      const ds = (await api.call('datasets.create', { name: 'kb' })) as { id: string };
      const [doc] = (await api.call('documents.upload', { dataset_id: ds.id, files: [{ display_name: 'a.md', blob: enc(TIDES) }] })) as Array<{ id: string }>;
      const ghost = 'f'.repeat(32);
      const nf = await apiError(api.call('documents.replaceContent', { dataset_id: ds.id, document_id: ghost, blob: enc(GLACIERS) }));
      expect([nf.code, nf.message]).toEqual([102, `You don't own the document ${ghost}.`]);
      const nd = await apiError(api.call('documents.replaceContent', { dataset_id: ghost, document_id: doc!.id, blob: enc(GLACIERS) }));
      expect([nd.code, nd.message]).toEqual([102, `You don't own the dataset ${ghost}.`]);
      // Refused by its length alone (a view claiming 1 GB + 1 over a small buffer is never read).
      const huge = new Proxy(enc('x'), { get: (t, k) => (k === 'byteLength' ? 1_000_000_001 : Reflect.get(t, k)) });
      const big = await apiError(api.call('documents.replaceContent', { dataset_id: ds.id, document_id: doc!.id, blob: huge }));
      expect(big.code).toBe(500);
      expect(big.message).toMatch(/^a\.md: File is too large to store/);
      const ok = (await api.call('documents.replaceContent', { dataset_id: ds.id, document_id: doc!.id, blob: enc(GLACIERS) })) as { replaced: boolean; document: { id: string; size: number } };
      expect([ok.replaced, ok.document.id, ok.document.size]).toEqual([true, doc!.id, enc(GLACIERS).length]);
    } finally {
      await api.close();
    }
  });

  test('a remote Client is told the operation is embedded-only (103)', async ({ dir }) => {
    const srv = await startServer({ path: join(dir, 'srv.db'), port: 0 });
    const remote = new Client({ baseUrl: srv.url, apiKey: srv.apiKey });
    try {
      const ds = await remote.createDataset({ name: 'r' });
      const [doc] = await ds.uploadDocuments([{ display_name: 'a.md', blob: enc(TIDES) }]);
      const e = await apiError(doc!.replaceContent(enc(GLACIERS)));
      expect(e.code).toBe(103);
      expect(e.message).toContain('documents.replaceContent');
    } finally {
      await remote.close();
      await srv.close();
    }
  });
});

/**
 * The analysed full-text rows the PostgreSQL store keeps beside its chunks (`chunk.fts`, read by
 * every process's FTS5 copy instead of analysing each chunk again) are the rows the chunk's
 * columns analyse to, after every write that changes them: add, parse, rewrite, rename, re-index.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { PgStore } from '../../src/store/index.js';
import { chunkTerms } from '../../src/store/postgres/chunk-store.js';
import { chunkLanguage } from '../../src/text/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { chunkOf, seedDataset, seedDocuments, seedTenant, vec, DIM } from '../store/contract/seed.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
afterAll(async () => {
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

describe.skipIf(!server)(`stored full-text rows${reason ? ` (${reason})` : ''}`, () => {
  test('equal the analysis of the columns after add, finish, rewrite, rename and a re-index', async () => {
    const url = await createStoreDatabase(server!, 'terms');
    urls.push(url);
    const s = await PgStore.open(url);
    try {
      const who = await seedTenant(s);
      const ds = await seedDataset(s, who);
      const [d, e] = await seedDocuments(s, who, ds, ['first.txt', 'second.txt']);
      const a = (await s.chunks.add(ds.id, chunkOf(d!, 'Wings flutter in the slipstream', 1, { important_keywords: ['Flutter'], questions: ['What flutters?'] })))!;
      await s.chunks.add(ds.id, chunkOf(d!, 'no title here', 2, { title: '' }));
      await s.parse.reset([e!.id], who.tenantId);
      await s.parse.finish([], [{ id: e!.id, dataset_id: ds.id, language: 'English', log: [], doneLines: [], failLine: '', seconds: 0, began: 0,
        chunks: [{ ...chunkOf(e!, '東京の気温と湿度', 3), chunk_order: 0 }, { ...chunkOf(e!, 'heat transfer in slabs', 4, { index_text: 'heat slabs' }), chunk_order: 1 }] }], 1, 1);
      await s.chunks.rewrite({ rowid: a.rowid, id: a.id, document_id: d!.id, dataset_id: ds.id }, { ...chunkOf(d!, 'Wings rewritten', 5), id: a.id, vector: vec(DIM, 5) });
      await s.documents.update(d!, { changes: { name: 'renamed.txt' }, resetChunks: false });
      await s.datasets.update(ds.id, { language: 'Japanese' });
      for (let after = 0; ;) {
        const r = await s.chunks.reindexSlice(ds.id, after, 2, (text, kw, qs) => chunkLanguage('ja', text, kw, qs));
        if (r.last === null) break;
        after = r.last;
      }
      const rows = await s.db.rows<{ rowid: number; content: string; index_text: string | null; important_keywords: string; questions: string; title: string; lang: string | null; fts: string[] | null }>(
        `SELECT c.rowid, c.content, c.index_text, c.important_keywords, c.questions, CASE WHEN c.titled = 1 THEN d.name ELSE '' END AS title, c.lang, c.fts
        FROM chunk c JOIN document d ON d.id = c.document_id ORDER BY c.rowid`);
      expect(rows).toHaveLength(4);
      for (const r of rows) expect(r.fts, `chunk ${r.rowid}`).toEqual([...chunkTerms(r)]);
      expect(rows.some((r) => r.fts![0]!.includes('renam'))).toBe(true);
    } finally {
      await s.close();
    }
  });
});

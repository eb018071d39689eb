/**
 * Two Clients on one file (two connections, as two processes have): the vector index and term
 * index copies of one must follow the other's commits, including a chunk id SQLite reuses (the highest row deleted,
 * then a row inserted: rowid = max + 1 again) after the first one saw the delete.
 */
import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';
import { termIndex, termIndexOptions } from '../../src/search/index.js';
import { sqliteSearch, type Db } from '../../src/store/index.js';

const dbOf = (c: Client) => (c as unknown as { api: { engine: { db: Db } } }).api.engine.db;

test('a reused chunk rowid written by another connection is found on the next search', async ({ dir }) => {
  const path = join(dir, 'kb.db');
  const a = new Client({ path });
  const b = new Client({ path });
  try {
    const ds = await a.createDataset({ name: 'x' });
    const [docA] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: new TextEncoder().encode('The harbour wall keeps the sea out.') }]);
    await ds.parseDocuments([docA!.id], { pollMs: 20 });
    const find = (c: Client, q: string, w: number) => c.retrieve({ dataset_ids: [ds.id], question: q, similarity_threshold: 0, vector_similarity_weight: w });
    const [dsB] = await b.listDatasets({ id: ds.id });
    const [docB] = await dsB!.listDocuments({ id: docA!.id });
    const first = await docB!.addChunk({ content: 'quokkaword the first note on the pier' });
    expect((await find(a, 'quokkaword', 0))[0]?.id).toBe(first.id); // A's index now knows the highest row
    await docB!.deleteChunks({ ids: [first.id] });
    expect((await find(a, 'quokkaword', 0)).map((c) => c.id)).not.toContain(first.id); // A saw the delete
    const second = await docB!.addChunk({ content: 'wombatword the second note on the pier' }); // same rowid again
    expect((await find(a, 'wombatword', 0))[0]?.id).toBe(second.id);
    expect((await find(a, 'wombatword the second note on the pier', 1)).slice(0, 2).map((c) => c.id)).toContain(second.id);
  } finally {
    await b.close();
    await a.close();
  }
}, 60_000);

/** `c`'s retrieval with the term index, checked against FTS5's (the index switched off). */
async function checkedAgainstFts5(c: Client, params: Parameters<Client['retrieveWithTotals']>[0]) {
  await termIndex(sqliteSearch(dbOf(c))); // built (no-op once it is): a store's first searches ask FTS5 while it is built
  const on = await c.retrieveWithTotals(params);
  termIndexOptions.enabled = false;
  try {
    expect(on).toEqual(await c.retrieveWithTotals(params));
  } finally {
    termIndexOptions.enabled = true;
  }
  return on;
}

// The term index (src/search/term-index.ts) follows writes the same way: after each write of
// either connection, A's next retrieval is what FTS5 itself ranks (the index switched off).
describe('the term index follows writes of this and another connection', () => {
  const LINES = Array.from({ length: 40 }, (_, i) => `harbour note ${i} about the pier, the tide and the ${i % 2 ? 'north' : 'south'} wall`);

  test('add, update, switch off, delete, re-parse, delete a document and a dataset', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const a = new Client({ path });
    const b = new Client({ path });
    try {
      const ds = await a.createDataset({ name: 'x', chunk_method: 'naive', parser_config: { chunk_token_num: 64, delimiter: '\n' } });
      const [doc] = await ds.uploadDocuments([{ display_name: 'notes.txt', blob: new TextEncoder().encode(LINES.join('\n')) }]);
      await ds.parseDocuments([doc!.id], { pollMs: 20 });
      // Nearly text only, with a threshold: chunks without the question's words are left out.
      const params = (question: string) => ({ dataset_ids: [ds.id], question, similarity_threshold: 0.05, vector_similarity_weight: 0.01 });
      // A's answer with the index, checked against FTS5's; returns the chunk ids.
      const ask = async (question: string): Promise<string[]> => (await checkedAgainstFts5(a, params(question))).chunks.map((c) => c.id);
      const first = await ask('harbour tide');
      expect(first.length).toBeGreaterThan(3);
      const [dsB] = await b.listDatasets({ id: ds.id });
      const [docB] = await dsB!.listDocuments({ id: doc!.id });
      for (const [who, d] of [['b', docB!], ['a', doc!]] as const) {
        const added = await d.addChunk({ content: `quokkaword${who} lives on the breakwater`, important_keywords: [`keyword${who}`] });
        expect((await ask(`quokkaword${who}`))[0]).toBe(added.id);
        expect((await ask(`keyword${who}`))[0]).toBe(added.id);
        const [chunk] = await d.listChunks({ id: added.id });
        await chunk!.update({ content: `wombatword${who} replaced the text`, important_keywords: [`other${who}`] });
        expect(await ask(`quokkaword${who}`)).not.toContain(added.id);
        expect((await ask(`wombatword${who}`))[0]).toBe(added.id);
        expect(await ask(`keyword${who}`)).not.toContain(added.id);
        expect((await ask(`other${who}`))[0]).toBe(added.id);
        await chunk!.update({ available: false });
        expect(await ask(`wombatword${who}`)).not.toContain(added.id);
        await chunk!.update({ available: true });
        expect((await ask(`wombatword${who}`))[0]).toBe(added.id);
        await d.deleteChunks({ ids: [added.id] });
        expect(await ask(`wombatword${who}`)).not.toContain(added.id);
      }
      // The document switched off and on, then re-parsed by the other connection: new chunks.
      await docB!.update({ enabled: 0 });
      expect(await ask('harbour tide')).toEqual([]);
      await docB!.update({ enabled: 1 });
      const before = await ask('harbour tide');
      expect(before).toEqual(first);
      await docB!.update({ chunk_method: 'one' });
      expect(await ask('harbour tide')).toEqual([]);
      await dsB!.parseDocuments([docB!.id], { pollMs: 20 });
      const one = await ask('harbour tide');
      expect(one.length).toBe(1);
      expect(before).not.toContain(one[0]);
      // A second document, then the first deleted; then the whole dataset.
      const [doc2] = await dsB!.uploadDocuments([{ display_name: 'more.txt', blob: new TextEncoder().encode('kestrelword hovering over the harbour tide') }]);
      await dsB!.parseDocuments([doc2!.id], { pollMs: 20 });
      expect((await ask('kestrelword')).length).toBe(1);
      await dsB!.deleteDocuments({ ids: [docB!.id] });
      expect(await ask('harbour tide')).toEqual([(await ask('kestrelword'))[0]]);
      await b.deleteDatasets({ ids: [ds.id] });
      await expect(a.retrieve(params('harbour'))).rejects.toThrow();
    } finally {
      await b.close();
      await a.close();
    }
  }, 120_000);

  test('a bulk delete (a compaction of the copy) and a reused rowid', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const a = new Client({ path });
    const b = new Client({ path });
    try {
      // One chunk per line (lines are longer than 8 tokens).
      const ds = await a.createDataset({ name: 'x', chunk_method: 'naive', parser_config: { chunk_token_num: 8, delimiter: '\n' } });
      const big = Array.from({ length: 1600 }, (_, i) => `line ${i} of the ledger, column ${i % 7}, row ${i % 13}`);
      const docs = await ds.uploadDocuments([
        { display_name: 'big.txt', blob: new TextEncoder().encode(big.join('\n')) },
        { display_name: 'small.txt', blob: new TextEncoder().encode('ledger summary of the column totals\nledger row seven') },
      ]);
      await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 20 });
      const q = { dataset_ids: [ds.id], question: 'ledger column row', similarity_threshold: 0.05, vector_similarity_weight: 0.01 };
      const same = () => checkedAgainstFts5(a, q);
      expect((await same()).total).toBeGreaterThan(2);
      expect((await termIndex(sqliteSearch(dbOf(a))))!.size).toBeGreaterThan(1600);
      const [dsB] = await b.listDatasets({ id: ds.id });
      await dsB!.deleteDocuments({ ids: [docs[0]!.id] }); // 1,600 rows gone at once
      const left = await same();
      expect(left.chunks.length).toBeGreaterThan(0);
      expect(left.chunks.every((c) => c.document_id === docs[1]!.id)).toBe(true);
      // The highest row deleted and a row inserted after it: SQLite gives it the same rowid.
      const [small] = await dsB!.listDocuments({ id: docs[1]!.id });
      const c1 = await small!.addChunk({ content: 'ibisword the last row' });
      await same();
      expect((await a.retrieve({ ...q, question: 'ibisword' }))[0]?.id).toBe(c1.id);
      await small!.deleteChunks({ ids: [c1.id] });
      const c2 = await small!.addChunk({ content: 'cranewword the row after it' });
      expect((await a.retrieve({ ...q, question: 'ibisword' })).map((c) => c.id)).not.toContain(c1.id);
      expect((await a.retrieve({ ...q, question: 'cranewword' }))[0]?.id).toBe(c2.id);
      await same();
    } finally {
      await b.close();
      await a.close();
    }
  }, 120_000);
});

/**
 * A ranked page from the node's memory (issue 30: search p50 within 10% of SQLite's): on
 * PostgreSQL the term index keeps each chunk's page row as its row was last read from the change
 * feed, so a warm search sends no statement for its page. Another node's chunk edit, keyword edit,
 * availability switch, rename and chunk deletion reach this node's page with the feed, and every
 * answer equals the one read from the store (the term index off); a row the index lacks is read.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { Api } from '../../src/api/index.js';
import type { PgStore } from '../../src/store/index.js';
import { indexMemoryStats, setIndexMemory, termIndexOptions } from '../../src/search/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { addChunks } from '../support/seeded-chunks.js';
import { withoutTermIndex } from '../support/term-index-off.js';

const server = await pgServer();
const reason = await pgSkipReason();
const dbs: string[] = [];
afterAll(async () => {
  for (const u of dbs) await dropDatabase(server!, u).catch(() => undefined);
});

type Chunk = { id: string; content: string; document_id: string; document_name: string; important_keywords: string[]; available: boolean; similarity: number };
type Answer = { total: number; chunks: Chunk[]; doc_aggs: Array<{ doc_name: string; doc_id: string; count: number }> };

async function seeded(): Promise<{ url: string; id: string }> {
  const url = await createStoreDatabase(server!, 'pages');
  dbs.push(url);
  const api = await Api.open({ postgres: url });
  try {
    const ds = (await api.call('datasets.create', { name: 'pages' })) as { id: string };
    for (let i = 0; i < 6; i++) await addChunks(api, ds.id, `doc${i}.txt`, 20, i + 1);
    return { url, id: ds.id };
  } finally {
    await api.close();
  }
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it holds (false after 5 s: the feed's bound is 1 s p95). */
async function seen(probe: () => Promise<boolean>): Promise<boolean> {
  const t0 = Date.now();
  for (;;) {
    if (await probe()) return true;
    if (Date.now() - t0 > 5_000) return false;
    await sleep(10);
  }
}

describe.skipIf(!server)(`a ranked page from the node's memory${reason ? ` (${reason})` : ''}`, () => {
  test('another node\'s edits reach the page with the feed; every answer equals the store\'s; a warm page sends no statement', async () => {
    const { url, id } = await seeded();
    const [a, b] = [await Api.open({ postgres: url }), await Api.open({ postgres: url })];
    try {
      const reader = b.engine.store.search;
      setIndexMemory(reader, 1 << 30);
      const q = () => b.call('retrieval', { question: 'wing flow shock heat panel', dataset_ids: [id], similarity_threshold: 0, top_k: 100, page_size: 12, highlight: true }) as Promise<Answer>;
      const db = (b.engine.store as PgStore).db;
      let reads = 0;
      const pageRows = reader.pageRows.bind(reader);
      reader.pageRows = (rowids, documentIds) => {
        reads++;
        return pageRows(rowids, documentIds);
      };
      await q();
      await q();
      const before = db.statements;
      reads = 0;
      const first = await q();
      expect(db.statements - before, 'statements for a warm search').toBe(0);
      expect(reads).toBe(0);
      expect(first.chunks.length).toBe(12);
      // The term index and the store's full-text copy each follow the feed: equal once both applied it.
      const same = async () => {
        let got: Answer | undefined;
        let want: Answer | undefined;
        await seen(async () => {
          [got, want] = [await q(), await withoutTermIndex(q)];
          return JSON.stringify(got) === JSON.stringify(want);
        });
        expect(got).toEqual(want);
        return got!;
      };
      expect(await same()).toEqual(first);
      const bytes = () => indexMemoryStats(reader).terms.find((t) => t.dataset === id)!.bytes;
      const held = bytes();

      const top = first.chunks[0]!;
      const edit = (body: Record<string, unknown>, chunk = top) => a.call('chunks.update', { dataset_id: id, document_id: chunk.document_id, chunk_id: chunk.id, ...body });
      // The content: the same words (it stays on the page), one more of them.
      const content = `${top.content} wing`;
      await edit({ content });
      expect(await seen(async () => (await q()).chunks.some((c) => c.content === content)), 'content edit seen').toBe(true);
      expect((await same()).chunks.find((c) => c.id === top.id)!.content).toBe(content);
      // Its keywords.
      await edit({ important_keywords: ['airfoil', 'wing'] });
      expect(await seen(async () => (await q()).chunks.some((c) => c.important_keywords.includes('airfoil'))), 'keywords seen').toBe(true);
      await same();
      // Availability off (gone from the page), then on again: the full-text row is unchanged, the page row not.
      await a.call('chunks.switch', { dataset_id: id, document_id: top.document_id, chunk_ids: [top.id], available_int: 0 });
      expect(await seen(async () => !(await q()).chunks.some((c) => c.id === top.id)), 'switch off seen').toBe(true);
      await same();
      await a.call('chunks.switch', { dataset_id: id, document_id: top.document_id, chunk_ids: [top.id], available_int: 1 });
      expect(await seen(async () => (await q()).chunks.some((c) => c.id === top.id && c.available)), 'switch on seen').toBe(true);
      await same();
      // A rename of the top chunk's document.
      await a.call('documents.update', { dataset_id: id, document_id: top.document_id, name: 'renamed.txt' });
      expect(await seen(async () => (await q()).chunks.some((c) => c.document_name === 'renamed.txt')), 'rename seen').toBe(true);
      expect((await same()).chunks.some((c) => c.document_name === top.document_name)).toBe(false);
      // A deletion of a chunk on the page.
      const gone = first.chunks[1]!;
      await a.call('chunks.delete', { dataset_id: id, document_id: gone.document_id, chunk_ids: [gone.id] });
      expect(await seen(async () => !(await q()).chunks.some((c) => c.id === gone.id)), 'deletion seen').toBe(true);
      await same();
      // Still no statement for a warm page, and the page rows are counted in the index's bytes.
      await q();
      const after = db.statements;
      reads = 0;
      await q();
      expect(db.statements - after).toBe(0);
      expect(reads).toBe(0);
      expect(Math.abs(bytes() - held)).toBeLessThan(held / 10);
      termIndexOptions.pages = false;
      try {
        const want = await withoutTermIndex(q);
        reads = 0;
        expect(await q()).toEqual(want);
        expect(reads).toBe(1);
      } finally {
        termIndexOptions.pages = true;
      }
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  test('page rows the index lacks are read, with the same answer; pages off hold none', async () => {
    const { url, id } = await seeded();
    const q = (api: Api) => api.call('retrieval', { question: 'vortex drag cylinder', dataset_ids: [id], similarity_threshold: 0, page_size: 10 }) as Promise<Answer>;
    const full = await Api.open({ postgres: url });
    setIndexMemory(full.engine.store.search, 1 << 30);
    const truth = await withoutTermIndex(() => q(full));
    expect(await q(full)).toEqual(truth);
    // Built with pages off: it holds no page rows, then pages on: only rows read since hold theirs.
    termIndexOptions.pages = false;
    const node = await Api.open({ postgres: url });
    try {
      const reader = node.engine.store.search;
      setIndexMemory(reader, 1 << 30);
      expect(await q(node)).toEqual(truth);
      const [lean, fat] = [reader, full.engine.store.search].map((r) => indexMemoryStats(r).terms.find((t) => t.dataset === id)!.bytes);
      console.log(`term index of 120 chunks: ${fat} bytes with page rows, ${lean} without`);
      expect(lean!).toBeLessThan(fat! - 120 * 100);
      termIndexOptions.pages = true;
      const asked: number[][] = [];
      const pageRows = reader.pageRows.bind(reader);
      reader.pageRows = (rowids, documentIds) => {
        asked.push([...rowids]);
        return pageRows(rowids, documentIds);
      };
      // Two of the page's chunks re-read (switched off and on again): their rows are held now.
      for (const on of [0, 1]) {
        for (const c of truth.chunks.slice(2, 4)) await node.call('chunks.switch', { dataset_id: id, document_id: c.document_id, chunk_ids: [c.id], available_int: on });
        await q(node);
      }
      const rowids = truth.chunks.map((c) => (c as unknown as { row_id: number }).row_id);
      const after = await withoutTermIndex(() => q(node));
      expect(after.chunks.map((c) => c.id)).toEqual(truth.chunks.map((c) => c.id));
      asked.length = 0;
      expect(await q(node)).toEqual(after);
      expect(asked).toEqual([[...rowids.slice(0, 2), ...rowids.slice(4)]]);
    } finally {
      termIndexOptions.pages = true;
      await node.close();
      await full.close();
    }
  }, 60_000);
});

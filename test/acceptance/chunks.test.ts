/**
 * Parsing, chunks and retrieval in both modes; retrieval must give the same chunks with the same
 * scores as the embedded engine given the same steps.
 */
import { describe, expect } from 'vitest';
import type { Client } from '../../src/index.js';
import { MODES, acceptance, failure, parsedDataset, portable, CORPUS } from './modes.js';

/** The same retrievals on any client; ids left out (they differ between databases). */
async function retrievals(c: Client) {
  const { ds, docs } = await parsedDataset(c);
  const q = (p: Omit<Parameters<typeof c.retrieve>[0], 'dataset_ids'>) => c.retrieve({ dataset_ids: [ds.id], ...p });
  const view = (chunks: Awaited<ReturnType<typeof q>>) =>
    chunks.map((x) => ({ content: x.content, document_keyword: x.document_keyword, similarity: x.similarity, vector_similarity: x.vector_similarity, term_similarity: x.term_similarity }));
  return {
    plain: view(await q({ question: 'What pulls the ocean tides?' })),
    weighted: view(await q({ question: 'how long to bake bread', vector_similarity_weight: 0.7, similarity_threshold: 0.05, top_k: 16 })),
    paged: view(await q({ question: 'river water', page: 1, page_size: 1 })),
    one_document: view(await q({ question: 'moon', document_ids: [docs[0]!.id], highlight: true })),
    metadata: view(await q({ question: 'moon', metadata_condition: { logic: 'and', conditions: [{ name: 'author', comparison_operator: 'is', value: 'nobody' }] } })),
    // RAGFlow's total and doc_aggs (the REST answer has them; the remote transport must keep them).
    totals: await totals(c, ds.id, 'river water'),
    blank: await totals(c, ds.id, '  '),
  };
}

async function totals(c: Client, dataset: string, question: string) {
  const r = await c.retrieveWithTotals({ dataset_ids: [dataset], question, page_size: 1, similarity_threshold: 0 });
  return { total: r.total, page: r.chunks.map((x) => [x.content, x.similarity]), doc_aggs: r.doc_aggs.map((a) => [a.doc_name, a.count]) };
}

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('DataSet#parseDocuments() / Document#listChunks() / addChunk() / Chunk#update() / deleteChunks()', () => {
    test('parse, then chunk CRUD', async ({ client, reference }) => {
      const { ds, docs } = await parsedDataset(client);
      const ref = await parsedDataset(reference);
      // The same documents give the same chunks in both modes.
      expect(docs.map((d) => d.name)).toEqual(Object.keys(CORPUS));
      const listed = await ds.listDocuments({ desc: false });
      expect(listed.map((d) => [d.name, d.run, d.progress, d.chunk_count, d.token_count])).toEqual(
        (await ref.ds.listDocuments({ desc: false })).map((d) => [d.name, d.run, d.progress, d.chunk_count, d.token_count]),
      );
      const chunks = await listed[0]!.listChunks();
      expect(portable(chunks)).toEqual(portable(await (await ref.ds.listDocuments({ desc: false }))[0]!.listChunks()));
      expect(chunks[0]).toMatchObject({ document_id: listed[0]!.id, dataset_id: ds.id, available: true });

      const doc = listed[1]!;
      const added = await doc.addChunk({ content: 'Sourdough needs a starter.', important_keywords: ['starter'], questions: ['What does sourdough need?'], tag_kwd: ['baking'] });
      expect(added).toMatchObject({ content: 'Sourdough needs a starter.', important_keywords: ['starter'], questions: ['What does sourdough need?'], document_id: doc.id, dataset_id: ds.id });
      expect((await doc.listChunks({ keywords: 'sourdough' })).map((c) => c.id)).toEqual([added.id]);
      expect((await doc.listChunks({ id: added.id }))[0]!.content).toBe('Sourdough needs a starter.');
      expect((await doc.listChunks({ page: 1, page_size: 1 })).length).toBe(1);

      await added.update({ content: 'Sourdough needs a lively starter.', available: false });
      expect(added).toMatchObject({ content: 'Sourdough needs a lively starter.', available: false });
      expect((await doc.listChunks({ id: added.id }))[0]).toMatchObject({ content: 'Sourdough needs a lively starter.', available: false });

      await doc.deleteChunks({ ids: [added.id] });
      expect((await doc.listChunks()).map((c) => c.id)).not.toContain(added.id);
      await doc.deleteChunks({ delete_all: true });
      expect(await doc.listChunks()).toEqual([]);

      // Re-parsing starts over; cancelling an idle document is refused.
      expect(await failure(ds.asyncCancelParseDocuments([doc.id]))).toEqual([102, "Can't stop parsing document that has not started or already completed"]);
      const [[, run, count]] = await ds.parseDocuments([doc.id], { pollMs: 20 });
      expect([run, count]).toEqual(['DONE', listed[1]!.chunk_count]);
    });

    test('errors', async ({ client }) => {
      const { ds, docs } = await parsedDataset(client);
      const doc = docs[0]!;
      expect(await failure(ds.asyncParseDocuments([]))).toEqual([102, '`document_ids` is required']);
      expect(await failure(ds.asyncParseDocuments(['nope']))).toEqual([102, "Documents not found: ['nope']"]);
      expect(await failure(doc.addChunk({ content: '' }))).toEqual([102, '`content` is required']);
      expect(await failure(doc.addChunk({ content: 'x', important_keywords: 'a' as never }))).toEqual([102, '`important_keywords` is required to be a list']);
      const [chunk] = await doc.listChunks();
      expect(await failure(chunk!.update({ important_keywords: 'a' as never }))).toEqual([102, '`important_keywords` should be a list']);
      expect(await failure(doc.deleteChunks({ ids: ['nope'] }))).toEqual([102, 'rm_chunk deleted chunks 0, expect 1']);
    });
  });

  describe('Client#retrieve()', () => {
    test('same chunks and scores as the embedded engine', async ({ client, reference }) => {
      const got = await retrievals(client);
      expect(got.plain.length).toBeGreaterThan(0);
      expect(got.plain[0]!.content).toContain('moon');
      expect(got.paged).toHaveLength(1);
      expect(got.metadata).toEqual([]);
      // total counts every survivor of the window, not the page; doc_aggs splits it by document.
      expect(got.totals.page).toHaveLength(1);
      expect(got.totals.total).toBeGreaterThan(1);
      expect(got.totals.doc_aggs.reduce((n, [, k]) => n + (k as number), 0)).toBe(got.totals.total);
      expect(got.blank).toEqual({ total: 0, page: [], doc_aggs: [] });
      // Scores are doubles; JSON carries them exactly, so equality is exact.
      expect(got).toEqual(await retrievals(reference));
    });

    test('errors', async ({ client }) => {
      const ds = await client.createDataset({ name: 'kb' });
      expect(await failure(client.retrieve({ question: 'q' } as never))).toEqual([102, '`dataset_ids` is required.']);
      expect(await failure(client.retrieve({ dataset_ids: [ds.id] } as never))).toEqual([102, '`question` is required.']);
      expect(await failure(client.retrieve({ question: 'q', dataset_ids: ds.id as never }))).toEqual([102, '`dataset_ids` should be a list.']);
      expect(await failure(client.retrieve({ question: 'q', dataset_ids: [ds.id], vector_similarity_weight: 2 }))).toEqual([101, '`vector_similarity_weight` should be in [0, 1]']);
      expect(await failure(client.retrieve({ question: 'q', dataset_ids: [ds.id], top_k: 0 }))).toEqual([102, '`top_k` must be greater than 0']);
      // RAGFlow takes any threshold (above 1 it silently finds nothing); refused as the CLI and chats refuse it.
      expect(await failure(client.retrieve({ question: 'q', dataset_ids: [ds.id], similarity_threshold: 3 }))).toEqual([101, '`similarity_threshold` should be in [0, 1]']);
      expect(await failure(client.createChat({ name: 'c', similarity_threshold: 3 }))).toEqual([102, '`similarity_threshold` should be a number in [0, 1].']);
    });
  });
});

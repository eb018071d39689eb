/**
 * ragloom/llamaindex against the real `llamaindex` / `@llamaindex/core` (and @llamaindex/openai's
 * OpenAI LLM talking to a loopback OpenAI-protocol stand-in), over a local and a remote Client.
 */
import { describe, expect, beforeAll, afterAll, it } from 'vitest';
import {
  Document, Settings, VectorStoreIndex, RetrieverQueryEngine, MetadataMode, storageContextFromDefaults, IngestionPipeline, DocStoreStrategy, SimpleDocumentStore, SentenceSplitter,
} from 'llamaindex';
import { VectorStoreQueryMode, FilterOperator, type MetadataFilters } from '@llamaindex/core/vector-store';
import { OpenAI } from '@llamaindex/openai';
import { RagloomVectorStore, RagloomRetriever, RagloomEmbedding, toMetadataCondition } from '../../src/integrations/llamaindex/index.js';
import { MODES, acceptance, caught, parsedDataset } from '../acceptance/modes.js';
import { startChatServer, type ChatServer, type ChatRequestBody } from '../support/chat-server.js';

let llm: ChatServer;
beforeAll(async () => {
  llm = await startChatServer();
  Settings.embedModel = new RagloomEmbedding();
  Settings.llm = new OpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: llm.url, maxRetries: 0 });
});
afterAll(() => llm.close());

const SOURCES = [
  new Document({ id_: 'tides', text: 'The gravitational pull of the moon raises the ocean tides twice a day.', metadata: { file_name: 'tides.md', topic: 'sea', year: 2021, tags: ['moon', 'ocean'] } }),
  new Document({ id_: 'bread', text: 'Knead the bread dough for ten minutes, then let it rise in a warm place.', metadata: { file_name: 'bread.md', topic: 'food', year: 2019, tags: ['baking'] } }),
  new Document({ id_: 'rivers', text: 'Rivers carry water from the mountains to the sea; the Nile is the longest.', metadata: { file_name: 'rivers.txt', topic: 'sea', year: 2023, tags: ['water', 'ocean'] } }),
];

/** The stand-in answers with the first passage of context it was sent. */
const firstPassage = (b: ChatRequestBody): string => {
  const all = b.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
  return /(The gravitational pull[^.]*\.|Knead[^.]*\.|Rivers carry[^;]*)/.exec(all)?.[1] ?? 'no context';
};

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('RagloomVectorStore in a VectorStoreIndex', () => {
    test('fromDocuments stores each source as a ragloom document; retrievers in DEFAULT, SPARSE and HYBRID modes rank as client.retrieve; a query engine answers from it', async ({ client }) => {
      const ds = await client.createDataset({ name: 'li' });
      const store = new RagloomVectorStore({ client, dataset_id: ds.id });
      expect(await store.ownEmbeddings()).toBe(true);
      const index = await VectorStoreIndex.fromDocuments(SOURCES, { storageContext: await storageContextFromDefaults({ vectorStore: store }) });
      const docs = await ds.listDocuments({ orderby: 'name', desc: false });
      expect(docs.map((d) => [d.name, d.chunk_count, d.meta_fields.ref_doc_id])).toEqual([['bread.md', 1, 'bread'], ['rivers.txt', 1, 'rivers'], ['tides.md', 1, 'tides']]);

      const question = 'What does the moon do to the ocean?';
      const ranked = async (m: VectorStoreQueryMode, alpha?: number) => {
        const r = index.asRetriever({ similarityTopK: 2, mode: m });
        // The retriever has no alpha option: it goes through the store's query.
        if (alpha === undefined) return (await r.retrieve({ query: question })).map((n) => [n.node.metadata.file_name, n.score]);
        const q = await store.query({ queryStr: question, mode: m, alpha, similarityTopK: 2, queryEmbedding: await Settings.embedModel.getTextEmbedding(question) });
        return q.nodes!.map((n, i) => [n.metadata.file_name, q.similarities[i]]);
      };
      const direct = async (w: number | undefined) => (await client.retrieve({
        dataset_ids: [ds.id], question, page_size: 2, similarity_threshold: 0, ...(w === undefined ? {} : { vector_similarity_weight: w }),
      })).map((c) => [c.document_name, c.similarity]);
      expect(await ranked(VectorStoreQueryMode.DEFAULT)).toEqual(await direct(1));
      expect(await ranked(VectorStoreQueryMode.SPARSE)).toEqual(await direct(0));
      expect(await ranked(VectorStoreQueryMode.HYBRID)).toEqual(await direct(undefined));
      expect(await ranked(VectorStoreQueryMode.HYBRID, 0.6)).toEqual(await direct(0.6));
      expect((await ranked(VectorStoreQueryMode.HYBRID))[0]![0]).toBe('tides.md');

      // The nodes come back with their source's metadata and source id, also from an index opened over the store alone.
      const reopened = await VectorStoreIndex.fromVectorStore(new RagloomVectorStore({ client, dataset_id: ds.id }));
      const [hit] = await reopened.asRetriever({ similarityTopK: 1 }).retrieve({ query: question });
      expect(hit!.node.metadata).toEqual(SOURCES[0]!.metadata);
      expect(hit!.node.sourceNode?.nodeId).toBe('tides');
      expect(hit!.node.getContent(MetadataMode.NONE)).toBe(SOURCES[0]!.text);

      // A query engine over the index: the LLM gets the retrieved text, its answer comes back with the sources.
      llm.reset();
      llm.script({ text: firstPassage }, { text: firstPassage });
      const answer = await index.asQueryEngine({ similarityTopK: 1 }).query({ query: question });
      expect(answer.toString()).toBe('The gravitational pull of the moon raises the ocean tides twice a day.');
      expect(answer.sourceNodes?.[0]?.node.metadata.file_name).toBe('tides.md');
      const streamed: string[] = [];
      for await (const part of await index.asQueryEngine({ similarityTopK: 1 }).query({ query: question, stream: true })) streamed.push(part.delta);
      expect(streamed.length).toBeGreaterThan(3);
      expect(streamed.join('')).toBe(answer.toString());
    });

    test('metadata filters map to metadata_condition; docIds, delete and append by source; bad queries are refused', async ({ client }) => {
      const ds = await client.createDataset({ name: 'li' });
      const store = new RagloomVectorStore({ client, dataset_id: ds.id });
      await VectorStoreIndex.fromDocuments(SOURCES, { storageContext: await storageContextFromDefaults({ vectorStore: store }) });
      const names = async (filters?: MetadataFilters, extra: { docIds?: string[] } = {}) => {
        const r = await store.query({ queryStr: 'water', mode: VectorStoreQueryMode.HYBRID, similarityTopK: 5, filters, ...extra });
        return r.nodes!.map((n) => n.metadata.file_name as string).sort();
      };
      const f = (filters: MetadataFilters['filters'], condition?: 'and' | 'or'): MetadataFilters => ({ filters, ...(condition ? { condition } : {}) });
      expect(await names()).toEqual(['bread.md', 'rivers.txt', 'tides.md']);
      expect(await names(f([{ key: 'topic', value: 'sea', operator: FilterOperator.EQ }]))).toEqual(['rivers.txt', 'tides.md']);
      expect(await names(f([{ key: 'topic', value: 'sea', operator: FilterOperator.NE }]))).toEqual(['bread.md']);
      expect(await names(f([{ key: 'year', value: 2020, operator: FilterOperator.GT }, { key: 'topic', value: 'sea', operator: FilterOperator.EQ }]))).toEqual(['rivers.txt', 'tides.md']);
      expect(await names(f([{ key: 'year', value: 2019, operator: FilterOperator.LTE }, { key: 'year', value: 2023, operator: FilterOperator.GTE }], 'or'))).toEqual(['bread.md', 'rivers.txt']);
      expect(await names(f([{ key: 'year', value: [2019, 2021], operator: FilterOperator.IN }]))).toEqual(['bread.md', 'tides.md']);
      expect(await names(f([{ key: 'year', value: [2019, 2021], operator: FilterOperator.NIN }]))).toEqual(['rivers.txt']);
      expect(await names(f([{ key: 'tags', value: 'ocean', operator: FilterOperator.CONTAINS }]))).toEqual(['rivers.txt', 'tides.md']);
      expect(await names(f([{ key: 'tags', value: ['baking', 'moon'], operator: FilterOperator.ANY }]))).toEqual(['bread.md', 'tides.md']);
      expect(await names(f([{ key: 'tags', value: ['water', 'ocean'], operator: FilterOperator.ALL }]))).toEqual(['rivers.txt']);
      expect(await names(f([{ key: 'file_name', value: 'RIV', operator: FilterOperator.TEXT_MATCH }]))).toEqual(['rivers.txt']);
      expect(await names(f([{ key: 'author', operator: FilterOperator.IS_EMPTY }]))).toEqual(['bread.md', 'rivers.txt', 'tides.md']);
      expect(await names(undefined, { docIds: ['bread', 'rivers'] })).toEqual(['bread.md', 'rivers.txt']);
      expect(await names(undefined, { docIds: ['nothing'] })).toEqual([]);

      // More nodes of a stored source are appended to its document; delete(refDocId) removes it.
      await VectorStoreIndex.fromDocuments([new Document({ id_: 'bread', text: 'Bake the loaf at 220 degrees for thirty minutes.', metadata: { file_name: 'bread.md', topic: 'food', year: 2019 } })],
        { storageContext: await storageContextFromDefaults({ vectorStore: store }) });
      expect((await ds.listDocuments({ name: 'bread.md' })).map((d) => d.chunk_count)).toEqual([2]);
      await store.delete('bread');
      expect((await ds.listDocuments()).map((d) => d.name).sort()).toEqual(['rivers.txt', 'tides.md']);

      await expect(store.query({ queryStr: 'x', mode: VectorStoreQueryMode.MMR, similarityTopK: 1 })).rejects.toThrow(/Query mode "mmr" is not supported/);
      await expect(store.query({ queryStr: '', mode: VectorStoreQueryMode.HYBRID, similarityTopK: 1 })).rejects.toThrow(/needs queryStr/);
      await expect(store.query({ mode: VectorStoreQueryMode.DEFAULT, similarityTopK: 1 })).rejects.toThrow(/needs queryEmbedding/);
      await expect(names(f([{ key: 'x', value: 'y', operator: 'regex' as FilterOperator }]))).rejects.toThrow(/Filter operator "regex"/);
      const e = await caught(store.query({ queryStr: 'water', mode: VectorStoreQueryMode.HYBRID, alpha: 3, similarityTopK: 1 }));
      expect([e.code, e.message]).toEqual([101, '`vector_similarity_weight` should be in [0, 1]']);
    });

    test("LlamaIndex's own paths: index.insert and deleteRefDoc, an ingestion pipeline's upserts, a chat engine", async ({ client }) => {
      const ds = await client.createDataset({ name: 'li-paths' });
      const store = new RagloomVectorStore({ client, dataset_id: ds.id });
      const index = await VectorStoreIndex.fromVectorStore(store);
      await index.insert(SOURCES[0]!);
      await index.insert(SOURCES[1]!);
      const names = async () => (await ds.listDocuments()).map((d) => d.name).sort();
      expect(await names()).toEqual(['bread.md', 'tides.md']);
      // false: the index's document store holds nothing for a store that keeps the text, and
      // llamaindex 0.12.1's SimpleKVStore throws deleting from a collection it never made.
      await index.deleteRefDoc('bread', false);
      expect(await names()).toEqual(['tides.md']);

      // An ingestion pipeline with a document store (UPSERTS): an unchanged source is skipped,
      // a changed one replaces its nodes (the store's delete(refDocId), then add).
      // (The pipeline stores only the nodes its transformations embedded.)
      const pipeline = new IngestionPipeline({
        transformations: [new SentenceSplitter(), new RagloomEmbedding()],
        vectorStore: store, docStore: new SimpleDocumentStore(), docStoreStrategy: DocStoreStrategy.UPSERTS,
      });
      await pipeline.run({ documents: [SOURCES[2]!] });
      await pipeline.run({ documents: [SOURCES[2]!] });
      expect((await ds.listDocuments({ name: 'rivers.txt' })).map((d) => d.chunk_count)).toEqual([1]);
      const changed = new Document({ id_: 'rivers', text: 'Rivers carry snowmelt down to the sea.', metadata: SOURCES[2]!.metadata });
      await pipeline.run({ documents: [changed] });
      const [rivers] = await ds.listDocuments({ name: 'rivers.txt' });
      expect((await rivers!.listChunks()).map((c) => c.content)).toEqual(['Rivers carry snowmelt down to the sea.']);
      expect(await names()).toEqual(['rivers.txt', 'tides.md']);

      // A chat engine over the index: the model is sent the retrieved passage.
      llm.reset();
      llm.script({ text: firstPassage });
      const reply = await index.asChatEngine({ similarityTopK: 1 }).chat({ message: 'What does the moon do to the ocean?' });
      expect(reply.message.content).toBe('The gravitational pull of the moon raises the ocean tides twice a day.');
    });

    test("another embed model's vectors are stored and searched with its query embeddings", async ({ client }) => {
      const ds = await client.createDataset({ name: 'li-128' });
      const embed128 = new RagloomEmbedding({ model: 'ragloom-static-en-128@Builtin' });
      const store = new RagloomVectorStore({ client, dataset_id: ds.id, embedModel: embed128 });
      expect(await store.ownEmbeddings()).toBe(false);
      await VectorStoreIndex.fromDocuments(SOURCES, { storageContext: await storageContextFromDefaults({ vectorStore: store }) });
      const q = await store.query({ queryEmbedding: await embed128.getTextEmbedding(SOURCES[2]!.text), mode: VectorStoreQueryMode.DEFAULT, similarityTopK: 3 });
      expect(q.nodes![0]!.metadata.file_name).toBe('rivers.txt');
      // The node's stored vector is the model's embedding of its text (LlamaIndex embeds text with metadata, so not exactly 1).
      expect(q.similarities[0]).toBeGreaterThan(0.8);
      // The dataset's own model (256-d) does not see the 128-d vectors.
      expect(await client.retrieve({ dataset_ids: [ds.id], question: 'rivers', similarity_threshold: 0 })).toEqual([]);
    });
  });

  describe('RagloomRetriever', () => {
    test('chunks of a parsed dataset as nodes with citation metadata; a RetrieverQueryEngine answers from them', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      const retriever = new RagloomRetriever({ client, dataset_ids: [ds.id], page_size: 2 });
      const nodes = await retriever.retrieve('What pulls the ocean tides?');
      const direct = await client.retrieve({ dataset_ids: [ds.id], question: 'What pulls the ocean tides?', page_size: 2 });
      expect(nodes.map((n) => [n.node.id_, n.score])).toEqual(direct.map((c) => [c.id, c.similarity]));
      expect(nodes[0]!.node.metadata).toMatchObject({ document_name: 'tides.md', document_id: direct[0]!.document_id, dataset_id: ds.id });
      // The model's context names the document, not the scores.
      const forLlm = nodes[0]!.node.getContent(MetadataMode.LLM);
      expect(forLlm).toContain('document_name: tides.md');
      expect(forLlm).not.toContain('similarity');
      llm.reset();
      llm.script({ text: firstPassage });
      const answer = await new RetrieverQueryEngine(retriever).query({ query: 'What pulls the ocean tides?' });
      expect(answer.toString()).toBe('The gravitational pull of the moon raises the ocean tides twice a day.');
      expect(answer.sourceNodes!.map((n) => n.node.id_)).toEqual(direct.map((c) => c.id));
      expect(() => new RagloomRetriever({ client } as never)).toThrow(TypeError);
      expect((await caught(new RagloomRetriever({ client, dataset_ids: ['0'.repeat(32)] }).retrieve('x'))).code).toBe(102);
    });
  });
});

describe('toMetadataCondition()', () => {
  it('maps each operator, expands any/all, and refuses what one condition list cannot say', () => {
    expect(toMetadataCondition(undefined)).toBeUndefined();
    expect(toMetadataCondition({ filters: [{ key: 'a', value: 1, operator: '>=' }, { key: 'b', value: ['x'], operator: 'nin' }], condition: 'or' }))
      .toEqual({ logic: 'or', conditions: [{ name: 'a', comparison_operator: '≥', value: 1 }, { name: 'b', comparison_operator: 'not in', value: ['x'] }] });
    expect(toMetadataCondition({ filters: [{ key: 't', value: ['x', 'y'], operator: 'any' }] }))
      .toEqual({ logic: 'or', conditions: [{ name: 't', comparison_operator: '=', value: 'x' }, { name: 't', comparison_operator: '=', value: 'y' }] });
    expect(() => toMetadataCondition({ filters: [{ key: 't', value: ['x'], operator: 'any' }, { key: 'a', value: 1, operator: '==' }] })).toThrow(/needs the filters' condition "or"/);
  });
});

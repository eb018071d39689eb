/**
 * ragloom/langchain against the real @langchain/core (and @langchain/openai's ChatOpenAI talking
 * to a loopback OpenAI-protocol stand-in), over a local and a remote Client.
 */
import { describe, expect, beforeAll, afterAll, it } from 'vitest';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { Document } from '@langchain/core/documents';
import { SyntheticEmbeddings } from '@langchain/core/utils/testing';
import { ChatOpenAI } from '@langchain/openai';
import { RagloomRetriever, RagloomVectorStore, RagloomEmbeddings } from '../../src/integrations/langchain/index.js';
import { ApiError } from '../../src/index.js';
import { MODES, acceptance, caught, parsedDataset } from '../acceptance/modes.js';
import { startChatServer, type ChatServer, type ChatRequestBody } from '../support/chat-server.js';
import { startEmbeddingServer } from '../support/embedding-server.js';
import { startServer } from '../../src/server/index.js';
import { Client } from '../../src/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let llm: ChatServer;
beforeAll(async () => {
  llm = await startChatServer();
});
afterAll(() => llm.close());

const text = (m: ChatRequestBody['messages'][number]) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));

const NOTES = [
  { text: 'The moon raises the ocean tides twice a day.', meta: { source: 'sea/tides.md', topic: 'sea', year: 2021, loc: { lines: { from: 1, to: 3 } }, draft: false } },
  { text: 'Knead bread dough for ten minutes, then let it rise.', meta: { source: 'kitchen/bread.md', topic: 'food', year: 2019 } },
  { text: 'Rivers carry water from the mountains to the sea.', meta: { source: 'sea/rivers.txt', topic: 'sea', year: 2023, tags: ['water', 'geography'] } },
];

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('RagloomRetriever#invoke()', () => {
    test('resolves to the ranked chunks as Documents with their citation metadata, as client.retrieve ranks them', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      const retriever = new RagloomRetriever({ client, dataset_ids: [ds.id], page_size: 2, similarity_threshold: 0, highlight: true });
      const ended: Document[][] = [];
      const docs = await retriever.invoke('What pulls the ocean tides?', { callbacks: [{ handleRetrieverEnd: (d: Document[]) => void ended.push(d) }] });
      expect(ended).toEqual([docs]);
      const direct = await client.retrieve({ dataset_ids: [ds.id], question: 'What pulls the ocean tides?', page_size: 2, similarity_threshold: 0, highlight: true });
      expect(docs).toHaveLength(2);
      expect(docs[0]).toBeInstanceOf(Document);
      expect(docs.map((d) => [d.id, d.pageContent, d.metadata.similarity])).toEqual(direct.map((c) => [c.id, c.content, c.similarity]));
      expect(docs[0]!.metadata).toMatchObject({
        id: direct[0]!.id, document_name: 'tides.md', document_id: direct[0]!.document_id, dataset_id: ds.id,
        vector_similarity: direct[0]!.vector_similarity, term_similarity: direct[0]!.term_similarity, positions: direct[0]!.positions,
      });
      expect(docs[0]!.metadata.highlight).toContain('<em>');
      // A Runnable: batch runs each question.
      const [a, b] = await retriever.batch(['tides and the moon', 'how long to knead bread']);
      expect(a![0]!.metadata.document_name).toBe('tides.md');
      expect(b![0]!.metadata.document_name).toBe('bread.md');
    });

    test("bad parameters reject with ragloom's ApiError; a missing client or dataset_ids is a TypeError", async ({ client }) => {
      const { ds } = await parsedDataset(client);
      const e = await caught(new RagloomRetriever({ client, dataset_ids: [ds.id], vector_similarity_weight: 2 }).invoke('tides'));
      expect([e.code, e.message]).toEqual([101, '`vector_similarity_weight` should be in [0, 1]']);
      expect((await caught(new RagloomRetriever({ client, dataset_ids: ['0'.repeat(32)] }).invoke('tides'))).code).toBe(102);
      expect(() => new RagloomRetriever({ dataset_ids: [ds.id] } as never)).toThrow(TypeError);
      expect(() => new RagloomRetriever({ client } as never)).toThrow(/dataset_ids/);
    });
  });

  describe('a retrieval chain (LCEL) over ChatOpenAI and a loopback OpenAI stand-in', () => {
    test('the model receives the retrieved chunks and its answer comes back, invoked and streamed', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      const retriever = new RagloomRetriever({ client, dataset_ids: [ds.id], page_size: 3, similarity_threshold: 0 });
      const prompt = ChatPromptTemplate.fromMessages([
        ['system', 'Answer from the context only and name the document.\n\nContext:\n{context}'],
        ['human', '{question}'],
      ]);
      const model = new ChatOpenAI({ model: 'stand-in', apiKey: 'sk-test', configuration: { baseURL: llm.url }, maxRetries: 0 });
      const chain = RunnableSequence.from([
        { context: retriever.pipe((docs: Document[]) => docs.map((d) => `[${d.metadata.document_name}] ${d.pageContent.replace(/\s+/g, " ")}`).join('\n')), question: new RunnablePassthrough() },
        prompt, model, new StringOutputParser(),
      ]);
      // The stand-in answers with the first context line it was sent.
      const firstLine = (b: ChatRequestBody) => /Context:\n(.*)/.exec(text(b.messages[0]!))?.[1] ?? 'no context';
      llm.reset();
      llm.script({ text: firstLine }, { text: firstLine });
      const answer = await chain.invoke('What pulls the ocean tides?');
      expect(answer).toMatch(/^\[tides\.md\] .*moon/);
      expect(text(llm.requests[0]!.body.messages[1]!)).toBe('What pulls the ocean tides?');
      const pieces: string[] = [];
      for await (const p of await chain.stream('What pulls the ocean tides?')) pieces.push(p);
      expect(pieces.length).toBeGreaterThan(3);
      expect(pieces.join('')).toBe(answer);
      expect(llm.requests[1]!.body.stream).toBe(true);
    });
  });

  describe('RagloomVectorStore with RagloomEmbeddings (ragloom embeds)', () => {
    test('fromTexts, similaritySearch(WithScore), filters, metadata both ways, asRetriever, MMR, vector search, delete', async ({ client }) => {
      const embeddings = new RagloomEmbeddings();
      const store = await RagloomVectorStore.fromTexts(NOTES.map((n) => n.text), NOTES.map((n) => n.meta), embeddings, { client, dataset_name: 'lc' });
      expect(await store.ownEmbeddings()).toBe(true);
      const [ds] = await client.listDatasets({ id: store.datasetId });
      expect(ds).toMatchObject({ name: 'lc', embedding_model: 'ragloom-static-en-256@Builtin' });
      // One ragloom document per LangChain Document, named after its source, with one chunk.
      const listed = await ds!.listDocuments({ orderby: 'name', desc: false });
      expect(listed.map((d) => [d.name, d.chunk_count])).toEqual([['bread.md', 1], ['rivers.txt', 1], ['tides.md', 1]]);

      const hits = await store.similaritySearchWithScore('moon and ocean tides', 2);
      expect(hits[0]![0]).toMatchObject({ pageContent: NOTES[0]!.text, metadata: NOTES[0]!.meta });
      expect(hits[0]![1]).toBeGreaterThan(hits[1]![1]);
      // The scores are client.retrieve's (hybrid, threshold 0).
      const direct = await client.retrieve({ dataset_ids: [store.datasetId], question: 'moon and ocean tides', page_size: 2, similarity_threshold: 0 });
      expect(hits.map(([, s]) => s)).toEqual(direct.map((c) => c.similarity));

      // Filters: { field: value } pairs, a list value, a metadata_condition.
      expect((await store.similaritySearch('water', 3, { topic: 'food' })).map((d) => d.metadata.source)).toEqual(['kitchen/bread.md']);
      expect((await store.similaritySearch('water', 3, { year: [2019, 2023] })).map((d) => d.metadata.source).sort()).toEqual(['kitchen/bread.md', 'sea/rivers.txt']);
      const newer = await store.similaritySearch('water', 3, { logic: 'and', conditions: [{ name: 'year', comparison_operator: '>', value: 2020 }, { name: 'topic', comparison_operator: '=', value: 'sea' }] });
      expect(newer.map((d) => d.metadata.source).sort()).toEqual(['sea/rivers.txt', 'sea/tides.md']);
      // Nested metadata is filterable by its dotted key.
      expect((await store.similaritySearch('water', 3, { 'loc.lines.from': 1 })).map((d) => d.metadata.source)).toEqual(['sea/tides.md']);

      // LangChain's own retriever over the store, and MMR.
      const viaRetriever = await store.asRetriever({ k: 1 }).invoke('knead the dough');
      expect(viaRetriever.map((d) => d.metadata.source)).toEqual(['kitchen/bread.md']);
      const mmr = await store.asRetriever({ k: 2, searchType: 'mmr', searchKwargs: { fetchK: 3, lambda: 0.5 } }).invoke('sea water');
      expect(mmr).toHaveLength(2);
      expect(new Set(mmr.map((d) => d.metadata.source)).size).toBe(2);

      // By vector alone: the dataset model's embedding of a stored text finds it first.
      const v = await embeddings.embedQuery(NOTES[2]!.text);
      const byVector = await store.similaritySearchVectorWithScore(v, 3);
      expect(byVector[0]![0].metadata.source).toBe('sea/rivers.txt');
      expect(byVector[0]![1]).toBeGreaterThan(0.9);

      // Your own ids: returned, replaced on a second add, deletable; ragloom ids work too.
      const ids = await store.addDocuments([new Document({ pageContent: 'Glaciers carve valleys.', metadata: { topic: 'ice' } })], { ids: ['glacier-1'] });
      expect(ids).toEqual(['glacier-1']);
      await store.addDocuments([new Document({ pageContent: 'Glaciers carve deep valleys over millennia.', metadata: { topic: 'ice' } })], { ids: ['glacier-1'] });
      const ice = await store.similaritySearch('glaciers', 5, { topic: 'ice' });
      expect(ice.map((d) => [d.id, d.pageContent])).toEqual([['glacier-1', 'Glaciers carve deep valleys over millennia.']]);
      await store.delete({ ids: ['glacier-1', listed[0]!.id, 'no-such-id'] });
      expect((await ds!.listDocuments()).map((d) => d.name).sort()).toEqual(['rivers.txt', 'tides.md']);
      await store.delete({ deleteAll: true });
      expect(await ds!.listDocuments()).toEqual([]);
    });
  });

  describe("RagloomVectorStore with another model's Embeddings (your vectors)", () => {
    test('addDocuments stores the embeddings\' vectors; vector and hybrid searches use them; bad input writes nothing', async ({ client }) => {
      const embeddings = new SyntheticEmbeddings({ vectorSize: 16 });
      const ds = await client.createDataset({ name: 'own-vectors' });
      const store = new RagloomVectorStore(embeddings, { client, dataset_id: ds.id });
      expect(await store.ownEmbeddings()).toBe(false);
      const docs = NOTES.map((n) => new Document({ pageContent: n.text, metadata: n.meta }));
      const ids = await store.addDocuments(docs);
      expect(ids).toHaveLength(3);
      // Each text's own vector is nearest to itself (cosine 1).
      for (const [i, d] of docs.entries()) {
        const [[top, score]] = await store.similaritySearchVectorWithScore(await embeddings.embedQuery(d.pageContent), 1) as [[Document, number]];
        expect(top.pageContent).toBe(d.pageContent);
        expect(top.id).toBe(ids[i]);
        expect(score).toBeCloseTo(1, 5);
      }
      // A search by text sends the model's question vector with the words: the text side finds "bread".
      const hybrid = await store.similaritySearchWithScore('knead bread dough', 3);
      expect(hybrid[0]![0].metadata.source).toBe('kitchen/bread.md');

      const count = async () => (await ds.listDocuments()).length;
      await expect(store.addVectors([[1, 2]], docs)).rejects.toThrow(TypeError);
      const blank = await caught(store.addDocuments([new Document({ pageContent: 'fine' }), new Document({ pageContent: '  ' })]));
      expect([blank.code, blank.message]).toEqual([102, 'Record 1: `content` is required']);
      const bad = await caught(store.addVectors([[1, 0], [0, 0]], [new Document({ pageContent: 'a' }), new Document({ pageContent: 'b' })]));
      expect(bad).toBeInstanceOf(ApiError);
      expect([bad.code, bad.message]).toEqual([101, '`vector` should not be all zeros']);
      expect(await count()).toBe(3);
      await expect(store.similaritySearch('x', 0)).rejects.toThrow(/k must be/);
      await expect(store.delete({} as never)).rejects.toThrow(TypeError);
    });
  });
  // LangChain's standard vector-store checks (langchain-tests' VectorStoreIntegrationTests, the
  // Python package: @langchain/core publishes none), with ragloom's embeddings and with another model's.
  describe.each([
    ['RagloomEmbeddings', () => new RagloomEmbeddings()],
    ['another model', () => new SyntheticEmbeddings({ vectorSize: 16 })],
  ] as const)("LangChain's standard vector-store behaviours (%s)", (_kind, makeEmbeddings) => {
    test('empty search, ids from Document.id or options, idempotent and replacing adds by id, deletes of present and missing ids', async ({ client }) => {
      const ds = await client.createDataset({ name: 'standard' });
      const store = new RagloomVectorStore(makeEmbeddings(), { client, dataset_id: ds.id });
      const all = async () => (await store.similaritySearch('foo', 10)).map((d) => [d.id, d.pageContent, d.metadata]).sort();
      // An empty store finds nothing, and deleting from it is no error.
      expect(await store.similaritySearch('foo', 1)).toEqual([]);
      await store.delete({ ids: ['1'] });
      await store.delete({ ids: ['1', '2', '3'] });

      // Ids: the options' first, else each Document's own; the results carry them.
      const ids = await store.addDocuments([
        new Document({ pageContent: 'foo', metadata: { id: 1 } }),
        new Document({ pageContent: 'bar', metadata: { id: 2 } }),
      ], { ids: ['1', '2'] });
      expect(ids).toEqual(['1', '2']);
      expect(await all()).toEqual([['1', 'foo', { id: 1 }], ['2', 'bar', { id: 2 }]]);
      // Adding the same documents under the same ids again stores nothing new.
      await store.addDocuments([new Document({ pageContent: 'foo', metadata: { id: 1 } }), new Document({ pageContent: 'bar', metadata: { id: 2 } })], { ids: ['1', '2'] });
      expect(await all()).toHaveLength(2);
      // Adding under an existing id replaces that document.
      await store.addDocuments([new Document({ pageContent: 'new foo', metadata: { id: 1, changed: 'yes' } })], { ids: ['1'] });
      expect(await all()).toEqual([['1', 'new foo', { id: 1, changed: 'yes' }], ['2', 'bar', { id: 2 }]]);
      expect(await ds.listDocuments()).toHaveLength(2);

      // Documents with their own id keep it; one without gets ragloom's document id.
      const more = await store.addDocuments([
        new Document({ pageContent: 'baz', metadata: {}, id: 'doc-3' }),
        new Document({ pageContent: 'qux', metadata: {} }),
      ]);
      expect(more[0]).toBe('doc-3');
      const [plain] = await ds.listDocuments({ id: more[1]! });
      expect(plain?.id).toBe(more[1]);
      expect((await all()).map(([id]) => id).sort()).toEqual(['1', '2', 'doc-3', more[1]!].sort());

      // Deleting some keeps the rest; deleting a missing id with present ones is no error.
      await store.delete({ ids: ['1', 'doc-3', 'missing'] });
      expect((await all()).map(([id]) => id).sort()).toEqual(['2', more[1]!].sort());
      const [[top]] = (await store.similaritySearchWithScore('bar', 1)) as [[Document, number]];
      expect([top.id, top.pageContent]).toEqual(['2', 'bar']);
    });

    test("the store's retriever: k, a filter, its callbacks, and adding documents through it", async ({ client }) => {
      const ds = await client.createDataset({ name: 'standard-retriever' });
      const store = new RagloomVectorStore(makeEmbeddings(), { client, dataset_id: ds.id });
      await store.addDocuments(NOTES.map((n) => new Document({ pageContent: n.text, metadata: n.meta })));
      const ended: Document[][] = [];
      const retriever = store.asRetriever({ k: 2, filter: { topic: 'sea' } });
      const docs = await retriever.invoke('water and the sea', { callbacks: [{ handleRetrieverEnd: (d: Document[]) => void ended.push(d) }] });
      expect(docs.map((d) => d.metadata.topic)).toEqual(['sea', 'sea']);
      expect(ended).toEqual([docs]);
      await retriever.addDocuments([new Document({ pageContent: 'Glaciers carve valleys.', metadata: { source: 'ice.md', topic: 'sea' } })]);
      expect((await ds.listDocuments()).map((d) => d.name)).toContain('ice.md');
    });
  });
});

describe('RagloomEmbeddings', () => {
  it("gives ragloom's vectors, and a failing model fails once (no LangChain retries by default)", async () => {
    const e = new RagloomEmbeddings();
    expect(e.model).toBe('ragloom-static-en-256@Builtin');
    const [a, b] = await e.embedDocuments(['the moon and the tides', 'bread dough']);
    expect(a).toHaveLength(256);
    expect(await e.embedQuery('the moon and the tides')).toEqual(a);
    expect(b).not.toEqual(a);
    let calls = 0;
    const failing = new RagloomEmbeddings({ model: { id: 'down@Test', embed: async () => { calls++; throw new Error('model down'); } } });
    await expect(failing.embedQuery('q')).rejects.toThrow('model down');
    expect(calls).toBe(1);
    // A model this process cannot run can be named (a server's own); using it here says why not.
    const remoteOnly = new RagloomEmbeddings({ model: 'nope@Nowhere' });
    expect(remoteOnly.model).toBe('nope@Nowhere');
    await expect(remoteOnly.embedQuery('q')).rejects.toThrow(/Embedding model "nope@Nowhere"/);
  });
});

describe("RagloomVectorStore over a server whose dataset uses the server's own embedding model", () => {
  it('names the model without running it here: the server embeds chunks and questions', async () => {
    const emb = await startEmbeddingServer(64);
    const dir = await mkdtemp(join(tmpdir(), 'ragloom-lc-remote-'));
    const server = await startServer({ path: join(dir, 'kb.db'), port: 0, models: [{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: emb.url }] });
    const client = new Client({ baseUrl: server.url, apiKey: server.apiKey });
    try {
      const ds = await client.createDataset({ name: 'remote', embedding_model: 'hash-64@OpenAI-API-Compatible' });
      const store = new RagloomVectorStore(new RagloomEmbeddings({ model: 'hash-64@OpenAI-API-Compatible' }), { client, dataset_id: ds.id });
      expect(await store.ownEmbeddings()).toBe(true);
      await store.addDocuments(NOTES.map((n) => new Document({ pageContent: n.text, metadata: n.meta })));
      const hits = await store.similaritySearchWithScore('bread dough knead', 1);
      expect(hits[0]![0].metadata.source).toBe('kitchen/bread.md');
      expect(hits[0]![1]).toBeGreaterThan(0);
      // Every text went to the server's model: the 3 chunks (with their document names) and the question.
      expect(emb.requests.flatMap((r) => r.body.input)).toEqual(expect.arrayContaining([NOTES[1]!.text, 'bread dough knead']));
    } finally {
      await client.close();
      await server.close();
      await emb.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

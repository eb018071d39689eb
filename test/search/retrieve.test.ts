import { describe, expect, afterAll, beforeAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, enc, apiError } from '../helpers.js';
import { Client, type DataSet, type Document } from '../../src/index.js';
import type { SearchReader } from '../../src/store/index.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../support/embedding-server.js';

// Hashed bag-of-words vectors over loopback HTTP: fast and deterministic.
let emb: FakeEmbeddingServer;
let rerankSrv: Server;
let rerankUrl = '';
const rerankCalls: Array<{ query: string; documents: string[]; model: string }> = [];
beforeAll(async () => {
  emb = await startEmbeddingServer(64);
  // A Jina/Cohere-compatible rerank API: scores documents containing "zebra" highest.
  rerankSrv = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const b = JSON.parse(raw) as { query: string; documents: string[]; model: string };
      rerankCalls.push(b);
      const results = b.documents.map((d, index) => ({ index, relevance_score: d.includes('zebra') ? 0.99 : 0.01 }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((r) => rerankSrv.listen(0, '127.0.0.1', () => r()));
  rerankUrl = `http://127.0.0.1:${(rerankSrv.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await emb.close();
  await new Promise((r) => rerankSrv.close(r));
});

const MODEL = 'hash-64@OpenAI-API-Compatible';
function open(dir: string, name = 'kb.db'): Client {
  return new Client({
    path: join(dir, name),
    models: [
      { type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: emb.url },
      { type: 'embedding', name: 'hash-b', factory: 'OpenAI-API-Compatible', base_url: emb.url },
      { type: 'rerank', name: 'zebra-rerank', factory: 'Jina', base_url: rerankUrl, api_key: 'k' },
    ],
  });
}

const TEXTS = [
  'supersonic nozzle flow separation in rocket engines',
  'heat conduction in composite slabs of metal',
  'boundary layer transition on a flat plate',
  'buckling of thin cylindrical shells under axial load',
  'hypersonic flow over a blunt body with heat transfer',
];

async function fixture(c: Client): Promise<{ ds: DataSet; docs: Document[] }> {
  const ds = await c.createDataset({ name: 'kb', embedding_model: MODEL });
  const docs = await ds.uploadDocuments(TEXTS.map((_, i) => ({ display_name: `d${i}.txt`, blob: enc('x') })));
  for (const [i, d] of docs.entries()) await d.addChunk({ content: TEXTS[i]! });
  return { ds, docs };
}

describe('Client#retrieve() errors', () => {
  test('dataset_ids missing, empty, not a list, foreign; question missing', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const err = async (p: Record<string, unknown>) => apiError(c.retrieve(p as never));
    expect(await err({ question: 'x' })).toMatchObject({ code: 102, message: '`dataset_ids` is required.' });
    expect(await err({ question: 'x', dataset_ids: [] })).toMatchObject({ code: 102, message: '`dataset_ids` is required.' });
    expect(await err({ question: 'x', dataset_ids: ds.id })).toMatchObject({ code: 102, message: '`dataset_ids` should be a list.' });
    expect(await err({ question: 'x', dataset_ids: ['f'.repeat(32)] })).toMatchObject({ code: 102, message: `You don't own the dataset ${'f'.repeat(32)}.` });
    expect(await err({ dataset_ids: [ds.id] })).toMatchObject({ code: 102, message: '`question` is required.' });
    await c.close();
  });

  test('different embedding models, foreign document, top_k, highlight, keyword, cross_languages, rerank_id', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const other = await c.createDataset({ name: 'other', embedding_model: 'hash-b@OpenAI-API-Compatible' });
    const [od] = await other.uploadDocuments([{ display_name: 'o.txt', blob: enc('x') }]);
    const err = async (p: Record<string, unknown>) => apiError(c.retrieve({ question: 'flow', dataset_ids: [ds.id], ...p }));
    expect(await err({ dataset_ids: [ds.id, other.id] })).toMatchObject({ code: 102, message: 'Datasets use different embedding models.' });
    expect(await err({ document_ids: [od!.id] })).toMatchObject({ code: 102, message: `The datasets don't own the document ${od!.id}` });
    expect(await err({ top_k: 0 })).toMatchObject({ code: 102, message: '`top_k` must be greater than 0' });
    expect(await err({ top_k: -3 })).toMatchObject({ code: 102, message: '`top_k` must be greater than 0' });
    expect(await err({ highlight: 'yes' })).toMatchObject({ code: 102, message: '`highlight` should be a boolean' });
    expect(await err({ highlight: 1 })).toMatchObject({ code: 102, message: '`highlight` should be a boolean' });
    // The default chat model (the built-in extractive one) cannot write a rewritten question.
    const writing = (what: string) => `${what} needs a chat model that writes text to rewrite the question; the default chat model ragloom-extractive@Builtin only selects sentences: set default_chat_model to a generative model.`;
    expect(await err({ keyword: true })).toMatchObject({ code: 102, message: writing('`keyword`') });
    expect(await err({ cross_languages: ['German'] })).toMatchObject({ code: 102, message: writing('`cross_languages`') });
    expect(await err({ cross_languages: 'German' })).toMatchObject({ code: 101 });
    expect(await err({ rerank_id: 'nope@Jina' })).toMatchObject({ code: 102, message: '`rerank_id` nope@Jina doesn\'t exist' });
    // An operator RAGFlow does not know matches nothing; a malformed condition is its KeyError.
    await expect(c.retrieve({ question: 'flow', dataset_ids: [ds.id], metadata_condition: { conditions: [{ name: 'a', comparison_operator: '~' as never, value: 1 }] } })).resolves.toEqual([]);
    expect(await err({ metadata_condition: { conditions: [{ name: 'a', value: 1 }] } })).toMatchObject({ code: 100, message: "KeyError('comparison_operator')" });
    // Accepted forms: highlight as "true"/"false", keyword false, empty cross_languages.
    await expect(c.retrieve({ question: 'flow', dataset_ids: [ds.id], highlight: 'false' as never, keyword: false, cross_languages: [] })).resolves.toBeInstanceOf(Array);
    await c.close();
  });

  test('a blank question succeeds with nothing, as RAGFlow', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const api = (c as unknown as { api: { call(op: string, p: object): Promise<unknown> } }).api;
    expect(await api.call('retrieval', { question: '  ', dataset_ids: [ds.id] })).toEqual({ total: 0, chunks: [], doc_aggs: {} });
    await c.close();
  });
});

describe('Client#retrieve() scoring and parameters', () => {
  test('ranks the matching chunk first; scores in [0,1] and similarity = w·v + (1−w)·t', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    for (const w of [0, 0.3, 0.7, 1]) {
      const hits = await c.retrieve({ question: 'nozzle flow separation', dataset_ids: [ds.id], vector_similarity_weight: w, similarity_threshold: 0 });
      expect(hits[0]!.content).toBe(TEXTS[0]);
      for (const h of hits) {
        for (const k of ['similarity', 'vector_similarity', 'term_similarity'] as const) {
          expect(h[k]).toBeGreaterThanOrEqual(0);
          expect(h[k]).toBeLessThanOrEqual(1);
        }
        expect(h.similarity).toBeCloseTo(w * h.vector_similarity! + (1 - w) * h.term_similarity!, 10);
      }
    }
    const [top] = await c.retrieve({ question: 'nozzle flow separation', dataset_ids: [ds.id] });
    const j = top!.toJSON();
    for (const k of ['id', 'content', 'content_ltks', 'document_id', 'document_keyword', 'dataset_id', 'important_keywords', 'questions', 'tag_kwd',
      'image_id', 'similarity', 'vector_similarity', 'term_similarity', 'positions', 'doc_type_kwd', 'mom_id', 'row_id']) expect(j).toHaveProperty(k);
    expect(j.document_keyword).toBe('d0.txt');
    expect(j).not.toHaveProperty('highlight');
    await c.close();
  });

  test('term_similarity does not depend on the other candidates', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const q = { question: 'heat conduction', dataset_ids: [ds.id], similarity_threshold: 0, vector_similarity_weight: 0 };
    const all = await c.retrieve(q);
    const one = await c.retrieve({ ...q, top_k: 1 });
    const a = all.find((h) => h.content === one[0]!.content)!;
    expect(one[0]!.term_similarity).toBeCloseTo(a.term_similarity!, 12);
    await c.close();
  });

  test('similarity_threshold filters; with w = 0 it is ignored, and only text matches are candidates', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const base = { question: 'buckling shells', dataset_ids: [ds.id] };
    expect(await c.retrieve({ ...base, similarity_threshold: 1 })).toEqual([]); // above 1 is refused (101)
    const loose = await c.retrieve({ ...base, similarity_threshold: 0 });
    expect(loose.length).toBe(5);
    const mid = await c.retrieve({ ...base, similarity_threshold: 0.3 });
    expect(mid.every((h) => h.similarity! >= 0.3)).toBe(true);
    expect(mid.length).toBeLessThan(5);
    // At w = 0 a chunk only the vector side found would score 0: RAGFlow's KNN, filtered by the
    // text query, never returns one, and neither does ragloom (it came back with similarity 0).
    const termOnly = await c.retrieve({ ...base, similarity_threshold: 0.99, vector_similarity_weight: 0 });
    expect(termOnly.map((h) => h.content)).toEqual([TEXTS[3]]);
    expect(termOnly[0]!.vector_similarity).toBeGreaterThan(0);
    await c.close();
  });

  test('page, page_size, total and doc_aggs', async ({ dir }) => {
    const c = open(dir);
    const { ds, docs } = await fixture(c);
    await docs[0]!.addChunk({ content: 'flow separation near the nozzle throat' });
    const api = (c as unknown as { api: { call(op: string, p: object): Promise<{ total: number; chunks: { id: string }[]; doc_aggs: { doc_id: string; count: number; doc_name: string }[] }> } }).api;
    const q = { question: 'flow', dataset_ids: [ds.id], similarity_threshold: 0 };
    const all = await api.call('retrieval', q);
    expect(all.total).toBe(6);
    expect(all.doc_aggs[0]).toEqual({ doc_name: 'd0.txt', doc_id: docs[0]!.id, count: 2 });
    expect(all.doc_aggs.reduce((s, a) => s + a.count, 0)).toBe(6);
    const p1 = await api.call('retrieval', { ...q, page: 1, page_size: 4 });
    const p2 = await api.call('retrieval', { ...q, page: 2, page_size: 4 });
    expect(p1.chunks.map((x) => x.id)).toEqual(all.chunks.slice(0, 4).map((x) => x.id));
    expect(p2.chunks.map((x) => x.id)).toEqual(all.chunks.slice(4).map((x) => x.id));
    expect((await api.call('retrieval', { ...q, page: 3, page_size: 4 })).chunks).toEqual([]);
    await c.close();
  });

  test('top_k limits the vector side only, as in RAGFlow: every text match stays a candidate', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const q = { dataset_ids: [ds.id], similarity_threshold: 0 };
    // 'flow' and 'heat' are in three chunks: all three come back with top_k 1.
    const text = await c.retrieve({ ...q, question: 'flow heat', top_k: 1 });
    expect(text.filter((h) => h.term_similarity! > 0).map((h) => h.content).sort()).toEqual([TEXTS[0], TEXTS[1], TEXTS[4]].sort());
    // No chunk holds 'zebra': the candidates are the vector side's, top_k of them.
    expect(await c.retrieve({ ...q, question: 'zebra', top_k: 1 })).toHaveLength(1);
    expect(await c.retrieve({ ...q, question: 'zebra', top_k: 3 })).toHaveLength(3);
    expect(await c.retrieve({ ...q, question: 'zebra' })).toHaveLength(5);
    await c.close();
  });

  test('document_ids restrict; available=false chunks are excluded', async ({ dir }) => {
    const c = open(dir);
    const { ds, docs } = await fixture(c);
    const q = { question: 'flow heat', dataset_ids: [ds.id], similarity_threshold: 0 };
    const only = await c.retrieve({ ...q, document_ids: [docs[1]!.id, docs[2]!.id] });
    expect(new Set(only.map((h) => h.document_id))).toEqual(new Set([docs[1]!.id, docs[2]!.id]));
    const [ch] = await docs[0]!.listChunks();
    await ch!.update({ available: false });
    const after = await c.retrieve(q);
    expect(after.some((h) => h.document_id === docs[0]!.id)).toBe(false);
    expect(after.length).toBe(4);
    await ch!.update({ available: true });
    expect((await c.retrieve(q)).some((h) => h.document_id === docs[0]!.id)).toBe(true);
    await c.close();
  });

  test('metadata_condition filters documents; no match → empty', async ({ dir }) => {
    const c = open(dir);
    const { ds, docs } = await fixture(c);
    await docs[0]!.update({ meta_fields: { author: 'Smith', year: 1958, date: '1958-03-01', tags: ['flow', 'rocket'] } });
    await docs[1]!.update({ meta_fields: { author: 'jones', year: 1962, date: '1962-11-20', tags: ['heat'] } });
    await docs[4]!.update({ meta_fields: { author: 'Smithson', year: 1970, date: '1970-01-05' } });
    const q = { question: 'flow heat', dataset_ids: [ds.id], similarity_threshold: 0 };
    const docsOf = async (cond: unknown) => new Set((await c.retrieve({ ...q, metadata_condition: cond as never })).map((h) => h.document_id));
    const cond = (name: string, op: string, value?: unknown) => ({ conditions: [{ name, comparison_operator: op as never, value }] });
    const id = (i: number) => docs[i]!.id;
    expect(await docsOf(cond('author', 'is', 'SMITH'))).toEqual(new Set([id(0)]));
    expect(await docsOf(cond('date', '>', '1960-01-01'))).toEqual(new Set([id(1), id(4)]));
    expect(await docsOf(cond('date', '≤', '1962-11-20'))).toEqual(new Set([id(0), id(1)]));
    expect(await docsOf(cond('year', '>=', '1962'))).toEqual(new Set([id(1), id(4)]));
    expect(await docsOf({ logic: 'or', conditions: [{ name: 'author', comparison_operator: 'start with', value: 'jon' }, { name: 'author', comparison_operator: 'end with', value: 'son' }] }))
      .toEqual(new Set([id(1), id(4)]));
    expect(await docsOf(cond('tags', 'contains', 'rocket'))).toEqual(new Set([id(0)]));
    expect(await docsOf(cond('author', 'not empty'))).toEqual(new Set([id(0), id(1), id(4)]));
    expect(await docsOf(cond('author', 'empty'))).toEqual(new Set([id(2), id(3)]));
    expect(await docsOf(cond('author', '=', 'nobody'))).toEqual(new Set());
    expect(await docsOf(cond('author', 'not in', 'smith, jones'))).toEqual(new Set([id(2), id(3), id(4)]));
    expect(await docsOf(cond('author', 'in', ['Smith', 'Jones']))).toEqual(new Set([id(0), id(1)]));
    expect(await docsOf(cond('author', '≠', 'smith'))).toEqual(new Set([id(1), id(2), id(3), id(4)]));
    expect(await docsOf(cond('author', 'not contains', 'smith'))).toEqual(new Set([id(1), id(2), id(3)]));
    expect(await docsOf(cond('year', '<', 1962))).toEqual(new Set([id(0)]));
    expect(await docsOf(cond('year', '<=', 1962))).toEqual(new Set([id(0), id(1)]));
    // document_ids and metadata together: both must hold.
    expect(new Set((await c.retrieve({ ...q, document_ids: [id(0), id(1)], metadata_condition: cond('year', '>', 1960) })).map((h) => h.document_id)))
      .toEqual(new Set([id(1)]));
    await c.close();
  });

  test('pagerank ranks a dataset first; similarity stays in [0,1]', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const ds2 = await c.createDataset({ name: 'ranked', embedding_model: MODEL });
    const [d] = await ds2.uploadDocuments([{ display_name: 'p.txt', blob: enc('x') }]);
    await d!.addChunk({ content: 'a short note that mentions flow once' });
    const q = { question: 'supersonic nozzle flow separation', dataset_ids: [ds.id, ds2.id], similarity_threshold: 0 };
    expect((await c.retrieve(q))[0]!.content).toBe(TEXTS[0]);
    await ds2.update({ pagerank: 10 });
    const hits = await c.retrieve(q);
    expect(hits[0]!.dataset_id).toBe(ds2.id);
    expect(hits[0]!.similarity).toBeLessThan(hits[1]!.similarity!);
    expect(hits.every((h) => h.similarity! <= 1)).toBe(true);
    await c.close();
  });

  test('highlight wraps the question words in <em>', async ({ dir }) => {
    const c = open(dir);
    const { ds } = await fixture(c);
    const [h] = await c.retrieve({ question: 'buckling of shells', dataset_ids: [ds.id], highlight: true });
    expect(h!.toJSON().highlight).toBe('<em>buckling</em> of thin cylindrical <em>shells</em> under axial load');
    await c.close();
  });

  test('rerank_id: an HTTP (Jina/Cohere) rerank model replaces the vector similarity', async ({ dir }) => {
    const c = open(dir);
    const { ds, docs } = await fixture(c);
    await docs[3]!.addChunk({ content: 'a zebra crossing the flow' });
    const q = { question: 'nozzle flow', dataset_ids: [ds.id], similarity_threshold: 0, vector_similarity_weight: 0.7 };
    expect((await c.retrieve(q))[0]!.content).toBe(TEXTS[0]);
    const hits = await c.retrieve({ ...q, rerank_id: 'zebra-rerank@Jina' });
    expect(hits[0]!.content).toBe('a zebra crossing the flow');
    expect(hits[0]!.vector_similarity).toBeCloseTo(0.99, 6);
    expect(rerankCalls.at(-1)).toMatchObject({ model: 'zebra-rerank', query: 'nozzle flow' });
    // The window's rows, read for the model, are the page's: one read a reranked search, not two.
    const reader = (c as unknown as { api: { engine: { store: { search: SearchReader } } } }).api.engine.store.search;
    const reads: string[] = [];
    const [pageChunks, pageRows] = [reader.pageChunks.bind(reader), reader.pageRows.bind(reader)];
    reader.pageChunks = (ids) => (reads.push('pageChunks'), pageChunks(ids));
    reader.pageRows = (ids, docs) => (reads.push('pageRows'), pageRows(ids, docs));
    expect(await c.retrieve({ ...q, rerank_id: 'zebra-rerank@Jina' })).toEqual(hits);
    expect(reads).toEqual(['pageChunks']);
    // A cross-encoder whose folder does not exist fails clearly (transformers.js, local files only).
    c.registerModel({ type: 'rerank', name: 'missing-ce', factory: 'HuggingFace', path: join(dir, 'no-such-model') });
    const bad = await apiError(c.retrieve({ ...q, rerank_id: 'missing-ce@HuggingFace' }));
    expect(bad.code).toBe(500);
    expect(bad.message).toMatch(/^Rerank model missing-ce@HuggingFace could not be loaded/);
    // The bare name works when unambiguous.
    expect((await c.retrieve({ ...q, rerank_id: 'zebra-rerank' }))[0]!.content).toBe('a zebra crossing the flow');
    await c.close();
  });

  test('the vector index follows adds, deletes, updates and reopening', async ({ dir }) => {
    let c = open(dir);
    const { ds, docs } = await fixture(c);
    const q = { question: 'quantum chromodynamics lattice', dataset_ids: [ds.id], similarity_threshold: 0.2 };
    expect(await c.retrieve(q)).toEqual([]);
    const ch = await docs[2]!.addChunk({ content: 'quantum chromodynamics on a lattice' });
    expect((await c.retrieve(q))[0]!.id).toBe(ch.id);
    await ch.update({ content: 'nothing related at all' });
    expect((await c.retrieve(q)).map((h) => h.id)).not.toContain(ch.id);
    await ch.update({ content: 'quantum chromodynamics on a lattice' });
    await docs[2]!.deleteChunks({ ids: [ch.id] });
    expect(await c.retrieve(q)).toEqual([]);
    await docs[2]!.addChunk({ content: 'lattice quantum chromodynamics again' });
    await c.close();
    c = open(dir);
    expect((await c.retrieve(q))[0]!.content).toBe('lattice quantum chromodynamics again');
    await c.close();
  });

  test('CJK questions match by character bigrams', async ({ dir }) => {
    const c = open(dir);
    const ds = await c.createDataset({ name: 'zh', embedding_model: MODEL });
    const [d] = await ds.uploadDocuments([{ display_name: 'z.txt', blob: enc('x') }]);
    await d!.addChunk({ content: '自然语言处理是人工智能的一个分支' });
    await d!.addChunk({ content: '今天天气很好' });
    const hits = await c.retrieve({ question: '语言处理', dataset_ids: [ds.id], vector_similarity_weight: 0 });
    expect(hits[0]!.content).toBe('自然语言处理是人工智能的一个分支');
    expect(hits[0]!.term_similarity).toBeGreaterThan(0.3);
    expect(hits.slice(1).every((h) => h.term_similarity === 0)).toBe(true);
    await c.close();
  });
});

/**
 * A warm search on a PostgreSQL-backed node (issue 30: search p50 within 10% of SQLite's): it
 * reads its page in one statement, and keeps the datasets it checks until a wake-up of the
 * change feed, so a change made on another node is still seen.
 */
import { describe, expect, test } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api } from '../../src/api/index.js';
import { PgStore } from '../../src/store/index.js';
import { termIndex, termIndexOptions } from '../../src/search/index.js';
import { eventually, fileDatabases, listenTo, pgServer, pgSkipReason } from '../support/postgres.js';
import { seedDataset, seedOtherTenant, seedTenant } from '../store/contract/seed.js';

const server = await pgServer();
const reason = await pgSkipReason();
const fresh = fileDatabases(server, 'warm', { schema: true });

const WORDS = ['wing', 'heat', 'flow', 'shock', 'boundary', 'layer', 'panel', 'mach', 'pressure', 'lift'];

/** A dataset of `n` chunks with 256-d vectors (the built-in model's), written through the store as a parse would. */
async function bigDataset(api: Api, n: number): Promise<string> {
  const ds = (await api.call('datasets.create', { name: 'warm' })) as { id: string };
  const files = Array.from({ length: n / 20 }, (_, i) => ({ display_name: `doc${i}.txt`, blob: new TextEncoder().encode(`doc ${i}`) }));
  const docs = (await api.call('documents.upload', { dataset_id: ds.id, files })) as Array<{ id: string }>;
  const store = api.engine.store;
  await store.parse.reset(docs.map((d) => d.id), api.engine.local.tenantId);
  let k = 0;
  await store.parse.finish([], docs.map((d) => ({
    id: d.id, dataset_id: ds.id, language: 'English', log: [], doneLines: [], failLine: '', seconds: 0, began: 0,
    chunks: Array.from({ length: 20 }, (_, j) => {
      const i = k++;
      const v = Float32Array.from({ length: 256 }, (_, x) => Math.sin(i * 7 + x));
      const norm = Math.hypot(...v);
      return {
        id: `c${i}`, document_id: d.id, dataset_id: ds.id, content: `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} ${WORDS[(i * 7) % 10]} note ${i}`, title: `doc${Math.floor(i / 20)}.txt`,
        important_keywords: [], questions: [], tag_kwd: [], positions: [], available: true, chunk_order: j, token_num: 8,
        create_time: '2024-01-01 00:00:00', create_timestamp: 1_700_000_000, vector: v.map((x) => x / norm),
      };
    }),
  })), 1, Date.now());
  return ds.id;
}

describe.skipIf(!server)(`a warm search on PostgreSQL${reason ? ` (${reason})` : ''}`, () => {
  test.each([
    [true, 0, 2],
    [false, 1, 3],
  ])('pages held %s: %i statements a warm search, never more than %i (a wake-up adds the feed read and the datasets\' check)', async (pages, median, most) => {
    const url = await fresh();
    // Held: the term index serves the page's rows; else the page is one statement.
    termIndexOptions.pages = pages;
    const api = await Api.open({ postgres: url });
    try {
      const id = await bigDataset(api, 400);
      const q = (i: number) => ({ question: `${WORDS[i % 10]} ${WORDS[(i + 3) % 10]} flow`, dataset_ids: [id], similarity_threshold: 0, highlight: i % 2 === 0 });
      await api.call('retrieval', q(0));
      await termIndex(api.engine.store.search);
      for (let i = 1; i < 4; i++) await api.call('retrieval', q(i));
      const db = (api.engine.store as PgStore).db;
      const counts: number[] = [];
      for (let i = 4; i < 24; i++) {
        const before = db.statements;
        const r = (await api.call('retrieval', q(i))) as { chunks: unknown[]; doc_aggs: unknown[] };
        counts.push(db.statements - before);
        expect(r.chunks.length).toBeGreaterThan(0);
        expect(r.doc_aggs.length).toBeGreaterThan(0);
      }
      counts.sort((a, b) => a - b);
      expect(counts[counts.length >> 1], `statements per warm search: ${counts.join(' ')}`).toBe(median);
      expect(Math.max(...counts), `statements per warm search: ${counts.join(' ')}`).toBeLessThanOrEqual(most);
    } finally {
      termIndexOptions.pages = true;
      await api.close();
    }
  }, 60_000);

  test('a reranked warm search reads the window once: the page is taken from the rows read for the rerank model', async () => {
    // A Jina-compatible rerank API over loopback: rows whose content holds "shock" score highest.
    const rerank = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const b = JSON.parse(raw) as { documents: string[] };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ results: b.documents.map((d, index) => ({ index, relevance_score: d.includes('shock') ? 0.9 : 0.1 })) }));
      });
    });
    await new Promise<void>((r) => rerank.listen(0, '127.0.0.1', () => r()));
    const url = await fresh();
    const api = await Api.open({ postgres: url, models: [{ type: 'rerank', name: 'shock-rerank', factory: 'Jina', base_url: `http://127.0.0.1:${(rerank.address() as AddressInfo).port}/v1`, api_key: 'k' }] });
    try {
      const id = await bigDataset(api, 400);
      const q = (i: number) => ({ question: `${WORDS[i % 10]} ${WORDS[(i + 3) % 10]} flow`, dataset_ids: [id], similarity_threshold: 0, rerank_id: 'shock-rerank@Jina', page_size: 10 });
      await api.call('retrieval', q(0));
      await termIndex(api.engine.store.search);
      const db = (api.engine.store as PgStore).db;
      const counts: number[] = [];
      for (let i = 1; i < 12; i++) {
        const before = db.statements;
        const r = (await api.call('retrieval', q(i))) as { chunks: Array<{ content: string; document_name: string; vector_similarity: number }>; doc_aggs: unknown[] };
        counts.push(db.statements - before);
        expect(r.chunks.length).toBe(10);
        // Each row carries the model's score of its own text.
        for (const c of r.chunks) expect(c.vector_similarity).toBeCloseTo(c.content.includes('shock') ? 0.9 : 0.1, 6);
        expect(r.chunks.every((c) => /^doc\d+\.txt$/.test(c.document_name))).toBe(true);
        expect(r.doc_aggs.length).toBeGreaterThan(0);
      }
      counts.sort((a, b) => a - b);
      expect(counts[counts.length >> 1], `statements per reranked warm search: ${counts.join(' ')}`).toBe(1);
    } finally {
      await api.close();
      await new Promise((r) => rerank.close(r));
    }
  }, 60_000);

  test('the datasets a search checks, cached per node, follow changes made on another node: pagerank, permission, team members, delete', async () => {
    const url = await fresh();
    const [a, b] = [await PgStore.open(url), await PgStore.open(url)];
    try {
      const owner = await seedTenant(a);
      const guest = await seedOtherTenant(a, 'guest');
      const ds = await seedDataset(a, owner, 'shared', { permission: 'team' });
      await a.db.run("INSERT INTO user_tenant (user_id, tenant_id, role) VALUES ($1, $2, 'normal')", [guest.userId, owner.tenantId]);
      const seen = async (who: typeof owner) => (await b.datasets.getVisibleMany([ds.id], who, { cached: true })).get(ds.id);
      expect((await seen(owner))?.pagerank).toBe(0);
      expect((await seen(guest))?.id).toBe(ds.id);
      // Kept: while nothing changes, B answers from memory.
      const n = b.db.statements;
      await seen(owner);
      expect(b.db.statements).toBe(n);

      await a.datasets.update(ds.id, { pagerank: 42 });
      expect(await eventually(async () => (await seen(owner))?.pagerank === 42)).toBe(true);
      await a.datasets.update(ds.id, { permission: 'me' });
      expect(await eventually(async () => (await seen(guest)) === undefined)).toBe(true);
      await a.datasets.update(ds.id, { permission: 'team' });
      expect(await eventually(async () => (await seen(guest)) !== undefined)).toBe(true);
      await a.db.run('DELETE FROM user_tenant WHERE user_id = $1 AND tenant_id = $2', [guest.userId, owner.tenantId]);
      expect(await eventually(async () => (await seen(guest)) === undefined)).toBe(true);
      await a.db.run('DELETE FROM dataset WHERE id = $1', [ds.id]);
      expect(await eventually(async () => (await seen(owner)) === undefined)).toBe(true);
      // Uncached reads are never kept.
      const m = b.db.statements;
      await b.datasets.getVisibleMany([ds.id], owner);
      await b.datasets.getVisibleMany([ds.id], owner);
      expect(b.db.statements).toBe(m + 2);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  test('every node is woken by a change of a dataset or of a team\'s members (NOTIFY at commit)', async () => {
    const url = await fresh();
    const s = await PgStore.open(url);
    const listener = await listenTo(url, 'ragloom_change');
    const heardOne = () => listener.heard('dataset');
    try {
      const owner = await seedTenant(s);
      expect(await heardOne()).toBe(true); // its owner joined its tenant
      const ds = await seedDataset(s, owner, 'woken');
      expect(await heardOne()).toBe(true);
      await s.datasets.update(ds.id, { language: 'German' });
      expect(await heardOne()).toBe(true);
      await s.db.run("UPDATE user_tenant SET role = 'normal' WHERE user_id = $1", [owner.userId]);
      expect(await heardOne()).toBe(true);
      await s.db.run('DELETE FROM dataset WHERE id = $1', [ds.id]);
      expect(await heardOne()).toBe(true);
    } finally {
      await listener.end();
      await s.close();
    }
  }, 60_000);

  test('a search on one node refuses a dataset deleted through another', async () => {
    const url = await fresh();
    const [a, b] = [await Api.open({ postgres: url }), await Api.open({ postgres: url })];
    try {
      const id = await bigDataset(a, 40);
      const q = { question: 'wing flow', dataset_ids: [id], similarity_threshold: 0 };
      expect(((await b.call('retrieval', q)) as { chunks: unknown[] }).chunks.length).toBeGreaterThan(0);
      await a.call('datasets.delete', { ids: [id] });
      const refused = async () => b.call('retrieval', q).then(() => false, (e: Error) => /lacks permission|don't own/i.test(e.message));
      expect(await eventually(refused)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});

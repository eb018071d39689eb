/**
 * Per-dataset vector indexes under a memory budget (src/search/dataset-vectors.ts), on SQLite and
 * on PostgreSQL (the same code): a dataset loads on its first search; past the budget the
 * datasets searched least recently are dropped; a node that evicted answers exactly as one that
 * never did, writes made meanwhile included; a search over more than the budget still answers;
 * bad `indexMemory` values are refused by name.
 */
import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { Api } from '../../src/api/index.js';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { datasetVectorOptions, forgetDatasetVectors, indexMemoryStats, setIndexMemory, termIndex, termIndexBytes, warmSearch } from '../../src/search/index.js';
import { LOAD_PAGES } from '../../src/store/postgres/index.js';
import { bothStores, openApi, type Where } from '../support/both-stores.js';
import { run } from '../cli/run.js';
import { addChunks } from '../support/seeded-chunks.js';

const PER_DATASET = 600;

const { stores, dir, server, reason } = await bothStores('ixmem');

const open = openApi;

/** Three datasets of PER_DATASET chunks each. */
async function seed(w: Where): Promise<string[]> {
  const api = await open(w);
  try {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const ds = (await api.call('datasets.create', { name })) as { id: string };
      await addChunks(api, ds.id, `${name}0.txt`, PER_DATASET, ids.length + 1);
      ids.push(ds.id);
    }
    return ids;
  } finally {
    await api.close();
  }
}

const ask = (api: Api, datasetIds: string[], question = 'wing flow over a boundary layer panel 7') =>
  api.call('retrieval', { question, dataset_ids: datasetIds, similarity_threshold: 0, top_k: 100, page_size: 20 });

const loaded = (api: Api) => indexMemoryStats(api.engine.store.search).loaded.map((l) => l.dataset);
const terms = (api: Api) => indexMemoryStats(api.engine.store.search).terms.map((l) => l.dataset);


describe.each(stores)('dataset vector indexes under a memory budget (%s)', (kind, where) => {
  const skip = kind === 'PostgreSQL' && !server;
  test.skipIf(skip)(`loads per dataset, evicts the least recently searched, and answers as a node that never evicted${skip ? ` (${reason})` : ''}`, async () => {
    const w = (await where())!;
    const [a, b, c] = await seed(w);
    // PostgreSQL's loads in many small pages, each asked for before the one before is copied.
    const pages = { ...LOAD_PAGES };
    Object.assign(LOAD_PAGES, { vectors: 64, text: 97 });
    const node = await open(w);
    const never = await open(w); // no budget: nothing is ever evicted
    try {
      const reader = node.engine.store.search;
      // First search of a: only a is loaded.
      const first = await ask(node, [a!]);
      expect(loaded(node)).toEqual([a]);
      expect(indexMemoryStats(reader).loaded[0]!.rows).toBe(PER_DATASET);
      expect(reader.fullText!.totals('chunk_fts')[0]).toBe(3 * PER_DATASET); // the text side: the whole store
      await termIndex(reader); // the store's term index, built without a budget: dropped once one is set
      expect(indexMemoryStats(reader).text).toBeGreaterThan(reader.fullTextBytes?.() ?? 0);
      // Under a budget the term index is per dataset too, loaded and evicted with the vectors.
      setIndexMemory(reader, 2 ** 40);
      expect(indexMemoryStats(reader).text).toBe(reader.fullTextBytes?.() ?? 0);
      await ask(node, [b!]);
      await ask(node, [a!]);
      const st = indexMemoryStats(reader);
      expect(st.loaded.map((l) => l.dataset)).toEqual([b, a]); // least recently searched first
      expect(st.terms.map((l) => l.dataset)).toEqual([b, a]);
      expect(st.loaded.every((l) => l.rows === PER_DATASET)).toBe(true);
      expect(st.terms.every((l) => l.rows === PER_DATASET && l.bytes > 0)).toBe(true);
      const per = st.loaded.map((l, i) => l.bytes + st.terms[i]!.bytes);
      // Room for the text side and two datasets, not three.
      const limit = st.text + per[0]! + per[1]! + Math.floor(per[0]! / 2);
      setIndexMemory(reader, limit);
      expect(loaded(node)).toEqual([b, a]);

      // c loads: b (searched least recently) goes, vectors and term index.
      const cAnswer = await ask(node, [c!]);
      expect(loaded(node)).toEqual([a, c]);
      // b's term index (smaller than its vectors) goes once the budget needs its room.
      expect(terms(node).slice(-2)).toEqual([a, c]);
      expect(indexMemoryStats(reader).used).toBeLessThanOrEqual(limit);
      expect(indexMemoryStats(reader).evictions).toBeGreaterThanOrEqual(1);
      // a searched again, then b: c goes, not a.
      await ask(node, [a!]);
      const bAgain = await ask(node, [b!]);
      expect(loaded(node)).toEqual([a, b]);
      expect(terms(node).slice(-2)).toEqual([a, b]);
      expect(indexMemoryStats(reader).used).toBeLessThanOrEqual(limit);

      // Reloaded after eviction: the same whole responses as a node that never evicted.
      expect(bAgain).toEqual(await ask(never, [b!]));
      expect(cAnswer).toEqual(await ask(never, [c!]));
      expect(first).toEqual(await ask(never, [a!]));

      // A write into c while it is evicted (from another connection: the never-evicting node's
      // store): seen when c loads again, and ranked as the never-evicted node ranks it.
      await addChunks(never, c!, 'c1.txt', 40, 99);
      const after = (await ask(node, [c!], 'vortex drag 11 cylinder')) as { total: number; chunks: Array<{ document_name: string }> };
      expect(after).toEqual(await ask(never, [c!], 'vortex drag 11 cylinder'));
      expect(after.chunks.some((x) => x.document_name === 'c1.txt')).toBe(true);
      expect(indexMemoryStats(reader).loaded.find((l) => l.dataset === c)!.rows).toBe(PER_DATASET + 40);
      expect(indexMemoryStats(reader).terms.find((l) => l.dataset === c)!.rows).toBe(PER_DATASET + 40);

      // A loaded dataset not searched keeps in step in the background (another dataset's search
      // syncs it once it is idle), so it never holds back the feed's trimming.
      // (Room to spare meanwhile: a sync that grows an index's arrays must not evict it here.)
      datasetVectorOptions.idleSyncMs = 0;
      setIndexMemory(reader, 2 * limit);
      try {
        const idle = loaded(node).find((x) => x !== b)!;
        const rowsOf = () => indexMemoryStats(reader).loaded.find((l) => l.dataset === idle)!.rows;
        const before = rowsOf();
        await addChunks(never, idle, 'late.txt', 7, 123);
        // One index a search (vectors and term indexes take turns, least recently synced first).
        await expect.poll(async () => (await ask(node, [b!]), rowsOf()), { timeout: 10_000 }).toBe(before + 7);
      } finally {
        datasetVectorOptions.idleSyncMs = 5_000;
        setIndexMemory(reader, limit);
      }

      // One search over all three, more than the budget holds: all loaded for it (overshoot), the
      // same answer as the never-evicted node; the next search of one dataset evicts back down.
      const all = await ask(node, [a!, b!, c!]);
      expect(all).toEqual(await ask(never, [a!, b!, c!]));
      expect(new Set(loaded(node))).toEqual(new Set([a, b, c]));
      expect(indexMemoryStats(reader).used).toBeGreaterThan(limit);
      await ask(node, [b!]);
      expect(indexMemoryStats(reader).used).toBeLessThanOrEqual(limit);
      expect(loaded(node).at(-1)).toBe(b); // the most recently searched is kept
      expect(loaded(node).length).toBeLessThan(3);

      // Every index dropped, and the least budget (1 MiB: about one dataset here): each term index
      // and vector index loads again on the next search, which answers as the never-evicted
      // node, a write made meanwhile by that node included.
      setIndexMemory(reader, 1024 * 1024);
      forgetDatasetVectors(reader);
      expect([loaded(node), terms(node)]).toEqual([[], []]);
      await addChunks(never, a!, 'a9.txt', 25, 321);
      for (const q of ['wing flow over a boundary layer panel 7', 'vortex drag 11 cylinder', 'nozzle shock 3']) {
        expect(await ask(node, [a!], q)).toEqual(await ask(never, [a!], q));
        expect(await ask(node, [c!, a!], q)).toEqual(await ask(never, [c!, a!], q));
      }
      expect(indexMemoryStats(reader).terms.find((l) => l.dataset === a)!.rows).toBe(PER_DATASET + 25);
    } finally {
      Object.assign(LOAD_PAGES, pages);
      await node.close();
      await never.close();
    }
  }, 120_000);
});

describe.each(stores)('a node warmed under a memory budget (%s)', (kind, where) => {
  const skip = kind === 'PostgreSQL' && !server;
  test.skipIf(skip)(`loads each dataset's vectors and term index, not the store's term index, and its first searches load nothing more${skip ? ` (${reason})` : ''}`, async () => {
    const w = (await where())!;
    const ids = await seed(w);
    const node = await open(w);
    const never = await open(w);
    try {
      const reader = node.engine.store.search;
      setIndexMemory(reader, 2 ** 40);
      await warmSearch(reader, ids);
      const st = indexMemoryStats(reader);
      expect(new Set(st.loaded.map((l) => l.dataset))).toEqual(new Set(ids));
      expect(new Set(st.terms.map((l) => l.dataset))).toEqual(new Set(ids));
      expect(st.terms.every((l) => l.rows === PER_DATASET)).toBe(true);
      expect(termIndexBytes(reader)).toBe(0); // no store-wide term index
      for (const d of [[ids[0]!], ids]) expect(await ask(node, d)).toEqual(await ask(never, d));
      expect(indexMemoryStats(reader).loads).toBe(st.loads);
      // The budget lifted: the datasets' term indexes go, the store's is built (in steps) again.
      setIndexMemory(reader, Infinity);
      expect(indexMemoryStats(reader).terms).toEqual([]);
      for (const d of [[ids[1]!], ids]) expect(await ask(node, d)).toEqual(await ask(never, d));
      expect(termIndexBytes(reader)).toBeGreaterThan(0);
    } finally {
      await node.close();
      await never.close();
    }
  }, 120_000);
});

describe('indexMemory: bad values are refused by name', () => {
  test('Client, startServer and `ragloom serve --index-memory`', async () => {
    for (const bad of [-1, 0, 1.5, 1000, Number.NaN, '1GB', null]) {
      expect(() => new Client({ path: ':memory:', indexMemory: bad as number })).toThrow(/"indexMemory" must be a whole number of bytes of at least 1 MiB/);
      await expect(startServer({ path: ':memory:', port: 0, indexMemory: bad as number })).rejects.toThrow(/startServer: "indexMemory" must be/);
    }
    expect(() => new Client({ postgres: 'postgresql://x@127.0.0.1:1/none', indexMemory: 5 })).toThrow(/"indexMemory"/);
    expect(() => new Client({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', indexMemory: 2 ** 30 })).toThrow(/"indexMemory" is the server's configuration/);
    // Accepted: Infinity, undefined, ≥ 1 MiB.
    for (const ok of [Infinity, undefined, 1024 * 1024, 2 ** 33]) await new Client({ path: ':memory:', indexMemory: ok }).close();
    const r = await run(['serve', '--db', join(dir, 'x.db'), '--index-memory', 'lots']);
    expect(r.code).toBe(1);
    expect(r.err).toContain("--index-memory must be a whole number, got 'lots'");
    expect((await run(['serve', '--db', join(dir, 'x.db'), '--index-memory', '0'])).err).toContain('--index-memory must be between 1 and');
  });
});

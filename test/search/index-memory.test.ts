/**
 * Per-dataset vector indexes under a memory budget (src/search/dataset-vectors.ts), on SQLite and
 * on PostgreSQL (the same code): a dataset loads on its first search; past the budget the
 * datasets searched least recently are dropped; a node that evicted answers exactly as one that
 * never did, writes made meanwhile included; a search over more than the budget still answers;
 * bad `indexMemory` values are refused by name.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../../src/api/index.js';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { datasetVectorOptions, indexMemoryStats, setIndexMemory, termIndex } from '../../src/search/index.js';
import { LOAD_PAGES } from '../../src/store/postgres/index.js';
import { createDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { run } from '../cli/run.js';
import { addChunks } from '../support/seeded-chunks.js';

const PER_DATASET = 600;

const dir = mkdtempSync(join(tmpdir(), 'ragloom-index-memory-'));
const server = await pgServer();
const reason = await pgSkipReason();
const dbs: string[] = [];
afterAll(async () => {
  for (const u of dbs) await dropDatabase(server!, u).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

type Where = { path: string } | { postgres: string };
const open = (w: Where): Promise<Api> => ('postgres' in w ? Api.open(w) : Promise.resolve(new Api(w)));

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

const stores: Array<[string, () => Promise<Where | undefined>]> = [
  ['SQLite', async () => ({ path: join(dir, `s${Math.random().toString(36).slice(2)}.db`) })],
  ['PostgreSQL', async () => {
    if (!server) return undefined;
    const u = await createDatabase(server, 'ixmem');
    dbs.push(u);
    return { postgres: u };
  }],
];

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
      await termIndex(reader); // the text side fully built: the budget below is then fixed
      await ask(node, [b!]);
      await ask(node, [a!]);
      const st = indexMemoryStats(reader);
      const per = st.loaded.map((l) => l.bytes);
      expect(st.loaded.map((l) => l.dataset)).toEqual([b, a]); // least recently searched first
      expect(st.loaded.every((l) => l.rows === PER_DATASET)).toBe(true);
      // Room for the text side and two datasets, not three.
      const limit = st.text + per[0]! + per[1]! + Math.floor(per[0]! / 2);
      setIndexMemory(reader, limit);
      expect(loaded(node)).toEqual([b, a]);

      // c loads: b (searched least recently) goes.
      const cAnswer = await ask(node, [c!]);
      expect(loaded(node)).toEqual([a, c]);
      expect(indexMemoryStats(reader).used).toBeLessThanOrEqual(limit);
      expect(indexMemoryStats(reader).evictions).toBe(1);
      // a searched again, then b: c goes, not a.
      await ask(node, [a!]);
      const bAgain = await ask(node, [b!]);
      expect(loaded(node)).toEqual([a, b]);
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

      // A loaded dataset not searched keeps in step in the background (another dataset's search
      // syncs it once it is idle), so it never holds back the feed's trimming.
      datasetVectorOptions.idleSyncMs = 0;
      try {
        const idle = loaded(node).find((x) => x !== b)!;
        const rowsOf = () => indexMemoryStats(reader).loaded.find((l) => l.dataset === idle)!.rows;
        const before = rowsOf();
        await addChunks(never, idle, 'late.txt', 7, 123);
        await ask(node, [b!]);
        await expect.poll(rowsOf, { timeout: 10_000 }).toBe(before + 7);
      } finally {
        datasetVectorOptions.idleSyncMs = 5_000;
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
    } finally {
      Object.assign(LOAD_PAGES, pages);
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

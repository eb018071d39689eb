/**
 * warmSearch (src/search/warm.ts), the preload a server starts in the background: a preload that
 * fails is reported through its log, and the searches are served all the same (they load what
 * they need themselves).
 */
import { afterAll, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../../src/api/index.js';
import { indexMemoryStats, warmSearch } from '../../src/search/index.js';
import { addChunks } from '../support/seeded-chunks.js';

const dir = mkdtempSync(join(tmpdir(), 'ragloom-warm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = (api: Api, id: string) => api.call('retrieval', { question: 'wing flow over a boundary layer', dataset_ids: [id], similarity_threshold: 0, page_size: 10 });

describe('warmSearch', () => {
  test('loads the datasets\' vectors, and says nothing when all goes well', async () => {
    const api = new Api({ path: join(dir, 'ok.db') });
    try {
      const ds = (await api.call('datasets.create', { name: 'a' })) as { id: string };
      await addChunks(api, ds.id, 'a.txt', 40, 1);
      const logged: string[] = [];
      await warmSearch(api.engine.store.search, [ds.id], (m) => logged.push(m));
      expect(logged).toEqual([]);
      expect(indexMemoryStats(api.engine.store.search).loaded.map((l) => l.dataset)).toEqual([ds.id]);
    } finally {
      await api.close();
    }
  });

  test('a preload that fails is reported through its log, and the searches still answer as before', async () => {
    const path = join(dir, 'broken.db');
    const seeded = new Api({ path });
    const ds = (await seeded.call('datasets.create', { name: 'a' })) as { id: string };
    await addChunks(seeded, ds.id, 'a.txt', 40, 1);
    const before = await ask(seeded, ds.id);
    // The file names a table of 512-d vectors it does not hold: the preload, which reads every
    // dimension's vectors, fails on it; a search reads only its embedding model's (256-d).
    seeded.engine.db.prepare("INSERT INTO vec_index (dim, table_name) VALUES (512, 'vec_512')").run();
    await seeded.close();
    const api = new Api({ path });
    try {
      const logged: string[] = [];
      await warmSearch(api.engine.store.search, [ds.id], (m) => logged.push(m));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(/^ragloom search: preloading the search indexes failed: .*no such table: vec_512.*; each search loads what it needs$/);
      expect(await ask(api, ds.id)).toEqual(before);
    } finally {
      await api.close();
    }
  });
});

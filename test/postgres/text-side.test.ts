/**
 * A PostgreSQL-backed node's text side built in the background (term-index.ts
 * buildTermIndexInBackground, warm.ts warmSearch; a server starts them): searches while it is
 * built answer exactly as with it built and no longer each build a slice of it, and a node warmed
 * ahead of its first search holds the FTS5 copy, every dataset's vectors and the term index. The
 * FTS5 copy holds no chunk texts: a search that reads them before the term index is built reads
 * them from PostgreSQL, and ranks as SQLite does. A search's build step skips while another's runs.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../../src/api/index.js';
import {
  buildTermIndexInBackground, builtTermIndex, indexMemoryStats, termIndexOptions, termIndexStep, warmSearch, TERM_SLICES, type TermIndex,
} from '../../src/search/index.js';
import { createDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { addChunks } from '../support/seeded-chunks.js';
import { portable } from '../acceptance/modes.js';

const server = await pgServer();
const reason = await pgSkipReason();
const dbs: string[] = [];
afterAll(async () => {
  for (const u of dbs) await dropDatabase(server!, u).catch(() => undefined);
});

const QUESTIONS = ['wing flow over a boundary layer panel 7', 'vortex drag 11 cylinder', 'shock heat', 'nozzle flutter plate 3'];

/** A database with three datasets of 300 chunks each (PostgreSQL, or the SQLite file `path`). */
async function seeded(path?: string): Promise<{ url: string; ids: string[] }> {
  const url = path ?? (await createDatabase(server!, 'warm'));
  if (!path) dbs.push(url);
  const api = path ? new Api({ path }) : await Api.open({ postgres: url });
  try {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const ds = (await api.call('datasets.create', { name })) as { id: string };
      await addChunks(api, ds.id, `${name}0.txt`, 300, ids.length + 1);
      ids.push(ds.id);
    }
    return { url, ids };
  } finally {
    await api.close();
  }
}

const ask = (api: Api, datasetIds: string[], question: string, w = 0.3) =>
  api.call('retrieval', { question, dataset_ids: datasetIds, similarity_threshold: 0, vector_similarity_weight: w, top_k: 100, page_size: 20 });

/** Every question over all datasets and over the first one, text only and hybrid. */
const askAll = (api: Api, ids: string[]) =>
  Promise.all(QUESTIONS.flatMap((q) => [ask(api, ids, q, 0), ask(api, ids, q), ask(api, [ids[0]!], q)]));

describe.skipIf(!server)(`a PostgreSQL node's term index built in the background${server ? '' : ` (${reason})`}`, () => {
  test('searches during the build answer as with it built, and build none of it themselves', async () => {
    const { url, ids } = await seeded();
    // What every answer must be: FTS5 answering all (the term index switched off).
    const ref = await Api.open({ postgres: url });
    termIndexOptions.enabled = false;
    const expected = await askAll(ref, ids).finally(() => (termIndexOptions.enabled = true));
    await ref.close();

    const slices = { ...TERM_SLICES };
    TERM_SLICES.bulk = 7; // 900 chunks: ~130 statements, so searches run while it is built
    const node = await Api.open({ postgres: url });
    try {
      const reader = node.engine.store.search;
      const bg = buildTermIndexInBackground(reader);
      expect(await builtTermIndex(reader)).toBeUndefined();
      // A search's build step neither builds nor waits for the background build.
      let stepDone = false;
      const step = termIndexStep(reader, Infinity).then((ix) => ((stepDone = true), ix));
      let during = 0;
      const answers = await Promise.all(QUESTIONS.flatMap((q) => [ask(node, ids, q, 0), ask(node, ids, q), ask(node, [ids[0]!], q)]).map((p) =>
        p.then(async (a) => {
          if (!(await builtTermIndex(reader))) during++;
          return a;
        })));
      expect(await step).toBeUndefined();
      expect(stepDone).toBe(true);
      expect(during).toBeGreaterThan(0); // some answers came from FTS5 while the index was being built
      expect(answers).toEqual(expected);
      await bg;
      const ix = (await builtTermIndex(reader)) as TermIndex;
      expect(ix.size).toBe(900);
      expect(await askAll(node, ids)).toEqual(expected);
    } finally {
      Object.assign(TERM_SLICES, slices);
      await node.close();
    }
  }, 60_000);

  test('warmSearch: the FTS5 copy, every dataset\'s vectors and the term index loaded before the first search', async () => {
    const { url, ids } = await seeded();
    const node = await Api.open({ postgres: url });
    try {
      const reader = node.engine.store.search;
      await warmSearch(reader, ids);
      expect((await builtTermIndex(reader))?.size).toBe(900);
      const st = indexMemoryStats(reader);
      expect(new Set(st.loaded.map((l) => l.dataset))).toEqual(new Set(ids));
      expect(st.loads).toBe(3);
      expect(reader.fullText!.totals('chunk_fts')[0]).toBe(900);
      // The first search loads nothing more.
      await ask(node, ids, QUESTIONS[0]!);
      expect(indexMemoryStats(reader).loads).toBe(3);
    } finally {
      await node.close();
    }
  }, 60_000);

  test('the FTS5 copy holds no chunk texts; searches without the term index read them from PostgreSQL and rank as SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-warm-'));
    const pgDb = await seeded();
    const sqlDb = await seeded(join(dir, 'kb.db'));
    const pgNode = await Api.open({ postgres: pgDb.url });
    const sqlNode = new Api({ path: sqlDb.url });
    // FTS5 answers all (on PostgreSQL: the copy's top rows, the other candidates' and RM3's texts
    // read from the store), then the term index answers all.
    termIndexOptions.enabled = false;
    try {
      const pg = (await askAll(pgNode, pgDb.ids)).map(portable);
      expect(pg).toEqual((await askAll(sqlNode, sqlDb.ids)).map(portable));
      expect(JSON.stringify(pg)).toContain('"term_similarity"');
      const copy = pgNode.engine.store.search.fullText!;
      expect(copy.chunkTexts).toBe(false);
      expect(() => copy.texts('chunk_fts', [1])).toThrow(/holds no chunk texts/);
      termIndexOptions.enabled = true;
      expect((await askAll(pgNode, pgDb.ids)).map(portable)).toEqual(pg);
    } finally {
      termIndexOptions.enabled = true;
      await pgNode.close();
      await sqlNode.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("a search's build step skips while another search's runs, rather than queueing behind it", async () => {
    const { url } = await seeded();
    const node = await Api.open({ postgres: url });
    try {
      const reader = node.engine.store.search;
      let firstDone = false;
      const first = termIndexStep(reader, 0).then((ix) => ((firstDone = true), ix));
      expect(await termIndexStep(reader, 0)).toBeUndefined();
      expect(firstDone).toBe(false); // the second answered while the first was still reading its slice
      expect(await first).toBeUndefined(); // one slice of 900 rows: not built yet
      // A build at once still builds (and waits for a step under way).
      const step = termIndexStep(reader, 0);
      expect((await termIndexStep(reader, Infinity))?.size).toBe(900);
      await step;
    } finally {
      await node.close();
    }
  }, 60_000);
});

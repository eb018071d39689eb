/**
 * The same Client, server and CLI on PostgreSQL (issue 30): `new Client({ postgres })`,
 * `startServer({ postgres })`, `--db postgresql://…`; a database that does not exist is an
 * ApiError naming it; for the same data, the same ranked results as on SQLite, to the last digit.
 */
import { describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, ApiError } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { fileDatabases, pgServer, pgSkipReason, pgUrl } from '../support/postgres.js';
import { loadCranfield } from '../../bench/lib/cranfield.js';
import { CORPUS, enc, parsedDataset, portable, caught } from '../acceptance/modes.js';
import { runJson } from '../cli/run.js';

const server = await pgServer();
const reason = await pgSkipReason();
const fresh = fileDatabases(server, 'wire');

describe.skipIf(!server)(`the Client, server and CLI on PostgreSQL${reason ? ` (${reason})` : ''}`, () => {
  test('a database that does not exist: an ApiError naming it, from the Client and from startServer; nothing is created', async () => {
    const url = pgUrl(server!, 'no_such_db_here');
    const c = new Client({ postgres: url });
    const e = await caught(c.listDatasets());
    expect(e.code).toBe(500);
    expect(e.message).toContain('Database "no_such_db_here" does not exist');
    await c.close();
    await expect(startServer({ postgres: url, port: 0 })).rejects.toThrow(/Database "no_such_db_here" does not exist/);
    await expect(startServer({ path: url, port: 0 })).rejects.toBeInstanceOf(ApiError);
    expect(() => new Client({ postgres: 'mysql://x/y' })).toThrow(TypeError);
    expect(() => new Client({ postgres: url, path: 'x.db' })).toThrow(/either "path"/);
  });

  test('same ranked results as SQLite for the same data: whole retrieval responses, to the last digit', async () => {
    const cran = loadCranfield();
    const docs = cran ? cran.docs.slice(0, 120).map((d) => [`cran-${d.id}.txt`, `${d.title}\n\n${d.text}`] as const) : Object.entries(CORPUS);
    const questions = cran ? cran.queries.slice(0, 12).map((q) => q.text) : ['when do tides happen', 'how long does bread rise', 'longest river'];
    const pgc = new Client({ postgres: await fresh() });
    const sql = new Client({ path: ':memory:' });
    try {
      const load = async (c: Client) => {
        const ds = await c.createDataset({ name: 'same' });
        const up = await ds.uploadDocuments(docs.map(([n, t]) => ({ display_name: n, blob: enc(t) })));
        const done = await ds.parseDocuments(up.map((d) => d.id), { pollMs: 20 });
        expect(done.every(([, run]) => run === 'DONE')).toBe(true);
        return ds;
      };
      const [a, b] = [await load(pgc), await load(sql)];
      let hits = 0;
      for (const question of questions) {
        for (const opts of [{}, { vector_similarity_weight: 0.1, top_k: 50 }, { highlight: true, page_size: 5, page: 2 }]) {
          const x = await pgc.retrieveWithTotals({ question, dataset_ids: [a.id], similarity_threshold: 0, ...opts });
          const y = await sql.retrieveWithTotals({ question, dataset_ids: [b.id], similarity_threshold: 0, ...opts });
          expect(portable(x)).toEqual(portable(y));
          hits += x.chunks.length;
        }
      }
      expect(hits).toBeGreaterThan(questions.length);
    } finally {
      await pgc.close();
      await sql.close();
    }
  }, 240_000);

  test('startServer({ postgres }): two servers on one database, a write through one found through the other', async () => {
    const url = await fresh();
    const s1 = await startServer({ postgres: url, port: 0, newAdminKey: false });
    const s2 = await startServer({ path: url, port: 0 });
    try {
      // The first serve persists the admin key; a later one gets a key of its own for the same admin.
      expect([s1.firstStart, s2.firstStart]).toEqual([true, false]);
      const c1 = new Client({ baseUrl: s1.url, apiKey: s1.apiKey });
      const c2 = new Client({ baseUrl: s2.url, apiKey: s2.apiKey });
      const { ds } = await parsedDataset(c1, 'shared');
      const hits = await c2.retrieve({ question: 'spring tides at full moon', dataset_ids: [ds.id] });
      expect(hits[0]?.content).toContain('Tides');
      await (await c2.listDatasets())[0]!.deleteDocuments({ ids: [hits[0]!.document_id] });
      expect((await c1.retrieve({ question: 'spring tides at full moon', dataset_ids: [ds.id] })).some((h) => h.content.includes('Tides'))).toBe(false);
      await c1.close();
      await c2.close();
    } finally {
      await s1.close();
      await s2.close();
    }
  }, 120_000);

  test('the CLI: ingest and retrieve with --db postgresql://…', async () => {
    const url = await fresh();
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-pgcli-'));
    try {
      mkdirSync(join(dir, 'notes'));
      for (const [n, t] of Object.entries(CORPUS)) writeFileSync(join(dir, 'notes', n), t);
      const ing = await runJson<{ documents: unknown[] }>(['ingest', join(dir, 'notes'), '--db', url, '--dataset', 'notes']);
      expect(ing.code).toBe(0);
      expect(JSON.stringify(ing.json)).not.toContain(server!.password ?? '\u0000');
      const r = await runJson<{ chunks: Array<{ content: string }> }>(['retrieve', 'how long should the dough rise', '--db', url, '--dataset', 'notes']);
      expect(r.code).toBe(0);
      expect(JSON.stringify(r.json)).toContain('Knead the dough');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openDatabase, type Db } from '../../src/store/db.js';
import { upsertChunk, upsertChunks, type NewChunk } from '../../src/store/chunks.js';
import { ftsTerms } from '../../src/text/index.js';

function seed(db: Db): void {
  db.exec(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t', 't', 'm', 0);
    INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('ds', 't', 'n', 'm', 'u', 0, 0);
    INSERT INTO blob (sha256, size, data) VALUES ('s', 0, x'');
    INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
      VALUES ('doc', 'ds', 'Heated Wings.txt', 'doc', 0, 's', 'd.txt', 'naive', 'u', 0, 0);`);
}

const chunk = (i: number, id = `c${i}`, dim = 8): NewChunk => ({
  id, document_id: 'doc', dataset_id: 'ds', content: `Chunk ${i} investigates heated wings, café 模型 ${i % 5}`, title: i % 7 ? 'Heated Wings.txt' : 'Other Title.md',
  index_text: i % 6 === 5 ? `index text ${i}` : undefined,
  important_keywords: i % 2 ? ['wings', 'ice'] : [], questions: i % 3 ? [] : ['Why do wings ice?'], tag_kwd: [], positions: i % 4 ? [] : [[1, 2, 3, 4, 5]],
  available: true, chunk_order: i, token_num: 5, create_time: 't', create_timestamp: 0, vector: Float32Array.from({ length: dim }, (_, j) => Math.sin(i + j)),
});

const dump = (db: Db) => ({
  rows: db.prepare('SELECT * FROM chunk ORDER BY rowid').all(),
  log: db.prepare('SELECT rid FROM vec_log ORDER BY seq').all(),
  hits: hits(db).map((h) => h.map((r) => r.rowid)),
  terms: db.prepare('SELECT term, doc, cnt FROM chunk_fts_terms ORDER BY term').all(),
  vec8: db.prepare('SELECT rowid, embedding FROM vec_8 ORDER BY rowid').all(),
  vec4: db.prepare("SELECT rowid, embedding FROM vec_4 ORDER BY rowid").all(),
});

// Matches with their BM25 score, by chunk id.
const hits = (db: Db) => ['wing OR ice', 'investig', 'cafe', '模型', 'index', 'other'].map((q) =>
  db.prepare(`SELECT f.rowid AS rowid, c.id AS id, bm25(chunk_fts) AS s FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid
    WHERE chunk_fts MATCH ? ORDER BY c.id`).all(q) as { rowid: number; id: string; s: number }[]);
const scores = (db: Db) => hits(db).map((h) => h.map((r) => [r.id, r.s]));

describe('upsertChunks: pre-analysed full-text rows and replacements', () => {
  test('chunks with worker-analysed terms, chunks without, and one at a time give the same store', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-ut-'));
    try {
      const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => {
        const db = openDatabase(join(dir, `${n}.db`));
        seed(db);
        db.exec('CREATE TABLE IF NOT EXISTS x (y)'); // nothing else differs
        // vec_4 exists everywhere, so the dumps compare
        db.transaction(() => upsertChunks(db, [chunk(1000, 'seed4', 4)]))();
        return db;
      }) as [Db, Db, Db, Db];
      // Earlier rows that the batch replaces (pre-existing ids), then a batch with ids repeated
      // inside it (c3 three times, c7 twice), and vectors of two dimensions.
      const before = Array.from({ length: 6 }, (_, i) => chunk(100 + i, `old${i}`));
      const batch = [
        ...Array.from({ length: 20 }, (_, i) => chunk(i, `c${i}`, i % 9 === 8 ? 4 : 8)),
        chunk(20, 'c3'), chunk(21, 'old2'), chunk(22, 'c7', 4), chunk(23, 'c3'), chunk(24, 'old5'), chunk(25, 'c25'), chunk(26, 'c25'),
      ];
      for (const db of [a, b, c, d]) db.transaction(() => upsertChunks(db, before))();
      let newA = 0;
      a.transaction(() => { for (const x of batch) if (upsertChunk(a, x)) newA++; })();
      let newB = 0;
      b.transaction(() => { newB = upsertChunks(b, batch); })();
      const withTerms = batch.map((x) => ({ ...x, terms: ftsTerms(x.title, x.index_text ?? x.content, x.important_keywords, x.questions) }));
      let newC = 0;
      c.transaction(() => { newC = upsertChunks(c, withTerms); })();
      // The same batch without the chunks it replaces itself.
      const last = new Map(batch.map((x, i) => [x.id, i]));
      d.transaction(() => upsertChunks(d, batch.filter((x, i) => last.get(x.id) === i)))();
      expect(newA).toBe(21);
      expect(newB).toBe(21);
      expect(newC).toBe(21);
      const da = dump(a);
      expect(dump(b)).toEqual(da);
      expect(dump(c)).toEqual(da);
      // A chunk replaced within the same call never reaches the full-text index, so BM25 sees
      // the statistics of the rows that stay, as if the batch had come without the repeats (one
      // at a time, the replaced row's length stays in FTS5's totals: contentless deletes keep them).
      expect(scores(b)).toEqual(scores(d));
      expect(scores(c)).toEqual(scores(d));
      expect(da.rows).toHaveLength(1 + 6 + 21);
      expect((a.prepare("SELECT content FROM chunk WHERE id = 'c3'").get() as { content: string }).content).toContain('Chunk 23');
      d.close();
      for (const db of [a, b, c]) {
        // Every row has exactly one vector and one full-text row.
        const n = (db.prepare('SELECT COUNT(*) AS n FROM chunk').get() as { n: number }).n;
        const v = (db.prepare('SELECT (SELECT COUNT(*) FROM vec_8) + (SELECT COUNT(*) FROM vec_4) AS n').get() as { n: number }).n;
        const f = (db.prepare('SELECT COUNT(*) AS n FROM chunk_fts_docsize').get() as { n: number }).n;
        expect([v, f]).toEqual([n, n]);
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the terms given are the ones written', () => {
    const db = openDatabase(':memory:');
    seed(db);
    const c = { ...chunk(1), terms: ['zzztitle', 'zzzcontent', 'zzzkw', 'zzzq'] as const };
    db.transaction(() => upsertChunks(db, [c]))();
    const terms = (db.prepare('SELECT term FROM chunk_fts_terms ORDER BY term').all() as { term: string }[]).map((r) => r.term);
    expect(terms).toEqual(['zzzcontent', 'zzzkw', 'zzzq', 'zzztitle']);
    db.close();
  });
});

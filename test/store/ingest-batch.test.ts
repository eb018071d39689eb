import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { analyze, analyzeForIndex } from '../../src/text/analyze.js';
import { openDatabase } from '../../src/store/db.js';
import { upsertChunk, upsertChunks, type NewChunk } from '../../src/store/chunks.js';

describe('analyzeForIndex() ASCII fast path', () => {
  test('gives analyze(text).join(" ") for tricky and random ASCII text', () => {
    const fixed = ["It's the dog's bone; dogs' bones aren't 42 o'clock", "'s 's' ''s a'b'c x' 'y", 'Running RUNS ran 3D x86_64 foo-bar e.g. U.S.A.',
      '', '   ', 'What are the investigations of heated wings in 1958?', "I a b 1 22 q's", "don't won't can't shouldn't've", "abc''def a'''b", 'Hello\nWorld\tTab',
      'Café NAÏVE', 'gpt模型 and words'];
    for (const t of fixed) expect(analyzeForIndex(t)).toBe(analyze(t).join(' '));
    let seed = 3;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const alpha = "abcdefgstXYZ019 '.,-";
    for (let k = 0; k < 20000; k++) {
      let t = '';
      const len = Math.floor(rnd() * 40);
      for (let j = 0; j < len; j++) t += alpha[Math.floor(rnd() * alpha.length)];
      expect(analyzeForIndex(t)).toBe(analyze(t).join(' '));
    }
  });
});

describe('upsertChunks', () => {
  test('writes the same rows, FTS and vectors as upsertChunk, replacing repeated ids', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-ub-'));
    try {
      const dbs = ['a', 'b'].map((n) => {
        const db = openDatabase(join(dir, `${n}.db`));
        db.exec(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t', 't', 'm', 0);
          INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('ds', 't', 'n', 'm', 'u', 0, 0);
          INSERT INTO blob (sha256, size, data) VALUES ('s', 0, x'');
          INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
            VALUES ('doc', 'ds', 'Heated Wings.txt', 'doc', 0, 's', 'd.txt', 'naive', 'u', 0, 0);`);
        return db;
      });
      const chunk = (i: number, id = `c${i}`): NewChunk => ({
        id, document_id: 'doc', dataset_id: 'ds', content: `Chunk ${i} investigates heated wings`, title: 'Heated Wings.txt',
        important_keywords: i % 2 ? ['wings', 'ice'] : [], questions: i % 3 ? [] : ['Why do wings ice?'], tag_kwd: [], positions: i % 4 ? [] : [[1, 2, 3, 4, 5]],
        available: true, chunk_order: i, token_num: 5, create_time: 't', create_timestamp: 0, vector: Float32Array.from({ length: 8 }, (_, j) => Math.sin(i + j)),
      });
      const list = [...Array.from({ length: 20 }, (_, i) => chunk(i)), chunk(20, 'c3'), chunk(21, 'c7')];
      const [a, b] = dbs as [ReturnType<typeof openDatabase>, ReturnType<typeof openDatabase>];
      let newA = 0;
      a.transaction(() => { for (const c of list) if (upsertChunk(a, c)) newA++; })();
      let newB = 0;
      b.transaction(() => { newB = upsertChunks(b, list.slice(0, 10)); newB += upsertChunks(b, list.slice(10)); })();
      expect(newA).toBe(20);
      expect(newB).toBe(20);
      const dump = (db: typeof a) => ({
        rows: db.prepare('SELECT * FROM chunk ORDER BY rowid').all(),
        fts: db.prepare("SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH 'wing OR ice' ORDER BY rowid").all(),
        terms: db.prepare('SELECT term, doc, cnt FROM chunk_fts_terms ORDER BY term').all(),
        vec: db.prepare('SELECT rowid, embedding FROM vec_8 ORDER BY rowid').all(),
      });
      expect(dump(b)).toEqual(dump(a));
      expect((b.prepare("SELECT content FROM chunk WHERE id = 'c3'").get() as { content: string }).content).toContain('Chunk 20');
      for (const db of dbs) db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the full-text bulk-load settings are stored with the index', () => {
    const db = openDatabase(':memory:');
    const cfg = Object.fromEntries((db.prepare('SELECT k, v FROM chunk_fts_config').all() as { k: string; v: unknown }[]).map((r) => [r.k, r.v]));
    expect(cfg.hashsize).toBe(16 * 1024 * 1024);
    expect(cfg.automerge).toBe(8);
    db.close();
  });
});

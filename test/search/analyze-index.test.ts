import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { analyze } from '../../src/text/analyze.js';
import { openDatabase } from '../../src/store/db.js';
import { sqliteSearch } from '../../src/store/sqlite/search.js';
import { upsertChunk, removeChunkRows } from '../../src/store/chunks.js';
import { vectorIndex, vectorSearchOptions, forgetVectorIndexes } from '../../src/search/vector-index.js';
import { CodeStore } from '../../src/search/hamming.js';
import { filterDocuments } from '../../src/search/metadata.js';
import { parseMetadataCondition } from '../../src/api/retrieval.js';

describe('analyze()', () => {
  test('stems with Porter2, drops stop and question words, keeps numbers', () => {
    expect(analyze('What are the investigations of heated wings in 1958?')).toEqual(['investig', 'heat', 'wing', '1958']);
  });
  test('folds case and Latin diacritics; keeps other scripts; CJK and Thai become bigrams (Chinese words of 3+ characters added)', () => {
    expect(analyze('Café NAÏVE')).toEqual(['cafe', 'naiv']);
    expect(analyze('Привет мир')).toEqual(['привет', 'мир']);
    expect(analyze('自然语言')).toEqual(['自然', '然语', '语言', '自然语言']);
    expect(analyze('自然语言', 'v2')).toEqual(['自然', '然语', '语言']);
    expect(analyze('gpt模型')).toEqual(['gpt', '模型']);
    expect(analyze('ภาษาไทย')).toContain('ภา');
  });
});

describe('metadata filter', () => {
  const docs = [
    { id: 'a', meta_fields: JSON.stringify({ d: '2024-01-31', n: 5, s: 'Alpha', l: ['x', 'y'] }) },
    { id: 'b', meta_fields: JSON.stringify({ d: '2024-02-01 10:00', n: '12', s: 'beta', l: ['y'] }) },
    { id: 'c', meta_fields: '{}' },
  ];
  const run = (op: string, value: unknown, name = 'n') => [...filterDocuments(docs, parseMetadataCondition({ conditions: [{ name, comparison_operator: op, value }] })!)].sort();
  test('every operator and alias', () => {
    expect(run('=', 5)).toEqual(['a']);
    expect(run('is', '12')).toEqual(['b']);
    expect(run('≠', 5)).toEqual(['b', 'c']);
    expect(run('!=', 5)).toEqual(['b', 'c']);
    expect(run('not is', 5)).toEqual(['b', 'c']);
    expect(run('>', 5)).toEqual(['b']);
    expect(run('<', 12)).toEqual(['a']);
    expect(run('≥', 5)).toEqual(['a', 'b']);
    expect(run('≤', 12)).toEqual(['a', 'b']);
    expect(run('>', '2024-01-31', 'd')).toEqual(['b']);
    expect(run('≤', '2024-01-31', 'd')).toEqual(['a']);
    expect(run('contains', 'LPH', 's')).toEqual(['a']);
    expect(run('not contains', 'lph', 's')).toEqual(['b', 'c']);
    expect(run('start with', 'be', 's')).toEqual(['b']);
    expect(run('end with', 'HA', 's')).toEqual(['a']);
    expect(run('in', 'alpha,gamma', 's')).toEqual(['a']);
    expect(run('not in', ['alpha'], 's')).toEqual(['b', 'c']);
    expect(run('in', ['x', 'y'], 'l')).toEqual(['a', 'b']);
    expect(run('contains', 'x', 'l')).toEqual(['a']);
    expect(run('empty', null, 's')).toEqual(['c']);
    expect(run('not empty', null, 's')).toEqual(['a', 'b']);
  });
  test("read as RAGFlow reads it: falsy is no filter; a filter without conditions matches nothing; bad shapes fail with RAGFlow's Python errors", () => {
    expect(parseMetadataCondition(null)).toBeNull();
    expect(parseMetadataCondition({})).toBeNull();
    expect(parseMetadataCondition([])).toBeNull();
    expect(parseMetadataCondition({ conditions: [] })).toEqual({ logic: 'and', conditions: [] });
    expect(parseMetadataCondition({ logic: 'xor', conditions: [] })).toEqual({ logic: 'or', conditions: [] });
    expect(() => parseMetadataCondition([1])).toThrow(`AttributeError("'list' object has no attribute 'get'")`);
    expect(() => parseMetadataCondition({ conditions: 5 })).toThrow(`TypeError("'int' object is not iterable")`);
    expect(() => parseMetadataCondition({ conditions: [{ name: 'a', value: 1 }] })).toThrow("KeyError('comparison_operator')");
    expect(() => parseMetadataCondition({ conditions: ['x'] })).toThrow(`TypeError("string indices must be integers, not 'str'")`);
    expect(parseMetadataCondition({ conditions: [{ name: 'a', comparison_operator: '~', value: 1 }] })!.conditions[0]!.op).toBeUndefined();
  });
});

describe('vector index', () => {
  test('the binary prefilter finds the exact top-10 on clustered data, and follows deletes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-vi-'));
    const db = openDatabase(join(dir, 'v.db'));
    db.exec(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t', 't', 'm', 0);
      INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('ds', 't', 'n', 'm', 'u', 0, 0);
      INSERT INTO blob (sha256, size, data) VALUES ('s', 0, x'');
      INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
        VALUES ('doc', 'ds', 'd.txt', 'doc', 0, 's', 'd.txt', 'naive', 'u', 0, 0);`);
    let seed = 7;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
    const dim = 64;
    const centres = Array.from({ length: 20 }, () => Float32Array.from({ length: dim }, rnd));
    const unit = (v: Float32Array) => { const n = Math.hypot(...v); return v.map((x) => x / n); };
    const vec = (i: number) => unit(centres[i % 20]!.map((x) => x + 0.6 * rnd()));
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) {
        upsertChunk(db, { id: `c${i}`, document_id: 'doc', dataset_id: 'ds', content: `chunk ${i}`, title: 'd.txt', important_keywords: [], questions: [],
          tag_kwd: [], positions: [], available: true, chunk_order: i, token_num: 2, create_time: '', create_timestamp: 0, vector: vec(i) });
      }
    })();
    const saved = { ...vectorSearchOptions };
    vectorSearchOptions.exactBelow = 1000;
    vectorSearchOptions.minCandidates = 300;
    try {
      const ix = (await vectorIndex(sqliteSearch(db), dim))!;
      expect(ix.size).toBe(3000);
      let found = 0;
      for (let qn = 0; qn < 20; qn++) {
        const q = vec(qn * 7 + 3);
        const exact = ix.search(q, 10, { datasets: ['ds'] }, { exact: true }).map((h) => h.rowid);
        const approx = ix.search(q, 10, { datasets: ['ds'] }).map((h) => h.rowid);
        found += approx.filter((r) => exact.includes(r)).length;
      }
      expect(found / 200).toBeGreaterThan(0.9);
      const q = vec(5);
      const best = ix.search(q, 1, { datasets: ['ds'] }, { exact: true })[0]!;
      db.transaction(() => removeChunkRows(db, [best.rowid]))();
      const ix2 = (await vectorIndex(sqliteSearch(db), dim))!;
      expect(ix2.size).toBe(2999);
      expect(ix2.search(q, 5, { datasets: ['ds'] }).map((h) => h.rowid)).not.toContain(best.rowid);
      expect(ix2.search(q, 5, { datasets: ['other'] })).toEqual([]);
      // A second dataset: searching one of two takes the per-dataset path and never leaks.
      db.exec(`INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('ds2', 't', 'n2', 'm', 'u', 0, 0);
        INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
          VALUES ('doc2', 'ds2', 'e.txt', 'doc', 0, 's', 'e.txt', 'naive', 'u', 0, 0);`);
      db.transaction(() => {
        for (let i = 0; i < 50; i++) {
          upsertChunk(db, { id: `x${i}`, document_id: 'doc2', dataset_id: 'ds2', content: `other ${i}`, title: 'e.txt', important_keywords: [], questions: [],
            tag_kwd: [], positions: [], available: true, chunk_order: i, token_num: 2, create_time: '', create_timestamp: 0, vector: q });
        }
      })();
      const ix3 = (await vectorIndex(sqliteSearch(db), dim))!;
      const only1 = ix3.search(q, 10, { datasets: ['ds'] });
      const only2 = ix3.search(q, 10, { datasets: ['ds2'] });
      const both = ix3.search(q, 10, { datasets: ['ds', 'ds2'] });
      expect(only1.every((h) => ix3.datasetOf(h.rowid) === 'ds')).toBe(true);
      expect(only2.every((h) => ix3.datasetOf(h.rowid) === 'ds2')).toBe(true);
      expect(only2[0]!.score).toBeCloseTo(1, 5);
      expect(both.every((h) => ix3.datasetOf(h.rowid) === 'ds2')).toBe(true);
      // A rolled-back write leaves the index as it was.
      try {
        db.transaction(() => { removeChunkRows(db, [ix2.search(q, 1, { datasets: ['ds'] })[0]!.rowid]); throw new Error('rollback'); })();
      } catch { /* expected */ }
      expect((await vectorIndex(sqliteSearch(db), dim))!.size).toBe(3049);
      // Rebuilt from the tables (as after reopening), a vector without its chunk row is skipped.
      db.prepare(`INSERT INTO vec_${dim} (rowid, dataset_id, embedding) VALUES (?, 'ds', ?)`).run(999_999n, Buffer.from(q.buffer, q.byteOffset, q.byteLength));
      forgetVectorIndexes(sqliteSearch(db));
      expect((await vectorIndex(sqliteSearch(db), dim))!.size).toBe(3049);
      // Reloaded once most rows are gone, the vectors' memory is sized for the rows left (a
      // WebAssembly memory never shrinks: the reload starts a new one).
      const ix4 = (await vectorIndex(sqliteSearch(db), dim))!;
      const rowsOf = (x: unknown) => (x as { vecs: Float32Array }).vecs.length / dim;
      expect(rowsOf(ix4)).toBeGreaterThanOrEqual(3049);
      const gone = db.prepare("SELECT rowid FROM chunk WHERE dataset_id = 'ds' LIMIT 2900").pluck().all() as number[];
      db.transaction(() => removeChunkRows(db, gone))();
      await ix4.reload();
      expect(ix4.size).toBe(149);
      expect(rowsOf(ix4)).toBe(149); // exactly the rows left (at least 64 slots: a dataset's index may be small)
      expect(ix4.search(q, 1, { datasets: ['ds2'] })[0]!.score).toBeCloseTo(1, 5);
    } finally {
      Object.assign(vectorSearchOptions, saved);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.each([false, true])('Hamming kernel (TypeScript fallback: %s) counts differing bits', (js) => {
    const a = new CodeStore(100, { js });
    a.reserve(3);
    const mean = new Float32Array(100);
    const vs = Float32Array.from({ length: 300 }, (_, i) => Math.sin(i * 1.7));
    for (let s = 0; s < 3; s++) a.set(s, vs, s * 100, 100, mean);
    const q = Float32Array.from({ length: 100 }, (_, i) => Math.cos(i));
    const d = [...a.distances(q, mean, 3)];
    const bits = (o: number) => Array.from({ length: 100 }, (_, i) => (vs[o + i]! > 0 ? 1 : 0));
    const qb = Array.from({ length: 100 }, (_, i) => (q[i]! > 0 ? 1 : 0));
    const want = [0, 1, 2].map((s) => bits(s * 100).reduce((n: number, b, i) => n + (b !== qb[i] ? 1 : 0), 0));
    expect(d).toEqual(want);
    // select(): only searchable slots, nearest first by cut-off.
    for (let s = 0; s < 3; s++) a.setOk(s, s !== 1);
    const best = want[0]! <= want[2]! ? 0 : 2;
    expect([...a.select(q, mean, 3, 1)]).toContain(best);
    expect([...a.select(q, mean, 3, 3)].sort()).toEqual([0, 2]);
    a.reserve(5000);
    expect([...a.select(q, mean, 3, 3)].sort()).toEqual([0, 2]);
  });
});

test.each([64, 192, 256, 320])('Hamming kernel, %i bits: the WebAssembly scan (scan4 at 256) and collect8 give the fallback\'s distances and selection', (bits) => {
  // Not a multiple of 8: the SIMD collect's last slots go one by one.
  const n = 2003;
  const [w, j] = [new CodeStore(bits), new CodeStore(bits, { js: true })];
  const mean = new Float32Array(bits);
  let s = bits;
  const v = Float32Array.from({ length: n * bits }, () => (s = (s * 16807) % 2147483647) / 2147483647 - 0.5);
  for (const c of [w, j]) {
    c.reserve(n);
    for (let i = 0; i < n; i++) {
      c.set(i, v, i * bits, bits, mean);
      c.setOk(i, i % 7 !== 0);
    }
  }
  const q = Float32Array.from({ length: bits }, (_, i) => Math.sin(i * 0.37));
  const dw = [...w.distances(q, mean, n)];
  expect(dw).toEqual([...j.distances(q, mean, n)]);
  // A distance is the count of differing sign bits.
  expect(dw[5]).toBe(Array.from({ length: bits }, (_, d) => ((v[5 * bits + d]! > 0) !== (q[d]! > 0) ? 1 : 0) as number).reduce((a, b) => a + b, 0));
  for (const want of [1, 50, 700]) {
    const sel = [...w.select(q, mean, n, want)];
    expect(sel).toEqual([...j.select(q, mean, n, want)]);
    expect(sel.length).toBeGreaterThanOrEqual(want);
    expect(sel.every((i) => i % 7 !== 0)).toBe(true);
  }
});

describe('term_similarity computed in JS', () => {
  test('equals FTS5 bm25() with the column weights, for titles, keywords and questions', async () => {
    const { Client } = await import('../../src/index.js');
    const { textQuery, textScores, textScoresJs } = await import('../../src/search/fulltext.js');
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-js25-'));
    const { startEmbeddingServer } = await import('../support/embedding-server.js');
    const srv = await startEmbeddingServer(16);
    const c = new Client({ path: join(dir, 'kb.db'), models: [{ type: 'embedding', name: 'h', factory: 'OpenAI-API-Compatible', base_url: srv.url }] });
    try {
      const ds = await c.createDataset({ name: 'kb', embedding_model: 'h@OpenAI-API-Compatible' });
      const docs = await ds.uploadDocuments([{ display_name: 'Wing flutter notes.txt', blob: new Uint8Array([1]) }, { display_name: 'heat.md', blob: new Uint8Array([1]) }]);
      await docs[0]!.addChunk({ content: 'flutter of a swept wing at transonic speed; wing flutter again', important_keywords: ['aeroelastic', 'flutter'] });
      await docs[0]!.addChunk({ content: 'panel flutter', questions: ['what causes panel flutter?'] });
      await docs[1]!.addChunk({ content: 'heat transfer to a flat plate, with wings' });
      const db = (c as unknown as { api: { engine: { db: import('../../src/store/db.js').Db } } }).api.engine.db;
      for (const question of ['wing flutter', 'aeroelastic flutter heat', 'panel']) {
        const rd = (await import('../../src/store/sqlite/search.js')).sqliteSearch(db);
        const q = textQuery(rd, question);
        const fts = textScores(rd, q, [1, 2, 3]);
        const js = textScoresJs(rd, q, [1, 2, 3]);
        expect([...js.keys()].sort()).toEqual([...fts.keys()].sort());
        for (const [k, v] of fts) expect(js.get(k)).toBeCloseTo(v, 12);
      }
    } finally {
      await c.close();
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

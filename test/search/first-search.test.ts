/**
 * The first searches of a store opened anew: the term index is built a slice per search while
 * FTS5 answers (the same rankings, writes of another connection during the build included), and
 * the vector index reads vec0's shadow tables (the same rows in the same order as a scan of the
 * virtual table, or the scan itself when the layout is not the known one).
 */
import { describe, expect } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test, enc } from '../helpers.js';
import { Client, type DataSet } from '../../src/index.js';
import { builtTermIndex, termIndexOptions, vectorIndex, vectorSearchOptions, forgetVectorIndexes } from '../../src/search/index.js';
import { floatsOf, readVec0Shadow } from '../../src/store/sqlite/vec0-shadow.js';
import { sqliteSearch, type Db } from '../../src/store/index.js';

const dbOf = (c: Client) => (c as unknown as { api: { engine: { db: Db } } }).api.engine.db;

/** `n` lines of seeded words (a few hundred distinct), one chunk each (`chunk_method: 'naive'`, a backtick newline delimiter: RAGFlow's custom split, one chunk a line). */
function lines(n: number, seed: number): string {
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const syl = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'ri', 'po', 've', 'du'];
  const word = () => syl[Math.floor(rnd() * 10)]! + syl[Math.floor(rnd() * 10)]! + syl[Math.floor(rnd() * 10)]!;
  return Array.from({ length: n }, () => Array.from({ length: 4 + Math.floor(rnd() * 12) }, word).join(' ')).join('\n');
}

const PARSER = { chunk_method: 'naive' as const, parser_config: { chunk_token_num: 16, delimiter: '`\n`' } };

/** Two datasets whose documents were parsed in turns (their vec0 partitions' chunks interleave). */
async function twoDatasets(c: Client, docs: number, perDoc: number): Promise<[DataSet, DataSet]> {
  const a = await c.createDataset({ name: 'a', ...PARSER });
  const b = await c.createDataset({ name: 'b', ...PARSER });
  for (let i = 0; i < docs; i++) {
    for (const [k, ds] of [a, b].entries()) {
      const [d] = await ds.uploadDocuments([{ display_name: `d${k}-${i}.txt`, blob: enc(lines(perDoc, 1 + i * 2 + k)) }]);
      await ds.parseDocuments([d!.id], { pollMs: 10 });
    }
  }
  return [a, b];
}

const QUESTIONS = ['kalomi nesuta', 'ripove dukalo mine', 'sutari', 'povedu kaka lolo', 'mimi nene susu tata', 'dudu'];

describe('the term index, built a slice per search', () => {
  test('FTS5 answers until it is built; every answer is the same as with it built, writes meanwhile included', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const writer = new Client({ path });
    const [a, b] = await twoDatasets(writer, 3, 400); // 2,400 chunks: five slices of 512
    const ids = [a.id, b.id];
    const ask = (c: Client, question: string, w: number) =>
      c.retrieveWithTotals({ dataset_ids: ids, question, vector_similarity_weight: w, similarity_threshold: 0, page_size: 40 });

    // What every answer must be: the term index switched off (FTS5 answers all).
    const expected = async () => {
      termIndexOptions.enabled = false;
      try {
        return await Promise.all(QUESTIONS.flatMap((q) => [ask(writer, q, 0), ask(writer, q, 0.3)]));
      } finally {
        termIndexOptions.enabled = true;
      }
    };

    const step = termIndexOptions.buildStepMs;
    termIndexOptions.buildStepMs = 0; // one slice per search
    const reader = new Client({ path });
    try {
      const rdb = sqliteSearch(dbOf(reader));
      let before = await expected();
      expect(await ask(reader, QUESTIONS[0]!, 0)).toEqual(before[0]);
      expect(await builtTermIndex(rdb)).toBeUndefined(); // one slice of five: still FTS5's turn

      // Another connection writes while the build is under way: a document gone, chunks added, one changed.
      const [doc] = await a.listDocuments({ page_size: 1, orderby: 'create_time', desc: false });
      await a.deleteDocuments({ ids: [doc!.id] });
      const [docB] = await b.listDocuments({ page_size: 1 });
      await docB!.addChunk({ content: 'kalomi nesuta added while the index was half built' });
      const [chunk] = await docB!.listChunks({ page_size: 1 });
      await chunk!.update({ content: 'ripove dukalo mine changed while the index was half built' });
      before = await expected();

      let searches = 1;
      for (; !(await builtTermIndex(rdb)) && searches < 40; searches++) expect(await ask(reader, QUESTIONS[searches % QUESTIONS.length]!, 0.3)).toEqual(before[(searches % QUESTIONS.length) * 2 + 1]);
      expect(await builtTermIndex(rdb)).toBeDefined();
      expect(searches).toBeGreaterThanOrEqual(4);
      expect(searches).toBeLessThanOrEqual(6);
      expect((await builtTermIndex(rdb))!.size).toBe(dbOf(writer).prepare('SELECT COUNT(*) FROM chunk').pluck().get());
      // Built: the same answers, now from the index.
      expect(await Promise.all(QUESTIONS.flatMap((q) => [ask(reader, q, 0), ask(reader, q, 0.3)]))).toEqual(before);
    } finally {
      termIndexOptions.buildStepMs = step;
      await reader.close();
      await writer.close();
    }
  }, 180_000);
});

describe("vec0's shadow tables", () => {
  test('give the rows a scan gives, in its order, and the same vector index; a layout not known falls back', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const c = new Client({ path });
    try {
      const [a] = await twoDatasets(c, 3, 150); // ~730 vectors over two partitions, their chunks interleaved
      const [doc] = await a.listDocuments({ page_size: 1 });
      const [first, second] = await doc!.listChunks({ page_size: 2 });
      await doc!.deleteChunks({ ids: [first!.id] }); // a cleared validity bit
      await second!.update({ content: 'rewritten kalomi, a new vector' });
      const db = dbOf(c);
      const table = db.prepare('SELECT table_name FROM vec_index').pluck().get() as string;
      const dim = db.prepare('SELECT dim FROM vec_index').pluck().get() as number;

      const scan = (db.prepare(`SELECT rowid, dataset_id, embedding FROM ${table}`).raw().all() as [number, string, Buffer][]).map(([r, d, v]) => [Number(r), d, Buffer.from(v).toString('hex')]);
      const shadow: [number, string, string][] = [];
      expect(db.transaction(() => readVec0Shadow(db, table, dim, (r, d, v) => shadow.push([r, d, Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')])))()).toBe(true);
      expect(scan.length).toBeGreaterThan(600); // more than one vec0 chunk (256 slots) per partition
      expect(shadow).toEqual(scan);
      expect(new Set(shadow.map((r) => r[1])).size).toBe(2);

      // The index built either way answers alike (hits, order, scores), with the prefilter on.
      const q = new Float32Array(dim).map((_, i) => Math.sin(i + 1));
      const search = async () => {
        forgetVectorIndexes(sqliteSearch(db));
        return (await vectorIndex(sqliteSearch(db), dim))!.search(q, 50, { datasets: [a.id] }, { exact: false });
      };
      const saved = { ...vectorSearchOptions };
      Object.assign(vectorSearchOptions, { exactBelow: 100, minCandidates: 60, oversample: 2 });
      try {
        const fast = await search();
        vectorSearchOptions.vec0Shadow = false;
        expect(await search()).toEqual(fast);
        expect(fast.length).toBe(50);
      } finally {
        Object.assign(vectorSearchOptions, saved);
        forgetVectorIndexes(sqliteSearch(db));
      }

      // Another layout (here: a table that says another sqlite-vec created it): nothing read, false.
      // (Without the extension loaded, its shadow tables are plain tables that may be changed.)
      const raw = new Database(path);
      raw.prepare(`UPDATE ${table}_info SET value = 2 WHERE key = 'CREATE_VERSION_MINOR'`).run();
      const visited: number[] = [];
      expect(readVec0Shadow(raw, table, dim, (r) => visited.push(r))).toBe(false);
      expect(readVec0Shadow(raw, 'no such; table', dim, (r) => visited.push(r))).toBe(false);
      expect(visited).toEqual([]);
      raw.close();
      // …and the index still loads, by the scan.
      forgetVectorIndexes(sqliteSearch(db));
      expect((await vectorIndex(sqliteSearch(db), dim))!.search(q, 5, { datasets: [a.id] }, { exact: true }).length).toBe(5);

      // Blobs as floats: a view when aligned, a copy when not, nothing when the bytes are not whole floats.
      const bytes = new Uint8Array(new Float32Array([1.5, -2, 3]).buffer);
      const odd = new Uint8Array(13);
      odd.set(bytes, 1);
      expect([...floatsOf(bytes)]).toEqual([1.5, -2, 3]);
      expect(floatsOf(bytes).buffer).toBe(bytes.buffer);
      expect([...floatsOf(odd.subarray(1))]).toEqual([1.5, -2, 3]);
      expect(floatsOf(bytes.subarray(0, 7)).length).toBe(0);
    } finally {
      await c.close();
    }
  }, 180_000);
});

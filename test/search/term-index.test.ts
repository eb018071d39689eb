/**
 * The in-memory term index (src/search/term-index.ts) against FTS5 itself on a generated corpus:
 * document frequencies, row lengths, the text side's top rows and cross-scores on both of its
 * paths, RM3's re-scoring, and whole hybrid retrievals with the index switched on and off must be
 * identical — the same ids in the same order with the same numbers, not merely close.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type DataSet } from '../../src/index.js';
import {
  termIndex, termIndexOptions, textQuery, textSide, rowTerms, scoreRows, expandQuery, expandWith, ALL_MATCHES_BELOW,
} from '../../src/search/index.js';
import { sqliteSearch, type Db } from '../../src/store/index.js';
import { test } from '../helpers.js';

const dbOf = (c: Client) => (c as unknown as { api: { engine: { db: Db } } }).api.engine.db;

/** Seeded words: a Zipf-like vocabulary of made-up words, a few English ones, and words FTS5's tokenizer folds or splits. */
function corpus(lines: number, seed = 11): { lines: string[]; vocab: string[] } {
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const syl = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'ri', 'po', 've', 'du', 'xo', 'ba'];
  const made = Array.from({ length: 400 }, (_, i) => syl[i % 12]! + syl[Math.floor(i / 12) % 12]! + syl[(i * 7) % 12]! + (i % 5 === 0 ? 'ing' : ''));
  const odd = ['café', 'naïve', 'søren', 'Łódź', 'straße', 'λόγος', 'данные', '東京大学', 'ǅemal', "don't", 'e-mail', 'o’clock',
    'x²', 'ﬁne', 'cafe\u0301', 'हिन्दी', 'العربية', 'soren', 'lodz', '2024', 'COVID-19', 'naive'];
  const english = ['wing', 'wings', 'flow', 'flows', 'pressure', 'heat', 'boundary', 'layer', 'the', 'of', 'and', 'is'];
  const vocab = [...made, ...odd, ...english];
  const pick = () => {
    const r = rnd();
    if (r < 0.05) return odd[Math.floor(rnd() * odd.length)]!;
    if (r < 0.25) return english[Math.floor(rnd() * english.length)]!;
    // Zipf over the made-up words: the first few are in most lines.
    return made[Math.min(made.length - 1, Math.floor(Math.exp(rnd() * Math.log(made.length + 1)) - 1))]!;
  };
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const n = 5 + Math.floor(rnd() * 40);
    out.push(Array.from({ length: n }, pick).join(' '));
  }
  // Identical lines: ties at every cut-off.
  for (let i = 0; i < 60; i++) out.push('kalo mimi nene susu tata duplicate line');
  return { lines: out, vocab };
}

let dir: string;
let client: Client;
let ds: DataSet;
let db: Db;
let queries: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-termix-'));
  client = new Client({ path: join(dir, 'kb.db') });
  ds = await client.createDataset({ name: 'kb', chunk_method: 'naive', parser_config: { chunk_token_num: 64, delimiter: '`\n`' } });
  const { lines, vocab } = corpus(2400);
  // Four documents (titles are indexed too), one line per chunk.
  const docs = await ds.uploadDocuments([0, 1, 2, 3].map((k) => ({
    display_name: `naïve notes ${k} kalo.txt`, blob: new TextEncoder().encode(lines.filter((_, i) => i % 4 === k).join('\n')),
  })));
  await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 20 });
  // Chunks with keywords and questions (weighted columns).
  for (let i = 0; i < 20; i++) {
    await docs[i % 4]!.addChunk({ content: `${vocab[i]} ${vocab[i + 50]} tagged chunk ${i}`, important_keywords: [vocab[i + 3]!, 'søren'], questions: [`what is ${vocab[i + 7]}?`] });
  }
  // A switched-off document: its chunks are rows of FTS5 (statistics) but never candidates.
  await docs[3]!.update({ enabled: 0 });
  db = dbOf(client);
  let s = 5;
  const rnd = () => (s = (s * 48271) % 2147483647) / 2147483647;
  queries = Array.from({ length: 160 }, (_, i) => {
    const n = 1 + Math.floor(rnd() * 6);
    if (i % 10 === 0) return vocab.slice(0, n).join(' '); // the commonest words: many matches
    return Array.from({ length: n }, () => vocab[Math.floor(rnd() * vocab.length)]!).join(' ');
  });
  queries.push('duplicate line', 'søren soren', 'cafe café', 'Lodz łódź', 'straße strasse', 'unknownword', '東京', 'हिन्दी');
}, 180_000);

afterAll(async () => {
  termIndexOptions.enabled = true;
  await client?.close();
  await rm(dir, { recursive: true, force: true });
});

function withoutIndex<T>(f: () => T): T {
  termIndexOptions.enabled = false;
  try {
    return f();
  } finally {
    termIndexOptions.enabled = true;
  }
}

describe('TermIndex', () => {
  test('holds FTS5\'s rows: every token\'s document frequency and every row\'s length', async () => {
    const tix = (await termIndex(sqliteSearch(db)))!;
    const vocab = db.prepare('SELECT term, doc FROM chunk_fts_terms').raw().all() as Array<[string, number]>;
    expect(vocab.length).toBeGreaterThan(150);
    for (const [term, doc] of vocab) expect([term, tix.dfOf(term)]).toEqual([term, doc]);
    expect(tix.size).toBe(db.prepare('SELECT COUNT(*) FROM chunk').pluck().get());
    const sizes = db.prepare('SELECT id, sz FROM chunk_fts_docsize').raw().all() as Array<[number, Buffer]>;
    for (const [rid, sz] of sizes) {
      let len = 0;
      for (let p = 0; p < sz.length;) {
        let v = 0;
        for (;;) {
          const b = sz[p++]!;
          v = v * 128 + (b & 0x7f);
          if (!(b & 0x80)) break;
        }
        len += v;
      }
      expect([rid, tix.rowLength(rid)]).toEqual([rid, len]);
    }
  });

  test('textSide: the same top rows, order and numbers as FTS5, on both of its paths, for any k and filter', async () => {
    const tix = (await termIndex(sqliteSearch(db)))!;
    let few = 0;
    let many = 0;
    for (const q of queries) {
      const a = textQuery(sqliteSearch(db), q);
      const b = textQuery(sqliteSearch(db), q, { index: tix });
      expect({ ...b, index: undefined, phrases: undefined }).toEqual({ ...a, rows: b.rows });
      if (!b.phrases) continue;
      if (b.dfSum <= ALL_MATCHES_BELOW) few++;
      else many++;
      for (const k of [1, 3, 10, 90]) {
        for (const accept of [() => true, (r: number) => r % 3 !== 0]) {
          const x = textSide(sqliteSearch(db), a, k, accept);
          const y = textSide(sqliteSearch(db), b, k, accept);
          expect(y.top).toEqual(x.top);
          const rids = [...x.top.map(([r]) => r), 1, 2, 3, 500, 1000, 1500, 2000, 2400];
          expect(y.scoresOf(rids)).toEqual(x.scoresOf(rids));
        }
      }
    }
    // Both of FTS5's paths were compared.
    expect(few).toBeGreaterThan(20);
    expect(many).toBeGreaterThan(5);
  });

  test('RM3: the expansion and the re-scored rows are those of the re-analysed stored text', async () => {
    const tix = (await termIndex(sqliteSearch(db)))!;
    for (const q of queries.slice(0, 60)) {
      const tq = textQuery(sqliteSearch(db), q, { index: tix });
      const top = textSide(sqliteSearch(db), tq, 30, () => true).top.map(([r]) => r);
      if (top.length < 10) continue;
      const fb = top.slice(0, 10);
      const viaSql = rowTerms(sqliteSearch(db), fb);
      expect(tix.rowTerms(fb)).toEqual(viaSql);
      const feedback = fb.map((r, i): [string[][], number] => [viaSql.get(r)!, 1 / (i + 1)]);
      const xq = expandQuery(sqliteSearch(db), tq, feedback, { terms: 10, origWeight: 0.7 });
      const old = withoutIndex(() => expandQuery(sqliteSearch(db), textQuery(sqliteSearch(db), q), feedback, { terms: 10, origWeight: 0.7 }));
      expect(xq.weights).toEqual(old.weights);
      expect(xq.upper).toBe(old.upper);
      // The relevance model read from the forward rows: the same expansion, number for number.
      const fromIndex = expandWith(sqliteSearch(db), tq, tix.relevanceModel(fb.map((r, i) => [r, 1 / (i + 1)]), 10)!, { terms: 10, origWeight: 0.7 });
      expect([...fromIndex.weights!]).toEqual([...xq.weights!]);
      expect(fromIndex.idf).toEqual(xq.idf);
      expect(fromIndex.upper).toBe(xq.upper);
      expect(tix.scoreRows(xq, top)).toEqual(scoreRows(xq, rowTerms(sqliteSearch(db), top)));
      for (const r of top.slice(0, 5)) expect(tix.contentTerms(r)).toEqual(viaSql.get(r)?.[1] ?? rowTerms(sqliteSearch(db), [r]).get(r)![1]);
    }
  });

  test('hybrid retrieval ranks the same with the index as with FTS5 (ids, order, every score, totals, aggregates)', async () => {
    const variants = [
      {},
      { page_size: 10, top_k: 5 },
      { vector_similarity_weight: 0, similarity_threshold: 0 },
      { page: 2, page_size: 30, similarity_threshold: 0 },
      { vector_similarity_weight: 0.7, page_size: 100, similarity_threshold: 0 },
    ];
    let compared = 0;
    await termIndex(sqliteSearch(db)); // built: a search of a store whose index is not built yet asks FTS5 (test/search/first-search.test.ts)
    for (const q of queries) {
      for (const v of variants) {
        const params = { dataset_ids: [ds.id], question: q, ...v };
        const on = await client.retrieveWithTotals(params);
        termIndexOptions.enabled = false;
        let off;
        try {
          off = await client.retrieveWithTotals(params);
        } finally {
          termIndexOptions.enabled = true;
        }
        expect(on).toEqual(off);
        compared += on.chunks.length;
      }
    }
    expect(compared).toBeGreaterThan(5000);
  }, 120_000);
  test('a renamed document is found by its new name on both paths, and both rank alike (also after a restart)', async () => {
    const doc = (await ds.listDocuments({ page_size: 10 })).find((d) => d.name.startsWith('naïve notes 1'))!;
    const ask = async (c: Client) =>
      c.retrieveWithTotals({ dataset_ids: [ds.id], question: 'zorblatt quixotic', vector_similarity_weight: 0, page_size: 50 });
    const matched = (r: Awaited<ReturnType<typeof ask>>) => r.chunks.filter((c) => (c.term_similarity ?? 0) > 0);
    // Warm the in-memory index first: it must follow the rename, not only be built after it.
    await termIndex(sqliteSearch(db));
    expect(matched(await ask(client))).toEqual([]);
    await doc.update({ name: 'zorblatt quixotic handbook.txt' });
    const on = await ask(client);
    expect(matched(on).length).toBe(50);
    expect(new Set(matched(on).map((c) => c.document_id))).toEqual(new Set([doc.id]));
    termIndexOptions.enabled = false;
    try {
      expect(await ask(client)).toEqual(on);
    } finally {
      termIndexOptions.enabled = true;
    }
    // FTS5 itself holds the new title: a second Client (its index built from the file) agrees.
    const other = new Client({ path: join(dir, 'kb.db') });
    try {
      expect(await ask(other)).toEqual(on); // its first search: FTS5
      await termIndex(sqliteSearch(dbOf(other)));
      expect(await ask(other)).toEqual(on); // its own index
    } finally {
      await other.close();
    }
    const titled = db.prepare("SELECT COUNT(*) FROM chunk_fts WHERE chunk_fts MATCH 'title:zorblatt'").pluck().get();
    expect(titled).toBe(db.prepare('SELECT COUNT(*) FROM chunk WHERE document_id = ?').pluck().get(doc.id));
  }, 60_000);
});

/**
 * A dataset's term index (`new TermIndex(reader, dataset)`, src/search/term-index.ts), on SQLite
 * and on PostgreSQL: it holds that dataset's chunks only, and — given the store-wide idf and
 * average length, as a search over per-dataset indexes will hand it — its top rows, every match,
 * cross-scores, relevance model and forward rows are exactly the store-wide index's over those
 * chunks. Writes made by another node (into it and into other datasets) are applied by its sync,
 * and an index dropped and loaded again reads them too. Several datasets' indexes read as one
 * (DatasetTerms: FTS5's store-wide document frequencies) give the text side of a search exactly
 * what the store-wide index gives it over those datasets.
 */
import { describe, expect, test } from 'vitest';
import { expandWith, textQuery, textSide, type TextQuery } from '../../src/search/index.js';
import { TermIndex, TERM_SLICES } from '../../src/search/term-index.js';
import { DatasetTerms } from '../../src/search/dataset-terms.js';
import type { SearchReader } from '../../src/store/index.js';
import { bothStores, openApi } from '../support/both-stores.js';
import { addChunks } from '../support/seeded-chunks.js';

const { stores, server, reason } = await bothStores('dstermix');

const open = openApi;

const QUESTIONS = ['wing flow over a boundary layer panel 7', 'vortex drag 11 cylinder', 'nozzle', 'shock heat pressure plate flutter 3 21', 'absentword'];

/** Every answer of `part` equals the store-wide index's over `dataset`'s chunks (both synced first). */
async function sameAsStoreWide(reader: SearchReader, full: TermIndex, part: TermIndex, dataset: string): Promise<number> {
  await reader.syncFullText?.('chunk_fts');
  await full.sync();
  await part.sync();
  const head = await reader.feed('chunks').head();
  const mine = (await reader.termSlice(head, 0, 1_000_000, dataset)).map((r) => r[0]);
  const held = new Set(mine);
  expect(part.size).toBe(mine.length);
  for (const question of QUESTIONS) {
    const q = textQuery(reader, question, { index: full });
    expect(q.phrases).toBeDefined();
    // The store-wide statistics: what FTS5 (or the whole store's index) gives every search.
    const idf = Float64Array.from(q.phrases!, (t) => full.ftsIdf(q.rows!, full.docFreq(t)));
    const phrases = Int32Array.from(q.idf.keys(), (t) => part.queryToken(t));
    for (const k of [1, 7, 60]) {
      expect(part.top(phrases, idf, q.avgdl, k, () => true)).toEqual(full.top(q.phrases!, idf, q.avgdl, k, (r) => held.has(r)));
    }
    const every = full.all(q.phrases!, idf, q.avgdl);
    const keep = [...every.rowids.keys()].filter((i) => held.has(every.rowids[i]!));
    const got = part.all(phrases, idf, q.avgdl);
    expect([...got.rowids]).toEqual(keep.map((i) => every.rowids[i]!));
    expect([...got.scores]).toEqual(keep.map((i) => every.scores[i]!));
    expect(part.scoreRows(q, mine)).toEqual(full.scoreRows(q, mine));
    const feedback = full.top(q.phrases!, idf, q.avgdl, 10, (r) => held.has(r)).map((h): [number, number] => [h.rowid, h.score]);
    expect(part.relevanceModel(feedback, 10)).toEqual(full.relevanceModel(feedback, 10));
  }
  expect(part.rowTerms(mine)).toEqual(full.rowTerms(mine));
  for (const r of mine) {
    expect(part.documentOf(r)).toBe(full.documentOf(r));
    expect(part.contentTerms(r)).toEqual(full.contentTerms(r));
    expect(part.rowLength(r)).toBe(full.rowLength(r));
  }
  // Nothing of another dataset.
  const others = (await reader.termSlice(head, 0, 1_000_000)).map((r) => r[0]).filter((r) => !held.has(r));
  expect(others.length).toBeGreaterThan(0);
  expect(others.filter((r) => part.documentOf(r) !== undefined)).toEqual([]);
  return mine.length;
}

/** The numbers of a query (not the index it was made with). */
const numbers = (q: TextQuery) => ({ terms: q.terms, match: q.match, upper: q.upper, dfSum: q.dfSum, idf: q.idf, avgdl: q.avgdl, rows: q.rows, indexed: !!q.phrases });

/** The text side of a search over `datasets` through `view` equals the store-wide index's, number for number. */
async function viewSameAsStoreWide(reader: SearchReader, full: TermIndex, view: DatasetTerms, datasets: string[]): Promise<void> {
  await reader.syncFullText?.('chunk_fts');
  await full.sync();
  for (const p of view.parts) await p.sync();
  const head = await reader.feed('chunks').head();
  const mine: number[] = [];
  for (const d of datasets) for (const r of await reader.termSlice(head, 0, 1_000_000, d)) mine.push(r[0]);
  mine.sort((x, y) => x - y);
  const held = new Set(mine);
  const accept = (r: number) => held.has(r);
  for (const question of QUESTIONS) {
    const qf = textQuery(reader, question, { index: full });
    const qv = textQuery(reader, question, { index: view });
    expect(numbers(qv)).toEqual(numbers(qf));
    if (!qf.phrases) continue;
    const idf = Float64Array.from(qf.phrases, (t) => full.ftsIdf(qf.rows!, full.docFreq(t)));
    for (const k of [1, 7, 60]) {
      expect(view.top(qv.phrases!, idf, qv.avgdl, k, () => true)).toEqual(full.top(qf.phrases, idf, qf.avgdl, k, accept));
      const sf = textSide(reader, qf, k, accept);
      const sv = textSide(reader, qv, k, accept);
      expect(sv.top).toEqual(sf.top);
      expect(sv.scoresOf(mine)).toEqual(sf.scoresOf(mine));
    }
    const every = full.all(qf.phrases, idf, qf.avgdl);
    const keep = [...every.rowids.keys()].filter((i) => held.has(every.rowids[i]!));
    const got = view.all(qv.phrases!, idf, qv.avgdl);
    expect([...got.rowids]).toEqual(keep.map((i) => every.rowids[i]!));
    expect([...got.scores]).toEqual(keep.map((i) => every.scores[i]!));
    // RM3: the relevance model of the top rows, the expanded query, its re-scoring.
    const feedback = textSide(reader, qf, 10, accept).top;
    const bf = full.relevanceModel(feedback, 10);
    const bv = view.relevanceModel(feedback, 10);
    expect(bv).toEqual(bf);
    if (!bf) continue;
    const xf = expandWith(reader, qf, bf, { terms: 10, origWeight: 0.5 });
    const xv = expandWith(reader, qv, bv!, { terms: 10, origWeight: 0.5 });
    expect(numbers(xv)).toEqual(numbers(xf));
    expect([...view.scoreRows(xv, mine)]).toEqual([...full.scoreRows(xf, mine)]);
  }
  for (const r of mine) {
    expect(view.documentOf(r)).toBe(full.documentOf(r));
    expect(view.contentTerms(r)).toEqual(full.contentTerms(r));
  }
}


describe.each(stores)("a dataset's term index (%s)", (kind, where) => {
  const skip = kind === 'PostgreSQL' && !server;
  test.skipIf(skip)(`holds its dataset's chunks, answers as the store-wide index over them, and follows other nodes' writes${skip ? ` (${reason})` : ''}`, async () => {
    const w = (await where())!;
    const writer = await open(w);
    const node = await open(w);
    const slices = { ...TERM_SLICES };
    Object.assign(TERM_SLICES, { step: 31, bulk: 97 }); // many slices
    try {
      const ids: string[] = [];
      for (const name of ['a', 'b', 'c']) {
        const ds = (await writer.call('datasets.create', { name })) as { id: string };
        await addChunks(writer, ds.id, `${name}0.txt`, 150 + 40 * ids.length, ids.length + 1);
        ids.push(ds.id);
      }
      const [a, b] = ids as [string, string, string];
      const reader = node.engine.store.search;
      const full = new TermIndex(reader);
      await full.advance(Infinity);
      const partA = new TermIndex(reader, a);
      const partB = new TermIndex(reader, b);
      // A's built in steps (a search's), b's at once.
      while (!(await partA.advance(0)));
      await partB.advance(Infinity);
      expect(await sameAsStoreWide(reader, full, partA, a)).toBe(150);
      expect(await sameAsStoreWide(reader, full, partB, b)).toBe(190);
      await viewSameAsStoreWide(reader, full, new DatasetTerms(reader, [partA]), [a]);
      await viewSameAsStoreWide(reader, full, new DatasetTerms(reader, [partB, partA]), [a, b]);

      // Another node writes into a (a document added, one deleted) and into b and c.
      await addChunks(writer, a, 'a1.txt', 45, 77);
      await addChunks(writer, b, 'b1.txt', 20, 78);
      await addChunks(writer, ids[2]!, 'c1.txt', 20, 79);
      const head = await reader.feed('chunks').head();
      const a0 = (await reader.termSlice(head, 0, 1, a))[0]![6];
      await writer.call('documents.delete', { dataset_id: a, ids: [a0] });
      expect(await sameAsStoreWide(reader, full, partA, a)).toBe(45);
      expect(await sameAsStoreWide(reader, full, partB, b)).toBe(210);
      await viewSameAsStoreWide(reader, full, new DatasetTerms(reader, [partA, partB]), [a, b]);

      // Dropped (stops following the feed), a write meanwhile, loaded again: the write is read.
      partA.close();
      await addChunks(writer, a, 'a2.txt', 30, 80);
      const again = new TermIndex(reader, a);
      await again.advance(Infinity);
      expect(await sameAsStoreWide(reader, full, again, a)).toBe(75);
      // The term ids differ from the store-wide index's (its own dictionary): answers do not.
      expect(again.queryToken('wing')).not.toBe(-1);
      again.close();
      partB.close();
      full.close();
    } finally {
      Object.assign(TERM_SLICES, slices);
      await node.close();
      await writer.close();
    }
  }, 120_000);
});

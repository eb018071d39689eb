import { describe, expect, test } from 'vitest';
import type { FeedAt, SearchReader, Store, VectorRow } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore, inChild } from './harness.js';
import { chunkOf, DIM, seedDataset, seedDocuments, seedTenant, vec } from './seed.js';
import { ftsTerms } from '../../../src/text/index.js';

/** A follower as search's indexes are: a full load, then the feed's changes applied. */
class Follower {
  at: FeedAt = { position: null, live: 0 };
  readonly rows = new Map<number, VectorRow>();
  reloads = 0;
  constructor(private readonly r: SearchReader) {}
  get position() {
    return this.at.position;
  }
  async load(): Promise<void> {
    this.rows.clear();
    this.reloads++;
    const head = await this.r.loadVectors('chunks', DIM, {
      size: () => undefined,
      put: (rowid, partition, searchable, vector, tags) => this.rows.set(rowid, { partition, searchable, vector: Float32Array.from(vector), tags: [...tags] }),
    });
    this.at = { position: head, live: this.rows.size };
  }
  /** Applies what changed; the kind of catch-up it was. */
  async sync(): Promise<string> {
    const c = await this.r.feed('chunks').changesSince(this.at);
    if (c.kind === 'reload') await this.load();
    if (c.kind !== 'apply') return c.kind;
    for (const [rowid, row] of await this.r.vectorRows('chunks', DIM, c.dirty)) {
      if (row) this.rows.set(rowid, { ...row, vector: Float32Array.from(row.vector) });
      else this.rows.delete(rowid);
    }
    this.at = { position: c.position, live: this.rows.size };
    return 'apply';
  }
}

async function setup(s: Store) {
  const who = await seedTenant(s);
  const ds = await seedDataset(s, who, 'kb');
  const [d, e] = await seedDocuments(s, who, ds, ['d.txt', 'e.txt']);
  return { who, ds, d: d!, e: e! };
}

export function searchContract(f: StoreFactory): void {
  describe('SearchReader', () => {
    const { s, extra } = freshStore(f);

    test('the chunk feed: a load, then inserts, rewrites, switches, re-titles and deletes as changes; nothing when nothing changed', async () => {
      const { ds, d, e } = await setup(s());
      const r = s().search;
      expect(await r.feed('chunks').changesSince({ position: null, live: 0 })).toEqual({ kind: 'reload' });
      const x = new Follower(r);
      r.feed('chunks').follow(x);
      await x.load();
      expect(x.rows.size).toBe(0);
      expect(await x.sync()).toBe('none');
      const a = (await s().chunks.add(ds.id, chunkOf(d, 'alpha beta', 1)))!;
      const b = (await s().chunks.add(ds.id, chunkOf(e, 'gamma delta', 2)))!;
      expect(await x.sync()).toBe('apply');
      expect([...x.rows.keys()].sort()).toEqual([a.rowid, b.rowid].sort());
      expect(x.rows.get(a.rowid)).toMatchObject({ partition: ds.id, searchable: true });
      expect(await x.sync()).toBe('none');
      // Each kind of change is seen by the next catch-up (its row read again).
      await s().chunks.rewrite({ rowid: a.rowid, id: a.id, document_id: d.id, dataset_id: ds.id }, { ...chunkOf(d, 'alpha rewritten', 3), id: a.id, vector: vec(DIM, 33) });
      let c = await r.feed('chunks').changesSince(x.at);
      expect(c.kind === 'apply' && [...c.dirty]).toEqual([a.rowid]);
      await x.sync();
      expect([...x.rows.get(a.rowid)!.vector]).toEqual([...vec(DIM, 33)]);
      await s().documents.update(e, { changes: { status: '0' }, resetChunks: false });
      c = await r.feed('chunks').changesSince(x.at);
      expect(c.kind === 'apply' && [...c.dirty]).toEqual([b.rowid]);
      await x.sync();
      expect(x.rows.get(b.rowid)!.searchable).toBe(false);
      await s().documents.update(d, { changes: { name: 'renamed.txt' }, resetChunks: false });
      c = await r.feed('chunks').changesSince(x.at);
      expect(c.kind === 'apply' && [...c.dirty]).toEqual([a.rowid]);
      await x.sync();
      await s().chunks.remove(e, [b.rowid]);
      await x.sync();
      expect([...x.rows.keys()]).toEqual([a.rowid]);
      // A rolled-back write (a swap whose second chunk the store refuses) leaves no change behind.
      await s().parse.reset([d.id], ds.tenant_id);
      const bad = { ...chunkOf(d, 'refused', 4), chunk_order: 1, vector: new Float32Array(0) };
      await expect(s().parse.finish([], [{ id: d.id, dataset_id: ds.id, chunks: [{ ...chunkOf(d, 'fine', 5), chunk_order: 0 }, bad], language: 'English', log: [], doneLines: [], failLine: '', seconds: 0, began: 0 }], 1, 1)).rejects.toThrow();
      expect(await x.sync()).toBe('none');
      const y = new Follower(r);
      await y.load();
      expect(y.rows).toEqual(x.rows);
      expect(await y.sync()).toBe('none');
      // head() is where a full read starts; trimming below the threshold changes nothing.
      const head = await r.feed('chunks').head();
      expect(await r.feed('chunks').changesSince({ position: head, live: x.rows.size })).toEqual({ kind: 'none' });
      await r.feed('chunks').trim(head);
      expect(await x.sync()).toBe('none');
      r.feed('chunks').unfollow(x);
    });

    test('row readers: loadVectors (sized first, in a stable order), vectorRows (another dimension, a gone row: undefined), termRows, termSlice', async () => {
      const { ds, d, e } = await setup(s());
      const r = s().search;
      const rows = [];
      for (let i = 0; i < 6; i++) rows.push((await s().chunks.add(ds.id, chunkOf(i % 2 ? e : d, `text number ${i}`, i, { index_text: i === 2 ? 'indexed instead' : undefined, important_keywords: i === 3 ? ['kw'] : [] })))!);
      await s().chunks.remove(d, [rows[0]!.rowid]);
      await s().documents.update(e, { changes: { status: '0' }, resetChunks: false });
      expect(await r.chunkDims()).toEqual([DIM]);
      expect(await r.hasChunkDim(DIM)).toBe(true);
      expect(await r.hasChunkDim(DIM + 1)).toBe(false);
      const seen: Array<[number, boolean]> = [];
      let sized = -1;
      const head = await r.loadVectors('chunks', DIM, { size: (n) => (sized = seen.length === 0 ? n : -2), put: (rid, part, searchable, v) => { expect(part).toBe(ds.id); expect(v.length).toBe(DIM); seen.push([rid, searchable]); } });
      expect(sized).toBeGreaterThanOrEqual(5);
      expect(seen).toEqual(rows.slice(1).map((c, i) => [c.rowid, (i + 1) % 2 === 0]));
      const again: number[] = [];
      await r.loadVectors('chunks', DIM, { size: () => undefined, put: (rid) => again.push(rid) }, { shadow: false });
      expect(again).toEqual(seen.map((x) => x[0]));
      // One partition (a dataset's index): the same rows in the same order; another partition's: none.
      const part: number[] = [];
      await r.loadVectors('chunks', DIM, { size: (n) => expect(n).toBe(seen.length), put: (rid) => part.push(rid) }, { partition: ds.id });
      expect(part).toEqual(seen.map((x) => x[0]));
      const shadowPart: number[] = [];
      await r.loadVectors('chunks', DIM, { size: () => undefined, put: (rid) => shadowPart.push(rid) }, { partition: ds.id, shadow: true });
      expect(shadowPart).toEqual(part);
      let other = 0;
      await r.loadVectors('chunks', DIM, { size: (n) => expect(n).toBe(0), put: () => other++ }, { partition: 'no-such-dataset' });
      expect(other).toBe(0);
      expect((await r.vectorRows('chunks', DIM, [rows[1]!.rowid], ds.id))[0]![1]?.searchable).toBe(false);
      expect((await r.vectorRows('chunks', DIM, [rows[1]!.rowid], 'no-such-dataset'))[0]![1]).toBeUndefined();
      const vr = await r.vectorRows('chunks', DIM, [rows[1]!.rowid, rows[0]!.rowid, 999_999]);
      expect(vr.map(([id, row]) => [id, row?.searchable])).toEqual([[rows[1]!.rowid, false], [rows[0]!.rowid, undefined], [999_999, undefined]]);
      expect((await r.vectorRows('chunks', DIM + 1, [rows[2]!.rowid]))[0]![1]).toBeUndefined();
      const tr = await r.termRows([rows[2]!.rowid, rows[3]!.rowid, rows[0]!.rowid]);
      expect([...tr.keys()]).toEqual([rows[2]!.rowid, rows[3]!.rowid]);
      const t2 = tr.get(rows[2]!.rowid)!;
      expect(t2.slice(0, 9)).toEqual([rows[2]!.rowid, 'text number 2', 'indexed instead', '[]', '[]', 'd.txt', d.id, 'en', 'd.txt']); // an English dataset's chunk is analysed as English
      // A store that keeps the full-text row (PostgreSQL) hands exactly what analysing the row gives.
      if (t2.length > 9) expect(t2[9]).toEqual(ftsTerms('d.txt', 'indexed instead', [], [], 'en'));
      expect(tr.get(rows[3]!.rowid)![3]).toBe('["kw"]');
      // A chunk without a title (added through the API) has no title terms, whatever its document's name.
      const untitled = (await s().chunks.add(ds.id, chunkOf(d, 'no title', 9, { title: '' })))!;
      expect(untitled.titled).toBe(0);
      expect(rows[2]!.titled).toBe(1);
      // …but its document's name all the same (the term index keeps it for doc_aggs).
      expect((await r.termRows([untitled.rowid])).get(untitled.rowid)!.slice(5, 9)).toEqual(['', d.id, 'en', 'd.txt']);
      const slice = await r.termSlice(head, rows[1]!.rowid, 2);
      expect(slice.map((t) => t[0])).toEqual([rows[2]!.rowid, rows[3]!.rowid]);
      expect((await r.termSlice(head, rows[1]!.rowid, 10)).map((t) => t[0])).toEqual(rows.slice(2).map((c) => c.rowid));
      expect(await r.termSlice(head, rows[5]!.rowid, 10)).toEqual([]);
    });

    test('termSlice and termRows of one dataset (a dataset\'s term index): its rows only, in rowid order, the same rows as without the filter', async () => {
      const { who, ds, d } = await setup(s());
      const r = s().search;
      const other = await seedDataset(s(), who, 'other');
      const [o] = await seedDocuments(s(), who, other, ['o.txt']);
      // Interleaved: the datasets' rowids alternate.
      const mine: number[] = [];
      const theirs: number[] = [];
      for (let i = 0; i < 6; i++) {
        mine.push((await s().chunks.add(ds.id, chunkOf(d, `mine ${i}`, i)))!.rowid);
        theirs.push((await s().chunks.add(other.id, chunkOf(o!, `theirs ${i}`, i)))!.rowid);
      }
      await s().chunks.remove(d, [mine[2]!]);
      const head = await r.feed('chunks').head();
      const live = mine.filter((_, i) => i !== 2);
      const all = await r.termSlice(head, 0, 100);
      const of = await r.termSlice(head, 0, 100, ds.id);
      expect(of.map((t) => t[0])).toEqual(live);
      // Each row as the unfiltered read gives it.
      expect(of).toEqual(all.filter((t) => live.includes(t[0])));
      // Sliced: above `after`, at most `limit`.
      expect((await r.termSlice(head, live[0]!, 2, ds.id)).map((t) => t[0])).toEqual(live.slice(1, 3));
      expect((await r.termSlice(head, live[4]!, 10, ds.id))).toEqual([]);
      expect((await r.termSlice(head, 0, 10, other.id)).map((t) => t[0])).toEqual(theirs);
      expect(await r.termSlice(head, 0, 10, 'no-such-dataset')).toEqual([]);
      // A row written after `head` with a higher rowid is not read (it is in the feed past it).
      await s().chunks.add(ds.id, chunkOf(d, 'later', 9));
      expect((await r.termSlice(head, 0, 100, ds.id)).map((t) => t[0])).toEqual(live);
      // termRows: another dataset's chunk or a deleted one is absent.
      const tr = await r.termRows([theirs[0]!, mine[0]!, mine[2]!, mine[1]!], ds.id);
      expect([...tr.keys()]).toEqual([mine[0]!, mine[1]!]);
      expect(tr.get(mine[1]!)).toEqual((await r.termRows([mine[1]!])).get(mine[1]!));
      expect([...(await r.termRows([theirs[0]!, mine[0]!], other.id)).keys()]).toEqual([theirs[0]!]);
    });

    test('the memory feed and its rows: filter values, forget and status as changes', async () => {
      const who = await seedTenant(s());
      const m = { id: 'mem', tenant_id: who.tenantId, name: 'm', avatar: '', memory_type: 1, storage_type: 'table', embd_id: 'e', llm_id: 'l', permissions: 'me', description: '',
        memory_size: 1_000_000, forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: '', user_prompt: '', used_bytes: 0, message_count: 0, created_by: 'u', create_time: 1, update_time: 1 };
      await s().memories.create(m);
      const r = s().search;
      const head0 = await r.loadVectors('memory', 4, { size: () => undefined, put: () => undefined });
      const msg = (c: string, at: number) => ({ message_type: 'raw' as const, source_id: 0, user_id: 'u1', agent_id: 'a1', session_id: 's1', content: c, vector: vec(4, at), valid_at: at, invalid_at: null, fifo_at: at });
      const { ids } = await s().memories.insert('mem', [msg('one', 1), msg('two', 2)], { now: 1 });
      let c = await r.feed('memory').changesSince({ position: head0, live: 0 });
      expect(c.kind === 'apply' && [...c.dirty].sort()).toEqual([...ids].sort());
      const rows = await r.vectorRows('memory', 4, ids);
      expect(rows[0]![1]).toMatchObject({ partition: 'mem', searchable: true, tags: ['a1', 's1', 'u1'] });
      const at = c.kind === 'apply' ? { position: c.position, live: 2 } : undefined;
      await s().memories.forget(ids[0]!, 5);
      await s().memories.setStatus(ids[1]!, false);
      c = await r.feed('memory').changesSince(at!);
      expect(c.kind === 'apply' && [...c.dirty].sort()).toEqual([...ids].sort());
      expect((await r.vectorRows('memory', 4, ids)).map(([, row]) => row?.searchable)).toEqual([false, false]);
      const loaded: Array<[number, boolean]> = [];
      await r.loadVectors('memory', 4, { size: () => undefined, put: (rid, _p, searchable) => loaded.push([rid, searchable]) });
      expect(loaded).toEqual([[ids[0]!, false], [ids[1]!, false]]);
    });

    test('page readers: counts, scope, page chunks, documents\' names, chunks\' documents', async () => {
      const { ds, d, e } = await setup(s());
      const other = await seedDataset(s(), await seedTenant(s()), 'other');
      const a = (await s().chunks.add(ds.id, chunkOf(d, 'one', 1, { tag_kwd: ['t'] })))!;
      const b = (await s().chunks.add(ds.id, chunkOf(e, 'two', 2)))!;
      await s().chunks.add(ds.id, chunkOf(e, 'three', 3));
      await s().documents.update(d, { changes: { meta_fields: '{"k":1}', status: '0' }, resetChunks: false });
      expect(await s().search.countChunks([ds.id], 2)).toBe(2);
      expect(await s().search.countChunks([ds.id, other.id], 100)).toBe(3);
      expect((await s().search.documentMeta([ds.id])).sort((x, y) => x.id.localeCompare(y.id))).toEqual([{ id: d.id, meta_fields: '{"k":1}' }, { id: e.id, meta_fields: '{}' }].sort((x, y) => x.id.localeCompare(y.id)));
      expect((await s().search.chunkRowidsOfDocuments([d.id, e.id])).length).toBe(2); // d's chunk is switched off
      expect((await s().search.chunkRowidsOfDocuments([d.id], false))).toEqual([a.rowid]);
      const page = await s().search.pageChunks([b.rowid, a.rowid, 999_999]);
      expect([...page.keys()].sort()).toEqual([a.rowid, b.rowid].sort());
      expect(page.get(a.rowid)).toMatchObject({ id: a.id, document_id: d.id, dataset_id: ds.id, content: 'one', tag_kwd: '["t"]', available: 0, index_text: null, doc_name: 'd.txt' });
      expect(await s().search.documentNames([e.id, 'nope', d.id])).toEqual(new Map([[e.id, 'e.txt'], [d.id, 'd.txt']]));
      expect(await s().search.chunkDocuments([a.rowid, 999_999])).toEqual(new Map([[a.rowid, { id: d.id, name: 'd.txt' }]]));
      // Both at once: the same rows, to the last field; names of documents gone are absent.
      const both = await s().search.pageRows([b.rowid, a.rowid, 999_999], [e.id, 'nope', d.id, e.id]);
      expect(both.chunks).toEqual(page);
      expect(both.names).toEqual(new Map([[e.id, 'e.txt'], [d.id, 'd.txt']]));
      expect(await s().search.pageRows([a.rowid], [])).toEqual({ chunks: new Map([[a.rowid, page.get(a.rowid)]]), names: new Map() });
      expect(await s().search.pageRows([], [d.id])).toEqual({ chunks: new Map(), names: new Map([[d.id, 'd.txt']]) });
    });

    test('the tokenizer and logarithm of the full-text engine; the engine itself when the store has one', async () => {
      const { ds, d } = await setup(s());
      const tok = await s().search.textTokenizer();
      expect(tok.tokenise(['Café au LAIT', 'e-mail 2024', ''])).toEqual([['cafe', 'au', 'lait'], ['e', 'mail', '2024'], []]);
      expect(tok.ln(1)).toBe(0);
      expect(tok.ln(Math.E)).toBeCloseTo(1, 15);
      const ft = s().search.fullText;
      if (!ft) return; // optional: search then answers from its term index alone
      const key0 = ft.statsKey('chunk_fts');
      const a = (await s().chunks.add(ds.id, chunkOf(d, 'wing flutter wing', 1)))!;
      const b = (await s().chunks.add(ds.id, chunkOf(d, 'heat transfer', 2, { important_keywords: ['flutter'] })))!;
      expect(ft.statsKey('chunk_fts')).not.toBe(key0);
      expect(ft.totals('chunk_fts')[0]).toBe(2);
      expect(ft.count('chunk_fts', '"flutter"')).toBe(2);
      expect(ft.count('chunk_fts', '"flutter"', 1)).toBe(1);
      expect(ft.all('chunk_fts', '"wing"').map((x) => x[0])).toEqual([a.rowid]);
      const top = ft.top('chunk_fts', '"flutter"', 10, 0);
      expect(top.map((x) => x[0])).toEqual([b.rowid, a.rowid]); // the keyword column weighs 15
      expect(top[0]![1]).toBeLessThan(top[1]![1]);
      expect(ft.top('chunk_fts', '"flutter"', 1, 1).map((x) => x[0])).toEqual([a.rowid]);
      expect(ft.scores('chunk_fts', '"flutter"', [a.rowid])).toEqual([top[1]]);
      // An engine without the chunks' texts (PostgreSQL's FTS5 copy) says so; a search reads them from the store.
      if (ft.chunkTexts === false) expect(() => ft.texts('chunk_fts', [b.rowid])).toThrow(/no chunk texts/);
      else expect(ft.texts('chunk_fts', [b.rowid])).toEqual([[b.rowid, 'heat transfer', null, '["flutter"]', '[]', 'd.txt', 'en']]);
      expect(ft.messageFilter(12345)).toBeUndefined();
    });

    test('a follower catching up while two processes add and delete chunks ends with exactly the stored rows', async () => {
      const { ds, d } = await setup(s());
      const reader = await f.connect(s().locator, { readonly: true });
      extra(reader);
      const x = new Follower(reader.search);
      await x.load();
      const at = Date.now() + 1500;
      const done = Promise.all([0, 1].map((k) => inChild(s().locator, 'chunks.churn', { doc: { id: d.id, dataset_id: ds.id, name: d.name }, n: 40, tag: `p${k}`, seed: 1000 * (k + 1), at })));
      let finished = false;
      void done.then(() => (finished = true), () => (finished = true));
      const kinds = new Set<string>();
      while (!finished) {
        kinds.add(await x.sync());
        await new Promise((r) => setTimeout(r, 5));
      }
      await done;
      await x.sync();
      const y = new Follower(reader.search);
      await y.load();
      expect([...x.rows.keys()].sort((p, q) => p - q)).toEqual([...y.rows.keys()].sort((p, q) => p - q));
      expect(x.rows.size).toBe(2 * (40 - 14));
      expect(kinds.has('apply')).toBe(true);
    }, 60_000);
  });
}

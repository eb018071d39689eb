import { describe, expect } from 'vitest';
import { test, apiError, enc } from '../helpers.js';
import xxhash from 'xxhash-wasm';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

const tik = new Tiktoken(cl100k);
const tokens = (s: string) => tik.encode(s).length;
import type { Client } from '../../src/index.js';

async function docIn(client: Client, name = 'a.txt') {
  const ds = await client.createDataset({ name: 'kb' });
  const [doc] = await ds.uploadDocuments([{ display_name: name, blob: enc('x') }]);
  return { ds, doc: doc! };
}

describe('Document#addChunk()', () => {
  test('id = xxhash64(content + document_id); counts grow; same content upserts and counts again, as RAGFlow counts', async ({ client }) => {
    const { ds, doc } = await docIn(client);
    const h = await xxhash();
    const c = await doc.addChunk({ content: 'Wing flutter at transonic speed', important_keywords: ['flutter'], questions: [' what is flutter? ', ''], tag_kwd: ['aero'] });
    expect(c.id).toBe(h.h64ToString(`Wing flutter at transonic speed${doc.id}`));
    expect(c).toMatchObject({ content: 'Wing flutter at transonic speed', important_keywords: ['flutter'], questions: ['what is flutter?'], tag_kwd: ['aero'], dataset_id: ds.id, document_id: doc.id });
    expect(typeof (c as unknown as { create_timestamp: number }).create_timestamp).toBe('number');
    let [d] = await ds.listDocuments({ id: doc.id });
    expect(d!.chunk_count).toBe(1);
    expect(d!.token_count).toBe(tokens('Wing flutter at transonic speed'));
    // RAGFlow's increment_chunk_num runs for every add: the same content (one stored chunk) counts twice.
    const again = await doc.addChunk({ content: 'Wing flutter at transonic speed' });
    expect(again.id).toBe(c.id);
    [d] = await ds.listDocuments({ id: doc.id });
    expect(d!.chunk_count).toBe(2);
    expect(d!.token_count).toBe(2 * tokens('Wing flutter at transonic speed'));
    expect((await client.listDatasets())[0]!.chunk_count).toBe(2);
    expect((await doc.listChunks()).length).toBe(1);
  });

  test.for([
    [{ content: '' }, '`content` is required', 102],
    [{ content: '   ' }, '`content` is required', 102],
    [{ content: 'x', important_keywords: 'a' }, '`important_keywords` is required to be a list', 102],
    [{ content: 'x', questions: 'q' }, '`questions` is required to be a list', 102],
    [{ content: 'x', tag_kwd: 't' }, '`tag_kwd` is required to be a list', 102],
    [{ content: 'x', tag_kwd: [1] }, '`tag_kwd` must be a list of strings', 102],
    [{ content: 'x', important_keywords: [1] }, "TypeError('sequence item 0: expected str instance, int found')", 100],
  ])('rejects %j and writes nothing', async (row, { client }) => {
    const [req, msg, code] = row as unknown as [Record<string, unknown>, string, number];
    const { doc } = await docIn(client);
    const e = await apiError(doc.addChunk(req as never));
    expect([e.code, e.message]).toEqual([code, msg]);
    expect(await doc.listChunks()).toHaveLength(0);
  });

  test('a chunk added through the API has no title terms (RAGFlow gives them to parsed chunks only); a rename gives them to every chunk', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [doc] = await ds.uploadDocuments([{ display_name: 'lighthouse.txt', blob: enc('The keeper trims the wick at dusk.') }]);
    await ds.parseDocuments([doc!.id]);
    const added = await doc!.addChunk({ content: 'The tide tables are printed every spring.' });
    // A word only in the file name finds the parsed chunk, not the added one.
    expect((await doc!.listChunks({ keywords: 'lighthouse' })).map((c) => c.content.trim())).toEqual(['The keeper trims the wick at dusk.']);
    const byTitle = await client.retrieve({ question: 'lighthouse', dataset_ids: [ds.id], similarity_threshold: 0 });
    expect(byTitle.find((c) => c.id !== added.id)?.term_similarity).toBeGreaterThan(0);
    expect(byTitle.find((c) => c.id === added.id)?.term_similarity ?? 0).toBe(0);
    // Updating it keeps it untitled.
    await (await doc!.listChunks({ id: added.id }))[0]!.update({ content: 'The tide tables are printed every spring and autumn.' });
    expect((await doc!.listChunks({ keywords: 'lighthouse' })).map((c) => c.content.trim())).toEqual(['The keeper trims the wick at dusk.']);
    // A rename rewrites every chunk's title terms, as RAGFlow's does.
    await doc!.update({ name: 'beacon.txt' });
    expect((await doc!.listChunks({ keywords: 'beacon' })).map((c) => c.content.trim()).sort()).toEqual(['The keeper trims the wick at dusk.', 'The tide tables are printed every spring and autumn.']);
    expect(await doc!.listChunks({ keywords: 'lighthouse' })).toEqual([]);
  });

  test('foreign dataset or document', async ({ client }) => {
    const { doc } = await docIn(client);
    Object.assign(doc, { dataset_id: 'f'.repeat(32) });
    expect((await apiError(doc.addChunk({ content: 'x' }))).message).toBe(`You don't own the dataset ${'f'.repeat(32)}.`);
  });
});

describe('Document#listChunks()', () => {
  test('order, paging, page_size 0, id, keywords with highlight', async ({ client }) => {
    const { ds, doc } = await docIn(client);
    const texts = ['The boundary layer separates.', 'Heat transfer in slabs.', 'Boundary conditions of flutter.', 'Shock waves form.', 'Nothing here.'];
    const made = [];
    for (const t of texts) made.push(await doc.addChunk({ content: t }));
    expect((await doc.listChunks()).map((c) => c.content)).toEqual(texts);
    expect((await doc.listChunks({ page: 2, page_size: 2 })).map((c) => c.content)).toEqual(texts.slice(2, 4));
    expect(await doc.listChunks({ page_size: 0 })).toHaveLength(5);
    expect((await doc.listChunks({ id: made[3]!.id })).map((c) => c.content)).toEqual(['Shock waves form.']);
    const hits = await doc.listChunks({ keywords: 'boundary' });
    expect(hits).toHaveLength(2);
    expect(hits.every((c) => c.content.includes('<em>'))).toBe(true);
    const e = await apiError(doc.listChunks({ id: 'nope' }));
    expect([e.code, e.message]).toEqual([102, `Chunk not found: ${ds.id}/nope`]);
  });
});

describe('Chunk#update()', () => {
  test('changes content, keywords, availability; re-indexes for search', async ({ client }) => {
    const { ds, doc } = await docIn(client);
    const c = await doc.addChunk({ content: 'old words about cats' });
    await c.update({ content: 'new words about supersonic nozzles', important_keywords: ['nozzle'], available: false });
    const [got] = await doc.listChunks({ id: c.id });
    expect(got).toMatchObject({ content: 'new words about supersonic nozzles', important_keywords: ['nozzle'], available: false });
    expect(await doc.listChunks({ keywords: 'cats' })).toHaveLength(0);
    expect(await doc.listChunks({ keywords: 'nozzles' })).toHaveLength(1);
    expect((await ds.listDocuments({ id: doc.id }))[0]!.token_count).toBe(tokens('new words about supersonic nozzles'));
    await c.update({ content: null, available: true });
    expect((await doc.listChunks({ id: c.id }))[0]).toMatchObject({ content: 'new words about supersonic nozzles', available: true });
  });

  test.for([
    [{ content: '  ' }, '`content` is required', 102],
    [{ important_keywords: 'x' }, '`important_keywords` should be a list', 102],
    [{ questions: 'x' }, '`questions` should be a list', 102],
    [{ positions: 'x' }, '`positions` should be a list', 102],
    [{ tag_kwd: 'x' }, '`tag_kwd` should be a list', 102],
    [{ tag_kwd: [3] }, '`tag_kwd` must be a list of strings', 102],
    [{ questions: [3.5] }, "TypeError('sequence item 0: expected str instance, float found')", 100],
  ])('rejects %j and changes nothing', async (row, { client }) => {
    const [req, msg, code] = row as unknown as [Record<string, unknown>, string, number];
    const { doc } = await docIn(client);
    const c = await doc.addChunk({ content: 'kept' });
    const e = await apiError(c.update(req));
    expect([e.code, e.message]).toEqual([code, msg]);
    expect((await doc.listChunks())[0]).toMatchObject({ content: 'kept', important_keywords: [], questions: [] });
  });

  test('unknown chunk; QA documents need question TAB answer', async ({ client }) => {
    const { ds, doc } = await docIn(client);
    const c = await doc.addChunk({ content: 'x' });
    await c.update({ content: 'y' });
    Object.assign(c, { id: 'missing' });
    expect((await apiError(c.update({ content: 'z' }))).message).toBe("Can't find this chunk missing");
    const [qa] = await ds.uploadDocuments([{ display_name: 'q.txt', blob: enc('q') }]);
    await qa!.update({ chunk_method: 'qa' });
    const qc = await qa!.addChunk({ content: 'Question: a?\tAnswer: b' });
    expect((await apiError(qc.update({ content: 'only one part' }))).message).toBe('Q&A must be separated by TAB/ENTER key.');
    await qc.update({ content: 'Question: c?\tAnswer: d' });
  });
});

describe('Document#deleteChunks()', () => {
  test('by ids (de-duplicated), all, and no-op without ids', async ({ client }) => {
    const { ds, doc } = await docIn(client);
    const cs = [];
    for (const t of ['a1', 'b2', 'c3', 'd4']) cs.push(await doc.addChunk({ content: t }));
    await doc.deleteChunks({});
    expect(await doc.listChunks()).toHaveLength(4);
    await doc.deleteChunks({ ids: [cs[0]!.id, cs[0]!.id] });
    expect(await doc.listChunks()).toHaveLength(3);
    await doc.deleteChunks({ delete_all: true });
    expect(await doc.listChunks()).toHaveLength(0);
    expect((await ds.listDocuments())[0]!.chunk_count).toBe(0);
  });

  test('unknown ids: found ones are deleted, then 102 reports the shortfall', async ({ client }) => {
    const { doc } = await docIn(client);
    const a = await doc.addChunk({ content: 'a' });
    await doc.addChunk({ content: 'b' });
    const e = await apiError(doc.deleteChunks({ ids: [a.id, 'ghost'] }));
    expect([e.code, e.message]).toEqual([102, 'rm_chunk deleted chunks 1, expect 2']);
    expect((await doc.listChunks()).map((c) => c.content)).toEqual(['b']);
  });
});


/**
 * The Client methods of issue 34's operations behave the same in process and through `ragloom
 * serve` (the remote Client builds its requests from the same route rows): one scenario, run
 * against both, gives the same answers and the same errors.
 */
import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { test, apiError, enc } from '../helpers.js';

/** What the scenario saw, ids replaced by their role. */
async function scenario(c: Client): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const ds = await c.createDataset({ name: 'kb' });
  const docs = await ds.uploadDocuments([
    { display_name: 'tides.md', blob: enc('# Tides\n\nThe pull of the moon raises the ocean tides twice a day.') },
    { display_name: 'bread.md', blob: enc('# Bread\n\nKnead the dough for ten minutes, then let it rise for an hour.') },
  ]);
  const ids = docs.map((d) => d.id);
  const role = (x: unknown) => JSON.parse(JSON.stringify(x).replaceAll(ds.id, 'DS').replaceAll(ids[0]!, 'DOC0').replaceAll(ids[1]!, 'DOC1'));
  await ds.parseDocuments(ids, { pollMs: 20 });

  out.get = role((({ id, name, chunk_count, document_count, connectors }) => ({ id, name, chunk_count, document_count, connectors }))((await c.getDatasetById(ds.id)).toJSON() as Record<string, unknown>));
  out.getMissing = (await apiError(c.getDatasetById('nope'))).code;

  const chunk = await docs[0]!.addChunk({ content: 'spring tides come at new and full moon', important_keywords: ['spring'] });
  const got = await docs[0]!.getChunk(chunk.id);
  out.chunk = role({ content: got.content_with_weight ?? got.content, kb: got.kb_id ?? got.dataset_id });
  out.chunkMissing = (await apiError(docs[0]!.getChunk('nope'))).message;
  await docs[0]!.switchChunks({ chunk_ids: [chunk.id], available: false });
  out.switched = (await docs[0]!.listChunks({ id: chunk.id }))[0]!.available;

  out.updateMetadata = await ds.updateMetadata({ selector: { document_ids: ids }, updates: [{ key: 'topic', value: 'nature' }] });
  out.summary = await ds.metadataSummary();
  out.autoMetadata = await ds.updateAutoMetadata({ metadata: [{ key: 'era', type: 'string' }] });
  out.autoMetadataBack = await ds.getAutoMetadata();
  out.autoMetadataBad = (await apiError(ds.updateAutoMetadata({ metadata: [{ key: 'x', type: 'blob' as never }] }))).code;

  await docs[1]!.addChunk({ content: 'tagged', tag_kwd: ['food'] } as never);
  out.tags = await ds.listTags();
  await ds.renameTag('food', 'baking');
  out.renamed = await ds.listTags();
  await ds.deleteTags(['baking']);
  out.deleted = await ds.listTags();

  out.ingestion = role(await ds.ingestionSummary());
  const logs = await ds.ingestionLogs();
  out.logs = { total: logs.total, docs: logs.logs.map((l) => role(l.document_id)).sort() };
  await c.cancelTask(String(logs.logs[0]!.id)); // finished: nothing to stop, no error
  out.reembed = await ds.reembed();
  for (let i = 0; i < 600 && (await ds.listDocuments()).some((d) => d.run !== 'DONE'); i++) await new Promise((ok) => setTimeout(ok, 50));

  const search = await c.createSearch({ name: 'finder', search_config: { kb_ids: [ds.id] } });
  out.searches = (await c.listSearches()).search_apps.map((s) => s.name);
  out.searchGet = role(((s) => ({ name: s.name, kb_ids: (s.search_config as { kb_ids: string[] }).kb_ids }))(await c.getSearch(search)));
  out.searchUpdate = ((s) => ({ name: s.name, top_k: (s.search_config as { top_k: number }).top_k }))(await c.updateSearch(search, { name: 'seeker', search_config: { top_k: 10 } }));
  const hits = await c.searchDatasets({ dataset_ids: [ds.id], question: 'moon tides', size: 1 });
  out.searchDatasets = role({ n: hits.chunks.length, kb: hits.chunks[0]!.kb_id });
  out.related = (await apiError(c.relatedQuestions('tides'))).code; // the built-in model writes no text
  await c.deleteSearch(search);
  out.searchesAfter = (await c.listSearches()).total;

  const chat = await c.createChat({ name: 'assistant', dataset_ids: [ds.id] });
  const session = await chat.createSession({ name: 's' });
  const answer = await session.ask('How long should the dough rise?', { stream: false });
  const msgId = (answer as { id?: string }).id!;
  await session.feedback(msgId, { thumbup: true });
  await session.deleteMessage(msgId);
  out.afterDelete = (await chat.listSessions({ id: session.id }))[0]!.messages.map((m) => m.role);
  await c.deleteChat(chat.id);
  out.chatsAfter = (await c.listChats()).length;

  out.status = ((s) => Object.keys(s).sort())(await c.systemStatus());
  return out;
}

describe('issue 34 Client methods, local and remote', () => {
  test('the same scenario gives the same answers in process and through the server', async ({ dir }) => {
    const local = new Client({ path: join(dir, 'local.db') });
    let here: Record<string, unknown>;
    try {
      here = await scenario(local);
    } finally {
      await local.close();
    }
    const srv = await startServer({ path: join(dir, 'remote.db'), port: 0, host: '127.0.0.1' });
    const remote = new Client({ baseUrl: srv.url, apiKey: srv.apiKey });
    let there: Record<string, unknown>;
    try {
      there = await scenario(remote);
    } finally {
      await remote.close();
      await srv.close();
    }
    expect(there).toEqual(here);
    // And what they saw is right.
    expect(here.get).toMatchObject({ id: 'DS', name: 'kb', document_count: 2, connectors: [] });
    expect(here.getMissing).toBe(102);
    expect(here.chunk).toEqual({ content: 'spring tides come at new and full moon', kb: 'DS' });
    expect(here.chunkMissing).toBe('Chunk not found!');
    expect(here.switched).toBe(false);
    expect(here.updateMetadata).toEqual({ updated: 2, matched_docs: 2 });
    expect(here.summary).toEqual({ topic: { type: 'string', values: [['nature', 2]] } });
    expect(here.autoMetadata).toEqual({ metadata: [{ key: 'era', type: 'string', description: null, enum: null }], built_in_metadata: [] });
    expect(here.autoMetadataBack).toEqual(here.autoMetadata);
    expect(here.autoMetadataBad).toBe(101);
    expect([here.tags, here.renamed, here.deleted]).toEqual([[['food', 1]], [['baking', 1]], []]);
    expect((here.ingestion as { status: Record<string, number> }).status.done_count).toBe(2);
    expect(here.logs).toEqual({ total: 2, docs: ['DOC0', 'DOC1'] });
    expect(here.reembed).toBe(2);
    expect(here.searches).toEqual(['finder']);
    expect(here.searchGet).toEqual({ name: 'finder', kb_ids: ['DS'] });
    expect(here.searchUpdate).toEqual({ name: 'seeker', top_k: 10 });
    expect(here.searchDatasets).toEqual({ n: 1, kb: 'DS' });
    expect(here.related).toBe(102);
    expect(here.searchesAfter).toBe(0);
    expect(here.afterDelete).toEqual(['assistant']);
    expect(here.chatsAfter).toBe(0);
    expect(here.status).toEqual(['database', 'doc_engine', 'storage', 'task_executor_heartbeats']);
  }, 120_000);
});

/**
 * Two Clients on one file (two connections, as two processes have): the vector index copy of one
 * must follow the other's commits, including a chunk id SQLite reuses (the highest row deleted,
 * then a row inserted: rowid = max + 1 again) after the first one saw the delete.
 */
import { expect } from 'vitest';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';

test('a reused chunk rowid written by another connection is found on the next search', async ({ dir }) => {
  const path = join(dir, 'kb.db');
  const a = new Client({ path });
  const b = new Client({ path });
  try {
    const ds = await a.createDataset({ name: 'x' });
    const [docA] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: new TextEncoder().encode('The harbour wall keeps the sea out.') }]);
    await ds.parseDocuments([docA!.id], { pollMs: 20 });
    const find = (c: Client, q: string, w: number) => c.retrieve({ dataset_ids: [ds.id], question: q, similarity_threshold: 0, vector_similarity_weight: w });
    const [dsB] = await b.listDatasets({ id: ds.id });
    const [docB] = await dsB!.listDocuments({ id: docA!.id });
    const first = await docB!.addChunk({ content: 'quokkaword the first note on the pier' });
    expect((await find(a, 'quokkaword', 0))[0]?.id).toBe(first.id); // A's index now knows the highest row
    await docB!.deleteChunks({ ids: [first.id] });
    expect((await find(a, 'quokkaword', 0)).map((c) => c.id)).not.toContain(first.id); // A saw the delete
    const second = await docB!.addChunk({ content: 'wombatword the second note on the pier' }); // same rowid again
    expect((await find(a, 'wombatword', 0))[0]?.id).toBe(second.id);
    expect((await find(a, 'wombatword the second note on the pier', 1)).slice(0, 2).map((c) => c.id)).toContain(second.id);
  } finally {
    await b.close();
    await a.close();
  }
}, 60_000);

/**
 * A re-parse that is cancelled leaves the previous chunks in place (the swap never happened): the
 * document's and the dataset's counts must say so, not the 0 they were reset to when it started.
 */
import { expect } from 'vitest';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';

test('a cancelled re-parse restores the counts of the chunks that stayed', async ({ dir }) => {
  const client = new Client({ path: join(dir, 'kb.db') });
  try {
    const ds = await client.createDataset({ name: 'recount' });
    const text = Array.from({ length: 400 }, (_, i) => `Paragraph ${i}: the harbour master notes the tide, the wind and the ships in the roads.`).join('\n\n');
    const [doc] = await ds.uploadDocuments([{ display_name: 'log.md', blob: new TextEncoder().encode(text) }]);
    await ds.parseDocuments([doc!.id], { pollMs: 20 });
    const [before] = await ds.listDocuments({ id: doc!.id });
    expect(before!.chunk_count).toBeGreaterThan(1);
    await ds.asyncParseDocuments([doc!.id]);
    await ds.asyncCancelParseDocuments([doc!.id]);
    const [after] = await ds.listDocuments({ id: doc!.id });
    expect(after!.run).toBe('CANCEL');
    const chunks = await after!.listChunks({ page_size: 10_000 });
    expect(chunks.length).toBe(before!.chunk_count);
    expect(after!.chunk_count).toBe(chunks.length);
    expect(after!.token_count).toBe(before!.token_count);
    const [info] = await client.listDatasets({ id: ds.id });
    expect(info!.chunk_count).toBe(chunks.length);
  } finally {
    await client.close();
  }
}, 60_000);

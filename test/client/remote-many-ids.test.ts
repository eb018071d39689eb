/** A remote Client's parseDocuments over many documents: the poll's ids travel in query strings, which must stay under the server's header limit. */
import { expect } from 'vitest';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { test, enc } from '../helpers.js';

test('parseDocuments of 600 documents through `ragloom serve` (was HTTP 431 from a single 600-id poll)', async ({ dir }) => {
  const srv = await startServer({ path: join(dir, 'kb.db'), port: 0, host: '127.0.0.1' });
  const c = new Client({ baseUrl: srv.url, apiKey: srv.apiKey });
  try {
    const ds = await c.createDataset({ name: 'many', chunk_method: 'one' });
    const docs = await ds.uploadDocuments(Array.from({ length: 600 }, (_, i) => ({ display_name: `n${i}.txt`, blob: enc(`note ${i} about gas turbines`) })));
    const done = await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 100 });
    expect(done).toHaveLength(600);
    expect(done.every(([, run, chunks]) => run === 'DONE' && chunks === 1)).toBe(true);
  } finally {
    await c.close();
    await srv.close();
  }
}, 120_000);

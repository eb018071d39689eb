/**
 * A node of a shared store dies mid-parse (issue 30): its documents stay RUNNING under its claim,
 * whose heartbeat stops. Another node, already running, finds them (its periodic sweep) and parses
 * them, once; its own documents, being parsed, are never taken from it.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { Api } from '../../src/api/index.js';
import { PARSE_SWEEP } from '../../src/core/parse-queue.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { enc } from '../acceptance/modes.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
afterAll(async () => {
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
});

describe.skipIf(!server)(`a dead node's parse work${reason ? ` (${reason})` : ''}`, () => {
  test('is found by a running node and parsed once', async () => {
    const url = await createStoreDatabase(server!, 'dead');
    urls.push(url);
    const before = PARSE_SWEEP.ms;
    PARSE_SWEEP.ms = 150;
    const node = await Api.open({ postgres: url });
    try {
      const ds = (await node.call('datasets.create', { name: 'kb' })) as { id: string };
      const docs = (await node.call('documents.upload', { dataset_id: ds.id, files: [
        { display_name: 'a.txt', blob: enc('The moon raises the tides twice a day.') },
        { display_name: 'b.txt', blob: enc('Bread rises for an hour in a warm place.') },
      ] })) as Array<{ id: string }>;
      // What a node killed mid-parse leaves: RUNNING documents under its claim, the heartbeat stopped
      // two minutes ago, on another host (its pid cannot be checked from here).
      const store = node.engine.store;
      await store.parse.reset(docs.map((d) => d.id), node.engine.local.tenantId);
      await store.parse.claim(docs.map((d) => d.id), { pid: 4242, host: 'a-dead-host' }, Date.now() - 120_000);
      const until = Date.now() + 30_000;
      for (;;) {
        const rows = [...(await store.documents.getMany(ds.id, docs.map((d) => d.id))).values()];
        if (rows.every((r) => r.run === '3')) {
          expect(rows.map((r) => r.chunk_num)).toEqual([1, 1]);
          break;
        }
        if (Date.now() > until) throw new Error(`not parsed: ${rows.map((r) => r.run).join(',')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Parsed once: one set of chunks, the claims released, nothing left RUNNING.
      expect((await store.chunks.list(docs[0]!.id, -1, 0)).total).toBe(1);
      expect(await store.parse.running()).toEqual([]);
      expect(await store.parse.staleClaims()).toEqual([]);
      expect((await store.datasets.get(ds.id))!.chunk_num).toBe(2);
    } finally {
      PARSE_SWEEP.ms = before;
      await node.close();
    }
  }, 60_000);
});

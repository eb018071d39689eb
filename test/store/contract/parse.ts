import { describe, expect, test } from 'vitest';
import { RUN, type ParseOutcomeRow } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore, inChild } from './harness.js';
import { chunkOf, seedDataset, seedDocuments, seedTenant, vec } from './seed.js';

const owner = { pid: 4242, host: 'contract-host' };

function outcome(d: { id: string; dataset_id: string }, chunks?: ParseOutcomeRow['chunks']): ParseOutcomeRow {
  return { id: d.id, dataset_id: d.dataset_id, chunks, language: 'English', log: ['received'], doneLines: ['done'], failLine: 'failed: why', seconds: 1.5, began: 1000 };
}

export function parseContract(f: StoreFactory): void {
  describe('ParseWorkStore', () => {
    const { s } = freshStore(f);

    test('reset, claim, heartbeat, running, release, staleClaims, dropClaims', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [a, b, c] = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt', 'c.txt']);
      await s().chunks.add(ds.id, chunkOf(a!, 'old chunk of a', 1));
      await s().parse.reset([a!.id, b!.id], who.tenantId);
      expect(await s().documents.get(ds.id, a!.id)).toMatchObject({ run: RUN.RUNNING, chunk_num: 0, token_num: 0, progress: 0, progress_msg: '', process_begin_at: null });
      expect(await s().datasets.get(ds.id)).toMatchObject({ chunk_num: 0, token_num: 0 });
      const sorted = <T extends { id: string }>(xs: T[]) => [...xs].sort((x, y) => x.id.localeCompare(y.id));
      expect(sorted(await s().parse.running())).toEqual(sorted([{ id: a!.id, claim: null }, { id: b!.id, claim: null }]));
      await s().parse.claim([a!.id, b!.id, c!.id], owner, 100);
      await s().parse.heartbeat(owner, 200);
      await s().parse.heartbeat({ pid: owner.pid, host: 'elsewhere' }, 300);
      expect(sorted(await s().parse.running())).toEqual(sorted([a!, b!].map((d) => ({ id: d.id, claim: { ...owner, heartbeat: 200 } }))));
      expect(await s().parse.staleClaims()).toEqual([{ id: c!.id, claim: { ...owner, heartbeat: 200 } }]);
      await s().parse.release([b!.id], 1); // another pid's: kept
      await s().parse.release([b!.id], owner.pid);
      expect(sorted(await s().parse.running())).toEqual(sorted([{ id: a!.id, claim: { ...owner, heartbeat: 200 } }, { id: b!.id, claim: null }]));
      await s().parse.dropClaims([{ id: c!.id, pid: 1 }]);
      expect(await s().parse.staleClaims()).toHaveLength(1);
      await s().parse.dropClaims([{ id: c!.id, pid: owner.pid }]);
      expect(await s().parse.staleClaims()).toEqual([]);
    });

    test('documents, datasets and progress (RUNNING documents only)', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who, 'kb', { parser_config: '{"x":1}' });
      const [a, b] = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt']);
      const docs = await s().parse.documents([a!.id, 'nope', b!.id]);
      expect([...docs.keys()]).toEqual([a!.id, b!.id]);
      expect(await s().parse.datasets([ds.id, ds.id, 'nope'])).toEqual(new Map([[ds.id, { parser_config: '{"x":1}', embd_id: ds.embd_id, language: ds.language }]]));
      await s().parse.reset([a!.id], who.tenantId);
      await s().parse.progress([{ id: a!.id, progress: 0.4, msg: 'half', begin: 123 }, { id: b!.id, progress: 0.5, msg: 'ignored', begin: 1 }]);
      await s().parse.progress([{ id: a!.id, progress: 0.6, msg: 'more', begin: null }]);
      expect(await s().documents.get(ds.id, a!.id)).toMatchObject({ progress: 0.6, progress_msg: 'more', process_begin_at: 123 });
      expect(await s().documents.get(ds.id, b!.id)).toMatchObject({ progress: 0, progress_msg: '' });
    });

    test('finish: swaps a RUNNING document\'s chunks (DONE), fails one without chunks, times a cancelled one; counts and claims follow', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [ok, bad, stopped, idle] = await seedDocuments(s(), who, ds, ['ok.txt', 'bad.txt', 'stopped.txt', 'idle.txt']);
      for (const [d, n] of [[ok, 2], [bad, 1], [stopped, 3]] as const) for (let i = 0; i < n; i++) await s().chunks.add(ds.id, chunkOf(d!, `old chunk ${i} of ${d!.name}`, i));
      await s().parse.reset([ok!.id, bad!.id, stopped!.id], who.tenantId);
      await s().parse.claim([ok!.id, bad!.id, stopped!.id, idle!.id], owner, 1);
      await s().parse.cancel([stopped!.id]);
      expect(await s().documents.get(ds.id, stopped!.id)).toMatchObject({ run: RUN.CANCEL, chunk_num: 3 });
      const fresh = [0, 1, 2].map((i) => ({ ...chunkOf(ok!, `new chunk ${i}`, 10 + i), chunk_order: i }));
      fresh.push({ ...fresh[0]!, chunk_order: 3 }); // repeated in the document: stored once
      const rows = [outcome(ok!, fresh), outcome(bad!), outcome(stopped!, [{ ...chunkOf(stopped!, 'never written', 20), chunk_order: 0 }])];
      await s().parse.finish([['m', 'sha', vec(4, 1)]], rows, owner.pid, 5000);
      expect(await s().documents.get(ds.id, ok!.id)).toMatchObject({ run: RUN.DONE, progress: 1, progress_msg: 'received\ndone', chunk_num: 3, token_num: 9, process_duration: 1.5, process_begin_at: 1000 });
      expect(rows[0]!.log).toEqual(['received', 'done']);
      // The repeated chunk's later copy is the one kept (order 3).
      expect((await s().chunks.list(ok!.id, -1, 0)).rows.map((r) => r.content)).toEqual(['new chunk 1', 'new chunk 2', 'new chunk 0']);
      expect(await s().documents.get(ds.id, bad!.id)).toMatchObject({ run: RUN.FAIL, progress: -1, progress_msg: 'received\nfailed: why', chunk_num: 1 });
      expect(await s().documents.get(ds.id, stopped!.id)).toMatchObject({ run: RUN.CANCEL, chunk_num: 3, process_duration: 1.5 });
      expect((await s().chunks.list(stopped!.id, -1, 0)).total).toBe(3);
      expect(await s().datasets.get(ds.id)).toMatchObject({ chunk_num: 7 });
      expect((await s().chunks.cachedVectors('m', ['sha'])).size).toBe(1);
      expect(await s().parse.running()).toEqual([]);
      expect(await s().parse.staleClaims()).toEqual([{ id: idle!.id, claim: { ...owner, heartbeat: 1 } }]); // not part of the job
    });

    test('finish is one transaction: a chunk the store refuses leaves every document of the job as it was', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [a, b] = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt']);
      await s().chunks.add(ds.id, chunkOf(a!, 'old a', 1));
      await s().parse.reset([a!.id, b!.id], who.tenantId);
      await s().parse.claim([a!.id, b!.id], owner, 1);
      const broken = { ...chunkOf(b!, 'bad vector', 2), chunk_order: 0, vector: new Float32Array(0) };
      await expect(s().parse.finish([], [outcome(a!, [{ ...chunkOf(a!, 'new a', 3), chunk_order: 0 }]), outcome(b!, [broken])], owner.pid, 1)).rejects.toThrow();
      expect(await s().documents.get(ds.id, a!.id)).toMatchObject({ run: RUN.RUNNING });
      expect((await s().chunks.list(a!.id, -1, 0)).rows.map((r) => r.content)).toEqual(['old a']);
      expect((await s().parse.running()).every((r) => r.claim?.pid === owner.pid)).toBe(true);
      // What the queue then records: FAIL with the store's message, the old chunks counted again, claims released.
      await s().parse.failAll([a!, b!].map((d) => ({ id: d.id, dataset_id: d.dataset_id, log: ['received'], seconds: 2 })), 'store full', owner.pid);
      expect(await s().documents.get(ds.id, a!.id)).toMatchObject({ run: RUN.FAIL, progress_msg: 'received\nstore full', chunk_num: 1, process_duration: 2 });
      expect(await s().parse.running()).toEqual([]);
      expect(await s().parse.staleClaims()).toEqual([]);
    });

    test('the parse log: reset opens a row per document (a superseded open one CANCEL), finish and cancel close them; log and logs read them as they are now', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [a, b, c] = await seedDocuments(s(), who, ds, ['Alpha.txt', 'beta.txt', 'gamma.txt']);
      await s().parse.reset([a!.id, b!.id, c!.id], who.tenantId);
      let logs = await s().parse.logs(ds.id, { orderby: 'create_time', desc: false });
      expect(logs.map((l) => [l.document_name, l.operation_status, l.tenant_id])).toEqual([['Alpha.txt', '1', who.tenantId], ['beta.txt', '1', who.tenantId], ['gamma.txt', '1', who.tenantId]]);
      const first = logs[0]!;
      await s().parse.reset([a!.id], who.tenantId); // parsed again while the first parse is open
      expect((await s().parse.log(first.id))!.operation_status).toBe(RUN.CANCEL);
      await s().parse.finish([], [
        { id: a!.id, dataset_id: ds.id, chunks: [{ ...chunkOf(a!, 'done', 1), chunk_order: 0 }], language: 'English', log: [], doneLines: ['done'], failLine: 'x', seconds: 1, began: 1 },
        { id: b!.id, dataset_id: ds.id, chunks: undefined, language: 'English', log: [], doneLines: [], failLine: 'failed', seconds: 1, began: 1 },
      ], 1, 5);
      await s().parse.cancel([c!.id]);
      logs = await s().parse.logs(ds.id, { orderby: 'create_time', desc: false });
      expect(logs.map((l) => [l.document_name, l.operation_status])).toEqual([['Alpha.txt', RUN.CANCEL], ['beta.txt', RUN.FAIL], ['gamma.txt', RUN.CANCEL], ['Alpha.txt', RUN.DONE]]);
      expect((await s().parse.logs(ds.id, { keywords: 'alpha', orderby: 'create_time', desc: true })).map((l) => l.operation_status)).toEqual([RUN.DONE, RUN.CANCEL]);
      expect((await s().parse.logs(ds.id, { orderby: 'document_name', desc: true })).map((l) => l.document_name)).toEqual(['gamma.txt', 'beta.txt', 'Alpha.txt', 'Alpha.txt']);
      expect(await s().parse.log('nope')).toBeUndefined();
      // A row left open whose document is gone reads as CANCEL.
      await s().parse.reset([b!.id], who.tenantId);
      await s().documents.delete(ds.id, [b!]);
      const open = (await s().parse.logs(ds.id, { orderby: 'create_time', desc: true }))[0]!;
      expect([open.document_name, open.operation_status]).toEqual(['beta.txt', RUN.CANCEL]);
    });

    test('claimNext: up to n RUNNING documents nobody parses, each once; finished, cancelled and idle ones never; released ones again', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const [a, b, c, d, idle] = await seedDocuments(s(), who, ds, ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'idle.txt']);
      expect(await s().parse.claimNext(5, owner, 1)).toEqual([]);
      await s().parse.reset([a!.id, b!.id, c!.id, d!.id], who.tenantId);
      await s().parse.cancel([d!.id]);
      const first = await s().parse.claimNext(2, owner, 10);
      expect(first).toHaveLength(2);
      const rest = await s().parse.claimNext(5, owner, 20);
      expect([...first, ...rest].sort()).toEqual([a!.id, b!.id, c!.id].sort());
      expect(await s().parse.claimNext(5, owner, 30)).toEqual([]);
      expect((await s().parse.running()).every((r) => r.claim?.pid === owner.pid && r.claim.host === owner.host)).toBe(true);
      // Released (not parsed after all): claimable again; finished: never.
      await s().parse.release([rest[0]!], owner.pid);
      expect(await s().parse.claimNext(5, owner, 40)).toEqual([rest[0]]);
      const done = first[0]!;
      await s().parse.finish([], [outcome({ id: done, dataset_id: ds.id }, [{ ...chunkOf({ id: done, dataset_id: ds.id, name: 'x.txt' }, 'parsed', 7), chunk_order: 0 }])], owner.pid, 50);
      expect((await s().documents.get(ds.id, done))!.run).toBe(RUN.DONE);
      await s().parse.release([first[1]!, rest[0]!], owner.pid);
      expect((await s().parse.claimNext(5, owner, 60)).sort()).toEqual([first[1]!, rest[0]!].sort());
      expect((await s().documents.get(ds.id, idle!.id))!.run).not.toBe(RUN.RUNNING);
    });

    test('claimNext by two processes at once: every document to exactly one of them', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const docs = await seedDocuments(s(), who, ds, Array.from({ length: 40 }, (_, i) => `n${i}.txt`));
      await s().parse.reset(docs.map((d) => d.id), who.tenantId);
      const at = Date.now() + 1500;
      const got = await Promise.all([0, 1].map(() => inChild<string[]>(s().locator, 'parse.claimNext', { host: 'h', at })));
      expect([...got[0]!, ...got[1]!].sort()).toEqual(docs.map((d) => d.id).sort());
    }, 60_000);

    test('claims by two processes at once are all kept', async () => {
      const who = await seedTenant(s());
      const ds = await seedDataset(s(), who);
      const docs = await seedDocuments(s(), who, ds, Array.from({ length: 40 }, (_, i) => `d${i}.txt`));
      await s().parse.reset(docs.map((d) => d.id), who.tenantId);
      const at = Date.now() + 1500;
      const pids = await Promise.all([0, 1].map((k) => inChild<number>(s().locator, 'parse.claim', { ids: docs.filter((_, i) => i % 2 === k).map((d) => d.id), host: 'h', at })));
      const running = await s().parse.running();
      expect(running).toHaveLength(40);
      for (const r of running) expect(r.claim?.pid).toBe(pids[docs.findIndex((d) => d.id === r.id) % 2]);
    }, 60_000);
  });
}

import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import { MemoryFullError, messageCost, type MemoryRow, type NewMessage } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore, inChild } from './harness.js';
import { seedOtherTenant, seedTenant, vec } from './seed.js';

function memory(tenant: string, name: string, extra: Partial<MemoryRow> = {}): MemoryRow {
  return {
    id: newId(), tenant_id: tenant, name, avatar: '', memory_type: 1, storage_type: 'table', embd_id: 'e@F', llm_id: 'l@F', permissions: 'me',
    description: '', memory_size: 5_000, forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: '', user_prompt: '', used_bytes: 0, message_count: 0,
    created_by: 'u', create_time: 1, update_time: 1, ...extra,
  };
}

const msg = (content: string, at: number, extra: Partial<NewMessage> = {}): NewMessage => ({
  message_type: 'raw', source_id: 0, user_id: 'u', agent_id: 'a', session_id: 's', content, vector: vec(4, at), valid_at: at, invalid_at: null, fifo_at: at, ...extra,
});

export function memoriesContract(f: StoreFactory): void {
  describe('MemoryStore', () => {
    const { s } = freshStore(f);

    test('create and update make the name free in their transaction; get, list, delete', async () => {
      const who = await seedTenant(s());
      const a = memory(who.tenantId, 'Notes');
      expect(await s().memories.create(a)).toBe('Notes');
      const b = memory(who.tenantId, 'notes');
      expect(await s().memories.create(b)).toBe('notes(1)');
      expect((await s().memories.get(b.id))!.name).toBe('notes(1)');
      expect(await s().memories.update(b.id, who.tenantId, { name: 'NOTES', description: 'x' }, 9)).toBe('NOTES(1)');
      expect(await s().memories.get(b.id)).toMatchObject({ name: 'NOTES(1)', description: 'x', update_time: 9 });
      expect(await s().memories.update(a.id, who.tenantId, { name: 'Notes' }, 10)).toBe('Notes'); // its own name is free for it
      const other = await seedOtherTenant(s());
      await s().memories.create(memory(other.tenantId, 'Shared', { permissions: 'team', memory_type: 3 }));
      await s().memories.create(memory(other.tenantId, 'Hidden'));
      const names = async (q: object) => (await s().memories.list({ tenantIds: [who.tenantId, other.tenantId], ownTenantId: who.tenantId, limit: -1, offset: 0, ...q })).rows.map((m) => m.name).sort();
      expect(await names({})).toEqual(['NOTES(1)', 'Notes', 'Shared']);
      expect(await names({ typeMask: 2 })).toEqual(['Shared']);
      expect(await names({ keywords: 'note' })).toEqual(['NOTES(1)', 'Notes']);
      expect(await names({ storageType: 'graph' })).toEqual([]);
      expect((await s().memories.list({ tenantIds: [who.tenantId], ownTenantId: who.tenantId, limit: 1, offset: 0 })).total).toBe(2);
      await s().memories.insert(a.id, [msg('hello there', 1)], { now: 1 });
      await s().memories.delete(a.id);
      expect(await s().memories.get(a.id)).toBeUndefined();
      expect(await s().memories.countMessages([a.id])).toBe(0);
    });

    test('the FIFO budget: costs charged, the oldest evicted (forgotten first, an item with its raw message), too large refused', async () => {
      const who = await seedTenant(s());
      const m = memory(who.tenantId, 'm', { memory_size: 3 * messageCost('x'.repeat(100), 4) });
      await s().memories.create(m);
      const cost = messageCost('x'.repeat(100), 4);
      const { ids: [r1] } = await s().memories.insert(m.id, [msg('x'.repeat(100), 1)], { now: 1 });
      const { ids: [item] } = await s().memories.insert(m.id, [msg('y'.repeat(100), 1, { message_type: 'semantic', source_id: r1! })], { now: 2 });
      const { ids: [r2] } = await s().memories.insert(m.id, [msg('z'.repeat(100), 2)], { now: 3 });
      expect(await s().memories.usage(m.id)).toEqual({ used: 3 * cost, budget: 3 * cost, messages: 3 });
      await s().memories.forget(r2!, 5);
      const next = await s().memories.insert(m.id, [msg('w'.repeat(100), 3)], { now: 6 });
      expect(next.evicted).toEqual([r2]);
      const again = await s().memories.insert(m.id, [msg('v'.repeat(100), 4)], { now: 7 });
      expect(again.evicted.sort()).toEqual([item, r1].sort());
      expect(await s().memories.usage(m.id)).toEqual({ used: 2 * cost, budget: 3 * cost, messages: 2 });
      await expect(s().memories.insert(m.id, [msg('q'.repeat(4000), 9)], { now: 9 })).rejects.toBeInstanceOf(MemoryFullError);
      await expect(s().memories.insert(m.id, [msg('a'.repeat(100), 9), msg('b'.repeat(100), 9), msg('c'.repeat(100), 9), msg('d'.repeat(100), 9)], { now: 9 })).rejects.toBeInstanceOf(MemoryFullError);
      expect((await s().memories.usage(m.id))!.messages).toBe(2); // nothing of a refused insert
      await expect(s().memories.insert('no such memory', [msg('x', 1)], { now: 1 })).rejects.toThrow(/not found/);
      // A smaller budget evicts at once.
      await s().memories.update(m.id, who.tenantId, { memory_size: cost }, 10);
      expect(await s().memories.usage(m.id)).toEqual({ used: cost, budget: cost, messages: 1 });
      expect(await s().memories.usage('nope')).toBeUndefined();
    });

    test('addRaw: one transaction over several memories; a memory gone or full reported, the others stored, tasks queued', async () => {
      const who = await seedTenant(s());
      const a = memory(who.tenantId, 'a', { memory_type: 3 });
      const tiny = memory(who.tenantId, 'tiny', { memory_size: 10 });
      await s().memories.create(a);
      await s().memories.create(tiny);
      const r = await s().memories.addRaw([
        { memoryId: a.id, message: msg('a message of some length', 1), queueTask: true },
        { memoryId: 'gone', message: msg('x', 1), queueTask: false },
        { memoryId: tiny.id, message: msg('does not fit at all', 1), queueTask: false },
      ], 1);
      expect(r[0]).toMatchObject({ ok: true });
      expect(r[1]).toEqual({ ok: false, gone: true });
      expect(r[2]).toMatchObject({ ok: false });
      expect((r[2] as { full: unknown }).full).toBeInstanceOf(MemoryFullError);
      expect(await s().memories.pendingTasks()).toBe(1);
      const listed = await s().memories.listMessages({ memoryId: a.id, limit: -1, offset: 0 });
      expect(listed.total).toBe(1);
      expect(listed.rows[0]!.task).toMatchObject({ status: 'pending', attempts: 0 });
    });

    test('messages: list with items and filters, get with its vector, forget, status, recent, count, by ids', async () => {
      const who = await seedTenant(s());
      const m = memory(who.tenantId, 'm', { memory_size: 1_000_000 });
      await s().memories.create(m);
      const { ids: [r1] } = await s().memories.insert(m.id, [msg('first raw', 10, { agent_id: 'a1', session_id: 'Sess-One' })], { now: 10 });
      const { ids: [r2] } = await s().memories.insert(m.id, [msg('second raw', 20, { agent_id: 'a2', session_id: 'two', vector: null })], { now: 20 });
      const { ids: [it] } = await s().memories.insert(m.id, [msg('an item', 10, { message_type: 'semantic', source_id: r1! })], { now: 30 });
      const list = await s().memories.listMessages({ memoryId: m.id, limit: -1, offset: 0 });
      expect(list.rows.map((r) => r.message.id)).toEqual([r2, r1]);
      expect(list.rows[1]!.items.map((x) => x.id)).toEqual([it]);
      expect(list.rows[0]!.task).toBeUndefined();
      expect((await s().memories.listMessages({ memoryId: m.id, agentIds: ['a1'], limit: -1, offset: 0 })).rows.map((r) => r.message.id)).toEqual([r1]);
      expect((await s().memories.listMessages({ memoryId: m.id, keywords: 'SESS', limit: -1, offset: 0 })).rows.map((r) => r.message.id)).toEqual([r1]);
      expect((await s().memories.listMessages({ memoryId: m.id, limit: 1, offset: 1 })).rows.map((r) => r.message.id)).toEqual([r1]);
      const got = (await s().memories.getMessage(m.id, r1!))!;
      expect([...got.vector!]).toEqual([...vec(4, 10)]);
      expect((await s().memories.getMessage(m.id, r2!))!.vector).toBeNull();
      expect(await s().memories.getMessage('other', r1!)).toBeUndefined();
      await s().memories.forget(r1!, 40);
      await s().memories.forget(r1!, 50);
      expect((await s().memories.getMessage(m.id, r1!))!.forget_at).toBe(40);
      await s().memories.setStatus(r2!, false);
      expect((await s().memories.getMessage(m.id, r2!))!.status).toBe(0);
      expect((await s().memories.recent({ memoryIds: [m.id], limit: 10 })).map((r) => r.id)).toEqual([r2, it]);
      expect((await s().memories.recent({ memoryIds: [m.id], agentId: 'a2', limit: 10 })).map((r) => r.id)).toEqual([r2]);
      expect((await s().memories.recent({ memoryIds: [m.id], sessionId: 'two', limit: 1 })).map((r) => r.id)).toEqual([r2]);
      expect(await s().memories.countMessages([m.id, 'other'])).toBe(3);
      expect([...(await s().memories.messages([it!, 999_999, r2!])).keys()]).toEqual([it, r2]);
    });

    test('extraction tasks: claim (once), renew, lease run out, retry, finish, release, inputs, storeItems with its lease', async () => {
      // Real clocks: PostgreSQL stamps leases with the server's time.
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const who = await seedTenant(s());
      const m = memory(who.tenantId, 'm', { memory_type: 3, memory_size: 100_000 });
      await s().memories.create(m);
      expect(await s().memories.nextDue()).toBeNull();
      const [add] = await s().memories.addRaw([{ memoryId: m.id, message: msg('User Input: hi\nAgent Response: ho', 100), queueTask: true }], Date.now());
      const raw = (add as { id: number }).id;
      expect(await s().memories.nextDue()).toBeLessThanOrEqual(Date.now() + 50);
      const c = (await s().memories.claimTask(Date.now(), 60_000))!;
      const t = c.task;
      expect(t).toMatchObject({ memory_id: m.id, message_id: raw, attempts: 0 });
      expect(await s().memories.claimTask(Date.now(), 60_000)).toBeUndefined(); // leased
      expect(await s().memories.nextDue()).toBeGreaterThan(Date.now() + 50_000);
      expect(await s().memories.renewTask(c.lease, Date.now(), 60_000)).toBe(true);
      expect(await s().memories.renewTask({ id: t.id, mark: typeof c.lease.mark === 'string' ? '00000000-0000-4000-8000-000000000000' : 1 }, Date.now(), 60_000)).toBe(false);
      expect(await s().memories.taskInput(t)).toMatchObject({ memory: { id: m.id, memory_type: 3 }, raw: { id: raw, fifo_at: 100 } });
      await s().memories.retryTask(t, c.lease, 'model down', Date.now() + 300);
      expect((await s().memories.listMessages({ memoryId: m.id, limit: -1, offset: 0 })).rows[0]!.task).toMatchObject({ attempts: 1, progress_msg: 'model down' });
      expect(await s().memories.claimTask(Date.now(), 60_000)).toBeUndefined(); // not due yet
      await wait(400);
      // A short lease, run out: another claim takes the task, and the first writes nothing.
      const c2 = (await s().memories.claimTask(Date.now(), 100))!;
      expect(c2.task).toMatchObject({ id: t.id, attempts: 1 });
      await wait(200);
      const c3 = (await s().memories.claimTask(Date.now(), 60_000))!;
      expect(c3.task.id).toBe(t.id);
      expect(await s().memories.renewTask(c2.lease, Date.now(), 60_000)).toBe(false);
      const t2 = c3.task;
      expect(await s().memories.storeItems(t2, c2.lease, raw, [msg('item', 100, { message_type: 'semantic', source_id: raw })], { done: 'ok', gone: 'gone', full: () => 'full' }, 4100)).toBe('lost-lease');
      expect(await s().memories.finishTask(t2, c2.lease, 'failed', 'late', 4100)).toBe(false);
      expect(await s().memories.storeItems(t2, c3.lease, raw, [msg('item', 100, { message_type: 'semantic', source_id: raw })], { done: '1 item', gone: 'gone', full: () => 'full' }, 4100)).toBe('stored');
      expect((await s().memories.listMessages({ memoryId: m.id, limit: -1, offset: 0 })).rows[0]).toMatchObject({ task: { status: 'done', attempts: 2, progress_msg: '1 item', update_time: 4100 } });
      expect((await s().memories.listMessages({ memoryId: m.id, limit: -1, offset: 0 })).rows[0]!.items).toHaveLength(1);
      expect(await s().memories.pendingTasks()).toBe(0);
      expect(await s().memories.nextDue()).toBeNull();
      expect(await s().memories.finishTask(t2, c3.lease, 'failed', 'late', 5000)).toBe(false);
      // Another task: its raw message gone before the items are stored; a third released on close.
      await s().memories.addRaw([{ memoryId: m.id, message: msg('second', 200), queueTask: true }], Date.now());
      const cb = (await s().memories.claimTask(Date.now(), 60_000))!;
      await s().memories.delete(m.id);
      expect(await s().memories.taskInput(cb.task)).toBeUndefined();
      const m2 = memory(who.tenantId, 'm2', { memory_type: 3, memory_size: 100_000 });
      await s().memories.create(m2);
      const [cr] = await s().memories.addRaw([{ memoryId: m2.id, message: msg('third', 300), queueTask: true }], Date.now());
      const cc = (await s().memories.claimTask(Date.now(), 60_000))!;
      await s().memories.releaseTasks([cc.lease], Date.now());
      expect(await s().memories.nextDue()).toBeLessThanOrEqual(Date.now() + 50);
      const cd = (await s().memories.claimTask(Date.now(), 60_000))!;
      expect(cd.task.id).toBe(cc.task.id);
      await s().memories.insert(m2.id, [msg('x'.repeat(100), 301)], { now: 301 });
      await s().memories.update(m2.id, who.tenantId, { memory_size: messageCost('x'.repeat(100), 4) }, 302); // evicts the raw message
      expect(await s().memories.storeItems(cd.task, cd.lease, (cr as { id: number }).id, [], { done: 'ok', gone: 'gone', full: () => 'full' }, 303)).toBe('raw-gone');
      expect((await s().memories.listMessages({ memoryId: m2.id, limit: -1, offset: 0 })).total).toBe(1);
    });

    test('two processes adding to one memory at once: the totals stay exact and within the budget', async () => {
      const who = await seedTenant(s());
      const m = memory(who.tenantId, 'race', { memory_size: 20 * messageCost(`p0 message 0 `.repeat(5), 0) });
      await s().memories.create(m);
      const at = Date.now() + 1500;
      const ok = await Promise.all([0, 1].map((k) => inChild<number>(s().locator, 'memories.addRaw', { memory: m.id, n: 30, tag: `p${k}`, at })));
      expect(ok).toEqual([30, 30]);
      const u = (await s().memories.usage(m.id))!;
      const rows = (await s().memories.listMessages({ memoryId: m.id, limit: -1, offset: 0 })).rows.map((r) => r.message);
      expect(u.messages).toBe(rows.length);
      expect(u.used).toBe(rows.reduce((n, r) => n + messageCost(r.content, 0), 0));
      expect(u.used).toBeLessThanOrEqual(u.budget);
    }, 60_000);

    test('two processes draining the same tasks: each task goes to exactly one of them', async () => {
      const who = await seedTenant(s());
      const m = memory(who.tenantId, 'm', { memory_type: 3, memory_size: 1_000_000 });
      await s().memories.create(m);
      for (let i = 0; i < 30; i++) await s().memories.addRaw([{ memoryId: m.id, message: msg(`message ${i}`, 1 + i), queueTask: true }], 1 + i);
      expect(await s().memories.pendingTasks()).toBe(30);
      const at = Date.now() + 1500;
      const won = await Promise.all([0, 1].map(() => inChild<number[]>(s().locator, 'memories.claimAll', { at })));
      const all = [...won[0]!, ...won[1]!];
      expect(all).toHaveLength(30);
      expect(new Set(all).size).toBe(30);
      expect(await s().memories.claimTask(Date.now(), 60_000)).toBeUndefined();
    }, 60_000);
  });
}

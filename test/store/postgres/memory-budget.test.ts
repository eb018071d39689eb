/**
 * The FIFO memory budget on a real PostgreSQL: the same decisions as the SQLite allocator (the
 * same random operations applied to both give the same ids, evictions, refusals and totals), and
 * exact totals when 8 pools add to one memory at once.
 */
import { describe, expect, it } from 'vitest';
import { server, openDb, freshUrl, seedBase } from './fixture.js';
import { insertMessages, resizeMemory, type PgDb, type PgNewMessage } from '../../../src/store/postgres/index.js';
import { openDatabase } from '../../../src/store/index.js';
import { insertMessages as sqliteInsert, resize as sqliteResize, messageCost } from '../../../src/store/sqlite/memories.js';
import { MemoryFullError, type NewMessage } from '../../../src/memory/index.js';

async function memory(db: PgDb, budget: number): Promise<void> {
  await seedBase(db);
  await db.run(`INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, memory_size, created_by, create_time, update_time)
    VALUES ('m1', 't1', 'notes', 'e', 'l', $1, 'u1', 1, 1)`, [budget]);
}

/** A deterministic pseudo-random sequence (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const msg = (content: string, dim: number, fifo: number, source = 0): NewMessage => ({
  message_type: source ? 'semantic' : 'raw', source_id: source, user_id: 'u', agent_id: 'a', session_id: 's', content,
  vector: dim ? Float32Array.from({ length: dim }, (_, i) => (i + 1) / dim) : null, valid_at: fifo, invalid_at: null, fifo_at: fifo,
});
const priced = (m: NewMessage): PgNewMessage => ({ ...m, size: messageCost(m.content, m.vector?.length ?? 0) });

describe.skipIf(!server)('PostgreSQL memory budget', () => {
  it('makes the same decisions as the SQLite allocator over 300 random operations', async () => {
    const pg = await openDb();
    await memory(pg, 3_000);
    const lite = openDatabase(':memory:');
    lite.exec(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t1', 'local', 'e', 1);
      INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, memory_size, created_by, create_time, update_time) VALUES ('m1', 't1', 'notes', 'e', 'l', 3000, 'u1', 1, 1)`);
    const rand = rng(30);
    const raws: number[] = [];
    let t = 1;
    for (let step = 0; step < 300; step++) {
      const r = rand();
      let lres: unknown;
      let pres: unknown;
      if (r < 0.55 || !raws.length) {
        // a raw message, sometimes too large for the whole budget
        const m = msg('x'.repeat(Math.floor(rand() * (rand() < 0.05 ? 4_000 : 400))), rand() < 0.5 ? 16 : 0, t++);
        try {
          lres = lite.transaction(() => sqliteInsert(lite, 'm1', [m], { now: t }))();
        } catch (e) {
          lres = e instanceof MemoryFullError ? { full: e.needed } : e;
        }
        const o = await pg.tx((tx) => insertMessages(tx, 'm1', [priced(m)], { now: t }));
        pres = o.ok ? { ids: o.ids, evicted: o.evicted } : 'needed' in o ? { full: o.needed } : o;
        if (o.ok) raws.push(o.ids[0]!);
      } else if (r < 0.85) {
        // items extracted from a raw message still stored, protected while they are added
        const parent = raws[Math.floor(rand() * raws.length)]!;
        const alive = lite.prepare('SELECT fifo_at FROM memory_message WHERE id = ?').get(parent) as { fifo_at: number } | undefined;
        if (!alive) continue;
        const items = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => msg('y'.repeat(Math.floor(rand() * 300)), 8, alive.fifo_at, parent));
        try {
          lres = lite.transaction(() => sqliteInsert(lite, 'm1', items, { now: t, protect: parent }))();
        } catch (e) {
          lres = e instanceof MemoryFullError ? { full: e.needed } : e;
        }
        const o = await pg.tx((tx) => insertMessages(tx, 'm1', items.map(priced), { now: t, protect: parent }));
        pres = o.ok ? { ids: o.ids, evicted: o.evicted } : 'needed' in o ? { full: o.needed } : o;
      } else if (r < 0.95) {
        // forget a message: it goes first
        const id = raws[Math.floor(rand() * raws.length)]!;
        const at = t++;
        lite.prepare('UPDATE memory_message SET forget_at = ? WHERE id = ?').run(at, id);
        await pg.run('UPDATE memory_message SET forget_at = $1 WHERE id = $2', [at, id]);
        continue;
      } else {
        const budget = 1_000 + Math.floor(rand() * 3_000);
        lres = lite.transaction(() => sqliteResize(lite, 'm1', budget))();
        pres = await pg.tx((tx) => resizeMemory(tx, 'm1', budget));
      }
      expect(pres, `step ${step}`).toEqual(lres);
      const lu = lite.prepare('SELECT used_bytes AS used, message_count AS n FROM memory').get();
      expect(await pg.one('SELECT used_bytes AS used, message_count AS n FROM memory'), `step ${step}`).toEqual(lu);
    }
    const ids = (lite.prepare('SELECT id FROM memory_message ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    expect((await pg.rows<{ id: number }>('SELECT id FROM memory_message ORDER BY id')).map((r) => r.id)).toEqual(ids);
    expect(ids.length).toBeGreaterThan(5);
    lite.close();
  });

  it('8 pools adding to one memory at once: totals equal the rows, never over budget, every message stored or evicted once', async () => {
    const url = await freshUrl('budget');
    const first = await openDb(url);
    const BUDGET = 4_000;
    await memory(first, BUDGET);
    const pools = [first, ...(await Promise.all(Array.from({ length: 7 }, () => openDb(url))))];
    const stored: number[] = [];
    const evicted: number[] = [];
    let running = true;
    let over = 0;
    const watch = (async () => {
      while (running) {
        const u = (await first.one<{ used: number; size: number }>('SELECT used_bytes AS used, memory_size AS size FROM memory'))!;
        if (u.used > u.size) over++;
      }
    })();
    await Promise.all(pools.map(async (db, w) => {
      for (let i = 0; i < 30; i++) {
        const m = priced(msg(`w${w} m${i} `.padEnd(20 + ((w * 37 + i * 11) % 300), '.'), 8, Date.now()));
        const o = await db.tx((tx) => insertMessages(tx, 'm1', [m], { now: Date.now() }));
        if (!o.ok) throw new Error(JSON.stringify(o));
        stored.push(...o.ids);
        evicted.push(...o.evicted);
      }
    }));
    running = false;
    await watch;
    expect(over).toBe(0);
    const t = (await first.one<{ used: number; n: number; sum: number; rows: number }>(`SELECT m.used_bytes AS used, m.message_count AS n,
      (SELECT COALESCE(sum(size), 0)::bigint FROM memory_message) AS sum, (SELECT count(*)::int FROM memory_message) AS rows FROM memory m`))!;
    expect(t.used).toBe(t.sum);
    expect(t.n).toBe(t.rows);
    expect(t.used).toBeLessThanOrEqual(BUDGET);
    expect(new Set(evicted).size).toBe(evicted.length); // no message evicted twice
    const remaining = (await first.rows<{ id: number }>('SELECT id FROM memory_message')).map((r) => r.id);
    expect([...remaining, ...evicted].sort((a, b) => a - b)).toEqual([...stored].sort((a, b) => a - b));
    expect(evicted.length).toBeGreaterThan(100); // the budget was exercised
  });

  it('refuses a message larger than the budget, and a memory that is gone, writing nothing', async () => {
    const db = await openDb();
    await memory(db, 100);
    const ok = await db.tx((tx) => insertMessages(tx, 'm1', [priced(msg('a'.repeat(60), 0, 1))], { now: 1 }));
    expect(ok).toEqual({ ok: true, ids: [1], evicted: [] });
    expect(await db.tx((tx) => insertMessages(tx, 'm1', [priced(msg('b'.repeat(101), 0, 2))], { now: 2 })))
      .toEqual({ ok: false, needed: 101, budget: 100, single: true });
    expect(await db.tx((tx) => insertMessages(tx, 'm1', [priced(msg('b'.repeat(60), 0, 2)), priced(msg('c'.repeat(60), 0, 3))], { now: 2 })))
      .toEqual({ ok: false, needed: 120, budget: 100, single: false });
    expect(await db.tx((tx) => insertMessages(tx, 'nope', [priced(msg('b', 0, 2))], { now: 2 }))).toEqual({ ok: false, gone: true });
    expect(await db.one('SELECT used_bytes, message_count FROM memory')).toEqual({ used_bytes: 60, message_count: 1 });
  });
});

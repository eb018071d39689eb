/**
 * The FIFO allocator against a reference model: after every step of long random sequences of
 * add / forget / disable / resize / delete / reopen, the stored messages, the running total and
 * the count equal the model's, and the total never exceeds the budget. And a process killed inside
 * the allocator's transaction leaves exact totals.
 */
import { describe, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { test, apiError } from '../helpers.js';
import { Client, type Memory } from '../../src/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CHILD = fileURLToPath(new URL('./fixtures/alloc-child.mjs', import.meta.url));
const EMBD = 'ragloom-static-en-128@Builtin';
const DIM = 128;
const cost = (userInput: string, agentResponse: string) => Buffer.byteLength(`User Input: ${userInput}\nAgent Response: ${agentResponse}`) + 4 * DIM;

type Op =
  | { kind: 'add'; words: number }
  | { kind: 'forget'; pick: number }
  | { kind: 'disable'; pick: number }
  | { kind: 'resize'; size: number }
  | { kind: 'deleteMemory' }
  | { kind: 'reopen' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: fc.integer({ min: 0, max: 400 }).map((words) => ({ kind: 'add' as const, words })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ kind: 'forget' as const, pick })) },
  { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: 'disable' as const, pick })) },
  { weight: 2, arbitrary: fc.integer({ min: 600, max: 6000 }).map((size) => ({ kind: 'resize' as const, size })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'deleteMemory' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

interface Ref {
  id: number;
  size: number;
  /** forget order (0 = not forgotten) */
  forgot: number;
}

/** The model: forgotten first (in the order they were forgotten), then oldest first. */
function evictOrder(ms: Ref[]): Ref[] {
  return [...ms].sort((a, b) => (a.forgot && b.forgot ? a.forgot - b.forgot : a.forgot ? -1 : b.forgot ? 1 : a.id - b.id));
}

describe('FIFO allocator', () => {
  test('matches the reference model over random operation sequences', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 20, maxLength: 70 }), async (ops) => {
        const p = `${path}.${run++}`;
        let client = new Client({ path: p });
        let mem: Memory = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
        let budget = 3000;
        await mem.update({ memory_size: budget });
        let model: Ref[] = [];
        let forgets = 0;
        const check = async () => {
          const u = await mem.usage();
          const used = model.reduce((s, m) => s + m.size, 0);
          expect(u).toEqual({ used, budget, messages: model.length });
          expect(u.used).toBeLessThanOrEqual(u.budget);
          const listed = (await mem.listMemoryMessages({ page_size: 10_000 })).messages.message_list.map((m) => m.message_id).sort((a, b) => a - b);
          expect(listed).toEqual(model.map((m) => m.id).sort((a, b) => a - b));
        };
        try {
          for (const op of ops) {
            if (op.kind === 'add') {
              const ui = 'w'.repeat(op.words);
              const size = cost(ui, 'ok');
              if (size > budget) {
                const e = await apiError(client.addMessage({ memory_id: [mem.id], agent_id: 'a', session_id: 's', user_input: ui, agent_response: 'ok' }));
                expect(e.code).toBe(500);
                expect(e.message).toContain('larger than the memory');
              } else {
                await client.addMessage({ memory_id: [mem.id], agent_id: 'a', session_id: 's', user_input: ui, agent_response: 'ok' });
                let used = model.reduce((s, m) => s + m.size, 0);
                for (const v of evictOrder(model)) {
                  if (used + size <= budget) break;
                  model = model.filter((m) => m !== v);
                  used -= v.size;
                }
                const newest = (await mem.listMemoryMessages({ page_size: 1 })).messages.message_list[0]!;
                model.push({ id: newest.message_id, size, forgot: 0 });
              }
            } else if (op.kind === 'forget' && model.length) {
              const m = model[op.pick % model.length]!;
              await new Promise((r) => setTimeout(r, 2)); // distinct forget_at times
              await mem.forgetMessage(m.id);
              if (!m.forgot) m.forgot = ++forgets;
            } else if (op.kind === 'disable' && model.length) {
              await mem.updateMessageStatus(model[op.pick % model.length]!.id, false); // occupies space still
            } else if (op.kind === 'resize') {
              budget = op.size;
              await mem.update({ memory_size: budget });
              let used = model.reduce((s, m) => s + m.size, 0);
              for (const v of evictOrder(model)) {
                if (used <= budget) break;
                model = model.filter((m) => m !== v);
                used -= v.size;
              }
            } else if (op.kind === 'deleteMemory') {
              await client.deleteMemory(mem.id);
              mem = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
              budget = 3000;
              await mem.update({ memory_size: budget });
              model = [];
            } else if (op.kind === 'reopen') {
              await client.close();
              client = new Client({ path: p });
              mem = (await client.listMemory()).memory_list.find((m) => m.id === mem.id)!;
            }
            await check();
          }
        } finally {
          await client.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 240_000);

  test('a message larger than the whole budget is refused and nothing changes', async ({ client }) => {
    const mem = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
    await mem.update({ memory_size: 1000 });
    await client.addMessage({ memory_id: [mem.id], agent_id: 'a', session_id: 's', user_input: 'small', agent_response: 'ok' });
    const before = await mem.usage();
    const e = await apiError(client.addMessage({ memory_id: [mem.id], agent_id: 'a', session_id: 's', user_input: 'x'.repeat(2000), agent_response: 'ok' }));
    expect([e.code, e.message]).toEqual([500, expect.stringContaining('Some messages failed to add. Detail:')]);
    expect(e.message).toMatch(/larger than the memory's whole budget \(memory_size 1000 bytes\)/);
    expect(await mem.usage()).toEqual(before);
  });

  test('eviction cost does not grow with the memory: victims come from an index', async ({ client }) => {
    const mem = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
    const engine = (client as unknown as { t: { api: { engine: { db: Database.Database } } } }).t.api.engine;
    const plan = engine.db.prepare(`EXPLAIN QUERY PLAN SELECT id, source_id, size FROM memory_message WHERE memory_id = ? AND id != ? AND source_id != ?
      ORDER BY (forget_at IS NULL), COALESCE(forget_at, fifo_at), id LIMIT 1`).all(mem.id, 0, -1) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join(' ')).toMatch(/USING (COVERING )?INDEX memory_message_fifo/);
    expect(plan.map((p) => p.detail).join(' ')).not.toMatch(/TEMP B-TREE/);
  });

  describe('a process killed inside the allocator leaves exact totals', () => {
    for (const point of ['afterEvict', 'afterInsert'] as const) {
      test(`killed ${point}`, async ({ dir }) => {
        const path = join(dir, 'kb.db');
        const setup = new Client({ path });
        const mem = await setup.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
        await mem.update({ memory_size: 2500 });
        await setup.close();
        const code = await new Promise<number | null>((res) => {
          const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path, mem.id, point, '9'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
          child.on('exit', (c, sig) => res(sig === 'SIGKILL' ? -9 : c));
        });
        expect(code).toBe(-9);
        const db = new Database(path);
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const m = db.prepare('SELECT used_bytes, message_count, memory_size FROM memory WHERE id = ?').get(mem.id) as { used_bytes: number; message_count: number; memory_size: number };
        const real = db.prepare('SELECT COALESCE(SUM(size), 0) AS used, COUNT(*) AS n FROM memory_message WHERE memory_id = ?').get(mem.id) as { used: number; n: number };
        expect(m.used_bytes).toBe(real.used);
        expect(m.message_count).toBe(real.n);
        expect(m.used_bytes).toBeLessThanOrEqual(m.memory_size);
        // Eight adds committed before the kill; evictions kept them within 2,500 bytes.
        expect(real.n).toBeGreaterThan(0);
        const fts = db.prepare('SELECT COUNT(*) FROM memory_fts').pluck().get() as number;
        expect(fts).toBe(real.n);
        db.close();
      }, 60_000);
    }
  });
});

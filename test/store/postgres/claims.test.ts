/**
 * Job claims against a real PostgreSQL: many claimers split a queue without taking a row twice,
 * a live (renewed) lease is never taken, a killed process's leases run out and another process
 * takes its jobs, and a claimer that stalled past its lease cannot write its result.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { server, openDb, freshUrl, seedBase } from './fixture.js';
import {
  PARSE_JOBS, MEMORY_TASKS, claimJobs, holdLease, enqueueParse, finishParseJob, releaseLease, LeaseKeeper, type Lease, type PgDb,
} from '../../../src/store/postgres/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function queue(db: PgDb, n: number): Promise<void> {
  await seedBase(db, n);
  await db.tx((t) => enqueueParse(t, Array.from({ length: n }, (_, i) => ({ document_id: `doc${i}`, dataset_id: 'd1' }))));
  await db.run('CREATE TABLE job_run (document_id text NOT NULL, owner text NOT NULL)');
}

/** Writes a job's "result" the way a parse does: in one transaction that first holds the lease. */
async function complete(db: PgDb, lease: Lease, owner: string): Promise<boolean> {
  return db.tx(async (t) => {
    if (!(await holdLease(t, PARSE_JOBS, lease))) return false;
    await t.run('INSERT INTO job_run (document_id, owner) VALUES ($1, $2)', [lease.key, owner]);
    return finishParseJob(t, lease);
  });
}

describe.skipIf(!server)('PostgreSQL job claims', () => {
  it('8 claimers on separate pools split 240 jobs: each run once, never two live claims of one job', async () => {
    const url = await freshUrl('claims');
    const first = await openDb(url);
    await queue(first, 240);
    const pools = [first, ...(await Promise.all(Array.from({ length: 7 }, () => openDb(url))))];
    const held = new Map<string, string>();
    const overlaps: string[] = [];
    const worker = async (db: PgDb, w: number) => {
      const me = `w${w}`;
      for (;;) {
        const leases = await claimJobs<string>(db, PARSE_JOBS, 1 + (w % 4), 10_000, me);
        if (!leases.length) return;
        for (const l of leases) {
          if (held.has(l.key)) overlaps.push(`${l.key}: ${held.get(l.key)} and ${me}`);
          held.set(l.key, me);
        }
        for (const l of leases) {
          await sleep(Math.random() * 3);
          held.delete(l.key);
          expect(await complete(db, l, me)).toBe(true);
        }
      }
    };
    await Promise.all(pools.map((db, w) => worker(db, w)));
    expect(overlaps).toEqual([]);
    const runs = await first.rows<{ document_id: string; n: number }>('SELECT document_id, count(*)::int AS n FROM job_run GROUP BY 1');
    expect(runs).toHaveLength(240);
    expect(runs.every((r) => r.n === 1)).toBe(true);
    const owners = await first.rows<{ owner: string }>('SELECT DISTINCT owner FROM job_run');
    expect(owners.length).toBeGreaterThan(4); // the work was shared
    expect(await first.rows('SELECT * FROM parse_job')).toEqual([]);
  });

  it('a renewed lease is never taken; a stalled claimer loses its job to another and cannot write its result', async () => {
    const db = await openDb();
    await queue(db, 2);
    const [a] = await claimJobs<string>(db, PARSE_JOBS, 1, 300, 'A');
    const keeper = new LeaseKeeper<string>(db, PARSE_JOBS, 300);
    keeper.add([a!]);
    const [b] = await claimJobs<string>(db, PARSE_JOBS, 1, 300, 'B');
    expect(b!.key).not.toBe(a!.key);
    // B stalls (no renewal); A keeps renewing. After 3 leases, only B's job is claimable.
    await sleep(900);
    const taken = await claimJobs<string>(db, PARSE_JOBS, 5, 10_000, 'C');
    expect(taken.map((l) => l.key)).toEqual([b!.key]);
    expect(taken[0]!.claims).toBe(2);
    keeper.stop();
    // B wakes up and tries to write: refused, nothing written. C's result is the one kept.
    expect(await complete(db, b!, 'B')).toBe(false);
    expect(await complete(db, taken[0]!, 'C')).toBe(true);
    expect(await complete(db, a!, 'A')).toBe(true);
    expect(await db.rows('SELECT document_id, owner FROM job_run ORDER BY owner')).toEqual([
      { document_id: a!.key, owner: 'A' }, { document_id: b!.key, owner: 'C' },
    ]);
  });

  it("a killed process's jobs are claimed by another once its leases run out, not before", async () => {
    const url = await freshUrl('claims');
    const db = await openDb(url);
    await queue(db, 5);
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), new URL('./fixtures/claimer.ts', import.meta.url).pathname, url, '3', '600'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const theirs = JSON.parse(line.toString()) as string[];
    expect(theirs, err).toHaveLength(3);
    // While it lives (and renews), its jobs stay its own: over two lease lengths.
    await sleep(1_300);
    const mine = await claimJobs<string>(db, PARSE_JOBS, 10, 10_000, 'survivor');
    expect(mine.map((l) => l.key).sort()).toEqual(['doc0', 'doc1', 'doc2', 'doc3', 'doc4'].filter((k) => !theirs.includes(k)));
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await claimJobs(db, PARSE_JOBS, 10, 10_000, 'survivor')).toEqual([]); // not yet expired
    await sleep(700);
    const rescued = await claimJobs<string>(db, PARSE_JOBS, 10, 10_000, 'survivor');
    expect(rescued.map((l) => l.key).sort()).toEqual([...theirs].sort());
    expect(rescued.every((l) => l.claims === 2)).toBe(true);
    for (const l of [...mine, ...rescued]) expect(await complete(db, l, 'survivor')).toBe(true);
    expect((await db.one<{ n: number }>('SELECT count(*)::int AS n FROM job_run'))!.n).toBe(5);
  });

  it('a document queued again while it is parsed runs once more after; a released claim is claimable at once', async () => {
    const db = await openDb();
    await queue(db, 1);
    const [l1] = await claimJobs<string>(db, PARSE_JOBS, 1, 10_000);
    await db.tx((t) => enqueueParse(t, [{ document_id: 'doc0', dataset_id: 'd1' }]));
    expect(await claimJobs(db, PARSE_JOBS, 1, 10_000)).toEqual([]); // still leased
    expect(await complete(db, l1!, 'x')).toBe(true);
    const [l2] = await claimJobs<string>(db, PARSE_JOBS, 1, 10_000);
    expect(l2!.key).toBe('doc0');
    expect(await releaseLease(db, PARSE_JOBS, l2!)).toBe(true);
    expect(await releaseLease(db, PARSE_JOBS, l2!)).toBe(false); // not held any more
    const [l3] = await claimJobs<string>(db, PARSE_JOBS, 1, 10_000);
    expect(l3!.claims).toBe(3);
    expect(await complete(db, l3!, 'x')).toBe(true);
    expect(await db.rows('SELECT * FROM parse_job')).toEqual([]);
  });

  it('memory tasks: only pending tasks whose retry time has come are claimed', async () => {
    const db = await openDb();
    await seedBase(db);
    await db.run(`INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, created_by, create_time, update_time) VALUES ('m1', 't1', 'n', 'e', 'l', 'u1', 1, 1);
      INSERT INTO memory_task (memory_id, message_id, status, create_time, update_time, due_at) VALUES
        ('m1', 1, 'pending', 1, 1, 0), ('m1', 2, 'done', 1, 1, 0), ('m1', 3, 'pending', 1, 1, ragloom_now_ms() + 60000), ('m1', 4, 'pending', 1, 1, 0)`);
    const got = await claimJobs<number>(db, MEMORY_TASKS, 10, 10_000);
    const msgs = await db.rows<{ message_id: number }>('SELECT message_id FROM memory_task WHERE id = ANY($1) ORDER BY id', [got.map((l) => l.key)]);
    expect(msgs.map((r) => r.message_id)).toEqual([1, 4]);
  });

  it('refuses nonsense sizes', async () => {
    const db = await openDb();
    await expect(claimJobs(db, PARSE_JOBS, 0, 1000)).rejects.toThrow(RangeError);
    await expect(claimJobs(db, PARSE_JOBS, 1, 0)).rejects.toThrow(RangeError);
  });
});

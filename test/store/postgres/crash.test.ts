/**
 * The PostgreSQL write paths' crash points: a child process (fixtures/crash-child.ts) runs one
 * write and is SIGKILLed at each of its named points (`faultPoint`, RAGLOOM_FAULT_POINT). The
 * server rolls back what the dead connection had not committed; the test then reopens the
 * database, runs what a live process runs after one died (the staged-bytes sweep, lease expiry)
 * and checks the invariants — every blob's parts whole, no bytes left staged, memory totals equal
 * to the rows and within budget, no job left leased — and that the content is either what it was
 * before the write or what a good run of it leaves (nothing half-applied, nothing committed lost).
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { server, freshUrl } from './fixture.js';
import { openPostgres, sweepStaged, claimJobs, PgDb, PARSE_JOBS, PG_SCHEMA_VERSION } from '../../../src/store/postgres/index.js';

const CHILD = new URL('./fixtures/crash-child.ts', import.meta.url).pathname;

interface Op {
  id: string;
  /** Schema version the database is left at before the write (the migration op stops early). */
  version?: number;
  points: string[];
}

const OPS: Op[] = [
  { id: 'upload', points: ['pg-blob:part-written', 'pg-blob:published'] },
  { id: 'memory-add', points: ['pg-memory:evicted', 'pg-memory:rows-written'] },
  { id: 'parse-finish', points: ['pg-claims:claimed', 'pg-claims:held'] },
  { id: 'migrate', version: 2, points: ['pg-migrate:3:applied', 'pg-migrate:3:committed'] },
];

/** A database holding the rows the ops work on. */
async function prepare(version?: number): Promise<string> {
  const url = await freshUrl('crash');
  const db = await openPostgres({ connection: url, targetVersion: version });
  if (version === undefined) {
    await db.run(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t1', 'x', 'm', 1);
      INSERT INTO "user" (id, nickname, create_time) VALUES ('u1', 'x', 1);
      INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('d1', 't1', 'kb', 'm', 'u1', 1, 1);
      INSERT INTO blob_content (create_time) VALUES (1);
      INSERT INTO blob_part (content_id, n, data) SELECT max(id), 0, '\\x6869' FROM blob_content;
      INSERT INTO blob (sha256, size, parts, content_id) SELECT 'seed', 2, 1, max(id) FROM blob_content;
      INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
        VALUES ('doc0', 'd1', 'a.txt', 'doc', 2, 'seed', 'a.txt', 'naive', 'u1', 1, 1);
      INSERT INTO parse_job (document_id, dataset_id, queued_at) VALUES ('doc0', 'd1', 1);
      CREATE TABLE job_result (document_id text PRIMARY KEY);
      INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, memory_size, created_by, create_time, update_time)
        VALUES ('m1', 't1', 'n', 'e', 'l', 1000, 'u1', 1, 1);
      INSERT INTO memory_message (memory_id, message_type, content, valid_at, fifo_at, size, create_time)
        SELECT 'm1', 'raw', repeat('o', 300), i, i, 300, 1 FROM generate_series(1, 3) i;
      UPDATE memory SET used_bytes = 900, message_count = 3`);
  }
  await db.close();
  return url;
}

function run(url: string, op: string, point?: string): Promise<{ signal: string | null; code: number | null; last: string; err: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pg-crash-'));
  const log = join(dir, 'points');
  const env = { ...process.env, RAGLOOM_FAULT_LOG: log, ...(point ? { RAGLOOM_FAULT_POINT: point } : {}) };
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), CHILD, url, op], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) => child.on('exit', (code, signal) => {
    let lines: string[] = [];
    try {
      lines = readFileSync(log, 'utf8').trim().split('\n');
    } catch {
      // no point reached
    }
    rmSync(dir, { recursive: true, force: true });
    resolve({ code, signal, last: lines[lines.length - 1] ?? '', err });
  }));
}

/** What a live process does after another died, then the invariants; returns the logical content. */
async function recoverAndCheck(url: string): Promise<unknown> {
  const db = await openPostgres({ connection: url });
  try {
    await sweepStaged(db, -1_000); // every staged, unpublished content (nothing else runs here)
    const blobs = await db.rows<{ sha256: string; ok: boolean }>(`SELECT b.sha256, b.parts = count(p.n) AND b.size = COALESCE(sum(length(p.data)), 0) AS ok
      FROM blob b LEFT JOIN blob_part p ON p.content_id = b.content_id GROUP BY b.sha256, b.parts, b.size`);
    expect(blobs.filter((b) => !b.ok)).toEqual([]);
    expect(await db.rows('SELECT id FROM blob_content c WHERE NOT EXISTS (SELECT 1 FROM blob b WHERE b.content_id = c.id)')).toEqual([]);
    const version = (await db.one<{ v: number }>('SELECT max(version) AS v FROM schema_version'))!.v;
    if (version < 7 || !(await db.one("SELECT to_regclass('job_result') AS t"))?.t) return { version };
    const mem = (await db.one<{ used: number; n: number; sum: number; rows: number; budget: number }>(`SELECT used_bytes AS used, message_count AS n,
      memory_size AS budget, (SELECT COALESCE(sum(size), 0)::bigint FROM memory_message) AS sum, (SELECT count(*)::int FROM memory_message) AS rows FROM memory`))!;
    expect(mem.used).toBe(mem.sum);
    expect(mem.n).toBe(mem.rows);
    expect(mem.used).toBeLessThanOrEqual(mem.budget);
    // A dead claimer's lease runs out (300 ms) and the job can be claimed again.
    await new Promise((r) => setTimeout(r, 400));
    const jobs = await db.rows<{ document_id: string }>('SELECT document_id FROM parse_job');
    const claimable = await claimJobs<string>(db, PARSE_JOBS, 10, 60_000, 'checker');
    expect(claimable.map((l) => l.key)).toEqual(jobs.map((j) => j.document_id));
    return {
      version,
      documents: await db.rows('SELECT id, blob_sha256 FROM document ORDER BY id'),
      messages: await db.rows('SELECT id, size FROM memory_message ORDER BY id'),
      jobs: jobs.map((j) => j.document_id),
      results: await db.rows('SELECT document_id FROM job_result'),
    };
  } finally {
    await db.close();
  }
}

describe.skipIf(!server)('PostgreSQL crash points', () => {
  for (const op of OPS) {
    it(`${op.id}: killed at each point, the database is as before or as after, never in between`, async () => {
      if (op.version !== undefined) {
        // A migration step is all or nothing; the next open finishes the upgrade.
        for (const point of op.points) {
          const url = await prepare(op.version);
          const r = await run(url, op.id, point);
          expect(r.signal, `${point}: ${r.err}`).toBe('SIGKILL');
          expect(r.last).toBe(point);
          const raw = await PgDb.connect({ connection: url });
          const state = await raw.one<{ v: number; chunk: boolean }>("SELECT max(version) AS v, to_regclass('chunk') IS NOT NULL AS chunk FROM schema_version");
          await raw.close();
          expect(state, point).toEqual(point.endsWith(':applied') ? { v: 2, chunk: false } : { v: 3, chunk: true });
          expect(await recoverAndCheck(url)).toEqual({ version: PG_SCHEMA_VERSION });
        }
        return;
      }
      const before = await recoverAndCheck(await prepare());
      const goodUrl = await prepare();
      const good = await run(goodUrl, op.id);
      expect(good.code, good.err).toBe(0);
      const after = await recoverAndCheck(goodUrl);
      expect(after).not.toEqual(before);
      for (const point of op.points) {
        const url = await prepare();
        const r = await run(url, op.id, point);
        expect(r.signal, `${point}: ${r.err}`).toBe('SIGKILL');
        expect(r.last).toBe(point);
        const got = await recoverAndCheck(url);
        expect([before, after], point).toContainEqual(got);
      }
    });
  }
});

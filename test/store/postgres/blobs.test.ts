/**
 * File bytes on a real PostgreSQL: streamed in part by part as the source yields them and out
 * part by part, byte-identical, addressed by sha256, stored once, pruned with their last
 * document (also while another upload of the same bytes races the prune), and a failed or
 * abandoned upload leaves nothing.
 */
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { server, openDb, freshUrl, seedBase } from './fixture.js';
import {
  stageBlob, commitBlob, readBlob, getBlob, blobInfo, pruneBlobs, sweepStaged, putBlob, BLOB_PART_BYTES, type PgDb, type PgTx,
} from '../../../src/store/postgres/index.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A transaction on a connection of its own, held open until commit() (to force an interleaving). */
async function rawTx(url: string): Promise<{ tx: PgTx; commit(): Promise<void>; end(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined); // a failed test's drop of the database ends it
  await c.connect();
  await c.query('BEGIN');
  return {
    tx: {
      rows: async (q, p) => (await c.query(q, p)).rows,
      one: async (q, p) => (await c.query(q, p)).rows[0],
      run: async (q, p) => (await c.query(q, p)).rowCount ?? 0,
    } as PgTx,
    commit: async () => void (await c.query('COMMIT')),
    end: () => c.end(),
  };
}

const insertDoc = (t: PgTx, id: string, blob: string) => t.run(`INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location,
  parser_id, created_by, create_time, update_time) VALUES ($1, 'd1', $1, 'doc', 0, $2, $1, 'naive', 'u1', 1, 1)`, [id, blob]);

async function counts(db: PgDb): Promise<{ blobs: number; contents: number; parts: number }> {
  return (await db.one(`SELECT (SELECT count(*)::int FROM blob WHERE sha256 <> 'seed') AS blobs,
    (SELECT count(*)::int FROM blob_content c WHERE NOT EXISTS (SELECT 1 FROM blob WHERE sha256 = 'seed' AND content_id = c.id)) AS contents,
    (SELECT count(*)::int FROM blob_part) AS parts`))!;
}

describe.skipIf(!server)('PostgreSQL blobs', () => {
  it('streams 5.5 MiB in odd-sized pieces: parts written while the source is still yielding, read back byte-identical', async () => {
    const db = await openDb();
    await seedBase(db);
    const data = randomBytes(5.5 * BLOB_PART_BYTES);
    let partsSeenMidway = -1;
    async function* source() {
      let at = 0;
      let i = 0;
      while (at < data.length) {
        const n = [7_001, 300_000, 1, 65_536, 1_048_577][i++ % 5]!;
        yield data.subarray(at, at + n);
        at += n;
        if (partsSeenMidway < 0 && at > 3.2 * BLOB_PART_BYTES) {
          // Another connection sees the first parts committed before the source has finished.
          partsSeenMidway = (await db.one<{ n: number }>('SELECT count(*)::int AS n FROM blob_part'))!.n;
        }
      }
    }
    const staged = await stageBlob(db, source());
    expect(partsSeenMidway).toBeGreaterThanOrEqual(3);
    expect(partsSeenMidway).toBeLessThan(6); // not all: the source was still yielding
    expect(staged).toMatchObject({ sha256: sha(data), size: data.length, parts: 6 });
    await db.tx(async (t) => {
      await commitBlob(t, staged);
      await insertDoc(t, 'big', staged.sha256);
    });
    const sizes: number[] = [];
    const h = createHash('sha256');
    for await (const p of (await readBlob(db, staged.sha256))!) {
      sizes.push(p.byteLength);
      h.update(p);
    }
    expect(sizes).toEqual([1, 1, 1, 1, 1, 0.5].map((x) => x * BLOB_PART_BYTES));
    expect(h.digest('hex')).toBe(sha(data));
    expect(Buffer.compare(Buffer.from((await getBlob(db, staged.sha256))!), data)).toBe(0);
    expect(await blobInfo(db, staged.sha256)).toEqual({ size: data.length, parts: 6 });
    expect(await readBlob(db, 'f'.repeat(64))).toBeUndefined();
  });

  it('stores identical bytes once, even when two pools upload them at once; an empty file is a blob of no parts', async () => {
    const url = await freshUrl('blobs');
    const a = await openDb(url);
    const b = await openDb(url);
    await seedBase(a);
    const data = randomBytes(2.5 * BLOB_PART_BYTES);
    const [s1, s2] = await Promise.all([
      putBlob(a, data, (t, h) => insertDoc(t, 'one', h).then(() => undefined)),
      putBlob(b, data, (t, h) => insertDoc(t, 'two', h).then(() => undefined)),
    ]);
    expect(s1).toBe(sha(data));
    expect(s2).toBe(s1);
    expect(await counts(a)).toEqual({ blobs: 1, contents: 1, parts: 3 });
    expect(await a.rows("SELECT blob_sha256 FROM document WHERE id IN ('one', 'two')")).toEqual([{ blob_sha256: s1 }, { blob_sha256: s1 }]);

    const empty = await putBlob(a, new Uint8Array(0), (t, h) => insertDoc(t, 'empty', h).then(() => undefined));
    expect(empty).toBe(sha(new Uint8Array(0)));
    expect(await blobInfo(a, empty)).toEqual({ size: 0, parts: 0 });
    expect((await getBlob(a, empty))!.byteLength).toBe(0);
  });

  it('prunes a blob with its last document only; a prune and a new upload of the same bytes, in either order, never lose them', async () => {
    const url = await freshUrl('blobs');
    const a = await openDb(url);
    const b = await openDb(url);
    await seedBase(a);
    const data = randomBytes(300_000);
    const h = await putBlob(a, data, (t, x) => insertDoc(t, 'p1', x).then(() => undefined));
    await putBlob(a, data, (t, x) => insertDoc(t, 'p2', x).then(() => undefined));
    await a.tx(async (t) => {
      await t.run("DELETE FROM document WHERE id = 'p1'");
      expect(await pruneBlobs(t, [h])).toBe(0); // p2 still refers to it
    });
    await a.tx(async (t) => {
      await t.run("DELETE FROM document WHERE id = 'p2'");
      expect(await pruneBlobs(t, [h, h])).toBe(1);
    });
    expect(await counts(a)).toEqual({ blobs: 0, contents: 0, parts: 0 });

    // The two orders of a prune and a new upload of the same bytes, each forced with open transactions.
    const data2 = randomBytes(200_000);
    for (const first of ['upload', 'prune'] as const) {
      const h2 = await putBlob(a, data2, (t, x) => insertDoc(t, `old-${first}`, x).then(() => undefined));
      const staged = await stageBlob(b, data2); // the new upload's bytes are staged before either starts
      const up = await rawTx(url);
      const pr = await rawTx(url);
      let pruned: Promise<number>;
      if (first === 'upload') {
        await commitBlob(up.tx, staged); // locks the stored blob
        await pr.tx.run('DELETE FROM document WHERE id = $1', [`old-${first}`]);
        pruned = pruneBlobs(pr.tx, [h2]); // waits for the upload
        await sleep(50);
        await insertDoc(up.tx, `new-${first}`, h2);
        await up.commit();
      } else {
        await pr.tx.run('DELETE FROM document WHERE id = $1', [`old-${first}`]);
        expect(await pruneBlobs(pr.tx, [h2])).toBe(1);
        const published = commitBlob(up.tx, staged); // waits for the prune
        await sleep(50);
        await pr.commit();
        await published;
        await insertDoc(up.tx, `new-${first}`, h2);
        await up.commit();
        pruned = Promise.resolve(1);
      }
      expect(await pruned).toBe(first === 'upload' ? 0 : 1);
      await pr.commit().catch(() => undefined);
      expect(Buffer.compare(Buffer.from((await getBlob(a, h2))!), data2), first).toBe(0);
      expect(await counts(a)).toEqual({ blobs: 1, contents: 1, parts: 1 });
      await a.tx(async (t) => {
        await t.run('DELETE FROM document WHERE id = $1', [`new-${first}`]);
        await pruneBlobs(t, [h2]);
      });
      await up.end();
      await pr.end();
    }
  });

  it('a source that fails midway leaves nothing; an abandoned upload is swept once old', async () => {
    const db = await openDb();
    await seedBase(db);
    async function* failing() {
      yield randomBytes(BLOB_PART_BYTES + 10);
      throw new Error('the upload was cut');
    }
    await expect(stageBlob(db, failing())).rejects.toThrow('the upload was cut');
    expect(await counts(db)).toEqual({ blobs: 0, contents: 0, parts: 0 });

    const staged = await stageBlob(db, randomBytes(10)); // never published: its process died
    expect(await sweepStaged(db)).toBe(0); // young: an upload may still be running
    await db.run('UPDATE blob_content SET create_time = 0 WHERE id = $1', [staged.contentId]);
    expect(await sweepStaged(db)).toBe(1);
    expect(await counts(db)).toEqual({ blobs: 0, contents: 0, parts: 0 });
  });
});

/**
 * File bytes on PostgreSQL, content-addressed by sha256 and streamed: never one buffer of the
 * whole file, in either direction.
 *
 * - Writing (`stageBlob`): the bytes are cut into parts of BLOB_PART_BYTES, each inserted in a
 *   short transaction of its own as the source yields them, while the hash is computed. No
 *   transaction stays open for the upload's length (one would hold back every node's change
 *   feed, feed.ts), and memory holds one part.
 * - Publishing (`commitBlob`, in the transaction that inserts the document): the staged bytes
 *   become the blob of their hash, or — when those bytes are stored already — the staged copy is
 *   dropped and the existing blob is used: identical files are stored once. The existing blob's
 *   row is locked, so a concurrent prune of it waits and then sees the new document.
 * - Reading (`readBlob`): parts in order, a few per statement.
 * - Removing (`pruneBlobs`, in the deleting transaction): blobs no document refers to any more.
 *   The rows are locked first and the references read after (a fresh snapshot), so a document
 *   committed meanwhile keeps its blob.
 * - An upload that died before publishing leaves staged parts no blob points at; `sweepStaged`
 *   removes those older than an hour.
 */
import { createHash } from 'node:crypto';
import { faultPoint } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';

/** Bytes per stored part: large enough that a file is few rows, small enough to hold one in memory. */
export const BLOB_PART_BYTES = 1 << 20;
/** Parts read per statement. */
const PARTS_PER_READ = 4;

export interface StagedBlob {
  readonly contentId: number;
  readonly sha256: string;
  readonly size: number;
  readonly parts: number;
}

async function* chunksOf(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array> | Uint8Array): AsyncIterable<Uint8Array> {
  if (source instanceof Uint8Array) yield source;
  else yield* source;
}

/**
 * Writes the source's bytes as parts of a new, unpublished content (one short transaction per
 * part) and returns it with its sha256; publish it with commitBlob. A failing source removes what
 * was staged and rethrows.
 */
export async function stageBlob(db: PgDb, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array> | Uint8Array, partBytes = BLOB_PART_BYTES): Promise<StagedBlob> {
  const contentId = (await db.tx((t) => t.one<{ id: number }>('INSERT INTO blob_content (create_time) VALUES (ragloom_now_ms()) RETURNING id')))!.id;
  const hash = createHash('sha256');
  const part = Buffer.allocUnsafe(partBytes);
  let fill = 0;
  let n = 0;
  let size = 0;
  const flush = async (): Promise<void> => {
    // Re-running this insert after a lost COMMIT finds the row there: idempotent.
    await db.run('INSERT INTO blob_part (content_id, n, data) VALUES ($1, $2, $3) ON CONFLICT (content_id, n) DO NOTHING',
      [contentId, n++, part.subarray(0, fill)], { idempotent: true });
    faultPoint('pg-blob:part-written');
    fill = 0;
  };
  try {
    for await (const chunk of chunksOf(source)) {
      hash.update(chunk);
      size += chunk.byteLength;
      let at = 0;
      while (at < chunk.byteLength) {
        const take = Math.min(partBytes - fill, chunk.byteLength - at);
        part.set(chunk.subarray(at, at + take), fill);
        fill += take;
        at += take;
        if (fill === partBytes) await flush();
      }
    }
    if (fill > 0) await flush();
  } catch (e) {
    await db.run('DELETE FROM blob_content WHERE id = $1', [contentId], { idempotent: true }).catch(() => undefined);
    throw e;
  }
  return { contentId, sha256: hash.digest('hex'), size, parts: n };
}

/**
 * In the transaction that inserts the document referring to it: publishes the staged bytes under
 * their hash, or drops them when the same bytes are stored already. Returns the sha256.
 */
export async function commitBlob(tx: PgTx, staged: StagedBlob): Promise<string> {
  // On a conflict the existing row is locked (DO UPDATE), so a prune waits for this transaction.
  const r = await tx.one<{ content_id: number }>(`INSERT INTO blob (sha256, size, parts, content_id) VALUES ($1, $2, $3, $4)
    ON CONFLICT (sha256) DO UPDATE SET sha256 = EXCLUDED.sha256 RETURNING content_id`, [staged.sha256, staged.size, staged.parts, staged.contentId]);
  if (Number(r!.content_id) !== staged.contentId) await tx.run('DELETE FROM blob_content WHERE id = $1', [staged.contentId]);
  faultPoint('pg-blob:published');
  return staged.sha256;
}

/**
 * Removes staged contents that were not published (their upload failed after staging); a
 * content published meanwhile (the same bytes committed by this upload's retry) is kept.
 */
export async function dropStaged(db: PgDb, staged: readonly StagedBlob[]): Promise<void> {
  await db.run('DELETE FROM blob_content c WHERE c.id = ANY($1) AND NOT EXISTS (SELECT 1 FROM blob b WHERE b.content_id = c.id)',
    [staged.map((s) => s.contentId)], { idempotent: true });
}

/** Stages and publishes in one call, for bytes already in memory (small uploads). */
export async function putBlob(db: PgDb, bytes: Uint8Array, then: (tx: PgTx, sha256: string) => Promise<void>): Promise<string> {
  const staged = await stageBlob(db, bytes);
  return db.tx(async (t) => {
    const sha = await commitBlob(t, staged);
    await then(t, sha);
    return sha;
  });
}

/** A stored blob's size and part count (undefined when no such blob). */
export async function blobInfo(db: PgDb | PgTx, sha256: string): Promise<{ size: number; parts: number } | undefined> {
  return db.one<{ size: number; parts: number }>('SELECT size, parts FROM blob WHERE sha256 = $1', [sha256]);
}

/**
 * The blob's bytes, part by part (each a Buffer of up to BLOB_PART_BYTES); undefined when there
 * is no such blob. Fails if the blob is removed while it is being read.
 */
export async function readBlob(db: PgDb, sha256: string): Promise<AsyncIterable<Uint8Array> | undefined> {
  const b = await db.one<{ content_id: number; parts: number }>('SELECT content_id, parts FROM blob WHERE sha256 = $1', [sha256]);
  if (!b) return undefined;
  return (async function* () {
    for (let n = 0; n < b.parts; n += PARTS_PER_READ) {
      const rows = await db.rows<{ n: number; data: Buffer }>('SELECT n, data FROM blob_part WHERE content_id = $1 AND n >= $2 AND n < $3 ORDER BY n',
        [b.content_id, n, n + PARTS_PER_READ]);
      const want = Math.min(PARTS_PER_READ, b.parts - n);
      if (rows.length !== want || rows.some((r, i) => r.n !== n + i)) throw new Error(`The file ${sha256} was removed while it was being read`);
      for (const r of rows) yield r.data;
    }
  })();
}

/** The whole blob in one buffer (small files; large ones should be read with readBlob). */
export async function getBlob(db: PgDb, sha256: string): Promise<Uint8Array | undefined> {
  const it = await readBlob(db, sha256);
  if (!it) return undefined;
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts);
}

/** In the deleting transaction: removes those of these blobs no document refers to any more (and their parts). */
export async function pruneBlobs(tx: PgTx, shas: Iterable<string>): Promise<number> {
  const list = [...new Set(shas)];
  if (!list.length) return 0;
  await tx.run('SELECT 1 FROM blob WHERE sha256 = ANY($1) ORDER BY sha256 FOR UPDATE', [list]);
  // A new statement, a new snapshot: documents committed while the locks were awaited are seen.
  return tx.run(`DELETE FROM blob_content c USING blob b WHERE b.content_id = c.id AND b.sha256 = ANY($1)
    AND NOT EXISTS (SELECT 1 FROM document d WHERE d.blob_sha256 = b.sha256)`, [list]);
}

/** Removes staged contents never published (their upload died) older than `olderThanMs`. */
export async function sweepStaged(db: PgDb, olderThanMs = 3_600_000): Promise<number> {
  return db.run(`DELETE FROM blob_content c WHERE c.create_time < ragloom_now_ms() - $1
    AND NOT EXISTS (SELECT 1 FROM blob b WHERE b.content_id = c.id)`, [olderThanMs], { idempotent: true });
}

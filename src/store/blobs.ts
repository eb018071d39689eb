import { cachedStatement, type Db } from './db.js';
import { sha256Hex } from '../util/index.js';

/** Stores bytes once per sha256; returns the hash. */
export function putBlob(db: Db, data: Uint8Array): string {
  const sha = sha256Hex(data);
  cachedStatement(db, 'INSERT OR IGNORE INTO blob (sha256, size, data) VALUES (?, ?, ?)').run(sha, data.length, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  return sha;
}

export function getBlob(db: Db, sha: string): Uint8Array | undefined {
  const row = cachedStatement(db, 'SELECT data FROM blob WHERE sha256 = ?').get(sha) as { data: Buffer } | undefined;
  return row ? new Uint8Array(row.data.buffer, row.data.byteOffset, row.data.byteLength) : undefined;
}

/** Drops blobs no document points at any more (call inside the deleting transaction). */
export function pruneBlobs(db: Db, shas: Iterable<string>): void {
  const del = db.prepare('DELETE FROM blob WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM document WHERE blob_sha256 = ?)');
  for (const s of new Set(shas)) del.run(s, s);
}

import type { Db } from './db.js';

import type { Statement } from 'better-sqlite3';

const lookups = new WeakMap<Db, Statement>();

/**
 * The vec0 table holding `dim`-sized vectors, created on first use. chunk_size 256 (vec0's
 * default is 1,024): each insert writes into its chunk's blob, and a smaller blob has a shorter
 * overflow chain to walk (100k-chunk ingest +8%). Searches never scan vec0 (src/search keeps an
 * in-memory copy), so the smaller chunks cost nothing at query time. Older tables keep theirs.
 */
export function vecTable(db: Db, dim: number): string {
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`Invalid vector dimension ${dim}`);
  const name = `vec_${dim}`;
  let look = lookups.get(db);
  if (!look) lookups.set(db, (look = db.prepare('SELECT table_name FROM vec_index WHERE dim = ?')));
  if (!look.get(dim)) {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING vec0(
      dataset_id TEXT PARTITION KEY, embedding float[${dim}] distance_metric=cosine, chunk_size=256)`);
    db.prepare('INSERT OR IGNORE INTO vec_index (dim, table_name) VALUES (?, ?)').run(dim, name);
  }
  return name;
}


export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function fromBlob(b: Buffer): Float32Array {
  // Copy: the Buffer may be a view into SQLite-owned memory that is reused.
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

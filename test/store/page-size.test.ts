import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import { openDatabase, PAGE_SIZE } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { upsertChunks } from '../../src/store/chunks.js';

const seed = `INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t', 't', 'm', 0);
  INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('ds', 't', 'n', 'm', 'u', 0, 0);
  INSERT INTO blob (sha256, size, data) VALUES ('s', 0, x'');
  INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
    VALUES ('doc', 'ds', 'd.txt', 'doc', 0, 's', 'd.txt', 'naive', 'u', 0, 0);`;

const write = (db: Database.Database, n: number) => db.transaction(() => upsertChunks(db, Array.from({ length: n }, (_, i) => ({
  id: `c${i}`, document_id: 'doc', dataset_id: 'ds', content: `chunk ${i} about wings`, title: 'd.txt', important_keywords: [], questions: [],
  tag_kwd: [], positions: [], available: true, chunk_order: i, token_num: 4, create_time: 't', create_timestamp: 0,
  vector: Float32Array.from({ length: 384 }, (_, j) => Math.cos(i * j)),
}))))();

describe('page size', () => {
  test('a new file gets 16 KiB pages; a file made with other pages keeps them and still works', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-ps-'));
    try {
      const fresh = openDatabase(join(dir, 'new.db'));
      expect(fresh.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
      expect(fresh.pragma('journal_mode', { simple: true })).toBe('wal');
      fresh.close();
      // A file of an earlier ragloom: 4 KiB pages, WAL, every migration applied.
      const oldPath = join(dir, 'old.db');
      const raw = new Database(oldPath);
      raw.pragma('journal_mode = WAL');
      migrate(raw);
      raw.exec(seed);
      raw.close();
      const old = openDatabase(oldPath);
      expect(old.pragma('page_size', { simple: true })).toBe(4096);
      write(old, 2500); // vec0 blobs across several pages and chunks
      expect(old.prepare('SELECT COUNT(*) AS n FROM vec_384').get()).toEqual({ n: 2500 });
      expect(old.prepare("SELECT COUNT(*) AS n FROM chunk_fts WHERE chunk_fts MATCH 'wing'").get()).toEqual({ n: 2500 });
      old.close();
      const again = openDatabase(oldPath, { readonly: true });
      expect(again.pragma('page_size', { simple: true })).toBe(4096);
      expect(again.prepare('SELECT COUNT(*) AS n FROM chunk').get()).toEqual({ n: 2500 });
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

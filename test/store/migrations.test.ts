import { describe, expect } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test, enc } from '../helpers.js';
import { openDatabase } from '../../src/store/db.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/migrations.js';
import { Client } from '../../src/index.js';

/** Rows that are valid at each schema version, written the way that version's code wrote them. */
function seed(db: Database.Database, version: number): void {
  db.exec(`INSERT INTO tenant (id, name, embd_id, llm_id, create_time) VALUES ('t1', 'local', 'universal-sentence-encoder-lite@Builtin', '', 1);
    INSERT INTO user (id, nickname, create_time) VALUES ('u1', 'local', 1);
    INSERT INTO user_tenant (user_id, tenant_id, role) VALUES ('u1', 't1', 'owner');
    INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, parser_config, create_time, update_time)
      VALUES ('d${'0'.repeat(31)}', 't1', 'old', 'universal-sentence-encoder-lite@Builtin', 'u1', '{}', 1, 1);
    INSERT INTO blob (sha256, size, data) VALUES ('abc', 2, x'6869');
    INSERT INTO document (id, dataset_id, name, suffix, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
      VALUES ('doc1', 'd${'0'.repeat(31)}', 'old.txt', 'txt', 'doc', 2, 'abc', 'old.txt', 'naive', 'u1', 1, 1);`);
  if (version >= 2) {
    db.exec(`INSERT INTO chunk (id, document_id, dataset_id, content, create_time, create_timestamp)
      VALUES ('c1', 'doc1', 'd${'0'.repeat(31)}', 'hello old chunk', '2020-01-01 00:00:00', 1);
      INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (1, 'old txt', 'hello old chunk', '', '');`);
  }
}

describe('store migrations', () => {
  test('a fresh file is at the latest version with WAL and foreign keys', async ({ dir }) => {
    const db = openDatabase(join(dir, 'a.db'));
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
  });

  for (let v = 0; v < MIGRATIONS.length; v++) {
    test(`upgrades from version ${v} keeping its data`, async ({ dir }) => {
      const path = join(dir, `v${v}.db`);
      const old = openDatabase(path, { targetVersion: v });
      expect(old.pragma('user_version', { simple: true })).toBe(v);
      if (v >= 1) seed(old, v);
      old.close();

      const db = openDatabase(path);
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      if (v >= 1) {
        expect(db.prepare('SELECT name FROM document WHERE id = ?').get('doc1')).toEqual({ name: 'old.txt' });
        if (v >= 2) expect(db.prepare("SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH 'hello'").all()).toEqual([{ rowid: 1 }]);
      }
      // Every table of the latest schema exists.
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table')").all() as { name: string }[]).map((r) => r.name);
      for (const t of ['tenant', 'user', 'api_token', 'dataset', 'document', 'blob', 'chunk', 'chunk_fts', 'vec_index', 'embedding_cache']) expect(tables).toContain(t);
      db.close();
      if (v >= 1) {
        // The engine opens the upgraded file and adopts the existing local account.
        const client = new Client({ path });
        const [ds] = await client.listDatasets();
        expect(ds!.name).toBe('old');
        await client.close();
      }
    });
  }

  test('a file from a newer ragloom is refused, not damaged', async ({ dir }) => {
    const path = join(dir, 'new.db');
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase(path)).toThrow(/newer than this ragloom/);
  });
});

describe('store consistency', () => {
  test('rows, FTS and vectors change together; blobs are stored once and pruned', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const client = new Client({ path });
    const ds = await client.createDataset({ name: 'kb' });
    const [a, b] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('same') }, { display_name: 'b.txt', blob: enc('same') }]);
    await a!.addChunk({ content: 'alpha beta' });
    await a!.addChunk({ content: 'gamma delta' });
    await b!.addChunk({ content: 'epsilon' });
    await client.close();

    const counts = (db: Database.Database) => ({
      chunks: (db.prepare('SELECT COUNT(*) n FROM chunk').get() as { n: number }).n,
      fts: (db.prepare("SELECT COUNT(*) n FROM chunk_fts WHERE chunk_fts MATCH 'alpha OR gamma OR epsilon'").get() as { n: number }).n,
      vec: (db.prepare('SELECT COUNT(*) n FROM vec_256').get() as { n: number }).n,
      blobs: (db.prepare('SELECT COUNT(*) n FROM blob').get() as { n: number }).n,
    });
    let db = openDatabase(path);
    expect(counts(db)).toEqual({ chunks: 3, fts: 3, vec: 3, blobs: 1 });
    db.close();

    const c2 = new Client({ path });
    const ds2 = (await c2.listDatasets())[0]!;
    await ds2.deleteDocuments({ ids: [a!.id] });
    await c2.close();
    db = openDatabase(path);
    expect(counts(db)).toEqual({ chunks: 1, fts: 1, vec: 1, blobs: 1 });
    db.close();

    const c3 = new Client({ path });
    await c3.deleteDatasets({ delete_all: true });
    await c3.close();
    db = openDatabase(path);
    expect(counts(db)).toEqual({ chunks: 0, fts: 0, vec: 0, blobs: 0 });
    db.close();
  });

  test('the local account survives reopening', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    let client = new Client({ path });
    const ds = await client.createDataset({ name: 'kb' });
    await client.close();
    client = new Client({ path });
    const [again] = await client.listDatasets();
    expect(again!.tenant_id).toBe(ds.tenant_id);
    await client.close();
  });
});

/** `new Client({ path, readonly: true })`: reads work, nothing is ever written, bad files are refused; a remote `timeout_ms`. */
import { describe, expect } from 'vitest';
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '../../src/index.js';
import { test, apiError, enc } from '../helpers.js';

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('readonly Client', () => {
  test('reads, downloads and retrieves; every write is refused with 500 naming the file; the file is unchanged', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const w = new Client({ path });
    const ds = await w.createDataset({ name: 'kb' });
    const [doc] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('Turbine blades are inspected every 500 hours.') }]);
    await ds.parseDocuments([doc!.id]);
    await w.close();
    const before = sha(path);

    const r = new Client({ path, readonly: true });
    const [rds] = await r.listDatasets();
    expect(rds!.document_count).toBe(1);
    const [rdoc] = await rds!.listDocuments();
    expect(Buffer.from(await rdoc!.download()).toString()).toBe('Turbine blades are inspected every 500 hours.');
    expect((await r.retrieve({ dataset_ids: [rds!.id], question: 'turbine inspection' }))[0]!.content).toContain('Turbine');
    for (const write of [
      r.createDataset({ name: 'new' }),
      rds!.uploadDocuments([{ display_name: 'b.txt', blob: enc('x') }]),
      rds!.deleteDocuments({ ids: [rdoc!.id] }),
      rds!.update({ description: 'changed' }),
    ]) {
      const e = await apiError(write);
      expect(e.code).toBe(500);
      expect(e.message).toMatch(new RegExp(`^Database .*kb\\.db: the file is read-only`));
    }
    await r.close();
    expect(sha(path)).toBe(before);
  });

  test('a missing file, an empty one and an older schema are refused (nothing created or upgraded)', async ({ dir }) => {
    const missing = join(dir, 'none.db');
    expect(() => new Client({ path: missing, readonly: true })).toThrow(/^Database .*none\.db: the file cannot be opened/);
    expect(existsSync(missing)).toBe(false);
    const blank = join(dir, 'blank.db');
    new Database(blank).close();
    expect(() => new Client({ path: blank, readonly: true })).toThrow(/blank\.db is not a ragloom store \(schema version 0\)/);
    const old = join(dir, 'old.db');
    await new Client({ path: old }).close();
    const db = new Database(old);
    const v = db.pragma('user_version', { simple: true }) as number;
    db.pragma(`user_version = ${v - 1}`);
    db.close();
    expect(() => new Client({ path: old, readonly: true })).toThrow(new RegExp(`schema version ${v - 1}, older than this ragloom's ${v}: open it once without readonly`));
    const again = new Database(old, { readonly: true });
    expect(again.pragma('user_version', { simple: true })).toBe(v - 1);
    again.close();
    expect(() => new Client({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', readonly: true })).toThrow(/"readonly" is the server's configuration/);
  });
});

describe('remote timeout_ms', () => {
  test('a server that does not answer in time: ApiError 100 "The request timed out"', async () => {
    const srv = createServer(() => undefined); // never answers
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    try {
      const c = new Client({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'ragflow-x', timeout_ms: 200 });
      const t0 = Date.now();
      const e = await apiError(c.listDatasets());
      expect(e.code).toBe(100);
      expect(e.message).toMatch(/^The request timed out after 200 ms: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/datasets/);
      expect(Date.now() - t0).toBeLessThan(5000);
      await c.close();
      expect(() => new Client({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', timeout_ms: -1 })).toThrow(/"timeout_ms" must be a positive number/);
      expect(() => new Client({ path: ':memory:', timeout_ms: 5 })).toThrow(/"timeout_ms" goes with "baseUrl"/);
    } finally {
      srv.closeAllConnections();
      srv.close();
    }
  });
});

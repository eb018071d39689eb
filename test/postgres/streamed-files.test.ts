/**
 * File bytes streamed, not limited by one buffer (issue 30): a 64 MiB file generated piece by
 * piece goes through the Client into PostgreSQL as 1 MiB parts (never one buffer of it: the heap
 * grows far less than the file) and comes back byte-identical; the same through a REST server
 * (multipart, spooled to disk) and into SQLite from a path. Downloads stream out too
 * (Document.downloadStream, locally and over HTTP). A stream that fails midway leaves no
 * document, blob or staged part.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { createDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'ragloom-streamed-'));
afterAll(async () => {
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

const MIB = 1 << 20;
const SIZE = 64 * MIB;

/** Deterministic bytes, 256 KiB at a time (odd-sized pieces would do too): piece k is filled with a pattern of k. */
async function* generated(size = SIZE, piece = 256 * 1024, failAt?: number, at48?: () => Promise<void>): AsyncIterable<Uint8Array> {
  for (let at = 0, k = 0; at < size; at += piece, k++) {
    if (failAt !== undefined && at >= failAt) throw new Error('the sender went away');
    if (at === 48 * MIB) await at48?.();
    const b = new Uint8Array(Math.min(piece, size - at));
    for (let i = 0; i < b.length; i += 4096) b[i] = (k * 31 + i) & 255;
    b[b.length - 1] = k & 255;
    yield b;
  }
}

async function sha(source: AsyncIterable<Uint8Array>): Promise<{ hex: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const p of source) (h.update(p), (size += p.length));
  return { hex: h.digest('hex'), size };
}

async function rows<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

describe.skipIf(!server)(`streamed file bytes${reason ? ` (${reason})` : ''}`, () => {
  test('64 MiB through the Client into PostgreSQL: 64 parts of 1 MiB, heap growth far below the file, read back byte-identical as a stream', async () => {
    const url = await createDatabase(server!, 'stream');
    urls.push(url);
    const c = new Client({ postgres: url });
    try {
      const ds = await c.createDataset({ name: 'big' });
      const want = await sha(generated());
      expect(want.size).toBe(SIZE);
      global.gc?.();
      const heap0 = process.memoryUsage();
      let peak = 0;
      const probe = setInterval(() => {
        const m = process.memoryUsage();
        peak = Math.max(peak, m.heapUsed + m.arrayBuffers - heap0.heapUsed - heap0.arrayBuffers);
      }, 5);
      // When the source has yielded 48 MiB, the store has written most of them as parts already.
      let partsAt48 = -1;
      const at48 = async () => void (partsAt48 = (await rows(url, 'SELECT 1 FROM blob_part')).length);
      const [doc] = await ds.uploadDocuments([{ display_name: 'big.txt', blob: generated(SIZE, 256 * 1024, undefined, at48) }]);
      clearInterval(probe);
      expect(doc!.size).toBe(SIZE);
      expect(partsAt48).toBeGreaterThanOrEqual(40);
      // Loosely (garbage not yet collected counts too): gathering the file would hold its pieces and
      // their concatenation, twice the file; parts add a few parts at a time.
      expect(peak).toBeLessThan(1.5 * SIZE);
      const parts = await rows<{ n: number; len: number }>(url, `SELECT p.n, length(p.data) AS len FROM blob b JOIN blob_part p ON p.content_id = b.content_id
        WHERE b.sha256 = '${want.hex}' ORDER BY p.n`);
      expect(parts.length).toBe(64);
      expect(parts.every((p) => p.len === MIB)).toBe(true);
      // Out as a stream (the store's FileBytes), never whole.
      const api = await (c as unknown as { opening: Promise<{ engine: { store: { documents: { file(s: string): Promise<{ stream(): AsyncIterable<Uint8Array> } | undefined> } } } }> }).opening;
      const file = (await api.engine.store.documents.file(want.hex))!;
      expect(await sha(file.stream())).toEqual(want);
      // Through the Client as a stream: read as consumed, the heap again far below the file.
      global.gc?.();
      const before = process.memoryUsage();
      let most = 0;
      const out = createHash('sha256');
      let size = 0;
      let largest = 0;
      for await (const piece of await doc!.downloadStream()) {
        out.update(piece);
        size += piece.length;
        largest = Math.max(largest, piece.length);
        const m = process.memoryUsage();
        most = Math.max(most, m.heapUsed + m.arrayBuffers - before.heapUsed - before.arrayBuffers);
      }
      expect({ hex: out.digest('hex'), size }).toEqual(want);
      expect(largest).toBeLessThanOrEqual(MIB);
      expect(most).toBeLessThan(1.5 * SIZE);
      expect(await sha((async function* () { yield await doc!.download(); })())).toEqual(want);
    } finally {
      await c.close();
    }
  }, 120_000);

  test('a stream that fails midway: no document, no blob, no staged part left; the same upload then succeeds', async () => {
    const url = await createDatabase(server!, 'stream');
    urls.push(url);
    const c = new Client({ postgres: url });
    try {
      const ds = await c.createDataset({ name: 'cut' });
      await expect(ds.uploadDocuments([{ display_name: 'ok.txt', blob: new TextEncoder().encode('fine') }, { display_name: 'cut.txt', blob: generated(8 * MIB, 256 * 1024, 5 * MIB) }]))
        .rejects.toThrow('the sender went away');
      expect(await ds.listDocuments()).toEqual([]);
      expect(await rows(url, 'SELECT 1 FROM blob_part')).toEqual([]);
      expect(await rows(url, 'SELECT 1 FROM blob_content')).toEqual([]);
      const [doc] = await ds.uploadDocuments([{ display_name: 'cut.txt', blob: generated(8 * MIB) }]);
      expect(doc!.size).toBe(8 * MIB);
    } finally {
      await c.close();
    }
  }, 60_000);

  test('over HTTP (multipart, spooled by the server) into PostgreSQL, and from a path into SQLite: byte-identical both ways', async () => {
    const url = await createDatabase(server!, 'stream');
    urls.push(url);
    const path = join(dir, 'big.txt');
    await writeFile(path, generated(16 * MIB));
    const want = await sha(generated(16 * MIB));
    const s = await startServer({ postgres: url, port: 0 });
    const remote = new Client({ baseUrl: s.url, apiKey: s.apiKey! });
    const local = new Client({ path: join(dir, 'kb.db') });
    try {
      const rds = await remote.createDataset({ name: 'http' });
      const [a, b] = await rds.uploadDocuments([{ display_name: 'streamed.txt', blob: generated(16 * MIB) }, { path }]);
      expect([a!.name, a!.size, b!.name, b!.size]).toEqual(['streamed.txt', 16 * MIB, 'big.txt', 16 * MIB]);
      expect(await sha((async function* () { yield await a!.download(); })())).toEqual(want);
      // Sent by the server as it reads the store, received as it arrives.
      expect(await sha(await b!.downloadStream())).toEqual(want);
      const lds = await local.createDataset({ name: 'file' });
      const [l] = await lds.uploadDocuments([{ path }]);
      expect(await sha((async function* () { yield await l!.download(); })())).toEqual(want);
      await expect(lds.uploadDocuments([{ path: join(dir, 'missing.txt') }])).rejects.toThrow(/missing\.txt: cannot read .*ENOENT/);
    } finally {
      await remote.close();
      await local.close();
      await s.close();
    }
  }, 120_000);
});

/** Multipart uploads (field `file`) and downloads over HTTP: byte-identical, named, limited. */
import { describe, expect } from 'vitest';
import { randomBytes } from 'node:crypto';
import { test, upload, http } from './fixtures.js';

describe('POST /datasets/{id}/documents + GET /datasets/{id}/documents/{doc}', () => {
  test('several files in one request; each downloads byte for byte with its name', async ({ api }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'files' })).body.data.id;
    const binary = new Uint8Array(randomBytes(300_000));
    const files = { 'notes.md': '# Notes\n\nünïcödé ✓\n', 'scan.pdf': binary, 'data.csv': 'a,b\n1,2\n' };
    const up = await upload(api, ds, files);
    expect(up.status).toBe(200);
    expect(Object.keys(up.body)).toEqual(['code', 'data']);
    expect(up.body.data.map((d: { name: string }) => d.name)).toEqual(['notes.md', 'scan.pdf', 'data.csv']);
    expect(up.body.data[1]).toEqual(expect.objectContaining({ size: binary.length, dataset_id: ds, run: 'UNSTART', chunk_method: 'naive' }));

    for (const [i, [name, data]] of Object.entries(files).entries()) {
      const res = await fetch(`${api.base}/datasets/${ds}/documents/${up.body.data[i].id}`, { headers: { authorization: `Bearer ${api.key}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename=${name}`);
      const got = new Uint8Array(await res.arrayBuffer());
      const want = typeof data === 'string' ? new TextEncoder().encode(data) : data;
      expect(got.length).toBe(want.length);
      expect(Buffer.compare(Buffer.from(got), Buffer.from(want))).toBe(0);
    }
  });

  test('names: duplicates get (1), non-ASCII names are kept and sent RFC 5987-encoded', async ({ api }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'files' })).body.data.id;
    const up = await upload(api, ds, { 'résumé été.txt': 'one' });
    const again = await upload(api, ds, { 'résumé été.txt': 'two' });
    expect(up.body.data[0].name).toBe('résumé été.txt');
    expect(again.body.data[0].name).toBe('résumé été(1).txt');
    const res = await fetch(`${api.base}/datasets/${ds}/documents/${up.body.data[0].id}`, { headers: { authorization: `Bearer ${api.key}` } });
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="resume ete.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%C3%A9t%C3%A9.txt`);
    expect(await res.text()).toBe('one');
  });

  test('errors: an empty file, an unknown document, a file over uploadLimit (HTTP 413)', async ({ serve }) => {
    const srv = await serve({ uploadLimit: 1000 });
    const api = http(srv);
    const ds = (await api.call('POST', '/datasets', { name: 'files' })).body.data.id;
    const empty = await upload(api, ds, { 'empty.txt': new Uint8Array(0) });
    expect(empty.body.code).toBe(0);
    const dl = await api.call('GET', `/datasets/${ds}/documents/${empty.body.data[0].id}`);
    expect(dl.body).toEqual({ code: 102, message: 'This file is empty.' });
    expect((await api.call('GET', `/datasets/${ds}/documents/nope`)).body).toEqual({ code: 102, message: 'The dataset not own the document nope.' });

    const big = await upload(api, ds, { 'big.txt': new Uint8Array(5000).fill(65) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ code: 100, message: "<RequestEntityTooLarge '413: Request Entity Too Large'>", data: null });
    // Nothing was stored.
    expect((await api.call('GET', `/datasets/${ds}/documents`)).body.data.total).toBe(1);
  });
});

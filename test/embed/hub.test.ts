import { createReadStream, existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBuiltinModelPath } from '../../src/embed/builtin-models.js';
import { pullModel } from '../../src/embed/providers/hub.js';
import { TransformersEmbedder } from '../../src/embed/providers/transformers.js';

/** The smallest shipped model, served by a loopback "hub" at /<owner>/<name>/resolve/main/<file>. */
const source = resolveBuiltinModelPath('ragloom-static-en-128');
let server: Server;
let host: string;
let dir: string;
const requested: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-pull-'));
  server = createServer((req, res) => {
    const m = /^\/test-org\/static-128\/resolve\/main\/(.+)$/.exec(decodeURIComponent(req.url ?? ''));
    requested.push(`${req.method} ${req.url}`);
    const file = m ? join(source, normalize(m[1]!)) : '';
    if (!m || !file.startsWith(source) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(statSync(file).size) });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

describe('pullModel()', () => {
  it('fails fast with a clear message when the hub cannot be reached', async () => {
    const t = Date.now();
    await expect(pullModel('test-org/static-128', dir, { remoteHost: 'http://127.0.0.1:1/', connectTimeoutMs: 2_000 })).rejects.toThrow(
      /Cannot reach the model hub at http:\/\/127\.0\.0\.1:1\/ .*needs network access/,
    );
    expect(Date.now() - t).toBeLessThan(5_000);
  });

  it('says when the model does not exist', async () => {
    await expect(pullModel('test-org/missing', dir, { remoteHost: host })).rejects.toThrow(/Model "test-org\/missing" was not found .*HTTP 404/);
  });

  it('rejects an invalid id', async () => {
    await expect(pullModel('../etc', dir)).rejects.toThrow(TypeError);
  });

  it('downloads once into the cache, after which the model loads offline', async () => {
    const events: string[] = [];
    const r = await pullModel('test-org/static-128', dir, { remoteHost: host, onProgress: (p) => events.push(p.status) });
    expect(r).toMatchObject({ hubId: 'test-org/static-128', dim: 128 });
    expect(events).toContain('done');
    expect(requested.some((x) => x.includes('onnx/model.onnx'))).toBe(true);

    requested.length = 0;
    const cached = new TransformersEmbedder({ id: 'static-128@HuggingFace', hubId: 'test-org/static-128', cacheDir: dir });
    const local = new TransformersEmbedder({ id: 'static-128@Builtin', path: source });
    const [a] = await cached.embed(['pressure distribution on a cone']);
    const [b] = await local.embed(['pressure distribution on a cone']);
    expect(requested).toEqual([]); // nothing fetched: served from the cache folder
    expect(Array.from(a!)).toEqual(Array.from(b!));
    await cached.close();
    await local.close();
  });
});

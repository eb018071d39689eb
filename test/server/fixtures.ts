/**
 * Test fixtures for `ragloom serve`: a server on a loopback port over a fresh database in a
 * temporary folder, and small fetch helpers that speak its REST interface.
 */
import { test as base, expect } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/index.js';

export interface Http {
  /** `${url}/api/v1` */
  base: string;
  key: string;
  /** JSON request with the admin key (or `key`); returns status, parsed body and headers. */
  call(method: string, path: string, body?: unknown, opts?: { key?: string | null; headers?: Record<string, string>; raw?: string }): Promise<Reply>;
}

export interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
}

export function http(srv: { url: string; apiKey: string }): Http {
  const baseUrl = `${srv.url}/api/v1`;
  return {
    base: baseUrl,
    key: srv.apiKey,
    async call(method, path, body, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      const key = opts.key === undefined ? srv.apiKey : opts.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let payload: string | undefined = opts.raw;
      if (body !== undefined && payload === undefined) {
        payload = JSON.stringify(body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(baseUrl + path, { method, headers, body: payload });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
  };
}

export const test = base.extend<{ dir: string; serve: (o?: Partial<ServerOptions>) => Promise<RunningServer>; srv: RunningServer; api: Http }>({
  // eslint-disable-next-line no-empty-pattern
  dir: async ({}, use) => {
    const d = await mkdtemp(join(tmpdir(), 'ragloom-srv-'));
    await use(d);
    await rm(d, { recursive: true, force: true });
  },
  /** Starts a server over `${dir}/kb.db` (closed in teardown). */
  serve: async ({ dir }, use) => {
    const started: RunningServer[] = [];
    await use(async (o = {}) => {
      const s = await startServer({ path: join(dir, 'kb.db'), port: 0, ...o });
      started.push(s);
      return s;
    });
    for (const s of started) await s.close();
  },
  srv: async ({ serve }, use) => {
    await use(await serve());
  },
  api: async ({ srv }, use) => {
    await use(http(srv));
  },
});

export const DOCS: Record<string, string> = {
  'tides.md': '# Tides\n\nThe gravitational pull of the moon raises the ocean tides twice a day. Spring tides happen at new and full moon, when the sun and the moon pull together.',
  'bread.md': '# Bread\n\nKnead the dough for ten minutes. Let it rise for one hour in a warm place, then bake it at 220 degrees for thirty minutes.',
};

/** Uploads files (multipart field `file`) and returns the response body. */
export async function upload(api: Http, datasetId: string, files: Record<string, Uint8Array | string>, key = api.key): Promise<Reply> {
  const form = new FormData();
  for (const [name, data] of Object.entries(files)) {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    form.append('file', new Blob([bytes]), name);
  }
  const res = await fetch(`${api.base}/datasets/${datasetId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text, headers: res.headers };
}

/** Polls the documents until each is DONE (or fails the test on FAIL / timeout). */
export async function waitParsed(api: Http, datasetId: string, ids: string[], timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const r = await api.call('GET', `/datasets/${datasetId}/documents?id=${id}`);
      const run = r.body.data?.docs?.[0]?.run;
      if (run === 'DONE') break;
      expect(run, JSON.stringify(r.body)).not.toBe('FAIL');
      if (Date.now() > until) throw new Error(`document ${id} not parsed in time (${run})`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }
}

/** A dataset with DOCS uploaded and parsed; returns its id and the document ids. */
export async function parsedDataset(api: Http, name = 'science', key = api.key): Promise<{ datasetId: string; docIds: string[] }> {
  const ds = await api.call('POST', '/datasets', { name }, { key });
  expect(ds.body.code, ds.text).toBe(0);
  const up = await upload(api, ds.body.data.id, DOCS, key);
  expect(up.body.code, up.text).toBe(0);
  const ids = up.body.data.map((d: { id: string }) => d.id);
  const p = await api.call('POST', `/datasets/${ds.body.data.id}/chunks`, { document_ids: ids }, { key });
  expect(p.body, p.text).toEqual({ code: 0 });
  await waitParsed({ ...api, call: (m, pth, b, o = {}) => api.call(m, pth, b, { key, ...o }) }, ds.body.data.id, ids);
  return { datasetId: ds.body.data.id, docIds: ids };
}

/** Reads an SSE response body into its `data:` payloads (strings). */
export async function sseEvents(res: Response): Promise<string[]> {
  const text = await res.text();
  return text.split('\n\n').filter((s) => s.length > 0).map((s) => {
    expect(s.startsWith('data:'), s).toBe(true);
    return s.slice(5);
  });
}

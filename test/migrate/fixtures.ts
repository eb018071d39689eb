import { test as base } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';

export interface Srv {
  url: string;
  apiKey: string;
  close(): Promise<void>;
}

/** A temp folder, and servers started on loopback in it (closed after the test). */
export const test = base.extend<{ dir: string; serve: (name: string) => Promise<Srv> }>({
  // eslint-disable-next-line no-empty-pattern
  dir: async ({}, use) => {
    const d = await mkdtemp(join(tmpdir(), 'ragloom-migrate-'));
    await use(d);
    await rm(d, { recursive: true, force: true });
  },
  serve: async ({ dir }, use) => {
    const open: Srv[] = [];
    await use(async (name) => {
      const s = await startServer({ path: join(dir, `${name}.db`), port: 0, host: '127.0.0.1' });
      open.push(s);
      return s;
    });
    for (const s of open) await s.close();
  },
});

export const remote = (s: Srv, apiKey = s.apiKey) => new Client({ baseUrl: s.url, apiKey });

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** An admin-made user in a tenant of its own: `{ id, tenant_id, api_key }`. */
export async function createUser(s: Srv, nickname: string): Promise<{ id: string; tenant_id: string; api_key: string }> {
  const r = await fetch(`${s.url}/api/v1/users`, {
    method: 'POST', headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `${nickname}@example.com`, nickname }),
  });
  const body = (await r.json()) as { code: number; message?: string; data: { id: string; tenant_id: string; api_key: string } };
  if (body.code !== 0) throw new Error(body.message);
  return body.data;
}

export async function addMember(s: Srv, ownerKey: string, tenantId: string, userId: string): Promise<void> {
  const r = await fetch(`${s.url}/api/v1/tenants/${tenantId}/members`, {
    method: 'POST', headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: userId, role: 'normal' }),
  });
  const body = (await r.json()) as { code: number; message?: string };
  if (body.code !== 0) throw new Error(body.message);
}

import { test as base } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, ApiError } from '../src/index.js';

export const test = base.extend<{ dir: string; client: Client }>({
  // eslint-disable-next-line no-empty-pattern
  dir: async ({}, use) => {
    const d = await mkdtemp(join(tmpdir(), 'ragloom-'));
    await use(d);
    await rm(d, { recursive: true, force: true });
  },
  client: async ({ dir }, use) => {
    const c = new Client({ path: join(dir, 'kb.db') });
    await use(c);
    await c.close();
  },
});

/** Awaits `p` and returns the ApiError it rejected with (fails the test otherwise). */
export async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw new Error(`expected ApiError, got ${String(e)}`);
  }
  throw new Error('expected the call to reject');
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

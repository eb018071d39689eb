/** `ragloom serve`: prints where it listens and the admin key once; SIGTERM / SIGINT close it gracefully. */
import { describe, expect, vi, afterEach } from 'vitest';
import { join } from 'node:path';
import { test } from './fixtures.js';
import { main } from '../../src/cli/main.js';

afterEach(() => vi.restoreAllMocks());

/** Runs `ragloom serve` in-process until `signal` is emitted once its banner is out. */
async function serveOnce(args: string[], signal: 'SIGTERM' | 'SIGINT', during: (out: string) => Promise<void>): Promise<{ code: number; out: string }> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((out += String(c)), true));
  const running = main(['serve', ...args]);
  for (let i = 0; i < 400 && !/Admin API key/.test(out); i++) await new Promise((ok) => setTimeout(ok, 25));
  try {
    await during(out);
  } finally {
    process.emit(signal);
  }
  const code = await running;
  vi.restoreAllMocks();
  return { code, out };
}

describe('ragloom serve', () => {
  test('first start prints the key; later starts do not; the key works; signals stop it', async ({ dir }) => {
    const db = join(dir, 'kb.db');
    let key = '';
    const first = await serveOnce(['--db', db, '--port', '0'], 'SIGTERM', async (out) => {
      const url = /at (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/.exec(out)![1]!;
      key = /Admin API key \(shown once; keep it\): (ragflow-\S+)/.exec(out)![1]!;
      const res = await fetch(`${url}/api/v1/datasets`, { headers: { authorization: `Bearer ${key}` } });
      expect(await res.json()).toEqual({ code: 0, data: [], total_datasets: 0 });
    });
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/shutting down/);

    const second = await serveOnce(['--db', db, '--port', '0', '--host', '127.0.0.1'], 'SIGINT', async (out) => {
      expect(out).not.toMatch(/ragflow-/);
      const url = /at (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/.exec(out)![1]!;
      expect((await fetch(`${url}/api/v1/datasets`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    });
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/printed when this database was first served/);
  });

  test('a bad port is a usage error', async ({ dir }) => {
    let err = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((err += String(c)), true));
    expect(await main(['serve', '--db', join(dir, 'kb.db'), '--port', 'eighty'])).toBe(1);
    expect(err).toMatch(/Usage: ragloom serve/);
  });
});

/** Per-test stores for the contract suite, and child processes that act on the same store. */
import { afterEach, beforeEach } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Store, StoreLocator } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A fresh store for each test of the enclosing describe; `s()` is the current one. */
export function freshStore(f: StoreFactory): { s: () => Store; extra: (s: Store) => void } {
  let cur: Store | undefined;
  const others: Store[] = [];
  beforeEach(async () => {
    cur = await f.create();
  });
  afterEach(async () => {
    for (const o of others.splice(0)) await o.close();
    if (cur) {
      await cur.close();
      await f.drop(cur);
    }
    cur = undefined;
  });
  return { s: () => cur!, extra: (s) => others.push(s) };
}

/**
 * Runs `scenario` of child.ts in another process on the store at `locator`; resolves with what it
 * printed (one JSON value). The children of one call start together.
 */
export function inChild<T = unknown>(locator: StoreLocator, scenario: string, args: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(locator), scenario, JSON.stringify(args)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('exit', (code) => {
      if (code !== 0) reject(new Error(`child ${scenario} exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as T);
    });
  });
}

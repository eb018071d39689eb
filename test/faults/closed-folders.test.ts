/**
 * `npm test` run as root from folders other users cannot enter. bad-storage.test.ts runs a child
 * as uid 65534 (root ignores file modes); that child must reach the test's files and the
 * repository. Here the same test file runs in a child vitest:
 *
 * - with TMPDIR a 0700 folder (a root home's tmp): it must pass, its files placed where uid 65534
 *   can reach them;
 * - from the repository bind-mounted below a 0700 folder (a clone under /root): the read-only
 *   cases must be skipped, with a message saying why, and everything else pass.
 *
 * Only as root (the user change needs it); the second case also needs `mount --bind`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.getuid?.() === 0;
const REPO = fileURLToPath(new URL('../..', import.meta.url));
if (!ROOT) console.warn('[closed-folders] skipped: not root, so no test changes user and folder modes apply to every child alike');

/** The environment of a fresh `npx vitest` (none of this run's worker settings). */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(VITEST|TINYPOOL|NODE_OPTIONS$)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

function runBadStorage(cwd: string, tmp: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(cwd, 'node_modules/vitest/vitest.mjs'), 'run', 'test/faults/bad-storage.test.ts', '--reporter=verbose'], {
    cwd, encoding: 'utf8', timeout: 240_000, env: childEnv({ TMPDIR: tmp, NO_COLOR: '1', FORCE_COLOR: '0' }),
  });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

let closed: string;
beforeAll(() => {
  if (!ROOT) return;
  closed = mkdtempSync(join('/tmp', 'ragloom-closed-'));
  chmodSync(closed, 0o700);
});
afterAll(() => {
  if (closed) rmSync(closed, { recursive: true, force: true });
});

describe.skipIf(!ROOT)('bad-storage.test.ts as root, from folders closed to other users', () => {
  test('TMPDIR is a 0700 folder: the read-only cases still run as uid 65534, and pass', () => {
    const tmp = join(closed, 'tmp');
    mkdirSync(tmp, { mode: 0o700 });
    const r = runBadStorage(REPO, tmp);
    expect(r.status, r.out.slice(-3000)).toBe(0);
    expect(r.out).toMatch(/✓ .*a read-only file \(0444\).*as uid 65534/);
  }, 300_000);

  test('the repository is below a 0700 folder: the read-only cases are skipped, saying why; the rest pass', (ctx) => {
    const mnt = join(closed, 'clone');
    mkdirSync(mnt);
    const mount = spawnSync('mount', ['--bind', REPO, mnt], { encoding: 'utf8' });
    if (mount.status !== 0) ctx.skip(`bind mounts are not permitted here (${mount.stderr.trim()})`);
    try {
      const r = runBadStorage(mnt, '/tmp');
      expect(r.status, r.out.slice(-3000)).toBe(0);
      expect(r.out).toContain(`read-only cases skipped: the repository's folder ${closed} is closed to other users (mode 0700)`);
      expect(r.out).toMatch(/↓ .*a read-only file \(0444\)|a read-only file \(0444\).*skipped/);
      expect(r.out).toMatch(/✓ .*max_page_count reached/);
    } finally {
      spawnSync('umount', [mnt]);
    }
  }, 300_000);
});

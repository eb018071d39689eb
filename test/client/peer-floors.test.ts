/**
 * The lower ends of the integrations' peer ranges: the packed tarball installed in a blank project
 * with the lowest `@langchain/core`, `ai`, `@modelcontextprotocol/sdk` and `zod` that ragloom's
 * peerDependencies admit, and the LangChain, AI SDK and MCP adapters' main paths run there
 * (peer-floors/check.mjs; `@llamaindex/core`'s range starts at the tested version). The rest of the
 * suite runs on the lockfile's versions (the newest of each range).
 *
 * Opt-in: it installs from the npm registry and compiles better-sqlite3 (about 5 minutes on two
 * busy cores). Run it alone (it builds dist/, as the tarball test does):
 * RAGLOOM_PEER_FLOORS=1 npx vitest run test/client/peer-floors.test.ts
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const skip = process.env.RAGLOOM_PEER_FLOORS !== '1' ? 'set RAGLOOM_PEER_FLOORS=1 to run it (installs from the npm registry, ~5 min)' : '';
if (skip) console.warn(`peer-floors test skipped: ${skip}`);

const PEERS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;

/** The lowest version a `^x.y.z` range (or the first of `a || b`) admits. */
function floor(range: string): string {
  const m = /^\^(\d+\.\d+\.\d+)/.exec(range.split('||')[0]!.trim());
  if (!m) throw new Error(`peer range ${range}: expected ^x.y.z`);
  return m[1]!;
}

function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && !/^RAGLOOM_/.test(k)) env[k] = v;
  return env;
}

let work = '';
let app = '';
let install = { status: null as number | null, out: '' };
const floors = {
  '@langchain/core': floor(PEERS['@langchain/core']!), ai: floor(PEERS.ai!),
  '@modelcontextprotocol/sdk': floor(PEERS['@modelcontextprotocol/sdk']!), zod: floor(PEERS.zod!),
};

beforeAll(() => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'ragloom-peer-floors-'));
  app = join(work, 'app');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  const packed = JSON.parse(execFileSync('npm', ['pack', '--pack-destination', work, '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', env: userEnv() })) as Array<{ filename: string }>;
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'floors-app', version: '1.0.0', private: true, type: 'module' }));
  const pkgs = Object.entries(floors).map(([p, v]) => `${p}@${v}`);
  const r = spawnSync('npm', ['install', join(work, packed[0]!.filename), ...pkgs, '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8', env: userEnv(), timeout: 900_000 });
  install = { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  copyFileSync(join(import.meta.dirname, 'peer-floors', 'check.mjs'), join(app, 'check.mjs'));
}, 960_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!!skip)("the integrations on the lowest versions of their peers' ranges", () => {
  it(`@langchain/core ${floors['@langchain/core']}, ai ${floors.ai}, the MCP SDK ${floors['@modelcontextprotocol/sdk']} with zod ${floors.zod}: retriever, chain, stores, tool, embed, rerank, MCP tools`, () => {
    expect(install.status, install.out.slice(-3000)).toBe(0);
    const r = spawnSync(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8', env: userEnv(), timeout: 120_000 });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ ...floors, ok: true });
  }, 180_000);
});

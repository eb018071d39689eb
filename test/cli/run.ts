/** Runs the `ragloom` CLI: in-process (main() with stdout / stderr captured), or as its own process from the sources. */
import { vi } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** In-process: what `ragloom <args>` prints and its exit status. */
export async function run(args: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((err += String(c)), true));
  try {
    const code = await main(args);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

/** `--json` output parsed (fails the test on anything else on stdout). */
export async function runJson<T = Record<string, unknown>>(args: string[]): Promise<Run & { json: T }> {
  const r = await run([...args, '--json']);
  let json: T;
  try {
    json = JSON.parse(r.out) as T;
  } catch {
    throw new Error(`not JSON on stdout (exit ${r.code}): ${r.out.slice(0, 500)}\n${r.err.slice(0, 500)}`);
  }
  return { ...r, json };
}

const CLI = fileURLToPath(new URL('../faults/fixtures/cli.mjs', import.meta.url));

/** As its own process (`node --import tsx cli.mjs <args>`): a real exit status, real streams. */
export function runProcess(args: string[], opts: { cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), CLI, ...args], { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

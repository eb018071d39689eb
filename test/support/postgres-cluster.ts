/**
 * Throw-away PostgreSQL clusters for the tests (postgres.ts shares one per vitest run): finding
 * the server binaries, initdb, pg_ctl start / stop as a user PostgreSQL accepts, a watchdog. No
 * vitest import here: the global setup (postgres-global.ts) loads it in vitest's own process.
 */
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server the tests may use. */
export interface PgServer {
  host: string;
  port: number;
  /** A superuser role (or the external URL's user). */
  user: string;
  password?: string;
  /** Server binaries (pg_ctl, pg_basebackup…); '' for an external server. */
  bin: string;
  /** The cluster's data folder; '' for an external server (then it cannot be stopped or restarted). */
  dataDir: string;
  /** The folder holding the cluster ('' for an external server). */
  home: string;
  /** Major version, e.g. 15. */
  major: number;
}

export interface RunState {
  server?: PgServer;
  failed?: string;
}

export const STATE = 'state.json';

/** The newest server binaries installed here, or undefined. */
export function findPgBin(): string | undefined {
  const given = process.env.RAGLOOM_PG_BIN;
  if (given) return existsSync(join(given, 'initdb')) ? given : undefined;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const majors = readdirSync(debian).filter((v) => /^\d+$/.test(v) && existsSync(join(debian, v, 'bin', 'initdb'))).map(Number).sort((a, b) => b - a);
    if (majors.length) return join(debian, String(majors[0]), 'bin');
  }
  const cfg = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (cfg.status === 0 && existsSync(join(cfg.stdout.trim(), 'initdb'))) return cfg.stdout.trim();
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return join(which.stdout.trim(), '..');
  return undefined;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** Runs a server binary as a user PostgreSQL accepts (the `postgres` user when this process is root). */
export function asPostgres(bin: string, tool: string, args: string[], opts: { timeout?: number } = {}): string {
  const exe = join(bin, tool);
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: opts.timeout ?? 120_000 });
}

/** asPostgres without blocking this process (the tests keep writing while the server stops and starts). */
export async function asPostgresAsync(bin: string, tool: string, args: string[]): Promise<string> {
  const exe = join(bin, tool);
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args];
  return (await promisify(execFile)(cmd, argv, { encoding: 'utf8', timeout: 120_000 })).stdout;
}

/** Stops the cluster (fast: open transactions roll back, connections close) and starts it again on the same port. */
export async function restartCluster(s: { bin: string; dataDir: string; home: string; port: number }, downMs = 0): Promise<void> {
  await asPostgresAsync(s.bin, 'pg_ctl', ['-D', s.dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
  if (downMs) await new Promise((r) => setTimeout(r, downMs));
  const opts = [`-p ${s.port}`, `-k ${s.home}`, '-c listen_addresses=127.0.0.1', ...TEST_SETTINGS].join(' ');
  await asPostgresAsync(s.bin, 'pg_ctl', ['-D', s.dataDir, '-o', opts, '-l', join(s.home, `log-${s.port}`), '-w', '-t', '60', 'start']);
}

/** A folder the server's user may write (a root-owned 0700 temp folder is not one). */
function serverFolder(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  if (isRoot()) chownSync(d, postgresUid(), postgresGid());
  return d;
}

function postgresUid(): number {
  return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
}
function postgresGid(): number {
  return Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Settings of a throw-away test cluster: durability traded for speed (nothing here must survive
 * a machine crash; a server restart still keeps every committed row), and room for the
 * connections of two forks' pools plus the multi-process tests.
 */
const TEST_SETTINGS = ['-c fsync=off', '-c full_page_writes=off', '-c max_connections=300', '-c wal_level=replica'];

/** initdb a new cluster in `home`/data, without starting it. */
export function initCluster(bin: string, home: string): string {
  const data = join(home, 'data');
  asPostgres(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  return data;
}

/** Starts the cluster in `dataDir` on `port` (loopback, sockets in `home`). */
export function startCluster(bin: string, dataDir: string, home: string, port: number): void {
  const opts = [`-p ${port}`, `-k ${home}`, '-c listen_addresses=127.0.0.1', ...TEST_SETTINGS].join(' ');
  asPostgres(bin, 'pg_ctl', ['-D', dataDir, '-o', opts, '-l', join(home, `log-${port}`), '-w', '-t', '60', 'start']);
}

/** Stops a cluster: `fast` rolls back open transactions and closes connections; `immediate` is a crash. */
export function stopCluster(bin: string, dataDir: string, mode: 'fast' | 'immediate' = 'fast'): void {
  asPostgres(bin, 'pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
}

function majorOf(bin: string): number {
  const v = execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' });
  return Number(/(\d+)(?:\.\d+)?/.exec(v)?.[1] ?? 0);
}

/** Starts a new cluster in its own folder; with `ownerPid`, a watchdog removes it once that process is gone. */
export async function launchCluster(ownerPid?: number): Promise<PgServer> {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install -y postgresql), and RAGLOOM_TEST_POSTGRES is not set');
  if (isRoot() && spawnSync('id', ['-u', 'postgres']).status !== 0) throw new Error('running as root and there is no `postgres` user to run the server as');
  const major = majorOf(bin);
  if (major < 14) throw new Error(`PostgreSQL ${major} at ${bin} is older than 14`);
  const home = serverFolder('ragloom-pg-');
  const dataDir = initCluster(bin, home);
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      startCluster(bin, dataDir, home, port);
      break;
    } catch (e) {
      if (attempt >= 3) throw e; // the port was taken between the probe and the start: try another
    }
  }
  if (ownerPid) watch(ownerPid, bin, dataDir, home);
  return { host: '127.0.0.1', port, user: 'postgres', bin, dataDir, home, major };
}

/** A detached shell that stops the cluster and removes its folder once `pid` has exited. */
function watch(pid: number, bin: string, dataDir: string, home: string): void {
  const stop = isRoot() ? `runuser -u postgres -- ${join(bin, 'pg_ctl')}` : join(bin, 'pg_ctl');
  const script = `while kill -0 ${pid} 2>/dev/null; do sleep 2; done; ${stop} -D '${dataDir}' -m immediate stop >/dev/null 2>&1; rm -rf '${home}'`;
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}

/** The run's folder, made by the global setup: `teardownRun` removes what was started in it. */
export function newRunDir(): string {
  return mkdtempSync(join(tmpdir(), 'ragloom-pg-run-'));
}

/** Stops the cluster a run started (if any) and removes the run's folder. */
export function teardownRun(runDir: string): void {
  const state = join(runDir, STATE);
  if (existsSync(state)) {
    const s = JSON.parse(readFileSync(state, 'utf8')) as RunState;
    if (s.server?.dataDir) {
      try {
        stopCluster(s.server.bin, s.server.dataDir, 'immediate');
      } catch {
        // already stopped (a fault test, or the watchdog)
      }
      rmSync(s.server.home, { recursive: true, force: true });
    }
  }
  rmSync(runDir, { recursive: true, force: true });
}

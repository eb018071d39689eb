/**
 * Crash-matrix children that load ragloom once and then run operations until one is killed
 * (fixtures/crash-child-warm.mjs), for both matrices (test/faults/crash-matrix.test.ts,
 * test/store/postgres/crash-matrix.test.ts). A new process per kill is the matrices' cost (~1 s
 * of starting node and loading the sources): children are started ahead, so a killed child's
 * successor is ready, and a child whose operation ran to the end serves the next cell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const WARM_CHILD = fileURLToPath(new URL('./fixtures/crash-child-warm.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One operation for a child: `store` as crash-op.mjs takes it, `point` the kill point to arm (null: a good run), `log` the file of points reached. */
export interface WarmCommand {
  op: string;
  store: { path: string } | { postgres: string };
  args: Record<string, unknown>;
  point: string | null;
  log: string;
}

/** A child that has loaded ragloom and waits for an operation. */
export class Warm {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  private lines: string[] = [];
  private wake: (() => void) | null = null;
  exited: { code: number | null; signal: string | null } | null = null;
  err = '';

  constructor(env: NodeJS.ProcessEnv = {}) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', WARM_CHILD], {
      cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env, RAGLOOM_FAULT_POINT: '', RAGLOOM_FAULT_LOG: '' },
    });
    this.proc.stderr!.on('data', (b: Buffer) => (this.err = (this.err + b.toString()).slice(-4000)));
    createInterface({ input: this.proc.stdout! }).on('line', (l) => {
      this.lines.push(l);
      this.wake?.();
    });
    this.proc.on('exit', (code, signal) => {
      this.exited = { code, signal };
      this.wake?.();
    });
    this.ready = this.next().then((l) => {
      if (l !== 'ready') throw new Error(`the crash child did not start: ${l ?? ''} ${this.err}`);
    });
  }

  /** The next line, or null once the child has exited. */
  private async next(): Promise<string | null> {
    for (;;) {
      if (this.lines.length) return this.lines.shift()!;
      if (this.exited) return null;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = null;
    }
  }

  /** Runs one operation: 'done', an error, or killed (the child is gone then; SIGTERM when it took over `limitMs`). */
  async run(cmd: WarmCommand, limitMs = 60_000): Promise<{ killed: string | null; error: string }> {
    this.proc.stdin!.write(`${JSON.stringify(cmd)}\n`);
    const timer = setTimeout(() => this.proc.kill('SIGTERM'), limitMs);
    const l = await this.next().finally(() => clearTimeout(timer));
    if (l === 'done') return { killed: null, error: '' };
    if (l === null) return { killed: this.exited?.signal ?? `exit ${this.exited?.code}`, error: this.exited?.signal === 'SIGKILL' ? '' : this.err };
    return { killed: null, error: l.startsWith('error ') ? (JSON.parse(l.slice(6)) as string) : l };
  }

  stop(): void {
    if (!this.exited) this.proc.kill('SIGKILL');
  }
}

/** Children started ahead: one waiting beside each lane's. */
export class WarmPool {
  private spare: Warm[] = [];
  private all: Warm[] = [];
  constructor(private readonly lanes: number, private readonly env: NodeJS.ProcessEnv = {}) {}

  /** Starts a child per lane (call early: they load while the baselines are built). */
  warmUp(): void {
    for (let i = 0; i < this.lanes; i++) this.start();
  }

  /** A ready child; the next one warms up while this one works. */
  async take(): Promise<Warm> {
    const w = this.spare.shift() ?? this.spawn();
    this.spare.push(this.spawn());
    await w.ready;
    return w;
  }

  /** Back after its operation: kept for the next cell unless it was killed. */
  give(w: Warm): void {
    if (w.exited) return;
    this.spare.unshift(w);
    // Keep no more than the lanes need waiting.
    while (this.spare.length > this.lanes) this.spare.pop()!.stop();
  }

  stopAll(): void {
    for (const w of this.all) w.stop();
  }

  private start(): void {
    this.spare.push(this.spawn());
  }

  private spawn(): Warm {
    const w = new Warm(this.env);
    w.ready.catch(() => undefined);
    this.all.push(w);
    return w;
  }
}

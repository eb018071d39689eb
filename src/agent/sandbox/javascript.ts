import { Worker } from 'node:worker_threads';
import type { FromJsWorker, JsJob } from './protocol.js';
import type { RunCodeResult } from './index.js';

export interface JsRunOptions {
  code: string;
  argsJson: string;
  timeoutMs: number;
  memoryMb: number;
  maxOutputChars: number;
  signal?: AbortSignal;
}

/** How long a worker may take to start before the run is given up (cold tsx boot from source). */
const BOOT_TIMEOUT_MS = 30_000;

// From dist/ the worker is plain JS. From src/ (tests, tsx) it is TypeScript: a tiny bootstrap
// registers tsx's loader inside the thread first (loader flags do not reach worker threads).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
function spawnWorker(opts: ConstructorParameters<typeof Worker>[1]): Worker {
  const url = new URL(`./js-worker.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
  if (!FROM_SOURCE) return new Worker(url, opts);
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { ...opts, eval: true });
}

/** Runs one script in a fresh worker thread; never throws for the script's failures. */
export function runJavaScript(o: JsRunOptions): Promise<RunCodeResult> {
  const started = performance.now();
  let stdout = '';
  let stderr = '';
  const finish = (r: { ok: true; result: unknown } | { ok: false; error: string }): RunCodeResult => ({
    ...r, stdout, stderr, elapsedMs: Math.round(performance.now() - started),
  });
  if (o.signal?.aborted) return Promise.resolve(finish({ ok: false, error: 'Code execution was aborted' }));

  const job: JsJob = { code: o.code, argsJson: o.argsJson, memoryMb: o.memoryMb, maxOutputChars: o.maxOutputChars };
  const worker = spawnWorker({
    workerData: job,
    resourceLimits: { maxOldGenerationSizeMb: o.memoryMb },
    // Even if the host realm leaked, the thread's process.env is empty.
    env: {},
    // --experimental-vm-modules makes Node call importModuleDynamically (see js-worker.ts);
    // --no-warnings keeps its experimental notice off our stderr.
    execArgv: ['--experimental-vm-modules', '--no-warnings'],
    stdout: true,
    stderr: true,
  });
  // Node's own output of the thread (never the script's console): drained and dropped.
  worker.stdout.resume();
  worker.stderr.resume();

  return new Promise<RunCodeResult>((resolve) => {
    let settled = false;
    let runTimer: NodeJS.Timeout | undefined;
    const bootTimer = setTimeout(() => end({ ok: false, error: `The CodeExec sandbox did not start within ${BOOT_TIMEOUT_MS} ms` }), BOOT_TIMEOUT_MS);
    const onAbort = () => end({ ok: false, error: 'Code execution was aborted' });
    o.signal?.addEventListener('abort', onAbort, { once: true });

    function end(r: { ok: true; result: unknown } | { ok: false; error: string }): void {
      if (settled) return;
      settled = true;
      clearTimeout(bootTimer);
      clearTimeout(runTimer);
      o.signal?.removeEventListener('abort', onAbort);
      // terminate() stops even a `while (true) {}`: it interrupts the isolate.
      void worker.terminate().catch(() => {});
      resolve(finish(r));
    }

    worker.on('message', (m: FromJsWorker) => {
      if (settled) return;
      switch (m.t) {
        case 'ready':
          clearTimeout(bootTimer);
          runTimer = setTimeout(() => end({ ok: false, error: `Code execution timed out after ${o.timeoutMs} ms` }), o.timeoutMs);
          break;
        case 'out':
          if (m.stream === 'stdout') stdout += m.text;
          else stderr += m.text;
          break;
        case 'done':
          if (m.ok) {
            // JSON text made inside the sandbox: parsing it here builds plain host objects.
            let result: unknown;
            try { result = JSON.parse(m.value); } catch { return end({ ok: false, error: 'main() returned a value that is not valid JSON' }); }
            end({ ok: true, result });
          } else {
            if (m.stack) stderr += (stderr && !stderr.endsWith('\n') ? '\n' : '') + userFrames(m.stack) + '\n';
            end({ ok: false, error: m.error });
          }
          break;
      }
    });
    worker.on('error', (e: Error & { code?: string }) => end({
      ok: false,
      error: e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `Code execution ran out of memory (limit ${o.memoryMb} MB)` : `Code execution failed: ${e.message}`,
    }));
    worker.on('exit', (code) => end({ ok: false, error: `Code execution stopped unexpectedly (exit code ${code})` }));
  });
}

/** A stack without the sandbox's own frames and the host paths below them. */
function userFrames(stack: string): string {
  return stack.split('\n').filter((l) => !/^\s+at /.test(l) || !/codeexec-bootstrap\.js|node:|file:|\(\/|at \//.test(l)).join('\n');
}

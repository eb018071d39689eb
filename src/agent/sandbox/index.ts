/**
 * The CodeExec sandbox: runs a user's `main(...)` in Python or JavaScript, the way RAGFlow's
 * CodeExec tool (v0.25.6) does, inside this process's machine but isolated from it.
 *
 * Contract (RAGFlow's runners, agent/sandbox/result_protocol.py):
 * - Python: the code runs as `__main__`, then `main(**arguments)` is called; the return value
 *   must be JSON-serialisable (NaN/Infinity become null, as JSON.stringify makes them).
 * - JavaScript: `main` is a top-level function (or const), or `module.exports = { main }`,
 *   `module.exports = main`, `exports.main = …`; it is called as `main(arguments)`, may be async,
 *   and must not return `undefined` (use null).
 * - stdout/stderr are captured (up to 1 Mi characters each); the result travels apart from them.
 * - Failures of the user's code never throw: they come back as `{ ok: false, error }`.
 *
 * Isolation:
 * - JavaScript runs in a fresh worker thread per call (heap limited by `resourceLimits`, killed
 *   with `terminate()` on timeout or abort), inside a `node:vm` context with code generation
 *   from strings and WebAssembly disabled. The context holds only ECMAScript built-ins plus
 *   `console`, timers, `queueMicrotask`, `module` and `exports`: no `require`, `process`,
 *   `import()`, `fetch`, `Buffer`, network or file system. Array-buffer memory (outside the V8
 *   heap) is counted against the same limit. `allowNetwork` has no effect: there is no network
 *   API to allow.
 * - Python runs as `python3 -I -S` (no site-packages: only the standard library), in a fresh
 *   temporary folder with an empty environment, in its own process group, killed with SIGKILL on
 *   timeout or abort; see python.ts for the lock-down layers (namespaces, Landlock, rlimits, an
 *   audit hook) and which of them are enforced by the kernel and which are best-effort.
 * - Neither is a substitute for a container or VM when running code from untrusted users on a
 *   shared server; they keep an agent's scripts (and an LLM's mistakes) from hurting the host.
 */
import { runJavaScript } from './javascript.js';
import { pythonPath, runPython } from './python.js';

export type SandboxLang = 'python' | 'javascript';

export interface RunCodeOptions {
  /** 'nodejs' (RAGFlow's name) and 'python3' are accepted too; see {@link normaliseLang}. */
  lang: SandboxLang | 'nodejs' | 'python3';
  code: string;
  /** Passed to main: as keyword arguments in Python, as one object in JavaScript. Must be JSON-like. */
  args: Record<string, unknown>;
  /** Wall-clock limit of the user's code. @default 10_000 */
  timeoutMs?: number;
  /** JS: the worker's old-generation heap (and array buffers); Python: RLIMIT_AS. @default 256 */
  memoryMb?: number;
  /** Aborting kills the worker / subprocess; the result is `{ ok: false, error: 'Code execution was aborted' }`. */
  signal?: AbortSignal;
  /** Python only: leave the network reachable. @default false */
  allowNetwork?: boolean;
}

export interface RunCodeResult {
  ok: boolean;
  /** main()'s return value, as JSON would carry it (only when ok). */
  result?: unknown;
  stdout: string;
  stderr: string;
  error?: string;
  elapsedMs: number;
}

export const SANDBOX_DEFAULTS = Object.freeze({ timeoutMs: 10_000, memoryMb: 256, maxOutputChars: 1024 * 1024 });

/** Maps RAGFlow's language names to ours; throws on anything else (a programming error). */
export function normaliseLang(lang: string): SandboxLang {
  const l = String(lang).trim().toLowerCase();
  if (l === 'python' || l === 'python3') return 'python';
  if (l === 'javascript' || l === 'nodejs' || l === 'js' || l === 'node') return 'javascript';
  throw new Error(`Unsupported CodeExec language: ${lang} (use python or javascript)`);
}

/** Whether a python3 with the `resource` module can be found (checked once, then cached). */
export function pythonAvailable(): boolean {
  return pythonPath() !== null;
}

/** Runs `code`'s main(args) in the sandbox of its language. Throws only for a bad `lang`. */
export async function runCode(o: RunCodeOptions): Promise<RunCodeResult> {
  const lang = normaliseLang(o.lang);
  const timeoutMs = positive(o.timeoutMs, SANDBOX_DEFAULTS.timeoutMs, 'timeoutMs');
  const memoryMb = positive(o.memoryMb, SANDBOX_DEFAULTS.memoryMb, 'memoryMb');
  let argsJson: string;
  try {
    // Dates become strings, undefined fields vanish, BigInts become strings: what JSON carries.
    argsJson = JSON.stringify(o.args ?? {}, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? '{}';
  } catch (e) {
    return { ok: false, error: `CodeExec arguments are not JSON-serialisable: ${(e as Error).message}`, stdout: '', stderr: '', elapsedMs: 0 };
  }
  const common = { code: String(o.code ?? ''), argsJson, timeoutMs, memoryMb, maxOutputChars: SANDBOX_DEFAULTS.maxOutputChars, signal: o.signal };
  return lang === 'javascript'
    ? runJavaScript(common)
    : runPython({ ...common, allowNetwork: o.allowNetwork === true });
}

function positive(v: number | undefined, fallback: number, name: string): number {
  if (v === undefined) return fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`CodeExec ${name} must be a positive number, got ${v}`);
  return Math.ceil(v);
}

import { createServer, type Server } from 'node:net';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseLang, pythonAvailable, runCode } from '../../src/agent/sandbox/index.js';

const js = (code: string, args: Record<string, unknown> = {}, extra: { timeoutMs?: number; memoryMb?: number; signal?: AbortSignal } = {}) =>
  runCode({ lang: 'javascript', code, args, ...extra });
const py = (code: string, args: Record<string, unknown> = {}, extra: { timeoutMs?: number; memoryMb?: number; signal?: AbortSignal; allowNetwork?: boolean } = {}) =>
  runCode({ lang: 'python', code, args, ...extra });

/** Tries to turn any object into the host's Function and reach `process` with it. */
const ESCAPE = `const esc = (o) => { try { return 'ESCAPED:' + typeof o.constructor.constructor('return process')() } catch (e) { return 'blocked: ' + e.message } };`;

describe('normaliseLang', () => {
  it('accepts RAGFlow\'s names and refuses others', () => {
    expect(normaliseLang('nodejs')).toBe('javascript');
    expect(normaliseLang('JavaScript')).toBe('javascript');
    expect(normaliseLang('python3')).toBe('python');
    expect(() => normaliseLang('ruby')).toThrow(/Unsupported CodeExec language/);
  });

  it('runCode throws for a bad lang (a programming error), not for bad code', async () => {
    await expect(runCode({ lang: 'ruby' as never, code: '', args: {} })).rejects.toThrow(/ruby/);
  });
});

describe('runCode — javascript', () => {
  it('runs main(args) and returns its dict, with console output captured', async () => {
    const r = await js('function main(args) {\n  console.log("sum of", args.a, args.b);\n  console.error("to stderr");\n  return { result: args.a + args.b };\n}', { a: 2, b: 40 });
    expect(r).toMatchObject({ ok: true, result: { result: 42 }, stdout: 'sum of 2 40\n', stderr: 'to stderr\n' });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('accepts RAGFlow\'s exported async style (module.exports = { main }) and timers', async () => {
    const code = 'async function main(args) {\n  await new Promise((r) => setTimeout(r, 20));\n  return { result: args.arg1 + args.arg2 };\n}\nmodule.exports = { main };';
    const r = await runCode({ lang: 'nodejs', code, args: { arg1: 'foo', arg2: 'bar' } });
    expect(r).toMatchObject({ ok: true, result: { result: 'foobar' } });
    expect(await js('module.exports = (args) => [args.x, typeof args]', { x: 1 })).toMatchObject({ ok: true, result: [1, 'object'] });
  });

  it('reports thrown errors, undefined and non-JSON results as failures', async () => {
    const thrown = await js('function main() { throw new TypeError("bad input") }');
    expect(thrown).toMatchObject({ ok: false, error: 'TypeError: bad input' });
    expect(thrown.stderr).toContain('at main (main.js:1');
    expect(thrown.stderr).not.toMatch(/js-worker|node:internal/); // no host frames
    expect((await js('function main() {}')).error).toMatch(/must return a value/);
    expect((await js('function main() { return 1n }')).error).toMatch(/BigInt/);
    expect((await js('const x = 1')).error).toMatch(/main\(\) must be defined/);
    expect((await js('function main( {')).error).toMatch(/^SyntaxError/);
  });

  it('stops an infinite loop at the time limit, and the next run is fine', async () => {
    const t0 = Date.now();
    const r = await js('function main() { while (true) {} }', {}, { timeoutMs: 500 });
    expect(r).toMatchObject({ ok: false, error: 'Code execution timed out after 500 ms' });
    expect(Date.now() - t0).toBeLessThan(500 + 1500); // worker start-up from source included
    expect(await js('function main() { return "alive" }')).toMatchObject({ ok: true, result: 'alive' });
  });

  it('stops a promise that never settles at the time limit', async () => {
    const r = await js('async function main() { console.log("waiting"); await new Promise(() => {}) }', {}, { timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, error: 'Code execution timed out after 300 ms', stdout: 'waiting\n' });
  });

  it('stops a growing heap with an out-of-memory error', async () => {
    const r = await js('function main() { const a = []; for (;;) a.push("x".repeat(1000) + a.length) }', {}, { memoryMb: 64 });
    expect(r).toMatchObject({ ok: false, error: 'Code execution ran out of memory (limit 64 MB)' });
  });

  it('counts array buffers (outside the V8 heap) against the memory limit', async () => {
    const bomb = 'function main() { const keep = []; for (let i = 0; i < 40; i++) { const a = new Float64Array(12.5e6); a.fill(1); keep.push(a) } return keep.length }';
    expect((await js(bomb, {}, { memoryMb: 64 })).error).toMatch(/Array buffer allocation failed: the sandbox memory limit is 64 MB/);
    // The same through a copy made with the intrinsic constructor.
    const copies = 'function main() { const b = new Uint8Array(30e6); const keep = []; for (let i = 0; i < 10; i++) keep.push(b.toReversed()); return keep.length }';
    expect((await js(copies, {}, { memoryMb: 64 })).error).toMatch(/memory limit/);
    // Garbage buffers do not count: 100 × 4 MB in one loop, never more than one alive. (V8 frees
    // them in the background; the limit leaves room for a slow sweeper on a busy machine.)
    const churn = 'function main() { let n = 0; for (let i = 0; i < 100; i++) { const a = new Uint8Array(4e6); a[1] = 1; n += a[1] } return n }';
    expect(await js(churn, {}, { memoryMb: 256 })).toMatchObject({ ok: true, result: 100 });
  });

  it('has no require, process, fetch, Buffer or import()', async () => {
    expect((await js('const fs = require("fs"); function main() { return 1 }')).error).toBe('ReferenceError: require is not defined');
    expect((await js('function main() { process.exit(1) }')).error).toBe('ReferenceError: process is not defined');
    expect((await js('function main() { return process.env }')).error).toBe('ReferenceError: process is not defined');
    const imp = await js(`${ESCAPE} async function main() { try { await import("node:fs"); return "imported" } catch (e) { return [e.message, esc(e)] } }`);
    expect(imp.ok).toBe(true);
    expect(imp.result).toEqual(['import() is not available in the CodeExec sandbox', expect.stringMatching(/^blocked/)]);
    const g = await js('function main() { return ["require", "process", "fetch", "Buffer", "WebAssembly", "SharedArrayBuffer"].map((k) => typeof globalThis[k]) }');
    expect(g.result).toEqual(Array(6).fill('undefined'));
  });

  it('refuses eval and new Function (code generation from strings is off)', async () => {
    expect((await js('function main() { return eval("1+1") }')).error).toMatch(/^EvalError: Code generation from strings disallowed/);
    expect((await js('function main() { return new Function("return 1")() }')).error).toMatch(/^EvalError/);
    expect((await js('function main() { return (async function () {}).constructor("return 1")() }')).error).toMatch(/^EvalError/);
  });

  it('keeps the host realm out of reach: constructor chains, stack frames, bridges, timers', async () => {
    const classic = await js('function main() { return this.constructor.constructor("return process")().env }');
    expect(classic.ok).toBe(false);
    expect(classic.error).toMatch(/^EvalError/);
    expect(JSON.stringify(classic)).not.toContain(process.env.PATH ?? '/usr/bin');

    const probes = await js(`${ESCAPE}
      function main() {
        const r = {
          object: esc({}),
          global: esc(globalThis),
          descriptor: esc(Object.getOwnPropertyDescriptor(globalThis, 'console')),
          consoleLog: esc(console.log),
          setTimeout: esc(setTimeout),
        };
        // V8 hands CallSite objects (and, for sloppy frames, their receivers) to prepareStackTrace.
        Error.prepareStackTrace = (e, sites) => sites.map((s) => [s.getThis() ? esc(s.getThis()) : 'none', s.getFunction() ? esc(s.getFunction()) : 'none']);
        r.frames = new Error('x').stack;
        Error.prepareStackTrace = undefined;
        // A stack overflow raised inside a host bridge would be a host-realm RangeError.
        let caught = 'none';
        const dive = () => { try { dive() } catch { try { console.log('.') } catch (e) { caught = esc(e) } } };
        dive();
        r.overflow = caught;
        return new Promise((resolve) => setTimeout(function () { r.timerThis = esc(this); resolve(r) }, 1));
      }`);
    expect(probes.ok).toBe(true);
    expect(JSON.stringify(probes.result)).not.toContain('ESCAPED');
  });

  it('serialises the result inside the sandbox: getters and proxies never run on the host', async () => {
    const r = await js('function main() { return { get where() { return typeof process }, p: new Proxy({}, { get: () => "trap" }) } }');
    expect(r).toMatchObject({ ok: true, result: { where: 'undefined', p: {} } });
  });

  it('aborts through an AbortSignal', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const t0 = Date.now();
    const r = await js('function main() { while (true) {} }', {}, { signal: ac.signal, timeoutMs: 20_000 });
    expect(r).toMatchObject({ ok: false, error: 'Code execution was aborted' });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((await js('function main() { return 1 }', {}, { signal: ac.signal })).error).toBe('Code execution was aborted');
  });
});

const NO_PYTHON = 'python3 (with the resource module) is not installed on this machine';

describe('runCode — python', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  let hostDir = '';
  beforeAll(async () => {
    server = createServer((s) => { connections++; s.end('hello from the host\n'); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
    hostDir = mkdtempSync(path.join(tmpdir(), 'ragloom-sandbox-test-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(hostDir, { recursive: true, force: true });
  });

  it.skipIf(!pythonAvailable())(`runs main(**args) as RAGFlow does and captures print (skipped when ${NO_PYTHON})`, async () => {
    const code = 'def main(arg1: str, arg2: str) -> dict:\n    print("joining", arg1, arg2)\n    return {"result": arg1 + arg2, "nan": float("nan")}';
    const r = await py(code, { arg1: 'foo', arg2: 'bar' });
    expect(r).toMatchObject({ ok: true, result: { result: 'foobar', nan: null }, stdout: 'joining foo bar\n', stderr: '' });
    // Keyword arguments that main does not take: Python's own TypeError, as in RAGFlow.
    expect((await py('def main(args):\n    return args', { a: 1, b: 2 })).error).toMatch(/^TypeError: main\(\) got an unexpected keyword argument/);
    expect(await py('def main():\n    with open("out.txt", "w") as f:\n        f.write("ok")\n    return open("out.txt").read()')).toMatchObject({ ok: true, result: 'ok' });
  });

  it.skipIf(!pythonAvailable())(`reports exceptions with Python's message and a traceback (skipped when ${NO_PYTHON})`, async () => {
    const r = await py('def main():\n    return 1 / 0');
    expect(r).toMatchObject({ ok: false, error: 'ZeroDivisionError: division by zero' });
    expect(r.stderr).toContain('File "main.py", line 2, in main');
    expect((await py('x = 1')).error).toMatch(/main\(\) must be defined/);
    expect((await py('def main():\n    return {1, 2}')).error).toMatch(/non-JSON-serializable/);
  });

  it.skipIf(!pythonAvailable())(`kills an infinite loop at the time limit (skipped when ${NO_PYTHON})`, async () => {
    const t0 = Date.now();
    const r = await py('def main():\n    while True:\n        pass', {}, { timeoutMs: 500 });
    expect(r).toMatchObject({ ok: false, error: 'Code execution timed out after 500 ms' });
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it.skipIf(!pythonAvailable())(`stops memory bombs with an out-of-memory error (skipped when ${NO_PYTHON})`, async () => {
    expect(await py('def main():\n    x = "a" * 10**10\n    return len(x)')).toMatchObject({ ok: false, error: 'Code execution ran out of memory (limit 256 MB)' });
    const grow = await py('def main():\n    a = []\n    while True:\n        a.append("x" * 10000)', {}, { memoryMb: 128 });
    expect(grow).toMatchObject({ ok: false, error: 'Code execution ran out of memory (limit 128 MB)' });
  });

  it.skipIf(!pythonAvailable())(`blocks the network unless allowed (skipped when ${NO_PYTHON})`, async () => {
    const code = `import socket\ndef main(port):\n    s = socket.create_connection(("127.0.0.1", port), timeout=2)\n    return s.recv(100).decode()`;
    const blocked = await py(code, { port });
    expect(blocked.ok).toBe(false);
    expect(blocked.error).toMatch(/Network access is disabled|Permission denied|unreachable/);
    expect(connections).toBe(0);
    expect(await py(code, { port }, { allowNetwork: true })).toMatchObject({ ok: true, result: 'hello from the host\n' });
    expect(connections).toBe(1);
  });

  it.skipIf(!pythonAvailable())(`allows reading system files, not host data; writes only in its own folder (skipped when ${NO_PYTHON})`, async () => {
    // Reading world-readable system files (/etc/passwd, the standard library) is allowed.
    const passwd = await py('def main():\n    return open("/etc/passwd").read()');
    expect(passwd.ok).toBe(true);
    expect(passwd.result).toContain('root:');
    // Files elsewhere on the host (home folders, /tmp, the project's data) are not readable.
    const secret = path.join(hostDir, 'secret.txt');
    writeFileSync(secret, 'host secret');
    const read = await py('def main(p):\n    return open(p).read()', { p: secret });
    expect(read).toMatchObject({ ok: false });
    expect(read.error).toMatch(/^PermissionError/);
    // Writing outside the run's own temporary folder fails, and nothing is written.
    const target = path.join(hostDir, 'escape.txt');
    const write = await py('def main(p):\n    open(p, "w").write("x")\n    return "wrote"', { p: target });
    expect(write.error).toMatch(/^PermissionError/);
    expect(existsSync(target)).toBe(false);
    // No subprocesses.
    expect((await py('import os\ndef main():\n    return os.system("true")')).error).toMatch(/^PermissionError/);
  });

  it.skipIf(!pythonAvailable())(`aborts through an AbortSignal (skipped when ${NO_PYTHON})`, async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await py('import time\ndef main():\n    time.sleep(30)', {}, { signal: ac.signal, timeoutMs: 20_000 });
    expect(r).toMatchObject({ ok: false, error: 'Code execution was aborted' });
    expect(r.elapsedMs).toBeLessThan(5_000);
  });
});

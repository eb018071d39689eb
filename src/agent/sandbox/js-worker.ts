/**
 * Worker-thread entry of the JavaScript CodeExec sandbox: one thread per run, terminated by the
 * thread that started it on timeout, abort or completion. It imports nothing from the project so
 * that it starts fast.
 *
 * Isolation rule: no object of this thread's realm ever reaches the user's code. The context's
 * global is backed by a null-prototype object (a plain `{}` would hand out this realm's `Object`
 * through `this.constructor`), everything inside is built by a bootstrap compiled in the context,
 * and the only functions of this realm the bootstrap sees are a few bridges that take and return
 * primitives only. Results and errors are turned into strings inside the context, so getters and
 * proxies in what the user returns run there, never here.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import type { FromJsWorker, JsJob } from './protocol.js';

/**
 * Runs inside the context before the user's code. It receives the bridges as arguments and keeps
 * them in its closure. It captures the built-ins it relies on first, so a script that patches
 * `JSON`, `Reflect` or prototypes later can only spoil its own output.
 */
const BOOTSTRAP = String.raw`(function (hostWrite, hostTimer, hostDone, hostMem, limitBytes, limitMb) {
  'use strict';
  const g = globalThis;
  const { apply, construct, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, ownKeys } = Reflect;
  const stringify = JSON.stringify, parse = JSON.parse, S = String, max = Math.max;
  const ErrorCtor = Error, TypeErrorCtor = TypeError, RangeErrorCtor = RangeError, ProxyCtor = Proxy;
  const wsHas = WeakSet.prototype.has, wsAdd = WeakSet.prototype.add;
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapDelete = Map.prototype.delete;
  const promiseThen = Promise.prototype.then, resolved = Promise.resolve();

  // WebAssembly.Memory and SharedArrayBuffer allocate outside the heap limit; Atomics.wait
  // blocks the thread. V8's own console would write nowhere: ours replaces it below.
  for (const k of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'console']) delete g[k];

  // Array buffers live outside the V8 heap, so the worker's heap limit does not bound them.
  // Count the bytes of every buffer the script can create; when the count passes the limit,
  // replace it with the isolate's real external memory (collected buffers are gone from it) and
  // refuse the allocation only if that is over the limit too.
  let used = 0;
  const charged = new WeakSet();
  const abProto = ArrayBuffer.prototype, taProto = getPrototypeOf(Uint8Array.prototype);
  const abLength = getOwnPropertyDescriptor(abProto, 'byteLength').get;
  const abMaxDesc = getOwnPropertyDescriptor(abProto, 'maxByteLength');
  const abMax = abMaxDesc && abMaxDesc.get;
  const taBuffer = getOwnPropertyDescriptor(taProto, 'buffer').get;
  const refuse = () => new RangeErrorCtor('Array buffer allocation failed: the sandbox memory limit is ' + limitMb + ' MB');
  const external = () => { try { const n = hostMem(); return typeof n === 'number' ? n : used; } catch { return used; } };
  const bufferOf = (o) => {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function')) return undefined;
    try { apply(abLength, o, []); return o; } catch {}
    try { return apply(taBuffer, o, []); } catch {}
    return undefined;
  };
  const charge = (o) => {
    const buf = bufferOf(o);
    if (buf === undefined || apply(wsHas, charged, [buf])) return;
    apply(wsAdd, charged, [buf]);
    const n = apply(abLength, buf, []);
    if (abMax && apply(abMax, buf, []) > limitBytes) throw refuse(); // a resizable buffer may grow that far
    used += n;
    if (used > limitBytes) {
      used = external();
      if (used > limitBytes) throw refuse();
    }
  };
  const wrapCtor = (name) => {
    const Orig = g[name];
    const P = new ProxyCtor(Orig, { construct(t, args, nt) { const o = construct(t, args, nt); charge(o); return o; } });
    // Species look-ups (slice, map, filter) find the counting constructor.
    defineProperty(Orig.prototype, 'constructor', { value: P, writable: false, enumerable: false, configurable: false });
    defineProperty(g, name, { value: P, writable: true, enumerable: false, configurable: true });
  };
  for (const n of ['ArrayBuffer', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) wrapCtor(n);
  // Methods can also allocate with the original constructors (toSorted, with, a slice whose
  // receiver's constructor was deleted): count what they return. resize grows in place.
  for (const proto of [abProto, taProto]) {
    for (const key of ownKeys(proto)) {
      if (key === 'constructor') continue;
      const d = getOwnPropertyDescriptor(proto, key);
      if (!d || typeof d.value !== 'function') continue;
      const fn = d.value;
      const wrapped = proto === abProto && key === 'resize'
        ? { resize(newLength) {
            const len = +newLength, cur = apply(abLength, this, []);
            if (len > cur && external() + (len - cur) > limitBytes) throw refuse();
            return apply(fn, this, [len]);
          } }.resize
        : { [key](...a) { const r = apply(fn, this, a); charge(r); return r; } }[key];
      defineProperty(proto, key, { value: wrapped, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
    }
  }

  // Not instanceof: a script can define Error[Symbol.hasInstance] and would get what we test.
  const isProtoOf = Object.prototype.isPrototypeOf, errorProto = Error.prototype;
  const isError = (v) => { try { return apply(isProtoOf, errorProto, [v]); } catch { return false; } };
  const fmt = (v) => {
    if (typeof v === 'string') return v;
    try {
      if (isError(v)) { const s = v.stack; return typeof s === 'string' ? s : S(v); }
      if (typeof v === 'function') return '[Function: ' + (v.name || '(anonymous)') + ']';
      if (typeof v === 'bigint') return S(v) + 'n';
      if (typeof v === 'object' && v !== null) {
        const j = stringify(v, (k, x) => (typeof x === 'bigint' ? S(x) + 'n' : x));
        return typeof j === 'string' ? j : S(v);
      }
      return S(v);
    } catch {
      try { return S(v); } catch { return '[object]'; }
    }
  };
  const write = (stream, args) => {
    let s = '';
    for (let i = 0; i < args.length; i++) s += (i ? ' ' : '') + fmt(args[i]);
    // The bridge only ever gets a number and a string. Whatever it throws (a stack overflow
    // raised inside it belongs to the host realm) is dropped here, never shown to the script.
    try { hostWrite(stream, s + '\n'); } catch {}
  };
  const out = function () { write(1, arguments); };
  const err = function () { write(2, arguments); };
  g.console = {
    log: out, info: out, debug: out, dir: out, table: out,
    warn: err, error: err, trace: err,
    assert: function (cond, ...rest) { if (!cond) write(2, ['Assertion failed' + (rest.length ? ':' : ''), ...rest]); },
  };

  // Timers: callbacks stay in the context; the host only sees ids and delays.
  const timers = new Map();
  let nextTimer = 0;
  const addTimer = (cb, ms, args, repeat) => {
    if (typeof cb !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
    const id = ++nextTimer;
    apply(mapSet, timers, [id, { cb, args, repeat }]);
    let delay = +ms;
    if (!(delay >= 1 && delay <= 2147483647)) delay = 1;
    try { hostTimer(id, delay, repeat); } catch {}
    return id;
  };
  g.setTimeout = function setTimeout(cb, ms, ...args) { return addTimer(cb, ms, args, false); };
  g.setInterval = function setInterval(cb, ms, ...args) { return addTimer(cb, ms, args, true); };
  g.clearTimeout = g.clearInterval = function clearTimeout(id) {
    if (apply(mapDelete, timers, [id])) { try { hostTimer(id, -1, false); } catch {} }
  };
  g.queueMicrotask = function queueMicrotask(cb) {
    if (typeof cb !== 'function') throw new TypeErrorCtor('The "callback" argument must be of type function');
    apply(promiseThen, resolved, [() => { try { cb(); } catch (e) { fail(e); } }]);
  };

  // CommonJS-style exports, as RAGFlow's Node runner reads them.
  g.module = { exports: {} };
  g.exports = g.module.exports;

  let finished = false;
  const describe = (e) => {
    try {
      if (isError(e) || (typeof e === 'object' && e !== null && 'message' in e)) {
        const name = S(e.name === undefined ? 'Error' : e.name), msg = S(e.message === undefined ? '' : e.message);
        return msg ? name + ': ' + msg : name;
      }
      return 'Uncaught ' + fmt(e);
    } catch {
      return 'Uncaught exception (its message could not be read)';
    }
  };
  const stackOf = (e) => { try { const s = isError(e) ? e.stack : undefined; return typeof s === 'string' ? s : ''; } catch { return ''; } };
  const fail = (e) => {
    if (finished) return;
    finished = true;
    const msg = describe(e), stack = stackOf(e);
    hostDone(false, typeof msg === 'string' ? msg : 'Uncaught exception', typeof stack === 'string' ? stack : '');
  };
  const findMain = () => {
    if (typeof main === 'function') return main; // a declaration, or a top-level let/const/var
    const m = g.module, ex = m !== null && typeof m === 'object' ? m.exports : undefined;
    if (typeof ex === 'function') return ex;
    if (ex !== null && typeof ex === 'object' && typeof ex.main === 'function') return ex.main;
    const e2 = g.exports;
    if (e2 !== null && typeof e2 === 'object' && typeof e2.main === 'function') return e2.main;
    return undefined;
  };
  const run = async (argsJson) => {
    try {
      const fn = findMain();
      if (typeof fn !== 'function') throw new ErrorCtor('main() must be defined or exported.');
      const output = await apply(fn, undefined, [parse(argsJson)]);
      if (output === undefined) throw new ErrorCtor('main() must return a value. Use null for an empty result.');
      const text = stringify(output);
      if (typeof text !== 'string') throw new TypeErrorCtor('main() returned a non-JSON-serializable value.');
      if (finished) return;
      finished = true;
      hostDone(true, text, '');
    } catch (e) {
      fail(e);
    }
  };
  const fire = (id) => {
    const t = apply(mapGet, timers, [id]);
    if (t === undefined) return;
    if (!t.repeat) apply(mapDelete, timers, [id]);
    try { apply(t.cb, undefined, t.args); } catch (e) { fail(e); } // Node would crash on this
  };
  return [run, fire, fail];
})`;

const job = workerData as JsJob;
const port = parentPort!;
const post = (m: FromJsWorker) => port.postMessage(m);

// Forward output as it comes, so a run that is later killed still shows what it printed.
const sent = { stdout: 0, stderr: 0 };
function hostWrite(stream: unknown, text: unknown): void {
  if ((stream !== 1 && stream !== 2) || typeof text !== 'string') return;
  const name = stream === 1 ? 'stdout' : 'stderr';
  const room = job.maxOutputChars - sent[name];
  if (room <= 0) return;
  const cut = text.length > room ? text.slice(0, room) + `\n…[${name} truncated at ${job.maxOutputChars} characters]\n` : text;
  sent[name] += text.length > room ? room : text.length;
  post({ t: 'out', stream: name, text: cut });
}

let done = false;
function hostDone(ok: unknown, text: unknown, stack: unknown): void {
  if (done || typeof ok !== 'boolean' || typeof text !== 'string') return;
  done = true;
  for (const t of timers.values()) clearTimeout(t);
  post(ok ? { t: 'done', ok: true, value: text } : { t: 'done', ok: false, error: text, stack: typeof stack === 'string' ? stack : '' });
}

/** The isolate's memory outside the heap (array buffers), for the sandbox's own accounting. */
function hostMem(): number {
  return v8.getHeapStatistics().external_memory;
}

const timers = new Map<number, NodeJS.Timeout>();
let fire: (id: number) => void = () => {};
function hostTimer(id: unknown, delay: unknown, repeat: unknown): void {
  if (typeof id !== 'number' || typeof delay !== 'number') return;
  const old = timers.get(id);
  if (old) clearTimeout(old);
  timers.delete(id);
  if (delay < 0 || done) return;
  const cb = () => {
    if (repeat !== true) timers.delete(id);
    try { fire(id); } catch { /* fire catches the script's errors; this is a stack overflow at most */ }
  };
  timers.set(id, repeat === true ? setInterval(cb, delay) : setTimeout(cb, delay));
}

const context = vm.createContext(Object.create(null), {
  name: 'CodeExec',
  codeGeneration: { strings: false, wasm: false }, // no eval, new Function, or WebAssembly compile
});
// Captured before the script can touch it; thrown for import() so the rejection is a context object.
const CtxTypeError = vm.runInContext('TypeError', context) as ErrorConstructor;
const boot = vm.runInContext(BOOTSTRAP, context, { filename: 'codeexec-bootstrap.js' }) as (...a: unknown[]) => unknown;
const [run, fireTimer, fail] = boot(hostWrite, hostTimer, hostDone, hostMem, job.memoryMb * 1024 * 1024, job.memoryMb) as [
  (argsJson: string) => unknown, (id: number) => void, (e: unknown) => void,
];
fire = fireTimer;

let script: vm.Script | undefined;
let compileError: string | undefined;
try {
  script = new vm.Script(job.code, {
    filename: 'main.js',
    // Without this callback Node rejects import() with an error of this realm, whose constructor
    // chain leads to this realm's Function. (The worker runs with --experimental-vm-modules so
    // that Node calls it.)
    importModuleDynamically: (() => { throw new CtxTypeError('import() is not available in the CodeExec sandbox'); }) as never,
  });
} catch (e) {
  // Compiling happens in this realm and runs none of the user's code.
  compileError = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

// Defence in depth: should an object of this realm leak anyway, its constructor chain ends here
// instead of at a Function that compiles strings (this realm allows code generation).
for (const proto of [Function.prototype, Object.getPrototypeOf(async function () {}), Object.getPrototypeOf(function* () {}),
  Object.getPrototypeOf(async function* () {})]) {
  Object.defineProperty(proto, 'constructor', { value: undefined, writable: false, configurable: false });
}
Reflect.deleteProperty(globalThis, 'eval');
// The script's own unhandled rejections must not take the thread down through Node's handler,
// which would also read their properties here; a throwing FinalizationRegistry callback of the
// script ends the run like any uncaught exception, described inside the context.
process.on('unhandledRejection', () => {});
process.on('uncaughtException', (e) => settleWith(e));

/** Ends the run with `e`: errors of this realm are described here and never passed into the context. */
function settleWith(e: unknown): void {
  if (e instanceof Error) return hostDone(false, `Code execution failed: ${e.name}: ${e.message}`, '');
  try { fail(e); } catch { hostDone(false, 'Uncaught exception', ''); }
}

// A promise that never settles leaves nothing to wait for and the thread would just exit;
// staying alive lets it end the way a hang does, at the time limit.
port.on('message', () => {});

post({ t: 'ready' });
if (compileError !== undefined) {
  hostDone(false, compileError, '');
} else {
  try {
    script!.runInContext(context); // its completion value is a context object: left untouched
  } catch (e) {
    settleWith(e); // a script's error is described inside the context
  }
  if (!done) run(job.argsJson); // async; reports through hostDone
}

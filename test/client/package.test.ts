import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
let app: string;

// The published shape: build dist/, then import the package by name from another folder.
beforeAll(() => {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'pipe' });
  app = mkdtempSync(join(tmpdir(), 'ragloom-app-'));
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(ROOT, join(app, 'node_modules', 'ragloom'), 'dir');
}, 180_000);
afterAll(() => rmSync(app, { recursive: true, force: true }));

describe('the ragloom package', () => {
  it("import { Client, ApiError } from 'ragloom' works from another folder", () => {
    writeFileSync(join(app, 'main.mjs'), `
      import { Client, ApiError, DEFAULT_RETRIEVAL_OPTIONS } from 'ragloom';
      import { Workspace, WorkspaceError } from 'ragloom/workspace';
      const client = new Client({ path: ':memory:' });
      const ds = await client.createDataset({ name: 'kb' });
      let err;
      try { await client.createDataset({ name: '' }); } catch (e) { err = e; }
      // Ranking settings are per Client: two Clients on one file, one without feedback, rank differently.
      const path = 'kb.db';
      const a = new Client({ path });
      const kb = await a.createDataset({ name: 'kb' });
      const texts = ['plasma confinement in a tokamak', 'tokamak plasma confinement and the divertor', 'confinement time of a hot plasma',
        'the tokamak divertor handles heat exhaust', 'bread dough rises with yeast', 'a sonnet has fourteen lines', 'glaciers carve valleys'];
      const docs = await kb.uploadDocuments(texts.map((_, i) => ({ display_name: 'd' + i + '.txt', blob: new TextEncoder().encode('x') })));
      for (const [i, d] of docs.entries()) await d.addChunk({ content: texts[i] });
      const b = new Client({ path, retrieval: { termFeedbackDocs: 0, feedbackDocs: 0 } });
      const rank = async (c) => (await c.retrieve({ dataset_ids: [kb.id], question: 'plasma confinement', similarity_threshold: 0 })).map((x) => x.similarity);
      const ra = await rank(a), rb = await rank(b), ra2 = await rank(a);
      console.log(JSON.stringify({ name: ds.name, isApiError: err instanceof ApiError, code: err.code,
        ws: typeof Workspace.open, wse: typeof WorkspaceError, rm3: DEFAULT_RETRIEVAL_OPTIONS.termFeedbackDocs,
        differ: JSON.stringify(ra) !== JSON.stringify(rb), stable: JSON.stringify(ra) === JSON.stringify(ra2) }));
      await a.close();
      await b.close();
      await client.close();
    `);
    const out = execFileSync(process.execPath, ['main.mjs'], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ name: 'kb', isApiError: true, code: 101, ws: 'function', wse: 'function', rm3: 10, differ: true, stable: true });
  });

  it("each integration is its own subpath export (ragloom/mcp, /ai-sdk, /langchain, /llamaindex), and the main entry loads none of their frameworks", () => {
    writeFileSync(join(app, 'subpaths.mjs'), `
      const root = await import('ragloom');
      const mcp = await import('ragloom/mcp');
      const ai = await import('ragloom/ai-sdk');
      const lc = await import('ragloom/langchain');
      const li = await import('ragloom/llamaindex');
      console.log(JSON.stringify({
        root: ['createMcpServer', 'retrievalTool', 'RagloomRetriever', 'RagloomVectorStore'].filter((k) => k in root),
        mcp: Object.keys(mcp).sort(), ai: Object.keys(ai).sort(), lc: Object.keys(lc).sort(), li: Object.keys(li).sort(),
      }));
    `);
    const out = execFileSync(process.execPath, ['subpaths.mjs'], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({
      root: [],
      mcp: ['MCP_TOOLS', 'createMcpServer', 'serveMcpHttp'],
      ai: ['embeddingModel', 'rerankingModel', 'retrievalTool'],
      lc: ['RagloomEmbeddings', 'RagloomRetriever', 'RagloomVectorStore'],
      li: ['RagloomEmbedding', 'RagloomRetriever', 'RagloomVectorStore', 'toMetadataCondition'],
    });
    // The main entry imports no framework: it runs with every framework's resolution refused.
    writeFileSync(join(app, 'hook.mjs'), `
      const FRAMEWORKS = /^(@modelcontextprotocol\\/|@langchain\\/|@llamaindex\\/|(llamaindex|zod|ai)(\\/|$))/;
      export async function resolve(spec, ctx, next) {
        if (FRAMEWORKS.test(spec)) throw Object.assign(new Error('blocked ' + spec), { code: 'ERR_MODULE_NOT_FOUND' });
        return next(spec, ctx);
      }
    `);
    writeFileSync(join(app, 'register.mjs'), "import { register } from 'node:module'; register('./hook.mjs', import.meta.url);");
    writeFileSync(join(app, 'plain.mjs'), "import { Client } from 'ragloom'; const c = new Client({ path: ':memory:' }); await c.createDataset({ name: 'x' }); await c.close(); console.log('ok');");
    expect(execFileSync(process.execPath, ['--import', './register.mjs', 'plain.mjs'], { cwd: app, encoding: 'utf8' }).trim()).toBe('ok');
    const blocked = spawnSync(process.execPath, ['--import', './register.mjs', '--input-type=module', '-e', "await import('ragloom/langchain')"], { cwd: app, encoding: 'utf8' });
    expect(blocked.stderr).toContain('blocked @langchain/');
  });

  it('the ragloom command prints its usage', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/ragloom.js'), '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('ragloom quickstart');
    const bad = spawnSync(process.execPath, [join(ROOT, 'bin/ragloom.js'), 'frobnicate'], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('unknown command "frobnicate"');
  });
});

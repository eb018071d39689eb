/**
 * ragloom's MCP server through the MCP SDK's own client: `ragloom mcp` as a child process over
 * stdio (from the sources), `ragloom mcp --http`, and serveMcpHttp over a local and a remote Client.
 * Every tool is called, bad arguments come back as tool errors, and the server keeps answering.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { serveMcpHttp, MCP_TOOLS } from '../../src/integrations/mcp/index.js';
import { parsedDataset, EMBD, LLM } from '../acceptance/modes.js';
import { run } from '../cli/run.js';

const CLI = fileURLToPath(new URL('../faults/fixtures/cli.mjs', import.meta.url));
const TSX = import.meta.resolve('tsx');

let dir: string;
let db: string;
let ids: { dataset: string; chat: string; memory: string; document: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-mcp-'));
  db = join(dir, 'kb.db');
  const c = new Client({ path: db });
  const { ds, docs } = await parsedDataset(c);
  await c.createDataset({ name: 'empty', description: 'nothing yet' });
  const chat = await c.createChat({ name: 'science-chat', description: 'answers from science', dataset_ids: [ds.id] });
  const memory = await c.createMemory({ name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
  ids = { dataset: ds.id, chat: chat.id, memory: memory.id, document: docs[0]!.id };
  await c.close();
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const text = (r: unknown): string => ((r as CallToolResult).content[0] as { text: string }).text;
const parsed = (r: unknown) => JSON.parse(text(r)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const jsonLines = (r: unknown) => text(r).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

/** Calls every tool as an assistant would and checks what comes back; `write`: the write tools are listed. */
async function exercise(mcp: McpClient, write: boolean): Promise<void> {
  const tools = (await mcp.listTools()).tools;
  expect(tools.map((t) => t.name)).toEqual(write ? [...MCP_TOOLS.read, ...MCP_TOOLS.write] : [...MCP_TOOLS.read]);
  const retrieval = tools.find((t) => t.name === 'ragflow_retrieval')!;
  // RAGFlow's arguments, and the datasets listed in the description as RAGFlow lists them.
  expect(Object.keys(retrieval.inputSchema.properties!)).toEqual(expect.arrayContaining([
    'dataset_ids', 'document_ids', 'question', 'page', 'page_size', 'similarity_threshold', 'vector_similarity_weight', 'top_k', 'rerank_id', 'keyword',
  ]));
  expect(retrieval.inputSchema.required).toEqual(['question']);
  expect(retrieval.description).toContain(JSON.stringify({ id: ids.dataset, name: 'science', description: '' }));
  expect(retrieval.annotations).toMatchObject({ readOnlyHint: true });

  // Without dataset_ids: every dataset (one of them empty) is searched.
  const all = parsed(await mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: 'What pulls the ocean tides?' } }));
  expect(all.chunks[0]).toMatchObject({ document_name: 'tides.md', dataset_name: 'science', dataset_id: ids.dataset, document_metadata: { name: 'tides.md', document_id: all.chunks[0].document_id } });
  expect(all.chunks[0].content).toContain('gravitational pull of the moon');
  expect(all.query_info).toMatchObject({ question: 'What pulls the ocean tides?', similarity_threshold: 0.2, dataset_count: 2 });
  expect(all.pagination).toMatchObject({ page: 1, page_size: 10 });
  const one = parsed(await mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: 'bread', dataset_ids: [ids.dataset], page_size: 1, similarity_threshold: 0, vector_similarity_weight: 0.5 } }));
  expect(one.chunks).toHaveLength(1);
  expect(one.chunks[0].document_name).toBe('bread.md');
  expect(one.pagination.total_chunks).toBeGreaterThanOrEqual(1);

  const datasets = jsonLines(await mcp.callTool({ name: 'ragflow_list_datasets', arguments: {} }));
  expect(datasets.map((d) => d.name).sort()).toEqual(['empty', 'science']);
  expect(datasets.find((d) => d.name === 'empty')).toMatchObject({ description: 'nothing yet' });
  expect(jsonLines(await mcp.callTool({ name: 'ragflow_list_chats', arguments: {} }))).toEqual([
    { id: ids.chat, name: 'science-chat', description: 'answers from science', dataset_ids: [ids.dataset] },
  ]);

  const answer = parsed(await mcp.callTool({ name: 'ragloom_ask', arguments: { chat_id: ids.chat, question: 'What pulls the ocean tides?' } }));
  expect(answer.answer).toMatch(/moon.*\[ID:\d+\]/s);
  const cited = Number(/\[ID:(\d+)\]/.exec(answer.answer)![1]);
  expect(answer.references[cited]).toMatchObject({ id: cited, document_name: 'tides.md', dataset_id: ids.dataset });

  expect(jsonLines(await mcp.callTool({ name: 'ragloom_list_memories', arguments: {} }))).toEqual([{ id: ids.memory, name: 'notes', memory_type: ['raw'], description: '' }]);
  if (write) {
    const added = await mcp.callTool({ name: 'ragloom_add_memory_message', arguments: { memory_id: ids.memory, agent_id: 'a1', session_id: 's1', user_input: 'Where do rivers go?', agent_response: 'Rivers carry water to the sea.' } });
    expect(text(added)).toBe('All add to task.');
    const found = parsed(await mcp.callTool({ name: 'ragloom_search_memory', arguments: { memory_id: [ids.memory], query: 'rivers sea', similarity_threshold: 0 } })) as unknown as Array<Record<string, unknown>>;
    expect(found[0]).toMatchObject({ memory_id: ids.memory, agent_id: 'a1', session_id: 's1', message_type: 'raw' });
    expect(String(found[0]!.content)).toContain('Rivers carry water to the sea.');
  } else {
    const r = await mcp.callTool({ name: 'ragloom_add_memory_message', arguments: { memory_id: ids.memory, agent_id: 'a', session_id: 's', user_input: 'x', agent_response: 'y' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/ragloom_add_memory_message not found/);
  }

  // Bad arguments are tool errors the assistant reads; the server goes on answering.
  for (const [name, args, message] of [
    ['ragflow_retrieval', {}, /question/],
    ['ragflow_retrieval', { question: 'x', page_size: 0 }, /page_size/],
    ['ragflow_retrieval', { question: 'x', similarity_threshold: 'high' }, /similarity_threshold/],
    ['ragflow_retrieval', { question: 'x', dataset_ids: ['0'.repeat(32)] }, /^\[102\] You don't own the dataset/],
    ['ragflow_retrieval', { question: 'x', dataset_ids: [ids.dataset], metadata_condition: { conditions: [{ name: 'a', comparison_operator: '=' }] } }, /^\[100\] KeyError\('value'\)/],
    ['ragloom_ask', { chat_id: '0'.repeat(32), question: 'x' }, /^\[102\] You don't own the chat/],
    ['ragloom_search_memory', { memory_id: ids.memory }, /query/],
    ['no_such_tool', {}, /no_such_tool not found/],
  ] as const) {
    const r = await mcp.callTool({ name, arguments: args });
    expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
    expect(text(r)).toMatch(message);
  }
  expect(parsed(await mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: 'tides' } })).chunks.length).toBeGreaterThan(0);

  // Datasets (and their documents) as resources.
  const resources = (await mcp.listResources()).resources;
  expect(resources.map((r) => r.name).sort()).toEqual(['empty', 'science']);
  const science = resources.find((r) => r.name === 'science')!;
  expect(science.uri).toBe(`ragloom://datasets/${ids.dataset}`);
  const body = JSON.parse(((await mcp.readResource({ uri: science.uri })).contents[0] as { text: string }).text) as { documents: Array<{ id: string; name: string; run: string; uri: string }> };
  expect(body.documents.map((d) => [d.name, d.run])).toEqual([['bread.md', 'DONE'], ['rivers.txt', 'DONE'], ['tides.md', 'DONE']]);
  const tides = body.documents.find((d) => d.name === 'tides.md')!;
  expect(((await mcp.readResource({ uri: tides.uri })).contents[0] as { text: string }).text).toContain('gravitational pull of the moon');
  expect((await mcp.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toContain('ragloom://datasets/{dataset_id}/documents/{document_id}');
  await expect(mcp.readResource({ uri: `ragloom://datasets/${'0'.repeat(32)}` })).rejects.toThrow(/^MCP error -32602: \[101\] Field: <id> - Message: <Invalid UUID1 format>/);
  const unknown = ids.dataset.replace(/^.{8}/, '00000000');
  await expect(mcp.readResource({ uri: `ragloom://datasets/${unknown}` })).rejects.toThrow(/^MCP error -32602: \[102\] .*lacks permission for dataset/);
  await expect(mcp.readResource({ uri: `ragloom://datasets/${ids.dataset}/documents/${unknown}` })).rejects.toThrow(/^MCP error -32602: \[102\] You don't own the document/);
  // Still answering.
  expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
}

function stdioClient(args: string[]): { mcp: McpClient; transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', TSX, CLI, 'mcp', ...args], stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (c) => (err += String(c)));
  return { mcp: new McpClient({ name: 'ragloom-test', version: '1.0.0' }), transport, stderr: () => err };
}

describe('ragloom mcp (stdio, a child process)', () => {
  it('answers the SDK client: every tool, bad arguments as tool errors, datasets as resources; ends when the client closes', async () => {
    const { mcp, transport, stderr } = stdioClient(['--db', db]);
    await mcp.connect(transport);
    const pid = transport.pid!;
    try {
      expect(mcp.getServerVersion()).toMatchObject({ name: 'ragloom' });
      await exercise(mcp, true);
    } finally {
      await mcp.close();
    }
    // The process has ended (no signal needed).
    await expect.poll(() => { try { process.kill(pid, 0); return 'alive'; } catch { return 'gone'; } }, { timeout: 10_000 }).toBe('gone');
    expect(stderr()).toBe('');
  }, 120_000);

  it('--read-only opens the file read-only and leaves out the write tools; nothing is written', async () => {
    const before = (await stat(db)).mtimeMs;
    const { mcp, transport } = stdioClient(['--db', db, '--read-only']);
    await mcp.connect(transport);
    try {
      await exercise(mcp, false);
    } finally {
      await mcp.close();
    }
    expect((await stat(db)).mtimeMs).toBe(before);
  }, 120_000);

  it('a missing database is refused before the protocol starts', async () => {
    const r = await new Promise<{ code: number | null; err: string; out: string }>((done) => {
      const child = spawn(process.execPath, ['--import', TSX, CLI, 'mcp', '--db', join(dir, 'nope.db')], { stdio: ['pipe', 'pipe', 'pipe'] });
      let err = '';
      let out = '';
      child.stderr.on('data', (c) => (err += c));
      child.stdout.on('data', (c) => (out += c));
      child.on('close', (code) => done({ code, err, out }));
    });
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toMatch(/nope\.db: no such database/);
  }, 60_000);
});

describe('ragloom mcp --help and bad flags', () => {
  it('lists its options, and refuses a bad flag by its name before opening anything', async () => {
    const help = await run(['mcp', '--help']);
    expect(help.code).toBe(0);
    for (const f of ['--db FILE', '--read-only', '--http', '--port N', '--host H', 'ragflow_retrieval', 'npm install @modelcontextprotocol/sdk zod']) expect(help.out).toContain(f);
    expect((await run(['--help'])).out).toContain('ragloom mcp [--db FILE] [--read-only] [--http [--port N] [--host H]]');
    const bad = await run(['mcp', '--db', db, '--http', '--port', 'ten']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("--port must be a whole number, got 'ten'");
    const typo = await run(['mcp', '--db', db, '--readonly']);
    expect(typo.err).toContain('unknown option --readonly; did you mean --read-only?');
  });
});

describe('ragloom mcp --http', () => {
  it('listens where it says, answers the SDK client over streamable HTTP, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', TSX, CLI, 'mcp', '--db', db, '--http', '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    try {
      await expect.poll(() => out.includes('\n'), { timeout: 60_000 }).toBe(true);
      const { url, read_only } = JSON.parse(out) as { url: string; read_only: boolean };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(read_only).toBe(false);
      const mcp = new McpClient({ name: 'ragloom-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(url)));
      await exercise(mcp, true);
      await mcp.close();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});

describe('serveMcpHttp()', () => {
  for (const mode of ['local', 'remote'] as const) {
    it(`serves a ${mode} Client; refuses other methods, paths and hosts`, async () => {
      const server = mode === 'remote' ? await startServer({ path: db, port: 0 }) : undefined;
      const client = server ? new Client({ baseUrl: server.url, apiKey: server.apiKey }) : new Client({ path: db });
      const http = await serveMcpHttp(client, { port: 0 });
      try {
        const mcp = new McpClient({ name: 'ragloom-test', version: '1.0.0' });
        await mcp.connect(new StreamableHTTPClientTransport(new URL(http.url)));
        await exercise(mcp, true);
        await mcp.close();
        expect((await fetch(http.url)).status).toBe(405);
        expect((await fetch(http.url.replace('/mcp', '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
        // A page of another site that resolved its name to 127.0.0.1 (DNS rebinding) sends its own Host.
        const status = (host: string) => new Promise<number>((done, fail) => {
          const req = request(http.url, { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
            res.resume();
            done(res.statusCode ?? 0);
          });
          req.on('error', fail);
          req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
        });
        expect(await status('evil.example')).toBe(403);
        expect(await status(`localhost:${http.port}`)).toBe(200);
      } finally {
        await http.close();
        await client.close();
        await server?.close();
      }
    }, 120_000);
  }
});

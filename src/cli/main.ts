import { parseArgs } from 'node:util';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { Client } from '../client/index.js';
import { ApiError } from '../api/errors.js';
import { ingestFolder, summaryTable } from './ingest.js';
import { runWorkspaceCommand } from './workspace.js';
import { formatTable } from './table.js';
import type { Chunk, Message } from '../client/index.js';
import { BUILTIN_EMBEDDINGS, pullModel, modelCacheDir } from '../embed/index.js';
import { startServer } from '../server/index.js';
import { runAgentCommand, AgentUsageError } from './agent.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The package's own docs/ folder: real documents that ship with ragloom, used by quickstart. */
const BUNDLED_DOCS = resolve(HERE, '../../docs');

const USAGE = `ragloom — an embeddable retrieval engine with RAGFlow's interface

Usage:
  ragloom quickstart [--folder DIR] [--question TEXT] [--db FILE]
      ingest a folder (default: ragloom's own docs) into a fresh database, ask, print ranked chunks and a cited answer
  ragloom ingest <folder> --dataset NAME [--db FILE] [--chunk-method M]
      upload and parse every supported file of a folder, with a progress bar and a summary
  ragloom retrieve <question> --dataset NAME [--db FILE] [--top N] [--weight W]
      print the ranked chunks for a question
  ragloom ask <question> --dataset NAME [--db FILE] [--model NAME@FACTORY --base-url URL [--api-key K]]
      answer with cited sources: the built-in extractive model, or an OpenAI-compatible server
  ragloom models ls
      the built-in embedding models (offline, shipped in the package)
  ragloom models pull <hub id> [--dir DIR]
      download a Hugging Face ONNX model once (online machines only); then register it with
      { type: 'embedding', name: '<hub id>', factory: 'HuggingFace' } and it runs offline
  ragloom serve [--db FILE] [--port N] [--host H] [--new-key]
      serve the database over RAGFlow's REST API (/api/v1) and the OpenAI-compatible endpoint;
      prints the admin API key on the first start (or with --new-key); SIGINT/SIGTERM stop it gracefully
  ragloom agent templates
      the agent templates shipped with ragloom (RAGFlow canvas DSL; see docs/agents.md)
  ragloom agent run <template|file.json> --dataset NAME [--question TEXT] [--input k=v] [--trace]
      run an agent (a shipped template or a RAGFlow DSL file) on your datasets: one question, or a
      conversation on stdin; forms are answered from --input or on the terminal
  ragloom workspace show|ls|add|rm|bind <dir> ...
      inspect and edit a PaddleX workspace folder (see docs/workspace.md)

Options:
  --db FILE   the SQLite database (default ./ragloom.db; quickstart: ./ragloom-quickstart.db)
`;

function printChunks(chunks: Chunk[], out = process.stdout): void {
  const rows = chunks.map((c, i) => [
    String(i + 1),
    (c.similarity ?? 0).toFixed(3),
    (c.vector_similarity ?? 0).toFixed(3),
    (c.term_similarity ?? 0).toFixed(3),
    String(c.document_name ?? c.document_keyword ?? ''),
    c.content.replace(/\s+/g, ' ').trim().slice(0, 90),
  ]);
  out.write(formatTable(['#', 'SCORE', 'VECTOR', 'TERM', 'DOCUMENT', 'CHUNK'], rows));
}

/** An answer with its sources: each `[ID:n]` is the n-th reference chunk. */
function printAnswer(answer: Message, model: string, out = process.stdout): void {
  out.write(`\nAnswer (${model}):\n\n${answer.content}\n\nSources:\n`);
  const cited = new Set([...answer.content.matchAll(/\[ID:(\d+)\]/g)].map((m) => Number(m[1])));
  (answer.reference ?? []).forEach((c, i) => {
    if (cited.has(i)) out.write(`  [ID:${i}] ${c.document_name} (similarity ${(c.similarity ?? 0).toFixed(3)})\n`);
  });
}

async function askCmd(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: {
    dataset: { type: 'string', multiple: true }, db: { type: 'string' }, model: { type: 'string' }, 'base-url': { type: 'string' }, 'api-key': { type: 'string' },
  } });
  if (positionals.length !== 1 || !values.dataset?.length) throw new UsageError('ragloom ask <question> --dataset NAME [--db FILE] [--model NAME@FACTORY --base-url URL]');
  const models = values.model && values['base-url']
    ? [{ type: 'chat' as const, name: values.model.slice(0, values.model.lastIndexOf('@')), factory: values.model.slice(values.model.lastIndexOf('@') + 1), base_url: values['base-url'], api_key: values['api-key'] }]
    : [];
  const client = new Client({ path: values.db ?? 'ragloom.db', models });
  try {
    const ids = [];
    for (const n of values.dataset) ids.push((await client.getDataset(n)).id);
    const chat = await client.createChat({ name: `ask-${Date.now()}`, dataset_ids: ids, ...(values.model ? { llm_id: values.model } : {}) });
    try {
      let last: Message | undefined;
      for await (const m of (await chat.createSession()).ask(positionals[0]!, { stream: true })) last = m;
      if (last) printAnswer(last, chat.llm_id);
    } finally {
      await client.deleteChats({ ids: [chat.id] });
    }
    return 0;
  } finally {
    await client.close();
  }
}

async function quickstart(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { folder: { type: 'string' }, question: { type: 'string' }, db: { type: 'string' } } });
  const db = values.db ?? 'ragloom-quickstart.db';
  for (const s of ['', '-wal', '-shm']) await rm(`${db}${s}`, { force: true });
  const folder = values.folder ?? BUNDLED_DOCS;
  const question = values.question ?? 'How is the hybrid similarity score of a chunk computed?';
  const client = new Client({ path: db });
  try {
    process.stdout.write(`Ingesting ${folder} into ${db} …\n`);
    const s = await ingestFolder(client, folder, 'quickstart');
    process.stdout.write(summaryTable(s));
    process.stdout.write(`\nQuestion: ${question}\n\n`);
    const chunks = await client.retrieve({ question, dataset_ids: [s.dataset.id], page_size: 5, similarity_threshold: 0 });
    printChunks(chunks);
    const chat = await client.createChat({ name: 'quickstart', dataset_ids: [s.dataset.id] });
    const answer = await (await chat.createSession()).ask(question);
    printAnswer(answer, chat.llm_id);
    return chunks.length ? 0 : 1;
  } finally {
    await client.close();
  }
}

async function ingest(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: {
    dataset: { type: 'string' }, db: { type: 'string' }, 'chunk-method': { type: 'string' }, quiet: { type: 'boolean' },
  } });
  if (positionals.length !== 1 || !values.dataset) throw new UsageError('ragloom ingest <folder> --dataset NAME [--db FILE]');
  const client = new Client({ path: values.db ?? 'ragloom.db' });
  try {
    const s = await ingestFolder(client, positionals[0]!, values.dataset, { chunk_method: values['chunk-method'], quiet: values.quiet });
    process.stdout.write(summaryTable(s));
    return s.rows.every((r) => r.status === 'DONE') ? 0 : 2;
  } finally {
    await client.close();
  }
}

async function retrieveCmd(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: {
    dataset: { type: 'string', multiple: true }, db: { type: 'string' }, top: { type: 'string' }, weight: { type: 'string' }, threshold: { type: 'string' },
  } });
  if (positionals.length !== 1 || !values.dataset?.length) throw new UsageError('ragloom retrieve <question> --dataset NAME [--db FILE]');
  const client = new Client({ path: values.db ?? 'ragloom.db' });
  try {
    const ids = [];
    for (const n of values.dataset) ids.push((await client.getDataset(n)).id);
    const chunks = await client.retrieve({
      question: positionals[0], dataset_ids: ids, page_size: Number(values.top ?? 10),
      ...(values.weight ? { vector_similarity_weight: Number(values.weight) } : {}),
      ...(values.threshold ? { similarity_threshold: Number(values.threshold) } : {}),
    });
    printChunks(chunks);
    return 0;
  } finally {
    await client.close();
  }
}

async function models(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { dir: { type: 'string' } } });
  const [sub, id] = positionals;
  if (sub === 'ls') {
    process.stdout.write(formatTable(['ID', 'DIM'], BUILTIN_EMBEDDINGS.map((m) => [`${m.name}@Builtin`, String(m.dim)])));
    process.stdout.write(`hub models are cached in ${values.dir ?? modelCacheDir()}\n`);
    return 0;
  }
  if (sub !== 'pull' || !id) throw new UsageError('ragloom models ls | ragloom models pull <hub id> [--dir DIR]');
  const dir = values.dir ?? modelCacheDir();
  const r = await pullModel(id, dir, {
    onProgress: (p) => { if (p.status === 'done' && p.file) process.stdout.write(`  ${p.file}\n`); },
  });
  process.stdout.write(`${r.hubId} is in ${r.cacheDir}${r.dim ? ` (${r.dim}-d)` : ''}; register it as { type: 'embedding', name: '${r.hubId}', factory: 'HuggingFace' }\n`);
  return 0;
}

/** `ragloom serve`: runs until SIGINT or SIGTERM, then closes gracefully (in-flight requests finish). */
async function serve(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: {
    db: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'new-key': { type: 'boolean' },
  } });
  const port = values.port === undefined ? 9380 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('ragloom serve [--db FILE] [--port N] [--host H] [--new-key]');
  const db = values.db ?? 'ragloom.db';
  const srv = await startServer({ path: db, port, host: values.host ?? '127.0.0.1', newAdminKey: values['new-key'] ?? false });
  process.stdout.write(`ragloom serving ${db} at ${srv.url}/api/v1 (OpenAI-compatible: ${srv.url}/api/v1/openai/<chat_id>)\n`);
  if (srv.firstStart || values['new-key']) {
    process.stdout.write(`Admin API key (shown once; keep it): ${srv.apiKey}\n`);
  } else {
    process.stdout.write('Admin API key: printed when this database was first served (`ragloom serve --new-key` issues another).\n');
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.stdout.write('ragloom: shutting down (finishing in-flight requests)…\n');
  await srv.close();
  return 0;
}

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'quickstart': return await quickstart(rest);
      case 'ingest': return await ingest(rest);
      case 'retrieve': return await retrieveCmd(rest);
      case 'ask': return await askCmd(rest);
      case 'workspace': return await runWorkspaceCommand(rest);
      case 'models': return await models(rest);
      case 'serve': return await serve(rest);
      case 'agent': return await runAgentCommand(rest);
      case undefined: case '-h': case '--help': case 'help':
        process.stdout.write(USAGE);
        return cmd === undefined ? 1 : 0;
      default:
        process.stderr.write(`Unknown command "${cmd}"\n\n${USAGE}`);
        return 1;
    }
  } catch (e) {
    if (e instanceof UsageError || e instanceof AgentUsageError) process.stderr.write(`Usage: ${e.message}\n`);
    else if (e instanceof ApiError) process.stderr.write(`Error ${e.code}: ${e.message}\n`);
    else process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}


/**
 * The `ragloom` command. Each subcommand is a {@link Command} in `COMMANDS` (its options, which
 * also write its `--help`, and its `run`); `./args.ts` holds what they share: `--help`, `--json`,
 * flag checks that name the flag, JSON errors, `--version`. docs/cli.md documents every command.
 */
import { rm } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { Client, ApiError } from '../client/index.js';
import type { Chunk, DataSet, Message } from '../client/index.js';
import { BUILTIN_EMBEDDINGS, pullModel, modelCacheDir } from '../embed/index.js';
import { startServer } from '../server/index.js';
import { ingestPath, summaryTable, summaryJson, CHUNK_METHODS } from './ingest.js';
import { runWorkspaceCommand } from './workspace.js';
import { formatTable } from './table.js';
import { agentCommand } from './agent.js';
import { MigrationError } from '../migrate/index.js';
import { runMigrateCommand, MigrateUsageError } from './migrate.js';
import { mcpCommand } from './mcp.js';
import {
  type Command, type OptionSpec, VERSION, UsageError, CliError, runCommand, usageLine, writeJson, errorJson, errorText, wantsJson,
  intFlag, numberFlag, choiceFlag, stringFlag, listFlag, existingDatabase, chatModelFlags, DEFAULT_DB, DB_OPTION as DB, dbFlag, storeOf, shownDb, nearest, untilStopped, firstFive,
} from './args.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The package's own docs/ folder: real documents that ship with ragloom, used by quickstart. */
const BUNDLED_DOCS = resolve(HERE, '../../docs');

const DATASETS: OptionSpec = { type: 'string', multiple: true, arg: 'NAME', help: 'a dataset to search', default: 'every dataset of the database' };
const MODEL: Record<string, OptionSpec> = {
  model: { type: 'string', arg: 'NAME@FACTORY', help: 'a chat model of an OpenAI-compatible server (with --base-url), e.g. llama3@Ollama', default: 'the built-in extractive model' },
  'base-url': { type: 'string', arg: 'URL', help: 'the OpenAI-compatible server of --model, e.g. http://127.0.0.1:11434/v1' },
  'api-key': { type: 'string', arg: 'KEY', help: "that server's API key" },
};

/** Every dataset of the database, page by page. */
async function allDatasets(client: Client): Promise<DataSet[]> {
  const out: DataSet[] = [];
  for (let page = 1; ; page++) {
    const part = await client.listDatasets({ page, page_size: 100, orderby: 'create_time', desc: false });
    out.push(...part);
    if (part.length < 100) return out;
  }
}

/** The datasets named by `--dataset` (every one of the database when none is named). */
async function chosenDatasets(client: Client, names: string[], db: string): Promise<DataSet[]> {
  if (!names.length) {
    const all = await allDatasets(client);
    if (!all.length) throw new CliError(`${db} has no datasets yet: \`ragloom ingest <folder> --db ${db}\` makes one`);
    return all;
  }
  const out: DataSet[] = [];
  for (const n of names) {
    try {
      out.push(await client.getDataset(n));
    } catch (e) {
      if (e instanceof ApiError) throw new CliError(`--dataset ${n}: no such dataset in ${db} (\`ragloom list --db ${db}\` lists them)`);
      throw e;
    }
  }
  return out;
}

/**
 * The datasets a chat can answer from: those holding parsed chunks (a chat refuses a dataset
 * without any, naming it by id). Every one named with --dataset must; of all the database's,
 * the empty ones are left out. None left: say which, by name, and what to do.
 */
function answerableDatasets(ds: DataSet[], named: boolean, db: string): DataSet[] {
  const empty = ds.filter((d) => !d.chunk_count);
  const list = (xs: DataSet[]) => firstFive(xs.map((d) => JSON.stringify(d.name)));
  const fix = `\`ragloom ingest <folder> --dataset <name> --db ${db}\` adds and parses files; \`ragloom list --dataset <name> --db ${db}\` shows why a document is not parsed`;
  if (named && empty.length) throw new CliError(`${empty.length === 1 ? 'dataset' : 'datasets'} ${list(empty)} of ${db} ${empty.length === 1 ? 'holds' : 'hold'} no parsed document yet: ${fix}`);
  const usable = ds.filter((d) => d.chunk_count);
  if (!usable.length) throw new CliError(`no dataset of ${db} holds a parsed document yet (${list(ds)}): ${fix}`);
  return usable;
}

const chunkJson = (c: Chunk, i: number) => ({
  rank: i + 1, id: c.id, similarity: c.similarity ?? 0, vector_similarity: c.vector_similarity ?? 0, term_similarity: c.term_similarity ?? 0,
  document_id: c.document_id, document_name: c.document_name ?? c.document_keyword ?? '', dataset_id: c.dataset_id, content: c.content,
});

/**
 * What a chunk's row shows: the sentence that matched the question best (the one of its
 * `highlight` with the most distinct question words), else its first sentence, on one line.
 */
export function matchedSentence(c: { content: string; highlight?: string }, width = 90): string {
  let best = '';
  let most = 0;
  // The highlight joins its sentences with "..." (after a sentence's own period: "....").
  for (const s of c.highlight?.split(/\.{3}(?!\.)/) ?? []) {
    const words = new Set([...s.matchAll(/<em>([^<]*)<\/em>/g)].map((m) => m[1]!.toLowerCase())).size;
    if (words > most) {
      most = words;
      best = s;
    }
  }
  const text = (best ? best.replace(/<\/?em>/g, '') : (c.content.trim().split(/(?<=[.!?])\s+|\n/)[0] ?? '')).replace(/\s+/g, ' ').trim();
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** Ranked chunks: numbered from 1, or by the `[ID:n]` an answer cites them with (`ids`). */
function printChunks(chunks: Chunk[], out: NodeJS.WritableStream = process.stdout, ids = false): void {
  const rows = chunks.map((c, i) => [
    String(ids ? i : i + 1),
    (c.similarity ?? 0).toFixed(3),
    (c.vector_similarity ?? 0).toFixed(3),
    (c.term_similarity ?? 0).toFixed(3),
    String(c.document_name ?? c.document_keyword ?? ''),
    matchedSentence(c),
  ]);
  out.write(formatTable([ids ? 'ID' : '#', 'SCORE', 'VECTOR', 'TERM', 'DOCUMENT', 'MATCHING SENTENCE'], rows));
}

/** The `[ID:n]` an answer cites, with their documents and scores (the n-th reference chunk). */
const citedSources = (answer: Message) => {
  const cited = new Set([...answer.content.matchAll(/\[ID:(\d+)\]/g)].map((m) => Number(m[1])));
  return (answer.reference ?? []).map((c, i) => ({ id: i, c })).filter((x) => cited.has(x.id))
    .map(({ id, c }) => ({ id, document_id: c.document_id, document_name: c.document_name, similarity: c.similarity ?? 0, content: c.content }));
};

/** An answer with its sources: each `[ID:n]` is the n-th reference chunk. */
function printAnswer(answer: Message, model: string, out: NodeJS.WritableStream = process.stdout): void {
  const sources = citedSources(answer);
  out.write(`\nAnswer (${model}):\n\n${answer.content}\n\n`);
  if (!sources.length) {
    out.write('Sources: none (nothing retrieved answers the question)\n');
    return;
  }
  out.write('Sources:\n');
  for (const s of sources) out.write(`  [ID:${s.id}] ${s.document_name} (similarity ${s.similarity.toFixed(3)})\n`);
}

// ------------------------------------------------------------------------------------------ commands

/**
 * quickstart's defaults: a database of its own (deleted first) and a question its corpus answers;
 * its dataset's description marks a database quickstart made (the only kind it deletes unasked).
 */
const QUICKSTART = {
  db: 'ragloom-quickstart.db',
  question: 'How is the hybrid similarity score of a chunk computed?',
  dataset: 'quickstart',
  mark: 'Made by `ragloom quickstart`, which deletes this database and makes it again on each run.',
} as const;

/**
 * Why quickstart must not delete `db` before it begins; undefined when it may: there is no such
 * file, or it is a database quickstart made (one dataset, quickstart's, marked, and nothing else
 * of the user's: no other dataset, no chat but quickstart's, no agent, no memory).
 */
async function quickstartRefusal(db: string): Promise<string | undefined> {
  if (!existsSync(db)) return undefined;
  const keep = `quickstart deletes its --db first: give another --db (default ${QUICKSTART.db}), or --force to delete it`;
  if (statSync(db).isDirectory()) return `--db ${db} is a folder; ${keep}`;
  let client: Client;
  try {
    client = new Client({ ...storeOf(db), readonly: true });
  } catch {
    return `--db ${db} exists and is not a database quickstart made (it is not a ragloom database of this version); ${keep}`;
  }
  try {
    const datasets = await allDatasets(client);
    const others = datasets.filter((d) => d.name !== QUICKSTART.dataset || d.description !== QUICKSTART.mark);
    if (others.length || !datasets.length) {
      const names = firstFive(others.map((d) => JSON.stringify(d.name)));
      return `--db ${db} holds ${others.length ? `${others.length} dataset(s) quickstart did not make (${names})` : 'no dataset quickstart made'}; ${keep}`;
    }
    const chats = (await client.listChats({ page_size: 100 })).filter((c) => c.name !== QUICKSTART.dataset);
    const agents = await client.listAgents({ page_size: 1 });
    const memories = await client.listMemory({ page_size: 1 });
    if (chats.length || agents.length || memories.total_count > 0) {
      return `--db ${db} holds chats, agents or memories quickstart did not make; ${keep}`;
    }
    return undefined;
  } catch (e) {
    return `--db ${db} could not be read (${e instanceof Error ? e.message : String(e)}); ${keep}`;
  } finally {
    await client.close();
  }
}

const quickstart: Command = {
  spec: {
    name: 'quickstart', synopsis: '[--folder DIR] [--question TEXT] [--db FILE] [--force]',
    summary: "ingest a folder (default: ragloom's own docs) into a fresh database, ask, print ranked chunks and a cited answer",
    options: {
      folder: { type: 'string', arg: 'DIR', help: 'the folder to ingest', default: "ragloom's own docs/" },
      question: { type: 'string', arg: 'TEXT', help: 'the question', default: QUICKSTART.question },
      db: { type: 'string', arg: 'FILE', help: 'the database file, deleted first (only one quickstart made, unless --force)', default: QUICKSTART.db },
      force: { type: 'boolean', help: 'delete --db first even when quickstart did not make it' },
    },
    details: `quickstart starts from an empty database: it deletes --db first. It refuses to when the file
is not a database quickstart made (a database with your datasets, a text file): give another --db,
or --force to delete it anyway.`,
  },
  async run(c) {
    const db = stringFlag(c.values, 'db') ?? QUICKSTART.db;
    const folder = stringFlag(c.values, 'folder') ?? BUNDLED_DOCS;
    const question = stringFlag(c.values, 'question') ?? QUICKSTART.question;
    if (c.values.force !== true) {
      const refusal = await quickstartRefusal(db);
      if (refusal) throw new CliError(refusal);
    }
    for (const s of ['', '-wal', '-shm']) await rm(`${db}${s}`, { force: true });
    const client = new Client({ ...storeOf(db) });
    try {
      if (!c.json) c.out.write(`Ingesting ${folder} into ${db} …\n`);
      const s = await ingestPath(client, folder, { dataset: QUICKSTART.dataset, description: QUICKSTART.mark });
      if (!c.json) c.out.write(summaryTable(s));
      const chat = await client.createChat({ name: 'quickstart', dataset_ids: [s.dataset.id] });
      // The ranked table is the chat's own retrieval (its settings, the same chunks and scores the
      // answer was made from), so a source [ID:n] is row n of the table.
      const chunks = await client.retrieve({
        question, dataset_ids: [s.dataset.id], page_size: chat.top_n, top_k: chat.top_k,
        similarity_threshold: chat.similarity_threshold, vector_similarity_weight: chat.vector_similarity_weight, highlight: true,
      });
      const answer = await (await chat.createSession()).ask(question);
      if (c.json) {
        writeJson({ ingest: summaryJson(s, shownDb(db)), question, chunks: chunks.map((x, i) => ({ ...chunkJson(x, i), citation: i })), answer: { model: chat.llm_id, content: answer.content, sources: citedSources(answer) } }, c.out);
      } else {
        c.out.write(`\nQuestion: ${question}\n\n`);
        printChunks(chunks, c.out, true);
        printAnswer(answer, chat.llm_id, c.out);
      }
      return chunks.length ? 0 : 1;
    } finally {
      await client.close();
    }
  },
};

const ingest: Command = {
  spec: {
    name: 'ingest', synopsis: '<folder|file> [--dataset NAME] [--db FILE] [--chunk-method M] [--sync]',
    summary: 'add a folder (or one file) to a dataset: new files uploaded and parsed, changed ones re-parsed in place, unchanged ones skipped',
    positionals: { min: 1, max: 1 },
    options: {
      dataset: { type: 'string', arg: 'NAME', help: 'the dataset (created when missing)', default: "the folder's name" },
      db: DB,
      'chunk-method': { type: 'string', arg: 'M', help: `chunk method of a dataset ingest creates: ${CHUNK_METHODS.join(', ')}`, default: 'naive' },
      sync: { type: 'boolean', help: "also delete the dataset's documents whose files are gone (folders only)" },
      quiet: { type: 'boolean', help: 'no progress bar' },
      progress: { type: 'boolean', help: 'progress even when stderr is not a terminal (a line a second)' },
    },
    details: `A file becomes the document named by its path below the folder (sub/a.md -> sub__a.md).
Re-running compares each file with its document by name and content (sha256): unchanged files are
skipped, changed ones get their new bytes under the same document id and are parsed again (their
old chunks stay searchable until the new ones replace them in one transaction), new ones are
uploaded. The summary prints "added, updated, unchanged, removed". Exit status: 0 when every
parsed file is DONE, 2 when some failed, 1 on an error.`,
  },
  async run(c) {
    const method = choiceFlag(c.values, 'chunk-method', CHUNK_METHODS);
    const dataset = stringFlag(c.values, 'dataset');
    const db = dbFlag(c.values);
    const bar = !c.json && c.values.quiet !== true && (process.stderr.isTTY || c.values.progress === true) ? process.stderr : undefined;
    const client = new Client({ ...storeOf(db) });
    try {
      const s = await ingestPath(client, c.positionals[0]!, { dataset, chunk_method: method, sync: c.values.sync === true, progress: bar });
      if (c.json) writeJson(summaryJson(s, shownDb(db)), c.out);
      else c.out.write(summaryTable(s));
      return s.rows.every((r) => r.status === 'DONE') ? 0 : 2;
    } finally {
      await client.close();
    }
  },
};

const list: Command = {
  spec: {
    name: 'list', synopsis: '[--dataset NAME] [--db FILE]',
    summary: "the database's datasets; with --dataset, that dataset's documents",
    options: { dataset: { type: 'string', arg: 'NAME', help: 'list the documents of this dataset' }, db: DB },
  },
  async run(c) {
    const db = existingDatabase(dbFlag(c.values));
    const name = stringFlag(c.values, 'dataset');
    const client = new Client({ ...storeOf(db) });
    try {
      if (name) {
        const [ds] = await chosenDatasets(client, [name], db);
        const docs = await ds!.listDocuments({ page_size: 0, orderby: 'name', desc: false });
        if (c.json) {
          writeJson({ dataset: { id: ds!.id, name: ds!.name }, documents: docs.map((d) => ({
            id: d.id, name: d.name, run: d.run, chunk_count: d.chunk_count, token_count: d.token_count, size: d.size, chunk_method: d.chunk_method,
          })) }, c.out);
        } else {
          c.out.write(formatTable(['NAME', 'STATUS', 'CHUNKS', 'TOKENS', 'BYTES', 'ID'],
            docs.map((d) => [d.name, d.run, String(d.chunk_count), String(d.token_count), String(d.size), d.id])));
          c.out.write(`${docs.length} documents in ${ds!.name}\n`);
        }
        return 0;
      }
      const all = await allDatasets(client);
      if (c.json) {
        writeJson({ datasets: all.map((d) => ({
          id: d.id, name: d.name, document_count: d.document_count, chunk_count: d.chunk_count, chunk_method: d.chunk_method, embedding_model: d.embedding_model,
        })) }, c.out);
      } else {
        c.out.write(formatTable(['NAME', 'DOCUMENTS', 'CHUNKS', 'CHUNK METHOD', 'EMBEDDING MODEL', 'ID'],
          all.map((d) => [d.name, String(d.document_count), String(d.chunk_count), d.chunk_method, d.embedding_model, d.id])));
      }
      return 0;
    } finally {
      await client.close();
    }
  },
};

const retrieve: Command = {
  spec: {
    name: 'retrieve', aliases: ['search'], synopsis: '<question> [--dataset NAME]... [--db FILE] [--top N] [--weight W] [--threshold T]',
    summary: 'the ranked chunks for a question, with their documents and scores',
    positionals: { min: 1, max: 1 },
    options: {
      dataset: DATASETS, db: DB,
      top: { type: 'string', arg: 'N', help: 'how many chunks (1-1024)', default: '10' },
      weight: { type: 'string', arg: 'W', help: 'weight of vector similarity against term similarity (0-1)', default: 'none: the default ranking (docs/retrieval.md)' },
      threshold: { type: 'string', arg: 'T', help: 'leave out chunks scoring below this (0-1)', default: '0.2' },
    },
  },
  async run(c) {
    const top = intFlag(c.values, 'top', { min: 1, max: 1024, default: 10 });
    const weight = numberFlag(c.values, 'weight', { min: 0, max: 1 });
    const threshold = numberFlag(c.values, 'threshold', { min: 0, max: 1 });
    const question = c.positionals[0]!;
    if (!question.trim()) throw new UsageError('<question> is empty');
    const db = existingDatabase(dbFlag(c.values));
    const client = new Client({ ...storeOf(db) });
    try {
      const ds = await chosenDatasets(client, listFlag(c.values, 'dataset'), db);
      const chunks = await client.retrieve({
        question, dataset_ids: ds.map((d) => d.id), page_size: top, highlight: true,
        ...(weight !== undefined ? { vector_similarity_weight: weight } : {}),
        ...(threshold !== undefined ? { similarity_threshold: threshold } : {}),
      });
      if (c.json) writeJson({ question, datasets: ds.map((d) => d.name), chunks: chunks.map(chunkJson) }, c.out);
      else printChunks(chunks, c.out);
      return 0;
    } finally {
      await client.close();
    }
  },
};

const ask: Command = {
  spec: {
    name: 'ask', synopsis: '<question> [--dataset NAME]... [--db FILE] [--model NAME@FACTORY --base-url URL [--api-key K]]',
    summary: 'an answer with cited sources: the built-in extractive model, or an OpenAI-compatible server',
    positionals: { min: 1, max: 1 },
    options: { dataset: DATASETS, db: DB, ...MODEL },
  },
  async run(c) {
    const models = chatModelFlags(c);
    const question = c.positionals[0]!;
    if (!question.trim()) throw new UsageError('<question> is empty');
    const db = existingDatabase(dbFlag(c.values));
    const client = new Client({ ...storeOf(db), models });
    try {
      const named = listFlag(c.values, 'dataset');
      const ds = await answerableDatasets(await chosenDatasets(client, named, db), named.length > 0, db);
      const model = stringFlag(c.values, 'model');
      const chat = await client.createChat({ name: `ask-${Date.now()}`, dataset_ids: ds.map((d) => d.id), ...(model ? { llm_id: model } : {}) });
      try {
        let last: Message | undefined;
        for await (const m of (await chat.createSession()).ask(question, { stream: true })) last = m;
        if (c.json) writeJson({ question, model: chat.llm_id, answer: last?.content ?? '', sources: last ? citedSources(last) : [] }, c.out);
        else if (last) printAnswer(last, chat.llm_id, c.out);
      } finally {
        await client.deleteChats({ ids: [chat.id] });
      }
      return 0;
    } finally {
      await client.close();
    }
  },
};

const models: Command = {
  spec: { name: 'models', synopsis: 'ls | pull <hub id>', summary: 'embedding models: the built-in ones, and Hugging Face models pulled once', options: {} },
  subcommands: {
    ls: {
      spec: {
        name: 'models ls', synopsis: '[--dir DIR]', summary: 'the built-in embedding models (offline, shipped in the package) and where hub models are cached',
        options: { dir: { type: 'string', arg: 'DIR', help: 'the hub model cache', default: '$RAGLOOM_MODELS_DIR, else ~/.cache/ragloom/models' } },
      },
      async run(c) {
        const dir = stringFlag(c.values, 'dir') ?? modelCacheDir();
        if (c.json) {
          writeJson({ models: BUILTIN_EMBEDDINGS.map((m) => ({ id: `${m.name}@Builtin`, dim: m.dim })), cache_dir: dir }, c.out);
          return 0;
        }
        c.out.write(formatTable(['ID', 'DIM'], BUILTIN_EMBEDDINGS.map((m) => [`${m.name}@Builtin`, String(m.dim)])));
        c.out.write(`hub models are cached in ${dir}\n`);
        return 0;
      },
    },
    pull: {
      spec: {
        name: 'models pull', synopsis: '<hub id> [--dir DIR]', positionals: { min: 1, max: 1 },
        summary: "download a Hugging Face ONNX model once (online machines only); then register it with { type: 'embedding', name: '<hub id>', factory: 'HuggingFace' } and it runs offline",
        options: { dir: { type: 'string', arg: 'DIR', help: 'where to keep it', default: '$RAGLOOM_MODELS_DIR, else ~/.cache/ragloom/models' } },
      },
      async run(c) {
        const dir = stringFlag(c.values, 'dir') ?? modelCacheDir();
        const r = await pullModel(c.positionals[0]!, dir, {
          onProgress: (p) => { if (!c.json && p.status === 'done' && p.file) c.out.write(`  ${p.file}\n`); },
        });
        if (c.json) writeJson({ hub_id: r.hubId, cache_dir: r.cacheDir, dim: r.dim ?? null, register: { type: 'embedding', name: r.hubId, factory: 'HuggingFace' } }, c.out);
        else c.out.write(`${r.hubId} is in ${r.cacheDir}${r.dim ? ` (${r.dim}-d)` : ''}; register it as { type: 'embedding', name: '${r.hubId}', factory: 'HuggingFace' }\n`);
        return 0;
      },
    },
  },
};

/** `ragloom serve`: runs until SIGINT or SIGTERM, then closes gracefully (in-flight requests finish). */
const serve: Command = {
  spec: {
    name: 'serve', synopsis: '[--db FILE] [--port N] [--host H] [--new-key] [--index-memory MIB]',
    summary: "serve the database over RAGFlow's REST API (/api/v1) and the OpenAI-compatible endpoint; SIGINT/SIGTERM stop it gracefully",
    options: {
      db: DB,
      port: { type: 'string', arg: 'N', help: 'the TCP port (0-65535; 0: any free port)', default: '9380' },
      host: { type: 'string', arg: 'H', help: 'the address to listen on', default: '127.0.0.1' },
      'new-key': { type: 'boolean', help: 'issue a new admin API key (printed once)' },
      'index-memory': { type: 'string', arg: 'MIB', help: 'MiB the in-memory search indexes may hold; past it the datasets searched least recently are dropped (docs/scaling.md)', default: 'no limit' },
    },
    details: `The admin API key is printed on the first start of a database (or with --new-key) and never
again. With --json, one JSON line when it listens: {"url", "openai_url", "db", "api_key"}
(api_key null when not shown).`,
  },
  async run(c) {
    const port = intFlag(c.values, 'port', { min: 0, max: 65535, default: 9380 });
    const db = dbFlag(c.values);
    const newKey = c.values['new-key'] === true;
    const mib = intFlag(c.values, 'index-memory', { min: 1, max: 2 ** 32 });
    const indexMemory = mib === undefined ? undefined : mib * 1024 * 1024;
    const srv = await startServer({ ...storeOf(db), port, host: stringFlag(c.values, 'host') ?? '127.0.0.1', newAdminKey: newKey, indexMemory });
    const shown = srv.firstStart || newKey;
    if (c.json) {
      c.out.write(`${JSON.stringify({ url: `${srv.url}/api/v1`, openai_url: `${srv.url}/api/v1/openai/<chat_id>`, db: shownDb(db), api_key: shown ? srv.apiKey : null })}\n`);
    } else {
      c.out.write(`ragloom serving ${shownDb(db)} at ${srv.url}/api/v1 (OpenAI-compatible: ${srv.url}/api/v1/openai/<chat_id>)\n`);
      c.out.write(shown
        ? `Admin API key (shown once; keep it): ${srv.apiKey}\n`
        : 'Admin API key: printed when this database was first served (`ragloom serve --new-key` issues another).\n');
    }
    await untilStopped();
    if (!c.json) c.out.write('ragloom: shutting down (finishing in-flight requests)…\n');
    await srv.close();
    return 0;
  },
};

const workspace: Command = {
  spec: { name: 'workspace', synopsis: 'show|ls|add|rm|bind <dir> ...', summary: 'inspect and edit a PaddleX workspace folder (docs/workspace.md)', options: {} },
  raw: runWorkspaceCommand,
};

const migrate: Command = {
  spec: {
    name: 'migrate', synopsis: 'export|import|verify|rollback ...',
    summary: 'move knowledge bases between RAGFlow servers, ragloom servers and database files, with a manifest, verification and rollback (docs/migration.md)',
    options: {},
  },
  raw: runMigrateCommand,
};

/** Every subcommand, in the order `ragloom --help` lists them. A new one is one more entry. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  quickstart, ingest, list, retrieve, ask, models, serve, mcp: mcpCommand, agent: agentCommand, migrate, workspace,
};

/** Aliases (`search` → `retrieve`). */
const ALIASES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(COMMANDS).flatMap(([name, c]) => (c.spec.aliases ?? []).map((a) => [a, name])),
);

export function usage(): string {
  let text = "ragloom — an embeddable retrieval engine with RAGFlow's interface\n\nUsage:\n";
  for (const c of Object.values(COMMANDS)) {
    if (c.subcommands) for (const s of Object.values(c.subcommands)) text += `  ${usageLine(s.spec)}\n      ${s.spec.summary}\n`;
    else text += `  ${usageLine(c.spec)}\n      ${c.spec.summary}\n`;
  }
  return `${text}
  ragloom <command> --help     every option of a command
  ragloom --version            the version

Every command takes --json (one JSON value on stdout; errors as {"error": {"code", "message"}})
and --db FILE where it opens a database (default ./${DEFAULT_DB}; quickstart: ./${QUICKSTART.db}).
Docs: docs/cli.md
`;
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const json = wantsJson(argv);
  try {
    switch (cmd) {
      case '--version': case '-V': case 'version':
        if (json) writeJson({ version: VERSION });
        else process.stdout.write(`${VERSION}\n`);
        return 0;
      case undefined: case '-h': case '--help': case 'help': {
        const topic = cmd === 'help' ? rest[0] : undefined;
        if (topic) return await main([topic, '--help']);
        process.stdout.write(usage());
        return cmd === undefined ? 1 : 0;
      }
    }
    const command = COMMANDS[cmd] ?? COMMANDS[ALIASES[cmd] ?? ''];
    if (!command) {
      if (json && cmd === '--json') {
        process.stdout.write(usage());
        return 1;
      }
      // A typo gets the command it is closest to, not the whole usage.
      const names = [...Object.keys(COMMANDS), ...Object.keys(ALIASES)];
      const near = nearest(cmd.toLowerCase(), names);
      process.stderr.write(`ragloom: unknown command "${cmd}"${near ? `; did you mean "${near}"?` : ''}\n`
        + `Commands: ${Object.keys(COMMANDS).join(', ')} (ragloom --help describes each)\n`);
      return 1;
    }
    return await runCommand(command, rest);
  } catch (e) {
    // Commands that read their own arguments (workspace, migrate) end up here.
    if (json) writeJson(errorJson(e));
    else if (e instanceof MigrateUsageError) process.stderr.write(`Usage: ${e.message}\n`);
    else if (e instanceof MigrationError) process.stderr.write(`Error: ${e.message}\n`);
    else process.stderr.write(errorText(e));
    return 1;
  }
}

/**
 * `ragloom agent templates` and `ragloom agent run <template | file.json> --dataset NAME …`: load an
 * agent DSL (one of the templates shipped in the package, or a RAGFlow template / export file),
 * point its Retrieval components at the given datasets, and talk to it — one question, or a
 * conversation on stdin. A form (`UserFillUp`) is answered from `--input k=v`, or asked on the
 * terminal.
 */
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, ApiError } from '../client/index.js';
import type { AgentMessage } from '../client/agent-session.js';
import { formatTable } from './table.js';
import { type Command, type RunContext, UsageError, writeJson, stringFlag, listFlag, existingDatabase, chatModelFlags, DB_OPTION, dbFlag, storeOf } from './args.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Templates shipped with the package (templates/ at the package root). */
export const TEMPLATE_DIR = resolve(HERE, '../../templates');

/** A bad `agent` command line (a UsageError: printed with the usage, exit status 1). */
export class AgentUsageError extends UsageError {}

type Json = Record<string, unknown>;

export async function listTemplates(): Promise<Array<{ name: string; title: string; description: string }>> {
  const files = (await readdir(TEMPLATE_DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(files.map(async (f) => {
    const t = JSON.parse(await readFile(resolve(TEMPLATE_DIR, f), 'utf8')) as Json;
    return { name: f.replace(/\.json$/, ''), title: String(t.title ?? f), description: String(t.description ?? '') };
  }));
}

/** A template by shipped name, or a JSON file (a RAGFlow template `{title, dsl}` or a bare DSL). */
export async function loadTemplate(ref: string): Promise<{ title: string; description: string; dsl: Json }> {
  const shipped = resolve(TEMPLATE_DIR, `${ref.replace(/\.json$/, '')}.json`);
  const file = existsSync(shipped) ? shipped : resolve(ref);
  if (!existsSync(file)) {
    const names = (await listTemplates()).map((t) => t.name).join(', ');
    throw new AgentUsageError(`No template or file "${ref}". Shipped templates: ${names}.`);
  }
  const raw = JSON.parse(await readFile(file, 'utf8')) as Json;
  const dsl = (raw.dsl && typeof raw.dsl === 'object' ? raw.dsl : raw) as Json;
  const t = raw.title;
  const title = typeof t === 'string' ? t : t && typeof t === 'object' ? String((t as Json).en ?? Object.values(t)[0] ?? ref) : ref;
  const d = raw.description;
  const description = typeof d === 'string' ? d : d && typeof d === 'object' ? String((d as Json).en ?? '') : '';
  return { title, description, dsl };
}

/**
 * Fills what a template leaves to the user: Retrieval components (and Retrieval tools) without
 * datasets get `datasetIds`; LLM / Agent / Categorize components get `llmId` when one is given.
 */
export function configureDsl(dsl: Json, o: { datasetIds: string[]; llmId?: string }): Json {
  const copy = JSON.parse(JSON.stringify(dsl)) as Json;
  const fill = (name: string, params: Json) => {
    if (name === 'Retrieval' && o.datasetIds.length) {
      const has = (Array.isArray(params.dataset_ids) && params.dataset_ids.length) || (Array.isArray(params.kb_ids) && params.kb_ids.length);
      if (!has) params.dataset_ids = [...o.datasetIds];
    }
    if (o.llmId && ['LLM', 'Agent', 'Categorize'].includes(name)) params.llm_id = o.llmId;
    for (const t of Array.isArray(params.tools) ? params.tools : []) {
      if (t && typeof t === 'object') fill(String((t as Json).component_name), ((t as Json).params ??= {}) as Json);
    }
  };
  for (const c of Object.values((copy.components ?? {}) as Record<string, Json>)) {
    const obj = c.obj as Json | undefined;
    if (obj) fill(String(obj.component_name), (obj.params ??= {}) as Json);
  }
  return copy;
}

function parseInputs(pairs: string[]): Record<string, { value: string }> {
  const out: Record<string, { value: string }> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new AgentUsageError(`--input takes name=value, got "${p}"`);
    out[p.slice(0, eq)] = { value: p.slice(eq + 1) };
  }
  return out;
}

function printReply(m: AgentMessage, out: NodeJS.WritableStream = process.stdout): void {
  if (m.content) out.write(`${m.content}\n`);
  const refs = m.reference ?? [];
  const cited = new Set([...m.content.matchAll(/\[ID:(\d+)\]/g)].map((x) => Number(x[1])));
  const shown = refs.filter((_, i) => cited.has(i) || !cited.size);
  if (shown.length) {
    out.write('\nSources:\n');
    refs.forEach((c, i) => {
      if (cited.has(i) || !cited.size) out.write(`  [ID:${i}] ${c.document_name} (similarity ${(c.similarity ?? 0).toFixed(3)})\n`);
    });
  }
  if (m.trace) {
    const rows = m.trace.flatMap((t) => t.trace.map((x) => [x.component_id, x.component_type ?? '', `${((x.elapsed_time ?? 0) * 1000).toFixed(1)} ms`, x.error ?? '']));
    out.write(`\n${formatTable(['NODE', 'TYPE', 'TIME', 'ERROR'], rows)}`);
  }
}

/** A reply as `--json` prints it. */
const replyJson = (m: AgentMessage) => ({
  content: m.content,
  sources: (m.reference ?? []).map((c, i) => ({ id: i, document_id: c.document_id, document_name: c.document_name, similarity: c.similarity ?? 0 })),
  ...(m.trace ? { trace: m.trace } : {}),
});

async function runAgent(c: RunContext): Promise<number> {
  const { values, positionals, json, out } = c;
  const models = chatModelFlags(c);
  const datasets = listFlag(values, 'dataset');
  const question = values.question as string | undefined;
  const trace = values.trace === true;
  const tpl = await loadTemplate(positionals[0]!);
  const db = dbFlag(values);
  // Named datasets can only be in a database that exists: do not create an empty one to say so.
  if (datasets.length) existingDatabase(db);
  const client = new Client({
    ...storeOf(db), models,
    agents: { sql_dirs: listFlag(values, 'sql-dir').map((d) => resolve(d)), invoke_allow: listFlag(values, 'allow-url') },
  });
  try {
    const ids: string[] = [];
    for (const n of datasets) {
      try {
        ids.push((await client.getDataset(n)).id);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        throw new AgentUsageError(`--dataset ${n}: no such dataset in ${db} (\`ragloom list --db ${db}\` lists them)`);
      }
    }
    const llmId = stringFlag(values, 'model');
    const dsl = configureDsl(tpl.dsl, { datasetIds: ids, llmId });
    const existing = (await client.listAgents({ keywords: tpl.title, page_size: 100 })).find((a) => a.title === tpl.title);
    const agent = existing ?? (await client.createAgent({ title: tpl.title, description: tpl.description, dsl }));
    if (existing) await client.updateAgent(existing.id, { dsl });
    const session = await agent.createSession();
    const prologue = session.message?.[0]?.content;
    const tty = process.stdin.isTTY && process.stdout.isTTY;
    if (!json && prologue && (tty || question === undefined)) out.write(`${prologue}\n\n`);
    let inputs = parseInputs(listFlag(values, 'input'));
    const rl = question === undefined ? createInterface({ input: process.stdin, output: process.stdout, terminal: !!tty }) : undefined;
    try {
      let q = question;
      for (;;) {
        if (q === undefined) {
          const line = await rl!.question(tty && !json ? '> ' : '').catch(() => null);
          if (line === null) break;
          q = line;
          if (!q.trim()) continue;
        }
        let reply = await session.ask(q, { inputs, return_trace: trace });
        while (reply.event === 'user_inputs') {
          const form = (reply.inputs ?? {}) as Record<string, { name?: string }>;
          const missing = Object.keys(form).filter((k) => !(k in inputs));
          if (reply.tips && !json) out.write(`${reply.tips}\n`);
          if (missing.length && (!tty || json)) {
            const msg = `The agent asks for: ${missing.join(', ')}. Give them with --input name=value.`;
            if (json) writeJson({ error: { code: 'input', message: msg, inputs: missing } }, out);
            else process.stderr.write(`${msg}\n`);
            return 2;
          }
          for (const k of missing) {
            const rl2 = rl ?? createInterface({ input: process.stdin, output: process.stdout });
            inputs[k] = { value: await rl2.question(`${form[k]?.name ?? k}: `) };
            if (!rl) rl2.close();
          }
          reply = await session.ask('', { inputs, return_trace: trace });
        }
        // --json: one JSON value per reply (one line each in a conversation on stdin).
        if (json) out.write(`${JSON.stringify(replyJson(reply), null, question !== undefined ? 2 : undefined)}\n`);
        else printReply(reply, out);
        if (question !== undefined) break;
        q = undefined;
        inputs = {};
      }
    } finally {
      rl?.close();
    }
    return 0;
  } finally {
    await client.close();
  }
}

/** `ragloom agent templates | run`. */
export const agentCommand: Command = {
  spec: { name: 'agent', synopsis: 'templates | run <template|file.json> ...', summary: 'agents (RAGFlow canvas DSL) on your datasets (docs/agents.md)', options: {} },
  subcommands: {
    templates: {
      spec: { name: 'agent templates', synopsis: '', summary: 'the agent templates shipped with ragloom (RAGFlow canvas DSL; see docs/agents.md)', options: {} },
      async run({ json, out }) {
        const list = await listTemplates();
        if (json) writeJson({ templates: list }, out);
        else out.write(formatTable(['TEMPLATE', 'TITLE', 'DESCRIPTION'], list.map((t) => [t.name, t.title, t.description.slice(0, 70)])));
        return 0;
      },
    },
    run: {
      spec: {
        name: 'agent run', synopsis: '<template|file.json> [--dataset NAME]... [--question TEXT] [--input k=v]... [--db FILE] [--trace]',
        summary: 'run an agent (a shipped template or a RAGFlow DSL file) on your datasets: one question, or a conversation on stdin; forms are answered from --input or on the terminal',
        positionals: { min: 1, max: 1 },
        options: {
          dataset: { type: 'string', multiple: true, arg: 'NAME', help: "a dataset the agent's Retrieval components search" },
          db: DB_OPTION,
          question: { type: 'string', arg: 'TEXT', help: 'one question (without it: a conversation, one question per line of stdin)' },
          input: { type: 'string', multiple: true, arg: 'k=v', help: "an answer to the agent's form (UserFillUp)" },
          model: { type: 'string', arg: 'NAME@FACTORY', help: 'the chat model of LLM / Agent / Categorize components (with --base-url)', default: 'the built-in extractive model' },
          'base-url': { type: 'string', arg: 'URL', help: 'the OpenAI-compatible server of --model' },
          'api-key': { type: 'string', arg: 'KEY', help: "that server's API key" },
          'sql-dir': { type: 'string', multiple: true, arg: 'DIR', help: 'a folder whose SQLite files ExeSQL components may read' },
          'allow-url': { type: 'string', multiple: true, arg: 'ORIGIN', help: 'an origin Invoke components may call (* for any)' },
          trace: { type: 'boolean', help: 'print each component run (node, type, time, error)' },
        },
        details: 'With --json: one JSON value per reply ({"content", "sources", "trace"?}); a conversation on stdin prints one line per reply.',
      },
      run: runAgent,
    },
  },
};

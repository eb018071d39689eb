/**
 * `ragloom agent templates` and `ragloom agent run <template | file.json> --dataset NAME …`: load an
 * agent DSL (one of the templates shipped in the package, or a RAGFlow template / export file),
 * point its Retrieval components at the given datasets, and talk to it — one question, or a
 * conversation on stdin. A form (`UserFillUp`) is answered from `--input k=v`, or asked on the
 * terminal.
 */
import { parseArgs } from 'node:util';
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '../client/index.js';
import type { AgentMessage } from '../client/agent-session.js';
import { formatTable } from './table.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Templates shipped with the package (templates/ at the package root). */
export const TEMPLATE_DIR = resolve(HERE, '../../templates');

export class AgentUsageError extends Error {}

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

function printReply(m: AgentMessage, out = process.stdout): void {
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

export async function runAgentCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'templates') {
    const rows = (await listTemplates()).map((t) => [t.name, t.title, t.description.slice(0, 70)]);
    process.stdout.write(formatTable(['TEMPLATE', 'TITLE', 'DESCRIPTION'], rows));
    return 0;
  }
  if (sub !== 'run') throw new AgentUsageError('ragloom agent templates | ragloom agent run <template|file.json> --dataset NAME [--question TEXT] [--input k=v] [--db FILE]');
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: {
    dataset: { type: 'string', multiple: true }, db: { type: 'string' }, question: { type: 'string' }, input: { type: 'string', multiple: true },
    model: { type: 'string' }, 'base-url': { type: 'string' }, 'api-key': { type: 'string' }, 'sql-dir': { type: 'string', multiple: true },
    'allow-url': { type: 'string', multiple: true }, trace: { type: 'boolean' },
  } });
  if (positionals.length !== 1) throw new AgentUsageError('ragloom agent run <template|file.json> --dataset NAME [--question TEXT] [--input k=v] [--db FILE]');
  const tpl = await loadTemplate(positionals[0]!);
  const models = values.model && values['base-url']
    ? [{ type: 'chat' as const, name: values.model.slice(0, values.model.lastIndexOf('@')), factory: values.model.slice(values.model.lastIndexOf('@') + 1), base_url: values['base-url'], api_key: values['api-key'] }]
    : [];
  const client = new Client({
    path: values.db ?? 'ragloom.db', models,
    agents: { sql_dirs: (values['sql-dir'] ?? []).map((d) => resolve(d)), invoke_allow: values['allow-url'] ?? [] },
  });
  try {
    const ids: string[] = [];
    for (const n of values.dataset ?? []) ids.push((await client.getDataset(n)).id);
    const dsl = configureDsl(tpl.dsl, { datasetIds: ids, llmId: values.model });
    const existing = (await client.listAgents({ keywords: tpl.title, page_size: 100 })).find((a) => a.title === tpl.title);
    const agent = existing ?? (await client.createAgent({ title: tpl.title, description: tpl.description, dsl }));
    if (existing) await client.updateAgent(existing.id, { dsl });
    const session = await agent.createSession();
    const prologue = session.message?.[0]?.content;
    const tty = process.stdin.isTTY && process.stdout.isTTY;
    if (prologue && (tty || !values.question)) process.stdout.write(`${prologue}\n\n`);
    let inputs = parseInputs(values.input ?? []);
    const rl = !values.question ? createInterface({ input: process.stdin, output: process.stdout, terminal: !!tty }) : undefined;
    try {
      let question = values.question;
      for (;;) {
        if (question === undefined) {
          const line = await rl!.question(tty ? '> ' : '').catch(() => null);
          if (line === null) break;
          question = line;
          if (!question.trim()) continue;
        }
        let reply = await session.ask(question, { inputs, return_trace: !!values.trace });
        while (reply.event === 'user_inputs') {
          const form = (reply.inputs ?? {}) as Record<string, { name?: string }>;
          const missing = Object.keys(form).filter((k) => !(k in inputs));
          if (reply.tips) process.stdout.write(`${reply.tips}\n`);
          if (missing.length && !tty) {
            process.stderr.write(`The agent asks for: ${missing.join(', ')}. Give them with --input name=value.\n`);
            return 2;
          }
          for (const k of missing) {
            const rl2 = rl ?? createInterface({ input: process.stdin, output: process.stdout });
            inputs[k] = { value: await rl2.question(`${form[k]?.name ?? k}: `) };
            if (!rl) rl2.close();
          }
          reply = await session.ask('', { inputs, return_trace: !!values.trace });
        }
        printReply(reply);
        if (values.question !== undefined) break;
        question = undefined;
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

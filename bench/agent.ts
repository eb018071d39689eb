/**
 * Agent runs through the public Client: what the canvas runtime adds, and what each kind of
 * component costs, on a dataset of synthetic chunks.
 *
 *   npx tsx bench/agent.ts [--size 10000] [--runs 60] [--docs docs/benchmarks.md]
 *
 * Scenarios (each a session asked `--runs` questions after one warm-up; p50 / p95 of `ask`):
 * - begin → message: the runtime alone (events, session write), locally and over HTTP;
 * - dataset chatbot (Retrieval → LLM → Message) with the built-in extractive model, and with a
 *   loopback model that answers at once (so the row is ragloom's overhead around a real model);
 * - Categorize offline (embedding classifier) → Message;
 * - CodeExec: JavaScript (a fresh worker per call) and Python (a subprocess per call).
 * Prints JSON lines and a table.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '../src/index.js';
import { startServer } from '../src/server/index.js';
import { pythonAvailable } from '../src/agent/sandbox/index.js';
import { syntheticChunks } from './lib/chunks.js';
import { upsertSection } from './lib/report.js';
import { instantModel } from './lib/instant-model.js';

const { values: args } = parseArgs({ options: { size: { type: 'string', default: '10000' }, runs: { type: 'string', default: '60' }, docs: { type: 'string' } } });
const SIZE = Number(args.size);
const RUNS = Number(args.runs);

type Json = Record<string, unknown>;
const node = (component_name: string, params: Json, downstream: string[], upstream: string[]) => ({ obj: { component_name, params }, downstream, upstream });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

function echo(): Json {
  return { components: { begin: node('Begin', {}, ['Message:M'], []), 'Message:M': node('Message', { content: ['{sys.query}'] }, [], ['begin']) } };
}
function chatbot(ds: string, llm: string): Json {
  return { components: {
    begin: node('Begin', {}, ['Retrieval:R'], []),
    'Retrieval:R': node('Retrieval', { query: 'sys.query', dataset_ids: [ds], top_n: 6 }, ['LLM:L'], ['begin']),
    'LLM:L': node('LLM', { llm_id: llm, sys_prompt: 'Answer from:\n{Retrieval:R@formalized_content}', prompts: [{ role: 'user', content: '{sys.query}' }] }, ['Message:M'], ['Retrieval:R']),
    'Message:M': node('Message', { content: ['{LLM:L@content}'] }, [], ['LLM:L']),
  } };
}
function categorize(): Json {
  const cats = {
    engines: { description: 'Jet engines, nozzles, combustion and thrust', examples: ['How does the nozzle accelerate the gas?'], to: ['Message:A'] },
    structures: { description: 'Wings, panels, buckling, stress and vibration', examples: ['When does the panel buckle?'], to: ['Message:B'] },
    flow: { description: 'Boundary layers, shocks, heat transfer and flow', examples: ['What happens at the shock?'], to: ['Message:C'] },
  };
  return { components: {
    begin: node('Begin', {}, ['Categorize:C'], []),
    'Categorize:C': node('Categorize', { llm_id: 'ragloom-extractive@Builtin', category_description: cats }, ['Message:A', 'Message:B', 'Message:C'], ['begin']),
    'Message:A': node('Message', { content: ['a'] }, [], ['Categorize:C']),
    'Message:B': node('Message', { content: ['b'] }, [], ['Categorize:C']),
    'Message:C': node('Message', { content: ['c'] }, [], ['Categorize:C']),
  } };
}
function code(lang: 'javascript' | 'python'): Json {
  const script = lang === 'javascript' ? 'function main({ q }) { return { n: q.length } }' : 'def main(q):\n    return {"n": len(q)}\n';
  return { components: {
    begin: node('Begin', {}, ['CodeExec:X'], []),
    'CodeExec:X': node('CodeExec', { lang, script, arguments: { q: 'sys.query' }, outputs: { n: { type: 'number' } } }, ['Message:M'], ['begin']),
    'Message:M': node('Message', { content: ['{CodeExec:X@n}'] }, [], ['CodeExec:X']),
  } };
}

interface Row { scenario: string; transport: string; p50: number; p95: number; perSecond: number; nodes: number }

async function measure(client: Client, scenario: string, transport: string, dsl: Json, questions: string[]): Promise<Row> {
  const agent = await client.createAgent({ title: `${scenario} ${transport}`, dsl });
  const session = await agent.createSession();
  const first = await session.ask(questions[0]!, { return_trace: true });
  if (first.event !== 'workflow_finished') throw new Error(`${scenario}: ${first.event} ${JSON.stringify(first.trace)}`);
  const times: number[] = [];
  const t0 = performance.now();
  for (const q of questions) {
    const t = performance.now();
    await session.ask(q);
    times.push(performance.now() - t);
  }
  const total = performance.now() - t0;
  const row = { scenario, transport, p50: pct(times, 50), p95: pct(times, 95), perSecond: (questions.length / total) * 1000, nodes: first.trace?.length ?? 0 };
  process.stdout.write(`${JSON.stringify(row)}\n`);
  return row;
}

const dir = join(tmpdir(), `ragloom-agent-bench-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const model = await instantModel();
const models = [{ type: 'chat' as const, name: 'instant', factory: 'OpenAI-API-Compatible', base_url: model.url }];
const client = new Client({ path: join(dir, 'kb.db'), models });
const texts = syntheticChunks(SIZE);
const ds = await client.createDataset({ name: 'bench', parser_config: { chunk_token_num: 64, delimiter: '`\n`' } });
const files = [];
for (let i = 0; i < texts.length; i += 1000) files.push({ display_name: `doc-${i / 1000}.txt`, blob: new TextEncoder().encode(texts.slice(i, i + 1000).join('\n')) });
await ds.parseDocuments((await ds.uploadDocuments(files)).map((d) => d.id), { pollMs: 500 });
const [info] = await client.listDatasets({ id: ds.id });
let seed = 11;
const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const questions = Array.from({ length: RUNS }, () => {
  const w = texts[Math.floor(rnd() * texts.length)]!.split(' ');
  const at = Math.floor(rnd() * (w.length - 6));
  return w.slice(at, at + 6).join(' ').replace(/[.,]/g, '');
});

const rows: Row[] = [];
rows.push(await measure(client, 'begin → message', 'local', echo(), questions));
rows.push(await measure(client, 'chatbot, built-in extractive', 'local', chatbot(ds.id, 'ragloom-extractive@Builtin'), questions));
rows.push(await measure(client, 'chatbot, instant model', 'local', chatbot(ds.id, 'instant@OpenAI-API-Compatible'), questions));
rows.push(await measure(client, 'Categorize offline → message', 'local', categorize(), questions));
rows.push(await measure(client, 'CodeExec JavaScript', 'local', code('javascript'), questions.slice(0, 20)));
if (pythonAvailable()) rows.push(await measure(client, 'CodeExec Python', 'local', code('python'), questions.slice(0, 20)));
await client.close();

const srv = await startServer({ path: join(dir, 'kb.db'), port: 0, models });
const remote = new Client({ baseUrl: srv.url, apiKey: srv.apiKey });
const [rds] = await remote.listDatasets({ name: 'bench' });
rows.push(await measure(remote, 'begin → message', 'HTTP', echo(), questions));
rows.push(await measure(remote, 'chatbot, built-in extractive', 'HTTP', chatbot(rds!.id, 'ragloom-extractive@Builtin'), questions));
await remote.close();
await srv.close();
await model.close();
rmSync(dir, { recursive: true, force: true });

// From source the JavaScript sandbox's worker boots through tsx; the package runs it compiled.
const compiled = join(import.meta.dirname, '../dist/agent/sandbox/index.js');
if (existsSync(compiled)) {
  const { runCode } = (await import(compiled)) as typeof import('../src/agent/sandbox/index.js');
  for (const lang of ['javascript', 'python'] as const) {
    if (lang === 'python' && !pythonAvailable()) continue;
    const codeText = lang === 'javascript' ? 'function main({ q }) { return { n: q.length } }' : 'def main(q):\n    return {"n": len(q)}\n';
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t = performance.now();
      const r = await runCode({ lang, code: codeText, args: { q: 'abc' } });
      if (!r.ok) throw new Error(r.error);
      if (i) times.push(performance.now() - t);
    }
    const row = { scenario: `runCode alone, ${lang} (compiled package)`, transport: 'in-process', p50: pct(times, 50), p95: pct(times, 95), perSecond: 1000 / pct(times, 50), nodes: 0 };
    process.stdout.write(`${JSON.stringify(row)}\n`);
    rows.push(row);
  }
}

const f = (x: number) => x.toFixed(1);
const table = [
  `| scenario (${info!.chunk_count.toLocaleString('en')} chunks) | transport | nodes | ask p50 ms | ask p95 ms | asks/s (one session) |`,
  '|---|---|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.scenario} | ${r.transport} | ${r.nodes} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.perSecond)} |`),
].join('\n');
process.stdout.write(`\n${table}\n`);
if (args.docs) {
  upsertSection(args.docs, 'Agents: `session.ask` latency', `Measured by \`npx tsx bench/agent.ts\` (${new Date().toISOString().slice(0, 10)}; 2 cores). `
    + 'Each ask runs the canvas, emits its events and stores the turn and the canvas state. The instant model is a loopback OpenAI-protocol server that answers at once. '
    + 'The CodeExec rows start a fresh sandbox per call (a worker thread, or a python3 process); run from source the JavaScript worker boots through tsx, '
    + 'so the last rows time the compiled package\'s sandbox alone (`npm run build` first).\n\n' + table);
}

/**
 * `session.ask` latency, split into retrieval / prompt build / model, at 10k and 100k chunks:
 * - with the built-in extractive model (`ragloom-extractive@Builtin`): the whole answer;
 * - with a loopback model that answers at once over the OpenAI protocol: ragloom's own overhead
 *   (retrieval, prompt, the HTTP round trip, citation checks, storing the exchange).
 *
 *   npx tsx bench/chat.ts [--sizes 10000,100000] [--questions 60] [--docs docs/benchmarks.md]
 *
 * The chunks are ~200-word synthetic English passages (bench/lib/chunks.ts), embedded with the
 * default model; questions are 6-word spans of random chunks. Prints JSON lines and a table.
 */
import { rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '../src/index.js';
import { syntheticChunks } from './lib/chunks.js';
import { upsertSection } from './lib/report.js';
import { instantModel } from './lib/instant-model.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    questions: { type: 'string', default: '60' },
    docs: { type: 'string' },
  },
});

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const timing = (prompt: string, label: string) => Number(new RegExp(`${label}: ([0-9.]+)ms`).exec(prompt)?.[1] ?? NaN);

interface Row { size: number; model: string; mode: string; p50: number; p95: number; retrieval: number; prompt: number; modelMs: number; other: number }

async function run(size: number, nq: number, model: { url: string }): Promise<Row[]> {
  const dir = join(tmpdir(), `ragloom-chat-bench-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const client = new Client({
    path: join(dir, 'kb.db'),
    models: [{ type: 'chat', name: 'instant', factory: 'OpenAI-API-Compatible', base_url: model.url, max_tokens: 8192 }],
  });
  const t0 = performance.now();
  const texts = syntheticChunks(size);
  const ds = await client.createDataset({ name: 'bench', chunk_method: 'naive', parser_config: { chunk_token_num: 64, delimiter: '`\n`' } });
  // 1,000 passages per document, one per line; the backtick newline delimiter makes every line a
  // chunk of its own (RAGFlow's custom split; chunk_token_num is not read).
  const files = [];
  for (let i = 0; i < texts.length; i += 1000) files.push({ display_name: `doc-${i / 1000}.txt`, blob: new TextEncoder().encode(texts.slice(i, i + 1000).join('\n')) });
  const docs = await ds.uploadDocuments(files);
  await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 500 });
  const [info] = await client.listDatasets({ id: ds.id });
  process.stderr.write(`${size}: ${info!.chunk_count} chunks ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const questions = Array.from({ length: nq }, () => {
    const words = texts[Math.floor(rnd() * texts.length)]!.split(' ');
    const at = Math.floor(rnd() * (words.length - 6));
    return words.slice(at, at + 6).join(' ').replace(/[.,]/g, '');
  });
  const rows: Row[] = [];
  for (const llm of ['ragloom-extractive@Builtin', 'instant@OpenAI-API-Compatible']) {
    const chat = await client.createChat({ name: `c-${llm}`, dataset_ids: [ds.id], llm_id: llm });
    for (const mode of ['non-stream', 'stream'] as const) {
      const session = await chat.createSession();
      const total: number[] = [];
      const split = { retrieval: [] as number[], prompt: [] as number[], model: [] as number[] };
      // Warm-up: the vector index and the model load on first use.
      await session.ask(questions[0]!);
      for (const q of questions) {
        const t = performance.now();
        let prompt = '';
        if (mode === 'stream') {
          for await (const m of session.ask(q, { stream: true })) prompt = m.prompt ?? prompt;
        } else prompt = (await session.ask(q)).prompt ?? '';
        total.push(performance.now() - t);
        split.retrieval.push(timing(prompt, 'Retrieval'));
        split.prompt.push(timing(prompt, 'Prompt'));
        split.model.push(timing(prompt, 'Generate answer'));
      }
      const p50 = pct(total, 50);
      const r: Row = {
        size: info!.chunk_count, model: llm, mode, p50, p95: pct(total, 95),
        retrieval: pct(split.retrieval, 50), prompt: pct(split.prompt, 50), modelMs: pct(split.model, 50),
        other: p50 - pct(split.retrieval, 50) - pct(split.prompt, 50) - pct(split.model, 50),
      };
      rows.push(r);
      process.stdout.write(`${JSON.stringify(r)}\n`);
    }
  }
  await client.close();
  rmSync(dir, { recursive: true, force: true });
  return rows;
}

function table(rows: Row[]): string {
  const f = (x: number) => x.toFixed(1);
  return [
    '| chunks | model | mode | ask p50 ms | ask p95 ms | retrieval p50 | prompt build p50 | model p50 | rest (citations, session write, HTTP) |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.size.toLocaleString('en')} | ${r.model} | ${r.mode} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.retrieval)} | ${f(r.prompt)} | ${f(r.modelMs)} | ${f(r.other)} |`),
  ].join('\n');
}

const model = await instantModel();
const all: Row[] = [];
for (const size of String(args.sizes).split(',').map(Number)) all.push(...await run(size, Number(args.questions), model));
await model.close();
const t = table(all);
process.stdout.write(`\n${t}\n`);
if (args.docs) upsertSection(args.docs, 'Chat: `session.ask` latency', `Measured by \`npx tsx bench/chat.ts\` (${new Date().toISOString().slice(0, 10)}; 2 cores). ` +
  'The instant model is a loopback OpenAI-protocol server that answers at once, so its rows are ragloom\'s own overhead.\n\n' + t);

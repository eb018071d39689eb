/**
 * What the integrations add to a search: each adapter's call against `client.retrieve` with the
 * same parameters, in one process, interleaved round by round (so machine load hits all alike).
 *
 *   npx tsx bench/integrations.ts [--chunks 5000] [--records 1000] [--rounds 200] [--modes local,remote] [--json out.json] [--docs docs/benchmarks.md]
 *
 * Two datasets per mode: `parsed` (`--chunks` synthetic ~200-word chunks, naive, parsed by ragloom)
 * for the retrievers, the AI SDK tool and MCP's ragflow_retrieval (its answer also names each
 * chunk's dataset and document metadata: a look-up per dataset and one per 200 documents); and
 * `store` (`--records` records added through LangChain's RagloomVectorStore, one document and
 * chunk each) for the vector stores, whose hits also carry their document's metadata (one
 * `listDocuments` per 200 hit documents). MCP runs over the SDK's in-memory transport, so its
 * figure is the server's work plus JSON-RPC (de)serialisation, not a pipe's or socket's.
 * page_size 10, similarity_threshold 0. Each adapter call is paired with its `client.retrieve`
 * baseline on the same question (in turns, which goes first); its overhead is the median of the
 * pairs' differences.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Document as LcDocument } from '@langchain/core/documents';
import { VectorStoreQueryMode } from '@llamaindex/core/vector-store';
import { Client, type RetrieveParams } from '../src/index.js';
import { startServer } from '../src/server/index.js';
import { createMcpServer } from '../src/integrations/mcp/index.js';
import { retrievalTool } from '../src/integrations/ai-sdk/index.js';
import { RagloomRetriever as LcRetriever, RagloomVectorStore as LcStore, RagloomEmbeddings } from '../src/integrations/langchain/index.js';
import { RagloomRetriever as LiRetriever, RagloomVectorStore as LiStore } from '../src/integrations/llamaindex/index.js';
import { syntheticChunks } from './lib/chunks.js';
import { upsertSection } from './lib/report.js';
import { formatTable } from '../src/cli/table.js';

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '5000' },
    records: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '200' },
    modes: { type: 'string', default: 'local,remote' },
    json: { type: 'string' },
    docs: { type: 'string' },
  },
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;

/** Six-word spans of other seeded passages: questions with words of the store. */
const questions = syntheticChunks(500, 40, 11).map((t) => t.split(' ').slice(3, 9).join(' '));

interface Row { mode: string; dataset: string; call: string; baseline: string; medianMs: number; p95Ms: number; overheadMs: number; overheadPct: number }

async function measure(mode: string, client: Client, rounds: number): Promise<Row[]> {
  const chunks = Number(args.chunks);
  const records = Number(args.records);
  const parsed = await client.createDataset({ name: 'parsed', chunk_method: 'naive', parser_config: { chunk_token_num: 64, delimiter: '\n' } });
  const texts = syntheticChunks(chunks);
  for (let j = 0; j < texts.length; j += 1000) {
    const docs = await parsed.uploadDocuments([{ display_name: `doc-${j / 1000}.txt`, blob: new TextEncoder().encode(texts.slice(j, j + 1000).join('\n')) }]);
    await parsed.parseDocuments(docs.map((d) => d.id));
  }
  const lcStore = await LcStore.fromTexts(
    syntheticChunks(records, 60, 5), Array.from({ length: records }, (_, i) => ({ source: `note-${i}.md`, n: i })),
    new RagloomEmbeddings(), { client, dataset_name: 'store' },
  );
  const liStore = new LiStore({ client, dataset_id: lcStore.datasetId });
  process.stderr.write(`${mode}: ${chunks} parsed chunks, ${records} store records\n`);

  const base: Omit<RetrieveParams, 'question'> = { dataset_ids: [parsed.id], page_size: 10, similarity_threshold: 0 };
  const onStore: Omit<RetrieveParams, 'question'> = { dataset_ids: [lcStore.datasetId], page_size: 10, similarity_threshold: 0 };
  const lcRetriever = new LcRetriever({ client, ...base });
  const liRetriever = new LiRetriever({ client, ...base });
  const tool = retrievalTool({ client, ...base });
  const mcp = new McpClient({ name: 'bench', version: '1.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await (await createMcpServer(client, { readOnly: true })).connect(a);
  await mcp.connect(b);

  const calls: Array<{ dataset: string; call: string; baseline: string; run: (q: string) => Promise<unknown> }> = [
    { dataset: 'parsed', call: 'client.retrieve', baseline: 'client.retrieve', run: (q) => client.retrieve({ ...base, question: q }) },
    { dataset: 'parsed', call: 'ai-sdk retrievalTool.execute', baseline: 'client.retrieve', run: async (q) => tool.execute!({ question: q }, { toolCallId: 'b', messages: [] }) },
    { dataset: 'parsed', call: 'langchain RagloomRetriever.invoke', baseline: 'client.retrieve', run: (q) => lcRetriever.invoke(q) },
    { dataset: 'parsed', call: 'llamaindex RagloomRetriever.retrieve', baseline: 'client.retrieve', run: (q) => liRetriever.retrieve(q) },
    { dataset: 'parsed', call: 'mcp ragflow_retrieval (in-memory)', baseline: 'client.retrieve', run: (q) => mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: q, dataset_ids: [parsed.id], similarity_threshold: 0 } }) },
    { dataset: 'store', call: 'client.retrieve', baseline: 'client.retrieve', run: (q) => client.retrieve({ ...onStore, question: q }) },
    { dataset: 'store', call: 'langchain similaritySearchWithScore', baseline: 'client.retrieve', run: (q) => lcStore.similaritySearchWithScore(q, 10) },
    { dataset: 'store', call: 'llamaindex query (HYBRID)', baseline: 'client.retrieve', run: (q) => liStore.query({ queryStr: q, mode: VectorStoreQueryMode.HYBRID, similarityTopK: 10 }) },
  ];
  const baselines = new Map(calls.filter((c) => c.call === c.baseline).map((c) => [c.dataset, c]));
  const timed = async (c: (typeof calls)[number], q: string) => {
    const t = performance.now();
    await c.run(q);
    return performance.now() - t;
  };
  // Warm-up: model loads, indexes built, caches filled.
  for (const c of calls) for (let i = 0; i < 5; i++) await c.run(questions[i]!);
  // Each adapter call paired with its baseline on the same question, in turns (baseline first,
  // then adapter first), so that warmth and the machine's load at that moment fall on both alike.
  const own = new Map(calls.map((c) => [c, [] as number[]]));
  const diffs = new Map(calls.map((c) => [c, [] as number[]]));
  for (let r = 0; r < rounds; r++) {
    const q = questions[r % questions.length]!;
    for (const c of calls) {
      if (c.call === c.baseline) continue;
      const b = baselines.get(c.dataset)!;
      let tb: number, tc: number;
      if (r % 2 === 0) {
        tb = await timed(b, q);
        tc = await timed(c, q);
      } else {
        tc = await timed(c, q);
        tb = await timed(b, q);
      }
      own.get(c)!.push(tc);
      own.get(b)!.push(tb);
      diffs.get(c)!.push(tc - tb);
    }
  }
  await mcp.close();
  return calls.map((c) => {
    const xs = own.get(c)!;
    const base = c.call === c.baseline;
    const d = base ? 0 : median(diffs.get(c)!);
    const baseMs = median(own.get(baselines.get(c.dataset)!)!);
    return { mode, dataset: c.dataset, call: c.call, baseline: c.baseline, medianMs: median(xs), p95Ms: p95(xs), overheadMs: d, overheadPct: (100 * d) / baseMs };
  });
}

async function main(): Promise<void> {
  const rounds = Number(args.rounds);
  const rows: Row[] = [];
  for (const mode of args.modes!.split(',')) {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-bench-integrations-'));
    const server = mode === 'remote' ? await startServer({ path: join(dir, 'kb.db'), port: 0 }) : undefined;
    const client = server ? new Client({ baseUrl: server.url, apiKey: server.apiKey }) : new Client({ path: join(dir, 'kb.db') });
    try {
      rows.push(...(await measure(mode, client, rounds)));
    } finally {
      await client.close();
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const f = (x: number, d = 2) => x.toFixed(d);
  const head = ['client', 'dataset', 'call', 'median ms', 'p95 ms', 'over client.retrieve ms', 'over %'];
  const cells = rows.map((r) => [r.mode, r.dataset, r.call, f(r.medianMs), f(r.p95Ms), r.call === r.baseline ? '—' : f(r.overheadMs), r.call === r.baseline ? '—' : f(r.overheadPct, 0)]);
  const config = { chunks: Number(args.chunks), records: Number(args.records), rounds };
  console.log(JSON.stringify({ bench: 'integrations', ...config, rows }, null, 2));
  console.log(`\n${formatTable(head, cells)}`);
  if (args.json) writeFileSync(args.json, JSON.stringify({ bench: 'integrations', ...config, rows }, null, 2));
  if (args.docs) {
    const markdown = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 3 ? '---' : '---:')).join('|')}|`, ...cells.map((c) => `| ${c.join(' | ')} |`)].join('\n');
    upsertSection(args.docs, 'What the integrations add to a search', [
      `Measured ${new Date().toISOString().slice(0, 10)} with \`npx tsx bench/integrations.ts --docs docs/benchmarks.md\`: ${rounds} questions, each`,
      `adapter call paired with \`client.retrieve\` on the same question (page_size 10; overhead: the median difference) in one process; ${config.chunks} parsed chunks, ${config.records} records added through a vector store.`,
      'MCP over the SDK\'s in-memory transport (no pipe or socket).',
      '',
      markdown,
    ].join('\n'));
  }
}

await main();

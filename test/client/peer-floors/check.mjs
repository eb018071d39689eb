// Run in a blank project holding the packed ragloom and the lowest versions its peer ranges admit
// (test/client/peer-floors.test.ts): the LangChain, AI SDK and MCP adapters' main paths. Prints one
// JSON line with the versions it ran on.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { Client } from 'ragloom';
import { RagloomRetriever, RagloomVectorStore, RagloomEmbeddings } from 'ragloom/langchain';
import { retrievalTool, embeddingModel, rerankingModel } from 'ragloom/ai-sdk';
import { Document } from '@langchain/core/documents';
import { RunnableSequence, RunnablePassthrough } from '@langchain/core/runnables';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { FakeListChatModel, SyntheticEmbeddings } from '@langchain/core/utils/testing';
import { generateText, stepCountIs, embed, embedMany, rerank } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createMcpServer } from 'ragloom/mcp';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

const client = new Client({ path: ':memory:' });
const ds = await client.createDataset({ name: 'kb' });
const docs = await ds.uploadDocuments([
  { display_name: 'tides.md', blob: new TextEncoder().encode('The gravitational pull of the moon raises the ocean tides.') },
  { display_name: 'bread.md', blob: new TextEncoder().encode('Knead the bread dough for ten minutes.') },
]);
await ds.parseDocuments(docs.map((d) => d.id));

// LangChain: the retriever, a chain over it, the vector store with ragloom's and another model's embeddings.
const retriever = new RagloomRetriever({ client, dataset_ids: [ds.id], similarity_threshold: 0, page_size: 2 });
assert.equal((await retriever.invoke('what raises the tides'))[0].metadata.document_name, 'tides.md');
const chain = RunnableSequence.from([
  { context: retriever.pipe((d) => d.map((x) => x.pageContent).join('\n')), question: new RunnablePassthrough() },
  ChatPromptTemplate.fromMessages([['system', '{context}'], ['human', '{question}']]),
  new FakeListChatModel({ responses: ['the moon'] }), new StringOutputParser(),
]);
assert.equal(await chain.invoke('tides?'), 'the moon');
for (const emb of [new RagloomEmbeddings(), new SyntheticEmbeddings({ vectorSize: 16 })]) {
  const store = await RagloomVectorStore.fromTexts(['moon and tides', 'bread dough', 'rivers to the sea'], [{ source: 'a' }, { source: 'b' }, { source: 'c' }], emb, { client, dataset_name: `s-${emb.constructor.name}` });
  assert.equal((await store.similaritySearchWithScore('bread dough', 1))[0][0].metadata.source, 'b');
  assert.equal((await store.asRetriever({ k: 2, searchType: 'mmr', searchKwargs: { fetchK: 3 } }).invoke('sea')).length, 2);
  assert.equal((await store.similaritySearchVectorWithScore(await emb.embedQuery('rivers to the sea'), 1))[0][0].metadata.source, 'c');
  assert.deepEqual(await store.addDocuments([new Document({ pageContent: 'x', metadata: {} })], { ids: ['k'] }), ['k']);
  await store.delete({ ids: ['k'] });
}

// The AI SDK: the tool called by a model (ai/test's mock, which answers from the tool's result), embed, rerank.
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
let step = 0;
const model = new MockLanguageModelV3({
  doGenerate: async (opts) => {
    if (step++ === 0) return { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: JSON.stringify({ question: 'what raises the tides' }) }], finishReason: 'tool-calls', usage, warnings: [] };
    const seen = JSON.stringify(opts.prompt.find((m) => m.role === 'tool')?.content ?? '');
    return { content: [{ type: 'text', text: seen.includes('tides.md') ? 'from tides.md' : 'nothing' }], finishReason: 'stop', usage, warnings: [] };
  },
});
const r = await generateText({ model, prompt: 'tides?', tools: { search: retrievalTool({ client, dataset_ids: [ds.id], similarity_threshold: 0 }) }, stopWhen: stepCountIs(3) });
assert.equal(r.text, 'from tides.md');
assert.equal((await embed({ model: embeddingModel(), value: 'tides' })).embedding.length, 256);
assert.equal((await embedMany({ model: embeddingModel(), values: ['a', 'b'] })).embeddings.length, 2);
// A Jina-protocol rerank API on loopback.
const srv = createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    const b = JSON.parse(raw);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: b.documents.map((d, index) => ({ index, relevance_score: d.includes(b.query) ? 1 : 0 })) }));
  });
});
await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
const rr = await rerank({ model: rerankingModel({ type: 'rerank', name: 'm', factory: 'Jina', base_url: `http://127.0.0.1:${srv.address().port}` }), query: 'moon', documents: ['bread', 'the moon'] });
assert.equal(rr.ranking[0].originalIndex, 1);
srv.close();

// MCP (with zod's lowest too): the tools listed, a retrieval, bad arguments as a tool error.
const mcp = new McpClient({ name: 'floors', version: '1.0.0' });
const [a, b] = InMemoryTransport.createLinkedPair();
await (await createMcpServer(client)).connect(a);
await mcp.connect(b);
assert.ok((await mcp.listTools()).tools.some((t) => t.name === 'ragflow_retrieval'));
const hit = JSON.parse((await mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: 'what raises the tides', dataset_ids: [ds.id] } })).content[0].text);
assert.equal(hit.chunks[0].document_name, 'tides.md');
const bad = await mcp.callTool({ name: 'ragflow_retrieval', arguments: { question: 'x', page_size: 0 } });
assert.equal(bad.isError, true);
await mcp.close();
await client.close();

// Read from node_modules: not every package exports its package.json (the MCP SDK's maps it to dist/).
const version = (p) => JSON.parse(readFileSync(new URL(`./node_modules/${p}/package.json`, import.meta.url), 'utf8')).version;
console.log(JSON.stringify({ '@langchain/core': version('@langchain/core'), ai: version('ai'), '@modelcontextprotocol/sdk': version('@modelcontextprotocol/sdk'), zod: version('zod'), ok: true }));

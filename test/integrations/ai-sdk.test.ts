/**
 * ragloom/ai-sdk against the real `ai` package: generateText / streamText with @ai-sdk/openai's
 * chat model talking to a loopback OpenAI-protocol stand-in that calls the retrieval tool, and
 * embed / embedMany / rerank with ragloom's models. Local and remote Clients.
 */
import { describe, expect, beforeAll, afterAll, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateText, streamText, stepCountIs, embed, embedMany, rerank, cosineSimilarity } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { retrievalTool, embeddingModel, rerankingModel, type CitedChunk } from '../../src/integrations/ai-sdk/index.js';
import { MODES, acceptance, parsedDataset } from '../acceptance/modes.js';
import { startChatServer, type ChatServer, type ChatRequestBody } from '../support/chat-server.js';
import { resolveEmbedder } from '../../src/integrations/internal/embedder.js';

let llm: ChatServer;
let rerankSrv: Server;
let rerankUrl = '';
beforeAll(async () => {
  llm = await startChatServer();
  // A Jina-protocol rerank API: scores a document by the share of the query's words it holds.
  rerankSrv = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const b = JSON.parse(raw) as { query: string; documents: string[] };
      const q = b.query.toLowerCase().split(/\W+/).filter(Boolean);
      const results = b.documents.map((d, index) => ({ index, relevance_score: q.filter((w) => d.toLowerCase().includes(w)).length / q.length }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((r) => rerankSrv.listen(0, '127.0.0.1', r));
  rerankUrl = `http://127.0.0.1:${(rerankSrv.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await llm.close();
  await new Promise((r) => rerankSrv.close(r));
});

const model = () => createOpenAI({ baseURL: llm.url, apiKey: 'sk-test' }).chat('stand-in');

/** The stand-in's second turn: it answers with the first document name the tool result holds. */
const answerFromTool = (b: ChatRequestBody): string => {
  const result = b.messages.find((m) => m.role === 'tool');
  const name = /"document_name":"([^"]+)"/.exec(String(result?.content ?? ''))?.[1];
  return name ? `The moon's pull raises the tides (${name}).` : 'I found nothing.';
};
const callSearch = (args: string) => ({ text: '', toolCalls: [{ id: 'call_1', name: 'search_knowledge', arguments: args }] });

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('retrievalTool() with generateText / streamText', () => {
    test('the model calls the tool, receives the ranked chunks and cites them (generateText)', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      llm.reset();
      llm.script(callSearch('{"question":"What pulls the ocean tides?"}'), { text: answerFromTool });
      const result = await generateText({
        model: model(), prompt: 'Why are there tides?', stopWhen: stepCountIs(3),
        tools: { search_knowledge: retrievalTool({ client, dataset_ids: [ds.id], page_size: 3 }) },
      });
      expect(result.text).toBe("The moon's pull raises the tides (tides.md).");
      const [step] = result.steps;
      expect(step!.toolCalls[0]).toMatchObject({ toolName: 'search_knowledge', input: { question: 'What pulls the ocean tides?' } });
      const chunks = step!.toolResults[0]!.output as CitedChunk[];
      const direct = await client.retrieve({ dataset_ids: [ds.id], question: 'What pulls the ocean tides?', page_size: 3 });
      expect(chunks.map((c) => [c.id, c.document_name, c.similarity])).toEqual(direct.map((c) => [c.id, c.document_name, c.similarity]));
      expect(chunks[0]).toMatchObject({ document_name: 'tides.md', dataset_id: ds.id, document_id: direct[0]!.document_id });
      expect(chunks[0]!.content).toContain('moon');
      // The tool's description and schema went to the model; the chunks went back in the second request.
      const tools = llm.requests[0]!.body.tools as Array<{ function: { name: string; description: string; parameters: { required: string[] } } }>;
      expect(tools[0]!.function).toMatchObject({ name: 'search_knowledge', parameters: { required: ['question'] } });
      expect(tools[0]!.function.description).toMatch(/knowledge base/);
      expect(String(llm.requests[1]!.body.messages.find((m) => m.role === 'tool')!.content)).toContain('gravitational pull of the moon');
    });

    test('streamText streams the tool call, the tool result and the answer in pieces', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      llm.reset();
      llm.script(callSearch('{"question":"What pulls the ocean tides?"}'), { text: answerFromTool });
      const result = streamText({
        model: model(), prompt: 'Why are there tides?', stopWhen: stepCountIs(3),
        tools: { search_knowledge: retrievalTool({ client, dataset_ids: [ds.id] }) },
      });
      const kinds: string[] = [];
      let text = '';
      let output: CitedChunk[] = [];
      for await (const part of result.fullStream) {
        kinds.push(part.type);
        if (part.type === 'text-delta') text += part.text;
        if (part.type === 'tool-result') output = part.output as CitedChunk[];
      }
      expect(kinds).toContain('tool-call');
      expect(kinds.indexOf('tool-result')).toBeGreaterThan(kinds.indexOf('tool-call'));
      expect(kinds.filter((k) => k === 'text-delta').length).toBeGreaterThan(3);
      expect(text).toBe("The moon's pull raises the tides (tides.md).");
      expect(output[0]!.document_name).toBe('tides.md');
      expect(llm.requests.every((r) => r.body.stream === true)).toBe(true);
    });

    test('bad tool input and a failing retrieval are tool errors the model is told about, not crashes', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      llm.reset();
      llm.script(callSearch('{"question":5}'), { text: (b) => `saw: ${String(b.messages.find((m) => m.role === 'tool')?.content ?? '')}` });
      const bad = await generateText({
        model: model(), prompt: 'tides?', stopWhen: stepCountIs(3),
        tools: { search_knowledge: retrievalTool({ client, dataset_ids: [ds.id] }) },
      });
      expect(bad.steps[0]!.content.some((p) => p.type === 'tool-error')).toBe(true);
      expect(bad.text).toMatch(/question/);
      llm.reset();
      llm.script(callSearch('{"question":"tides"}'), { text: (b) => `saw: ${String(b.messages.find((m) => m.role === 'tool')?.content ?? '')}` });
      const failing = await generateText({
        model: model(), prompt: 'tides?', stopWhen: stepCountIs(3),
        tools: { search_knowledge: retrievalTool({ client, dataset_ids: ['0'.repeat(32)] }) },
      });
      const err = failing.steps[0]!.content.find((p) => p.type === 'tool-error') as { error: { code: number; message: string } } | undefined;
      expect(err?.error).toMatchObject({ code: 102 });
      expect(failing.text).toContain("You don't own the dataset");
      expect(() => retrievalTool({ client } as never)).toThrow(TypeError);
    });
  });
});

describe('embeddingModel() with embed / embedMany', () => {
  it("gives ragloom's own vectors (unit length), one per value, and names a model it cannot use", async () => {
    const m = embeddingModel();
    expect(m.modelId).toBe('ragloom-static-en-256@Builtin');
    const { embedding } = await embed({ model: m, value: 'the moon raises the tides' });
    expect(embedding).toHaveLength(256);
    const direct = (await resolveEmbedder().embed(['the moon raises the tides']))[0]!;
    expect(embedding).toEqual(Array.from(direct));
    const { embeddings } = await embedMany({ model: m, values: ['ocean tides and the moon', 'tides of the sea', 'baking sourdough bread'] });
    expect(embeddings).toHaveLength(3);
    expect(cosineSimilarity(embeddings[0]!, embeddings[1]!)).toBeGreaterThan(cosineSimilarity(embeddings[0]!, embeddings[2]!));
    expect(embeddingModel({ model: 'ragloom-static-en-128@Builtin' }).modelId).toBe('ragloom-static-en-128@Builtin');
    expect(() => embeddingModel({ model: 'nope@Nowhere' })).toThrow(/Embedding model "nope@Nowhere"/);
  });
});

describe('rerankingModel() with rerank', () => {
  it("ranks documents with a registered rerank model's scores, best first, topN kept", async () => {
    const m = rerankingModel({ type: 'rerank', name: 'overlap', factory: 'Jina', base_url: rerankUrl });
    const documents = ['Bread needs yeast.', 'The moon pulls the ocean tides.', 'Tides rise twice a day.'];
    const r = await rerank({ model: m, query: 'moon tides', documents, topN: 2 });
    expect(r.ranking.map((x) => [x.originalIndex, x.score])).toEqual([[1, 1], [2, 0.5]]);
    expect(r.rerankedDocuments).toEqual(['The moon pulls the ocean tides.', 'Tides rise twice a day.']);
    const objects = await rerank({ model: m, query: 'yeast', documents: [{ text: 'tides' }, { text: 'yeast' }] });
    expect(objects.ranking[0]!.originalIndex).toBe(1);
    const down = rerankingModel({ type: 'rerank', name: 'down', factory: 'Jina', base_url: 'http://127.0.0.1:1' });
    await expect(rerank({ model: down, query: 'q', documents: ['a'], maxRetries: 0 })).rejects.toThrow(/Rerank model down@Jina is unreachable/);
  });
});

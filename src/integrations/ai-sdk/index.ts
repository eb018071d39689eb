/**
 * ragloom for the Vercel AI SDK (`ragloom/ai-sdk`; peer: `ai` ^6): a retrieval tool for
 * `generateText` / `streamText`, ragloom's embedding models as an `EmbeddingModel` for
 * `embed` / `embedMany`, and ragloom's rerank models as a `RerankingModel` for `rerank`.
 * docs/integrations.md.
 *
 * @example
 * import { streamText, stepCountIs } from 'ai';
 * import { retrievalTool } from 'ragloom/ai-sdk';
 * const result = streamText({
 *   model, prompt: 'What raises the tides?', stopWhen: stepCountIs(3),
 *   tools: { search_knowledge: retrievalTool({ client, dataset_ids: [ds.id] }) },
 * });
 */
import { tool, jsonSchema, type Tool, type EmbeddingModel, type RerankingModel } from 'ai';
import type { Client, RetrieveParams } from '../../client/index.js';
import { createReranker } from '../../search/index.js';
import type { ModelConfig } from '../../embed/index.js';
import { citedChunk, type CitedChunk } from '../internal/chunks.js';
import { resolveEmbedder, embedTexts, type EmbeddingOptions } from '../internal/embedder.js';

export type { CitedChunk } from '../internal/chunks.js';
export type { EmbeddingOptions } from '../internal/embedder.js';

/** The AI SDK's embedding model interface that this adapter implements (specification v3). */
export type RagloomEmbeddingModel = Extract<EmbeddingModel, { specificationVersion: 'v3' }>;
/** The AI SDK's reranking model interface that this adapter implements (specification v3). */
export type RagloomRerankingModel = Exclude<RerankingModel, string>;

export interface RetrievalToolOptions extends Omit<RetrieveParams, 'question'> {
  client: Client;
  /**
   * What the model reads to decide when to call the tool; say what the datasets hold.
   * @default 'Search the knowledge base …'
   */
  description?: string;
}

/** The tool's input: the model writes only the question. */
export interface RetrievalToolInput {
  question: string;
}

const DESCRIPTION = 'Search the knowledge base for passages that answer a question. Returns the most relevant chunks, best first, ' +
  'each with its text (content), the document it comes from (document_name, document_id) and its similarity; cite the document names.';

/**
 * A tool for `generateText` / `streamText` that runs `client.retrieve` for the question the model
 * writes; its result is the ranked chunks (text, document name and id, dataset id, scores). Every
 * other retrieval parameter is fixed here (RAGFlow's defaults). A failing retrieval (an
 * `ApiError`) reaches the SDK as a tool error, which it reports to the model.
 * @example
 * const search = retrievalTool({ client, dataset_ids: [ds.id], page_size: 5 });
 * await search.execute!({ question: 'tides' }, { toolCallId: '1', messages: [] });   // → CitedChunk[]
 */
export function retrievalTool(opts: RetrievalToolOptions): Tool<RetrievalToolInput, CitedChunk[]> {
  const { client, description = DESCRIPTION, ...params } = opts ?? ({} as RetrievalToolOptions);
  if (!client || typeof client.retrieve !== 'function') throw new TypeError('retrievalTool needs { client, dataset_ids }');
  if (!Array.isArray(params.dataset_ids)) throw new TypeError('retrievalTool needs { client, dataset_ids } (a list of dataset ids)');
  return tool<RetrievalToolInput, CitedChunk[]>({
    description,
    inputSchema: jsonSchema<RetrievalToolInput>({
      type: 'object',
      properties: { question: { type: 'string', description: 'The question or search query, in natural language.' } },
      required: ['question'],
      additionalProperties: false,
    }, {
      validate: (v) => {
        const q = (v as { question?: unknown } | null)?.question;
        return typeof q === 'string' ? { success: true, value: { question: q } } : { success: false, error: new TypeError('`question` should be a string') };
      },
    }),
    execute: async ({ question }) => (await client.retrieve({ ...params, question })).map(citedChunk),
  });
}

/**
 * A ragloom embedding model for `embed` / `embedMany`: a built-in one (offline; default
 * `ragloom-static-en-256@Builtin`) or one described in `models`. The same model as a dataset's
 * `embedding_model` gives the vectors ragloom compares questions with (unit length).
 * @example
 * const { embedding } = await embed({ model: embeddingModel(), value: 'tides' });   // 256 numbers
 */
export function embeddingModel(opts: EmbeddingOptions = {}): RagloomEmbeddingModel {
  const embedder = resolveEmbedder(opts);
  return {
    specificationVersion: 'v3',
    provider: 'ragloom',
    modelId: embedder.id,
    maxEmbeddingsPerCall: Infinity,
    supportsParallelCalls: true,
    async doEmbed({ values, abortSignal }) {
      return { embeddings: await embedTexts(embedder, values, abortSignal), warnings: [] };
    },
  };
}

/**
 * A ragloom rerank model for `rerank`, from its configuration as `new Client({ models })` takes it
 * (`type: 'rerank'`): an HTTP rerank API that speaks the Jina / Cohere protocol (`base_url`), or a
 * local cross-encoder (`path`, needs @huggingface/transformers). Scores are in [0, 1].
 * @example
 * const { ranking } = await rerank({ model: rerankingModel({ type: 'rerank', name: 'bge-reranker-v2-m3', factory: 'Jina', base_url }), query, documents });
 */
export function rerankingModel(config: ModelConfig): RagloomRerankingModel {
  if (!config || typeof config.name !== 'string' || typeof config.factory !== 'string') throw new TypeError('rerankingModel needs a model config { type: "rerank", name, factory, base_url | path }');
  const reranker = createReranker({ ...config, type: 'rerank' });
  return {
    specificationVersion: 'v3',
    provider: 'ragloom',
    modelId: reranker.id,
    async doRerank({ documents, query, topN }) {
      const texts = documents.type === 'text' ? documents.values : documents.values.map((d) => JSON.stringify(d));
      const scores = await reranker.score(query, texts);
      const ranking = scores.map((relevanceScore, index) => ({ index, relevanceScore })).sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
      return { ranking: topN !== undefined ? ranking.slice(0, topN) : ranking };
    },
  };
}

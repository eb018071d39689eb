/**
 * The MCP server: RAGFlow's MCP tools (`ragflow_retrieval` as RAGFlow 0.25.6 names and argues it,
 * `ragflow_list_datasets` and `ragflow_list_chats` as RAGFlow 0.26.3 added them), ragloom's own
 * (a cited answer from a chat, memories), and datasets as resources, over any Client.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, type CallToolResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { ApiError, type Client, type Chunk, type DataSet, type Document, type MetadataCondition, type ReferenceChunk } from '../../client/index.js';

/** The package's version (package.json, three folders up from src/integrations/mcp and dist/integrations/mcp alike). */
const VERSION: string = (JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../../package.json'), 'utf8')) as { version: string }).version;

export interface McpServerOptions {
  /**
   * Leave out the tools that write (adding memory messages). Pair it with a read-only Client
   * (`new Client({ path, readonly: true })`) to be sure nothing is written. @default false
   */
  readOnly?: boolean;
  /** The server's name in the MCP handshake. @default 'ragloom' */
  name?: string;
}

/** The names of the tools, as `tools/list` gives them (the write tools last). */
export const MCP_TOOLS = Object.freeze({
  read: ['ragflow_retrieval', 'ragflow_list_datasets', 'ragflow_list_chats', 'ragloom_ask', 'ragloom_list_memories', 'ragloom_search_memory'],
  write: ['ragloom_add_memory_message'],
} as const);

/** How many datasets the retrieval tool's description lists (the list tool pages through all). */
const DESCRIBED = 100;

const json = (v: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(v) }] });
const lines = (rows: unknown[]): CallToolResult => ({ content: [{ type: 'text', text: rows.map((r) => JSON.stringify(r)).join('\n') }] });

/** Runs a tool; an ApiError becomes a tool error the assistant reads (`[code] message`), not a protocol error. */
async function run(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) return { content: [{ type: 'text', text: `[${e.code}] ${e.message}` }], isError: true };
    throw e;
  }
}

/**
 * Reads a resource; an ApiError (an unknown or malformed id) is the protocol's "invalid params"
 * (a plain Error with that code: the SDK sends its message as it is, an McpError's twice prefixed).
 */
async function read(fn: () => Promise<ReadResourceResult>): Promise<ReadResourceResult> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) throw Object.assign(new Error(`[${e.code}] ${e.message}`), { code: ErrorCode.InvalidParams });
    throw e;
  }
}

async function allDatasets(client: Client): Promise<DataSet[]> {
  const out: DataSet[] = [];
  for (let page = 1; ; page++) {
    const part = await client.listDatasets({ page, page_size: 100 });
    out.push(...part);
    if (part.length < 100) return out;
  }
}

/** RAGFlow's per-chunk document metadata (`document_metadata` of its MCP retrieval). */
const documentMetadata = (d: Document) => ({
  document_id: d.id, name: d.name, type: d.type, size: d.size, chunk_count: d.chunk_count, token_count: d.token_count,
  create_date: (d as unknown as Record<string, unknown>).create_date ?? '', update_date: (d as unknown as Record<string, unknown>).update_date ?? '',
  dataset_id: d.dataset_id, meta_fields: d.meta_fields ?? {},
});

/** `page` and `page_size` of a listing tool (RAGFlow's list tools' bounds and defaults). */
const paging = (size: number, max: number) => ({
  page: z.number().int().min(1).default(1).describe('Page number'),
  page_size: z.number().int().min(1).max(max).default(size).describe('Results per page'),
});

const metadataConditionSchema = z.object({
  logic: z.enum(['and', 'or']).optional(),
  conditions: z.array(z.object({ name: z.string(), comparison_operator: z.string(), value: z.unknown().optional() })),
}).describe("ragloom: only chunks of documents whose meta_fields match, e.g. {\"conditions\": [{\"name\": \"author\", \"comparison_operator\": \"=\", \"value\": \"Ada\"}]}");

/**
 * An MCP server over `client` (local or remote), not yet connected: connect it to a transport
 * (`StdioServerTransport`, `StreamableHTTPServerTransport`) or use {@link serveMcpHttp}.
 * Resolves once the datasets are listed for the retrieval tool's description (as RAGFlow's does).
 * @example
 * const server = await createMcpServer(new Client({ path: 'kb.db' }));
 * await server.connect(new StdioServerTransport());
 */
export async function createMcpServer(client: Client, opts: McpServerOptions = {}): Promise<McpServer> {
  if (!client || typeof client.retrieve !== 'function') throw new TypeError('createMcpServer needs a ragloom Client');
  const server = new McpServer({ name: opts.name ?? 'ragloom', version: VERSION }, {
    instructions: "ragloom's knowledge bases: find passages with ragflow_retrieval (cite document_name), list what there is with ragflow_list_datasets, ask a chat assistant with ragloom_ask.",
  });
  const datasets = await allDatasets(client);
  const described = datasets.slice(0, DESCRIBED).map((d) => JSON.stringify({ id: d.id, name: d.name, description: d.description ?? '' })).join('\n');
  const more = datasets.length > DESCRIBED ? `\n… and ${datasets.length - DESCRIBED} more (ragflow_list_datasets lists them all).` : '';
  const READ = { readOnlyHint: true, openWorldHint: false } as const;

  server.registerTool('ragflow_retrieval', {
    description: 'Retrieve relevant chunks from the knowledge base based on the question. You can optionally specify dataset_ids to search only specific datasets, '
      + 'or omit dataset_ids entirely to search across ALL available datasets. You can also optionally specify document_ids to search within specific documents. '
      + 'Each chunk comes with its document_name and document_id: cite them. Below is the list of all available datasets, including their descriptions and IDs:\n'
      + described + more,
    inputSchema: {
      dataset_ids: z.array(z.string()).optional().describe('Optional array of dataset IDs to search. If not provided or empty, all datasets will be searched.'),
      document_ids: z.array(z.string()).optional().describe('Optional array of document IDs to search within.'),
      question: z.string().describe('The question or query to search for.'),
      page: z.number().int().min(1).default(1).describe('Page number for pagination'),
      page_size: z.number().int().min(1).max(100).default(10).describe('Number of results to return per page (default: 10, max recommended: 50 to avoid token limits)'),
      similarity_threshold: z.number().min(0).max(1).default(0.2).describe('Minimum similarity threshold for results'),
      vector_similarity_weight: z.number().min(0).max(1).optional().describe('Weight for vector similarity vs term similarity (default: 0.3)'),
      keyword: z.boolean().default(false).describe('Enable keyword-based search (needs a chat model that writes text)'),
      top_k: z.number().int().min(1).max(1024).default(1024).describe('Maximum results to consider before ranking'),
      rerank_id: z.string().optional().describe('Optional reranking model identifier'),
      force_refresh: z.boolean().default(false).describe('Accepted as RAGFlow takes it; ragloom reads document metadata fresh on every call.'),
      metadata_condition: metadataConditionSchema.optional(),
    },
    annotations: { title: 'Search the knowledge base', ...READ },
  }, (a) => run(async () => {
    const ids = a.dataset_ids?.length ? a.dataset_ids : (await allDatasets(client)).map((d) => d.id);
    if (!ids.length) throw new ApiError(102, 'No accessible datasets found.');
    const r = await client.retrieveWithTotals({
      dataset_ids: ids, question: a.question, page: a.page, page_size: a.page_size, similarity_threshold: a.similarity_threshold,
      top_k: a.top_k, keyword: a.keyword,
      ...(a.document_ids?.length ? { document_ids: a.document_ids } : {}),
      ...(a.vector_similarity_weight !== undefined ? { vector_similarity_weight: a.vector_similarity_weight } : {}),
      ...(a.rerank_id ? { rerank_id: a.rerank_id } : {}),
      ...(a.metadata_condition ? { metadata_condition: a.metadata_condition as MetadataCondition } : {}),
    });
    const names = new Map<string, string>();
    const docs = new Map<string, Document>();
    for (const dsId of new Set(r.chunks.map((c) => c.dataset_id))) {
      const [ds] = await client.listDatasets({ id: dsId });
      if (!ds) continue;
      names.set(dsId, ds.name);
      const want = [...new Set(r.chunks.filter((c) => c.dataset_id === dsId).map((c) => c.document_id))];
      for (let i = 0; i < want.length; i += 200) for (const d of await ds.listDocuments({ ids: want.slice(i, i + 200), page_size: 0 })) docs.set(d.id, d);
    }
    const chunk = (c: Chunk) => {
      const d = docs.get(c.document_id);
      return { ...c.toJSON(), dataset_name: names.get(c.dataset_id) ?? 'Unknown', document_name: c.document_name ?? c.document_keyword ?? '', ...(d ? { document_metadata: documentMetadata(d) } : {}) };
    };
    return json({
      chunks: r.chunks.map(chunk),
      pagination: { page: a.page, page_size: a.page_size, total_chunks: r.total, total_pages: Math.ceil(r.total / a.page_size) },
      query_info: { question: a.question, similarity_threshold: a.similarity_threshold, vector_weight: a.vector_similarity_weight ?? 0.3, keyword_search: a.keyword, dataset_count: ids.length },
    });
  }));

  server.registerTool('ragflow_list_datasets', {
    description: 'List all accessible datasets (knowledge bases). Returns dataset IDs, names, and descriptions, one JSON object per line. '
      + 'Use this tool to discover which datasets are available before performing retrieval.',
    inputSchema: paging(100, 1000),
    annotations: { title: 'List datasets', ...READ },
  }, (a) => run(async () => {
    const rows = await client.listDatasets({ page: a.page, page_size: Math.min(a.page_size, 100) });
    return lines(rows.map((d) => ({
      description: d.description ?? '', id: d.id, name: d.name, document_count: d.document_count, chunk_count: d.chunk_count, embedding_model: d.embedding_model,
    })));
  }));

  server.registerTool('ragflow_list_chats', {
    description: 'List all accessible chat assistants. Returns chat assistant IDs, names, and descriptions, one JSON object per line. '
      + 'Use this tool to discover the chat assistants that ragloom_ask can ask.',
    inputSchema: paging(30, 100),
    annotations: { title: 'List chat assistants', ...READ },
  }, (a) => run(async () => {
    const rows = await client.listChats({ page: a.page, page_size: a.page_size });
    return lines(rows.map((c) => ({ id: c.id, name: c.name, description: c.description ?? '', dataset_ids: c.dataset_ids })));
  }));

  server.registerTool('ragloom_ask', {
    description: "Ask a chat assistant (ragflow_list_chats lists them) a question. It answers from its datasets, citing passages as [ID:n]; "
      + 'references[n] is the passage [ID:n] with its document_name and document_id. Nothing is stored.',
    inputSchema: {
      chat_id: z.string().describe('The chat assistant to ask.'),
      question: z.string().min(1).describe('The question.'),
      history: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })).optional()
        .describe('Earlier turns of the conversation, oldest first.'),
    },
    annotations: { title: 'Ask a chat assistant', ...READ },
  }, (a) => run(async () => {
    const r = await client.chatCompletion(a.chat_id, {
      model: 'model', stream: false, extra_body: { reference: true },
      messages: [...(a.history ?? []), { role: 'user', content: a.question }],
    });
    const message = ((r.choices as Array<{ message: { content: string; reference?: ReferenceChunk[] } }>)[0]!).message;
    return json({
      answer: message.content,
      references: (message.reference ?? []).map((c, id) => ({
        id, document_name: c.document_name, document_id: c.document_id, dataset_id: c.dataset_id, similarity: c.similarity, content: c.content,
      })),
    });
  }));

  server.registerTool('ragloom_list_memories', {
    description: 'List the memories (stores of an agent\'s conversation turns) with their ids, names and types, one JSON object per line.',
    inputSchema: paging(50, 100),
    annotations: { title: 'List memories', ...READ },
  }, (a) => run(async () => {
    const r = await client.listMemory({ page: a.page, page_size: a.page_size });
    return lines(r.memory_list.map((m) => ({ id: m.id, name: m.name, memory_type: m.memory_type, description: m.description ?? '' })));
  }));

  server.registerTool('ragloom_search_memory', {
    description: 'Search memory messages (hybrid: vector and keyword). Returns the best messages with their content, ids and similarity.',
    inputSchema: {
      memory_id: z.union([z.string(), z.array(z.string())]).describe('The memory, or several.'),
      query: z.string().describe('What to look for.'),
      agent_id: z.string().optional(),
      session_id: z.string().optional(),
      user_id: z.string().optional(),
      similarity_threshold: z.number().min(0).max(1).default(0.2),
      keywords_similarity_weight: z.number().min(0).max(1).default(0.7).describe("The vector side's weight (RAGFlow's name)"),
      top_n: z.number().int().min(1).max(100).default(10),
    },
    annotations: { title: 'Search memory', ...READ },
  }, (a) => run(async () => {
    const hits = await client.searchMessage(a);
    return json(hits.map((m) => ({
      message_id: m.message_id, memory_id: m.memory_id, message_type: m.message_type, content: m.content, agent_id: m.agent_id,
      session_id: m.session_id, user_id: m.user_id, valid_at: m.valid_at, similarity: m.similarity,
    })));
  }));

  if (!opts.readOnly) {
    server.registerTool('ragloom_add_memory_message', {
      description: "Store one turn of a conversation (the user's input and the agent's response) in one or more memories; "
        + 'what the memory extracts from it follows in the background.',
      inputSchema: {
        memory_id: z.union([z.string(), z.array(z.string())]).describe('The memory, or several.'),
        agent_id: z.string(),
        session_id: z.string(),
        user_input: z.string(),
        agent_response: z.string(),
        user_id: z.string().optional(),
      },
      annotations: { title: 'Add to memory', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    }, (a) => run(async () => ({ content: [{ type: 'text', text: await client.addMessage(a) }] })));
  }

  server.registerResource('dataset', new ResourceTemplate('ragloom://datasets/{dataset_id}', {
    list: async () => ({
      resources: (await allDatasets(client)).map((d) => ({
        uri: `ragloom://datasets/${d.id}`, name: d.name, mimeType: 'application/json',
        description: d.description || `${d.document_count} documents, ${d.chunk_count} chunks`,
      })),
    }),
  }), { title: 'Dataset', description: 'A dataset: its settings and its documents (ids, names, parse status, chunk counts).', mimeType: 'application/json' },
  (uri, { dataset_id }) => read(async () => {
    const [ds] = await client.listDatasets({ id: String(dataset_id) });
    if (!ds) throw new ApiError(102, `No dataset ${String(dataset_id)}`);
    const docs = await ds.listDocuments({ page_size: 0, orderby: 'name', desc: false });
    const body = {
      id: ds.id, name: ds.name, description: ds.description ?? '', embedding_model: ds.embedding_model, chunk_method: ds.chunk_method,
      document_count: ds.document_count, chunk_count: ds.chunk_count,
      documents: docs.map((d) => ({ id: d.id, name: d.name, run: d.run, chunk_count: d.chunk_count, size: d.size, uri: `ragloom://datasets/${ds.id}/documents/${d.id}` })),
    };
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body) }] };
  }));

  server.registerResource('document', new ResourceTemplate('ragloom://datasets/{dataset_id}/documents/{document_id}', { list: undefined }), {
    title: 'Document', description: "A document's text as ragloom chunked it (its chunks in order).", mimeType: 'text/plain',
  }, (uri, { dataset_id, document_id }) => read(async () => {
    const [ds] = await client.listDatasets({ id: String(dataset_id) });
    const [doc] = ds ? await ds.listDocuments({ id: String(document_id) }) : [];
    if (!doc) throw new ApiError(102, `No document ${String(document_id)} in dataset ${String(dataset_id)}`);
    const chunks: Chunk[] = [];
    for (let page = 1; ; page++) {
      const part = await doc.listChunks({ page, page_size: 100 });
      chunks.push(...part);
      if (part.length < 100) break;
    }
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: chunks.map((c) => c.content).join('\n\n') }] };
  }));

  return server;
}

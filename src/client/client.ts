import { Api, checkPostgresOptions } from '../api/index.js';
import type { ModelConfig } from '../embed/index.js';
import type { AgentOptions } from '../core/index.js';
import { checkIndexMemory, type RetrievalOptions } from '../search/index.js';
import { LocalTransport, OpeningTransport, type Transport } from './transport.js';
import type { PgConnectionConfig, PostgresTuning } from '../store/index.js';
import { HttpTransport } from './http.js';
import { Chunk, DataSet } from './resources.js';
import { Chat } from './chat.js';
import { Memory, type MemoryMessage } from './memory.js';
import { Agent } from './agent.js';
import { ApiError } from '../api/errors.js';
import type { CreateDatasetParams, RetrieveParams, RetrieveWithTotals, DocAgg, CreateChatParams, CreateMemoryParams, OpenAIExtraBody, ChatCompletion, ChatCompletionChunk, MetadataCondition, SearchConfig } from './params.js';

export interface ClientOptions {
  /** SQLite database file of the embedded engine; ':memory:' allowed. */
  path?: string;
  /**
   * The embedded engine on a PostgreSQL database instead of a file (many processes and hosts on
   * one store: docs/scaling.md): `postgresql://user:pass@host:port/db`, or a `pg` pool config.
   * The database must exist (an empty one gets the schema on first open); a missing or
   * unreachable one is an ApiError naming it, from the first call. Needs the `pg` package.
   */
  postgres?: string | PgConnectionConfig;
  /**
   * With `postgres`: how long calls wait and how many connections the pool opens (docs/scaling.md,
   * "When the database is away"). A setting unknown or out of range: ApiError 101 naming it.
   * @default { unreachableMs: 10_000, statementTimeoutMs: 30_000, idleInTransactionMs: 60_000, poolSize: 10, connectTimeoutMs: 5_000 }
   * @example new Client({ postgres: 'postgresql://…', postgresOptions: { unreachableMs: 2_000, poolSize: 4 } })
   */
  postgresOptions?: PostgresTuning;
  /**
   * A RAGFlow-compatible server, `http(s)://host:port` (remote mode): `ragloom serve`, or a RAGFlow
   * deployment. Not together with `path`.
   */
  baseUrl?: string;
  /** The server's API key (`ragflow-…`), sent as `Authorization: Bearer <apiKey>`; remote mode only, required there. */
  apiKey?: string;
  /** The tenant's models: chat, embedding, rerank. Local mode only (a server has its own). */
  models?: ModelConfig[];
  /** `name@factory` of the default chat model. Local mode only. */
  default_chat_model?: string;
  /**
   * `name@factory` of the default embedding model (datasets created without `embedding_model`).
   * Local mode only. @default 'ragloom-static-en-256@Builtin' (DEFAULT_EMBEDDING_MODEL)
   */
  default_embedding_model?: string;
  /**
   * What agents may reach: SQLite files for ExeSQL (`sql_dirs`), HTTP origins for Invoke
   * (`invoke_allow`), CodeExec and run time limits. Local mode only. @default nothing outside
   */
  agents?: AgentOptions;
  /**
   * This client's ranking settings (pseudo-relevance feedback on both sides, exact vector scan),
   * over DEFAULT_RETRIEVAL_OPTIONS; they apply to `retrieve` and to chats' retrieval. Each Client
   * has its own: two Clients in one process may rank differently. Unknown keys or values of the
   * wrong type: TypeError. Local mode only (a server has its own: `startServer({ retrieval })`).
   * See docs/retrieval.md. @example new Client({ path, retrieval: { termFeedbackDocs: 0 } })
   */
  retrieval?: Partial<RetrievalOptions>;
  /**
   * Open an existing store without ever writing to it (an export's source, reports beside a
   * running server): no schema upgrade, no recovery of interrupted parsing, no stored defaults
   * changed. A missing file, or one of an older schema, is refused (ApiError 500 naming it);
   * every write rejects with ApiError 500 "the file is read-only". Local mode only. @default false
   */
  readonly?: boolean;
  /**
   * Bytes the in-memory search indexes may hold: each dataset's vector index loads on its first
   * search, and past this budget the datasets searched least recently are dropped (their next
   * search loads them again; results are the same). A whole number ≥ 1 MiB, or Infinity; else
   * TypeError. Local mode only (a server has its own: `startServer({ indexMemory })`).
   * docs/scaling.md, "Memory budget". @default Infinity
   * @example new Client({ postgres: 'postgresql://…', indexMemory: 2 * 1024 ** 3 })
   */
  indexMemory?: number;
  /**
   * Remote mode: abort a request (not a streamed answer once it has begun) after this many
   * milliseconds, with ApiError 100 "The request timed out …". @default no limit
   */
  timeout_ms?: number;
}

const KNOWN = ['path', 'postgres', 'postgresOptions', 'baseUrl', 'apiKey', 'models', 'default_chat_model', 'default_embedding_model', 'agents', 'retrieval', 'readonly', 'indexMemory', 'timeout_ms'];

/** Options a remote Client cannot take: they are the server's configuration. */
const SERVER_SIDE = ['models', 'default_chat_model', 'default_embedding_model', 'agents', 'retrieval', 'readonly', 'postgresOptions', 'indexMemory'] as const;

/**
 * The RAGFlow SDK interface. `new Client({ path })` runs the engine in-process on one SQLite file;
 * `new Client({ baseUrl, apiKey })` speaks the same REST interface to a server over HTTP, with the
 * same results and the same `ApiError`s (a server that cannot be reached: code 105).
 * @example
 * const client = new Client({ path: './kb.db' });
 * const ds = await client.createDataset({ name: 'docs' });
 * @example
 * const remote = new Client({ baseUrl: 'http://127.0.0.1:9380', apiKey: 'ragflow-…' });
 */
export class Client {
  private readonly t: Transport;
  private readonly api?: Api;
  /** The engine being opened (PostgreSQL); work on it chains here. */
  private opening?: Promise<Api>;

  constructor(opts: ClientOptions) {
    if (!opts || typeof opts !== 'object') throw new TypeError('new Client({ path }) needs an options object');
    for (const k of Object.keys(opts)) {
      if (!KNOWN.includes(k)) {
        const near = KNOWN.find((x) => x.toLowerCase() === k.toLowerCase());
        throw new TypeError(`Unknown option "${k}"${near ? `; did you mean "${near}"?` : ''}`);
      }
    }
    if (opts.baseUrl !== undefined) {
      if (opts.path !== undefined) throw new TypeError('Pass either "path" (the embedded engine) or "baseUrl" (a server), not both');
      if (opts.postgres !== undefined) throw new TypeError('Pass either "postgres" (the embedded engine on PostgreSQL) or "baseUrl" (a server), not both');
      for (const k of SERVER_SIDE) {
        if (opts[k] !== undefined) {
          throw new TypeError(`"${k}" is the server's configuration in remote mode (startServer({ ${k} }) / ragloom serve); a remote Client cannot set it`);
        }
      }
      this.t = new HttpTransport({ baseUrl: opts.baseUrl, apiKey: opts.apiKey as string, timeoutMs: opts.timeout_ms });
    } else {
      if (opts.apiKey !== undefined) throw new TypeError('"apiKey" goes with "baseUrl" (remote mode); the embedded engine ({ path }) needs no key');
      if (opts.timeout_ms !== undefined) throw new TypeError('"timeout_ms" goes with "baseUrl" (remote mode): the embedded engine makes no requests');
      if (opts.readonly !== undefined && typeof opts.readonly !== 'boolean') throw new TypeError('"readonly" must be true or false');
      checkPostgresOptions(opts);
      checkIndexMemory(opts.indexMemory); // at once, on either store (PostgreSQL opens in the background)
      if (opts.postgres !== undefined) {
        if (opts.path !== undefined) throw new TypeError('Pass either "path" (a SQLite file) or "postgres" (a PostgreSQL database), not both');
        const pg = opts.postgres;
        if (typeof pg === 'string' ? !/^postgres(?:ql)?:\/\//i.test(pg) : !pg || typeof pg !== 'object' || Array.isArray(pg)) {
          throw new TypeError('"postgres" must be a connection string (postgresql://user:pass@host:port/db) or a pg pool config object');
        }
        this.opening = Api.open({
          postgres: pg, postgresOptions: opts.postgresOptions, models: opts.models, default_chat_model: opts.default_chat_model, default_embedding_model: opts.default_embedding_model,
          agents: opts.agents, retrieval: opts.retrieval, readonly: opts.readonly, indexMemory: opts.indexMemory,
        });
        this.opening.catch(() => undefined); // reported by the first call
        this.t = new OpeningTransport(() => this.opening!);
        return;
      }
      if (typeof opts.path !== 'string' || !opts.path) throw new TypeError('new Client({ path }) needs a database path or ":memory:" (or "postgres": a PostgreSQL URL)');
      this.api = new Api({
        path: opts.path, models: opts.models, default_chat_model: opts.default_chat_model, default_embedding_model: opts.default_embedding_model, agents: opts.agents,
        retrieval: opts.retrieval, readonly: opts.readonly, indexMemory: opts.indexMemory,
      });
      this.t = new LocalTransport(this.api);
    }
  }

  async createDataset(p: CreateDatasetParams): Promise<DataSet> {
    return new DataSet(this.t, await this.t.call('datasets.create', { ...p }));
  }

  async deleteDatasets(p: { ids?: string[] | null; delete_all?: boolean } = {}): Promise<void> {
    await this.t.call('datasets.delete', { ids: p.ids ?? null, delete_all: p.delete_all ?? false });
  }

  async listDatasets(p: {
    page?: number; page_size?: number; orderby?: 'create_time' | 'update_time'; desc?: boolean; id?: string; name?: string;
    include_parsing_status?: boolean;
  } = {}): Promise<DataSet[]> {
    const r = await this.t.call<{ data: Record<string, unknown>[] }>('datasets.list', p);
    return r.data.map((d) => new DataSet(this.t, d));
  }

  /** The first dataset named `name` (RAGFlow SDK's get_dataset). */
  async getDataset(name: string): Promise<DataSet> {
    const list = await this.listDatasets({ name }).catch(() => []);
    if (!list.length) throw new ApiError(102, `Dataset ${name} not found`);
    return list[0]!;
  }

  /** Hybrid retrieval; chunks carry `similarity`, `vector_similarity`, `term_similarity`. */
  async retrieve(p: RetrieveParams): Promise<Chunk[]> {
    return (await this.retrieveWithTotals(p)).chunks;
  }

  /**
   * `retrieve` with what RAGFlow's REST answer carries besides the page (the SDK drops it):
   * `total`, the chunks above the threshold in the result window, and `doc_aggs`, their count per
   * document (most first; `[]` for a blank question, where RAGFlow sends `{}`).
   */
  async retrieveWithTotals(p: RetrieveParams): Promise<RetrieveWithTotals> {
    const r = await this.t.call<{ total: number; chunks: Record<string, unknown>[]; doc_aggs: DocAgg[] | Record<string, never> }>('retrieval', { ...p });
    return { total: r.total, chunks: r.chunks.map((c) => new Chunk(this.t, c)), doc_aggs: Array.isArray(r.doc_aggs) ? r.doc_aggs : [] };
  }

  /**
   * Creates a chat assistant over parsed datasets. Without `llm_id` it answers with the tenant's
   * default chat model (`default_chat_model`, else the built-in `ragloom-extractive@Builtin`).
   */
  async createChat(p: CreateChatParams): Promise<Chat> {
    const body = Object.fromEntries(Object.entries(p ?? {}).filter(([, v]) => v !== undefined && v !== null));
    return new Chat(this.t, await this.t.call<Record<string, unknown>>('chats.create', body));
  }

  /** Soft-deletes chats: `{ ids }`, or `{ delete_all: true }`. */
  async deleteChats(p: { ids?: string[] | null; delete_all?: boolean } = {}): Promise<void> {
    await this.t.call('chats.delete', { ids: p.ids ?? null, delete_all: p.delete_all ?? false });
  }

  /** Pages are 1-based; `page_size` 0 (the server's default) lists every chat. */
  async listChats(p: {
    page?: number; page_size?: number; orderby?: 'create_time' | 'update_time'; desc?: boolean; id?: string; name?: string;
    keywords?: string; owner_ids?: string[];
  } = {}): Promise<Chat[]> {
    const q = { page: 1, page_size: 30, orderby: 'create_time', desc: true, ...p };
    const r = await this.t.call<{ chats: Record<string, unknown>[] }>('chats.list', q);
    return r.chats.map((c) => new Chat(this.t, c));
  }

  /** One dataset by id (`GET /datasets/{id}`), with `size` (its files' bytes) and `connectors`. */
  async getDatasetById(dataset_id: string): Promise<DataSet> {
    return new DataSet(this.t, await this.t.call<Record<string, unknown>>('datasets.get', { dataset_id }));
  }

  /**
   * A retrieval test over datasets (`POST /datasets/search`): `{chunks, total, doc_aggs, labels}`,
   * the chunks with RAGFlow's index field names. Defaults differ from `retrieve`: threshold 0,
   * `size` 30; `search_id` takes a search app's settings.
   */
  searchDatasets(p: {
    dataset_ids: string[]; question: string; doc_ids?: string[]; page?: number; size?: number; top_k?: number; similarity_threshold?: number;
    vector_similarity_weight?: number; rerank_id?: string; keyword?: boolean; search_id?: string;
    /** RAGFlow's manual conditions: `op` as its meta_filter spells it (`=`, `≠`, `>`, `contains`, `in`, `start with`, …). */
    meta_data_filter?: { method: 'manual'; manual: Array<{ key: string; op: string; value?: unknown }>; logic?: 'and' | 'or' };
  }): Promise<{ chunks: Record<string, unknown>[]; total: number; doc_aggs: DocAgg[]; labels: unknown[] }> {
    return this.t.call('datasets.search', { ...p });
  }

  /** Creates a search app (a named `search_config` over datasets); resolves to its id. */
  async createSearch(p: { name: string; description?: string; avatar?: string; search_config?: SearchConfig }): Promise<string> {
    return (await this.t.call<{ search_id: string }>('searches.create', { ...p })).search_id;
  }

  /** The search apps of the caller's tenants: `{search_apps, total}` (page / page_size 0: all). */
  listSearches(p: { page?: number; page_size?: number; keywords?: string; orderby?: string; desc?: boolean } = {}): Promise<{ search_apps: Array<Record<string, unknown>>; total: number }> {
    return this.t.call('searches.list', { ...p });
  }

  /** One search app with its `search_config`. */
  getSearch(search_id: string): Promise<Record<string, unknown>> {
    return this.t.call('searches.get', { search_id });
  }

  /** Renames a search app and merges `search_config` over its stored one (its creator only). */
  updateSearch(search_id: string, p: { name: string; search_config: SearchConfig; description?: string; avatar?: string }): Promise<Record<string, unknown>> {
    return this.t.call('searches.update', { ...p, search_id });
  }

  async deleteSearch(search_id: string): Promise<void> {
    await this.t.call('searches.delete', { search_id });
  }

  /**
   * Asks a search app: its datasets' passages and a summary by its chat model citing them,
   * streamed — deltas (`final: false`), then the whole answer with its `reference` (`final: true`).
   */
  askSearch(search_id: string, question: string, opts: { kb_ids?: string[]; signal?: AbortSignal } = {}): Promise<AsyncIterable<{ answer: string; reference: Record<string, unknown>; final: boolean }>> {
    return this.t.call('searches.completion', { ...opts, search_id, question });
  }

  /**
   * Related search terms for a question (`POST /chat/recommendation`), by the search app's chat
   * model (`search_id`) or the tenant's default; needs a model that writes text (the built-in
   * extractive model: 102).
   */
  relatedQuestions(question: string, opts: { search_id?: string } = {}): Promise<string[]> {
    return this.t.call('chats.recommendation', { ...opts, question });
  }

  /** Deletes one chat assistant (`DELETE /chats/{id}`). */
  async deleteChat(chat_id: string): Promise<void> {
    await this.t.call('chats.deleteOne', { chat_id });
  }

  /** Stops a document's parse by its task id (an ingestion log's `id`); resolves whether or not it was running. */
  async cancelTask(task_id: string): Promise<void> {
    await this.t.call('tasks.cancel', { task_id });
  }

  /** The health of the store and the parse queue (`GET /system/status`). */
  systemStatus(): Promise<Record<string, unknown>> {
    return this.t.call('system.status', {});
  }

  /** One chat by id (RAGFlow SDK's get_chat). */
  async getChat(chat_id: string): Promise<Chat> {
    return new Chat(this.t, await this.t.call<Record<string, unknown>>('chats.get', { chat_id }));
  }

  /**
   * The OpenAI-compatible completion of a chat (`POST /api/v1/openai/{chat_id}/chat/completions`):
   * a `chat.completion` object, or with `stream: true` an AsyncIterable of `chat.completion.chunk`s.
   * `model: 'model'` uses the chat's own model.
   */
  chatCompletion(chat_id: string, body: { model: string; messages: Array<{ role: string; content: unknown }>; stream?: false; extra_body?: OpenAIExtraBody; signal?: AbortSignal }): Promise<ChatCompletion>;
  chatCompletion(chat_id: string, body: { model: string; messages: Array<{ role: string; content: unknown }>; stream: true; extra_body?: OpenAIExtraBody; signal?: AbortSignal }): Promise<AsyncIterable<ChatCompletionChunk>>;
  chatCompletion(chat_id: string, body: Record<string, unknown>): Promise<unknown> {
    return this.t.call('openai.completion', { stream: false, ...body, chat_id });
  }

  /**
   * Creates an agent from a RAGFlow canvas DSL (an object, or its JSON text) and returns it (the
   * RAGFlow SDK's create_agent returns None). A DSL using components ragloom cannot run (web tools,
   * ingestion-pipeline components, RAGFlow 0.17 components) is refused with 101 naming them.
   */
  async createAgent(p: {
    title: string; dsl: Record<string, unknown> | string; description?: string | null; canvas_type?: string | null;
    canvas_category?: 'agent_canvas' | 'dataflow_canvas'; release?: boolean; avatar?: string; permission?: 'me' | 'team'; tags?: string | string[];
  }): Promise<Agent> {
    // Like the SDK, keys that are None are not sent.
    const body = Object.fromEntries(Object.entries(p ?? {}).filter(([, v]) => v !== undefined && v !== null));
    return new Agent(this.t, await this.t.call<Record<string, unknown>>('agents.create', body));
  }

  /**
   * The caller's agents and its teams' shared ones (RAGFlow SDK defaults: page 1, 30 per page, newest
   * updated first). Listed agents carry no `dsl`: `getAgent(id)` has it.
   */
  async listAgents(p: {
    page?: number; page_size?: number; orderby?: 'create_time' | 'update_time' | 'title'; desc?: boolean; keywords?: string;
    owner_ids?: string[] | string; canvas_category?: string; tags?: string[] | string;
  } = {}): Promise<Agent[]> {
    const q: Record<string, unknown> = { page: 1, page_size: 30, orderby: 'update_time', desc: true, ...p };
    // The route reads these as comma-separated strings.
    for (const k of ['owner_ids', 'tags'] as const) if (Array.isArray(q[k])) q[k] = (q[k] as string[]).join(',');
    const r = await this.t.call<{ canvas: Record<string, unknown>[] }>('agents.list', q);
    return r.canvas.map((a) => new Agent(this.t, a));
  }

  /** One agent by id, with its dsl (102 `canvas not found.`). */
  async getAgent(agent_id: string): Promise<Agent> {
    return new Agent(this.t, await this.t.call<Record<string, unknown>>('agents.get', { agent_id }));
  }

  /**
   * Changes an agent (anyone it is shared with may). With a `dsl`, a version is saved; `release:
   * true` publishes it (sessions created with `release: true` run the newest published version).
   */
  async updateAgent(agent_id: string, p: {
    title?: string; description?: string | null; dsl?: Record<string, unknown> | string; release?: boolean; permission?: 'me' | 'team';
    canvas_type?: string | null; canvas_category?: 'agent_canvas' | 'dataflow_canvas'; avatar?: string; tags?: string | string[];
  }): Promise<void> {
    const body = Object.fromEntries(Object.entries(p ?? {}).filter(([, v]) => v !== undefined && v !== null));
    await this.t.call('agents.update', { ...body, agent_id });
  }

  /** Deletes an agent with its versions and sessions (its owner only). */
  async deleteAgent(agent_id: string): Promise<void> {
    await this.t.call('agents.delete', { agent_id });
  }

  /**
   * Creates a memory. `memory_type` lists what it keeps: 'raw' messages and the 'semantic',
   * 'episodic' and 'procedural' items its chat model (`llm_id`) extracts from them.
   */
  async createMemory(p: CreateMemoryParams): Promise<Memory> {
    return new Memory(this.t, await this.t.call<Record<string, unknown>>('memories.create', { ...p }));
  }

  async listMemory(p: { page?: number; page_size?: number; tenant_id?: string | string[]; memory_type?: string | string[]; storage_type?: string; keywords?: string } = {}): Promise<{ memory_list: Memory[]; total_count: number }> {
    const r = await this.t.call<{ memory_list: Record<string, unknown>[]; total_count: number }>('memories.list', { page: 1, page_size: 50, ...p });
    return { memory_list: r.memory_list.map((m) => new Memory(this.t, m)), total_count: r.total_count };
  }

  /** Deletes a memory with all its messages (one transaction). */
  async deleteMemory(memory_id: string): Promise<void> {
    await this.t.call('memories.delete', { memory_id });
  }

  /**
   * Stores a turn of an agent's conversation in memories: the raw message at once (evicting the
   * oldest to fit the budget), the extracted items in the background. Resolves to 'All add to task.'.
   */
  addMessage(p: { memory_id: string[] | string; agent_id: string; session_id: string; user_input: string; agent_response: string; user_id?: string }): Promise<string> {
    return this.t.call('messages.add', { user_id: '', ...p });
  }

  /**
   * Hybrid search of memory messages: `similarity = keywords_similarity_weight · cosine +
   * (1 − keywords_similarity_weight) · term_similarity` (RAGFlow's naming is inverted: the weight is
   * the vector side's).
   */
  searchMessage(p: { query: string; memory_id: string[] | string; agent_id?: string; session_id?: string; user_id?: string; similarity_threshold?: number; keywords_similarity_weight?: number; top_n?: number }): Promise<MemoryMessage[]> {
    return this.t.call('messages.search', { similarity_threshold: 0.2, keywords_similarity_weight: 0.7, top_n: 10, ...p });
  }

  getRecentMessages(p: { memory_id: string[] | string; agent_id?: string; session_id?: string; limit?: number }): Promise<MemoryMessage[]> {
    return this.t.call('messages.recent', { limit: 10, ...p });
  }

  /**
   * Resolves when every queued memory extraction has run (tests, scripts). Local mode only: a
   * server extracts in its own process, so in remote mode this rejects with a TypeError; poll
   * `memory.listMemoryMessages()` instead (each raw message's `task.status`).
   */
  async waitForMemoryTasks(): Promise<void> {
    if (this.opening) return (await this.opening).memoryTasks.idle();
    if (!this.api) {
      throw new TypeError("waitForMemoryTasks() is not available in remote mode: the server runs memory extraction in its own process; poll memory.listMemoryMessages() (each message's task.status) instead");
    }
    await this.api.memoryTasks.idle();
  }

  /** Registers a model for this client's tenant. Local mode only (TypeError in remote mode). */
  registerModel(m: ModelConfig): void {
    if (this.opening) {
      // Registered once the engine is open, before any call made after this one.
      this.opening = this.opening.then((api) => (api.engine.models.register(m), api));
      this.opening.catch(() => undefined);
      return;
    }
    if (!this.api) throw new TypeError("registerModel() is not available in remote mode: models are the server's configuration (startServer({ models }) / ragloom serve)");
    this.api.engine.models.register(m);
  }

  /**
   * Local mode: releases the database and background work. Remote mode: aborts this client's
   * requests under way and refuses later calls (103); the server keeps running.
   */
  close(): Promise<void> {
    return this.t.close();
  }
}

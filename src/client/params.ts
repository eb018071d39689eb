/**
 * The Client's parameter types, with the wire's snake_case names (reference §2–§6, api-map.md): a
 * misspelt key or a value of the wrong type fails `tsc`. The engine still checks every value at
 * run time, with RAGFlow's codes and messages, for JavaScript callers.
 */
import type { Chunk, ParseStatus } from './resources.js';
import type { ReferenceChunk } from './chat.js';

/** Every chunk method ragloom implements (RAGFlow's names; src/ingest/chunkers). */
export type ChunkMethod =
  | 'naive' | 'book' | 'email' | 'laws' | 'manual' | 'one' | 'paper' | 'picture' | 'presentation' | 'qa' | 'table' | 'tag'
  | 'resume' | 'knowledge_graph';

/** What a dataset may be created or updated with (reference §3: every method but knowledge_graph). */
export type DatasetChunkMethod = Exclude<ChunkMethod, 'knowledge_graph'>;

/** What a document may be switched to (reference §4: every method but resume). */
export type DocumentChunkMethod = Exclude<ChunkMethod, 'resume'>;

/** RAPTOR settings of a parser_config (reference §3). */
export interface RaptorConfig {
  use_raptor?: boolean;
  prompt?: string;
  /** 1–2048 @default 256 */
  max_token?: number;
  /** 0–1 @default 0.1 */
  threshold?: number;
  /** 1–1024 @default 64 */
  max_cluster?: number;
  random_seed?: number;
  scope?: 'file' | 'dataset';
  clustering_method?: 'gmm' | 'ahc';
  tree_builder?: 'raptor' | 'psi';
}

/** GraphRAG settings of a parser_config (reference §3). */
export interface GraphragConfig {
  use_graphrag?: boolean;
  entity_types?: string[];
  method?: 'light' | 'general' | 'ner';
  community?: boolean;
  resolution?: boolean;
  /** 512–8196 @default 4096 */
  batch_chunk_token_size?: number;
  max_retries?: number;
  retries?: number;
  timeout?: number;
  entity_extraction_timeout?: number;
  community_timeout?: number;
}

/** A dataset's or document's `parser_config` (strict: other keys are refused, reference §3). */
export interface ParserConfig {
  /** 0–32 */
  auto_keywords?: number;
  /** 0–10 */
  auto_questions?: number;
  /** 1–2048 @default 512 */
  chunk_token_num?: number;
  /** At least one character; `\n` as written (backslash-n) or a real newline. */
  delimiter?: string;
  html4excel?: boolean;
  layout_recognize?: string;
  tag_kb_ids?: string[];
  /** 1–10 */
  topn_tags?: number;
  /** 0–1 @default 0.1 */
  filename_embd_weight?: number | null;
  task_page_size?: number | null;
  pages?: number[][] | null;
  raptor?: RaptorConfig;
  graphrag?: GraphragConfig;
  parent_child?: { use_parent_child?: boolean; children_delimiter?: string };
  children_delimiter?: string;
  /** 0–90 (percent of chunk_token_num carried into the next chunk) */
  overlapped_percent?: number;
  table_column_mode?: 'auto' | 'manual';
  table_column_roles?: Record<string, 'indexing' | 'metadata' | 'both'>;
  table_context_size?: number;
  image_context_size?: number;
  entity_types?: string[];
  llm_id?: string;
  /** Merged into the top level. */
  ext?: Record<string, unknown>;
}

/** `client.createDataset(...)` (reference §3). */
export interface CreateDatasetParams {
  name: string;
  /** `data:image/png;base64,…` or `data:image/jpeg;base64,…` */
  avatar?: string | null;
  description?: string | null;
  /** `name@factory`. @default the tenant's default embedding model */
  embedding_model?: string | null;
  /** @default 'me' */
  permission?: 'me' | 'team';
  /** @default 'naive' */
  chunk_method?: DatasetChunkMethod;
  parser_config?: ParserConfig | null;
}

/**
 * `dataset.update(...)`: the create fields, all optional (`parser_config` deep-merged into the
 * stored one), plus `pagerank`, `language` and `connectors` (reference §3). `embedding_model` may
 * change while the dataset has chunks (RAGFlow 0.25.6): they keep the old model's vectors until
 * `dataset.reembed()` parses the documents again.
 */
export interface UpdateDatasetParams extends Partial<CreateDatasetParams> {
  /** 0–100, added to every chunk's similarity in ranking. */
  pagerank?: number;
  language?: string;
  /** Echoed back as given (ragloom links no data-source connectors). */
  connectors?: Array<Record<string, unknown>>;
}

/** `dataset.listDocuments(...)` (reference §4). */
/** A search app's settings (RAGFlow's `search_config`); other keys are kept as given. */
export interface SearchConfig {
  kb_ids?: string[];
  doc_ids?: string[];
  similarity_threshold?: number;
  vector_similarity_weight?: number;
  top_k?: number;
  rerank_id?: string;
  /** The chat model that summarises (`name@factory`); default: the tenant's. */
  chat_id?: string;
  llm_setting?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A dataset's auto-metadata configuration (RAGFlow's AutoMetadataConfig). */
export interface AutoMetadataField {
  key: string;
  type: 'string' | 'list' | 'time' | 'number';
  description?: string | null;
  enum?: string[] | null;
}

export interface AutoMetadataConfig {
  metadata: AutoMetadataField[];
  built_in_metadata: AutoMetadataField[];
}

export interface ListDocumentsParams {
  /** One document (other filters ignored); not together with `ids`. */
  id?: string;
  ids?: string[];
  /** Exact name. */
  name?: string;
  /** Case-insensitive substring of the name. */
  keywords?: string;
  /** @default 1 */
  page?: number;
  /** 0 = every document. @default 30 */
  page_size?: number;
  /** @default 'create_time' */
  orderby?: 'create_time' | 'update_time' | 'name' | 'size';
  /** @default true */
  desc?: boolean;
  /** ms since the epoch; 0 = open. */
  create_time_from?: number;
  create_time_to?: number;
  /** File extensions, without the dot. */
  suffix?: string[];
  /** Parse states (names or '0'–'4'). */
  run?: ParseStatus | ParseStatus[] | string | string[];
  types?: string[];
}

/** `document.update(...)` (reference §4). */
export interface UpdateDocumentParams {
  /** A new name (same extension). */
  name?: string;
  /** The same as `name` (the SDK's upload field). */
  display_name?: string;
  /** Switching resets the document (UNSTART, chunks removed). */
  chunk_method?: DocumentChunkMethod;
  parser_config?: ParserConfig | null;
  /** Metadata, searchable with `metadata_condition`: strings, numbers, or lists of them. */
  meta_fields?: Record<string, string | number | Array<string | number>>;
  /** 0/1 or a boolean: whether its chunks are retrieved. */
  enabled?: 0 | 1 | boolean;
  /** Read-only: accepted only when equal to the stored value (the SDK sends a document's fields back). */
  chunk_count?: number;
  token_count?: number;
  progress?: number;
}

/** `chunk.update(...)` (reference §5): what is given changes, the chunk is re-embedded. */
export interface UpdateChunkParams {
  /** Not blank; null keeps it (as every field here). */
  content?: string | null;
  important_keywords?: string[] | null;
  questions?: string[] | null;
  tag_kwd?: string[] | null;
  positions?: number[][] | null;
  available?: boolean | 0 | 1 | null;
}

/** A `metadata_condition` operator (the reference's, with its aliases). */
export type MetadataOperator =
  | '=' | '==' | 'is' | '≠' | '!=' | 'not is' | 'is not' | '>' | '<' | '≥' | '>=' | '≤' | '<='
  | 'contains' | 'not contains' | 'in' | 'not in' | 'start with' | 'starts with' | 'end with' | 'ends with' | 'empty' | 'not empty';

/** Filters documents by their `meta_fields` (reference §6). */
export interface MetadataCondition {
  /** @default 'and' */
  logic?: 'and' | 'or';
  conditions: Array<{ name: string; comparison_operator: MetadataOperator; value?: unknown }>;
}

/** `client.retrieve(...)` / `client.retrieveWithTotals(...)` (reference §6). */
export interface RetrieveParams {
  /** The datasets searched (one embedding model). */
  dataset_ids: string[];
  /** A blank question returns nothing. */
  question: string;
  /** Only chunks of these documents. */
  document_ids?: string[] | null;
  /** @default 1 */
  page?: number;
  /** @default 30 */
  page_size?: number;
  /** Chunks below this similarity are dropped (0 when vector_similarity_weight is 0). @default 0.2 */
  similarity_threshold?: number;
  /** The vector side's weight w: similarity = w·vector_similarity + (1 − w)·term_similarity. @default 0.3 */
  vector_similarity_weight?: number;
  /** Candidates per side. @default 1024 */
  top_k?: number;
  /** A rerank model, `name@factory`. */
  rerank_id?: string | null;
  /** Append keywords written by the default chat model to the question. @default false */
  keyword?: boolean;
  /** Translate the question into these languages first (the default chat model). */
  cross_languages?: string[] | null;
  metadata_condition?: MetadataCondition | null;
  /** Add `highlight` (the content with `<em>` around the question's words). @default false */
  highlight?: boolean;
  /** Accepted as RAGFlow's SDK sends them; no effect. */
  use_kg?: boolean;
  toc_enhance?: boolean;
}

/** One document's share of a retrieval's survivors. */
export interface DocAgg {
  doc_name: string;
  doc_id: string;
  count: number;
}

/** `client.retrieveWithTotals(...)`: the page with what RAGFlow's REST answer carries besides it. */
export interface RetrieveWithTotals {
  /** Chunks at or above the threshold in the result window (every page of it). */
  total: number;
  /** The page. */
  chunks: Chunk[];
  /** Survivors per document, most first (`[]` for a blank question). */
  doc_aggs: DocAgg[];
}

/** RAGFlow's `extra_body` of the OpenAI-compatible completion (`client.chatCompletion`). */
export interface OpenAIExtraBody {
  /** Add the chunks the answer drew on (`reference`) to the answer. */
  reference?: boolean;
  /** Add the documents' metadata to those chunks. */
  reference_metadata?: { include?: boolean; fields?: string[] };
  /** Retrieve only from documents whose metadata match. */
  metadata_condition?: MetadataCondition;
}

/** Token counts of a `chatCompletion` answer. */
export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
}

/** `client.chatCompletion(...)` without `stream`: one answer, shaped as OpenAI's `chat.completion`. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  /** Seconds since the epoch. */
  created: number;
  /** The `model` asked for (`'model'`: the chat's own). */
  model: string;
  usage: ChatCompletionUsage;
  choices: Array<{
    index: number;
    finish_reason: 'stop';
    logprobs: null;
    message: {
      role: 'assistant';
      content: string;
      /** With `extra_body.reference`: the chunks the answer drew on. */
      reference?: ReferenceChunk[];
      /** `[ID:n]` markers removed because they named no chunk sent to the model. */
      citations_removed?: number;
    };
  }>;
}

/** One piece of a streamed `client.chatCompletion(..., { stream: true })`, shaped as OpenAI's `chat.completion.chunk`. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{
    index: number;
    /** `'stop'` on the last chunk. */
    finish_reason: 'stop' | null;
    logprobs: null;
    delta: {
      role: 'assistant';
      /** The answer's new text (null on the last chunk, and on a chunk of reasoning). */
      content: string | null;
      reasoning_content?: string | null;
      function_call: null;
      tool_calls: null;
      /** Last chunk, with `extra_body.reference`: the chunks the answer drew on, and the whole answer. */
      reference?: ReferenceChunk[];
      final_content?: string;
      citations_removed?: number;
    };
  }>;
  /** On the last chunk only. */
  usage: ChatCompletionUsage | null;
}

/** `client.createChat(...)` sampling settings. */
export interface LlmSetting {
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
  stop?: string | string[];
}

/** A chat's `prompt_config` (reference §7); keys left out keep RAGFlow's defaults. */
export interface PromptConfig {
  /** The system prompt; `{knowledge}` stands for the retrieved chunks, `{name}` for a parameter. */
  system?: string;
  prologue?: string;
  /** Prompt variables; `knowledge` is the retrieved chunks. */
  parameters?: Array<{ key: string; optional: boolean }>;
  /** Said without calling the model when nothing is retrieved ('' = ask the model anyway). */
  empty_response?: string;
  /** Cite sources with `[ID:n]`. @default true */
  quote?: boolean;
  tts?: boolean;
  /** Rewrite a multi-turn question into one. @default true */
  refine_multiturn?: boolean;
  /** Append model-written keywords to the question. @default false */
  keyword?: boolean;
  /** Add the documents' metadata to the references. */
  reference_metadata?: { include?: boolean; fields?: string[] };
}

/** `client.createChat(...)` (reference §7). */
export interface CreateChatParams {
  name: string;
  icon?: string;
  description?: string;
  dataset_ids?: string[];
  /** `name@factory`. @default the tenant's default chat model */
  llm_id?: string;
  llm_setting?: LlmSetting;
  prompt_config?: PromptConfig;
  /** @default 0.1 */
  similarity_threshold?: number;
  /** @default 0.3 */
  vector_similarity_weight?: number;
  /** Chunks sent to the model. @default 6 */
  top_n?: number;
  /** @default 1024 */
  top_k?: number;
  rerank_id?: string;
  language?: string;
  meta_data_filter?: Record<string, unknown>;
}

/** `chat.update(...)`: PATCH semantics, `prompt_config` and `llm_setting` merged into the stored ones. */
export type UpdateChatParams = Partial<CreateChatParams>;

/** `session.update(...)`. */
export interface UpdateSessionParams {
  name: string;
}

/** What a memory keeps (reference §11). */
export type MemoryType = 'raw' | 'semantic' | 'episodic' | 'procedural';

/** `client.createMemory(...)` (reference §11). */
export interface CreateMemoryParams {
  name: string;
  memory_type: MemoryType[];
  embd_id: string;
  llm_id: string;
}

/** `memory.update(...)` (reference §11). */
export interface UpdateMemoryParams {
  name?: string;
  avatar?: string;
  description?: string;
  permissions?: 'me' | 'team';
  /** Not on a memory with messages. */
  embd_id?: string;
  llm_id?: string;
  /** Not on a memory with messages; a new default system_prompt. */
  memory_type?: MemoryType[];
  /** Bytes, (0, 10485760]; a smaller budget evicts at once. */
  memory_size?: number;
  forgetting_policy?: 'FIFO';
  /** [0, 1] */
  temperature?: number;
  system_prompt?: string;
  user_prompt?: string;
}

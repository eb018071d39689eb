/**
 * The agent runtime's shapes: what a run emits (RAGFlow's canvas events), what a component
 * implements, and what the runtime needs from the engine around it (models, retrieval, code,
 * SQL, HTTP) — injected, so src/agent knows nothing of SQLite or the Api.
 */
import type { ChatModel } from '../llm/index.js';
import type { RunCodeOptions, RunCodeResult } from './sandbox/index.js';

/** One event of a run (`data:{event, message_id, created_at, task_id, data}`); the Api adds `session_id`. */
export interface CanvasEvent {
  event: 'workflow_started' | 'node_started' | 'node_finished' | 'message' | 'message_end' | 'user_inputs' | 'workflow_finished';
  message_id: string;
  created_at: number;
  task_id: string;
  data: Record<string, unknown>;
}

/** A retrieved chunk as the canvas keeps it (RAGFlow's `chunks_format`). */
export interface CanvasChunk {
  id: string;
  content: string;
  document_id: string;
  document_name: string;
  dataset_id: string;
  image_id: string;
  positions: unknown[];
  url: string | null;
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
  doc_type: string;
  [k: string]: unknown;
}

export interface DocAgg {
  doc_name: string;
  doc_id: string;
  count: number;
}

export interface RetrieveRequest {
  dataset_ids: string[];
  question: string;
  similarity_threshold: number;
  vector_similarity_weight: number;
  top_n: number;
  top_k: number;
  rerank_id?: string;
  signal?: AbortSignal;
}

/** What the runtime calls outside itself. */
export interface RuntimeDeps {
  /** The model for an `llm_id` (empty → the tenant's default). Throws a clear error when it doesn't exist. */
  chatModel(llmId: string): ChatModel;
  /** Hybrid retrieval over datasets the tenant can read (throws for others). */
  retrieve(req: RetrieveRequest): Promise<{ chunks: CanvasChunk[]; doc_aggs: DocAgg[]; unknown?: string[] }>;
  /** Unit vectors for texts (the tenant's default embedding model): the offline Categorize. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Runs user code in the sandbox. */
  runCode(o: RunCodeOptions): Promise<RunCodeResult>;
  /** SQLite files ExeSQL may open: directories (absolute). Empty: ExeSQL is refused. */
  sqlDirs: readonly string[];
  /** URL origins Invoke may call (`['*']`: any). Empty: Invoke is refused. */
  invokeAllow: readonly string[];
  /** Saves a turn to memories (Message `memory_ids`). */
  saveToMemory?(memoryIds: string[], userInput: string, agentResponse: string): Promise<void>;
  /** The tenant (RAGFlow `sys.user_id` default). */
  tenantId: string;
  /** CodeExec limits. */
  codeTimeoutMs?: number;
  codeMemoryMb?: number;
}

/** A text produced as it streams (RAGFlow's `partial` outputs): consumed once, by a Message. */
export interface LazyText {
  readonly lazy: true;
  stream(): AsyncIterable<string>;
}

export function isLazy(v: unknown): v is LazyText {
  return !!v && typeof v === 'object' && (v as LazyText).lazy === true && typeof (v as LazyText).stream === 'function';
}

export interface RunOptions {
  query?: string;
  inputs?: Record<string, unknown>;
  user_id?: string;
  files?: unknown[];
  signal?: AbortSignal;
  /** Whole-run limit; the run is cancelled when it passes. @default 600_000 */
  timeoutMs?: number;
}

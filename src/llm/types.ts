/**
 * The one interface every chat model speaks: chats, memories (extraction) and agents call models
 * only through it. Messages, options and results are plain data, so a model can be swapped for
 * any other (an OpenAI-compatible server, the built-in extractive model, a user's own class).
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call the model asks for, as data (OpenAI's shape, arguments kept as the JSON text). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** Assistant messages that call tools. */
  tool_calls?: ToolCall[];
  /** Tool results: the call they answer. */
  tool_call_id?: string;
  name?: string;
}

/** A function the model may call (OpenAI's `tools[]` entry). */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** One retrieved passage as it was numbered in the prompt (`ID: n`); lets a model cite without parsing. */
export interface KnowledgeItem {
  /** The number the prompt gave it, cited as `[ID:n]`. */
  id: number;
  title: string;
  content: string;
  /** Its retrieval similarity, in [0, 1], when the caller knows it: a model may weigh passages by it. */
  similarity?: number;
}

/** A sentence, title, list item or table row of a passage, as `splitSentences` (src/text) gives it. */
export interface PassageSentence {
  /** The text as it reads (whitespace collapsed). */
  text: string;
  /** Prose runs on; the other kinds stand on their own line. */
  kind: 'prose' | 'line' | 'row' | 'record';
  /** The paragraph / line it came from (sentences of one unit are consecutive). */
  unit: number;
  /** `key: value` fields of a record or a labelled table row. */
  fields?: string[];
}

export interface ChatOptions {
  /** Sampling settings (RAGFlow's llm_setting keys; a provider ignores what it cannot honour). */
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
  stop?: string[];
  tools?: ToolSpec[];
  /** Ask for a JSON object answer (OpenAI `response_format: {type: 'json_object'}`). */
  json?: boolean;
  /** The passages the system prompt carries, in prompt order. */
  knowledge?: KnowledgeItem[];
  /** Text to answer with when nothing in `knowledge` fits (models that never invent use it). */
  empty_response?: string;
  signal?: AbortSignal;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatResult {
  content: string;
  /** Reasoning text, for models that stream it apart (`reasoning_content`). */
  reasoning?: string;
  tool_calls?: ToolCall[];
  usage: Usage;
  finish_reason: 'stop' | 'length' | 'tool_calls' | string;
}

/** A streamed piece: text to append, and on the last one the usage and finish reason. */
export interface ChatDelta {
  content?: string;
  reasoning?: string;
  tool_calls?: ToolCall[];
  usage?: Usage;
  finish_reason?: string;
}

export interface ChatModel {
  /** `name@factory`. */
  readonly id: string;
  /** Context window in tokens, used to fit the knowledge block and history. */
  readonly maxTokens: number;
  /**
   * What the model can do besides answering; a caller skips the steps a model cannot serve
   * (question refinement, keyword extraction, tool calls). Absent: everything.
   */
  readonly capabilities?: { readonly rewrite?: boolean; readonly keywords?: boolean; readonly tools?: boolean };
  chat(messages: ChatMessage[], options?: ChatOptions): Promise<ChatResult>;
  /** Deltas in order; breaking out of the loop aborts the request. */
  stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<ChatDelta>;
  close?(): Promise<void>;
}

export { Client, DataSet, Document, Chunk, Chat, Session, Message, Memory, Agent, AgentSession, AgentMessage } from './client/index.js';
export type { ClientOptions, ParseStatus, ParseProgress, AskOptions, ReferenceChunk, MemoryMessage, AgentAskOptions, AgentEvent, TraceEntry } from './client/index.js';
export type { ChatModel, ChatMessage, ChatOptions, ChatResult, ChatDelta, ToolCall, ToolSpec, KnowledgeItem, Usage } from './llm/index.js';
export { ApiError, RagloomError, RetCode } from './api/errors.js';
export type { ModelConfig, ModelType, Embedder } from './embed/index.js';
/** Process-wide ranking settings (feedback steps, exact vector scan): docs/retrieval.md. */
export { retrievalOptions } from './search/index.js';
export const VERSION = '0.1.0';

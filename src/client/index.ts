export { Client } from './client.js';
export type { ClientOptions } from './client.js';
export type {
  ChunkMethod, DatasetChunkMethod, DocumentChunkMethod, ParserConfig, RaptorConfig, GraphragConfig, CreateDatasetParams, UpdateDatasetParams, ListDocumentsParams, UpdateDocumentParams, UpdateChunkParams, MetadataOperator, MetadataCondition, RetrieveParams, RetrieveWithTotals, DocAgg, LlmSetting, PromptConfig, CreateChatParams, UpdateChatParams, UpdateSessionParams, MemoryType, CreateMemoryParams, UpdateMemoryParams, OpenAIExtraBody, ChatCompletion, ChatCompletionChunk, ChatCompletionUsage, AutoMetadataConfig, AutoMetadataField, SearchConfig,
} from './params.js';
export { DataSet, Document, Chunk } from './resources.js';
export type { ParseStatus, ParseProgress } from './resources.js';
export { Chat, Session, Message } from './chat.js';
export type { AskOptions, ReferenceChunk } from './chat.js';
export { Memory } from './memory.js';
export type { MemoryMessage } from './memory.js';
export { Agent } from './agent.js';
export { AgentSession, AgentMessage } from './agent-session.js';
export type { AgentAskOptions, AgentEvent, TraceEntry } from './agent-session.js';
export { ApiError } from '../api/errors.js';

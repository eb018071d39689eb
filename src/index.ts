export { Client, DataSet, Document, Chunk, Chat, Session, Message, Memory, Agent, AgentSession, AgentMessage } from './client/index.js';
export type { ClientOptions, ParseStatus, ParseProgress, AskOptions, ReferenceChunk, MemoryMessage, AgentAskOptions, AgentEvent, TraceEntry } from './client/index.js';
/** The Client's parameter types (src/client/params.ts). */
export type {
  ChunkMethod, DatasetChunkMethod, DocumentChunkMethod, ParserConfig, RaptorConfig, GraphragConfig, CreateDatasetParams, UpdateDatasetParams, ListDocumentsParams, UpdateDocumentParams, UpdateChunkParams, MetadataOperator, MetadataCondition, RetrieveParams, RetrieveWithTotals, DocAgg, LlmSetting, PromptConfig, CreateChatParams, UpdateChatParams, UpdateSessionParams, MemoryType, CreateMemoryParams, UpdateMemoryParams, OpenAIExtraBody, ChatCompletion, ChatCompletionChunk, ChatCompletionUsage, AutoMetadataConfig, AutoMetadataField, SearchConfig,
} from './client/index.js';
export type { ChatModel, ChatMessage, ChatOptions, ChatResult, ChatDelta, ToolCall, ToolSpec, KnowledgeItem, Usage } from './llm/index.js';
export { ApiError, RagloomError, RetCode } from './api/errors.js';
export type { ModelConfig, ModelType, Embedder } from './embed/index.js';
/** The ranking defaults of `new Client({ retrieval })` (feedback steps, exact vector scan): docs/retrieval.md. */
export { DEFAULT_RETRIEVAL_OPTIONS } from './search/index.js';
export type { RetrievalOptions } from './search/index.js';
export const VERSION = '0.1.0';

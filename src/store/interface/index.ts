export type { Store, StoreLocator } from './store.js';
export type { Ctx, TenantRow, LocalAccountDefaults, UserRow, NewAccount, NewApiKey, AccountStore } from './accounts.js';
export type { DatasetRow, NewDataset, DatasetChanges, DatasetListQuery, LiveDataset, DatasetStore } from './datasets.js';
export { RUN } from './documents.js';
export type {
  DocumentRow, NewFile, FileSource, FileKind, UploadTarget, DocumentListQuery, DocumentChanges, DocumentUpdate, FileBytes, ReplaceResult, DocumentStore,
} from './documents.js';
export type { ChunkRow, NewChunk, ChunkRewrite, CachedVector, ChunkStore } from './chunks.js';
export { CounterDeltas } from './counters.js';
export type { ParseOwner, ParseClaim, ParseDataset, ParseOutcomeRow, ParseLogRow, ParseLogOrder, ParseWorkStore } from './parse.js';
export type { ChatRow, SessionRow, StoredMessage, Transcript, ChatListQuery, SessionListQuery, ChatChanges, ChatStore } from './chats.js';
export { MemoryFullError } from './memories.js';
export type {
  MemoryRow, MessageRow, NewMessage, Usage, MemoryChanges, MemoryListQuery, RawMessageAdd, RawMessageResult, MessageListQuery, TaskState,
  RecentQuery, TaskRow, TaskLease, TaskClaim, TaskInput, StoreItemsResult, MemoryStore,
} from './memories.js';
export { UNRELEASED_VERSIONS_KEPT } from './agents.js';
export type {
  AgentRow, AgentVersionRow, AgentSessionRow, AgentTurnMessage, VersionSave, AgentListQuery, AgentSessionListQuery, AgentChanges,
  NewAgentSession, AgentStore,
} from './agents.js';
export type { SearchAppRow, NewSearchApp, SearchAppListQuery, SearchAppChanges, SearchAppStore } from './search-apps.js';
export { VECTOR_SOURCES, FTS_COLUMN_WEIGHTS } from './search.js';
export type {
  FeedName, FeedPosition, FeedAt, CatchUp, LogFollower, ChangeFeed, VectorRow, VectorSink, TermRow, TextTokenizer, PageChunk, FtsTable, FullTextEngine,
  SearchReader,
} from './search.js';

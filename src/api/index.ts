import { Engine, AskError, type Ctx, type EngineOptions, ParseQueue } from '../core/index.js';
import { ApiError, RetCode, exceptionError, storageError } from './errors.js';
import { PostgresStoreError } from '../store/index.js';
import { pyStr } from './pyfmt.js';
import { notJson } from './validate.js';
import * as datasets from './datasets.js';
import * as documents from './documents.js';
import { replaceDocumentContent } from './document-content.js';
import * as chunks from './chunks.js';
import * as parse from './parse.js';
import { retrieve, type RetrieveParams } from './retrieval.js';
import * as chats from './chats.js';
import { chatCompletion, openaiCompletion } from './completions.js';
import { agentCompletion } from './agent-completion.js';
import * as memories from './memories.js';
import * as identity from './identity.js';
import * as agents from './agents.js';
import * as metadata from './metadata.js';
import * as tags from './tags.js';
import * as indexes from './indexes.js';
import * as ingestion from './ingestion.js';
import * as searches from './searches.js';
import * as system from './system.js';
import * as files from './document-files.js';
import * as batch from './document-batch.js';
import { difyRetrieval } from './dify.js';
import { ExtractionQueue } from '../memory/index.js';

/** How often a node on a shared PostgreSQL looks for extraction tasks other nodes queued or left. */
const TASK_POLL_MS = 5_000;
import { chatModel, fullTextReindex } from '../core/index.js';

type P = Record<string, unknown>;
/** A path param (always a string over HTTP); another value from an in-process caller reads as Python's `str()` of it. */
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : pyStr(v));
const body = (p: P, ...drop: string[]): P => Object.fromEntries(Object.entries(p).filter(([k, v]) => !drop.includes(k) && v !== undefined));

/**
 * The operations, by name. Each takes the wire-shaped params (snake_case, as RAGFlow's REST
 * payloads) and returns the `data` RAGFlow would send; failures throw ApiError.
 */
const OPS = {
  'datasets.create': (a: Api, c: Ctx, p: P) => datasets.createDataset(a.engine, c, body(p)),
  'datasets.list': (a: Api, c: Ctx, p: P) => datasets.listDatasets(a.engine, c, body(p)),
  'datasets.update': (a: Api, c: Ctx, p: P) => datasets.updateDataset(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.delete': (a: Api, c: Ctx, p: P) => datasets.deleteDatasets(a.engine, c, body(p)),
  'documents.upload': (a: Api, c: Ctx, p: P) => documents.uploadDocuments(a.engine, c, str(p.dataset_id), p.files),
  'documents.list': (a: Api, c: Ctx, p: P) => documents.listDocuments(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.update': (a: Api, c: Ctx, p: P) => documents.updateDocument(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'documents.delete': (a: Api, c: Ctx, p: P) => documents.deleteDocuments(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.download': (a: Api, c: Ctx, p: P) => documents.downloadDocument(a.engine, c, str(p.dataset_id), str(p.document_id)),
  // ragloom: new bytes under an existing document (same id); no REST route (the embedded engine only).
  'documents.replaceContent': (a: Api, c: Ctx, p: P) => replaceDocumentContent(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'documents.parse': (a: Api, c: Ctx, p: P) => parse.parseDocuments(a.engine, a.queue, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.stopParse': (a: Api, c: Ctx, p: P) => parse.stopParsing(a.engine, a.queue, c, str(p.dataset_id), body(p, 'dataset_id')),
  'chunks.add': (a: Api, c: Ctx, p: P) => chunks.addChunk(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'chunks.list': (a: Api, c: Ctx, p: P) => chunks.listChunks(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'chunks.update': (a: Api, c: Ctx, p: P) => chunks.updateChunk(a.engine, c, str(p.dataset_id), str(p.document_id), str(p.chunk_id), body(p, 'dataset_id', 'document_id', 'chunk_id')),
  'chunks.delete': (a: Api, c: Ctx, p: P) => chunks.deleteChunks(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'retrieval': (a: Api, c: Ctx, p: P) => retrieve(a.engine, c, p as RetrieveParams),
  'chats.create': (a: Api, c: Ctx, p: P) => chats.createChat(a.engine, c, body(p)),
  'chats.list': (a: Api, c: Ctx, p: P) => chats.listChats(a.engine, c, body(p)),
  'chats.get': (a: Api, c: Ctx, p: P) => chats.getChat(a.engine, c, str(p.chat_id)),
  'chats.update': (a: Api, c: Ctx, p: P) => chats.updateChat(a.engine, c, str(p.chat_id), body(p, 'chat_id')),
  'chats.replace': (a: Api, c: Ctx, p: P) => chats.updateChat(a.engine, c, str(p.chat_id), body(p, 'chat_id'), true),
  'chats.delete': (a: Api, c: Ctx, p: P) => chats.deleteChats(a.engine, c, body(p)),
  'sessions.create': (a: Api, c: Ctx, p: P) => chats.createSession(a.engine, c, str(p.chat_id), body(p, 'chat_id')),
  'sessions.list': (a: Api, c: Ctx, p: P) => chats.listSessions(a.engine, c, str(p.chat_id), body(p, 'chat_id')),
  'sessions.get': (a: Api, c: Ctx, p: P) => chats.getSessionOp(a.engine, c, str(p.chat_id), str(p.session_id)),
  'sessions.update': (a: Api, c: Ctx, p: P) => chats.updateSession(a.engine, c, str(p.chat_id), str(p.session_id), body(p, 'chat_id', 'session_id')),
  'sessions.delete': (a: Api, c: Ctx, p: P) => chats.deleteSessions(a.engine, c, str(p.chat_id), body(p, 'chat_id')),
  'chats.completion': (a: Api, c: Ctx, p: P) => chatCompletion(a.engine, c, p),
  'openai.completion': (a: Api, c: Ctx, p: P) => openaiCompletion(a.engine, c, p),
  'agents.completion': (a: Api, c: Ctx, p: P) => agentCompletion(a.engine, c, a.memoryTasks, p),
  'memories.create': (a: Api, c: Ctx, p: P) => memories.createMemory(a.engine, c, body(p)),
  'memories.update': (a: Api, c: Ctx, p: P) => memories.updateMemory(a.engine, c, str(p.memory_id), body(p, 'memory_id')),
  'memories.list': (a: Api, c: Ctx, p: P) => memories.listMemory(a.engine, c, body(p)),
  'memories.config': (a: Api, c: Ctx, p: P) => memories.getMemoryConfig(a.engine, c, str(p.memory_id)),
  'memories.delete': (a: Api, c: Ctx, p: P) => memories.deleteMemory(a.engine, c, str(p.memory_id)),
  'memories.usage': (a: Api, c: Ctx, p: P) => memories.memoryUsage(a.engine, c, str(p.memory_id)),
  'memories.messages': (a: Api, c: Ctx, p: P) => memories.listMemoryMessages(a.engine, c, str(p.memory_id), body(p, 'memory_id')),
  'messages.add': (a: Api, c: Ctx, p: P) => memories.addMessage(a.engine, c, a.memoryTasks, body(p)),
  'messages.forget': (a: Api, c: Ctx, p: P) => memories.forgetMessage(a.engine, c, str(p.memory_id), p.message_id),
  'messages.status': (a: Api, c: Ctx, p: P) => memories.updateMessageStatus(a.engine, c, str(p.memory_id), p.message_id, p.status),
  'messages.content': (a: Api, c: Ctx, p: P) => memories.getMessageContent(a.engine, c, str(p.memory_id), p.message_id),
  'messages.recent': (a: Api, c: Ctx, p: P) => memories.getRecentMessages(a.engine, c, body(p)),
  'messages.search': (a: Api, c: Ctx, p: P) => memories.searchMessage(a.engine, c, body(p)),
  'agents.create': (a: Api, c: Ctx, p: P) => agents.createAgent(a.engine, c, body(p)),
  'agents.list': (a: Api, c: Ctx, p: P) => agents.listAgents(a.engine, c, body(p)),
  'agents.get': (a: Api, c: Ctx, p: P) => agents.getAgentOp(a.engine, c, str(p.agent_id)),
  'agents.update': (a: Api, c: Ctx, p: P) => agents.updateAgent(a.engine, c, str(p.agent_id), body(p, 'agent_id')),
  'agents.delete': (a: Api, c: Ctx, p: P) => agents.deleteAgent(a.engine, c, str(p.agent_id)),
  'agents.versions': (a: Api, c: Ctx, p: P) => agents.listVersions(a.engine, c, str(p.agent_id)),
  'agents.version': (a: Api, c: Ctx, p: P) => agents.getVersionOp(a.engine, c, str(p.agent_id), str(p.version_id)),
  'agentSessions.create': (a: Api, c: Ctx, p: P) => agents.createAgentSession(a.engine, c, str(p.agent_id), body(p, 'agent_id')),
  'agentSessions.list': (a: Api, c: Ctx, p: P) => agents.listAgentSessions(a.engine, c, str(p.agent_id), body(p, 'agent_id')),
  'agentSessions.get': (a: Api, c: Ctx, p: P) => agents.getAgentSessionOp(a.engine, c, str(p.agent_id), str(p.session_id)),
  'agentSessions.delete': (a: Api, c: Ctx, p: P) => agents.deleteAgentSessions(a.engine, c, str(p.agent_id), body(p, 'agent_id')),
  // ---- the rest of RAGFlow's REST interface (routes.ts, "more …" sections)
  'datasets.get': (a: Api, c: Ctx, p: P) => datasets.getDatasetOp(a.engine, c, str(p.dataset_id)),
  'datasets.aggregateTags': (a: Api, c: Ctx, p: P) => tags.aggregateTags(a.engine, c, body(p)),
  'datasets.flattenedMetadata': (a: Api, c: Ctx, p: P) => metadata.flattenedMetadata(a.engine, c, body(p)),
  'datasets.search': (a: Api, c: Ctx, p: P) => searches.searchDatasets(a.engine, c, body(p)),
  'datasets.ingestionSummary': (a: Api, c: Ctx, p: P) => ingestion.ingestionSummary(a.engine, c, str(p.dataset_id)),
  'datasets.ingestionLogs': (a: Api, c: Ctx, p: P) => ingestion.ingestionLogs(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.ingestionLog': (a: Api, c: Ctx, p: P) => ingestion.ingestionLog(a.engine, c, str(p.dataset_id), str(p.log_id)),
  'datasets.tags': (a: Api, c: Ctx, p: P) => tags.listTags(a.engine, c, str(p.dataset_id)),
  'datasets.deleteTags': (a: Api, c: Ctx, p: P) => tags.deleteTags(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.renameTag': (a: Api, c: Ctx, p: P) => tags.renameTag(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.graph': (a: Api, c: Ctx, p: P) => indexes.knowledgeGraph(a.engine, c, str(p.dataset_id)),
  'datasets.runIndex': (a: Api, c: Ctx, p: P) => indexes.runIndex(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.traceIndex': (a: Api, c: Ctx, p: P) => indexes.traceIndex(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.deleteIndex': (a: Api, c: Ctx, p: P) => indexes.deleteIndex(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.runEmbedding': (a: Api, c: Ctx, p: P) => indexes.runEmbedding(a.engine, a.queue, c, str(p.dataset_id)),
  'datasets.checkEmbedding': (a: Api, c: Ctx, p: P) => indexes.checkEmbedding(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'datasets.getAutoMetadata': (a: Api, c: Ctx, p: P) => metadata.getAutoMetadata(a.engine, c, str(p.dataset_id)),
  'datasets.updateAutoMetadata': (a: Api, c: Ctx, p: P) => metadata.updateAutoMetadata(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.startParsing': (a: Api, c: Ctx, p: P) => parse.startParsing(a.engine, a.queue, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.stopParsing': (a: Api, c: Ctx, p: P) => parse.stopParsingDocuments(a.engine, a.queue, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.updateMetadata': (a: Api, c: Ctx, p: P) => metadata.updateMetadata(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.metadataSummary': (a: Api, c: Ctx, p: P) => metadata.metadataSummary(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.updateMetadataConfig': (a: Api, c: Ctx, p: P) => metadata.updateDocumentMetadataConfig(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'documents.batchUpdateStatus': (a: Api, c: Ctx, p: P) => batch.batchUpdateStatus(a.engine, c, str(p.dataset_id), body(p, 'dataset_id')),
  'documents.ingest': (a: Api, c: Ctx, p: P) => batch.ingest(a.engine, a.queue, c, body(p)),
  'documents.thumbnails': (a: Api, c: Ctx, p: P) => files.thumbnails(a.engine, c, body(p)),
  'documents.image': (a: Api, _c: Ctx, p: P) => files.documentImage(a.engine, str(p.image_id)),
  'documents.artifact': (_a: Api, _c: Ctx, p: P) => files.artifact(str(p.filename)),
  'documents.preview': (a: Api, c: Ctx, p: P) => files.previewDocument(a.engine, c, str(p.document_id)),
  'documents.downloadById': (a: Api, c: Ctx, p: P) => files.downloadById(a.engine, c, str(p.document_id)),
  'chunks.get': (a: Api, c: Ctx, p: P) => chunks.getChunk(a.engine, c, str(p.dataset_id), str(p.document_id), str(p.chunk_id)),
  'chunks.switch': (a: Api, c: Ctx, p: P) => chunks.switchChunks(a.engine, c, str(p.dataset_id), str(p.document_id), body(p, 'dataset_id', 'document_id')),
  'dify.retrieval': (a: Api, c: Ctx, p: P) => difyRetrieval(a.engine, c, body(p)),
  'chats.deleteOne': (a: Api, c: Ctx, p: P) => chats.deleteChat(a.engine, c, str(p.chat_id)),
  'sessions.deleteMessage': (a: Api, c: Ctx, p: P) => chats.deleteSessionMessage(a.engine, c, str(p.chat_id), str(p.session_id), str(p.message_id)),
  'sessions.feedback': (a: Api, c: Ctx, p: P) => chats.messageFeedback(a.engine, c, str(p.chat_id), str(p.session_id), str(p.message_id), body(p, 'chat_id', 'session_id', 'message_id')),
  'chats.recommendation': (a: Api, c: Ctx, p: P) => searches.recommendation(a.engine, c, p),
  'searches.create': (a: Api, c: Ctx, p: P) => searches.createSearch(a.engine, c, body(p)),
  'searches.list': (a: Api, c: Ctx, p: P) => searches.listSearches(a.engine, c, body(p)),
  'searches.get': (a: Api, c: Ctx, p: P) => searches.getSearch(a.engine, c, body(p)),
  'searches.update': (a: Api, c: Ctx, p: P) => searches.updateSearch(a.engine, c, str(p.search_id), body(p, 'search_id')),
  'searches.delete': (a: Api, c: Ctx, p: P) => searches.deleteSearch(a.engine, c, str(p.search_id)),
  'searches.completion': (a: Api, c: Ctx, p: P) => searches.searchCompletion(a.engine, c, p),
  'searches.ask': (a: Api, c: Ctx, p: P) => searches.searchbotAsk(a.engine, c, p),
  'searches.retrievalTest': (a: Api, c: Ctx, p: P) => searches.searchbotRetrievalTest(a.engine, c, body(p)),
  'system.ping': () => system.ping(),
  'system.version': () => system.version(),
  'system.status': (a: Api) => system.status(a.engine, a.queue),
  'system.config': () => system.config(),
  'system.healthz': (a: Api) => system.healthz(a.engine),
  'system.tokens': (a: Api, c: Ctx) => identity.listTokens(a.engine, c),
  'system.newToken': (a: Api, c: Ctx) => identity.newToken(a.engine, c),
  'system.deleteToken': (a: Api, c: Ctx, p: P) => identity.deleteToken(a.engine, c, str(p.token)),
  'system.stats': (a: Api, c: Ctx, p: P) => system.stats(a.engine, c, body(p)),
  'tasks.cancel': (a: Api, c: Ctx, p: P) => ingestion.cancelTask(a.engine, a.queue, c, body(p)),
  'agentSessions.deleteOne': (a: Api, c: Ctx, p: P) => agents.deleteAgentSession(a.engine, c, str(p.agent_id), str(p.session_id)),
  'agents.tags': (a: Api, c: Ctx, p: P) => agents.listAgentTags(a.engine, c, body(p)),
  'agents.updateTags': (a: Api, c: Ctx, p: P) => agents.updateAgentTags(a.engine, c, str(p.agent_id), body(p, 'agent_id')),
  'agents.logs': (a: Api, c: Ctx, p: P) => agents.agentLogs(a.engine, c, str(p.agent_id)),
  'agents.reset': (a: Api, c: Ctx, p: P) => agents.resetAgent(a.engine, c, str(p.agent_id)),
  'agents.rerun': (a: Api, c: Ctx, p: P) => ingestion.rerunIngestion(a.engine, a.queue, c, body(p)),
  'agents.webhookLogs': (a: Api, c: Ctx, p: P) => agents.webhookLogs(a.engine, c, str(p.agent_id), body(p, 'agent_id')),
  'plugins.tools': () => system.pluginTools(),
  'langfuse.get': () => system.langfuseNone(),
  'langfuse.delete': () => system.langfuseNone(),
  'users.me': (a: Api, c: Ctx) => identity.currentUser(a.engine, c),
  'users.create': (a: Api, c: Ctx, p: P) => identity.createUser(a.engine, c, body(p)),
  'tenants.members.add': (a: Api, c: Ctx, p: P) => identity.addMember(a.engine, c, body(p)),
  'auth.verify': (a: Api, _c: Ctx, p: P) => identity.verifyApiKey(a.engine, p),
  'auth.bootstrap': (a: Api, _c: Ctx, p: P) => identity.bootstrapAdmin(a.engine, p),
} as const;

export type OpName = keyof typeof OPS;

/** The single operation layer: validation, defaults, permission checks and error codes. */
export class Api {
  readonly engine: Engine;
  readonly queue: ParseQueue;
  /** Memory extraction work (persisted; resumed when a database is opened). */
  readonly memoryTasks: ExtractionQueue;

  /**
   * Opens the database synchronously. A file that cannot be used (not a database, corrupt,
   * read-only, a missing or read-only folder, a full disk) throws an ApiError (500) naming the
   * file and the cause, and leaves the file as it was.
   */
  constructor(opts: EngineOptions, opened?: Engine) {
    try {
      this.engine = opened ?? new Engine(opts);
    } catch (e) {
      throw openError(e, opts);
    }
    const engine = this.engine;
    try {
      this.queue = new ParseQueue(engine);
      this.memoryTasks = new ExtractionQueue({
        store: engine.store,
        model: (id) => chatModel(engine, id),
        // Not through the embedding cache: extracted items are embedded once (as raw messages are).
        embed: (embdId, texts) => engine.models.embedder(embdId).embed(texts),
        isClosed: () => engine.isClosed,
        // Other processes on the database queue tasks too, and may die holding some.
        pollMs: engine.store.kind === 'postgres' ? TASK_POLL_MS : undefined,
      });
      engine.onClose(() => this.memoryTasks.close());
      // Extraction left pending by an earlier process goes on now (not through a read-only open),
      // and so does a full-text re-index (a language changed, or rows of an older analyzer).
      if (!engine.readonly) {
        this.memoryTasks.kick();
        fullTextReindex(engine).kick();
      }
    } catch (e) {
      // Damage found past the first pages: no half-open engine is left holding the file.
      void engine.close().catch(() => undefined);
      throw storageError(e, engine.store.name) ?? e;
    }
  }

  /**
   * Opens the engine on a SQLite file (`path`, as the constructor does) or a PostgreSQL database
   * (`postgres`): a database that does not exist, or cannot be reached, is an ApiError naming it.
   */
  static async open(opts: EngineOptions): Promise<Api> {
    if (opts.postgres === undefined) return new Api(opts);
    let engine: Engine;
    try {
      engine = await Engine.open(opts);
    } catch (e) {
      throw openError(e, opts);
    }
    return new Api(opts, engine);
  }

  /** Runs one operation as `ctx` (default: the local user). Always async; rejects with ApiError. */
  async call(op: OpName, params: P = {}, ctx: Ctx = this.engine.local): Promise<unknown> {
    const fn = OPS[op] as ((a: Api, c: Ctx, p: P) => unknown) | undefined;
    if (!fn) throw new TypeError(`Unknown operation "${op}"`);
    if (this.engine.isClosed) throw new ApiError(103, 'The client is closed.');
    try {
      // As RAGFlow's validate_and_parse_json_request words it (the server only ever passes objects).
      if (params !== null && params !== undefined && (typeof params !== 'object' || Array.isArray(params))) {
        throw new ApiError(101, `Invalid request payload: expected object, got ${pyTypeName(params)}`);
      }
      const bad = notJson(params);
      if (bad) throw new ApiError(101, `Invalid request payload: ${bad.path || 'the request'} ${bad.what}.`);
      const out = await fn(this, ctx, params ?? {});
      return isAsyncIterable(out) ? mapStreamErrors(out) : out;
    } catch (e) {
      throw storageError(e, this.engine.store.name) ?? exceptionError(e);
    }
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/** An engine that could not be opened, as an ApiError naming its store. */
function openError(e: unknown, opts: EngineOptions): unknown {
  if (e instanceof AskError) return new ApiError(e.code, e.message);
  if (e instanceof PostgresStoreError) return exceptionError(e);
  const where = opts.path ?? '';
  const se = storageError(e, where);
  if (se) return se;
  // A read-only open's own refusals (no store there, an older schema) name the file too.
  if (opts.readonly && e instanceof Error) return new ApiError(RetCode.SERVER_ERROR, `Database ${where}: ${e.message}`, { cause: e });
  return e;
}

function pyTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return typeof v === 'string' ? 'str' : typeof v === 'boolean' ? 'bool' : typeof v === 'bigint' ? 'int' : typeof v;
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return !!v && typeof v === 'object' && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** A streamed result fails like a call does: with an ApiError. */
async function* mapStreamErrors<T>(it: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* it;
  } catch (e) {
    throw exceptionError(e);
  }
}

export { ApiError, RetCode, RagloomError, CATALOGUE } from './errors.js';
export { RESULT_MESSAGE } from './chats.js';
export { contentText } from './completions.js';
// The server runs retrievals on threads of its own (src/search/search-pool.ts).
export { SearchPool, attachSearchPool, detachSearchPool } from '../search/index.js';

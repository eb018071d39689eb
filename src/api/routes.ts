/**
 * RAGFlow's REST interface (`/api/v1`, v0.25.6), as data: one row per route that maps an `Api`
 * operation to its HTTP method and path, where its params travel, and how the answer is wrapped.
 * The server (src/server) registers exactly these rows; a remote client builds its requests from
 * the same rows and decodes the answers with the same envelope rules, so the two cannot drift.
 *
 * Nothing here does I/O: the table, plus small pure helpers (path templates, query-string
 * coercion, request splitting, envelopes). Sources are RAGFlow's `api/apps/restful_apis/*.py`,
 * `api/apps/backward_compat.py`, `api/apps/__init__.py` and `api/utils/api_utils.py` at v0.25.6
 * (reference §1–§11); each row names the handler it follows.
 *
 * @example
 * const r = ROUTE_BY_OP['documents.list'];
 * const req = splitRequest(r, { dataset_id: id, page: 2, run: ['DONE', 'FAIL'] });
 * // req.path === `/datasets/${id}/documents`, req.query === [['page','2'],['run','DONE'],['run','FAIL']]
 */
import type { OpName } from './index.js';
import { ApiError, RetCode } from './errors.js';
import { pyRepr } from './pyfmt.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The REST prefix of every row's `path`. */
export const API_PREFIX = '/api/v1';

/**
 * How a route authenticates; the two differ only in their failure bodies (always HTTP 401), §1:
 * - `login` (RAGFlow `login_required`): missing or unknown key →
 *   `{"code":401,"message":"<Unauthorized '401: Unauthorized'>","data":null}`.
 * - `token` (RAGFlow `token_required`, used by parse / stop-parse / retrieval / agent sessions' DELETE): no header →
 *   ``{"code":0,"message":"`Authorization` can't be empty","data":null}`` (code 0!); a header of one
 *   word → `{"code":109,"message":"Please check your authorization format.","data":null}`; an
 *   unknown key → `{"code":109,"message":"Authentication error: API key is invalid!","data":null}`.
 */
export type AuthKind = 'login' | 'token';

/**
 * Where the request body goes and how it is read.
 * - `none`: ignored (GET routes; DELETE routes whose handler reads no body).
 * - `json`: RAGFlow `get_request_json`: empty body → `{}`; `application/json` parsed (bad JSON →
 *   code 100 `<BadRequest '400: Bad Request'>`; a JSON string → 100 `AttributeError(...)`; any other
 *   non-object → 100 `TypeError('JSON payload must be an object.')`); a form body → its fields
 *   (strings); anything else → 100 `TypeError('Request body is not a valid form payload.')`.
 * - `json-strict`: RAGFlow `validate_and_parse_json_request` (datasets create/update/delete,
 *   documents delete): content type must be `application/json` (else 101 `Unsupported content
 *   type: Expected application/json, got <Content-Type|None>`), bad JSON → 101 `Malformed JSON
 *   syntax: Missing commas/brackets or invalid encoding`, falsy JSON (`null`, `[]`, `0`, `""`) → `{}`,
 *   another non-object → 101 `Invalid request payload: expected object, got <list|str|int|float|bool>`.
 * - `multipart`: `multipart/form-data`; every part named `file` becomes `{display_name, blob}` in
 *   `files` (no such part → the op answers 101 `No file part!`); other fields are ignored.
 */
export type BodyKind = 'none' | 'json' | 'json-strict' | 'multipart';

/**
 * How one query-string key is turned into a param, as RAGFlow's handler reads it. Absent keys are
 * left out (the op applies its default).
 * - `str`: the first value (`request.args.get`).
 * - `int` / `float`: Python `int()` / `float()` of the first value; a value that does not parse
 *   fails the request with code 100 `ValueError("invalid literal for int() with base 10: 'x'")` /
 *   `ValueError("could not convert string to float: 'x'")`, as RAGFlow's unguarded casts do.
 * - `lax-int` / `lax-bool`: Pydantic's lax parsing (datasets list); a value that does not parse is
 *   passed on as the string, and the op reports it (`Input should be a valid integer`…).
 * - `not-false`: boolean, `value.strip().lower() != 'false'` (every `desc` except the datasets list).
 * - `is-true`: boolean, `value == 'true'` (chunk list `available`).
 * - `list`: every value (`request.args.getlist`).
 * - `list-csv`: every value; a single value containing `,` is split on it (memory routes).
 * - `ignore`: accepted and dropped.
 */
export type QueryKind = 'str' | 'int' | 'float' | 'lax-int' | 'lax-bool' | 'not-false' | 'is-true' | 'list' | 'list-csv' | 'ignore';

/** A query key: its kind, and optionally the other names its values are also read from. */
export type QueryField = QueryKind | { kind: QueryKind; from: readonly string[] };

/**
 * The success envelope (§1). Failures are always `{code, message}` plus what `errors` adds.
 * - `result` (RAGFlow `get_result`): `{code: 0, data}`; `data` left out when the op returns nothing;
 *   never a `message` (RAGFlow drops it on success, even "deleted N chunks").
 * - `json` (RAGFlow `get_json_result`): `{code: 0, message: "success", data}`; `message` is the
 *   result's `Symbol.for('ragloom.resultMessage')` when it carries one (partial deletes).
 * - `json-true`: memory routes: `{code: 0, message: true, data}` (the message is the boolean).
 * - `message`: the op's result is the message: `{code: 0, message: <result>, data: null}`
 *   (`POST /messages` → "All add to task.", forget / status → `true`).
 * - `bytes`: the document's bytes, `application/octet-stream`, `Content-Disposition: attachment`.
 * - `openai`: the op's object as it is, no envelope (OpenAI-compatible non-streamed answer).
 */
export type Envelope = 'result' | 'json' | 'json-true' | 'message' | 'bytes' | 'openai';

/** What a failure envelope carries besides `{code, message}`: no `data` key, `data: null` or `data: false`. */
export type ErrorData = 'none' | 'null' | 'false';

export interface ErrorStyle {
  /** @default 'none' */
  data?: ErrorData;
  /** Per-code exceptions, e.g. chats' `{"code":109,"message":"No authorization.","data":false}`. */
  byCode?: Readonly<Record<number, ErrorData>>;
}

export interface RouteSpec {
  /** The `Api` operation (OPS key in src/api/index.ts). */
  op: OpName;
  method: HttpMethod;
  /**
   * Path under {@link API_PREFIX}. `:name` is a path param (letters, digits, `_`); any other
   * character is literal, so `/messages/:memory_id::message_id` is `<memory_id>:<message_id>`.
   */
  path: string;
  auth: AuthKind;
  body: BodyKind;
  /** Accepted query keys and their coercion; keys not listed are ignored unless `queryRest` says. */
  query?: Readonly<Record<string, QueryField>>;
  /** Kind of the query keys not listed in `query` (only the datasets list, whose op rejects extras). */
  queryRest?: QueryKind;
  /**
   * Body keys that must be present (RAGFlow `@validate_request`): missing ones fail before the op
   * with 101 `required argument are missing: a,b; ` and `data: null`. An unreadable body counts as `{}`.
   */
  validates?: readonly string[];
  /** Path params win over body keys of the same name, except these (the body's, when non-empty, wins). */
  bodyWins?: readonly string[];
  envelope: Envelope;
  /**
   * `result` and `json`: the op returns `{data, ...extra}`; `data` is the envelope's, the rest
   * top-level (`total_datasets`; the agent sessions list's `total`).
   */
  lift?: boolean;
  /** `result` only: the op's return value is not sent (RAGFlow answers `{"code":0}`). */
  dropData?: boolean;
  /** The envelope's `data` is `{[wrap]: result}` (chunk add: `{"data": {"chunk": {...}}}`); clients unwrap it. */
  wrap?: string;
  /** When the op returns an AsyncIterable: how it is written as server-sent events (§8, §9). */
  stream?: 'native' | 'openai' | 'events';
  errors?: ErrorStyle;
  /** HTTP status of a success (business errors are HTTP 200 too, §1). */
  status: 200;
  /** The RAGFlow handler this row follows. */
  source: string;
}

const JSON_ERRORS: ErrorStyle = { data: 'none', byCode: { 109: 'false', 103: 'false' } };
const MEMORY_ERRORS: ErrorStyle = { data: 'null', byCode: { 101: 'none' } };
/** Agent routes: `get_json_result(data=False, code=101|103)` for argument and access errors, `get_data_error_result` (no data) for 102. */
const AGENT_ERRORS: ErrorStyle = { data: 'none', byCode: { 101: 'false', 103: 'false' } };
const PAGE = { page: 'int', page_size: 'int' } as const;

/**
 * Every `/api/v1` route the RAGFlow Python SDK (0.25.6) uses for datasets, documents, chunks,
 * parsing, retrieval, chat assistants, sessions, completions, memories, messages and agents; the
 * OpenAI-compatible completion; and ragloom's two identity routes.
 */
const ROUTE_LIST: RouteSpec[] = [
  // ------------------------------------------------------------------ datasets (dataset_api.py)
  { op: 'datasets.create', method: 'POST', path: '/datasets', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'dataset_api.create' },
  {
    op: 'datasets.list', method: 'GET', path: '/datasets', auth: 'login', body: 'none', envelope: 'result', lift: true, status: 200, source: 'dataset_api.list_datasets',
    query: { page: 'lax-int', page_size: 'lax-int', orderby: 'str', desc: 'lax-bool', id: 'str', name: 'str', include_parsing_status: 'lax-bool', ext: 'ignore' },
    queryRest: 'str',
  },
  { op: 'datasets.update', method: 'PUT', path: '/datasets/:dataset_id', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'dataset_api.update' },
  { op: 'datasets.delete', method: 'DELETE', path: '/datasets', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'dataset_api.delete' },

  // ------------------------------------------------------------------ documents (document_api.py)
  { op: 'documents.upload', method: 'POST', path: '/datasets/:dataset_id/documents', auth: 'login', body: 'multipart', envelope: 'result', status: 200, source: 'document_api.upload_document' },
  {
    op: 'documents.list', method: 'GET', path: '/datasets/:dataset_id/documents', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'document_api.list_docs',
    query: {
      ...PAGE, orderby: 'str', desc: 'not-false', keywords: 'str', id: 'str', name: 'str', ids: 'list', suffix: 'list', types: 'list',
      run: { kind: 'list', from: ['run[]', 'run_status', 'run_status[]'] }, create_time_from: 'int', create_time_to: 'int',
    },
  },
  { op: 'documents.update', method: 'PATCH', path: '/datasets/:dataset_id/documents/:document_id', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'document_api.update_document' },
  { op: 'documents.delete', method: 'DELETE', path: '/datasets/:dataset_id/documents', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'document_api.delete_documents' },
  { op: 'documents.download', method: 'GET', path: '/datasets/:dataset_id/documents/:document_id', auth: 'login', body: 'none', envelope: 'bytes', status: 200, source: 'document_api.download' },

  // ------------------------------------------------------------------ parsing (chunk_api.py, token_required)
  { op: 'documents.parse', method: 'POST', path: '/datasets/:dataset_id/chunks', auth: 'token', body: 'json', envelope: 'result', status: 200, source: 'chunk_api.parse' },
  { op: 'documents.stopParse', method: 'DELETE', path: '/datasets/:dataset_id/chunks', auth: 'token', body: 'json', envelope: 'result', status: 200, source: 'chunk_api.stop_parsing' },

  // ------------------------------------------------------------------ chunks (chunk_api.py)
  {
    op: 'chunks.list', method: 'GET', path: '/datasets/:dataset_id/documents/:document_id/chunks', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'chunk_api.list_chunks',
    query: { ...PAGE, keywords: 'str', id: 'str', available: 'is-true' },
  },
  { op: 'chunks.add', method: 'POST', path: '/datasets/:dataset_id/documents/:document_id/chunks', auth: 'login', body: 'json', envelope: 'result', wrap: 'chunk', status: 200, source: 'chunk_api.add_chunk' },
  { op: 'chunks.update', method: 'PATCH', path: '/datasets/:dataset_id/documents/:document_id/chunks/:chunk_id', auth: 'login', body: 'json', envelope: 'result', dropData: true, status: 200, source: 'chunk_api.update_chunk' },
  { op: 'chunks.delete', method: 'DELETE', path: '/datasets/:dataset_id/documents/:document_id/chunks', auth: 'login', body: 'json', envelope: 'result', dropData: true, status: 200, source: 'chunk_api.rm_chunk' },

  // ------------------------------------------------------------------ retrieval (chunk_api.py, token_required)
  { op: 'retrieval', method: 'POST', path: '/retrieval', auth: 'token', body: 'json', envelope: 'result', status: 200, source: 'chunk_api.retrieval_test' },

  // ------------------------------------------------------------------ chat assistants (chat_api.py)
  { op: 'chats.create', method: 'POST', path: '/chats', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.create' },
  {
    op: 'chats.list', method: 'GET', path: '/chats', auth: 'login', body: 'none', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.list_chats',
    query: { ...PAGE, orderby: 'str', desc: 'not-false', id: 'str', name: 'str', keywords: 'str', owner_ids: 'list' },
  },
  { op: 'chats.get', method: 'GET', path: '/chats/:chat_id', auth: 'login', body: 'none', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.get_chat' },
  { op: 'chats.update', method: 'PATCH', path: '/chats/:chat_id', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.patch_chat' },
  { op: 'chats.replace', method: 'PUT', path: '/chats/:chat_id', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.update_chat' },
  { op: 'chats.delete', method: 'DELETE', path: '/chats', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.bulk_delete_chats' },

  // ------------------------------------------------------------------ sessions (chat_api.py)
  { op: 'sessions.create', method: 'POST', path: '/chats/:chat_id/sessions', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.create_session' },
  {
    op: 'sessions.list', method: 'GET', path: '/chats/:chat_id/sessions', auth: 'login', body: 'none', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.list_sessions',
    query: { ...PAGE, orderby: 'str', desc: 'not-false', id: 'str', name: 'str', user_id: 'str' },
  },
  { op: 'sessions.get', method: 'GET', path: '/chats/:chat_id/sessions/:session_id', auth: 'login', body: 'none', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.get_session' },
  { op: 'sessions.update', method: 'PATCH', path: '/chats/:chat_id/sessions/:session_id', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.update_session' },
  { op: 'sessions.delete', method: 'DELETE', path: '/chats/:chat_id/sessions', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.delete_sessions' },

  // ------------------------------------------------------------------ completions (§8, §9)
  // The SDK's Session.ask posts to the legacy path; the body's chat_id, when given, wins (as in RAGFlow).
  {
    op: 'chats.completion', method: 'POST', path: '/chats/:chat_id/completions', auth: 'login', body: 'json', bodyWins: ['chat_id'], envelope: 'json', stream: 'native',
    errors: JSON_ERRORS, status: 200, source: 'backward_compat.deprecated_chat_completions → chat_api.session_completion',
  },
  { op: 'chats.completion', method: 'POST', path: '/chat/completions', auth: 'login', body: 'json', envelope: 'json', stream: 'native', errors: JSON_ERRORS, status: 200, source: 'chat_api.session_completion' },
  {
    op: 'openai.completion', method: 'POST', path: '/openai/:chat_id/chat/completions', auth: 'login', body: 'json', validates: ['model', 'messages'], envelope: 'openai', stream: 'openai',
    status: 200, source: 'openai_api.openai_chat_completions',
  },
  // Agents (§10): each canvas event as `data:{event, …}`, then `data:[DONE]`; the SDK posts here.
  {
    op: 'agents.completion', method: 'POST', path: '/agents/chat/completions', auth: 'login', body: 'json', envelope: 'result', stream: 'events',
    errors: AGENT_ERRORS, status: 200, source: 'agent_api.agent_chat_completion',
  },
  {
    op: 'agents.completion', method: 'POST', path: '/agents/:agent_id/completions', auth: 'login', body: 'json', envelope: 'result', stream: 'events',
    errors: AGENT_ERRORS, status: 200, source: 'backward_compat → agent_api.agent_chat_completion',
  },

  // ------------------------------------------------------------------ memories (memory_api.py)
  { op: 'memories.create', method: 'POST', path: '/memories', auth: 'login', body: 'json', validates: ['name', 'memory_type', 'embd_id', 'llm_id'], envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.create_memory' },
  { op: 'memories.update', method: 'PUT', path: '/memories/:memory_id', auth: 'login', body: 'json', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.update_memory' },
  { op: 'memories.delete', method: 'DELETE', path: '/memories/:memory_id', auth: 'login', body: 'none', envelope: 'json-true', dropData: true, errors: MEMORY_ERRORS, status: 200, source: 'memory_api.delete_memory' },
  {
    op: 'memories.list', method: 'GET', path: '/memories', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.list_memory',
    query: { ...PAGE, memory_type: 'str', tenant_id: 'str', owner_ids: 'str', storage_type: 'str', keywords: 'str' },
  },
  { op: 'memories.config', method: 'GET', path: '/memories/:memory_id/config', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.get_memory_config' },
  // ragloom's own: the allocator's byte usage (RAGFlow has no such route).
  { op: 'memories.usage', method: 'GET', path: '/memories/:memory_id/usage', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'ragloom: memory.usage()' },
  {
    op: 'memories.messages', method: 'GET', path: '/memories/:memory_id', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.get_memory_messages',
    query: { ...PAGE, agent_id: 'list-csv', keywords: 'str' },
  },

  // ------------------------------------------------------------------ messages (memory_api.py)
  { op: 'messages.add', method: 'POST', path: '/messages', auth: 'login', body: 'json', validates: ['memory_id', 'agent_id', 'session_id', 'user_input', 'agent_response'], envelope: 'message', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.add_message' },
  {
    op: 'messages.search', method: 'GET', path: '/messages/search', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.search_message',
    query: { memory_id: 'list-csv', query: 'str', similarity_threshold: 'float', keywords_similarity_weight: 'float', top_n: 'int', agent_id: 'str', session_id: 'str', user_id: 'str' },
  },
  {
    op: 'messages.recent', method: 'GET', path: '/messages', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.get_messages',
    query: { memory_id: 'list-csv', agent_id: 'str', session_id: 'str', limit: 'int' },
  },
  { op: 'messages.forget', method: 'DELETE', path: '/messages/:memory_id::message_id', auth: 'login', body: 'none', envelope: 'message', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.forget_message' },
  { op: 'messages.status', method: 'PUT', path: '/messages/:memory_id::message_id', auth: 'login', body: 'json', validates: ['status'], envelope: 'message', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.update_message' },
  { op: 'messages.content', method: 'GET', path: '/messages/:memory_id::message_id/content', auth: 'login', body: 'none', envelope: 'json-true', errors: MEMORY_ERRORS, status: 200, source: 'memory_api.get_message_content' },

  // ------------------------------------------------------------------ agents (agent_api.py; sessions' DELETE is bot_api.py)
  { op: 'agents.create', method: 'POST', path: '/agents', auth: 'login', body: 'json', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.create_agent' },
  {
    op: 'agents.list', method: 'GET', path: '/agents', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.list_agents',
    query: { ...PAGE, orderby: 'str', desc: 'not-false', keywords: 'str', owner_ids: 'str', canvas_category: 'str', tags: 'str' },
  },
  { op: 'agents.get', method: 'GET', path: '/agents/:agent_id', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.get_agent' },
  { op: 'agents.update', method: 'PUT', path: '/agents/:agent_id', auth: 'login', body: 'json', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.update_agent' },
  { op: 'agents.delete', method: 'DELETE', path: '/agents/:agent_id', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.delete_agent' },
  { op: 'agents.versions', method: 'GET', path: '/agents/:agent_id/versions', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.list_agent_versions' },
  { op: 'agents.version', method: 'GET', path: '/agents/:agent_id/versions/:version_id', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.get_agent_version' },
  // RAGFlow reads `user_id` and `release` from the body, else from the query string.
  {
    op: 'agentSessions.create', method: 'POST', path: '/agents/:agent_id/sessions', auth: 'login', body: 'json', envelope: 'result', errors: AGENT_ERRORS, status: 200, source: 'agent_api.create_agent_session',
    query: { user_id: 'str', release: 'str' },
  },
  // `{code, message: "success", data: [...], total}`: the op returns `{data, total}`.
  {
    op: 'agentSessions.list', method: 'GET', path: '/agents/:agent_id/sessions', auth: 'login', body: 'none', envelope: 'json', lift: true, errors: AGENT_ERRORS, status: 200, source: 'agent_api.list_agent_sessions',
    query: {
      ...PAGE, orderby: 'str', desc: 'not-false', id: 'str', user_id: 'str', keywords: 'str', dsl: 'not-false', from_date: 'str', to_date: 'str', exp_user_id: 'str',
    },
  },
  { op: 'agentSessions.get', method: 'GET', path: '/agents/:agent_id/sessions/:session_id', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.get_agent_session' },
  { op: 'agentSessions.delete', method: 'DELETE', path: '/agents/:agent_id/sessions', auth: 'token', body: 'json', envelope: 'result', errors: AGENT_ERRORS, status: 200, source: 'bot_api.delete_agent_session' },

  // ------------------------------------------------------------------ identity (ragloom; shaped like user_api / tenant_api)
  { op: 'users.create', method: 'POST', path: '/users', auth: 'login', body: 'json', validates: ['email', 'nickname'], envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'ragloom (cf. user_api.user_add)' },
  { op: 'tenants.members.add', method: 'POST', path: '/tenants/:tenant_id/members', auth: 'login', body: 'json', validates: ['user_id'], envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'ragloom (cf. tenant_api.create)' },
];

/** The table (frozen). */
export const ROUTES: readonly RouteSpec[] = Object.freeze(ROUTE_LIST);

/**
 * The route of each op. `chats.completion` has two routes: this is the SDK's
 * (`POST /chats/{chat_id}/completions`); `POST /chat/completions` takes `chat_id` in the body.
 */
export const ROUTE_BY_OP: Readonly<Partial<Record<OpName, RouteSpec>>> = Object.freeze(
  ROUTES.reduce<Partial<Record<OpName, RouteSpec>>>((m, r) => (m[r.op] ??= r, m), {}),
);

// ---------------------------------------------------------------------------- path templates

type Token = { param: string } | { lit: string };

/** `'/messages/:memory_id::message_id'` → `[{lit:'/messages/'}, {param:'memory_id'}, {lit:':'}, {param:'message_id'}]`. */
export function parseTemplate(template: string): Token[] {
  const out: Token[] = [];
  const re = /:([A-Za-z_][A-Za-z0-9_]*)/g;
  let at = 0;
  for (const m of template.matchAll(re)) {
    if (m.index! > at) out.push({ lit: template.slice(at, m.index) });
    out.push({ param: m[1]! });
    at = m.index! + m[0].length;
  }
  if (at < template.length) out.push({ lit: template.slice(at) });
  return out;
}

/** The path params a template names, in order. */
export function pathParams(template: string): string[] {
  return parseTemplate(template).flatMap((t) => ('param' in t ? [t.param] : []));
}

/** Fills a template (params URI-encoded); a missing param throws TypeError. */
export function buildPath(template: string, params: Readonly<Record<string, unknown>>): string {
  return parseTemplate(template)
    .map((t) => {
      if ('lit' in t) return t.lit;
      const v = params[t.param];
      if (v === undefined || v === null || v === '') throw new TypeError(`Missing path param "${t.param}" for ${template}`);
      return encodeURIComponent(String(v));
    })
    .join('');
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regex matching a concrete (decoded) path against a template; groups are named after the params. */
export function templateRegex(template: string): RegExp {
  const body = parseTemplate(template)
    .map((t) => ('lit' in t ? escapeRe(t.lit) : `(?<${t.param}>[^/]+?)`))
    .join('');
  return new RegExp(`^${body}/?$`);
}

const MATCHERS = ROUTES.map((r) => ({ r, re: templateRegex(r.path) }));

/**
 * The route for a method and a path under {@link API_PREFIX} (decoded), with its params; `route`
 * is undefined when the path exists with other methods only (`allowed` lists them).
 */
export function matchRoute(method: string, path: string): { route?: RouteSpec; params: Record<string, string>; allowed: HttpMethod[] } | undefined {
  let found: { route?: RouteSpec; params: Record<string, string>; allowed: HttpMethod[] } | undefined;
  for (const { r, re } of MATCHERS) {
    const m = re.exec(path);
    if (!m) continue;
    found ??= { params: {}, allowed: [] };
    found.allowed.push(r.method);
    const m2 = method === 'HEAD' ? 'GET' : method;
    if (r.method === m2 && !found.route) found = { ...found, route: r, params: { ...(m.groups ?? {}) } };
  }
  return found;
}

// ---------------------------------------------------------------------------- query strings

/** Python's `int(str)`: optional sign, digits with single `_` between them, surrounding whitespace. */
export function pyInt(s: string): number {
  const t = s.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) throw pyValueError(`invalid literal for int() with base 10: ${pyRepr(s)}`);
  return Number(t.replace(/_/g, ''));
}

/** Python's `float(str)`. */
export function pyFloat(s: string): number {
  const t = s.trim().toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(t)) return NaN;
  if (!/^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:e[+-]?\d+(?:_\d+)*)?$/.test(t)) {
    throw pyValueError(`could not convert string to float: ${pyRepr(s)}`);
  }
  return Number(t.replace(/_/g, ''));
}

/** An unguarded Python ValueError reaching RAGFlow's exception handler: code 100, `repr(e)`. */
function pyValueError(msg: string): ApiError {
  return new ApiError(RetCode.EXCEPTION_ERROR, `ValueError(${pyRepr(msg)})`);
}

const LAX_TRUE = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const LAX_FALSE = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

function coerceOne(kind: QueryKind, values: string[]): unknown {
  const first = values[0]!;
  switch (kind) {
    case 'str': return first;
    case 'int': return pyInt(first);
    case 'float': return pyFloat(first);
    case 'lax-int': return /^\s*[+-]?\d+(?:\.0*)?\s*$/.test(first) ? Math.trunc(Number(first.trim())) : first;
    case 'lax-bool': {
      const v = first.trim().toLowerCase();
      return LAX_TRUE.has(v) ? true : LAX_FALSE.has(v) ? false : first;
    }
    case 'not-false': return first.trim().toLowerCase() !== 'false';
    case 'is-true': return first === 'true';
    case 'list': return values;
    case 'list-csv': return values.length === 1 && values[0]!.includes(',') ? values[0]!.split(',') : values;
    case 'ignore': return undefined;
  }
}

/**
 * Turns query pairs (in order, repeated keys kept) into op params per the route's `query` spec.
 * Throws ApiError (code 100) where RAGFlow's own cast would raise.
 */
export function coerceQuery(route: RouteSpec, pairs: Iterable<readonly [string, string]>): Record<string, unknown> {
  const byKey = new Map<string, string[]>();
  for (const [k, v] of pairs) {
    const list = byKey.get(k);
    if (list) list.push(v);
    else byKey.set(k, [v]);
  }
  const out: Record<string, unknown> = {};
  const used = new Set<string>();
  for (const [key, field] of Object.entries(route.query ?? {})) {
    const kind = typeof field === 'string' ? field : field.kind;
    const names = typeof field === 'string' ? [key] : [key, ...field.from];
    names.forEach((n) => used.add(n));
    let values = names.flatMap((n) => byKey.get(n) ?? []);
    if (typeof field !== 'string') values = values.map((v) => v.trim()).filter(Boolean);
    if (!values.length) continue;
    const v = coerceOne(kind, values);
    if (v !== undefined) out[key] = v;
  }
  if (route.queryRest) {
    for (const [k, values] of byKey) {
      if (used.has(k)) continue;
      const v = coerceOne(route.queryRest, values);
      if (v !== undefined) out[k] = v;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------- requests (client side)

/** A file part of a multipart upload. */
export interface UploadPart {
  display_name: string;
  blob: Uint8Array;
}

export interface SplitRequest {
  method: HttpMethod;
  /** Under {@link API_PREFIX}, params filled in. */
  path: string;
  /** Query pairs (lists become repeated keys; booleans `true`/`false`). */
  query: [string, string][];
  /** The JSON body (`json` / `json-strict` routes), or undefined. */
  body?: Record<string, unknown>;
  /** Multipart file parts, field `file` (`multipart` routes). */
  files?: UploadPart[];
}

/**
 * Splits op params into an HTTP request for `route`: path params into the path, query keys of the
 * spec into the query string (None-valued keys dropped, as `requests` does), everything else into
 * the body. A remote client sends this and decodes the answer with {@link decodeEnvelope}.
 */
export function splitRequest(route: RouteSpec, params: Readonly<Record<string, unknown>>): SplitRequest {
  const inPath = new Set(pathParams(route.path));
  const path = buildPath(route.path, params);
  const query: [string, string][] = [];
  const rest: Record<string, unknown> = {};
  const qs = (v: unknown) => (typeof v === 'boolean' ? (v ? 'true' : 'false') : String(v));
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || k === 'signal') continue;
    if (inPath.has(k) && !(route.bodyWins ?? []).includes(k)) continue;
    const field = route.query?.[k] ?? (route.body === 'none' ? route.queryRest : undefined);
    if (field !== undefined && route.method === 'GET') {
      if (v === null) continue;
      for (const x of Array.isArray(v) ? v : [v]) query.push([k, qs(x)]);
    } else rest[k] = v;
  }
  const out: SplitRequest = { method: route.method, path, query };
  if (route.body === 'multipart') out.files = (Array.isArray(rest.files) ? rest.files : []) as UploadPart[];
  else if (route.body !== 'none') out.body = rest;
  return out;
}

// ---------------------------------------------------------------------------- envelopes

/** The non-enumerable message a result may carry (partial deletes), for `json` envelopes. */
export const RESULT_MESSAGE_KEY = Symbol.for('ragloom.resultMessage');

export type EnvelopeBody = Record<string, unknown>;

/** The success body of a route for an op result (not for `bytes`, `openai` or streams). */
export function successEnvelope(route: RouteSpec, result: unknown): EnvelopeBody {
  switch (route.envelope) {
    case 'result': {
      if (route.dropData || result === undefined || result === null) return { code: 0 };
      if (route.lift && typeof result === 'object') {
        const { data, ...extra } = result as Record<string, unknown>;
        return { code: 0, data, ...extra };
      }
      return { code: 0, data: route.wrap ? { [route.wrap]: result } : result };
    }
    case 'json': {
      const msg = result && typeof result === 'object' ? (result as Record<PropertyKey, unknown>)[RESULT_MESSAGE_KEY] : undefined;
      if (route.lift && result && typeof result === 'object') {
        const { data, ...extra } = result as Record<string, unknown>;
        return { code: 0, message: typeof msg === 'string' ? msg : 'success', data: data ?? null, ...extra };
      }
      return { code: 0, message: typeof msg === 'string' ? msg : 'success', data: result ?? null };
    }
    case 'json-true':
      return { code: 0, message: true, data: route.dropData ? null : (result ?? null) };
    case 'message':
      return { code: 0, message: result ?? true, data: null };
    default:
      return { code: 0, data: result ?? null };
  }
}

const DATA_VALUE: Record<Exclude<ErrorData, 'none'>, null | false> = { null: null, false: false };

/**
 * The failure body of a route for an ApiError: `{code, message}` plus `data` when the error
 * carries some (`{error_code: ...}`), when it is an unhandled exception (code 100 → `data: null`,
 * RAGFlow `server_error_response`), a missing `@validate_request` argument (`data: null`), or per
 * the route's `errors` style.
 */
export function errorEnvelope(route: RouteSpec | undefined, err: { code: number; message: string; data?: unknown }): EnvelopeBody {
  const body: EnvelopeBody = { code: err.code, message: err.message };
  if (err.data !== undefined) return { ...body, data: err.data };
  let style: ErrorData = route?.errors?.byCode?.[err.code] ?? route?.errors?.data ?? 'none';
  if (err.code === RetCode.EXCEPTION_ERROR) style = 'null';
  if (route?.validates && err.code === RetCode.ARGUMENT_ERROR && err.message.startsWith('required argument are missing')) style = 'null';
  return style === 'none' ? body : { ...body, data: DATA_VALUE[style] };
}

/**
 * The `@validate_request` check: 101 `required argument are missing: a,b; ` for the route's
 * `validates` keys absent from the body, else undefined.
 */
export function missingArguments(route: RouteSpec, body: Readonly<Record<string, unknown>>): ApiError | undefined {
  const missing = (route.validates ?? []).filter((k) => !(k in body));
  return missing.length ? new ApiError(RetCode.ARGUMENT_ERROR, `required argument are missing: ${missing.join(',')}; `) : undefined;
}

/**
 * What a client makes of a decoded JSON answer: the op's result, or the ApiError to throw.
 * (`bytes` and `openai` routes answer without an envelope on success; an envelope there is an error.)
 */
export function decodeEnvelope(route: RouteSpec, body: unknown): { ok: true; result: unknown } | { ok: false; error: ApiError } {
  const b = (body ?? {}) as Record<string, unknown>;
  const isEnvelope = typeof b.code === 'number' && ('message' in b || 'data' in b || Object.keys(b).length === 1);
  if ((route.envelope === 'openai' || route.envelope === 'bytes') && !isEnvelope) return { ok: true, result: body };
  if (typeof b.code !== 'number') return { ok: false, error: new ApiError(RetCode.EXCEPTION_ERROR, `Unexpected response: ${JSON.stringify(body).slice(0, 200)}`) };
  if (b.code !== 0) return { ok: false, error: new ApiError(b.code, String(b.message ?? ''), b.data !== undefined && b.data !== null && b.data !== false ? { data: b.data } : undefined) };
  switch (route.envelope) {
    case 'message': return { ok: true, result: b.message };
    case 'result': {
      if (route.lift) {
        const { code: _c, ...rest } = b;
        return { ok: true, result: rest };
      }
      return { ok: true, result: route.wrap && b.data && typeof b.data === 'object' ? (b.data as Record<string, unknown>)[route.wrap] : b.data };
    }
    default: {
      if (route.lift && route.envelope === 'json') {
        const { code: _c, message: _m, ...rest } = b;
        return { ok: true, result: rest };
      }
      if (typeof b.message === 'string' && b.message !== 'success' && b.data && typeof b.data === 'object') {
        Object.defineProperty(b.data, RESULT_MESSAGE_KEY, { value: b.message, enumerable: false });
      }
      return { ok: true, result: b.data };
    }
  }
}

// ---------------------------------------------------------------------------- fixed bodies (§1)

/** `login_required` failure (HTTP 401). */
export const UNAUTHORIZED_BODY = Object.freeze({ code: RetCode.UNAUTHORIZED, message: "<Unauthorized '401: Unauthorized'>", data: null });
/** `token_required` failures (HTTP 401). */
export const TOKEN_EMPTY_BODY = Object.freeze({ code: 0, message: "`Authorization` can't be empty", data: null });
export const TOKEN_FORMAT_BODY = Object.freeze({ code: RetCode.AUTHENTICATION_ERROR, message: 'Please check your authorization format.', data: null });
export const TOKEN_INVALID_BODY = Object.freeze({ code: RetCode.AUTHENTICATION_ERROR, message: 'Authentication error: API key is invalid!', data: null });

/** Unknown path (HTTP 404), RAGFlow's `not_found` handler. */
export function notFoundBody(path: string): EnvelopeBody {
  return { code: RetCode.NOT_FOUND, message: `Not Found: ${path}`, data: null, error: 'Not Found' };
}

/** A Werkzeug HTTP exception reaching RAGFlow's catch-all handler: HTTP 200, code 100, its repr. */
export function httpExceptionBody(status: 400 | 405 | 413 | 415): EnvelopeBody {
  const names = { 400: ['BadRequest', 'Bad Request'], 405: ['MethodNotAllowed', 'Method Not Allowed'], 413: ['RequestEntityTooLarge', 'Request Entity Too Large'], 415: ['UnsupportedMediaType', 'Unsupported Media Type'] } as const;
  const [cls, text] = names[status];
  return { code: RetCode.EXCEPTION_ERROR, message: `<${cls} '${status}: ${text}'>`, data: null };
}

/**
 * The bearer token of an `Authorization` header as each decorator reads it: `login` takes the
 * part after `Bearer ` (case-insensitive) or else the whole header; `token` takes the second
 * whitespace-separated word, whatever the first is.
 */
export function bearerToken(auth: AuthKind, header: string | undefined): string | undefined {
  if (!header) return undefined;
  if (auth === 'token') return header.split(/\s+/).filter(Boolean)[1];
  if (header.toLowerCase().startsWith('bearer ')) return header.trim().split(/\s+/)[1];
  return header;
}

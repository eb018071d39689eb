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
 * The prefix of RAGFlow's few routes outside `/api/v1`: backward_compat.py's `legacy_v1_manager`
 * and the web app's `llm_app.py` (`/v1/llm/*`). A row says so with `prefix`.
 */
export const LEGACY_PREFIX = '/v1';

/**
 * How a route authenticates; the two differ only in their failure bodies (always HTTP 401), §1:
 * - `login` (RAGFlow `login_required`): missing or unknown key →
 *   `{"code":401,"message":"<Unauthorized '401: Unauthorized'>","data":null}`.
 * - `token` (RAGFlow `token_required`, used by parse / stop-parse / retrieval / agent sessions' DELETE): no header →
 *   ``{"code":0,"message":"`Authorization` can't be empty","data":null}`` (code 0!); a header of one
 *   word → `{"code":109,"message":"Please check your authorization format.","data":null}`; an
 *   unknown key → `{"code":109,"message":"Authentication error: API key is invalid!","data":null}`.
 * - `none`: RAGFlow asks for no key (`/system/ping`, `/system/version`, `/system/config`,
 *   `/system/healthz`, `/documents/images/{id}`, agent webhooks); a key that is sent is ignored.
 * - `beta`: the embedded-widget routes (`/searchbots/*`, `/chatbots/*`, `/agentbots/*`), which
 *   RAGFlow checks inside the handler, after `@validate_request`, with HTTP 200 failures: not two
 *   words → 102 `Authorization is not valid!`; an unknown key → 102 `Authentication error: API key
 *   is invalid!"` (the stray quote is RAGFlow's). ragloom takes its API keys as the widget key.
 * - `apikey` (RAGFlow `apikey_required`, the Dify-compatible retrieval): failures are
 *   `{code: 403, message}` with HTTP 403 — no header `Authorization header is missing!`, one word
 *   `Please check your authorization format.`, an unknown key `API-KEY is invalid!`.
 */
export type AuthKind = 'login' | 'token' | 'none' | 'beta' | 'apikey';

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
 * - `json-args`: read as `json`, but a body that cannot be read is 101 `invalid or malformed
 *   arguments: <the Python error's text>; ` (Dify's retrieval catches the read's exceptions).
 */
export type BodyKind = 'none' | 'json' | 'json-strict' | 'json-args' | 'multipart';

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
 * - `bytes`: a file's bytes (a `Uint8Array`); its name and type ride on the result as
 *   {@link FILE_INFO_KEY} (default: `application/octet-stream`, `Content-Disposition: attachment`).
 * - `openai`: the op's object as it is, no envelope (OpenAI-compatible non-streamed answer).
 * - `raw`: the op's result as it is, no envelope: a string as `text/html` (Quart's default for a
 *   returned string: `/system/ping` → `pong`), anything else as JSON (`/system/healthz`); the HTTP
 *   status is {@link HTTP_STATUS_KEY} on the result when it carries one, else 200.
 */
export type Envelope = 'result' | 'json' | 'json-true' | 'message' | 'bytes' | 'openai' | 'raw';

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
  /**
   * Failures are sent with the HTTP status of their code (RAGFlow `build_error_result`: 403, 404,
   * 500); a code that is no HTTP error status (101) is sent as 400.
   */
  errorStatus?: 'code';
  /** Params the route itself supplies (the legacy `/run_graphrag` is the index route with `type: 'graph'`). */
  fixed?: Readonly<Record<string, unknown>>;
  /** The RAGFlow handler this row follows. */
  source: string;
  /** The path's prefix when it is not {@link API_PREFIX}. */
  prefix?: typeof LEGACY_PREFIX;
}

/**
 * A RAGFlow 0.25.6 route that needs what ragloom cannot have offline or does not keep (a speech
 * model, a knowledge-graph builder, RAGFlow's file manager, connectors to other services, …).
 * It is served all the same: after the route's own authentication it answers RAGFlow's envelope
 * with {@link NOT_SUPPORTED_CODE} and a message naming the route and why (never a bare 404 for a
 * path RAGFlow has). docs/server.md lists them.
 */
export interface UnsupportedRoute {
  method: HttpMethod;
  path: string;
  auth: AuthKind;
  /** Why ragloom does not serve it, one sentence (the message's tail). */
  why: string;
  /**
   * Body keys RAGFlow's `@validate_request` asks for first: missing ones answer its 101 (as
   * {@link RouteSpec.validates}) before the 501.
   */
  validates?: readonly string[];
  /** When set, a validated key with an empty value answers 102 with this message before the 501 (the handler's own check). */
  emptyMessage?: string;
  source: string;
  /** The path's prefix when it is not {@link API_PREFIX}. */
  prefix?: typeof LEGACY_PREFIX;
}

/** The code of an unsupported route's answer (HTTP 200, as every business error): HTTP's "Not Implemented". */
export const NOT_SUPPORTED_CODE = RetCode.NOT_SUPPORTED;

const JSON_ERRORS: ErrorStyle = { data: 'none', byCode: { 109: 'false', 103: 'false' } };
const MEMORY_ERRORS: ErrorStyle = { data: 'null', byCode: { 101: 'none' } };
/** Agent routes: `get_json_result(data=False, code=101|103)` for argument and access errors, `get_data_error_result` (no data) for 102. */
const AGENT_ERRORS: ErrorStyle = { data: 'none', byCode: { 101: 'false', 103: 'false' } };
const PAGE = { page: 'int', page_size: 'int' } as const;
/** Chunk routes that answer `get_result(data=False, …)` keep no data either (get_result drops it on failure). */
const SEARCH_ERRORS: ErrorStyle = { data: 'none', byCode: { 103: 'false', 109: 'false' } };

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
    query: { page: 'lax-int', page_size: 'lax-int', orderby: 'str', desc: 'lax-bool', id: 'str', name: 'str', include_parsing_status: 'lax-bool', ext: 'str' },
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
      metadata_condition: 'str', metadata: 'str', return_empty_metadata: 'str', type: 'str',
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
  // `{"code":0}`, or `{success_count, errors}` when ids were repeated.
  { op: 'chunks.delete', method: 'DELETE', path: '/datasets/:dataset_id/documents/:document_id/chunks', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'chunk_api.rm_chunk' },

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
    op: 'agents.completion', method: 'POST', path: '/agents/chat/completion', auth: 'login', body: 'json', envelope: 'result', stream: 'events',
    errors: AGENT_ERRORS, status: 200, source: 'agent_api.agent_chat_completion (its second path)',
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

  // ------------------------------------------------------------------ more datasets (dataset_api.py); static paths before `:dataset_id`
  { op: 'datasets.aggregateTags', method: 'GET', path: '/datasets/tags/aggregation', auth: 'login', body: 'none', envelope: 'result', query: { dataset_ids: 'str' }, status: 200, source: 'dataset_api.aggregate_tags' },
  { op: 'datasets.flattenedMetadata', method: 'GET', path: '/datasets/metadata/flattened', auth: 'login', body: 'none', envelope: 'result', query: { dataset_ids: 'str' }, status: 200, source: 'dataset_api.get_flattened_metadata' },
  { op: 'datasets.search', method: 'POST', path: '/datasets/search', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'dataset_api.search_datasets' },
  { op: 'datasets.get', method: 'GET', path: '/datasets/:dataset_id', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.get_dataset' },
  { op: 'datasets.ingestionSummary', method: 'GET', path: '/datasets/:dataset_id/ingestions/summary', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.get_ingestion_summary' },
  {
    op: 'datasets.ingestionLogs', method: 'GET', path: '/datasets/:dataset_id/ingestions', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.list_ingestion_logs',
    // page/page_size: the operation's own int() (this handler answers a ValueError 101).
    query: { page: 'str', page_size: 'str', orderby: 'str', desc: 'str', operation_status: 'list', create_date_from: 'str', create_date_to: 'str', log_type: 'str', keywords: 'str' },
  },
  { op: 'datasets.ingestionLog', method: 'GET', path: '/datasets/:dataset_id/ingestions/:log_id', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.get_ingestion_log' },
  { op: 'datasets.tags', method: 'GET', path: '/datasets/:dataset_id/tags', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.list_tags' },
  { op: 'datasets.deleteTags', method: 'DELETE', path: '/datasets/:dataset_id/tags', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'dataset_api.delete_tags' },
  { op: 'datasets.renameTag', method: 'PUT', path: '/datasets/:dataset_id/tags', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'dataset_api.rename_tag' },
  { op: 'datasets.search', method: 'POST', path: '/datasets/:dataset_id/search', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'dataset_api.search' },
  { op: 'datasets.graph', method: 'GET', path: '/datasets/:dataset_id/graph', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.get_knowledge_graph' },
  { op: 'datasets.runIndex', method: 'POST', path: '/datasets/:dataset_id/index', auth: 'login', body: 'none', envelope: 'result', query: { type: 'str' }, status: 200, source: 'dataset_api.run_index' },
  { op: 'datasets.traceIndex', method: 'GET', path: '/datasets/:dataset_id/index', auth: 'login', body: 'none', envelope: 'result', query: { type: 'str' }, status: 200, source: 'dataset_api.trace_index' },
  { op: 'datasets.deleteIndex', method: 'DELETE', path: '/datasets/:dataset_id/index', auth: 'login', body: 'none', envelope: 'result', query: { type: 'str', wipe: 'str' }, status: 200, source: 'dataset_api.delete_index' },
  { op: 'datasets.runEmbedding', method: 'POST', path: '/datasets/:dataset_id/embedding', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.run_embedding' },
  { op: 'datasets.checkEmbedding', method: 'POST', path: '/datasets/:dataset_id/embedding/check', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'dataset_api.check_embedding' },
  { op: 'datasets.getAutoMetadata', method: 'GET', path: '/datasets/:dataset_id/metadata/config', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'dataset_api.get_auto_metadata' },
  { op: 'datasets.updateAutoMetadata', method: 'PUT', path: '/datasets/:dataset_id/metadata/config', auth: 'login', body: 'json-strict', envelope: 'result', status: 200, source: 'dataset_api.update_auto_metadata' },
  // Legacy index routes (backward_compat.py): `_index_result` answers with get_json_result.
  { op: 'datasets.graph', method: 'GET', path: '/datasets/:dataset_id/knowledge_graph', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'backward_compat.deprecated_get_knowledge_graph' },
  { op: 'datasets.deleteIndex', method: 'DELETE', path: '/datasets/:dataset_id/knowledge_graph', auth: 'login', body: 'none', envelope: 'result', fixed: { type: 'graph' }, status: 200, source: 'backward_compat.deprecated_delete_knowledge_graph → DELETE /datasets/{id}/graph' },
  { op: 'datasets.runIndex', method: 'POST', path: '/datasets/:dataset_id/run_graphrag', auth: 'login', body: 'none', envelope: 'json', fixed: { type: 'graph' }, status: 200, source: 'backward_compat.deprecated_run_graphrag' },
  { op: 'datasets.traceIndex', method: 'GET', path: '/datasets/:dataset_id/trace_graphrag', auth: 'login', body: 'none', envelope: 'json', fixed: { type: 'graph' }, status: 200, source: 'backward_compat.deprecated_trace_graphrag' },
  { op: 'datasets.runIndex', method: 'POST', path: '/datasets/:dataset_id/run_raptor', auth: 'login', body: 'none', envelope: 'json', fixed: { type: 'raptor' }, status: 200, source: 'backward_compat.deprecated_run_raptor' },
  { op: 'datasets.traceIndex', method: 'GET', path: '/datasets/:dataset_id/trace_raptor', auth: 'login', body: 'none', envelope: 'json', fixed: { type: 'raptor' }, status: 200, source: 'backward_compat.deprecated_trace_raptor' },
  // `DELETE /datasets/{id}/{index_type}` (graph, raptor, mindmap): every more specific DELETE above wins.
  { op: 'datasets.deleteIndex', method: 'DELETE', path: '/datasets/:dataset_id/:index_type', auth: 'login', body: 'none', envelope: 'result', query: { wipe: 'str' }, status: 200, source: 'dataset_api.delete_index' },

  // ------------------------------------------------------------------ more documents (document_api.py)
  { op: 'documents.startParsing', method: 'POST', path: '/datasets/:dataset_id/documents/parse', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'document_api.parse_documents' },
  { op: 'documents.stopParsing', method: 'POST', path: '/datasets/:dataset_id/documents/stop', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'document_api.stop_parse_documents' },
  { op: 'documents.updateMetadata', method: 'PATCH', path: '/datasets/:dataset_id/documents/metadatas', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'document_api.update_metadata' },
  { op: 'documents.updateMetadata', method: 'POST', path: '/datasets/:dataset_id/metadata/update', auth: 'login', body: 'json', envelope: 'result', fixed: { _route: 'metadata/update' }, status: 200, source: 'document_api.metadata_batch_update' },
  { op: 'documents.metadataSummary', method: 'GET', path: '/datasets/:dataset_id/metadata/summary', auth: 'login', body: 'none', envelope: 'result', query: { doc_ids: 'str' }, status: 200, source: 'document_api.metadata_summary' },
  { op: 'documents.updateMetadataConfig', method: 'PUT', path: '/datasets/:dataset_id/documents/:document_id/metadata/config', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'document_api.update_metadata_config' },
  {
    op: 'documents.batchUpdateStatus', method: 'POST', path: '/datasets/:dataset_id/documents/batch-update-status', auth: 'login', body: 'json', envelope: 'json', errors: { data: 'none', byCode: { 500: 'none' } },
    status: 200, source: 'document_api.batch_update_document_status',
  },
  { op: 'documents.update', method: 'PUT', path: '/datasets/:dataset_id/documents/:document_id', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'backward_compat.deprecated_update_document' },
  // RAGFlow asks no key here; ragloom asks one (the ids would name another tenant's documents).
  { op: 'documents.thumbnails', method: 'GET', path: '/thumbnails', auth: 'login', body: 'none', envelope: 'json', query: { doc_ids: 'list' }, errors: { data: 'none', byCode: { 101: 'false' } }, status: 200, source: 'document_api.list_thumbnails' },
  { op: 'documents.ingest', method: 'POST', path: '/documents/ingest', auth: 'login', body: 'json', envelope: 'json', status: 200, source: 'document_api.ingest' },
  { op: 'documents.image', method: 'GET', path: '/documents/images/:image_id', auth: 'none', body: 'none', envelope: 'bytes', status: 200, source: 'document_api.get_document_image' },
  { op: 'documents.artifact', method: 'GET', path: '/documents/artifact/:filename', auth: 'login', body: 'none', envelope: 'bytes', status: 200, source: 'document_api.get_artifact' },
  { op: 'documents.preview', method: 'GET', path: '/documents/:document_id/preview', auth: 'login', body: 'none', envelope: 'bytes', status: 200, source: 'document_api.get' },
  { op: 'documents.preview', method: 'GET', path: '/document/get/:document_id', auth: 'login', body: 'none', envelope: 'bytes', status: 200, source: 'backward_compat.deprecated_document_get' },
  { op: 'documents.downloadById', method: 'GET', path: '/documents/:document_id', auth: 'login', body: 'none', envelope: 'bytes', status: 200, source: 'document_api.download_document' },

  // ------------------------------------------------------------------ more chunks (chunk_api.py)
  { op: 'chunks.get', method: 'GET', path: '/datasets/:dataset_id/documents/:document_id/chunks/:chunk_id', auth: 'login', body: 'none', envelope: 'result', status: 200, source: 'chunk_api.get_chunk' },
  { op: 'chunks.switch', method: 'PATCH', path: '/datasets/:dataset_id/documents/:document_id/chunks', auth: 'login', body: 'json', envelope: 'result', status: 200, source: 'chunk_api.switch_chunks' },
  { op: 'chunks.update', method: 'PUT', path: '/datasets/:dataset_id/documents/:document_id/chunks/:chunk_id', auth: 'login', body: 'json', envelope: 'result', dropData: true, status: 200, source: 'backward_compat.deprecated_update_chunk' },

  // ------------------------------------------------------------------ Dify's external knowledge API (dify_retrieval_api.py)
  { op: 'dify.retrieval', method: 'POST', path: '/dify/retrieval', auth: 'apikey', body: 'json-args', envelope: 'raw', errorStatus: 'code', status: 200, source: 'dify_retrieval_api.retrieval' },
  {
    op: 'dify.retrieval', method: 'GET', path: '/dify/retrieval', auth: 'apikey', body: 'none', envelope: 'raw', errorStatus: 'code', fixed: { _query: true }, status: 200, source: 'dify_retrieval_api.retrieval',
    query: { knowledge_id: 'str', query: 'str', use_kg: 'str', top_k: 'str', score_threshold: 'str' },
  },

  // ------------------------------------------------------------------ more chats and sessions (chat_api.py)
  { op: 'chats.deleteOne', method: 'DELETE', path: '/chats/:chat_id', auth: 'login', body: 'none', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.delete_chat' },
  { op: 'sessions.update', method: 'PUT', path: '/chats/:chat_id/sessions/:session_id', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'backward_compat.deprecated_update_session' },
  { op: 'sessions.deleteMessage', method: 'DELETE', path: '/chats/:chat_id/sessions/:session_id/messages/:message_id', auth: 'login', body: 'none', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.delete_session_message' },
  { op: 'sessions.feedback', method: 'PUT', path: '/chats/:chat_id/sessions/:session_id/messages/:message_id/feedback', auth: 'login', body: 'json', envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'chat_api.update_message_feedback' },
  { op: 'chats.recommendation', method: 'POST', path: '/chat/recommendation', auth: 'login', body: 'json', validates: ['question'], envelope: 'json', status: 200, source: 'chat_api.recommendation' },
  { op: 'chats.recommendation', method: 'POST', path: '/sessions/related_questions', auth: 'login', body: 'json', validates: ['question'], envelope: 'json', status: 200, source: 'backward_compat.deprecated_related_questions' },
  {
    op: 'openai.completion', method: 'POST', path: '/chats_openai/:chat_id/chat/completions', auth: 'login', body: 'json', validates: ['model', 'messages'], envelope: 'openai', stream: 'openai',
    status: 200, source: 'backward_compat.deprecated_openai_chat_completions',
  },

  // ------------------------------------------------------------------ search apps (search_api.py)
  { op: 'searches.create', method: 'POST', path: '/searches', auth: 'login', body: 'json', validates: ['name'], envelope: 'json', status: 200, source: 'search_api.create' },
  {
    op: 'searches.list', method: 'GET', path: '/searches', auth: 'login', body: 'none', envelope: 'json', errors: SEARCH_ERRORS, status: 200, source: 'search_api.list_searches',
    query: { ...PAGE, keywords: 'str', orderby: 'str', desc: 'not-false', owner_ids: 'list' },
  },
  { op: 'searches.get', method: 'GET', path: '/searches/:search_id', auth: 'login', body: 'none', envelope: 'json', errors: SEARCH_ERRORS, status: 200, source: 'search_api.detail' },
  { op: 'searches.update', method: 'PUT', path: '/searches/:search_id', auth: 'login', body: 'json', validates: ['name', 'search_config'], envelope: 'json', errors: { data: 'none', byCode: { 109: 'false', 102: 'none' } }, status: 200, source: 'search_api.update' },
  { op: 'searches.delete', method: 'DELETE', path: '/searches/:search_id', auth: 'login', body: 'none', envelope: 'json', errors: SEARCH_ERRORS, status: 200, source: 'search_api.delete_search' },
  { op: 'searches.completion', method: 'POST', path: '/searches/:search_id/completions', auth: 'login', body: 'json', validates: ['question'], envelope: 'json', stream: 'native', errors: SEARCH_ERRORS, status: 200, source: 'search_api.completion' },
  { op: 'searches.completion', method: 'POST', path: '/searches/:search_id/completion', auth: 'login', body: 'json', validates: ['question'], envelope: 'json', stream: 'native', errors: SEARCH_ERRORS, status: 200, source: 'search_api.completion' },
  // The embedded search widget (bot_api.py): the same operations behind a widget key.
  { op: 'searches.ask', method: 'POST', path: '/searchbots/ask', auth: 'beta', body: 'json', validates: ['question', 'kb_ids'], envelope: 'json', stream: 'native', status: 200, source: 'bot_api.ask_about_embedded' },
  { op: 'searches.retrievalTest', method: 'POST', path: '/searchbots/retrieval_test', auth: 'beta', body: 'json', validates: ['kb_id', 'question'], envelope: 'json', status: 200, source: 'bot_api.retrieval_test_embedded' },
  { op: 'chats.recommendation', method: 'POST', path: '/searchbots/related_questions', auth: 'beta', body: 'json', validates: ['question'], envelope: 'json', status: 200, source: 'bot_api.related_questions_embedded' },
  { op: 'searches.get', method: 'GET', path: '/searchbots/detail', auth: 'beta', body: 'none', envelope: 'json', errors: SEARCH_ERRORS, query: { search_id: 'str' }, status: 200, source: 'bot_api.detail_share_embedded' },

  // ------------------------------------------------------------------ system (system_api.py, stats_api.py)
  { op: 'system.ping', method: 'GET', path: '/system/ping', auth: 'none', body: 'none', envelope: 'raw', status: 200, source: 'system_api.ping' },
  { op: 'system.version', method: 'GET', path: '/system/version', auth: 'none', body: 'none', envelope: 'json', status: 200, source: 'system_api.version' },
  { op: 'system.status', method: 'GET', path: '/system/status', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'system_api.status' },
  { op: 'system.config', method: 'GET', path: '/system/config', auth: 'none', body: 'none', envelope: 'json', status: 200, source: 'system_api.get_config' },
  { op: 'system.healthz', method: 'GET', path: '/system/healthz', auth: 'none', body: 'none', envelope: 'raw', status: 200, source: 'system_api.healthz' },
  { op: 'system.healthz', method: 'GET', path: '/system/healthz', prefix: LEGACY_PREFIX, auth: 'none', body: 'none', envelope: 'raw', status: 200, source: 'backward_compat.deprecated_system_healthz' },
  { op: 'system.tokens', method: 'GET', path: '/system/tokens', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'system_api.token_list' },
  { op: 'system.newToken', method: 'POST', path: '/system/tokens', auth: 'login', body: 'none', envelope: 'json', query: { name: 'str' }, status: 200, source: 'system_api.new_token' },
  { op: 'system.deleteToken', method: 'DELETE', path: '/system/tokens/:token', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'system_api.rm' },
  { op: 'system.stats', method: 'GET', path: '/system/stats', auth: 'login', body: 'none', envelope: 'json', query: { from_date: 'str', to_date: 'str', canvas_id: 'str' }, status: 200, source: 'stats_api.stats' },

  // ------------------------------------------------------------------ tasks: the parse queue (task_api.py)
  { op: 'tasks.cancel', method: 'POST', path: '/tasks/:task_id/cancel', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'task_api.cancel_task' },
  { op: 'tasks.cancel', method: 'PATCH', path: '/tasks/:task_id', auth: 'login', body: 'json', validates: ['action'], envelope: 'json', status: 200, source: 'task_api.patch_task' },

  // ------------------------------------------------------------------ more agents (agent_api.py)
  { op: 'agentSessions.deleteOne', method: 'DELETE', path: '/agents/:agent_id/sessions/:session_id', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.delete_agent_session_item' },
  { op: 'agents.tags', method: 'GET', path: '/agents/tags', auth: 'login', body: 'none', envelope: 'json', query: { canvas_category: 'str' }, status: 200, source: 'agent_api.list_agent_tags' },
  { op: 'agents.updateTags', method: 'PUT', path: '/agents/:agent_id/tags', auth: 'login', body: 'json', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.update_agent_tags' },
  { op: 'agents.logs', method: 'GET', path: '/agents/:agent_id/logs/:message_id', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.get_agent_logs' },
  { op: 'agents.reset', method: 'POST', path: '/agents/:agent_id/reset', auth: 'login', body: 'none', envelope: 'json', errors: AGENT_ERRORS, status: 200, source: 'agent_api.reset_agent' },
  { op: 'agents.rerun', method: 'POST', path: '/agents/rerun', auth: 'login', body: 'json', validates: ['id', 'dsl', 'component_id'], envelope: 'json', status: 200, source: 'agent_api.rerun_agent' },
  {
    op: 'agents.webhookLogs', method: 'GET', path: '/agents/:agent_id/webhook/logs', auth: 'login', body: 'none', envelope: 'json', query: { since_ts: 'str', webhook_id: 'str' },
    status: 200, source: 'agent_api.webhook_trace',
  },

  // ------------------------------------------------------------------ plugins, Langfuse (plugin_api.py, langfuse_api.py)
  { op: 'plugins.tools', method: 'GET', path: '/plugin/tools', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'plugin_api.llm_tools' },
  { op: 'langfuse.get', method: 'GET', path: '/langfuse/api-key', auth: 'login', body: 'none', envelope: 'json', lift: true, status: 200, source: 'langfuse_api.get_api_key' },
  { op: 'langfuse.delete', method: 'DELETE', path: '/langfuse/api-key', auth: 'login', body: 'none', envelope: 'json', lift: true, status: 200, source: 'langfuse_api.delete_api_key' },

  // ------------------------------------------------------------------ the caller (user_api.py)
  { op: 'users.me', method: 'GET', path: '/users/me', auth: 'login', body: 'none', envelope: 'json', status: 200, source: 'user_api.user_profile' },

  // ------------------------------------------------------------------ identity (ragloom; shaped like user_api / tenant_api)
  { op: 'users.create', method: 'POST', path: '/users', auth: 'login', body: 'json', validates: ['email', 'nickname'], envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'ragloom (cf. user_api.user_add)' },
  { op: 'tenants.members.add', method: 'POST', path: '/tenants/:tenant_id/members', auth: 'login', body: 'json', validates: ['user_id'], envelope: 'json', errors: JSON_ERRORS, status: 200, source: 'ragloom (cf. tenant_api.create)' },
];


// ---------------------------------------------------------------------------- routes ragloom does not serve

const FILES = "RAGFlow's file manager (folders of files outside datasets) has no counterpart in ragloom: upload files into a dataset instead";
const CONNECTORS = 'ragloom syncs no external data sources (connectors reach other services); upload the files into a dataset';
const MCP = 'ragloom keeps no MCP server registry: agents reach tools that the embedding program configures';
const TENANTS = 'ragloom has no invitations: add members with POST /api/v1/tenants/{tenant_id}/members';
const LOGIN = 'ragloom authenticates API keys only (no passwords, sessions or OAuth); keys are issued by `ragloom serve` and POST /api/v1/users';
const WIDGET = "ragloom's embedded widgets stop at search (/searchbots); use the chat and agent completion routes with an API key";
const WEBHOOK = 'ragloom runs no agents on incoming webhooks; call POST /api/v1/agents/chat/completions';
const LLM_SETTINGS = "the web app's model settings have no counterpart: ragloom's models are configured by the embedding program (Client registerModel) or `ragloom serve` options (models, default_chat_model, default_embedding_model)";
const ATTACH = "ragloom keeps no agent attachments; a dataset's files are read with GET /api/v1/documents/{document_id}";

/** llm_app.py's `@validate_request` keys. */
const LLM_VALIDATES: Readonly<Record<string, readonly string[]>> = {
  '/set_api_key': ['llm_factory', 'api_key'], '/add_llm': ['llm_factory'], '/delete_llm': ['llm_factory', 'llm_name'],
  '/enable_llm': ['llm_factory', 'llm_name'], '/delete_factory': ['llm_factory'],
};

/** Every other `/api/v1` route of RAGFlow 0.25.6 (restful_apis/*.py and backward_compat.py). */
const UNSUPPORTED_LIST: UnsupportedRoute[] = [
  // chat_api.py
  { method: 'POST', path: '/chat/audio/speech', auth: 'login', why: 'text to speech needs a speech model, and ragloom has none', source: 'chat_api.tts' },
  { method: 'POST', path: '/chat/audio/transcription', auth: 'login', why: 'transcription needs a speech-to-text model, and ragloom has none', source: 'chat_api.transcription' },
  { method: 'POST', path: '/chat/mindmap', auth: 'login', why: 'ragloom builds no mind maps (they need a generative model drawing one from the retrieved chunks)', validates: ['question', 'kb_ids'], source: 'chat_api.mindmap' },
  { method: 'POST', path: '/searchbots/mindmap', auth: 'beta', why: 'ragloom builds no mind maps (they need a generative model drawing one from the retrieved chunks)', validates: ['question', 'kb_ids'], source: 'bot_api.mindmap' },
  // bot_api.py: chat and agent widgets
  { method: 'POST', path: '/chatbots/:dialog_id/completions', auth: 'beta', why: WIDGET, source: 'bot_api.chatbot_completions' },
  { method: 'GET', path: '/chatbots/:dialog_id/info', auth: 'beta', why: WIDGET, source: 'bot_api.chatbots_inputs' },
  { method: 'POST', path: '/agentbots/:agent_id/completions', auth: 'beta', why: WIDGET, source: 'bot_api.agent_bot_completions' },
  { method: 'GET', path: '/agentbots/:agent_id/inputs', auth: 'beta', why: WIDGET, source: 'bot_api.begin_inputs' },
  // agent_api.py
  { method: 'GET', path: '/agents/download', auth: 'login', why: ATTACH, source: 'agent_api.download_agent_file' },
  { method: 'GET', path: '/agents/templates', auth: 'login', why: "ragloom ships no agent templates (RAGFlow's are web-app examples tied to its own tools)", source: 'agent_api.list_agent_template' },
  { method: 'GET', path: '/agents/prompts', auth: 'login', why: "ragloom's Agent component does not plan with RAGFlow's task-analysis and reflection prompts", source: 'agent_api.prompts' },
  { method: 'POST', path: '/agents/:agent_id/upload', auth: 'login', why: ATTACH, source: 'agent_api.upload_agent_file' },
  { method: 'GET', path: '/agents/:agent_id/components/:component_id/input-form', auth: 'login', why: "ragloom runs whole canvases only (the web editor's per-component forms are not served)", source: 'agent_api.get_agent_component_input_form' },
  { method: 'POST', path: '/agents/:agent_id/components/:component_id/debug', auth: 'login', why: "ragloom runs whole canvases only (the web editor's per-component debugging is not served)", validates: ['params'], source: 'agent_api.debug_agent_component' },
  {
    method: 'POST', path: '/agents/test_db_connection', auth: 'login', why: 'ragloom connects to no database servers (ExeSQL reads SQLite files the embedding program allows)',
    validates: ['db_type', 'database', 'username', 'host', 'port', 'password'], source: 'agent_api.test_db_connection',
  },
  ...(['POST', 'GET', 'PUT', 'PATCH', 'DELETE'] as const).flatMap((method): UnsupportedRoute[] => [
    { method, path: '/agents/:agent_id/webhook', auth: 'none', why: WEBHOOK, source: 'agent_api.webhook' },
    { method, path: '/agents/:agent_id/webhook/test', auth: 'none', why: WEBHOOK, source: 'agent_api.webhook' },
  ]),
  { method: 'GET', path: '/agents/attachments/:attachment_id/download', auth: 'login', why: ATTACH, source: 'agent_api.download_attachment' },
  { method: 'POST', path: '/agents_openai/:agent_id/chat/completions', auth: 'login', why: "ragloom's agents answer in RAGFlow's event stream only; call POST /api/v1/agents/chat/completions", source: 'backward_compat.deprecated_agents_openai_chat_completions' },
  { method: 'GET', path: '/document/download/:document_id', auth: 'login', why: ATTACH, source: 'backward_compat.deprecated_document_download' },
  { method: 'GET', path: '/document/download/:attachment_id', prefix: LEGACY_PREFIX, auth: 'login', why: ATTACH, source: 'backward_compat.document_download_v1' },
  // document_api.py
  { method: 'POST', path: '/documents/upload', auth: 'login', why: `${FILES} (chat attachments are not kept either)`, source: 'document_api.upload_info' },
  { method: 'POST', path: '/file/upload_info', auth: 'login', why: `${FILES} (chat attachments are not kept either)`, source: 'backward_compat.deprecated_file_upload_info' },
  // file_api.py, file2document_api.py and their legacy /file/* paths
  { method: 'POST', path: '/files', auth: 'login', why: FILES, source: 'file_api.create_or_upload' },
  { method: 'GET', path: '/files', auth: 'login', why: FILES, source: 'file_api.list_files' },
  { method: 'DELETE', path: '/files', auth: 'login', why: FILES, source: 'file_api.delete' },
  { method: 'POST', path: '/files/move', auth: 'login', why: FILES, source: 'file_api.move' },
  { method: 'POST', path: '/files/link-to-datasets', auth: 'login', why: FILES, validates: ['file_ids', 'kb_ids'], source: 'file2document_api.convert' },
  { method: 'GET', path: '/files/:file_id', auth: 'login', why: FILES, source: 'file_api.download' },
  { method: 'GET', path: '/files/:file_id/parent', auth: 'login', why: FILES, source: 'file_api.parent_folder' },
  { method: 'GET', path: '/files/:file_id/ancestors', auth: 'login', why: FILES, source: 'file_api.ancestors' },
  { method: 'GET', path: '/file/get/:file_id', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_get' },
  { method: 'GET', path: '/file/list', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_list' },
  { method: 'GET', path: '/file/all_parent_folder', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_all_parent_folder' },
  { method: 'GET', path: '/file/parent_folder', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_parent_folder' },
  { method: 'GET', path: '/file/root_folder', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_root_folder' },
  { method: 'POST', path: '/file/create', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_create' },
  { method: 'POST', path: '/file/upload', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_upload' },
  { method: 'POST', path: '/file/convert', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_convert' },
  { method: 'POST', path: '/file/mv', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_mv' },
  { method: 'POST', path: '/file/rename', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_rename' },
  { method: 'POST', path: '/file/rm', auth: 'login', why: FILES, source: 'backward_compat.deprecated_file_rm' },
  // connector_api.py
  { method: 'POST', path: '/connectors', auth: 'login', why: CONNECTORS, source: 'connector_api.create_connector' },
  { method: 'GET', path: '/connectors', auth: 'login', why: CONNECTORS, source: 'connector_api.list_connector' },
  { method: 'GET', path: '/connectors/:connector_id', auth: 'login', why: CONNECTORS, source: 'connector_api.get_connector' },
  { method: 'PATCH', path: '/connectors/:connector_id', auth: 'login', why: CONNECTORS, source: 'connector_api.update_connector' },
  { method: 'DELETE', path: '/connectors/:connector_id', auth: 'login', why: CONNECTORS, source: 'connector_api.rm_connector' },
  { method: 'GET', path: '/connectors/:connector_id/logs', auth: 'login', why: CONNECTORS, source: 'connector_api.list_logs' },
  { method: 'POST', path: '/connectors/:connector_id/rebuild', auth: 'login', why: CONNECTORS, source: 'connector_api.rebuild' },
  { method: 'POST', path: '/connectors/:connector_id/test', auth: 'login', why: CONNECTORS, source: 'connector_api.test_connector' },
  { method: 'POST', path: '/connectors/google/oauth/web/start', auth: 'login', why: CONNECTORS, validates: ['credentials'], source: 'connector_api.start_google_web_oauth' },
  { method: 'GET', path: '/connectors/gmail/oauth/web/callback', auth: 'none', why: CONNECTORS, source: 'connector_api.google_gmail_web_oauth_callback' },
  { method: 'GET', path: '/connectors/google-drive/oauth/web/callback', auth: 'none', why: CONNECTORS, source: 'connector_api.google_drive_web_oauth_callback' },
  { method: 'POST', path: '/connectors/google/oauth/web/result', auth: 'login', why: CONNECTORS, validates: ['flow_id'], source: 'connector_api.poll_google_web_result' },
  { method: 'POST', path: '/connectors/box/oauth/web/start', auth: 'login', why: CONNECTORS, source: 'connector_api.start_box_web_oauth' },
  { method: 'GET', path: '/connectors/box/oauth/web/callback', auth: 'none', why: CONNECTORS, source: 'connector_api.box_web_oauth_callback' },
  { method: 'POST', path: '/connectors/box/oauth/web/result', auth: 'login', why: CONNECTORS, validates: ['flow_id'], source: 'connector_api.poll_box_web_result' },
  // mcp_api.py
  { method: 'GET', path: '/mcp/servers', auth: 'login', why: MCP, source: 'mcp_api.list_mcp' },
  { method: 'POST', path: '/mcp/servers', auth: 'login', why: MCP, validates: ['name', 'url', 'server_type'], source: 'mcp_api.create' },
  { method: 'POST', path: '/mcp/servers/import', auth: 'login', why: MCP, validates: ['mcpServers'], source: 'mcp_api.import_multiple' },
  { method: 'GET', path: '/mcp/servers/:mcp_id', auth: 'login', why: MCP, source: 'mcp_api.detail' },
  { method: 'PUT', path: '/mcp/servers/:mcp_id', auth: 'login', why: MCP, source: 'mcp_api.update' },
  { method: 'DELETE', path: '/mcp/servers/:mcp_id', auth: 'login', why: MCP, source: 'mcp_api.rm' },
  { method: 'POST', path: '/mcp/servers/:mcp_id/test', auth: 'login', why: MCP, validates: ['url', 'server_type'], source: 'mcp_api.test_mcp' },
  // langfuse_api.py: saving keys checks them with Langfuse, a service ragloom does not reach
  ...(['POST', 'PUT'] as const).map((method): UnsupportedRoute => ({
    method, path: '/langfuse/api-key', auth: 'login', why: 'ragloom sends no traces to Langfuse (saving a key checks it with the Langfuse service)',
    validates: ['secret_key', 'public_key', 'host'], emptyMessage: 'Missing required fields', source: 'langfuse_api.set_api_key',
  })),
  // system_api.py
  { method: 'GET', path: '/system/oceanbase/status', auth: 'login', why: "ragloom's store is SQLite (or PostgreSQL), never OceanBase; see GET /api/v1/system/status", source: 'system_api.oceanbase_status' },
  { method: 'GET', path: '/system/config/log', auth: 'login', why: "ragloom has no per-package log levels (the server's request log is `startServer({ logger })`)", source: 'system_api.get_logger_levels' },
  { method: 'PUT', path: '/system/config/log', auth: 'login', why: "ragloom has no per-package log levels (the server's request log is `startServer({ logger })`)", source: 'system_api.set_logger_level' },
  // tenant_api.py
  { method: 'GET', path: '/tenants', auth: 'login', why: TENANTS, source: 'tenant_api.tenant_list' },
  { method: 'PATCH', path: '/tenants/:tenant_id', auth: 'login', why: TENANTS, source: 'tenant_api.agree' },
  { method: 'GET', path: '/tenants/:tenant_id/users', auth: 'login', why: TENANTS, source: 'tenant_api.user_list' },
  { method: 'POST', path: '/tenants/:tenant_id/users', auth: 'login', why: TENANTS, validates: ['email'], source: 'tenant_api.create' },
  { method: 'DELETE', path: '/tenants/:tenant_id/users', auth: 'login', why: TENANTS, validates: ['user_id'], source: 'tenant_api.rm' },
  // user_api.py
  { method: 'POST', path: '/auth/login', auth: 'none', why: LOGIN, source: 'user_api.login' },
  { method: 'GET', path: '/auth/login/channels', auth: 'none', why: LOGIN, source: 'user_api.get_login_channels' },
  { method: 'GET', path: '/auth/login/:channel', auth: 'none', why: LOGIN, source: 'user_api.oauth_login' },
  { method: 'GET', path: '/auth/oauth/:channel/callback', auth: 'none', why: LOGIN, source: 'user_api.oauth_callback' },
  { method: 'POST', path: '/auth/logout', auth: 'login', why: LOGIN, source: 'user_api.log_out' },
  { method: 'POST', path: '/auth/password/forgot/captcha', auth: 'none', why: LOGIN, source: 'user_api.forget_get_captcha' },
  { method: 'POST', path: '/auth/password/forgot/otp', auth: 'none', why: LOGIN, source: 'user_api.forget_send_otp' },
  { method: 'POST', path: '/auth/password/forgot/otp/verify', auth: 'none', why: LOGIN, source: 'user_api.forget_verify_otp' },
  { method: 'POST', path: '/auth/password/reset', auth: 'none', why: LOGIN, source: 'user_api.forget_reset_password' },
  { method: 'PATCH', path: '/users/me', auth: 'login', why: 'ragloom keeps no editable profile (nickname, avatar, password, language)', source: 'user_api.setting_user' },
  { method: 'GET', path: '/users/me/models', auth: 'login', why: "models are the server's configuration (startServer({ models, default_chat_model, default_embedding_model }))", source: 'user_api.tenant_info' },
  { method: 'PATCH', path: '/users/me/models', auth: 'login', why: "models are the server's configuration (startServer({ models, default_chat_model, default_embedding_model }))", validates: ['tenant_id', 'asr_id', 'embd_id', 'img2txt_id', 'llm_id'], source: 'user_api.set_tenant_info' },
  // llm_app.py (the web app's model settings, under /v1/llm)
  ...(['GET /factories', 'POST /set_api_key', 'POST /add_llm', 'POST /delete_llm', 'POST /enable_llm', 'POST /delete_factory', 'GET /my_llms', 'GET /list'] as const).map((r): UnsupportedRoute => {
    const [method, path] = r.split(' ') as [HttpMethod, string];
    const validates = LLM_VALIDATES[path];
    return { method, path: `/llm${path}`, prefix: LEGACY_PREFIX, auth: 'login', why: LLM_SETTINGS, ...(validates ? { validates } : {}), source: `llm_app.${path.slice(1) === 'list' ? 'list_app' : path.slice(1)}` };
  }),
];

/** The unsupported routes (frozen). */
export const UNSUPPORTED_ROUTES: readonly UnsupportedRoute[] = Object.freeze(UNSUPPORTED_LIST);

/** The answer of an unsupported route: 501 naming it and why; `data.error_code` lets a client tell it apart. */
export function notSupportedError(r: Pick<UnsupportedRoute, 'method' | 'path' | 'why' | 'prefix'>): ApiError {
  const path = (r.prefix ?? API_PREFIX) + r.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
  return new ApiError(NOT_SUPPORTED_CODE, `${r.method} ${path} is not supported by ragloom: ${r.why}.`, { data: { error_code: 'NOT_SUPPORTED_BY_RAGLOOM' } });
}

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

interface Matcher {
  method: HttpMethod;
  re: RegExp;
  /** How many params the template has: where several templates match a path, the fewest wins (a static segment beats a param, as in RAGFlow's and Fastify's routers). */
  params: number;
  route?: RouteSpec;
  unsupported?: UnsupportedRoute;
}

let matchers: Matcher[] | undefined;
const allMatchers = (): Matcher[] =>
  (matchers ??= [
    ...ROUTES.filter((r) => !r.prefix).map((r) => ({ method: r.method, re: templateRegex(r.path), params: pathParams(r.path).length, route: r })),
    ...UNSUPPORTED_ROUTES.filter((u) => !u.prefix).map((u) => ({ method: u.method, re: templateRegex(u.path), params: pathParams(u.path).length, unsupported: u })),
  ]);

/** The result of {@link matchRoute}. */
export interface RouteMatch {
  route?: RouteSpec;
  /** A RAGFlow route ragloom does not serve (answered with {@link notSupportedError}). */
  unsupported?: UnsupportedRoute;
  params: Record<string, string>;
  /** Every method the path has (for `Allow`). */
  allowed: HttpMethod[];
}

/**
 * The route for a method and a path under {@link API_PREFIX} (decoded), with its params; neither
 * `route` nor `unsupported` is set when the path exists with other methods only (`allowed` lists
 * them); undefined when no route has the path.
 */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const m2 = method === 'HEAD' ? 'GET' : method;
  let found: RouteMatch | undefined;
  let best: Matcher | undefined;
  for (const x of allMatchers()) {
    const m = x.re.exec(path);
    if (!m) continue;
    found ??= { params: {}, allowed: [] };
    if (!found.allowed.includes(x.method)) found.allowed.push(x.method);
    if (x.method === m2 && (!best || x.params < best.params)) {
      best = x;
      found.params = { ...(m.groups ?? {}) };
    }
  }
  if (found && best) {
    if (best.route) found.route = best.route;
    else found.unsupported = best.unsupported;
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
  /** Bytes in memory; a server's parts are streams of the file spooled to disk. */
  blob: Uint8Array | AsyncIterable<Uint8Array>;
}

export interface SplitRequest {
  method: HttpMethod;
  /** Under the route's prefix ({@link API_PREFIX} nearly always), params filled in. */
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

/** The non-enumerable HTTP status a `raw` result may carry (`/system/healthz`: 500 when a part is down). */
export const HTTP_STATUS_KEY = Symbol.for('ragloom.httpStatus');

/** What a `bytes` result may carry (non-enumerable): its file name, content type and disposition. */
export const FILE_INFO_KEY = Symbol.for('ragloom.fileInfo');

export interface FileInfo {
  /** The file's name (Content-Disposition). */
  name?: string;
  /** @default 'application/octet-stream' */
  contentType?: string;
  /** @default 'attachment' */
  disposition?: 'attachment' | 'inline' | 'none';
}

/** `bytes` with its FileInfo attached (non-enumerable, so the bytes stay a plain Uint8Array to callers). */
export function withFileInfo(bytes: Uint8Array, info: FileInfo): Uint8Array {
  Object.defineProperty(bytes, FILE_INFO_KEY, { value: info, enumerable: false });
  return bytes;
}

/**
 * A `bytes` result streamed: a stored file read part by part as it is sent, never whole (a
 * download asked with `stream: true`, which the server always asks).
 */
export class FileStream {
  constructor(readonly size: number, readonly parts: AsyncIterable<Uint8Array>, readonly info: FileInfo) {}
}

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
export function errorEnvelope(route: RouteSpec | undefined, err: { code: number; message: string; data?: unknown; bare?: true }): EnvelopeBody {
  const body: EnvelopeBody = { code: err.code, message: err.message };
  if (err.data !== undefined) return { ...body, data: err.data };
  if (err.bare) return body;
  let style: ErrorData = route?.errors?.byCode?.[err.code] ?? route?.errors?.data ?? 'none';
  if (err.code === RetCode.EXCEPTION_ERROR) style = 'null';
  if (route?.validates && err.code === RetCode.ARGUMENT_ERROR && err.message.startsWith('required argument are missing')) style = 'null';
  return style === 'none' ? body : { ...body, data: DATA_VALUE[style] };
}

/**
 * The `@validate_request` check: 101 `required argument are missing: a,b; ` for the route's
 * `validates` keys absent from the body, else undefined.
 */
export function missingArguments(route: Pick<RouteSpec, 'validates'>, body: Readonly<Record<string, unknown>>): ApiError | undefined {
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
  if ((route.envelope === 'openai' || route.envelope === 'bytes' || route.envelope === 'raw') && !isEnvelope) return { ok: true, result: body };
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

import { MissingPackageError } from '../util/index.js';
import { PostgresStoreError } from '../store/index.js';

/** RAGFlow's numeric return codes (reference §1). */
export const RetCode = {
  SUCCESS: 0,
  NOT_EFFECTIVE: 10,
  EXCEPTION_ERROR: 100,
  ARGUMENT_ERROR: 101,
  DATA_ERROR: 102,
  OPERATING_ERROR: 103,
  CONNECTION_ERROR: 105,
  RUNNING: 106,
  PERMISSION_ERROR: 108,
  AUTHENTICATION_ERROR: 109,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  SERVER_ERROR: 500,
  /** ragloom's own: a RAGFlow route that needs what ragloom does not have (src/api/routes.ts, UNSUPPORTED_ROUTES). */
  NOT_SUPPORTED: 501,
} as const;

export class RagloomError extends Error {
  override name = 'RagloomError';
}

/**
 * Every failing operation rejects with this. `code` is RAGFlow's numeric code and
 * `message` its exact text, so code written against the RAGFlow SDK can match on them.
 */
export class ApiError extends RagloomError {
  override name = 'ApiError';
  readonly code: number;
  /** Extra payload RAGFlow sends with some errors (e.g. `{error_code: ...}`). */
  readonly data?: unknown;
  /** The server sends `{code, message}` only, whatever the route's style (RAGFlow's get_error_data_result with code 100). */
  readonly bare?: true;
  constructor(code: number, message: string, opts?: ErrorOptions & { data?: unknown; bare?: true }) {
    super(message, opts);
    this.code = code;
    if (opts?.data !== undefined) this.data = opts.data;
    if (opts?.bare) this.bare = true;
  }
}

const A = RetCode.ARGUMENT_ERROR;
const D = RetCode.DATA_ERROR;

/**
 * Message catalogue: [code, template]; `%s` slots are filled in order.
 * docs/errors.md lists the same entries (a test keeps them in step).
 */
export const CATALOGUE = {
  // generic validation (Pydantic-shaped lines are built in api/validate.ts)
  NO_PROPERTIES_MODIFIED: [D, 'No properties were modified'],
  // datasets
  DATASET_NAME_EXISTS: [D, "Dataset name '%s' already exists"],
  DATASET_LACKS_PERMISSION: [D, "User '%s' lacks permission for dataset '%s'"],
  DATASETS_LACK_PERMISSION: [D, "User '%s' lacks permission for datasets: '%s'"],
  DUPLICATE_IDS: [A, "Duplicate ids: '%s'"],
  UNSUPPORTED_MODEL: [D, 'Unsupported model: <%s>'],
  UNAUTHORIZED_MODEL: [D, 'Unauthorized model: <%s>'],
  DATASET_NOT_FOUND_BY_ID: [D, "Can't find the dataset with ID %s!"],
  DATASET_NOT_OWNED: [D, "You don't own the dataset %s."],
  DATASET_NOT_OWNED_NO_ID: [D, "You don't own the dataset."],
  DATASET_NOT_OWNED_TRAILING: [D, "You don't own the dataset %s. "],
  // documents
  NO_FILE_PART: [A, 'No file part!'],
  NO_FILE_SELECTED: [A, 'No file selected!'],
  FILE_NAME_TOO_LONG: [A, 'File name must be 255 bytes or less.'],
  FILE_TYPE_UNSUPPORTED: [RetCode.SERVER_ERROR, '%s'],
  DOCUMENT_NOT_OWNED: [D, "You don't own the document %s."],
  DATASET_DOESNT_OWN_DOCUMENT: [D, "The dataset doesn't own the document."],
  DOWNLOAD_NOT_OWNED: [D, 'The dataset not own the document %s.'],
  FILE_EMPTY: [D, 'This file is empty.'],
  CANT_CHANGE_FIELD: [D, "Can't change `%s`."],
  EXTENSION_CHANGE: [A, "The extension of file can't be changed"],
  DUPLICATED_DOCUMENT_NAME: [D, 'Duplicated document name in the same dataset.'],
  CHUNK_METHOD_EMPTY: [D, '`chunk_method` (empty string) is not valid'],
  NOT_SUPPORTED_YET: [D, 'Not supported yet!'],
  META_FIELDS_DICT: [D, 'meta_fields must be a dictionary'],
  DELETE_DOCS_NEED_IDS: [D, 'should either provide doc ids or set delete_all(true), dataset: %s. '],
  DELETE_DOCS_BOTH: [D, 'should not provide both doc ids and delete_all(true), dataset: %s. '],
  DOCS_NOT_IN_DATASET: [D, 'These documents do not belong to dataset %s or Document not found: %s'],
  INVALID_TYPE_FILTER: [D, 'Invalid filter conditions: %s %s'],
  INVALID_RUN_FILTER: [D, 'Invalid filter run status conditions: %s'],
  ID_AND_IDS: [A, "Cannot use both 'id' and 'ids' parameters at the same time."],
  // parsing
  DOCUMENT_IDS_REQUIRED: [D, '`document_ids` is required'],
  PARSE_RUNNING: [D, "Can't parse document that is currently being processed"],
  REPLACE_RUNNING: [D, "Can't replace the file of a document that is currently being processed"],
  DOCUMENTS_NOT_FOUND: [D, 'Documents not found: %s'],
  STOP_INVALID_STATE: [D, "Can't stop parsing document that has not started or already completed"],
  // chunks
  CONTENT_REQUIRED: [D, '`content` is required'],
  IMPORTANT_KEYWORDS_LIST: [D, '`important_keywords` is required to be a list'],
  QUESTIONS_LIST: [D, '`questions` is required to be a list'],
  TAG_KWD_LIST: [D, '`tag_kwd` is required to be a list'],
  TAG_KWD_STRINGS: [D, '`tag_kwd` must be a list of strings'],
  CHUNK_NOT_FOUND: [D, 'Chunk not found: %s/%s'],
  CANT_FIND_CHUNK: [D, "Can't find this chunk %s"],
  KEYWORDS_SHOULD_BE_LIST: [D, '`important_keywords` should be a list'],
  QUESTIONS_SHOULD_BE_LIST: [D, '`questions` should be a list'],
  POSITIONS_SHOULD_BE_LIST: [D, '`positions` should be a list'],
  TAG_KWD_SHOULD_BE_LIST: [D, '`tag_kwd` should be a list'],
  QA_SEPARATOR: [D, 'Q&A must be separated by TAB/ENTER key.'],
  RM_CHUNK_MISMATCH: [D, 'rm_chunk deleted chunks %s, expect %s'],
  // retrieval
  DATASET_IDS_REQUIRED: [D, '`dataset_ids` is required.'],
  DATASET_IDS_LIST: [D, '`dataset_ids` should be a list.'],
  DIFFERENT_EMBEDDING_MODELS: [D, 'Datasets use different embedding models.'],
  QUESTION_REQUIRED: [D, '`question` is required.'],
  DATASETS_DONT_OWN_DOCUMENT: [D, "The datasets don't own the document %s"],
  TOP_K_POSITIVE: [D, '`top_k` must be greater than 0'],
  HIGHLIGHT_BOOLEAN: [D, '`highlight` should be a boolean'],
  QUESTION_STRING: [A, '`question` should be a string'],
  DOCUMENTS_LIST: [D, '`documents` should be a list'],
  THRESHOLD_RANGE: [A, '`similarity_threshold` should be in [0, 1]'],
  WEIGHT_RANGE: [A, '`vector_similarity_weight` should be in [0, 1]'],
  CROSS_LANGUAGES_LIST: [A, '`cross_languages` should be a list'],
  RERANK_ID_STRING: [A, '`rerank_id` should be a string'],
  RERANK_NOT_FOUND: [D, "`rerank_id` %s doesn't exist"],
  RERANK_FAILED: [RetCode.SERVER_ERROR, 'Rerank model %s %s'],
  NEEDS_CHAT_MODEL: [D, '%s needs a chat model to rewrite the question, and none is configured.'],
  NEEDS_GENERATIVE_MODEL: [D, '%s needs a chat model that writes text; the chat model %s only selects sentences: set default_chat_model (or the search app\'s chat_id) to a generative model.'],
  NEEDS_WRITING_MODEL: [D, '%s needs a chat model that writes text to rewrite the question; the default chat model %s only selects sentences: set default_chat_model to a generative model.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorKey = keyof typeof CATALOGUE;

export function apiError(key: ErrorKey, ...args: Array<string | number>): ApiError {
  const [code, tpl] = CATALOGUE[key];
  let i = 0;
  const message = tpl.replace(/%s/g, () => String(args[i++] ?? ''));
  return new ApiError(code, message);
}

/** Throws the catalogued error. */
export function fail(key: ErrorKey, ...args: Array<string | number>): never {
  throw apiError(key, ...args);
}

/** Wraps an unexpected exception the way RAGFlow does: code 100, message = repr(e). */
export function exceptionError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  // Core services fail with RAGFlow's code and message (core/ask.ts AskError): the same ApiError.
  if (e instanceof Error && e.name === 'AskError' && typeof (e as { code?: unknown }).code === 'number') {
    return new ApiError((e as unknown as { code: number }).code, e.message, { cause: e });
  }
  // A feature whose optional package is absent: the user's fix is an install, so say which.
  if (e instanceof MissingPackageError) return new ApiError(RetCode.DATA_ERROR, e.message, { cause: e });
  // PostgreSQL unreachable, missing, timed out or of another schema: the message names the
  // server and database and says what to do; `data.code` tells the cases apart.
  if (e instanceof PostgresStoreError) return new ApiError(RetCode.SERVER_ERROR, e.message, { cause: e, data: { target: e.target, code: e.code } });
  const err = e instanceof Error ? e : new Error(String(e));
  return new ApiError(RetCode.EXCEPTION_ERROR, `${err.name}('${err.message}')`, { cause: err });
}

/** What a SQLite result code (better-sqlite3's `SqliteError.code`) says about the database file. */
const SQLITE_CAUSES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^SQLITE_NOTADB/, 'the file is not a ragloom database (not SQLite, or encrypted)'],
  [/^SQLITE_CORRUPT/, 'the database file is corrupt (damaged or truncated)'],
  [/^SQLITE_READONLY_DIRECTORY/, 'its folder is read-only (SQLite must create the -wal and -shm files beside it)'],
  [/^SQLITE_READONLY/, 'the file is read-only'],
  [/^SQLITE_CANTOPEN/, 'the file cannot be opened (its folder is missing or read-only, access is denied, or the path is a folder)'],
  [/^SQLITE_FULL/, 'the disk is full (or the database reached its size limit)'],
  [/^SQLITE_IOERR_SHMSIZE/, 'no room for its shared-memory (-shm) file beside it (is the disk full?)'],
  [/^SQLITE_IOERR/, 'an I/O error while reading or writing the file'],
  [/^SQLITE_PERM/, 'access denied'],
];
/** The same for the file-system errors of creating the database's folder. */
const FS_CAUSES: Readonly<Record<string, string>> = {
  EACCES: 'access denied', EPERM: 'access denied', EROFS: 'the file system is read-only', ENOSPC: 'the disk is full',
  ENOTDIR: 'a part of the path is a file, not a folder', EEXIST: 'a part of the path is a file, not a folder',
};

/**
 * A storage failure (the database file cannot be opened, read or written) as an ApiError (500)
 * whose message names the file and the cause, with `data: { path, code }`; undefined for any other
 * error (constraint violations, busy locks and bugs keep their usual mapping).
 * @example
 * // Database /data/kb.db: the file is not a ragloom database (not SQLite, or encrypted) (SQLITE_NOTADB: file is not a database)
 */
export function storageError(e: unknown, path: string): ApiError | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  const cause = e.name === 'SqliteError' ? SQLITE_CAUSES.find(([re]) => re.test(code))?.[1] : FS_CAUSES[code];
  if (!cause) return undefined;
  const detail = e.message.startsWith(code) ? e.message : `${code}: ${e.message}`;
  return new ApiError(RetCode.SERVER_ERROR, `Database ${path}: ${cause} (${detail})`, { cause: e, data: { path, code } });
}

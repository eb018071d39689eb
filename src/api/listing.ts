/**
 * How RAGFlow's list routes fail on paging and ordering they cannot do, so that ragloom refuses
 * the same requests with the same codes. RAGFlow orders with `Model.getter_by(orderby)` (any
 * attribute of the peewee model; another name raises AttributeError) and pages with peewee's
 * `paginate(page, size)` on MySQL, where a negative OFFSET or LIMIT is a syntax error (1064). Both
 * reach RAGFlow's exception handler: code 100 and the exception's repr.
 */
import { ApiError, RetCode } from './errors.js';
import { pyStr, pyRepr } from './pyfmt.js';
import { pyType } from './metadata.js';
import { pyInt, pyFloat } from './routes.js';
import { sqlCount, toNumber } from './validate.js';

/** RAGFlow's field names of each model that ragloom can order by → ragloom's column. */
export const ORDER_FIELDS = {
  Document: {
    id: 'id', kb_id: 'dataset_id', name: 'name', location: 'location', size: 'size', type: 'type', suffix: 'suffix', parser_id: 'parser_id',
    source_type: 'source_type', created_by: 'created_by', thumbnail: 'thumbnail', token_num: 'token_num', chunk_num: 'chunk_num',
    progress: 'progress', progress_msg: 'progress_msg', process_begin_at: 'process_begin_at', process_duration: 'process_duration',
    run: 'run', status: 'status', parser_config: 'parser_config', create_time: 'create_time', create_date: 'create_time',
    update_time: 'update_time', update_date: 'update_time',
  },
  Dialog: {
    id: 'id', tenant_id: 'tenant_id', name: 'name', description: 'description', icon: 'icon', language: 'language', llm_id: 'llm_id',
    similarity_threshold: 'similarity_threshold', vector_similarity_weight: 'vector_similarity_weight', top_n: 'top_n', top_k: 'top_k',
    rerank_id: 'rerank_id', status: 'status', create_time: 'create_time', create_date: 'create_time', update_time: 'update_time', update_date: 'update_time',
  },
  Conversation: {
    id: 'id', dialog_id: 'chat_id', name: 'name', user_id: 'user_id', create_time: 'create_time', create_date: 'create_time',
    update_time: 'update_time', update_date: 'update_time',
  },
  UserCanvas: {
    id: 'id', user_id: 'tenant_id', title: 'title', avatar: 'avatar', permission: 'permission', release: 'release', description: 'description',
    canvas_type: 'canvas_type', canvas_category: 'canvas_category', tags: 'tags', create_time: 'create_time', create_date: 'create_time',
    update_time: 'update_time', update_date: 'update_time',
  },
  API4Conversation: {
    id: 'id', name: 'name', dialog_id: 'agent_id', user_id: 'user_id', exp_user_id: 'exp_user_id', tokens: 'tokens', source: 'source',
    duration: 'duration', round: 'round', thumb_up: 'thumb_up', version_title: 'version_title', create_time: 'create_time',
    create_date: 'create_time', update_time: 'update_time', update_date: 'update_time',
  },
  Search: {
    id: 'id', tenant_id: 'tenant_id', name: 'name', description: 'description', avatar: 'avatar', created_by: 'created_by', status: 'status',
    create_time: 'create_time', create_date: 'create_time', update_time: 'update_time', update_date: 'update_time',
  },
  PipelineOperationLog: {
    id: 'id', document_id: 'document_id', tenant_id: 'tenant_id', kb_id: 'dataset_id', parser_id: 'parser_id', document_name: 'document_name',
    document_suffix: 'document_suffix', document_type: 'document_type', source_from: 'source_from', progress: 'progress',
    progress_msg: 'progress_msg', process_begin_at: 'process_begin_at', process_duration: 'process_duration', operation_status: 'operation_status',
    create_time: 'create_time', create_date: 'create_time', update_time: 'update_time', update_date: 'update_time',
  },
} as const satisfies Record<string, Record<string, string>>;

export type OrderModel = keyof typeof ORDER_FIELDS;

/**
 * The column to order by for `orderby` (absent: `dflt`): a field of RAGFlow's model; anything else
 * is RAGFlow's `AttributeError("type object 'Document' has no attribute 'x'")`, code 100.
 */
export function orderColumn(model: OrderModel, orderby: unknown, dflt: string): string {
  const name = orderby === undefined || orderby === null ? dflt : pyStr(orderby);
  const col = (ORDER_FIELDS[model] as Record<string, string>)[name];
  if (col === undefined || !Object.prototype.hasOwnProperty.call(ORDER_FIELDS[model], name)) {
    throw new ApiError(RetCode.EXCEPTION_ERROR, `AttributeError("type object '${model}' has no attribute '${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}'")`);
  }
  return col;
}

/**
 * LIMIT and OFFSET of peewee's `paginate(page, size)`: page 0 reads as page 1, a negative page is
 * taken as it is; a negative OFFSET or LIMIT is MySQL's syntax error 1064, code 100.
 */
export function paginate(page: number, size: number): { limit: number; offset: number } {
  const offset = (page > 0 ? page - 1 : page) * size;
  if (size < 0 || offset < 0) {
    const near = size < 0 ? `${size} OFFSET ${offset}` : String(offset);
    throw new ApiError(RetCode.EXCEPTION_ERROR, `ProgrammingError(1064, "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '${near}' at line 1")`);
  }
  return { limit: sqlCount(size), offset: sqlCount(offset) };
}

/** Python's `int()` of a query value already cast, or of a number an in-process caller passed; `dflt` when absent. */
export function intArg(v: unknown, dflt: number): number {
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  const s = pyStr(v);
  if (/^\s*[+-]?\d+(?:_\d+)*\s*$/.test(s)) return Math.trunc(toNumber(s.replace(/_/g, '')));
  throw new ApiError(RetCode.EXCEPTION_ERROR, `ValueError("invalid literal for int() with base 10: '${s}'")`);
}

/** Python's `int()` of a JSON value: bools, ints, floats truncated, integer strings; else its ValueError / TypeError (code 100). */
export function pyIntOf(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string') return pyInt(v);
  throw new ApiError(RetCode.EXCEPTION_ERROR, `TypeError(${pyRepr(`int() argument must be a string, a bytes-like object or a real number, not '${pyType(v)}'`)})`);
}

/** Python's `float()` of a JSON value: bools, numbers, number strings; else its ValueError / TypeError (code 100). */
export function pyFloatOf(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return pyFloat(v);
  throw new ApiError(RetCode.EXCEPTION_ERROR, `TypeError(${pyRepr(`float() argument must be a string or a real number, not '${pyType(v)}'`)})`);
}

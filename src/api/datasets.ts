import type { Engine, Ctx } from '../core/index.js';
import { datasetToWire, getDataset, nameTaken, ownedDataset, DEFAULT_CHAT_MODEL, fullTextReindex } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkExtra, checkInt, checkStr, literalMessage, checkBool, sqlCount } from './validate.js';
import { DATASET_CHUNK_METHODS, parserConfigForCreate, storedParserConfig, validateParserConfig, methodDefaultConfig, flattenParentChild } from './parser-config.js';
import { newId, isUuid1, uuidHex, nowMs, utf8Length, deepMerge, isPlainObject } from '../util/index.js';
import type { DatasetChanges, DatasetListQuery } from '../store/index.js';

const NAME_LIMIT = 128;
const CREATE_KEYS = ['name', 'avatar', 'description', 'embedding_model', 'permission', 'chunk_method', 'parser_config', 'parse_type', 'pipeline_id', 'auto_metadata_config'] as const;
const UPDATE_KEYS = [...CREATE_KEYS, 'pagerank', 'language', 'connectors'] as const;

function checkAvatar(is: Issues, v: unknown): void {
  if (v === null || v === undefined) return;
  if (!checkStr(is, 'avatar', v, { max: 65535 })) return;
  const comma = v.indexOf(',');
  if (comma < 0) return is.add('avatar', 'Missing MIME prefix. Expected format: data:<mime>;base64,<data>', v);
  const prefix = v.slice(0, comma);
  if (!prefix.startsWith('data:')) return is.add('avatar', "Invalid MIME prefix format. Must start with 'data:'", v);
  const mime = prefix.slice(5).split(';')[0];
  if (mime !== 'image/jpeg' && mime !== 'image/png') is.add('avatar', "Unsupported MIME type. Allowed: ['image/jpeg', 'image/png']", v);
}

/** Format checks of `embedding_model` (code 101); returns the stripped id or null. */
function checkEmbeddingModel(is: Issues, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') {
    is.add('embedding_model', 'Input should be a valid string', v);
    return null;
  }
  const s = v.trim();
  if ([...s].length > 255) {
    is.add('embedding_model', 'String should have at most 255 characters', s);
    return null;
  }
  if (!s.includes('@')) {
    is.add('embedding_model', 'Embedding model identifier must follow <model_name>@<provider> format', s);
    return null;
  }
  const at = s.indexOf('@');
  const [name, provider] = [s.slice(0, at), s.slice(at + 1)];
  if (!name || !provider) {
    is.add('embedding_model', 'Both model_name and provider must be non-empty strings', s);
    return null;
  }
  if (!name.trim() || !provider.trim()) {
    is.add('embedding_model', 'Model name and provider cannot be whitespace-only strings', s);
    return null;
  }
  return s;
}

/** Availability of a well-formed model id for the tenant (code 102). */
function verifyEmbedding(e: Engine, id: string): void {
  const st = e.models.embeddingStatus(id);
  if (st === 'unsupported') fail('UNSUPPORTED_MODEL', id);
  if (st === 'unauthorized') fail('UNAUTHORIZED_MODEL', id);
}

function checkName(is: Issues, v: unknown, required: boolean, req: Record<string, unknown> = {}): string | undefined {
  if (v === undefined) {
    if (required) is.add('name', 'Field required', req);
    return undefined;
  }
  if (typeof v !== 'string') {
    is.add('name', 'Input should be a valid string', v);
    return undefined;
  }
  const s = v.trim();
  if (!checkStr(is, 'name', s, { min: 1, max: NAME_LIMIT })) return undefined;
  return s;
}

function checkPermission(is: Issues, v: unknown): void {
  if (v !== 'me' && v !== 'team') is.add('permission', literalMessage(['me', 'team']), v);
}

function checkChunkMethod(is: Issues, v: unknown): void {
  if (typeof v !== 'string' || !(DATASET_CHUNK_METHODS as readonly string[]).includes(v)) {
    is.add('chunk_method', literalMessage(DATASET_CHUNK_METHODS), v);
  }
}

/** Pipeline mode (parse_type + pipeline_id) versus chunk_method: the reference's mutual exclusion. */
function checkPipeline(is: Issues, req: Record<string, unknown>): void {
  const hasMethod = req.chunk_method !== undefined && req.chunk_method !== null;
  const pipe = ['parse_type', 'pipeline_id'].filter((k) => req[k] !== undefined && req[k] !== null);
  if (hasMethod && pipe.length) {
    is.add('chunk_method', `parser_id provided → disallowed fields present: ${pipe.join(', ')}`, req.chunk_method);
    return;
  }
  if (!hasMethod && pipe.length === 1) {
    const missing = ['parse_type', 'pipeline_id'].filter((k) => !pipe.includes(k));
    is.add('chunk_method', `parser_id omitted → required fields missing: ${missing.join(', ')}`, null);
    return;
  }
  if (pipe.length === 2) {
    checkInt(is, 'parse_type', req.parse_type, 0, 64);
    if (typeof req.pipeline_id !== 'string' || !/^[0-9a-f]{32}$/i.test(req.pipeline_id)) is.add('pipeline_id', 'Invalid pipeline_id format', req.pipeline_id);
  }
}

export async function createDataset(e: Engine, ctx: Ctx, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const is = new Issues();
  checkExtra(is, req, CREATE_KEYS);
  const name = checkName(is, req.name, true, req);
  checkAvatar(is, req.avatar);
  if (req.description !== undefined && req.description !== null) checkStr(is, 'description', req.description, { max: 65535 });
  const embd = checkEmbeddingModel(is, req.embedding_model);
  if (req.permission !== undefined) checkPermission(is, req.permission);
  checkPipeline(is, req);
  if (req.chunk_method !== undefined) checkChunkMethod(is, req.chunk_method);
  let given: Record<string, unknown> | null = null;
  if (req.parser_config !== undefined && req.parser_config !== null && !(isPlainObject(req.parser_config) && Object.keys(req.parser_config).length === 0)) {
    if (!isPlainObject(req.parser_config)) is.add('parser_config', 'Input should be a valid dictionary or instance of ParserConfig', req.parser_config);
    else given = parserConfigForCreate(is, req.parser_config);
  }
  is.throwIfAny();
  if (req.parse_type !== undefined && req.pipeline_id !== undefined && req.chunk_method === undefined) {
    throw new ApiError(RetCode.DATA_ERROR, 'Ingestion pipelines (parse_type / pipeline_id) are not supported by ragloom; use chunk_method.');
  }
  if (utf8Length(name!) > NAME_LIMIT) throw new ApiError(RetCode.DATA_ERROR, `Dataset name length is ${utf8Length(name!)} which is large than ${NAME_LIMIT}`);
  const tenant = await e.tenantRow(ctx.tenantId);
  const embdId = embd ?? tenant.embd_id;
  verifyEmbedding(e, embdId);
  const method = (req.chunk_method as string | undefined) ?? 'naive';
  const id = newId();
  const t = nowMs();
  // The store makes the name free (duplicateName) in the inserting transaction.
  await e.store.datasets.create({
    id, tenant_id: ctx.tenantId, name: name!, avatar: (req.avatar as string | null | undefined) ?? null, description: (req.description as string | null | undefined) ?? null,
    embd_id: embdId, permission: (req.permission as string | undefined) ?? 'me', created_by: ctx.userId, parser_id: method,
    parser_config: JSON.stringify(storedParserConfig(method, given, tenant.llm_id || DEFAULT_CHAT_MODEL)), create_time: t, update_time: t,
  });
  return datasetToWire((await getDataset(e, id))!);
}

export interface ListDatasetsResult {
  data: Record<string, unknown>[];
  total_datasets: number;
}

export async function listDatasets(e: Engine, ctx: Ctx, req: Record<string, unknown>): Promise<ListDatasetsResult> {
  const is = new Issues();
  checkExtra(is, req, ['page', 'page_size', 'orderby', 'desc', 'id', 'name', 'include_parsing_status']);
  const page = req.page ?? 1;
  const pageSize = req.page_size ?? 30;
  checkInt(is, 'page', page, 1);
  checkInt(is, 'page_size', pageSize, 1);
  const orderby = req.orderby ?? 'create_time';
  if (orderby !== 'create_time' && orderby !== 'update_time') is.add('orderby', literalMessage(['create_time', 'update_time']), orderby);
  const desc = req.desc ?? true;
  checkBool(is, 'desc', desc);
  if (req.id !== undefined && req.id !== null && !isUuid1(req.id)) is.add('id', 'Invalid UUID1 format', req.id);
  if (req.name !== undefined && req.name !== null) checkStr(is, 'name', req.name);
  if (req.include_parsing_status !== undefined) checkBool(is, 'include_parsing_status', req.include_parsing_status);
  is.throwIfAny();

  const q: DatasetListQuery = {
    who: ctx, orderby: orderby as DatasetListQuery['orderby'], desc: desc as boolean,
    limit: sqlCount(pageSize as number), offset: sqlCount(((page as number) - 1) * (pageSize as number)),
  };
  if (typeof req.id === 'string') q.id = uuidHex(req.id);
  if (typeof req.name === 'string' && req.name !== '') q.name = req.name;
  // RAGFlow checks the id and the name each on its own (a permission error naming the one the
  // caller cannot see), then filters by both: an id and a name of two different datasets list nothing.
  const visible = async (by: { id: string } | { name: string }) =>
    (await e.store.datasets.list({ who: ctx, orderby: 'create_time', desc: true, limit: 0, offset: 0, ...by })).total > 0;
  if (q.id && !(await visible({ id: q.id }))) fail('DATASET_LACKS_PERMISSION', ctx.tenantId, q.id);
  if (q.name && !(await visible({ name: q.name }))) fail('DATASET_LACKS_PERMISSION', ctx.tenantId, q.name);
  const { total, rows } = await e.store.datasets.list(q);
  const nicks = await e.store.accounts.nicknames(rows.map((r) => r.created_by));
  const counts = req.include_parsing_status === true ? await e.store.datasets.runCounts(rows.map((r) => r.id)) : undefined;
  const data = rows.map((r) => {
    const w = datasetToWire(r);
    w.nickname = nicks.get(r.created_by) ?? '';
    w.tenant_avatar = null;
    if (counts) {
      const c: Record<string, number> = { '0': 0, '1': 0, '2': 0, '3': 0, '4': 0, ...counts.get(r.id) };
      Object.assign(w, { unstart_count: c['0'], running_count: c['1'], cancel_count: c['2'], done_count: c['3'], fail_count: c['4'] });
    }
    return w;
  });
  return { data, total_datasets: total };
}

export async function updateDataset(e: Engine, ctx: Ctx, datasetId: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const is = new Issues();
  if (!isUuid1(datasetId)) is.add('dataset_id', 'Invalid UUID1 format', datasetId);
  checkExtra(is, req, UPDATE_KEYS);
  let name: string | undefined;
  if ('name' in req) {
    name = checkName(is, req.name, false);
    if (name !== undefined && [...name].some((ch) => ch.codePointAt(0)! > 0xffff)) {
      is.add('name', 'String should contain only characters of the Basic Multilingual Plane', req.name);
    }
  }
  if ('avatar' in req) checkAvatar(is, req.avatar);
  if ('description' in req && req.description !== null) checkStr(is, 'description', req.description, { max: 65535 });
  const embd = 'embedding_model' in req ? checkEmbeddingModel(is, req.embedding_model) : null;
  if ('permission' in req) checkPermission(is, req.permission);
  if ('chunk_method' in req) checkChunkMethod(is, req.chunk_method);
  if ('pagerank' in req) checkInt(is, 'pagerank', req.pagerank, 0, 100);
  if ('language' in req) checkStr(is, 'language', req.language, { max: 32 });
  let given: Record<string, unknown> | null = null;
  if ('parser_config' in req && req.parser_config !== null && !(isPlainObject(req.parser_config) && Object.keys(req.parser_config).length === 0)) {
    if (!isPlainObject(req.parser_config)) is.add('parser_config', 'Input should be a valid dictionary or instance of ParserConfig', req.parser_config);
    else {
      given = validateParserConfig(is, req.parser_config);
      const size = JSON.stringify(req.parser_config).length;
      if (size > 65535) is.add('parser_config', `Parser config exceeds size limit (max 65,535 characters). Current size: ${size}`, req.parser_config);
    }
  }
  is.throwIfAny();
  if (Object.keys(req).length === 0) fail('NO_PROPERTIES_MODIFIED');

  const id = uuidHex(datasetId);
  const kb = await ownedDataset(e, ctx, id);
  if (!kb) fail('DATASET_LACKS_PERMISSION', ctx.tenantId, id);
  if (name !== undefined && utf8Length(name) > NAME_LIMIT) throw new ApiError(RetCode.DATA_ERROR, `Dataset name length is ${utf8Length(name)} which is large than ${NAME_LIMIT}`);
  if (name !== undefined && name.toLowerCase() !== kb.name.toLowerCase() && (await nameTaken(e, ctx.tenantId, name, kb.id))) fail('DATASET_NAME_EXISTS', name);
  if (embd !== null && embd !== kb.embd_id) {
    if (kb.chunk_num !== 0) fail('EMBEDDING_MODEL_LOCKED', kb.chunk_num, kb.embd_id);
    verifyEmbedding(e, embd);
  }

  const sets: DatasetChanges = {};
  if (name !== undefined) sets.name = name;
  if ('avatar' in req) sets.avatar = (req.avatar as string | null | undefined) ?? null;
  if ('description' in req) sets.description = (req.description as string | null | undefined) ?? null;
  if (embd !== null) sets.embd_id = embd;
  if ('permission' in req) sets.permission = req.permission as string;
  if ('pagerank' in req) sets.pagerank = req.pagerank as number;
  if ('language' in req) sets.language = req.language as string;
  const method = (req.chunk_method as string | undefined) ?? kb.parser_id;
  if (given) {
    const base = method !== kb.parser_id ? storedParserConfig(method, null, (await e.tenantRow(ctx.tenantId)).llm_id || DEFAULT_CHAT_MODEL) : JSON.parse(kb.parser_config);
    sets.parser_config = JSON.stringify(flattenParentChild(deepMerge(base, given)));
  } else if (method !== kb.parser_id) {
    sets.parser_config = JSON.stringify(deepMerge({ table_context_size: 0, image_context_size: 0 }, methodDefaultConfig(method)));
  }
  if (method !== kb.parser_id) sets.parser_id = method;
  sets.update_time = nowMs();
  await e.store.datasets.update(id, sets);
  // Its chunks' full-text rows follow a new language in the background (core/reindex.ts).
  if ('language' in sets) fullTextReindex(e).kick();
  return datasetToWire((await getDataset(e, id))!);
}

/** Validates a RAGFlow DeleteReq (`ids` UUID1 list or null, no duplicates, `delete_all` bool). */
export function checkDeleteIds(is: Issues, req: Record<string, unknown>): string[] | null {
  checkExtra(is, req, ['ids', 'delete_all']);
  if ('delete_all' in req && req.delete_all !== undefined) checkBool(is, 'delete_all', req.delete_all);
  const ids = req.ids;
  if (ids === undefined || ids === null) return null;
  if (!Array.isArray(ids)) {
    is.add('ids', 'Input should be a valid list', ids);
    return null;
  }
  const out: string[] = [];
  for (const [i, v] of ids.entries()) {
    if (typeof v !== 'string') {
      is.add(`ids.${i}`, 'Input should be a valid string', v);
      return null;
    }
    if (!isUuid1(v)) {
      is.add('ids', 'Invalid UUID1 format', ids);
      return null;
    }
    out.push(uuidHex(v));
  }
  const seen = new Set<string>();
  const dups = [...new Set(out.filter((x) => (seen.has(x) ? true : (seen.add(x), false))))];
  if (dups.length) is.add('ids', `Duplicate ids: '${dups.join(', ')}'`, ids);
  return out;
}

export async function deleteDatasets(e: Engine, ctx: Ctx, req: Record<string, unknown>): Promise<{ success_count: number }> {
  const is = new Issues();
  const ids = checkDeleteIds(is, req);
  is.throwIfAny();
  let targets: string[];
  if (req.delete_all === true) {
    targets = await e.store.datasets.idsOfTenant(ctx.tenantId);
  } else {
    if (!ids || ids.length === 0) return { success_count: 0 };
    const owned = await e.store.datasets.getOwnedMany(ids, ctx.tenantId);
    const bad = ids.filter((id) => !owned.has(id));
    if (bad.length) fail('DATASETS_LACK_PERMISSION', ctx.tenantId, bad.join(', '));
    targets = ids;
  }
  // Documents, chunks, unused blobs and the datasets: one transaction in the store.
  await e.store.datasets.delete(targets);
  return { success_count: targets.length };
}

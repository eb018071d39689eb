import type { Engine, Ctx } from '../core/index.js';
import { datasetToWire, getDataset, nameTaken, ownedDataset, visibleDataset, DEFAULT_CHAT_MODEL, fullTextReindex } from '../core/index.js';
import { checkAutoMetadata } from './metadata.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkExtra, checkInt, checkStr, literalMessage, checkBool, sqlCount } from './validate.js';
import { DATASET_CHUNK_METHODS, parserConfigForCreate, storedParserConfig, validateParserConfig, methodDefaultConfig } from './parser-config.js';
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
  checkExtra(is, req, ['page', 'page_size', 'orderby', 'desc', 'id', 'name', 'include_parsing_status', 'ext']);
  const page = req.page ?? 1;
  const pageSize = req.page_size ?? 30;
  // The query string is validated in Pydantic's lax mode: a string that does not parse says so.
  const laxInt = (loc: string, v: unknown) => typeof v === 'string' ? is.add(loc, 'Input should be a valid integer, unable to parse string as an integer', v) : checkInt(is, loc, v, 1);
  const laxBool = (loc: string, v: unknown) => typeof v === 'string' ? is.add(loc, 'Input should be a valid boolean, unable to interpret input', v) : checkBool(is, loc, v);
  laxInt('page', page);
  laxInt('page_size', pageSize);
  const orderby = req.orderby ?? 'create_time';
  if (orderby !== 'create_time' && orderby !== 'update_time') is.add('orderby', literalMessage(['create_time', 'update_time']), orderby);
  const desc = req.desc ?? true;
  laxBool('desc', desc);
  // `ext`: a JSON object (RAGFlow parses the query value); its `keywords` and `parser_id` filter the list.
  let ext: Record<string, unknown> = {};
  if (req.ext !== undefined && req.ext !== null) {
    let v: unknown = req.ext;
    if (typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        /* passed on as the string */
      }
    }
    if (isPlainObject(v)) ext = v;
    else is.add('ext', 'Input should be a valid dictionary', req.ext);
  }
  if (req.id !== undefined && req.id !== null && !isUuid1(req.id)) is.add('id', 'Invalid UUID1 format', req.id);
  if (req.name !== undefined && req.name !== null) checkStr(is, 'name', req.name);
  if (req.include_parsing_status !== undefined) laxBool('include_parsing_status', req.include_parsing_status);
  is.throwIfAny();

  const q: DatasetListQuery = {
    who: ctx, orderby: orderby as DatasetListQuery['orderby'], desc: desc as boolean,
    limit: sqlCount(pageSize as number), offset: sqlCount(((page as number) - 1) * (pageSize as number)),
  };
  if (typeof req.id === 'string') q.id = uuidHex(req.id);
  if (typeof req.name === 'string' && req.name !== '') q.name = req.name;
  if (typeof ext.keywords === 'string' && ext.keywords) q.keywords = ext.keywords.toLowerCase();
  if (typeof ext.parser_id === 'string' && ext.parser_id) q.parser_id = ext.parser_id;
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
  if ('language' in req && req.language !== null) checkStr(is, 'language', req.language, { max: 32 });
  if ('connectors' in req) {
    if (!Array.isArray(req.connectors)) is.add('connectors', 'Input should be a valid list', req.connectors);
    else req.connectors.forEach((c, i) => { if (!isPlainObject(c)) is.add(`connectors.${i}`, 'Input should be a valid dictionary', c); });
  }
  const autoMeta = 'auto_metadata_config' in req && req.auto_metadata_config !== null ? checkAutoMetadataField(is, req.auto_metadata_config) : null;
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
  // RAGFlow 0.25.6 lets the model change over existing chunks (their vectors stay the old model's
  // until POST /datasets/{id}/embedding parses the documents again); it only checks availability.
  if (embd !== null) verifyEmbedding(e, embd);

  const sets: DatasetChanges = {};
  if (name !== undefined) sets.name = name;
  if ('avatar' in req) sets.avatar = (req.avatar as string | null | undefined) ?? null;
  if ('description' in req) sets.description = (req.description as string | null | undefined) ?? null;
  if (embd !== null) sets.embd_id = embd;
  if ('permission' in req) sets.permission = req.permission as string;
  if ('pagerank' in req) sets.pagerank = req.pagerank as number;
  if ('language' in req && req.language !== null) sets.language = req.language as string;
  const method = (req.chunk_method as string | undefined) ?? kb.parser_id;
  if (autoMeta) {
    // RAGFlow reads `fields` (which AutoMetadataConfig does not have) and `enabled`: the stored
    // list comes out empty and extraction enabled; ragloom stores the same.
    given = { ...(given ?? {}), metadata: [], enable_metadata: true };
  }
  if (given) {
    const base = method !== kb.parser_id ? storedParserConfig(method, null, (await e.tenantRow(ctx.tenantId)).llm_id || DEFAULT_CHAT_MODEL) : JSON.parse(kb.parser_config);
    sets.parser_config = JSON.stringify(updateParentChild(deepMerge(base, given), given));
  } else if (method !== kb.parser_id) {
    sets.parser_config = JSON.stringify(deepMerge({ table_context_size: 0, image_context_size: 0 }, methodDefaultConfig(method)));
  }
  if (method !== kb.parser_id) sets.parser_id = method;
  sets.update_time = nowMs();
  await e.store.datasets.update(id, sets);
  // Its chunks' full-text rows follow a new language in the background (core/reindex.ts).
  if ('language' in sets) fullTextReindex(e).kick();
  // As RAGFlow: the dataset, and the connectors the request named (ragloom links none).
  return { ...datasetToWire((await getDataset(e, id))!), connectors: Array.isArray(req.connectors) ? req.connectors : [] };
}

/**
 * The update's parent/child flattening (dataset_api_service.update_dataset): a given
 * `parent_child.use_parent_child` sets `children_delimiter` and `enable_children`; otherwise both
 * are off.
 */
function updateParentChild(cfg: Record<string, unknown>, given: Record<string, unknown>): Record<string, unknown> {
  const pc = isPlainObject(given.parent_child) ? given.parent_child : {};
  const on = !!pc.use_parent_child;
  return { ...cfg, children_delimiter: on ? String(pc.children_delimiter ?? '\n') : '', enable_children: on };
}

/** `auto_metadata_config` of an update (AutoMetadataConfig, strict): its issues added at `auto_metadata_config.…`. */
function checkAutoMetadataField(is: Issues, v: unknown): Record<string, unknown> | null {
  if (!isPlainObject(v)) {
    is.add('auto_metadata_config', 'Input should be a valid dictionary or instance of AutoMetadataConfig', v);
    return null;
  }
  const sub = new Issues();
  const cfg = checkAutoMetadata(sub, v);
  for (const line of sub.lines) is.lines.push(line.replace('Field: <', 'Field: <auto_metadata_config.'));
  return cfg;
}

/** `GET /datasets/{id}` (dataset_api.get_dataset): a dataset the caller can see, with its files' total `size` and `connectors` ([]). */
export async function getDatasetOp(e: Engine, ctx: Ctx, datasetId: string): Promise<Record<string, unknown>> {
  if (!datasetId) throw new ApiError(RetCode.DATA_ERROR, 'Lack of "Dataset ID"');
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_LACKS_PERMISSION', ctx.tenantId, datasetId);
  const size = await e.store.datasets.filesSize(kb.id);
  return { ...datasetToWire(kb), size, connectors: [] };
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

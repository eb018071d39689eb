import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, visibleDataset, documentToWire, getDocument, uploadFileType, documentChunkMethod, RUN_NAMES, type DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkStr, checkInt, checkFloat, toNumber, sqlCount } from './validate.js';
import { pyStr } from './pyfmt.js';
import { DOCUMENT_CHUNK_METHODS, validateParserConfig, storedParserConfig } from './parser-config.js';
import { newId, nowMs, fileSuffix, utf8Length, deepMerge, isPlainObject, pyListRepr } from '../util/index.js';
import type { DocumentChanges, DocumentListQuery } from '../store/index.js';

/**
 * Largest file the store can hold: SQLite's blob limit (SQLITE_MAX_LENGTH in better-sqlite3's
 * build). A larger upload is refused by its length alone, before it is hashed or read.
 */
export const MAX_UPLOAD_BYTES = 1_000_000_000;

/** The refusal of a file over `MAX_UPLOAD_BYTES` (code 500), naming it. */
export function tooLargeToStore(name: string, bytes: number): string {
  const mib = (n: number) => (n / 1048576).toFixed(1);
  return `${name}: File is too large to store (${mib(bytes)} MiB; the limit is ${mib(MAX_UPLOAD_BYTES)} MiB)`;
}

export interface UploadFile {
  display_name?: unknown;
  blob?: unknown;
}

export async function uploadDocuments(e: Engine, ctx: Ctx, datasetId: string, files: unknown): Promise<Record<string, unknown>[]> {
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) {
    if (!(await e.store.datasets.exists(datasetId))) fail('DATASET_NOT_FOUND_BY_ID', datasetId);
    throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
  }
  if (!Array.isArray(files) || files.length === 0) fail('NO_FILE_PART');
  const list = files as UploadFile[];
  for (const f of list) {
    if (!f || typeof f !== 'object' || typeof f.display_name !== 'string' || f.display_name === '') fail('NO_FILE_SELECTED');
    if (!(f.blob instanceof Uint8Array)) throw new ApiError(RetCode.ARGUMENT_ERROR, `${f.display_name}: \`blob\` must be a Uint8Array or Buffer`);
    if (utf8Length(f.display_name) > 255) fail('FILE_NAME_TOO_LONG');
  }
  const tooLarge = list
    .filter((f) => (f.blob as Uint8Array).byteLength > MAX_UPLOAD_BYTES)
    .map((f) => tooLargeToStore(f.display_name as string, (f.blob as Uint8Array).byteLength));
  if (tooLarge.length) throw new ApiError(RetCode.SERVER_ERROR, tooLarge.join('\n'));
  // RAGFlow types a file by its name only, and refuses a name without an extension; such a name
  // (README, LICENSE) is typed by its content here, as the parser reads it.
  const types = list.map((f) => uploadFileType(f.display_name as string, f.blob as Uint8Array));
  const errors = list
    .filter((_, i) => types[i] === 'other')
    .map((f) => `${f.display_name}: This type of file has not been supported yet!`);
  if (errors.length) throw new ApiError(RetCode.SERVER_ERROR, errors.join('\n'));

  const ids = list.map(() => newId());
  // Names compare as RAGFlow's MySQL collation does: case-insensitively; the store makes each one
  // free (duplicateName) in the transaction that stores the files, bytes and documents.
  await e.store.documents.upload({
    dataset_id: kb.id, parser_config: kb.parser_config, created_by: ctx.userId, time: nowMs(),
    kindOf: (name, i) => {
      const suffix = fileSuffix(name);
      return { suffix, type: types[i]!, parser_id: documentChunkMethod(suffix, kb.parser_id, types[i]!) };
    },
  }, list.map((f) => ({ name: f.display_name as string, bytes: f.blob as Uint8Array })), ids);
  const docs = await e.store.documents.getMany(kb.id, ids);
  return ids.map((id) => documentToWire(docs.get(id)!));
}

async function ownedOrFail(e: Engine, ctx: Ctx, datasetId: string, key: 'DATASET_NOT_OWNED' | 'DATASET_NOT_OWNED_TRAILING' = 'DATASET_NOT_OWNED') {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail(key, datasetId);
  return kb;
}

const RUN_BY_NAME: Record<string, string> = { UNSTART: '0', RUNNING: '1', CANCEL: '2', DONE: '3', FAIL: '4' };

export async function listDocuments(e: Engine, ctx: Ctx, datasetId: string, q: Record<string, unknown>): Promise<{ total: number; docs: Record<string, unknown>[] }> {
  const kb = await ownedOrFail(e, ctx, datasetId, 'DATASET_NOT_OWNED_TRAILING');
  if (q.id !== undefined && q.id !== null && q.ids !== undefined && q.ids !== null) fail('ID_AND_IDS');
  const f: Partial<DocumentListQuery> = {};
  // An id, a name and the other filters all apply, each id and name checked first (RAGFlow's
  // list_docs): an id and the name of another document list nothing.
  if (typeof q.id === 'string' && q.id) {
    if (!(await getDocument(e, kb.id, q.id))) fail('DOCUMENT_NOT_OWNED', q.id);
    f.ids = [q.id];
  }
  if (typeof q.name === 'string' && q.name) {
    if (!(await e.store.documents.nameExists(kb.id, q.name))) fail('DOCUMENT_NOT_OWNED', q.name);
    f.name = q.name;
  }
  if (Array.isArray(q.ids) && q.ids.length) f.ids = Array.from(q.ids, (v) => pyStr(v));
  if (typeof q.keywords === 'string' && q.keywords) f.keywords = q.keywords.toLowerCase();
  if (Array.isArray(q.suffix) && q.suffix.length) f.suffixes = Array.from(q.suffix, (v) => pyStr(v).replace(/^\./, '').toLowerCase());
  if (Array.isArray(q.types) && q.types.length) f.types = Array.from(q.types, (v) => pyStr(v));
  if (q.run !== undefined && q.run !== null) {
    const runs = Array.from(Array.isArray(q.run) ? q.run : [q.run], (r) => pyStr(r));
    const mapped = runs.map((r) => (/^[0-4]$/.test(r) ? r : RUN_BY_NAME[r.toUpperCase()]));
    if (mapped.some((m) => m === undefined)) fail('INVALID_RUN_FILTER', pyListRepr(runs));
    if (mapped.length) f.runs = mapped as string[];
  }
  const is = new Issues(RetCode.DATA_ERROR);
  const page = q.page ?? 1;
  const pageSize = q.page_size ?? 30;
  checkInt(is, 'page', page, 1);
  checkInt(is, 'page_size', pageSize, 0);
  const orderby = q.orderby ?? 'create_time';
  if (orderby !== 'create_time' && orderby !== 'update_time' && orderby !== 'name' && orderby !== 'size') is.add('orderby', "Input should be 'create_time' or 'update_time'", orderby);
  is.throwIfAny();
  const desc = !(q.desc === false || q.desc === 'false' || q.desc === 'False');
  const limit = pageSize === 0 ? -1 : sqlCount(pageSize as number);
  const offset = pageSize === 0 ? 0 : sqlCount(((page as number) - 1) * (pageSize as number));
  const found = await e.store.documents.list({ ...f, dataset_id: kb.id, orderby: orderby as DocumentListQuery['orderby'], desc, limit, offset });
  const total = found.total;
  let rows = found.rows;
  // RAGFlow applies the time window after paging; we keep that.
  const from = toNumber(q.create_time_from ?? 0);
  const to = toNumber(q.create_time_to ?? 0);
  if (from > 0 || to > 0) rows = rows.filter((r) => (from <= 0 || r.create_time >= from) && (to <= 0 || r.create_time <= to));
  return { total, docs: rows.map(documentToWire) };
}

const DOC_UPDATE_FIELDS = ['name', 'display_name', 'chunk_method', 'parser_config', 'meta_fields', 'enabled', 'chunk_count', 'token_count', 'progress'];

export async function updateDocument(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED_NO_ID');
  const doc = await getDocument(e, kb.id, documentId);
  if (!doc) fail('DATASET_DOESNT_OWN_DOCUMENT');
  // `display_name` is what upload takes; accept it as the same key as `name`.
  const body: Record<string, unknown> = Object.fromEntries(Object.entries(req).filter(([k]) => DOC_UPDATE_FIELDS.includes(k)));
  if (body.display_name !== undefined && body.name === undefined) body.name = body.display_name;
  delete body.display_name;

  const is = new Issues(RetCode.DATA_ERROR);
  if ('name' in body) checkStr(is, 'name', body.name);
  if ('chunk_method' in body) {
    const m = body.chunk_method;
    if (m === '') is.add('chunk_method', '`chunk_method` (empty string) is not valid', m);
    else if (typeof m !== 'string') is.add('chunk_method', 'Input should be a valid string', m);
    else if (!(DOCUMENT_CHUNK_METHODS as readonly string[]).includes(m)) is.add('chunk_method', `\`chunk_method\` ${m} doesn't exist`, m);
  }
  if ('chunk_count' in body) checkInt(is, 'chunk_count', body.chunk_count, 0);
  if ('token_count' in body) checkInt(is, 'token_count', body.token_count, 0);
  if ('progress' in body) checkFloat(is, 'progress', body.progress, 0, 1);
  if ('enabled' in body && body.enabled !== 0 && body.enabled !== 1 && body.enabled !== true && body.enabled !== false) {
    is.add('enabled', 'Input should be 0 or 1', body.enabled);
  }
  if ('meta_fields' in body) checkMetaFields(is, body.meta_fields);
  let cfg: Record<string, unknown> | null = null;
  if ('parser_config' in body && body.parser_config !== null) {
    if (!isPlainObject(body.parser_config)) is.add('parser_config', 'Input should be a valid dictionary or instance of ParserConfig', body.parser_config);
    else cfg = validateParserConfig(is, body.parser_config);
  }
  is.throwIfAny();

  if ('chunk_count' in body && body.chunk_count !== doc.chunk_num) fail('CANT_CHANGE_FIELD', 'chunk_count');
  if ('token_count' in body && body.token_count !== doc.token_num) fail('CANT_CHANGE_FIELD', 'token_count');
  if ('progress' in body && body.progress !== doc.progress) fail('CANT_CHANGE_FIELD', 'progress');

  const sets: DocumentChanges = {};
  if (typeof body.name === 'string' && body.name !== doc.name) {
    const name = body.name;
    if (utf8Length(name) > 255) fail('FILE_NAME_TOO_LONG');
    if (fileSuffix(name) !== fileSuffix(doc.name)) fail('EXTENSION_CHANGE');
    // Case-sensitive on purpose, as RAGFlow's final compare: `X.TXT` beside `x.txt` is allowed.
    if (await e.store.documents.exactNameTaken(kb.id, name, doc.id)) fail('DUPLICATED_DOCUMENT_NAME');
    sets.name = name;
    sets.location = name;
  }
  let resetChunks = false;
  if (typeof body.chunk_method === 'string' && body.chunk_method !== doc.parser_id) {
    if (doc.type === 'visual' || ['ppt', 'pptx', 'pages'].includes(doc.suffix)) fail('NOT_SUPPORTED_YET');
    sets.parser_id = body.chunk_method;
    sets.parser_config = JSON.stringify(storedParserConfig(body.chunk_method, cfg, (await e.tenantRow(ctx.tenantId)).llm_id));
    resetChunks = true;
  } else if (cfg) {
    sets.parser_config = JSON.stringify(deepMerge(JSON.parse(doc.parser_config), cfg));
  }
  if ('meta_fields' in body) sets.meta_fields = JSON.stringify(body.meta_fields);
  if ('enabled' in body) sets.status = body.enabled === 1 || body.enabled === true ? '1' : '0';
  sets.update_time = nowMs();
  // One transaction in the store: a new chunk method removes the chunks and resets the parse
  // state and counts, `enabled` switches the chunks' `available`, a new name re-titles them.
  await e.store.documents.update(doc, { changes: sets, resetChunks });
  return documentToWire((await getDocument(e, kb.id, doc.id))!);
}

function checkMetaFields(is: Issues, v: unknown): void {
  if (!isPlainObject(v)) {
    is.add('meta_fields', 'meta_fields must be a dictionary', v);
    return;
  }
  const scalar = (x: unknown) => typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x));
  for (const [k, x] of Object.entries(v)) {
    if (scalar(x) || (Array.isArray(x) && x.every(scalar))) continue;
    is.add(`meta_fields.${k}`, 'The type is not supported in list: str, int, float or list of them', x);
  }
}

export async function deleteDocuments(e: Engine, ctx: Ctx, datasetId: string, req: Record<string, unknown>): Promise<{ deleted: number }> {
  const kb = await ownedOrFail(e, ctx, datasetId, 'DATASET_NOT_OWNED_TRAILING');
  const ids = req.ids;
  const all = req.delete_all === true;
  const hasIds = Array.isArray(ids) && ids.length > 0;
  if (!hasIds && !all) fail('DELETE_DOCS_NEED_IDS', kb.id);
  if (hasIds && all) fail('DELETE_DOCS_BOTH', kb.id);
  let targets: DocumentRow[];
  if (all) targets = await e.store.documents.allOf(kb.id);
  else {
    const list = Array.from(ids as unknown[], (x) => pyStr(x));
    const seen = new Set<string>();
    const dups = [...new Set(list.filter((x) => (seen.has(x) ? true : (seen.add(x), false))))];
    if (dups.length) {
      const is = new Issues();
      is.add('ids', `Duplicate ids: '${dups.join(', ')}'`, ids);
      is.throwIfAny();
    }
    const found = await e.store.documents.getMany(kb.id, list);
    targets = list.map((id) => found.get(id)).filter((d): d is DocumentRow => !!d);
    const missing = list.filter((id) => !targets.some((d) => d.id === id));
    if (missing.length) fail('DOCS_NOT_IN_DATASET', kb.id, missing.join(', '));
  }
  // Chunks, rows, unused blobs and the dataset's counters: one transaction in the store.
  await e.store.documents.delete(kb.id, targets);
  return { deleted: targets.length };
}

export async function downloadDocument(e: Engine, ctx: Ctx, datasetId: string, documentId: string): Promise<Uint8Array> {
  const kb = await ownedOrFail(e, ctx, datasetId);
  const doc = await getDocument(e, kb.id, documentId);
  if (!doc) fail('DOWNLOAD_NOT_OWNED', documentId);
  const file = await e.store.documents.file(doc.blob_sha256);
  if (!file || file.size === 0) fail('FILE_EMPTY');
  // A copy the caller owns (the store's buffer is not kept past this read).
  return new Uint8Array(await file.bytes());
}

export { RUN_NAMES };

import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, visibleDataset, documentToWire, getDocument, uploadFileType, documentChunkMethod, RUN_NAMES, type DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkStr, checkInt, checkFloat, toNumber } from './validate.js';
import { intArg, orderColumn, paginate } from './listing.js';
import { checkMetaFields, readMetadataCondition, splitCombinedValues, truthy } from './metadata.js';
import { pyStr } from './pyfmt.js';
import { filterDocuments } from '../search/index.js';
import { FileStream, withFileInfo } from './routes.js';
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
    if (!(f.blob instanceof Uint8Array) && !isStream(f.blob)) {
      throw new ApiError(RetCode.ARGUMENT_ERROR, `${f.display_name}: \`blob\` must be a Uint8Array, a Buffer or a stream of them`);
    }
    if (utf8Length(f.display_name) > 255) fail('FILE_NAME_TOO_LONG');
  }
  const tooLarge = list
    .filter((f) => f.blob instanceof Uint8Array && f.blob.byteLength > MAX_UPLOAD_BYTES)
    .map((f) => tooLargeToStore(f.display_name as string, (f.blob as Uint8Array).byteLength));
  if (tooLarge.length) throw new ApiError(RetCode.SERVER_ERROR, tooLarge.join('\n'));
  // A name without an extension is typed by its content (below), which may need all of it (a
  // ZIP's directory is at its end): such a streamed file is read whole first. Others stream on.
  const sources = await Promise.all(list.map(async (f) => (f.blob instanceof Uint8Array || fileSuffix(f.display_name as string)
    ? f.blob as Uint8Array | AsyncIterable<Uint8Array>
    : gather(f.display_name as string, f.blob as AsyncIterable<Uint8Array>))));
  // RAGFlow types a file by its name only, and refuses a name without an extension; such a name
  // (README, LICENSE) is typed by its content here, as the parser reads it.
  const types = list.map((f, i) => uploadFileType(f.display_name as string, sources[i] instanceof Uint8Array ? sources[i] : new Uint8Array(0)));
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
  }, list.map((f, i) => ({ name: f.display_name as string, bytes: sources[i] instanceof Uint8Array ? sources[i] : capped(f.display_name as string, sources[i]!) })), ids);
  const docs = await e.store.documents.getMany(kb.id, ids);
  return ids.map((id) => documentToWire(docs.get(id)!));
}

/** An upload's bytes given as a stream: a Node Readable, a web ReadableStream, any async iterable of bytes. */
export function isStream(v: unknown): v is AsyncIterable<Uint8Array> {
  return !!v && typeof v === 'object' && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

/** The stream's pieces checked as bytes and counted: past MAX_UPLOAD_BYTES it fails (the store then keeps nothing of the upload). */
export async function* capped(name: string, source: AsyncIterable<unknown>): AsyncIterable<Uint8Array> {
  let size = 0;
  for await (const piece of source) {
    if (!(piece instanceof Uint8Array)) throw new ApiError(RetCode.ARGUMENT_ERROR, `${name}: \`blob\` must be a Uint8Array, a Buffer or a stream of them`);
    size += piece.byteLength;
    if (size > MAX_UPLOAD_BYTES) throw new ApiError(RetCode.SERVER_ERROR, tooLargeToStore(name, size));
    yield piece;
  }
}

/** A stream read whole (within MAX_UPLOAD_BYTES). */
async function gather(name: string, source: AsyncIterable<unknown>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of capped(name, source)) parts.push(p);
  return Buffer.concat(parts);
}

async function ownedOrFail(e: Engine, ctx: Ctx, datasetId: string, key: 'DATASET_NOT_OWNED' | 'DATASET_NOT_OWNED_TRAILING' = 'DATASET_NOT_OWNED') {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail(key, datasetId);
  return kb;
}

/** RAGFlow's TaskStatus names and values (SCHEDULE, 5, is a valid filter though ragloom never sets it). */
const RUN_BY_NAME: Record<string, string> = { UNSTART: '0', RUNNING: '1', CANCEL: '2', DONE: '3', FAIL: '4', SCHEDULE: '5' };
/** RAGFlow's VALID_FILE_TYPES, what a `types` filter may name. */
const FILTER_TYPES = new Set(['pdf', 'doc', 'visual', 'aural', 'virtual', 'folder', 'other']);

const queryList = (v: unknown): string[] => (v === undefined || v === null ? [] : Array.from(Array.isArray(v) ? v : [v], (x) => pyStr(x)));

/**
 * The `types` and `run` filters as RAGFlow's `_get_docs_with_request` reads them: types must be
 * file types; run values are stripped (empty ones dropped) and names map to their values.
 * Each failure names the bad values joined by ', ' (RAGFlow joins a set: one order of many).
 */
function typeAndRunFilters(q: Record<string, unknown>): { types: string[]; runs: string[] } {
  const types = queryList(q.types);
  const badTypes = [...new Set(types.filter((t) => !FILTER_TYPES.has(t)))];
  if (badTypes.length) fail('INVALID_TYPE_FILTER', badTypes.join(', '), badTypes.length > 1 ? 'types' : 'type');
  const runs = queryList(q.run).map((r) => r.trim()).filter(Boolean).map((r) => RUN_BY_NAME[r.toUpperCase()] ?? r);
  const badRuns = [...new Set(runs.filter((r) => !/^[0-5]$/.test(r)))];
  if (badRuns.length) fail('INVALID_RUN_FILTER', badRuns.join(', '));
  return { types, runs };
}

/** The `keywords` (in the name), `suffix`, `types` and `run` filters of a listing and of its `type=filter` counts. */
function nameAndStateFilters(q: Record<string, unknown>, types: string[], runs: string[]): Pick<DocumentListQuery, 'keywords' | 'suffixes' | 'types' | 'runs'> {
  const f: Pick<DocumentListQuery, 'keywords' | 'suffixes' | 'types' | 'runs'> = {};
  if (typeof q.keywords === 'string' && q.keywords) f.keywords = q.keywords.toLowerCase();
  const suffixes = queryList(q.suffix);
  if (suffixes.length) f.suffixes = suffixes.map((v) => v.replace(/^\./, '').toLowerCase());
  if (types.length) f.types = types;
  if (runs.length) f.runs = runs;
  return f;
}

export async function listDocuments(e: Engine, ctx: Ctx, datasetId: string, q: Record<string, unknown>): Promise<{ total: number; docs: Record<string, unknown>[] } | { total: number; filter: Record<string, unknown> }> {
  const kb = await ownedOrFail(e, ctx, datasetId, 'DATASET_NOT_OWNED_TRAILING');
  if (q.type === 'filter') return documentFilters(e, kb.id, q);
  // RAGFlow's order of checks: types, run, the metadata filters, id, name, then id with ids.
  const { types, runs } = typeAndRunFilters(q);
  const byMeta = await metadataFilterArg(e, kb.id, q);
  const f: Partial<DocumentListQuery> = {};
  const id = typeof q.id === 'string' && q.id ? q.id : null;
  if (id && !(await getDocument(e, kb.id, id))) fail('DOCUMENT_NOT_OWNED', id);
  if (typeof q.name === 'string' && q.name) {
    if (!(await e.store.documents.nameExists(kb.id, q.name))) fail('DOCUMENT_NOT_OWNED', q.name);
    f.name = q.name;
  }
  const ids = queryList(q.ids);
  // RAGFlow's handler returns two values where its caller unpacks four.
  if (id && ids.length) throw new ApiError(RetCode.EXCEPTION_ERROR, "ValueError('not enough values to unpack (expected 4, got 2)')");
  // The documents the ids name: `ids`, else `id`, else the metadata filters' (each replacing the
  // one before, as RAGFlow's doc_ids_filter); every other filter applies with them.
  if (ids.length) f.ids = ids;
  else if (id) f.ids = [id];
  else if (byMeta?.ids) {
    if (!byMeta.ids.size) return { total: 0, docs: [] };
    f.ids = [...byMeta.ids];
  }
  // Documents without metadata only (`return_empty_metadata`, `metadata={"empty_metadata": …}`).
  if (byMeta?.emptyOnly) f.noMetadata = true;
  Object.assign(f, nameAndStateFilters(q, types, runs));
  // As RAGFlow pages: page or page_size 0 lists everything; ordering by a field its Document has
  // not, or a negative page, fails as its query does (code 100).
  const page = intArg(q.page, 1);
  const pageSize = intArg(q.page_size, 30);
  const orderby = orderColumn('Document', q.orderby, 'create_time');
  const desc = !(q.desc === false || q.desc === 'false' || q.desc === 'False');
  const { limit, offset } = page && pageSize ? paginate(page, pageSize) : { limit: -1, offset: 0 };
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
  if ('name' in body && body.name !== null) checkStr(is, 'name', body.name); // `str | None`
  if ('chunk_method' in body) {
    const m = body.chunk_method;
    // "" passes the request model; the handler refuses it after the immutable fields (below).
    if (m === '' || m === null) { /* checked later */ }
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

  // RAGFlow compares only values that are set and not zero (`if update_doc_req.chunk_count and …`).
  if (truthy(body.chunk_count) && body.chunk_count !== doc.chunk_num) fail('CANT_CHANGE_FIELD', 'chunk_count');
  if (truthy(body.token_count) && body.token_count !== doc.token_num) fail('CANT_CHANGE_FIELD', 'token_count');
  if (truthy(body.progress) && Math.abs((body.progress as number) - doc.progress) > 1e-9) fail('CANT_CHANGE_FIELD', 'progress');

  const sets: DocumentChanges = {};
  // validate_document_name(None) answers the AttributeError its `.encode` would raise.
  if ('name' in body && body.name === null) throw new ApiError(RetCode.EXCEPTION_ERROR, "AttributeError('NoneType' object has no attribute 'encode')", { bare: true });
  if (typeof body.name === 'string' && body.name !== doc.name) {
    const name = body.name;
    if (utf8Length(name) > 255) fail('FILE_NAME_TOO_LONG');
    if (fileSuffix(name) !== fileSuffix(doc.name)) fail('EXTENSION_CHANGE');
    // Case-sensitive on purpose, as RAGFlow's final compare: `X.TXT` beside `x.txt` is allowed.
    if (await e.store.documents.exactNameTaken(kb.id, name, doc.id)) fail('DUPLICATED_DOCUMENT_NAME');
    sets.name = name;
    sets.location = name;
  }
  if ('chunk_method' in body && body.chunk_method !== null) {
    if (body.chunk_method === '') fail('CHUNK_METHOD_EMPTY');
    if (doc.type === 'visual' || ['ppt', 'pptx', 'pages'].includes(doc.suffix)) fail('NOT_SUPPORTED_YET');
  }
  let resetChunks = false;
  if (typeof body.chunk_method === 'string' && body.chunk_method !== doc.parser_id) {
    sets.parser_id = body.chunk_method;
    sets.parser_config = JSON.stringify(storedParserConfig(body.chunk_method, cfg, (await e.tenantRow(ctx.tenantId)).llm_id));
    resetChunks = true;
  } else if (cfg) {
    const merged = deepMerge(JSON.parse(doc.parser_config) as Record<string, unknown>, cfg);
    // RAGFlow's update_parser_config drops the document's raptor settings when the update has none.
    if (!truthy(cfg.raptor)) delete merged.raptor;
    sets.parser_config = JSON.stringify(merged);
  }
  if ('meta_fields' in body) sets.meta_fields = JSON.stringify(isPlainObject(body.meta_fields) ? splitCombinedValues(body.meta_fields) : {});
  if ('enabled' in body) sets.status = body.enabled === 1 || body.enabled === true ? '1' : '0';
  sets.update_time = nowMs();
  // One transaction in the store: a new chunk method removes the chunks and resets the parse
  // state and counts, `enabled` switches the chunks' `available`, a new name re-titles them.
  await e.store.documents.update(doc, { changes: sets, resetChunks });
  return documentToWire((await getDocument(e, kb.id, doc.id))!);
}

/**
 * The documents a listing's `metadata_condition` / `metadata` / `return_empty_metadata` query
 * values allow (document_api `_parse_doc_id_filter_with_metadata`), or null for no filter. Both
 * are JSON text; a value that does not parse, or is not an object, is 102. `metadata` is
 * `{key: value | [values]}`: any of a key's values, every key.
 */
/**
 * The metadata filters of a document listing (`metadata_condition`, `metadata`,
 * `return_empty_metadata`): the documents they allow (`ids`, null: no such filter) and whether only
 * documents without metadata are listed (then the two filters are ignored, as in RAGFlow).
 */
async function metadataFilterArg(e: Engine, datasetId: string, q: Record<string, unknown>): Promise<{ ids: Set<string> | null; emptyOnly: boolean }> {
  const json = (key: string, bad: string): unknown => {
    const raw = q[key];
    if (raw === undefined || raw === null) return {};
    if (typeof raw !== 'string') return raw; // an in-process caller's object
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new ApiError(RetCode.DATA_ERROR, bad.replace('%s', raw));
    }
  };
  let emptyOnly = q.return_empty_metadata === true || (typeof q.return_empty_metadata === 'string' && q.return_empty_metadata.toLowerCase() === 'true');
  let condition = json('metadata_condition', 'metadata_condition must be valid JSON: %s.');
  let metadata = json('metadata', 'metadata must be valid JSON.');
  if (isPlainObject(metadata) && truthy(metadata.empty_metadata)) {
    emptyOnly = true;
    metadata = Object.fromEntries(Object.entries(metadata).filter(([k]) => k !== 'empty_metadata'));
  }
  const rows = () => e.store.documents.metaFieldsOf(datasetId);
  if (emptyOnly) return { ids: null, emptyOnly };
  if (truthy(condition) && !isPlainObject(condition)) throw new ApiError(RetCode.DATA_ERROR, 'metadata_condition must be an object.');
  if (truthy(metadata) && !isPlainObject(metadata)) throw new ApiError(RetCode.DATA_ERROR, 'metadata must be an object.');
  if (!truthy(condition)) condition = null;
  if (!truthy(metadata)) metadata = null;
  if (!condition && !metadata) return { ids: null, emptyOnly };
  const docs = await rows();
  let allowed: Set<string> | null = null;
  const filter = readMetadataCondition(condition);
  if (filter) allowed = filterDocuments(docs, filter);
  if (metadata) {
    const metas = docs.map((r) => ({ id: r.id, meta: JSON.parse(r.meta_fields) as Record<string, unknown> }));
    let byKeys = null as Set<string> | null;
    for (const [key, given] of Object.entries(metadata as Record<string, unknown>)) {
      if (!truthy(given)) continue;
      const wanted = (Array.isArray(given) ? given : [given]).filter((v) => v !== null && v !== undefined && pyStr(v).trim()).map((v) => pyStr(v));
      if (!wanted.length) continue;
      const hit = new Set(metas.filter((d) => {
        const v = d.meta[key];
        return (Array.isArray(v) ? v : [v]).some((x) => x !== null && x !== undefined && wanted.includes(pyStr(x)));
      }).map((d) => d.id));
      byKeys = byKeys ? new Set([...byKeys].filter((id) => hit.has(id))) : hit;
      if (!byKeys.size) return { ids: byKeys, emptyOnly };
    }
    const keys = byKeys;
    if (keys) allowed = allowed ? new Set([...allowed].filter((id) => keys.has(id))) : keys;
  }
  return { ids: allowed, emptyOnly };
}

/**
 * `GET /datasets/{id}/documents?type=filter` (RAGFlow's get_filter_by_kb_id): how many of the
 * documents that `keywords`, `run`, `types` and `suffix` select have each suffix, each run status
 * and each metadata value (`empty_metadata`: how many have none), and their total.
 */
async function documentFilters(e: Engine, datasetId: string, q: Record<string, unknown>): Promise<{ total: number; filter: Record<string, unknown> }> {
  const { types, runs } = typeAndRunFilters(q);
  const rows = await e.store.documents.facetRows(datasetId, nameAndStateFilters(q, types, runs));
  const suffix: Record<string, number> = {};
  const run: Record<string, number> = {};
  const metadata: Record<string, Record<string, number>> = {};
  let empty = 0;
  for (const r of rows) {
    suffix[r.suffix] = (suffix[r.suffix] ?? 0) + 1;
    run[r.run] = (run[r.run] ?? 0) + 1;
    let counted = false;
    for (const [key, value] of Object.entries(JSON.parse(r.meta_fields) as Record<string, unknown>)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (v === null || v === undefined || (typeof v === 'string' && !v.trim())) continue;
        const text = pyStr(v);
        (metadata[key] ??= {})[text] = (metadata[key]![text] ?? 0) + 1;
        counted = true;
      }
    }
    if (!counted) empty++;
  }
  metadata.empty_metadata = { true: empty };
  return { total: rows.length, filter: { suffix, run_status: run, metadata } };
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

export async function downloadDocument(e: Engine, ctx: Ctx, datasetId: string, documentId: string, streamed = false): Promise<Uint8Array | FileStream> {
  // RAGFlow looks up the (dataset, document) pair only: a dataset that is unknown, or not the
  // caller's (which ragloom checks and RAGFlow does not), is an unknown document.
  const kb = await ownedDataset(e, ctx, datasetId);
  const doc = kb ? await getDocument(e, kb.id, documentId) : undefined;
  if (!doc) fail('DOWNLOAD_NOT_OWNED', documentId);
  const file = await e.store.documents.file(doc.blob_sha256);
  if (!file || file.size === 0) fail('FILE_EMPTY');
  if (streamed) return new FileStream(file.size, file.stream(), { name: doc.name });
  // A copy the caller owns (the store's buffer is not kept past this read).
  return withFileInfo(new Uint8Array(await file.bytes()), { name: doc.name });
}

export { RUN_NAMES };

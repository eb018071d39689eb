import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, visibleDataset, refreshDatasetCounts, documentToWire, getDocument, uploadFileType, documentChunkMethod, RUN, RUN_NAMES, type DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkStr, checkInt, checkFloat, toNumber } from './validate.js';
import { intArg, orderColumn, paginate } from './listing.js';
import { checkMetaFields, readMetadataCondition, splitCombinedValues, truthy } from './metadata.js';
import { pyStr } from './pyfmt.js';
import { filterDocuments } from '../search/index.js';
import { withFileInfo } from './routes.js';
import { DOCUMENT_CHUNK_METHODS, validateParserConfig, storedParserConfig } from './parser-config.js';
import { newId, nowMs, duplicateName, fileSuffix, utf8Length, deepMerge, isPlainObject, pyListRepr, faultPoint } from '../util/index.js';
import { putBlob, getBlob, pruneBlobs, removeDocumentChunks, retitleDocumentChunks, cachedStatement } from '../store/index.js';

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

export function uploadDocuments(e: Engine, ctx: Ctx, datasetId: string, files: unknown): Record<string, unknown>[] {
  const kb = visibleDataset(e, ctx, datasetId);
  if (!kb) {
    if (!e.db.prepare('SELECT 1 FROM dataset WHERE id = ?').get(datasetId)) fail('DATASET_NOT_FOUND_BY_ID', datasetId);
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

  const t = nowMs();
  const ids: string[] = [];
  e.tx(() => {
    // Names compare as RAGFlow's MySQL collation does: case-insensitively. One lookup in the
    // (dataset_id, name COLLATE NOCASE) index per candidate name: 10,000 files into a dataset of
    // 10,000 cost 20,000 index probes, not 10,000 scans of the dataset's documents.
    const taken = cachedStatement(e.db, 'SELECT 1 FROM document WHERE dataset_id = ? AND name = ? COLLATE NOCASE');
    const insert = cachedStatement(e.db, `INSERT INTO document (id, dataset_id, name, suffix, type, size, blob_sha256, location, parser_id, parser_config,
          created_by, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    // Where each name's search for a free one stopped in this call: 10,000 files all named
    // `notes.txt` probe about 10,000 names, not 1 + 2 + … + 10,000 (the names before it are taken).
    const last = new Map<string, string>();
    for (const [i, f] of list.entries()) {
      const name = duplicateName(last.get(f.display_name as string) ?? (f.display_name as string), (n) => !!taken.get(kb.id, n), true);
      last.set(f.display_name as string, name);
      const blob = f.blob as Uint8Array;
      const sha = putBlob(e.db, blob);
      faultPoint('upload:blob-written');
      const suffix = fileSuffix(name);
      const method = documentChunkMethod(suffix, kb.parser_id, types[i]);
      const id = newId();
      ids.push(id);
      insert.run(id, kb.id, name, suffix, types[i], blob.length, sha, name, method, kb.parser_config, ctx.userId, t, t);
      faultPoint('upload:row-written');
    }
    // New documents have no chunks: the counters move by the number of files, no count over the dataset.
    cachedStatement(e.db, 'UPDATE dataset SET doc_num = doc_num + ?, update_time = ? WHERE id = ?').run(list.length, t, kb.id);
    faultPoint('upload:counted');
  });
  faultPoint('upload:committed');
  return ids.map((id) => documentToWire(getDocument(e, kb.id, id)!));
}

function ownedOrFail(e: Engine, ctx: Ctx, datasetId: string, key: 'DATASET_NOT_OWNED' | 'DATASET_NOT_OWNED_TRAILING' = 'DATASET_NOT_OWNED') {
  const kb = ownedDataset(e, ctx, datasetId);
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

/** The `keywords` (in the name), `suffix`, `types` and `run` filters, as conditions on `document`. */
function nameAndStateFilters(q: Record<string, unknown>, types: string[], runs: string[], where: string[], p: Record<string, unknown>): void {
  if (typeof q.keywords === 'string' && q.keywords) {
    // instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
    where.push('instr(LOWER(name), @kw) > 0');
    p.kw = q.keywords.toLowerCase();
  }
  const suffixes = queryList(q.suffix);
  if (suffixes.length) {
    where.push('suffix IN (SELECT value FROM json_each(@sf))');
    p.sf = JSON.stringify(suffixes.map((v) => v.replace(/^\./, '').toLowerCase()));
  }
  if (types.length) {
    where.push('type IN (SELECT value FROM json_each(@ty))');
    p.ty = JSON.stringify(types);
  }
  if (runs.length) {
    where.push('run IN (SELECT value FROM json_each(@runs))');
    p.runs = JSON.stringify(runs);
  }
}

export function listDocuments(e: Engine, ctx: Ctx, datasetId: string, q: Record<string, unknown>): { total: number; docs: Record<string, unknown>[] } | { total: number; filter: Record<string, unknown> } {
  const kb = ownedOrFail(e, ctx, datasetId, 'DATASET_NOT_OWNED_TRAILING');
  if (q.type === 'filter') return documentFilters(e, kb.id, q);
  // RAGFlow's order of checks: types, run, the metadata filters, id, name, then id with ids.
  const { types, runs } = typeAndRunFilters(q);
  const byMeta = metadataFilterArg(e, kb.id, q);
  const where = ['dataset_id = @ds'];
  const p: Record<string, unknown> = { ds: kb.id };
  const id = typeof q.id === 'string' && q.id ? q.id : null;
  if (id && !getDocument(e, kb.id, id)) fail('DOCUMENT_NOT_OWNED', id);
  if (typeof q.name === 'string' && q.name) {
    if (!e.db.prepare('SELECT 1 FROM document WHERE dataset_id = ? AND name = ? COLLATE NOCASE').get(kb.id, q.name)) fail('DOCUMENT_NOT_OWNED', q.name);
    where.push('name = @name COLLATE NOCASE');
    p.name = q.name;
  }
  const ids = queryList(q.ids);
  // RAGFlow's handler returns two values where its caller unpacks four.
  if (id && ids.length) throw new ApiError(RetCode.EXCEPTION_ERROR, "ValueError('not enough values to unpack (expected 4, got 2)')");
  // The documents the ids name: `ids`, else `id`, else the metadata filters' (each replacing the
  // one before, as RAGFlow's doc_ids_filter); every other filter applies with them.
  if (ids.length) {
    // Lists go in as one JSON parameter: one placeholder each would stop at SQLite's 32,766 variables.
    where.push('id IN (SELECT value FROM json_each(@ids))');
    p.ids = JSON.stringify(ids);
    // Looked up by id, not by scanning the dataset's index (10,000 documents: ~20 ms a page).
    where[0] = '+dataset_id = @ds';
  } else if (id) {
    where.push('id = @id');
    p.id = id;
  } else if (byMeta?.ids) {
    if (!byMeta.ids.size) return { total: 0, docs: [] };
    where.push('id IN (SELECT value FROM json_each(@meta))');
    p.meta = JSON.stringify([...byMeta.ids]);
  }
  // Documents without metadata only (`return_empty_metadata`, `metadata={"empty_metadata": …}`).
  if (byMeta?.emptyOnly) where.push("meta_fields = '{}'");
  nameAndStateFilters(q, types, runs, where, p);
  // As RAGFlow pages: page or page_size 0 lists everything; ordering by a field its Document has
  // not, or a negative page, fails as its query does (code 100).
  const page = intArg(q.page, 1);
  const pageSize = intArg(q.page_size, 30);
  const orderby = orderColumn('Document', q.orderby, 'create_time');
  const desc = !(q.desc === false || q.desc === 'false' || q.desc === 'False');
  const whereSql = where.join(' AND ');
  const total = (e.db.prepare(`SELECT COUNT(*) AS n FROM document WHERE ${whereSql}`).get(p) as { n: number }).n;
  const { limit, offset } = page && pageSize ? paginate(page, pageSize) : { limit: -1, offset: 0 };
  let rows = e.db.prepare(`SELECT * FROM document WHERE ${whereSql} ORDER BY ${orderby} ${desc ? 'DESC' : 'ASC'}, rowid ${desc ? 'DESC' : 'ASC'}
    LIMIT @limit OFFSET @offset`).all({ ...p, limit, offset }) as DocumentRow[];
  // RAGFlow applies the time window after paging; we keep that.
  const from = toNumber(q.create_time_from ?? 0);
  const to = toNumber(q.create_time_to ?? 0);
  if (from > 0 || to > 0) rows = rows.filter((r) => (from <= 0 || r.create_time >= from) && (to <= 0 || r.create_time <= to));
  return { total, docs: rows.map(documentToWire) };
}

const DOC_UPDATE_FIELDS = ['name', 'display_name', 'chunk_method', 'parser_config', 'meta_fields', 'enabled', 'chunk_count', 'token_count', 'progress'];

export function updateDocument(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Record<string, unknown> {
  const kb = ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED_NO_ID');
  const doc = getDocument(e, kb.id, documentId);
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

  const sets: Record<string, unknown> = {};
  // validate_document_name(None) answers the AttributeError its `.encode` would raise.
  if ('name' in body && body.name === null) throw new ApiError(RetCode.EXCEPTION_ERROR, "AttributeError('NoneType' object has no attribute 'encode')", { bare: true });
  if (typeof body.name === 'string' && body.name !== doc.name) {
    const name = body.name;
    if (utf8Length(name) > 255) fail('FILE_NAME_TOO_LONG');
    if (fileSuffix(name) !== fileSuffix(doc.name)) fail('EXTENSION_CHANGE');
    // Case-sensitive on purpose, as RAGFlow's final compare: `X.TXT` beside `x.txt` is allowed.
    const clash = (e.db.prepare('SELECT name FROM document WHERE dataset_id = ? AND id != ?').all(kb.id, doc.id) as { name: string }[])
      .some((d) => d.name === name);
    if (clash) fail('DUPLICATED_DOCUMENT_NAME');
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
    sets.parser_config = JSON.stringify(storedParserConfig(body.chunk_method, cfg, e.tenant(ctx.tenantId).llm_id));
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
  e.tx(() => {
    if (resetChunks) {
      removeDocumentChunks(e.db, [doc.id]);
      Object.assign(sets, { run: RUN.UNSTART, progress: 0, progress_msg: '', chunk_num: 0, token_num: 0, process_duration: 0 });
    }
    const cols = Object.keys(sets);
    e.db.prepare(`UPDATE document SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`).run({ ...sets, id: doc.id });
    if ('status' in sets) e.db.prepare('UPDATE chunk SET available = ? WHERE document_id = ?').run(sets.status === '1' ? 1 : 0, doc.id);
    if (typeof sets.name === 'string' && !resetChunks) retitleDocumentChunks(e.db, doc.id, sets.name);
    if (resetChunks) refreshDatasetCounts(e, kb.id);
  });
  return documentToWire(getDocument(e, kb.id, doc.id)!);
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
function metadataFilterArg(e: Engine, datasetId: string, q: Record<string, unknown>): { ids: Set<string> | null; emptyOnly: boolean } {
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
  const rows = () => e.db.prepare('SELECT id, meta_fields FROM document WHERE dataset_id = ?').all(datasetId) as Array<{ id: string; meta_fields: string }>;
  if (emptyOnly) return { ids: null, emptyOnly };
  if (truthy(condition) && !isPlainObject(condition)) throw new ApiError(RetCode.DATA_ERROR, 'metadata_condition must be an object.');
  if (truthy(metadata) && !isPlainObject(metadata)) throw new ApiError(RetCode.DATA_ERROR, 'metadata must be an object.');
  if (!truthy(condition)) condition = null;
  if (!truthy(metadata)) metadata = null;
  if (!condition && !metadata) return { ids: null, emptyOnly };
  const docs = rows();
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
function documentFilters(e: Engine, datasetId: string, q: Record<string, unknown>): { total: number; filter: Record<string, unknown> } {
  const { types, runs } = typeAndRunFilters(q);
  const where = ['dataset_id = @ds'];
  const p: Record<string, unknown> = { ds: datasetId };
  nameAndStateFilters(q, types, runs, where, p);
  const rows = e.db.prepare(`SELECT suffix, run, meta_fields FROM document WHERE ${where.join(' AND ')} ORDER BY rowid`).all(p) as Array<{ suffix: string; run: string; meta_fields: string }>;
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

export function deleteDocuments(e: Engine, ctx: Ctx, datasetId: string, req: Record<string, unknown>): { deleted: number } {
  const kb = ownedOrFail(e, ctx, datasetId, 'DATASET_NOT_OWNED_TRAILING');
  const ids = req.ids;
  const all = req.delete_all === true;
  const hasIds = Array.isArray(ids) && ids.length > 0;
  if (!hasIds && !all) fail('DELETE_DOCS_NEED_IDS', kb.id);
  if (hasIds && all) fail('DELETE_DOCS_BOTH', kb.id);
  let targets: DocumentRow[];
  if (all) targets = e.db.prepare('SELECT * FROM document WHERE dataset_id = ?').all(kb.id) as DocumentRow[];
  else {
    const list = Array.from(ids as unknown[], (x) => pyStr(x));
    const seen = new Set<string>();
    const dups = [...new Set(list.filter((x) => (seen.has(x) ? true : (seen.add(x), false))))];
    if (dups.length) {
      const is = new Issues();
      is.add('ids', `Duplicate ids: '${dups.join(', ')}'`, ids);
      is.throwIfAny();
    }
    targets = list.map((id) => getDocument(e, kb.id, id)).filter((d): d is DocumentRow => !!d);
    const missing = list.filter((id) => !targets.some((d) => d.id === id));
    if (missing.length) fail('DOCS_NOT_IN_DATASET', kb.id, missing.join(', '));
  }
  e.tx(() => {
    removeDocumentChunks(e.db, targets.map((d) => d.id));
    faultPoint('documents.delete:chunks-removed');
    const del = e.db.prepare('DELETE FROM document WHERE id = ?');
    for (const d of targets) del.run(d.id);
    faultPoint('documents.delete:rows-deleted');
    pruneBlobs(e.db, targets.map((d) => d.blob_sha256));
    faultPoint('documents.delete:blobs-pruned');
    refreshDatasetCounts(e, kb.id);
  });
  faultPoint('documents.delete:committed');
  return { deleted: targets.length };
}

export function downloadDocument(e: Engine, ctx: Ctx, datasetId: string, documentId: string): Uint8Array {
  // RAGFlow looks up the (dataset, document) pair only: a dataset that is unknown, or not the
  // caller's (which ragloom checks and RAGFlow does not), is an unknown document.
  const kb = ownedDataset(e, ctx, datasetId);
  const doc = kb ? getDocument(e, kb.id, documentId) : undefined;
  if (!doc) fail('DOWNLOAD_NOT_OWNED', documentId);
  const data = getBlob(e.db, doc.blob_sha256);
  if (!data || data.length === 0) fail('FILE_EMPTY');
  return withFileInfo(new Uint8Array(data), { name: doc.name });
}

export { RUN_NAMES };

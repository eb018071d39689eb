import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, visibleDataset, refreshDatasetCounts, documentToWire, getDocument, uploadFileType, documentChunkMethod, RUN, RUN_NAMES, type DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkStr, checkInt, checkFloat, toNumber, sqlCount } from './validate.js';
import { pyStr } from './pyfmt.js';
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

const RUN_BY_NAME: Record<string, string> = { UNSTART: '0', RUNNING: '1', CANCEL: '2', DONE: '3', FAIL: '4' };

export function listDocuments(e: Engine, ctx: Ctx, datasetId: string, q: Record<string, unknown>): { total: number; docs: Record<string, unknown>[] } {
  const kb = ownedOrFail(e, ctx, datasetId, 'DATASET_NOT_OWNED_TRAILING');
  if (q.id !== undefined && q.id !== null && q.ids !== undefined && q.ids !== null) fail('ID_AND_IDS');
  const where = ['dataset_id = @ds'];
  const p: Record<string, unknown> = { ds: kb.id };
  // An id, a name and the other filters all apply, each id and name checked first (RAGFlow's
  // list_docs): an id and the name of another document list nothing.
  if (typeof q.id === 'string' && q.id) {
    if (!getDocument(e, kb.id, q.id)) fail('DOCUMENT_NOT_OWNED', q.id);
    where.push('id = @id');
    p.id = q.id;
  }
  if (typeof q.name === 'string' && q.name) {
    if (!e.db.prepare('SELECT 1 FROM document WHERE dataset_id = ? AND name = ? COLLATE NOCASE').get(kb.id, q.name)) fail('DOCUMENT_NOT_OWNED', q.name);
    where.push('name = @name COLLATE NOCASE');
    p.name = q.name;
  }
  if (Array.isArray(q.ids) && q.ids.length) {
    // Lists go in as one JSON parameter: one placeholder each would stop at SQLite's 32,766 variables.
    where.push('id IN (SELECT value FROM json_each(@ids))');
    p.ids = JSON.stringify(Array.from(q.ids, (v) => pyStr(v)));
    // Looked up by id, not by scanning the dataset's index (10,000 documents: ~20 ms a page).
    where[0] = '+dataset_id = @ds';
  }
  if (typeof q.keywords === 'string' && q.keywords) {
    // instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
    where.push('instr(LOWER(name), @kw) > 0');
    p.kw = q.keywords.toLowerCase();
  }
  if (Array.isArray(q.suffix) && q.suffix.length) {
    where.push('suffix IN (SELECT value FROM json_each(@sf))');
    p.sf = JSON.stringify(Array.from(q.suffix, (v) => pyStr(v).replace(/^\./, '').toLowerCase()));
  }
  if (Array.isArray(q.types) && q.types.length) {
    where.push('type IN (SELECT value FROM json_each(@ty))');
    p.ty = JSON.stringify(Array.from(q.types, (v) => pyStr(v)));
  }
  if (q.run !== undefined && q.run !== null) {
    const runs = Array.from(Array.isArray(q.run) ? q.run : [q.run], (r) => pyStr(r));
    const mapped = runs.map((r) => (/^[0-4]$/.test(r) ? r : RUN_BY_NAME[r.toUpperCase()]));
    if (mapped.some((m) => m === undefined)) fail('INVALID_RUN_FILTER', pyListRepr(runs));
    if (mapped.length) {
      where.push('run IN (SELECT value FROM json_each(@runs))');
      p.runs = JSON.stringify(mapped);
    }
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
  const whereSql = where.join(' AND ');
  const total = (e.db.prepare(`SELECT COUNT(*) AS n FROM document WHERE ${whereSql}`).get(p) as { n: number }).n;
  const limit = pageSize === 0 ? -1 : sqlCount(pageSize as number);
  let rows = e.db.prepare(`SELECT * FROM document WHERE ${whereSql} ORDER BY ${orderby as string} ${desc ? 'DESC' : 'ASC'}, rowid ${desc ? 'DESC' : 'ASC'}
    LIMIT @limit OFFSET @offset`).all({ ...p, limit, offset: pageSize === 0 ? 0 : sqlCount(((page as number) - 1) * (pageSize as number)) }) as DocumentRow[];
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

  const sets: Record<string, unknown> = {};
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
  let resetChunks = false;
  if (typeof body.chunk_method === 'string' && body.chunk_method !== doc.parser_id) {
    if (doc.type === 'visual' || ['ppt', 'pptx', 'pages'].includes(doc.suffix)) fail('NOT_SUPPORTED_YET');
    sets.parser_id = body.chunk_method;
    sets.parser_config = JSON.stringify(storedParserConfig(body.chunk_method, cfg, e.tenant(ctx.tenantId).llm_id));
    resetChunks = true;
  } else if (cfg) {
    sets.parser_config = JSON.stringify(deepMerge(JSON.parse(doc.parser_config), cfg));
  }
  if ('meta_fields' in body) sets.meta_fields = JSON.stringify(body.meta_fields);
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
  const kb = ownedOrFail(e, ctx, datasetId);
  const doc = getDocument(e, kb.id, documentId);
  if (!doc) fail('DOWNLOAD_NOT_OWNED', documentId);
  const data = getBlob(e.db, doc.blob_sha256);
  if (!data || data.length === 0) fail('FILE_EMPTY');
  return new Uint8Array(data);
}

export { RUN_NAMES };

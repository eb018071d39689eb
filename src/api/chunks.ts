import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, getDocument, documentToWire, type DatasetRow, type DocumentRow, chunkToWire, chunkVectors } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr, pyRepr } from './pyfmt.js';
import { intArg, pyIntOf } from './listing.js';
import { sqlCount } from './validate.js';
import { chunkId, formatDateTime, faultPoint } from '../util/index.js';
import { countTokens, analyze, languageSetting, questionLanguage } from '../text/index.js';
import { highlight } from '../search/index.js';

async function guard(e: Engine, ctx: Ctx, datasetId: string, documentId: string): Promise<{ kb: DatasetRow; doc: DocumentRow }> {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const doc = await getDocument(e, kb.id, documentId);
  if (!doc) fail('DOCUMENT_NOT_OWNED', documentId);
  return { kb, doc };
}

function titleWeight(cfg: string): number {
  const w = (JSON.parse(cfg) as { filename_embd_weight?: unknown }).filename_embd_weight;
  return typeof w === 'number' && w >= 0 && w <= 1 ? w : 0.1;
}

/** The bytes of an `image_base64` (RAGFlow's b64decode), or undefined when none is given. */
function imageOf(v: unknown): Uint8Array | undefined {
  if (v === undefined || v === null || v === '' || v === false) return undefined;
  if (typeof v !== 'string') throw new ApiError(RetCode.EXCEPTION_ERROR, `TypeError("argument should be a bytes-like object or ASCII string, not '${pyType(v)}'")`);
  const s = v.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw new ApiError(RetCode.EXCEPTION_ERROR, "Error('Incorrect padding')");
  return new Uint8Array(Buffer.from(s, 'base64'));
}

function checkStrListField(v: unknown, notList: Parameters<typeof fail>[0]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(notList);
  return Array.from(v) as string[]; // holes of a sparse array read as None, as JSON has no holes
}

export async function addChunk(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { kb, doc } = await guard(e, ctx, datasetId, documentId);
  if (typeof req.content !== 'string' || !req.content.trim()) fail('CONTENT_REQUIRED');
  const kw = checkStrListField(req.important_keywords, 'IMPORTANT_KEYWORDS_LIST');
  const qs = checkStrListField(req.questions, 'QUESTIONS_LIST');
  const tags = checkStrListField(req.tag_kwd, 'TAG_KWD_LIST');
  if (tags.some((t) => typeof t !== 'string')) fail('TAG_KWD_STRINGS');
  if (kw.some((t) => typeof t !== 'string') || qs.some((t) => typeof t !== 'string')) {
    const bad = [...kw, ...qs].find((t) => typeof t !== 'string');
    throw new ApiError(RetCode.EXCEPTION_ERROR, `TypeError('sequence item 0: expected str instance, ${pyType(bad)} found')`);
  }
  const questions = qs.map((q) => q.trim()).filter(Boolean);
  const content = req.content;
  const id = chunkId(content, doc.id);
  const image = imageOf(req.image_base64);
  const embedText = questions.length ? questions.join('\n') : content;
  const [vector] = await chunkVectors(e, kb.embd_id, doc.name, [embedText], titleWeight(doc.parser_config));
  faultPoint('chunks.add:embedded');
  const now = Date.now();
  // Embedding awaited outside; the document may have been deleted meanwhile (by this process or
  // another one on the same file): the store checks it again as it writes, analyses the chunk in
  // the dataset's language as it is then, keeps its image and moves the counters by one chunk
  // (RAGFlow's increment_chunk_num: adding the same content twice counts twice).
  const row = await e.store.chunks.add(kb.id, {
    // No title terms: RAGFlow gives the document's name to parsed chunks only.
    id, document_id: doc.id, dataset_id: kb.id, content, title: '', important_keywords: kw, questions, tag_kwd: tags,
    positions: [], available: true, token_num: countTokens(content),
    create_time: formatDateTime(now), create_timestamp: now / 1000, vector: vector!,
  }, image);
  if (!row) fail('DOCUMENT_NOT_OWNED', documentId);
  const w = chunkToWire(row, doc.name);
  return {
    id: w.id, content: w.content, document_id: w.document_id, important_keywords: w.important_keywords, tag_kwd: w.tag_kwd,
    questions: w.questions, dataset_id: w.dataset_id, create_timestamp: w.create_timestamp, create_time: w.create_time, image_id: w.image_id,
    available: w.available, positions: w.positions, docnm_kwd: doc.name, document_keyword: doc.name,
  };
}

/** The sort keys of a chunk's positions `[[page, x0, x1, top, bottom], …]`: its first one's page and top. */
function positionKeys(positions: unknown[]): { page_num: number; top: number } {
  const p = positions[0];
  const page = Array.isArray(p) ? Number(p[0]) : NaN;
  const top = Array.isArray(p) ? Number(p[3]) : NaN;
  return Number.isFinite(page) ? { page_num: page, top: Number.isFinite(top) ? top : 0 } : { page_num: 0, top: 0 };
}

const pyType = (v: unknown): string => (typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : v === null || v === undefined ? 'NoneType' : Array.isArray(v) ? 'list' : typeof v === 'object' ? 'dict' : typeof v === 'boolean' ? 'bool' : 'str');

export async function listChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, q: Record<string, unknown>): Promise<{ total: number; chunks: Record<string, unknown>[]; doc: Record<string, unknown> }> {
  const { kb, doc } = await guard(e, ctx, datasetId, documentId);
  const docWire = documentToWire(doc);
  if (typeof q.id === 'string' && q.id) {
    const row = await e.store.chunks.get(doc.id, q.id);
    if (!row) fail('CHUNK_NOT_FOUND', kb.id, q.id);
    return { total: 1, chunks: [chunkToWire(row, doc.name)], doc: docWire };
  }
  // RAGFlow pages the search with `from = (page − 1) · size`: a page below 1 is a negative slice,
  // which its Elasticsearch client refuses (code 100); a size of 0 or less takes no slice (all here).
  const page = intArg(q.page, 1);
  const pageSize = intArg(q.page_size, 30);
  if (page < 1 && pageSize > 0) throw new ApiError(RetCode.EXCEPTION_ERROR, "ValueError('Search does not support negative slicing.')");
  const limit = pageSize <= 0 ? -1 : sqlCount(pageSize);
  const offset = pageSize <= 0 ? 0 : sqlCount((page - 1) * pageSize);
  // `available=true|false` (any other value is false): only chunks switched on / off.
  const avail = q.available === undefined || q.available === null ? null : q.available === true || q.available === 'true' ? 1 : 0;
  const keywords = typeof q.keywords === 'string' ? q.keywords.trim() : '';
  if (keywords) {
    const terms = [...new Set(analyze(keywords, questionLanguage([languageSetting(kb.language)], keywords)))];
    if (terms.length === 0) return { total: 0, chunks: [], doc: docWire };
    // Every field RAGFlow's full-text query reads, the title too: a parsed chunk has its document's
    // name there, one added through the API none (`chunk.titled`), as in RAGFlow.
    const { total, rows } = await e.store.chunks.search(doc.id, terms, limit, offset, avail);
    return {
      total,
      chunks: rows.map((r) => ({ ...chunkToWire(r, doc.name), content: highlight(r.content, keywords) ?? r.content })),
      doc: docWire,
    };
  }
  // By position, as RAGFlow sorts page_num_int and top_int (ChunkStore.list).
  const { total, rows } = await e.store.chunks.list(doc.id, limit, offset, avail);
  return { total, chunks: rows.map((r) => chunkToWire(r, doc.name)), doc: docWire };
}

export async function updateChunk(e: Engine, ctx: Ctx, datasetId: string, documentId: string, chunkIdArg: string, req: Record<string, unknown>): Promise<void> {
  const { kb, doc } = await guard(e, ctx, datasetId, documentId);
  const row = await e.store.chunks.get(doc.id, chunkIdArg);
  if (!row) fail('CANT_FIND_CHUNK', chunkIdArg);
  let content = row.content;
  if (req.content !== undefined && req.content !== null) {
    if (typeof req.content !== 'string' || !req.content.trim()) fail('CONTENT_REQUIRED');
    content = req.content;
  }
  const list = (k: string, notList: Parameters<typeof fail>[0], cur: string): unknown[] => {
    if (req[k] === undefined || req[k] === null) return JSON.parse(cur) as unknown[];
    if (!Array.isArray(req[k])) fail(notList);
    return Array.from(req[k] as unknown[]); // holes read as None
  };
  const kw = list('important_keywords', 'KEYWORDS_SHOULD_BE_LIST', row.important_keywords);
  const qs = list('questions', 'QUESTIONS_SHOULD_BE_LIST', row.questions);
  const positions = list('positions', 'POSITIONS_SHOULD_BE_LIST', row.positions);
  const tags = list('tag_kwd', 'TAG_KWD_SHOULD_BE_LIST', row.tag_kwd);
  if (tags.some((t) => typeof t !== 'string')) fail('TAG_KWD_STRINGS');
  const badAt = [...kw, ...qs].findIndex((t) => typeof t !== 'string');
  const bad = [...kw, ...qs][badAt];
  if (badAt >= 0) throw new ApiError(RetCode.EXCEPTION_ERROR, `TypeError('sequence item 0: expected str instance, ${pyType(bad)} found')`);
  let available = row.available === 1;
  if ('available' in req) available = pyIntOf(req.available) !== 0;
  const image = imageOf(req.image_base64);
  const questions = (qs as string[]).map((q) => q.trim()).filter(Boolean);
  if (doc.parser_id === 'qa') {
    const parts = content.split(/\t|\r?\n/).filter((s) => s.length > 0);
    if (parts.length !== 2) fail('QA_SEPARATOR');
  }
  const embedText = questions.length ? questions.join('\n') : content;
  const [vector] = await chunkVectors(e, kb.embd_id, doc.name, [embedText], titleWeight(doc.parser_config));
  faultPoint('chunks.update:embedded');
  // While embedding, a re-parse or a delete (here or in another process) may have removed the
  // chunk, and its rowid may since name another one: the store rewrites only the same chunk, keeps
  // its image, and moves the counters by its tokens' difference.
  const ok = await e.store.chunks.rewrite({ rowid: row.rowid, id: row.id, document_id: doc.id, dataset_id: kb.id }, {
    id: row.id, dataset_id: kb.id, content, title: row.titled ? doc.name : '', important_keywords: kw as string[], questions, tag_kwd: tags as string[],
    positions: positions as number[][], available, token_num: countTokens(content), vector: vector!, ...positionKeys(positions),
  }, image);
  if (!ok) fail('CANT_FIND_CHUNK', chunkIdArg);
}

/**
 * `DELETE …/chunks {chunk_ids, delete_all}`: answers nothing (`{"code":0}`), or with duplicate ids
 * `{success_count, errors: ["Duplicate chunk ids: …"]}` (RAGFlow's "Partially deleted" answer,
 * whose message get_result drops); ids not found fail after the found ones are deleted.
 */
export async function deleteChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<{ success_count: number; errors: string[] } | undefined> {
  const { doc } = await guard(e, ctx, datasetId, documentId);
  const all = req.delete_all === true;
  const given = Array.isArray(req.chunk_ids) ? Array.from(req.chunk_ids, (x) => pyStr(x)) : [];
  const counts = new Map<string, number>();
  for (const id of given) counts.set(id, (counts.get(id) ?? 0) + 1);
  const ids = [...counts.keys()];
  const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => `Duplicate chunk ids: ${id}`);
  if (!all && ids.length === 0) return undefined;
  const rows = await e.store.chunks.rowidsOf(doc.id, all && ids.length === 0 ? 'all' : ids);
  // One transaction: the rows go and the counters move down by them (RAGFlow's decrement_chunk_num).
  await e.store.chunks.remove(doc, rows);
  // RAGFlow deletes what it found, then reports the shortfall.
  if (ids.length && rows.length !== ids.length) fail('RM_CHUNK_MISMATCH', rows.length, ids.length);
  return duplicates.length ? { success_count: rows.length, errors: duplicates } : undefined;
}

/**
 * `GET …/chunks/{chunk_id}` (chunk_api.get_chunk): the stored chunk with RAGFlow's index field
 * names (`doc_id`, `content_with_weight`, `important_kwd`, …); unknown → 102 `Chunk not found!`.
 */
export async function getChunk(e: Engine, ctx: Ctx, datasetId: string, documentId: string, chunkIdArg: string): Promise<Record<string, unknown>> {
  const { kb, doc } = await guard(e, ctx, datasetId, documentId);
  const r = await e.store.chunks.get(doc.id, chunkIdArg);
  if (!r) throw new ApiError(RetCode.DATA_ERROR, 'Chunk not found!');
  const positions = JSON.parse(r.positions) as unknown[];
  return {
    id: r.id, doc_id: r.document_id, kb_id: kb.id, docnm_kwd: doc.name, content_with_weight: r.content,
    important_kwd: JSON.parse(r.important_keywords), question_kwd: JSON.parse(r.questions), tag_kwd: JSON.parse(r.tag_kwd),
    img_id: r.image_id, doc_type_kwd: r.doc_type, available_int: r.available, position_int: positions, page_num_int: positions.map((p) => (Array.isArray(p) ? p[0] : 0)),
    top_int: positions.map((p) => (Array.isArray(p) ? p[3] : 0)), create_time: r.create_time, create_timestamp_flt: r.create_timestamp,
  };
}

/**
 * `PATCH …/chunks {chunk_ids, available_int | available}` (chunk_api.switch_chunks): switches the
 * chunks on or off; `data: true`. A chunk id the dataset does not hold: 102 `Index updating failure`.
 */
export async function switchChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<true> {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const ids = req.chunk_ids;
  if (!Array.isArray(ids) || !ids.length) throw new ApiError(RetCode.DATA_ERROR, '`chunk_ids` is required.');
  if (!('available_int' in req) && !('available' in req)) throw new ApiError(RetCode.DATA_ERROR, '`available_int` or `available` is required.');
  const on = 'available_int' in req ? pyIntOf(req.available_int) !== 0 : truthyValue(req.available);
  const doc = await getDocument(e, kb.id, documentId);
  if (!doc) throw new ApiError(RetCode.DATA_ERROR, 'Document not found!');
  // All or nothing: a chunk id the dataset does not hold switches none.
  if (!(await e.store.chunks.setAvailable(kb.id, Array.from(ids, (id) => pyStr(id)), on))) throw new ApiError(RetCode.DATA_ERROR, 'Index updating failure');
  return true;
}

/** Python truthiness. */
const truthyValue = (v: unknown): boolean =>
  !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && !v.length) || (typeof v === 'object' && !Array.isArray(v) && !Object.keys(v as object).length));


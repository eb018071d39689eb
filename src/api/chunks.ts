import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, getDocument, documentToWire, type DocumentRow, chunkToWire, chunkVectors } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr, pyRepr } from './pyfmt.js';
import { intArg, pyIntOf } from './listing.js';
import { sqlCount } from './validate.js';
import { upsertChunk, removeChunkRows, rewriteChunk, type ChunkRow } from '../store/index.js';
import { chunkId, formatDateTime, faultPoint } from '../util/index.js';
import { countTokens, analyze, chunkLanguage, languageSetting, questionLanguage } from '../text/index.js';
import { highlight } from '../search/index.js';

function guard(e: Engine, ctx: Ctx, datasetId: string, documentId: string): { kb: NonNullable<ReturnType<typeof ownedDataset>>; doc: DocumentRow } {
  const kb = ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const doc = getDocument(e, kb.id, documentId);
  if (!doc) fail('DOCUMENT_NOT_OWNED', documentId);
  return { kb, doc };
}

function titleWeight(cfg: string): number {
  const w = (JSON.parse(cfg) as { filename_embd_weight?: unknown }).filename_embd_weight;
  return typeof w === 'number' && w >= 0 && w <= 1 ? w : 0.1;
}

/**
 * Moves a document's chunk and token counters, and its dataset's, by the given amounts (RAGFlow's
 * increment_chunk_num / decrement_chunk_num): the counters follow the operations, not a recount.
 */
function moveCounts(e: Engine, doc: DocumentRow, chunks: number, tokens: number): void {
  if (!chunks && !tokens) return;
  e.db.prepare('UPDATE document SET chunk_num = MAX(0, chunk_num + ?), token_num = MAX(0, token_num + ?) WHERE id = ?').run(chunks, tokens, doc.id);
  e.db.prepare('UPDATE dataset SET chunk_num = MAX(0, chunk_num + ?), token_num = MAX(0, token_num + ?) WHERE id = ?').run(chunks, tokens, doc.dataset_id);
}

/** The bytes of an `image_base64` (RAGFlow's b64decode), or undefined when none is given. */
function imageOf(v: unknown): Uint8Array | undefined {
  if (v === undefined || v === null || v === '' || v === false) return undefined;
  if (typeof v !== 'string') throw new ApiError(RetCode.EXCEPTION_ERROR, `TypeError("argument should be a bytes-like object or ASCII string, not '${pyType(v)}'")`);
  const s = v.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw new ApiError(RetCode.EXCEPTION_ERROR, "Error('Incorrect padding')");
  return new Uint8Array(Buffer.from(s, 'base64'));
}

/** Keeps a chunk's image (served as /documents/images/{dataset_id}-{chunk_id}) and marks the chunk as an image's. */
function storeImage(e: Engine, datasetId: string, chunkIdValue: string, image: Uint8Array): void {
  const imageId = `${datasetId}-${chunkIdValue}`;
  e.db.prepare('INSERT OR REPLACE INTO chunk_image (id, dataset_id, data) VALUES (?, ?, ?)').run(imageId, datasetId, Buffer.from(image));
  e.db.prepare("UPDATE chunk SET image_id = ?, doc_type = 'image' WHERE id = ?").run(imageId, chunkIdValue);
}

function checkStrListField(v: unknown, notList: Parameters<typeof fail>[0]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(notList);
  return Array.from(v) as string[]; // holes of a sparse array read as None, as JSON has no holes
}

export async function addChunk(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { kb, doc } = guard(e, ctx, datasetId, documentId);
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
  // another one on the same file): check it again and write and read back in one transaction.
  const row = e.tx(() => {
    if (!getDocument(e, kb.id, doc.id)) fail('DOCUMENT_NOT_OWNED', documentId);
    const order = (e.db.prepare('SELECT COALESCE(MAX(chunk_order), -1) + 1 AS n FROM chunk WHERE document_id = ?').get(doc.id) as { n: number }).n;
    const tokens = countTokens(content);
    upsertChunk(e.db, {
      // No title terms: RAGFlow gives the document's name to parsed chunks only.
      id, document_id: doc.id, dataset_id: kb.id, content, title: '', important_keywords: kw, questions, tag_kwd: tags,
      positions: [], available: true, chunk_order: order, token_num: tokens,
      create_time: formatDateTime(now), create_timestamp: now / 1000, vector: vector!,
      lang: chunkLanguage(languageNow(e, kb.id), content, kw, questions),
    });
    if (image) storeImage(e, kb.id, id, image);
    // RAGFlow's increment_chunk_num: one more chunk, whether or not the content (so the id) was
    // there already — adding the same content twice counts twice, as RAGFlow's counters do.
    moveCounts(e, doc, 1, tokens);
    faultPoint('chunks.add:counted');
    return e.db.prepare('SELECT * FROM chunk WHERE id = ?').get(id) as ChunkRow;
  });
  faultPoint('chunks.add:committed');
  const w = chunkToWire(row, doc.name);
  return {
    id: w.id, content: w.content, document_id: w.document_id, important_keywords: w.important_keywords, tag_kwd: w.tag_kwd,
    questions: w.questions, dataset_id: w.dataset_id, create_timestamp: w.create_timestamp, create_time: w.create_time, image_id: w.image_id,
    available: w.available, positions: w.positions, docnm_kwd: doc.name, document_keyword: doc.name,
  };
}

/**
 * The dataset's analysis as it is now, read in the writing transaction: its language may have
 * changed while the chunk was embedded, and the background re-index may have passed already.
 */
const languageNow = (e: Engine, datasetId: string) =>
  languageSetting(e.db.prepare('SELECT language FROM dataset WHERE id = ?').pluck().get(datasetId) as string | null);

/** The sort keys of a chunk's positions `[[page, x0, x1, top, bottom], …]`: its first one's page and top. */
function positionKeys(positions: unknown[]): { page_num: number; top: number } {
  const p = positions[0];
  const page = Array.isArray(p) ? Number(p[0]) : NaN;
  const top = Array.isArray(p) ? Number(p[3]) : NaN;
  return Number.isFinite(page) ? { page_num: page, top: Number.isFinite(top) ? top : 0 } : { page_num: 0, top: 0 };
}

const pyType = (v: unknown): string => (typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : v === null || v === undefined ? 'NoneType' : Array.isArray(v) ? 'list' : typeof v === 'object' ? 'dict' : typeof v === 'boolean' ? 'bool' : 'str');

export function listChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, q: Record<string, unknown>): { total: number; chunks: Record<string, unknown>[]; doc: Record<string, unknown> } {
  const { kb, doc } = guard(e, ctx, datasetId, documentId);
  const docWire = documentToWire(doc);
  if (typeof q.id === 'string' && q.id) {
    const row = e.db.prepare('SELECT * FROM chunk WHERE id = ? AND document_id = ?').get(q.id, doc.id) as ChunkRow | undefined;
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
    const match = `{title content keywords questions} : (${terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ')})`;
    const base = `FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid WHERE chunk_fts MATCH @match AND c.document_id = @doc${avail === null ? '' : ' AND c.available = @avail'}`;
    const total = (e.db.prepare(`SELECT COUNT(*) AS n ${base}`).get({ match, doc: doc.id, avail }) as { n: number }).n;
    const rows = e.db.prepare(`SELECT c.* ${base} ORDER BY bm25(chunk_fts, 1, 2, 30, 20) LIMIT @limit OFFSET @offset`)
      .all({ match, doc: doc.id, avail, limit, offset }) as ChunkRow[];
    return {
      total,
      chunks: rows.map((r) => ({ ...chunkToWire(r, doc.name), content: highlight(r.content, keywords) ?? r.content })),
      doc: docWire,
    };
  }
  const where = `document_id = @doc${avail === null ? '' : ' AND available = @avail'}`;
  const total = (e.db.prepare(`SELECT COUNT(*) AS n FROM chunk WHERE ${where}`).get({ doc: doc.id, avail }) as { n: number }).n;
  // By position, as RAGFlow sorts page_num_int and top_int (chunks without positions last, as a
  // missing sort value is); rowid breaks the last ties so pages never overlap.
  const rows = e.db.prepare(`SELECT * FROM chunk WHERE ${where}
    ORDER BY page_num = 0, page_num, top, chunk_order, create_timestamp DESC, rowid LIMIT @limit OFFSET @offset`).all({ doc: doc.id, avail, limit, offset }) as ChunkRow[];
  return { total, chunks: rows.map((r) => chunkToWire(r, doc.name)), doc: docWire };
}

export async function updateChunk(e: Engine, ctx: Ctx, datasetId: string, documentId: string, chunkIdArg: string, req: Record<string, unknown>): Promise<void> {
  const { kb, doc } = guard(e, ctx, datasetId, documentId);
  const row = e.db.prepare('SELECT * FROM chunk WHERE id = ? AND document_id = ?').get(chunkIdArg, doc.id) as ChunkRow | undefined;
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
  e.tx(() => {
    // While embedding, a re-parse or a delete (here or in another process) may have removed the
    // chunk, and its rowid may since name another one: rewrite only the same chunk.
    const now = e.db.prepare('SELECT rowid FROM chunk WHERE id = ? AND document_id = ?').get(row.id, doc.id) as { rowid: number } | undefined;
    if (!now || now.rowid !== row.rowid) fail('CANT_FIND_CHUNK', chunkIdArg);
    const tokens = countTokens(content);
    rewriteChunk(e.db, row.rowid, {
      id: row.id, dataset_id: kb.id, content, title: row.titled ? doc.name : '', important_keywords: kw as string[], questions, tag_kwd: tags as string[],
      positions: positions as number[][], available, token_num: tokens, vector: vector!, ...positionKeys(positions),
      lang: chunkLanguage(languageNow(e, kb.id), content, kw as string[], questions),
    });
    if (image) storeImage(e, kb.id, row.id, image);
    moveCounts(e, doc, 0, tokens - row.token_num); // the same chunk: its tokens only
    faultPoint('chunks.update:counted');
  });
  faultPoint('chunks.update:committed');
}

/**
 * `DELETE …/chunks {chunk_ids, delete_all}`: answers nothing (`{"code":0}`), or with duplicate ids
 * `{success_count, errors: ["Duplicate chunk ids: …"]}` (RAGFlow's "Partially deleted" answer,
 * whose message get_result drops); ids not found fail after the found ones are deleted.
 */
export function deleteChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): { success_count: number; errors: string[] } | undefined {
  const { doc } = guard(e, ctx, datasetId, documentId);
  const all = req.delete_all === true;
  const given = Array.isArray(req.chunk_ids) ? Array.from(req.chunk_ids, (x) => pyStr(x)) : [];
  const counts = new Map<string, number>();
  for (const id of given) counts.set(id, (counts.get(id) ?? 0) + 1);
  const ids = [...counts.keys()];
  const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => `Duplicate chunk ids: ${id}`);
  if (!all && ids.length === 0) return undefined;
  let rows: { rowid: number; token_num: number }[];
  if (all && ids.length === 0) rows = e.db.prepare('SELECT rowid, token_num FROM chunk WHERE document_id = ?').all(doc.id) as typeof rows;
  else {
    const sel = e.db.prepare('SELECT rowid, token_num FROM chunk WHERE id = ? AND document_id = ?');
    rows = ids.map((id) => sel.get(id, doc.id) as (typeof rows)[number] | undefined).filter((r): r is (typeof rows)[number] => !!r);
  }
  e.tx(() => {
    removeChunkRows(e.db, rows.map((r) => r.rowid));
    moveCounts(e, doc, -rows.length, -rows.reduce((n, r) => n + r.token_num, 0));
    faultPoint('chunks.delete:counted');
  });
  faultPoint('chunks.delete:committed');
  // RAGFlow deletes what it found, then reports the shortfall.
  if (ids.length && rows.length !== ids.length) fail('RM_CHUNK_MISMATCH', rows.length, ids.length);
  return duplicates.length ? { success_count: rows.length, errors: duplicates } : undefined;
}

/**
 * `GET …/chunks/{chunk_id}` (chunk_api.get_chunk): the stored chunk with RAGFlow's index field
 * names (`doc_id`, `content_with_weight`, `important_kwd`, …); unknown → 102 `Chunk not found!`.
 */
export function getChunk(e: Engine, ctx: Ctx, datasetId: string, documentId: string, chunkIdArg: string): Record<string, unknown> {
  const { kb, doc } = guard(e, ctx, datasetId, documentId);
  const r = e.db.prepare('SELECT * FROM chunk WHERE id = ? AND document_id = ?').get(chunkIdArg, doc.id) as ChunkRow | undefined;
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
export function switchChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): true {
  const kb = ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const ids = req.chunk_ids;
  if (!Array.isArray(ids) || !ids.length) throw new ApiError(RetCode.DATA_ERROR, '`chunk_ids` is required.');
  if (!('available_int' in req) && !('available' in req)) throw new ApiError(RetCode.DATA_ERROR, '`available_int` or `available` is required.');
  const on = 'available_int' in req ? pyIntOf(req.available_int) !== 0 : truthyValue(req.available);
  const doc = getDocument(e, kb.id, documentId);
  if (!doc) throw new ApiError(RetCode.DATA_ERROR, 'Document not found!');
  e.tx(() => {
    const upd = e.db.prepare('UPDATE chunk SET available = ? WHERE id = ? AND dataset_id = ?');
    for (const id of ids) if (upd.run(on ? 1 : 0, pyStr(id), kb.id).changes === 0) throw new ApiError(RetCode.DATA_ERROR, 'Index updating failure');
  });
  return true;
}

/** Python truthiness. */
const truthyValue = (v: unknown): boolean =>
  !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && !v.length) || (typeof v === 'object' && !Array.isArray(v) && !Object.keys(v as object).length));


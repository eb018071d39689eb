import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, refreshDatasetCounts, getDocument, documentToWire, type DocumentRow, chunkToWire, chunkVectors } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { sqlCount, toNumber } from './validate.js';
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

/** Recounts one document's chunks and tokens from its rows, then its dataset's. */
function recount(e: Engine, doc: DocumentRow): void {
  e.db.prepare(`UPDATE document SET chunk_num = (SELECT COUNT(*) FROM chunk WHERE document_id = @id),
    token_num = (SELECT COALESCE(SUM(token_num), 0) FROM chunk WHERE document_id = @id) WHERE id = @id`).run({ id: doc.id });
  refreshDatasetCounts(e, doc.dataset_id);
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
  const embedText = questions.length ? questions.join('\n') : content;
  const [vector] = await chunkVectors(e, kb.embd_id, doc.name, [embedText], titleWeight(doc.parser_config));
  faultPoint('chunks.add:embedded');
  const now = Date.now();
  // Embedding awaited outside; the document may have been deleted meanwhile (by this process or
  // another one on the same file): check it again and write and read back in one transaction.
  const row = e.tx(() => {
    if (!getDocument(e, kb.id, doc.id)) fail('DOCUMENT_NOT_OWNED', documentId);
    const order = (e.db.prepare('SELECT COALESCE(MAX(chunk_order), -1) + 1 AS n FROM chunk WHERE document_id = ?').get(doc.id) as { n: number }).n;
    upsertChunk(e.db, {
      // No title terms: RAGFlow gives the document's name to parsed chunks only.
      id, document_id: doc.id, dataset_id: kb.id, content, title: '', important_keywords: kw, questions, tag_kwd: tags,
      positions: [], available: true, chunk_order: order, token_num: countTokens(content),
      create_time: formatDateTime(now), create_timestamp: now / 1000, vector: vector!,
      lang: chunkLanguage(languageNow(e, kb.id), content, kw, questions),
    });
    recount(e, doc);
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
  const page = toNumber(q.page ?? 1);
  const pageSize = toNumber(q.page_size ?? 30);
  if (!Number.isInteger(page) || page < 1 || !Number.isInteger(pageSize) || pageSize < 0) {
    throw new ApiError(RetCode.ARGUMENT_ERROR, '`page` and `page_size` must be positive integers');
  }
  const limit = pageSize === 0 ? -1 : sqlCount(pageSize);
  const offset = pageSize === 0 ? 0 : sqlCount((page - 1) * pageSize);
  const keywords = typeof q.keywords === 'string' ? q.keywords.trim() : '';
  if (keywords) {
    const terms = [...new Set(analyze(keywords, questionLanguage([languageSetting(kb.language)], keywords)))];
    if (terms.length === 0) return { total: 0, chunks: [], doc: docWire };
    const match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
    const base = `FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid WHERE chunk_fts MATCH @match AND c.document_id = @doc`;
    const total = (e.db.prepare(`SELECT COUNT(*) AS n ${base}`).get({ match, doc: doc.id }) as { n: number }).n;
    const rows = e.db.prepare(`SELECT c.* ${base} ORDER BY bm25(chunk_fts, 1, 2, 30, 20) LIMIT @limit OFFSET @offset`)
      .all({ match, doc: doc.id, limit, offset }) as ChunkRow[];
    return {
      total,
      chunks: rows.map((r) => ({ ...chunkToWire(r, doc.name), content: highlight(r.content, keywords) ?? r.content })),
      doc: docWire,
    };
  }
  const total = (e.db.prepare('SELECT COUNT(*) AS n FROM chunk WHERE document_id = ?').get(doc.id) as { n: number }).n;
  // By position, as RAGFlow sorts page_num_int and top_int (chunks without positions last, as a
  // missing sort value is); rowid breaks the last ties so pages never overlap.
  const rows = e.db.prepare(`SELECT * FROM chunk WHERE document_id = ?
    ORDER BY page_num = 0, page_num, top, chunk_order, create_timestamp DESC, rowid LIMIT ? OFFSET ?`).all(doc.id, limit, offset) as ChunkRow[];
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
  if (req.available !== undefined && req.available !== null) available = Boolean(toNumber(req.available));
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
    rewriteChunk(e.db, row.rowid, {
      id: row.id, dataset_id: kb.id, content, title: row.titled ? doc.name : '', important_keywords: kw as string[], questions, tag_kwd: tags as string[],
      positions: positions as number[][], available, token_num: countTokens(content), vector: vector!, ...positionKeys(positions),
      lang: chunkLanguage(languageNow(e, kb.id), content, kw as string[], questions),
    });
    recount(e, doc);
    faultPoint('chunks.update:counted');
  });
  faultPoint('chunks.update:committed');
}

export function deleteChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): { deleted: number } {
  const { doc } = guard(e, ctx, datasetId, documentId);
  const all = req.delete_all === true;
  const ids = Array.isArray(req.chunk_ids) ? [...new Set(Array.from(req.chunk_ids, (x) => pyStr(x)))] : [];
  if (!all && ids.length === 0) return { deleted: 0 };
  let rows: { rowid: number }[];
  if (all) rows = e.db.prepare('SELECT rowid FROM chunk WHERE document_id = ?').all(doc.id) as { rowid: number }[];
  else {
    const sel = e.db.prepare('SELECT rowid FROM chunk WHERE id = ? AND document_id = ?');
    rows = ids.map((id) => sel.get(id, doc.id) as { rowid: number } | undefined).filter((r): r is { rowid: number } => !!r);
  }
  e.tx(() => {
    removeChunkRows(e.db, rows.map((r) => r.rowid));
    recount(e, doc);
    faultPoint('chunks.delete:counted');
  });
  faultPoint('chunks.delete:committed');
  // RAGFlow deletes what it found, then reports the shortfall.
  if (!all && rows.length !== ids.length) fail('RM_CHUNK_MISMATCH', rows.length, ids.length);
  return { deleted: rows.length };
}

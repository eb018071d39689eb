import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, getDocument, documentToWire, type DatasetRow, type DocumentRow, chunkToWire, chunkVectors } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { sqlCount, toNumber } from './validate.js';
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
  const embedText = questions.length ? questions.join('\n') : content;
  const [vector] = await chunkVectors(e, kb.embd_id, doc.name, [embedText], titleWeight(doc.parser_config));
  faultPoint('chunks.add:embedded');
  const now = Date.now();
  // Embedding awaited outside; the document may have been deleted meanwhile (by this process or
  // another one on the same file): the store checks it again as it writes, and analyses the chunk
  // in the dataset's language as it is then.
  const row = await e.store.chunks.add(kb.id, {
    // No title terms: RAGFlow gives the document's name to parsed chunks only.
    id, document_id: doc.id, dataset_id: kb.id, content, title: '', important_keywords: kw, questions, tag_kwd: tags,
    positions: [], available: true, token_num: countTokens(content),
    create_time: formatDateTime(now), create_timestamp: now / 1000, vector: vector!,
  });
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
    const { total, rows } = await e.store.chunks.search(doc.id, terms, limit, offset);
    return {
      total,
      chunks: rows.map((r) => ({ ...chunkToWire(r, doc.name), content: highlight(r.content, keywords) ?? r.content })),
      doc: docWire,
    };
  }
  // By position, as RAGFlow sorts page_num_int and top_int (ChunkStore.list).
  const { total, rows } = await e.store.chunks.list(doc.id, limit, offset);
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
  if (req.available !== undefined && req.available !== null) available = Boolean(toNumber(req.available));
  const questions = (qs as string[]).map((q) => q.trim()).filter(Boolean);
  if (doc.parser_id === 'qa') {
    const parts = content.split(/\t|\r?\n/).filter((s) => s.length > 0);
    if (parts.length !== 2) fail('QA_SEPARATOR');
  }
  const embedText = questions.length ? questions.join('\n') : content;
  const [vector] = await chunkVectors(e, kb.embd_id, doc.name, [embedText], titleWeight(doc.parser_config));
  faultPoint('chunks.update:embedded');
  // While embedding, a re-parse or a delete (here or in another process) may have removed the
  // chunk, and its rowid may since name another one: the store rewrites only the same chunk.
  const ok = await e.store.chunks.rewrite({ rowid: row.rowid, id: row.id, document_id: doc.id, dataset_id: kb.id }, {
    id: row.id, dataset_id: kb.id, content, title: row.titled ? doc.name : '', important_keywords: kw as string[], questions, tag_kwd: tags as string[],
    positions: positions as number[][], available, token_num: countTokens(content), vector: vector!, ...positionKeys(positions),
  });
  if (!ok) fail('CANT_FIND_CHUNK', chunkIdArg);
}

export async function deleteChunks(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<{ deleted: number }> {
  const { doc } = await guard(e, ctx, datasetId, documentId);
  const all = req.delete_all === true;
  const ids = Array.isArray(req.chunk_ids) ? [...new Set(Array.from(req.chunk_ids, (x) => pyStr(x)))] : [];
  if (!all && ids.length === 0) return { deleted: 0 };
  const rows = await e.store.chunks.rowidsOf(doc.id, all ? 'all' : ids);
  await e.store.chunks.remove(doc, rows);
  // RAGFlow deletes what it found, then reports the shortfall.
  if (!all && rows.length !== ids.length) fail('RM_CHUNK_MISMATCH', rows.length, ids.length);
  return { deleted: rows.length };
}

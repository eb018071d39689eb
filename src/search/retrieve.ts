import type { Engine, Ctx } from '../core/engine.js';
import { visibleDataset, type DatasetRow } from '../core/datasets.js';
import { ApiError, RetCode, fail } from '../api/errors.js';
import { analyze } from '../text/analyze.js';
import { vecTable, fromBlob } from '../store/vectors.js';
import { highlight as highlightText } from './highlight.js';
import type { ChunkRow } from '../store/chunks.js';

export interface RetrieveParams {
  question?: unknown;
  dataset_ids?: unknown;
  document_ids?: unknown;
  page?: unknown;
  page_size?: unknown;
  similarity_threshold?: unknown;
  vector_similarity_weight?: unknown;
  top_k?: unknown;
  rerank_id?: unknown;
  keyword?: unknown;
  cross_languages?: unknown;
  metadata_condition?: unknown;
  highlight?: unknown;
  use_kg?: unknown;
  toc_enhance?: unknown;
}

export interface RetrieveResult {
  total: number;
  chunks: Record<string, unknown>[];
  doc_aggs: { doc_name: string; doc_id: string; count: number }[];
}

// FTS5's bm25() constants: each term contributes at most idf·(k1+1).
const K1 = 1.2;

interface Cand {
  rowid: number;
  vsim: number;
  tsim: number;
}

function num(v: unknown, dflt: number, name: string): number {
  if (v === undefined || v === null) return dflt;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new ApiError(RetCode.ARGUMENT_ERROR, `\`${name}\` should be a number`);
  return n;
}

export async function retrieve(e: Engine, ctx: Ctx, p: RetrieveParams): Promise<RetrieveResult> {
  if (p.dataset_ids === undefined || p.dataset_ids === null) fail('DATASET_IDS_REQUIRED');
  if (!Array.isArray(p.dataset_ids)) fail('DATASET_IDS_LIST');
  const kbs: DatasetRow[] = [];
  for (const id of p.dataset_ids) {
    const kb = visibleDataset(e, ctx, id);
    if (!kb) fail('DATASET_NOT_OWNED', String(id));
    kbs.push(kb);
  }
  if (kbs.length === 0) fail('DATASET_IDS_REQUIRED');
  if (new Set(kbs.map((k) => k.embd_id)).size > 1) fail('DIFFERENT_EMBEDDING_MODELS');
  if (p.question === undefined || p.question === null || typeof p.question !== 'string') fail('QUESTION_REQUIRED');
  const docIds = p.document_ids === undefined || p.document_ids === null ? [] : p.document_ids;
  if (!Array.isArray(docIds)) throw new ApiError(RetCode.DATA_ERROR, '`document_ids` should be a list');
  const kbIds = kbs.map((k) => k.id);
  for (const d of docIds) {
    const row = e.db.prepare(`SELECT 1 FROM document WHERE id = ? AND dataset_id IN (${kbIds.map(() => '?').join(',')})`).get(String(d), ...kbIds);
    if (!row) fail('DATASETS_DONT_OWN_DOCUMENT', String(d));
  }
  const topK = num(p.top_k, 1024, 'top_k');
  if (topK <= 0) fail('TOP_K_POSITIVE');
  if (p.highlight !== undefined && p.highlight !== null && typeof p.highlight !== 'boolean') fail('HIGHLIGHT_BOOLEAN');
  const page = Math.max(1, Math.floor(num(p.page, 1, 'page')));
  const pageSize = Math.max(1, Math.floor(num(p.page_size, 30, 'page_size')));
  const threshold = num(p.similarity_threshold, 0.2, 'similarity_threshold');
  const w = num(p.vector_similarity_weight, 0.3, 'vector_similarity_weight');
  for (const [k, v] of [['rerank_id', p.rerank_id], ['cross_languages', p.cross_languages], ['metadata_condition', p.metadata_condition]] as const) {
    const set = v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);
    if (set) throw new ApiError(RetCode.DATA_ERROR, `\`${k}\` is not supported yet by the embedded engine`);
  }
  if (p.keyword === true) throw new ApiError(RetCode.DATA_ERROR, '`keyword` needs a chat model, which the embedded engine does not have yet');
  const question = p.question.trim();
  if (!question) return { total: 0, chunks: [], doc_aggs: [] };

  const k = Math.min(Math.floor(topK), 4096);
  const cands = new Map<number, Cand>();
  const get = (rowid: number) => {
    let c = cands.get(rowid);
    if (!c) cands.set(rowid, (c = { rowid, vsim: 0, tsim: 0 }));
    return c;
  };

  // Vector side: exact cosine KNN in the datasets' partitions.
  const [qv] = await e.models.embedder(kbs[0]!.embd_id).embed([question]);
  const dim = qv!.length;
  const known = e.db.prepare('SELECT 1 FROM vec_index WHERE dim = ?').get(dim);
  if (known) {
    const table = vecTable(e.db, dim);
    const rows = e.db.prepare(`SELECT rowid, distance FROM ${table} WHERE embedding MATCH ? AND k = ? AND dataset_id IN (${kbIds.map(() => '?').join(',')})`)
      .all(Buffer.from(qv!.buffer), k, ...kbIds) as { rowid: number; distance: number }[];
    rows.sort((a, b) => a.distance - b.distance);
    for (const r of rows.slice(0, k)) get(r.rowid).vsim = Math.max(0, 1 - r.distance);
  }

  // Text side: BM25 over the analysed terms, normalised by the query's own upper bound.
  const terms = [...new Set(analyze(question))];
  let match = '';
  let upper = 0;
  if (terms.length) {
    match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
    const n = (e.db.prepare('SELECT COUNT(*) AS n FROM chunk').get() as { n: number }).n;
    const df = e.db.prepare('SELECT doc FROM chunk_fts_terms WHERE term = ?');
    for (const t of terms) {
      const d = (df.get(t) as { doc: number } | undefined)?.doc ?? 0;
      if (d === 0) continue;
      upper += Math.max(1e-6, Math.log((n - d + 0.5) / (d + 0.5))) * (K1 + 1);
    }
  }
  if (match && upper > 0) {
    const rows = e.db.prepare(`SELECT f.rowid AS rowid, bm25(chunk_fts, 2, 1, 5, 6) AS s FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid
      WHERE chunk_fts MATCH ? AND c.dataset_id IN (${kbIds.map(() => '?').join(',')}) ORDER BY s LIMIT ?`).all(match, ...kbIds, k) as { rowid: number; s: number }[];
    for (const r of rows) get(r.rowid).tsim = Math.min(1, -r.s / upper);
    // Vector-only candidates still get their exact term score.
    const need = [...cands.values()].filter((c) => c.tsim === 0).map((c) => c.rowid);
    for (let i = 0; i < need.length; i += 500) {
      const part = need.slice(i, i + 500);
      const rs = e.db.prepare(`SELECT rowid, bm25(chunk_fts, 2, 1, 5, 6) AS s FROM chunk_fts WHERE chunk_fts MATCH ? AND rowid IN (${part.map(() => '?').join(',')})`)
        .all(match, ...part) as { rowid: number; s: number }[];
      for (const r of rs) get(r.rowid).tsim = Math.min(1, -r.s / upper);
    }
  }
  // Text-only candidates still get their exact cosine.
  if (known) {
    const table = vecTable(e.db, dim);
    const sel = e.db.prepare(`SELECT embedding FROM ${table} WHERE rowid = ?`);
    for (const c of cands.values()) {
      if (c.vsim !== 0) continue;
      const r = sel.get(BigInt(c.rowid)) as { embedding: Buffer } | undefined;
      if (r) c.vsim = Math.max(0, dot(qv!, fromBlob(r.embedding)));
    }
  }

  // Filters, score, rank.
  const rowsById = new Map<number, ChunkRow & { doc_name: string; meta_fields: string; pagerank: number }>();
  const sel = e.db.prepare(`SELECT c.*, d.name AS doc_name, d.meta_fields, k.pagerank FROM chunk c JOIN document d ON d.id = c.document_id
    JOIN dataset k ON k.id = c.dataset_id WHERE c.rowid = ?`);
  for (const c of cands.values()) {
    const r = sel.get(c.rowid) as (ChunkRow & { doc_name: string; meta_fields: string; pagerank: number }) | undefined;
    if (r) rowsById.set(c.rowid, r);
  }
  const docFilter = new Set(docIds.map(String));
  const thr = w <= 0 ? 0 : threshold;
  const scored = [...cands.values()]
    .map((c) => ({ c, r: rowsById.get(c.rowid)!, sim: w * c.vsim + (1 - w) * c.tsim }))
    .filter(({ r }) => r && r.available === 1 && (docFilter.size === 0 || docFilter.has(r.document_id)))
    .filter(({ sim }) => sim >= thr)
    // pagerank (0–100) is added to the ranking key raw, as RAGFlow adds it to the score.
    .sort((a, b) => b.sim + b.r.pagerank - (a.sim + a.r.pagerank) || b.c.tsim - a.c.tsim);

  const aggs = new Map<string, { doc_name: string; doc_id: string; count: number }>();
  for (const { r } of scored) {
    const a = aggs.get(r.document_id) ?? { doc_name: r.doc_name, doc_id: r.document_id, count: 0 };
    a.count++;
    aggs.set(r.document_id, a);
  }
  const pageRows = scored.slice((page - 1) * pageSize, page * pageSize);
  const chunks = pageRows.map(({ c, r, sim }) => {
    const out: Record<string, unknown> = {
      id: r.id,
      content: r.content,
      content_ltks: analyze(r.content).join(' '),
      document_id: r.document_id,
      document_keyword: r.doc_name,
      document_name: r.doc_name,
      dataset_id: r.dataset_id,
      kb_id: r.dataset_id,
      important_keywords: JSON.parse(r.important_keywords),
      questions: JSON.parse(r.questions),
      tag_kwd: JSON.parse(r.tag_kwd),
      image_id: r.image_id,
      similarity: sim,
      vector_similarity: c.vsim,
      term_similarity: c.tsim,
      positions: JSON.parse(r.positions),
      doc_type_kwd: r.doc_type,
      doc_type: r.doc_type,
      available: true,
      create_time: r.create_time,
      create_timestamp: r.create_timestamp,
    };
    if (p.highlight === true) out.highlight = highlightText(r.content, question) ?? r.content;
    return out;
  });
  return { total: scored.length, chunks, doc_aggs: [...aggs.values()].sort((a, b) => b.count - a.count) };
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

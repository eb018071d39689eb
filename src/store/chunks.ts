import type { Db } from './db.js';
import { vecTable, toBlob, fromBlob } from './vectors.js';
import { ftsTerms, type FtsTerms } from '../text/index.js';
import { cachedStatement as stmt } from './db.js';
import type { Statement } from 'better-sqlite3';
import { faultPoint } from '../util/index.js';
import type { ChunkRow, NewChunk } from './interface/chunks.js';

export type { ChunkRow, NewChunk };

/**
 * Writes one chunk to the row table, the FTS index and the vector index. Same id = same
 * content in the same document, so an existing row is replaced (RAGFlow's upsert).
 * Returns true when the chunk is new. Call inside a transaction.
 */
export function upsertChunk(db: Db, c: NewChunk): boolean {
  return upsertChunks(db, [c]) === 1;
}

const INSERT_CHUNK = `INSERT INTO chunk (id, document_id, dataset_id, content, important_keywords, questions, tag_kwd,
    positions, available, doc_type, chunk_order, page_num, top, token_num, vec_dim, create_time, create_timestamp, index_text)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;
const INSERT_FTS = 'INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)';

/** The full-text row of a chunk: the one it came with (analysed by the ingest worker), or analysed here. */
const termsOf = (c: Pick<NewChunk, 'terms' | 'title' | 'content' | 'index_text' | 'important_keywords' | 'questions'>): FtsTerms =>
  c.terms ?? ftsTerms(c.title, c.index_text ?? c.content, c.important_keywords, c.questions);

/**
 * upsertChunk for many chunks, in order (a later chunk with an earlier one's id replaces it).
 * Returns how many were new. Call inside a transaction.
 */
export function upsertChunks(db: Db, chunks: readonly NewChunk[]): number {
  if (chunks.length === 0) return 0;
  const ins = stmt(db, INSERT_CHUNK);
  const fts = stmt(db, INSERT_FTS);
  const sel = stmt(db, 'SELECT rowid FROM chunk WHERE id = ?').pluck();
  // Analyse the chunks that come without their full-text row first: the term table stays in the
  // CPU cache, which SQLite's writes in between would evict.
  const terms = chunks.map(termsOf);
  // All chunk rows, then all full-text rows, then all vectors: each index's code and pages stay
  // hot (about 20% less time than writing the three per chunk). Rowids of replaced chunks are null.
  const rowids = new Array<bigint | null>(chunks.length);
  let mine: Map<bigint, number> | undefined; // rowid → index, built at the first replacement
  let added = 0;
  for (let k = 0; k < chunks.length; k++) {
    const c = chunks[k]!;
    const indexText = c.index_text !== undefined && c.index_text !== c.content ? c.index_text : null;
    const args = [
      c.id, c.document_id, c.dataset_id, c.content, json(c.important_keywords), json(c.questions),
      json(c.tag_kwd), json(c.positions), c.available ? 1 : 0, c.doc_type ?? '', c.chunk_order,
      c.page_num ?? 0, c.top ?? 0, c.token_num, c.vector.length, c.create_time, c.create_timestamp, indexText,
    ];
    let info = ins.run(...args);
    if (info.changes === 0) {
      // The id exists: replace the old row (and its index entries) by a new one.
      const old = BigInt(sel.get(c.id) as number);
      if (!mine) {
        mine = new Map();
        for (let j = 0; j < k; j++) if (rowids[j] !== null) mine.set(rowids[j]!, j);
      }
      const j = mine.get(old);
      if (j !== undefined) {
        // Written earlier in this call: only its row exists yet.
        rowids[j] = null;
        mine.delete(old);
        stmt(db, 'DELETE FROM chunk WHERE rowid = ?').run(old);
      } else removeChunkRows(db, [Number(old)]);
      info = ins.run(...args);
    } else added++;
    const rowid = BigInt(info.lastInsertRowid);
    rowids[k] = rowid;
    mine?.set(rowid, k);
  }
  faultPoint('chunks.upsert:rows-written');
  for (let k = 0; k < chunks.length; k++) {
    const rowid = rowids[k];
    if (rowid === null) continue;
    const t = terms[k]!;
    fts.run(rowid, t[0], t[1], t[2], t[3]);
  }
  faultPoint('chunks.upsert:fts-written');
  // The vec0 table per dimension, resolved once per dimension (inside the caller's transaction).
  let vecDim = 0;
  let vecIns: Statement | undefined;
  for (let k = 0; k < chunks.length; k++) {
    const rowid = rowids[k];
    if (rowid === null) continue;
    const c = chunks[k]!;
    if (c.vector.length !== vecDim || !vecIns) {
      vecDim = c.vector.length;
      vecIns = stmt(db, `INSERT INTO ${vecTable(db, vecDim)} (rowid, dataset_id, embedding) VALUES (?, ?, ?)`);
    }
    vecIns.run(rowid, c.dataset_id, toBlob(c.vector));
  }
  faultPoint('chunks.upsert:vectors-written');
  return added;
}

// Most chunks have no keywords, questions, tags or positions.
const json = (a: readonly unknown[]): string => (a.length === 0 ? '[]' : JSON.stringify(a));

/**
 * The full-text row: title (the document's name), content (or the parser's index text),
 * important keywords and questions, each analysed (src/text/analyze.ts). Retrieval weights the
 * columns as RAGFlow's field boosts do (title 5, content 1, keywords 15, questions 10).
 */
function indexChunk(db: Db, rowid: bigint, c: Pick<NewChunk, 'terms' | 'title' | 'content' | 'index_text' | 'important_keywords' | 'questions'>): void {
  const t = termsOf(c);
  stmt(db, INSERT_FTS).run(rowid, t[0], t[1], t[2], t[3]);
}

/** Deletes chunk rows and their index entries by rowid. Call inside a transaction. */
export function removeChunkRows(db: Db, rowids: number[]): void {
  if (rowids.length === 0) return;
  const getDim = stmt(db, 'SELECT vec_dim FROM chunk WHERE rowid = ?');
  const delFts = stmt(db, 'DELETE FROM chunk_fts WHERE rowid = ?');
  const delRow = stmt(db, 'DELETE FROM chunk WHERE rowid = ?');
  for (const r of rowids) {
    const row = getDim.get(r) as { vec_dim: number } | undefined;
    if (!row) continue;
    const rid = BigInt(r);
    if (row.vec_dim > 0) stmt(db, `DELETE FROM ${vecTable(db, row.vec_dim)} WHERE rowid = ?`).run(rid);
    faultPoint('chunks.remove:vector-deleted');
    delFts.run(rid);
    faultPoint('chunks.remove:fts-deleted');
    delRow.run(rid);
  }
}

/** Replaces a chunk's text fields and vector, keeping its rowid (ids can change with content). */
export function rewriteChunk(db: Db, rowid: number, c: Omit<NewChunk, 'document_id' | 'dataset_id' | 'chunk_order' | 'create_time' | 'create_timestamp'> & { dataset_id: string }): void {
  const old = db.prepare('SELECT vec_dim FROM chunk WHERE rowid = ?').get(rowid) as { vec_dim: number };
  const rid = BigInt(rowid);
  const indexText = c.index_text !== undefined && c.index_text !== c.content ? c.index_text : null;
  // The position sort keys follow the positions (RAGFlow rewrites page_num_int / top_int with them).
  db.prepare(`UPDATE chunk SET id = ?, content = ?, important_keywords = ?, questions = ?, tag_kwd = ?, positions = ?,
      available = ?, token_num = ?, vec_dim = ?, index_text = ?, page_num = COALESCE(?, page_num), top = COALESCE(?, top) WHERE rowid = ?`).run(
    c.id, c.content, JSON.stringify(c.important_keywords), JSON.stringify(c.questions), JSON.stringify(c.tag_kwd),
    JSON.stringify(c.positions), c.available ? 1 : 0, c.token_num, c.vector.length, indexText, c.page_num ?? null, c.top ?? null, rid);
  faultPoint('chunks.rewrite:row-updated');
  db.prepare('DELETE FROM chunk_fts WHERE rowid = ?').run(rid);
  indexChunk(db, rid, c);
  faultPoint('chunks.rewrite:fts-written');
  if (old.vec_dim > 0) db.prepare(`DELETE FROM ${vecTable(db, old.vec_dim)} WHERE rowid = ?`).run(rid);
  faultPoint('chunks.rewrite:vector-deleted');
  db.prepare(`INSERT INTO ${vecTable(db, c.vector.length)} (rowid, dataset_id, embedding) VALUES (?, ?, ?)`)
    .run(rid, c.dataset_id, toBlob(c.vector));
}


/** Removes every chunk of the given documents (their rows, FTS and vectors). */
export function removeDocumentChunks(db: Db, documentIds: string[]): number {
  let n = 0;
  const sel = stmt(db, 'SELECT rowid FROM chunk WHERE document_id = ?');
  for (const d of documentIds) {
    const rows = (sel.all(d) as { rowid: number }[]).map((r) => r.rowid);
    removeChunkRows(db, rows);
    n += rows.length;
  }
  return n;
}

/**
 * A renamed document's chunks get their full-text title again (RAGFlow rewrites title_tks on a
 * rename); each is logged in `vec_log` so the in-memory term index re-reads it. Call inside a
 * transaction. Returns how many chunks were re-indexed.
 */
export function retitleDocumentChunks(db: Db, documentId: string, title: string): number {
  const rows = stmt(db, 'SELECT rowid, content, index_text, important_keywords, questions FROM chunk WHERE document_id = ?')
    .raw().all(documentId) as Array<[number, string, string | null, string, string]>;
  const del = stmt(db, 'DELETE FROM chunk_fts WHERE rowid = ?');
  const log = stmt(db, 'INSERT INTO vec_log (rid) VALUES (?)');
  for (const [rowid, content, indexText, kw, qs] of rows) {
    del.run(rowid);
    indexChunk(db, BigInt(rowid), {
      title, content, index_text: indexText ?? undefined, important_keywords: JSON.parse(kw) as string[], questions: JSON.parse(qs) as string[],
    });
    log.run(rowid);
  }
  return rows.length;
}

/** Chunk rowids with their document id (for filters and aggregation), available ones only when asked. */
export function chunkRowidsOfDocuments(db: Db, documentIds: string[], availableOnly = true): number[] {
  const out: number[] = [];
  const sel = stmt(db, `SELECT rowid FROM chunk WHERE document_id = ?${availableOnly ? ' AND available = 1' : ''}`).raw();
  for (const d of documentIds) for (const [r] of sel.all(d) as [number][]) out.push(r);
  return out;
}

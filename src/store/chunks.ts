import type { Db } from './db.js';
import { vecTable, toBlob, fromBlob } from './vectors.js';
import { ftsTerms, isLang, englishIsV2, type FtsTerms, type Lang, type Analysis } from '../text/index.js';
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
    positions, available, doc_type, chunk_order, page_num, top, token_num, vec_dim, create_time, create_timestamp, index_text, lang, titled)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;
const INSERT_FTS = 'INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)';

/** The full-text row of a chunk: the one it came with (analysed by the ingest worker), or analysed here. */
const termsOf = (c: Pick<NewChunk, 'terms' | 'title' | 'content' | 'index_text' | 'important_keywords' | 'questions' | 'lang'>): FtsTerms =>
  c.terms ?? ftsTerms(c.title, c.index_text ?? c.content, c.important_keywords, c.questions, c.lang ?? 'en');

/** The analysis a stored row's full-text entry was written with: its `lang`, or analyzer version 2 (NULL, older rows). */
export const storedAnalysis = (lang: string | null): Analysis => (isLang(lang) ? lang : 'v2');

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
      c.page_num ?? 0, c.top ?? 0, c.token_num, c.vector.length, c.create_time, c.create_timestamp, indexText, c.lang ?? 'en', c.title === '' ? 0 : 1,
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
function indexChunk(db: Db, rowid: bigint, c: Pick<NewChunk, 'terms' | 'title' | 'content' | 'index_text' | 'important_keywords' | 'questions' | 'lang'>): void {
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
      available = ?, token_num = ?, vec_dim = ?, index_text = ?, page_num = COALESCE(?, page_num), top = COALESCE(?, top), lang = ? WHERE rowid = ?`).run(
    c.id, c.content, JSON.stringify(c.important_keywords), JSON.stringify(c.questions), JSON.stringify(c.tag_kwd),
    JSON.stringify(c.positions), c.available ? 1 : 0, c.token_num, c.vector.length, indexText, c.page_num ?? null, c.top ?? null, c.lang ?? 'en', rid);
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
 * A renamed document's chunks get their full-text title again, every one of them (RAGFlow rewrites
 * title_tks on a rename, for the chunks added through the API too); each is logged in `vec_log` so
 * the in-memory term index re-reads it. Call inside a transaction. Returns how many chunks were
 * re-indexed.
 */
export function retitleDocumentChunks(db: Db, documentId: string, title: string): number {
  stmt(db, 'UPDATE chunk SET titled = 1 WHERE document_id = ? AND titled = 0').run(documentId);
  const rows = stmt(db, 'SELECT rowid, content, index_text, important_keywords, questions, lang FROM chunk WHERE document_id = ?')
    .raw().all(documentId) as Array<[number, string, string | null, string, string, string | null]>;
  const del = stmt(db, 'DELETE FROM chunk_fts WHERE rowid = ?');
  const log = stmt(db, 'INSERT INTO vec_log (rid) VALUES (?)');
  for (const [rowid, content, indexText, kw, qs, lang] of rows) {
    del.run(rowid);
    const terms = ftsTerms(title, indexText ?? content, JSON.parse(kw) as string[], JSON.parse(qs) as string[], storedAnalysis(lang));
    stmt(db, INSERT_FTS).run(BigInt(rowid), ...terms);
    log.run(rowid);
  }
  return rows.length;
}

/**
 * One slice of a dataset's background re-index (core/reindex.ts): its chunks after rowid `after`,
 * at most `limit`, each re-analysed as `langOf` says. A row whose terms change gets its
 * full-text entry rewritten and is logged in `vec_log` (the term index re-reads it); its `lang`
 * is set either way. Call inside a transaction. Returns the last rowid read (null: none was
 * left) and how many rows were rewritten.
 */
export function reindexDatasetSlice(db: Db, datasetId: string, after: number, limit: number,
  langOf: (text: string, keywords: string[], questions: string[]) => Lang): { last: number | null; rewritten: number } {
  const rows = stmt(db, `SELECT c.rowid, c.content, c.index_text, c.important_keywords, c.questions, c.lang, CASE WHEN c.titled THEN COALESCE(d.name, '') ELSE '' END FROM chunk c
    LEFT JOIN document d ON d.id = c.document_id WHERE c.dataset_id = ? AND c.rowid > ? ORDER BY c.rowid LIMIT ?`)
    .raw().all(datasetId, after, limit) as Array<[number, string, string | null, string, string, string | null, string]>;
  let rewritten = 0;
  for (const [rowid, content, indexText, kw, qs, lang, title] of rows) {
    const text = indexText ?? content;
    const keywords = JSON.parse(kw) as string[];
    const questions = JSON.parse(qs) as string[];
    const want = langOf(text, keywords, questions);
    if (want === lang) continue;
    const same = lang === null && want === 'en' && [title, text, kw, qs].every(englishIsV2);
    if (same) {
      // A version-2 row whose English terms are the same (no Chinese, Japanese, Korean…): only its lang is new.
      stmt(db, 'UPDATE chunk SET lang = ? WHERE rowid = ?').run(want, rowid);
      continue;
    }
    const old = ftsTerms(title, text, keywords, questions, storedAnalysis(lang));
    const terms = ftsTerms(title, text, keywords, questions, want);
    if (terms.some((t, i) => t !== old[i])) {
      stmt(db, 'DELETE FROM chunk_fts WHERE rowid = ?').run(rowid);
      stmt(db, INSERT_FTS).run(BigInt(rowid), ...terms);
      stmt(db, 'INSERT INTO vec_log (rid) VALUES (?)').run(rowid);
      rewritten++;
    }
    stmt(db, 'UPDATE chunk SET lang = ? WHERE rowid = ?').run(want, rowid);
  }
  return { last: rows.length ? rows[rows.length - 1]![0] : null, rewritten };
}

/** Chunk rowids with their document id (for filters and aggregation), available ones only when asked. */
export function chunkRowidsOfDocuments(db: Db, documentIds: string[], availableOnly = true): number[] {
  const out: number[] = [];
  const sel = stmt(db, `SELECT rowid FROM chunk WHERE document_id = ?${availableOnly ? ' AND available = 1' : ''}`).raw();
  for (const d of documentIds) for (const [r] of sel.all(d) as [number][]) out.push(r);
  return out;
}

/** Datasets with their `language` and the analysis their full-text rows were last re-indexed to (`fts_language`). */
export function datasetAnalyses(db: Db): Array<{ id: string; language: string | null; fts_language: string | null }> {
  return stmt(db, 'SELECT id, language, fts_language FROM dataset ORDER BY rowid').all() as Array<{ id: string; language: string | null; fts_language: string | null }>;
}

/**
 * Records that `datasetId`'s full-text rows are analysed as `analysis`, if its `language` is still
 * `language` (a change meanwhile starts the re-index over). Returns whether it was recorded.
 */
export function markDatasetReindexed(db: Db, datasetId: string, language: string | null, analysis: string): boolean {
  return stmt(db, 'UPDATE dataset SET fts_language = ? WHERE id = ? AND language IS ?').run(analysis, datasetId, language).changes === 1;
}

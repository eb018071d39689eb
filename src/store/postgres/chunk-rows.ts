/**
 * Chunk rows on PostgreSQL, inside the caller's transaction: writes, removals, counts, re-titles
 * and re-index slices. A chunk's full-text row is not stored: it is ftsTerms(title, index text or
 * content, keywords, questions, lang) of its columns, computed by each process's search side
 * (search.ts) from the rows the change feed names. The change-log triggers (migrations.ts) log
 * inserts, deletes and changes of the watched columns; a re-title, which changes no chunk column,
 * is logged here.
 */
import { ftsTerms, englishIsV2, languageSetting, type FtsTerms, type Lang } from '../../text/index.js';
import { faultPoint } from '../../util/index.js';
import type { ChunkRow, NewChunk } from '../interface/index.js';
import { storedAnalysis } from '../chunks.js';
import type { PgTx } from './db.js';
import { vectorBytes } from './sql.js';

/** The chunk columns of ChunkRow (SQLite's `SELECT *` of chunk, without the vector). */
export const CHUNK_COLS = `rowid, id, document_id, dataset_id, content, important_keywords, questions, tag_kwd, positions, available, image_id, doc_type,
  chunk_order, page_num, "top", token_num, vec_dim, create_time, create_timestamp, index_text, lang, titled`;

const json = (a: readonly unknown[]): string => (a.length === 0 ? '[]' : JSON.stringify(a));

/** The full-text row of a chunk: the one it came with (analysed by the ingest worker), or analysed here. */
const termsOf = (c: Pick<NewChunk, 'terms' | 'title' | 'content' | 'index_text' | 'important_keywords' | 'questions' | 'lang'>): FtsTerms =>
  c.terms ?? ftsTerms(c.title, c.index_text ?? c.content, c.important_keywords, c.questions, c.lang ?? 'en');

/** The dataset's language setting as it is in this transaction. */
export async function languageNow(t: PgTx, datasetId: string): Promise<ReturnType<typeof languageSetting>> {
  const r = await t.one<{ language: string | null }>('SELECT language FROM dataset WHERE id = $1', [datasetId]);
  return languageSetting(r?.language ?? null);
}

function checkDim(dim: number): void {
  // As SQLite's vector tables refuse it (store/vectors.ts vecTable).
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`Invalid vector dimension ${dim}`);
}

/**
 * Writes chunks in order (a later chunk with an earlier one's id replaces it; an existing chunk
 * of the same id, in any document, is replaced by a new row). Returns how many ids were new.
 * Rowids are taken from the sequence in the chunks' order, so a batch is stored in its order.
 */
export async function upsertChunks(t: PgTx, chunks: readonly NewChunk[]): Promise<number> {
  if (chunks.length === 0) return 0;
  for (const c of chunks) checkDim(c.vector.length);
  // The last copy of each id wins, at its own place in the order.
  const last = new Map<string, number>();
  chunks.forEach((c, i) => last.set(c.id, i));
  const keep = chunks.filter((c, i) => last.get(c.id) === i);
  const replaced = await t.run('DELETE FROM chunk WHERE id = ANY($1)', [keep.map((c) => c.id)]);
  const ids = (await t.rows<{ r: number }>("SELECT nextval(pg_get_serial_sequence('chunk', 'rowid')) AS r FROM generate_series(1, $1)", [keep.length]))
    .map((x) => x.r).sort((a, b) => a - b);
  const col = <T>(f: (c: NewChunk) => T): T[] => keep.map(f);
  // The analysed rows, as a JSON list of 4-string lists (unnest cannot take an array of arrays of another length).
  const terms = JSON.stringify(keep.map(termsOf));
  await t.run(`INSERT INTO chunk (rowid, id, document_id, dataset_id, content, important_keywords, questions, tag_kwd, positions, available, doc_type,
      chunk_order, page_num, "top", token_num, vec_dim, vector, create_time, create_timestamp, index_text, lang, titled, fts)
    SELECT x.c1, x.c2, x.c3, x.c4, x.c5, x.c6, x.c7, x.c8, x.c9, x.c10, x.c11, x.c12, x.c13, x.c14, x.c15, x.c16, x.c17, x.c18, x.c19, x.c20, x.c21, x.c22,
      ARRAY(SELECT json_array_elements_text(f.value))
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[],
      $12::int[], $13::int[], $14::int[], $15::int[], $16::int[], $17::bytea[], $18::text[], $19::float8[], $20::text[], $21::text[], $22::int[]) WITH ORDINALITY
      AS x(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, k)
    JOIN json_array_elements($23::json) WITH ORDINALITY AS f(value, k) ON f.k = x.k ORDER BY x.k`, [
    ids, col((c) => c.id), col((c) => c.document_id), col((c) => c.dataset_id), col((c) => c.content), col((c) => json(c.important_keywords)),
    col((c) => json(c.questions)), col((c) => json(c.tag_kwd)), col((c) => json(c.positions)), col((c) => (c.available ? 1 : 0)), col((c) => c.doc_type ?? ''),
    col((c) => c.chunk_order), col((c) => c.page_num ?? 0), col((c) => c.top ?? 0), col((c) => c.token_num), col((c) => c.vector.length),
    col((c) => vectorBytes(c.vector)), col((c) => c.create_time), col((c) => c.create_timestamp),
    col((c) => (c.index_text !== undefined && c.index_text !== c.content ? c.index_text : null)), col((c) => c.lang ?? 'en'), col((c) => (c.title === '' ? 0 : 1)), terms,
  ]);
  faultPoint('chunks.upsert:rows-written');
  return keep.length - replaced;
}

/** Deletes chunks by rowid. */
export async function removeChunkRows(t: PgTx, rowids: readonly number[]): Promise<void> {
  if (rowids.length) await t.run('DELETE FROM chunk WHERE rowid = ANY($1)', [rowids]);
}

/** Deletes every chunk of the documents; returns how many. */
export async function removeDocumentChunks(t: PgTx, documentIds: readonly string[]): Promise<number> {
  if (!documentIds.length) return 0;
  return t.run('DELETE FROM chunk WHERE document_id = ANY($1)', [documentIds]);
}

/** Recomputes a dataset's counters from its documents. */
export async function refreshDatasetCounts(t: PgTx, datasetId: string): Promise<void> {
  await t.run(`UPDATE dataset SET
      doc_num = (SELECT count(*) FROM document WHERE dataset_id = $1),
      chunk_num = (SELECT COALESCE(sum(chunk_num), 0)::bigint FROM document WHERE dataset_id = $1),
      token_num = (SELECT COALESCE(sum(token_num), 0)::bigint FROM document WHERE dataset_id = $1)
    WHERE id = $1`, [datasetId]);
}

/** Recounts one document's chunks and tokens from its rows, then its dataset's. */
export async function recount(t: PgTx, doc: { id: string; dataset_id: string }): Promise<void> {
  await t.run(`UPDATE document SET chunk_num = (SELECT count(*) FROM chunk WHERE document_id = $1),
    token_num = (SELECT COALESCE(sum(token_num), 0)::bigint FROM chunk WHERE document_id = $1) WHERE id = $1`, [doc.id]);
  await refreshDatasetCounts(t, doc.dataset_id);
}

/** Replaces a chunk's text fields and vector, keeping its rowid. */
export async function rewriteChunk(t: PgTx, rowid: number, c: Omit<NewChunk, 'document_id' | 'dataset_id' | 'chunk_order' | 'create_time' | 'create_timestamp'> & { dataset_id: string }): Promise<void> {
  checkDim(c.vector.length);
  const indexText = c.index_text !== undefined && c.index_text !== c.content ? c.index_text : null;
  await t.run(`UPDATE chunk SET id = $1, content = $2, important_keywords = $3, questions = $4, tag_kwd = $5, positions = $6, available = $7, token_num = $8,
      vec_dim = $9, vector = $10, index_text = $11, page_num = COALESCE($12, page_num), "top" = COALESCE($13, "top"), lang = $14, fts = $16 WHERE rowid = $15`, [
    c.id, c.content, JSON.stringify(c.important_keywords), JSON.stringify(c.questions), JSON.stringify(c.tag_kwd), JSON.stringify(c.positions),
    c.available ? 1 : 0, c.token_num, c.vector.length, vectorBytes(c.vector), indexText, c.page_num ?? null, c.top ?? null, c.lang ?? 'en', rowid,
    [...termsOf(c)], // as SQLite's rewrite indexes it (the title given)
  ]);
  // Its analysis may be all that changed (lang is not watched by the log trigger).
  await logChunks(t, c.dataset_id, [rowid]);
  faultPoint('chunks.rewrite:row-updated');
}

/**
 * A renamed document's chunks get the new title (all of them titled, as RAGFlow rewrites
 * title_tks): no chunk column holds the title, so each is logged for the followers to re-read.
 */
export async function retitleDocumentChunks(t: PgTx, documentId: string): Promise<number> {
  await t.run('UPDATE chunk SET titled = 1 WHERE document_id = $1 AND titled = 0', [documentId]);
  // Their stored full-text rows get the new title (SQLite rewrites chunk_fts alike).
  const rows = await t.rows<{ rowid: number; content: string; index_text: string | null; important_keywords: string; questions: string; lang: string | null; name: string }>(
    `SELECT c.rowid, c.content, c.index_text, c.important_keywords, c.questions, c.lang, d.name FROM chunk c JOIN document d ON d.id = c.document_id
    WHERE c.document_id = $1`, [documentId]);
  if (rows.length) {
    const terms = rows.map((r) => [...ftsTerms(r.name, r.index_text ?? r.content, JSON.parse(r.important_keywords) as string[], JSON.parse(r.questions) as string[], storedAnalysis(r.lang))]);
    await t.run(`UPDATE chunk c SET fts = ARRAY(SELECT json_array_elements_text(f.value)) FROM unnest($1::bigint[]) WITH ORDINALITY AS x(r, k)
      JOIN json_array_elements($2::json) WITH ORDINALITY AS f(value, k) ON f.k = x.k WHERE c.rowid = x.r`, [rows.map((r) => r.rowid), JSON.stringify(terms)]);
  }
  const n = await t.run("INSERT INTO change_log (topic, part, rid) SELECT 'chunk', dataset_id, rowid FROM chunk WHERE document_id = $1", [documentId]);
  if (n) await t.run("SELECT pg_notify('ragloom_change', 'chunk')");
  return n;
}

/** One slice of a dataset's re-index (see SQLite's store/chunks.ts reindexDatasetSlice): only `lang` is stored, the terms follow it. */
export async function reindexSlice(t: PgTx, datasetId: string, after: number, limit: number,
  langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }> {
  const rows = await t.rows<{ rowid: number; content: string; index_text: string | null; important_keywords: string; questions: string; lang: string | null; title: string }>(
    `SELECT c.rowid, c.content, c.index_text, c.important_keywords, c.questions, c.lang, CASE WHEN c.titled = 1 THEN COALESCE(d.name, '') ELSE '' END AS title
    FROM chunk c LEFT JOIN document d ON d.id = c.document_id WHERE c.dataset_id = $1 AND c.rowid > $2 ORDER BY c.rowid LIMIT $3`, [datasetId, after, limit]);
  const changed: number[] = [];
  const newTerms: Array<[number, string[]]> = [];
  const relabel: Array<[number, string]> = [];
  for (const r of rows) {
    const text = r.index_text ?? r.content;
    const keywords = JSON.parse(r.important_keywords) as string[];
    const questions = JSON.parse(r.questions) as string[];
    const want = langOf(text, keywords, questions);
    if (want === r.lang) continue;
    relabel.push([r.rowid, want]);
    if (r.lang === null && want === 'en' && [r.title, text, r.important_keywords, r.questions].every(englishIsV2)) continue;
    const old = ftsTerms(r.title, text, keywords, questions, storedAnalysis(r.lang));
    const terms = ftsTerms(r.title, text, keywords, questions, want);
    if (terms.some((x, i) => x !== old[i])) {
      changed.push(r.rowid);
      newTerms.push([r.rowid, [...terms]]);
    }
  }
  if (relabel.length) {
    await t.run('UPDATE chunk c SET lang = x.l FROM unnest($1::bigint[], $2::text[]) AS x(r, l) WHERE c.rowid = x.r',
      [relabel.map((x) => x[0]), relabel.map((x) => x[1])]);
  }
  if (newTerms.length) {
    await t.run(`UPDATE chunk c SET fts = ARRAY(SELECT json_array_elements_text(f.value)) FROM unnest($1::bigint[]) WITH ORDINALITY AS x(r, k)
      JOIN json_array_elements($2::json) WITH ORDINALITY AS f(value, k) ON f.k = x.k WHERE c.rowid = x.r`, [newTerms.map((x) => x[0]), JSON.stringify(newTerms.map((x) => x[1]))]);
  }
  await logChunks(t, datasetId, changed);
  return { last: rows.length ? rows[rows.length - 1]!.rowid : null, rewritten: changed.length };
}

/** Logs chunks of one dataset in the change feed (their terms changed without a watched column). */
async function logChunks(t: PgTx, datasetId: string, rowids: readonly number[]): Promise<void> {
  if (!rowids.length) return;
  await t.run("INSERT INTO change_log (topic, part, rid) SELECT 'chunk', $1, r FROM unnest($2::bigint[]) AS r", [datasetId, rowids]);
  await t.run("SELECT pg_notify('ragloom_change', 'chunk')");
}

/** A chunk row by id (ChunkRow's columns). */
export async function chunkById(t: PgTx, id: string): Promise<ChunkRow | undefined> {
  return t.one<ChunkRow>(`SELECT ${CHUNK_COLS} FROM chunk WHERE id = $1`, [id]);
}

/** Chunks and the embedding cache on SQLite (interface/chunks.ts), over store/chunks.ts. */
import { cachedStatement, type Db } from '../db.js';
import { upsertChunk, removeChunkRows, rewriteChunk, reindexDatasetSlice } from '../chunks.js';
import { chunkLanguage, languageSetting, type Lang } from '../../text/index.js';
import { toBlob, fromBlob } from '../vectors.js';
import type { CachedVector, ChunkRewrite, ChunkRow, ChunkStore, NewChunk } from '../interface/index.js';
import { faultPoint } from '../../util/index.js';
import { refreshDatasetCounts } from './datasets.js';
import type { SqliteConn } from './store.js';

/** Recounts one document's chunks and tokens from its rows, then its dataset's (inside the caller's transaction). */
function recount(db: Db, doc: { id: string; dataset_id: string }): void {
  db.prepare(`UPDATE document SET chunk_num = (SELECT COUNT(*) FROM chunk WHERE document_id = @id),
    token_num = (SELECT COALESCE(SUM(token_num), 0) FROM chunk WHERE document_id = @id) WHERE id = @id`).run({ id: doc.id });
  refreshDatasetCounts(db, doc.dataset_id);
}

/**
 * The dataset's analysis as it is now, read in the writing transaction: its language may have
 * changed while the chunk was embedded, and the background re-index may have passed already.
 */
const languageNow = (db: Db, datasetId: string) =>
  languageSetting(cachedStatement(db, 'SELECT language FROM dataset WHERE id = ?').pluck().get(datasetId) as string | null);

export class SqliteChunks implements ChunkStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  async cachedVectors(model: string, shas: readonly string[]): Promise<Map<string, Float32Array>> {
    const get = cachedStatement(this.db, 'SELECT vector FROM embedding_cache WHERE model = ? AND sha256 = ?').pluck();
    const out = new Map<string, Float32Array>();
    for (const sha of shas) {
      if (out.has(sha)) continue;
      const hit = get.get(model, sha) as Buffer | undefined;
      if (hit) out.set(sha, fromBlob(hit));
    }
    return out;
  }

  /** cacheVectors inside the caller's transaction. */
  putVectors(puts: readonly CachedVector[], time: number): void {
    const put = cachedStatement(this.db, 'INSERT OR REPLACE INTO embedding_cache (model, sha256, vector, create_time) VALUES (?, ?, ?, ?)');
    for (const [model, sha, v] of puts) put.run(model, sha, toBlob(v), time);
  }

  async cacheVectors(puts: readonly CachedVector[], time: number): Promise<void> {
    this.c.tx(() => this.putVectors(puts, time));
  }

  async add(datasetId: string, chunk: Omit<NewChunk, 'chunk_order'>): Promise<ChunkRow | undefined> {
    const db = this.db;
    const row = this.c.tx(() => {
      if (!cachedStatement(db, 'SELECT * FROM document WHERE id = ? AND dataset_id = ?').get(chunk.document_id, datasetId)) return undefined;
      const order = (db.prepare('SELECT COALESCE(MAX(chunk_order), -1) + 1 AS n FROM chunk WHERE document_id = ?').get(chunk.document_id) as { n: number }).n;
      upsertChunk(db, { ...chunk, chunk_order: order, lang: chunkLanguage(languageNow(db, datasetId), chunk.content, chunk.important_keywords, chunk.questions) });
      recount(db, { id: chunk.document_id, dataset_id: datasetId });
      faultPoint('chunks.add:counted');
      return db.prepare('SELECT * FROM chunk WHERE id = ?').get(chunk.id) as ChunkRow;
    });
    if (row) faultPoint('chunks.add:committed');
    return row;
  }

  async get(documentId: string, id: string): Promise<ChunkRow | undefined> {
    return this.db.prepare('SELECT * FROM chunk WHERE id = ? AND document_id = ?').get(id, documentId) as ChunkRow | undefined;
  }

  async list(documentId: string, limit: number, offset: number): Promise<{ total: number; rows: ChunkRow[] }> {
    const total = (this.db.prepare('SELECT COUNT(*) AS n FROM chunk WHERE document_id = ?').get(documentId) as { n: number }).n;
    // By position, as RAGFlow sorts page_num_int and top_int (chunks without positions last, as a
    // missing sort value is); rowid breaks the last ties so pages never overlap.
    const rows = this.db.prepare(`SELECT * FROM chunk WHERE document_id = ?
    ORDER BY page_num = 0, page_num, top, chunk_order, create_timestamp DESC, rowid LIMIT ? OFFSET ?`).all(documentId, limit, offset) as ChunkRow[];
    return { total, rows };
  }

  async search(documentId: string, terms: readonly string[], limit: number, offset: number): Promise<{ total: number; rows: ChunkRow[] }> {
    const match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
    const base = `FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid WHERE chunk_fts MATCH @match AND c.document_id = @doc`;
    const total = (this.db.prepare(`SELECT COUNT(*) AS n ${base}`).get({ match, doc: documentId }) as { n: number }).n;
    const rows = this.db.prepare(`SELECT c.* ${base} ORDER BY bm25(chunk_fts, 1, 2, 30, 20) LIMIT @limit OFFSET @offset`)
      .all({ match, doc: documentId, limit, offset }) as ChunkRow[];
    return { total, rows };
  }

  async rewrite(at: { rowid: number; id: string; document_id: string; dataset_id: string }, c: ChunkRewrite): Promise<boolean> {
    const db = this.db;
    const ok = this.c.tx(() => {
      // While the caller embedded, a re-parse or a delete (here or in another process) may have
      // removed the chunk, and its rowid may since name another one: rewrite only the same chunk.
      const now = db.prepare('SELECT rowid FROM chunk WHERE id = ? AND document_id = ?').get(at.id, at.document_id) as { rowid: number } | undefined;
      if (!now || now.rowid !== at.rowid) return false;
      rewriteChunk(db, at.rowid, { ...c, lang: chunkLanguage(languageNow(db, at.dataset_id), c.content, c.important_keywords, c.questions) });
      recount(db, { id: at.document_id, dataset_id: at.dataset_id });
      faultPoint('chunks.update:counted');
      return true;
    });
    if (ok) faultPoint('chunks.update:committed');
    return ok;
  }

  async rowidsOf(documentId: string, ids: readonly string[] | 'all'): Promise<number[]> {
    if (ids === 'all') return (this.db.prepare('SELECT rowid FROM chunk WHERE document_id = ?').all(documentId) as { rowid: number }[]).map((r) => r.rowid);
    const sel = this.db.prepare('SELECT rowid FROM chunk WHERE id = ? AND document_id = ?');
    return ids.map((id) => sel.get(id, documentId) as { rowid: number } | undefined).filter((r): r is { rowid: number } => !!r).map((r) => r.rowid);
  }

  async reindexSlice(datasetId: string, after: number, limit: number, langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }> {
    return this.c.tx(() => reindexDatasetSlice(this.db, datasetId, after, limit, langOf));
  }

  async remove(doc: { id: string; dataset_id: string }, rowids: readonly number[]): Promise<void> {
    this.c.tx(() => {
      removeChunkRows(this.db, [...rowids]);
      recount(this.db, doc);
      faultPoint('chunks.delete:counted');
    });
    faultPoint('chunks.delete:committed');
  }
}

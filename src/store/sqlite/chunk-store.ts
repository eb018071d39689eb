/** Chunks and the embedding cache on SQLite (interface/chunks.ts), over store/chunks.ts. */
import { cachedStatement, type Db } from '../db.js';
import { upsertChunk, removeChunkRows, rewriteChunk, reindexDatasetSlice } from '../chunks.js';
import { chunkLanguage, languageSetting, type Lang } from '../../text/index.js';
import { toBlob, fromBlob } from '../vectors.js';
import type { CachedVector, ChunkRewrite, ChunkRow, ChunkStore, NewChunk } from '../interface/index.js';
import { faultPoint } from '../../util/index.js';
import type { SqliteConn } from './store.js';

/**
 * Moves a document's chunk and token counters, and its dataset's, by the given amounts (RAGFlow's
 * increment_chunk_num / decrement_chunk_num): the counters follow the operations, not a recount.
 * Inside the caller's transaction.
 */
function moveCounts(db: Db, doc: { id: string; dataset_id: string }, chunks: number, tokens: number): void {
  if (!chunks && !tokens) return;
  db.prepare('UPDATE document SET chunk_num = MAX(0, chunk_num + ?), token_num = MAX(0, token_num + ?) WHERE id = ?').run(chunks, tokens, doc.id);
  db.prepare('UPDATE dataset SET chunk_num = MAX(0, chunk_num + ?), token_num = MAX(0, token_num + ?) WHERE id = ?').run(chunks, tokens, doc.dataset_id);
}

/** Keeps a chunk's image (served as /documents/images/{dataset_id}-{chunk_id}) and marks the chunk as an image's. */
function storeImage(db: Db, datasetId: string, chunkId: string, image: Uint8Array): void {
  const imageId = `${datasetId}-${chunkId}`;
  db.prepare('INSERT OR REPLACE INTO chunk_image (id, dataset_id, data) VALUES (?, ?, ?)').run(imageId, datasetId, Buffer.from(image));
  db.prepare("UPDATE chunk SET image_id = ?, doc_type = 'image' WHERE id = ?").run(imageId, chunkId);
}

/**
 * The dataset's analysis as it is now, read in the writing transaction: its language may have
 * changed while the chunk was embedded, and the background re-index may have passed already.
 */
const languageNow = (db: Db, datasetId: string) =>
  languageSetting(cachedStatement(db, 'SELECT language FROM dataset WHERE id = ?').pluck().get(datasetId) as string | null);

/** A switch named a chunk the dataset does not hold: the transaction rolls back. */
class NoSuchChunk extends Error {}

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

  async add(datasetId: string, chunk: Omit<NewChunk, 'chunk_order'>, image?: Uint8Array): Promise<ChunkRow | undefined> {
    const db = this.db;
    const row = this.c.tx(() => {
      if (!cachedStatement(db, 'SELECT * FROM document WHERE id = ? AND dataset_id = ?').get(chunk.document_id, datasetId)) return undefined;
      const order = (db.prepare('SELECT COALESCE(MAX(chunk_order), -1) + 1 AS n FROM chunk WHERE document_id = ?').get(chunk.document_id) as { n: number }).n;
      upsertChunk(db, { ...chunk, chunk_order: order, lang: chunkLanguage(languageNow(db, datasetId), chunk.content, chunk.important_keywords, chunk.questions) });
      if (image) storeImage(db, datasetId, chunk.id, image);
      moveCounts(db, { id: chunk.document_id, dataset_id: datasetId }, 1, chunk.token_num);
      faultPoint('chunks.add:counted');
      return db.prepare('SELECT * FROM chunk WHERE id = ?').get(chunk.id) as ChunkRow;
    });
    if (row) faultPoint('chunks.add:committed');
    return row;
  }

  async get(documentId: string, id: string): Promise<ChunkRow | undefined> {
    return this.db.prepare('SELECT * FROM chunk WHERE id = ? AND document_id = ?').get(id, documentId) as ChunkRow | undefined;
  }

  async list(documentId: string, limit: number, offset: number, available: 0 | 1 | null = null): Promise<{ total: number; rows: ChunkRow[] }> {
    const where = `document_id = @doc${available === null ? '' : ' AND available = @avail'}`;
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM chunk WHERE ${where}`).get({ doc: documentId, avail: available }) as { n: number }).n;
    // By position, as RAGFlow sorts page_num_int and top_int (chunks without positions last, as a
    // missing sort value is); rowid breaks the last ties so pages never overlap.
    const rows = this.db.prepare(`SELECT * FROM chunk WHERE ${where}
    ORDER BY page_num = 0, page_num, top, chunk_order, create_timestamp DESC, rowid LIMIT @limit OFFSET @offset`).all({ doc: documentId, avail: available, limit, offset }) as ChunkRow[];
    return { total, rows };
  }

  async search(documentId: string, terms: readonly string[], limit: number, offset: number, available: 0 | 1 | null = null): Promise<{ total: number; rows: ChunkRow[] }> {
    // Every field RAGFlow's full-text query reads, the title too.
    const match = `{title content keywords questions} : (${terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ')})`;
    const base = `FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid WHERE chunk_fts MATCH @match AND c.document_id = @doc${available === null ? '' : ' AND c.available = @avail'}`;
    const total = (this.db.prepare(`SELECT COUNT(*) AS n ${base}`).get({ match, doc: documentId, avail: available }) as { n: number }).n;
    const rows = this.db.prepare(`SELECT c.* ${base} ORDER BY bm25(chunk_fts, 1, 2, 30, 20) LIMIT @limit OFFSET @offset`)
      .all({ match, doc: documentId, avail: available, limit, offset }) as ChunkRow[];
    return { total, rows };
  }

  async rewrite(at: { rowid: number; id: string; document_id: string; dataset_id: string }, c: ChunkRewrite, image?: Uint8Array): Promise<boolean> {
    const db = this.db;
    const ok = this.c.tx(() => {
      // While the caller embedded, a re-parse or a delete (here or in another process) may have
      // removed the chunk, and its rowid may since name another one: rewrite only the same chunk.
      const now = db.prepare('SELECT rowid, token_num FROM chunk WHERE id = ? AND document_id = ?').get(at.id, at.document_id) as { rowid: number; token_num: number } | undefined;
      if (!now || now.rowid !== at.rowid) return false;
      rewriteChunk(db, at.rowid, { ...c, lang: chunkLanguage(languageNow(db, at.dataset_id), c.content, c.important_keywords, c.questions) });
      if (image) storeImage(db, at.dataset_id, at.id, image);
      moveCounts(db, { id: at.document_id, dataset_id: at.dataset_id }, 0, c.token_num - now.token_num); // the same chunk: its tokens only
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

  async setAvailable(datasetId: string, ids: readonly string[], on: boolean): Promise<boolean> {
    const upd = cachedStatement(this.db, 'UPDATE chunk SET available = ? WHERE id = ? AND dataset_id = ?');
    try {
      this.c.tx(() => {
        for (const id of ids) if (upd.run(on ? 1 : 0, id, datasetId).changes === 0) throw new NoSuchChunk();
      });
      return true;
    } catch (e) {
      if (e instanceof NoSuchChunk) return false;
      throw e;
    }
  }

  async embeddingSamples(datasetId: string, limit: number): Promise<Array<Pick<ChunkRow, 'rowid' | 'id' | 'document_id' | 'content' | 'questions' | 'vec_dim'> & { name: string }>> {
    return this.db.prepare(`SELECT c.rowid, c.id, c.document_id, c.content, c.questions, c.vec_dim, d.name FROM chunk c JOIN document d ON d.id = c.document_id
    WHERE c.dataset_id = ? AND c.available = 1 ORDER BY c.rowid LIMIT ?`).all(datasetId, limit) as Array<Pick<ChunkRow, 'rowid' | 'id' | 'document_id' | 'content' | 'questions' | 'vec_dim'> & { name: string }>;
  }

  async storedVectors(chunks: ReadonlyArray<Pick<ChunkRow, 'rowid' | 'vec_dim'>>): Promise<Map<number, Float32Array>> {
    const out = new Map<number, Float32Array>();
    for (const c of chunks) {
      if (c.vec_dim <= 0) continue;
      // The same cached statement as search.ts and copy.ts read plucked (pluck() sets the shared statement's mode).
      const b = cachedStatement(this.db, `SELECT embedding FROM vec_${c.vec_dim} WHERE rowid = ?`).pluck().get(BigInt(c.rowid)) as Buffer | undefined;
      if (b) out.set(c.rowid, fromBlob(b));
    }
    return out;
  }

  async tagCounts(datasetIds: readonly string[]): Promise<Array<[string, number]>> {
    const rows = this.db.prepare(`SELECT j.value AS tag, COUNT(*) AS n FROM chunk c, json_each(c.tag_kwd) j
    WHERE c.dataset_id IN (SELECT value FROM json_each(?)) AND c.tag_kwd != '[]' AND j.type = 'text' GROUP BY j.value ORDER BY n DESC, tag`)
      .all(JSON.stringify(datasetIds)) as Array<{ tag: string; n: number }>;
    return rows.map((r) => [r.tag, r.n]);
  }

  async editTags(datasetId: string, edits: ReadonlyArray<{ tag: string; change: (tags: unknown[]) => unknown[] }>): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      for (const { tag, change } of edits) {
        const rows = db.prepare(`SELECT rowid, tag_kwd FROM chunk WHERE dataset_id = ? AND EXISTS (SELECT 1 FROM json_each(chunk.tag_kwd) j WHERE j.value = ?)`)
          .all(datasetId, tag) as Array<{ rowid: number; tag_kwd: string }>;
        const upd = db.prepare('UPDATE chunk SET tag_kwd = ? WHERE rowid = ?');
        for (const r of rows) upd.run(JSON.stringify(change(JSON.parse(r.tag_kwd) as unknown[])), r.rowid);
      }
    });
  }

  async image(id: string): Promise<Uint8Array | undefined> {
    const row = cachedStatement(this.db, 'SELECT data FROM chunk_image WHERE id = ?').get(id) as { data: Buffer } | undefined;
    return row && new Uint8Array(row.data);
  }

  async reindexSlice(datasetId: string, after: number, limit: number, langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }> {
    return this.c.tx(() => reindexDatasetSlice(this.db, datasetId, after, limit, langOf));
  }

  async remove(doc: { id: string; dataset_id: string }, rowids: readonly number[]): Promise<void> {
    const tokens = cachedStatement(this.db, 'SELECT token_num FROM chunk WHERE rowid = ? AND document_id = ?').pluck();
    this.c.tx(() => {
      // The counters move down by the chunks still there (one deleted meanwhile is not counted twice).
      let n = 0;
      let sum = 0;
      for (const r of rowids) {
        const t = tokens.get(r, doc.id) as number | undefined;
        if (t !== undefined) (n++, (sum += t));
      }
      removeChunkRows(this.db, [...rowids]);
      moveCounts(this.db, doc, -n, -sum);
      faultPoint('chunks.delete:counted');
    });
    faultPoint('chunks.delete:committed');
  }
}

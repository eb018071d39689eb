/** Chunks and the embedding cache on PostgreSQL (interface/chunks.ts), over chunk-rows.ts. */
import { chunkLanguage, ftsTerms, type FtsTerms, type Lang } from '../../text/index.js';
import type { CachedVector, ChunkRewrite, ChunkRow, ChunkStore, NewChunk } from '../interface/index.js';
import { faultPoint } from '../../util/index.js';
import { storedAnalysis } from '../chunks.js';
import type { PgDb, PgTx } from './db.js';
import { CHUNK_COLS, chunkById, languageNow, recount, reindexSlice, rewriteChunk, upsertChunks } from './chunk-rows.js';
import { vectorBytes, vectorOf } from './sql.js';
import type { ChunkSearcher } from './fulltext.js';

export class PgChunks implements ChunkStore {
  constructor(private readonly db: PgDb, private readonly searcher: ChunkSearcher, private readonly wrote: () => Promise<void>) {}

  async cachedVectors(model: string, shas: readonly string[]): Promise<Map<string, Float32Array>> {
    const rows = await this.db.rows<{ sha256: string; vector: Buffer }>('SELECT sha256, vector FROM embedding_cache WHERE model = $1 AND sha256 = ANY($2)', [model, [...new Set(shas)]]);
    const out = new Map<string, Float32Array>();
    for (const r of rows) out.set(r.sha256, vectorOf(r.vector) ?? new Float32Array(0));
    return out;
  }

  /** cacheVectors inside the caller's transaction. */
  async putVectors(t: PgTx, puts: readonly CachedVector[], time: number): Promise<void> {
    if (!puts.length) return;
    // The last of a key wins, as INSERT OR REPLACE one by one would leave it.
    const last = new Map<string, CachedVector>();
    for (const p of puts) last.set(`${p[0]}\u0000${p[1]}`, p);
    const list = [...last.values()];
    await t.run(`INSERT INTO embedding_cache (model, sha256, vector, create_time) SELECT m, s, v, $4 FROM unnest($1::text[], $2::text[], $3::bytea[]) AS x(m, s, v)
      ON CONFLICT (model, sha256) DO UPDATE SET vector = EXCLUDED.vector, create_time = EXCLUDED.create_time`,
    [list.map((p) => p[0]), list.map((p) => p[1]), list.map((p) => vectorBytes(p[2]) ?? Buffer.alloc(0)), time]);
  }

  async cacheVectors(puts: readonly CachedVector[], time: number): Promise<void> {
    await this.db.tx((t) => this.putVectors(t, puts, time), { idempotent: true });
  }

  async add(datasetId: string, chunk: Omit<NewChunk, 'chunk_order'>): Promise<ChunkRow | undefined> {
    const row = await this.db.tx(async (t) => {
      // The document's row is locked: two adds to one document take turns for the next chunk_order.
      if (!(await t.one('SELECT 1 FROM document WHERE id = $1 AND dataset_id = $2 FOR UPDATE', [chunk.document_id, datasetId]))) return undefined;
      const order = (await t.one<{ n: number }>('SELECT COALESCE(max(chunk_order), -1) + 1 AS n FROM chunk WHERE document_id = $1', [chunk.document_id]))!.n;
      const { terms: _t, ...c } = chunk;
      await upsertChunks(t, [{ ...c, chunk_order: order, lang: chunkLanguage(await languageNow(t, datasetId), c.content, c.important_keywords, c.questions) }]);
      await recount(t, { id: chunk.document_id, dataset_id: datasetId });
      faultPoint('chunks.add:counted');
      return chunkById(t, chunk.id);
    });
    if (row) {
      faultPoint('chunks.add:committed');
      await this.wrote();
    }
    return row;
  }

  async get(documentId: string, id: string): Promise<ChunkRow | undefined> {
    return this.db.one<ChunkRow>(`SELECT ${CHUNK_COLS} FROM chunk WHERE id = $1 AND document_id = $2`, [id, documentId]);
  }

  async list(documentId: string, limit: number, offset: number): Promise<{ total: number; rows: ChunkRow[] }> {
    const total = (await this.db.one<{ n: number }>('SELECT count(*) AS n FROM chunk WHERE document_id = $1', [documentId]))!.n;
    const rows = await this.db.rows<ChunkRow>(`SELECT ${CHUNK_COLS} FROM chunk WHERE document_id = $1
      ORDER BY page_num = 0, page_num, "top", chunk_order, create_timestamp DESC, rowid LIMIT ${limit < 0 ? 'ALL' : Math.floor(limit)} OFFSET ${Math.max(0, Math.floor(offset))}`, [documentId]);
    return { total, rows };
  }

  async search(documentId: string, terms: readonly string[], limit: number, offset: number): Promise<{ total: number; rows: ChunkRow[] }> {
    // The document's full-text rows, scored by FTS5 over the whole chunk table's statistics (fulltext.ts).
    const ranked = await this.searcher.searchDocument(documentId, terms);
    const total = ranked.length;
    const page = ranked.slice(Math.max(0, offset), limit < 0 ? undefined : Math.max(0, offset) + limit);
    const rows = await this.db.rows<ChunkRow>(`SELECT ${CHUNK_COLS} FROM chunk WHERE rowid = ANY($1)`, [page]);
    const by = new Map(rows.map((r) => [r.rowid, r]));
    return { total, rows: page.map((r) => by.get(r)).filter((r): r is ChunkRow => !!r) };
  }

  async rewrite(at: { rowid: number; id: string; document_id: string; dataset_id: string }, c: ChunkRewrite): Promise<boolean> {
    const ok = await this.db.tx(async (t) => {
      // While the caller embedded, the chunk may have been removed (here or in another process): rewrite only the same chunk.
      const now = await t.one<{ rowid: number }>('SELECT rowid FROM chunk WHERE id = $1 AND document_id = $2 FOR UPDATE', [at.id, at.document_id]);
      if (!now || now.rowid !== at.rowid) return false;
      const { terms: _t, ...rest } = c;
      await rewriteChunk(t, at.rowid, { ...rest, lang: chunkLanguage(await languageNow(t, at.dataset_id), c.content, c.important_keywords, c.questions) });
      await recount(t, { id: at.document_id, dataset_id: at.dataset_id });
      faultPoint('chunks.update:counted');
      return true;
    });
    if (ok) {
      faultPoint('chunks.update:committed');
      await this.wrote();
    }
    return ok;
  }

  async rowidsOf(documentId: string, ids: readonly string[] | 'all'): Promise<number[]> {
    if (ids === 'all') return (await this.db.rows<{ rowid: number }>('SELECT rowid FROM chunk WHERE document_id = $1 ORDER BY rowid', [documentId])).map((r) => r.rowid);
    const rows = await this.db.rows<{ id: string; rowid: number }>('SELECT id, rowid FROM chunk WHERE id = ANY($1) AND document_id = $2', [[...new Set(ids)], documentId]);
    const by = new Map(rows.map((r) => [r.id, r.rowid]));
    return ids.filter((id) => by.has(id)).map((id) => by.get(id)!);
  }

  async reindexSlice(datasetId: string, after: number, limit: number, langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }> {
    const r = await this.db.tx((t) => reindexSlice(t, datasetId, after, limit, langOf), { idempotent: true });
    await this.wrote();
    return r;
  }

  async remove(doc: { id: string; dataset_id: string }, rowids: readonly number[]): Promise<void> {
    await this.db.tx(async (t) => {
      if (rowids.length) await t.run('DELETE FROM chunk WHERE rowid = ANY($1)', [[...rowids]]);
      await recount(t, doc);
      faultPoint('chunks.delete:counted');
    }, { idempotent: true });
    faultPoint('chunks.delete:committed');
    await this.wrote();
  }
}

/** A chunk's full-text row as SQLite's FTS5 holds it (title, content, keywords, questions). */
export function chunkTerms(r: { content: string; index_text: string | null; important_keywords: string; questions: string; title: string; lang: string | null }): FtsTerms {
  return ftsTerms(r.title, r.index_text ?? r.content, JSON.parse(r.important_keywords) as string[], JSON.parse(r.questions) as string[], storedAnalysis(r.lang));
}

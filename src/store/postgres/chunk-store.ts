/** Chunks and the embedding cache on PostgreSQL (interface/chunks.ts), over chunk-rows.ts. */
import { chunkLanguage, ftsTerms, type FtsTerms, type Lang } from '../../text/index.js';
import type { CachedVector, ChunkRewrite, ChunkRow, ChunkStore, NewChunk } from '../interface/index.js';
import { faultPoint } from '../../util/index.js';
import { storedAnalysis } from '../chunks.js';
import type { PgDb, PgTx } from './db.js';
import { CHUNK_COLS, chunkById, languageNow, reindexSlice, rewriteChunk, upsertChunks } from './chunk-rows.js';
import { vectorBytes, vectorOf } from './sql.js';
import type { ChunkSearcher } from './fulltext.js';

/** A switch named a chunk the dataset does not hold: the transaction rolls back. */
class NoSuchChunk extends Error {}

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

  async add(datasetId: string, chunk: Omit<NewChunk, 'chunk_order'>, image?: Uint8Array): Promise<ChunkRow | undefined> {
    const row = await this.db.tx(async (t) => {
      // The document's row is locked: two adds to one document take turns for the next chunk_order.
      if (!(await t.one('SELECT 1 FROM document WHERE id = $1 AND dataset_id = $2 FOR UPDATE', [chunk.document_id, datasetId]))) return undefined;
      const order = (await t.one<{ n: number }>('SELECT COALESCE(max(chunk_order), -1) + 1 AS n FROM chunk WHERE document_id = $1', [chunk.document_id]))!.n;
      const { terms: _t, ...c } = chunk;
      await upsertChunks(t, [{ ...c, chunk_order: order, lang: chunkLanguage(await languageNow(t, datasetId), c.content, c.important_keywords, c.questions) }]);
      if (image) await storeImage(t, datasetId, chunk.id, image);
      await moveCounts(t, { id: chunk.document_id, dataset_id: datasetId }, 1, chunk.token_num);
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

  async list(documentId: string, limit: number, offset: number, available: 0 | 1 | null = null): Promise<{ total: number; rows: ChunkRow[] }> {
    const where = `document_id = $1${available === null ? '' : ' AND available = $2'}`;
    const p = available === null ? [documentId] : [documentId, available];
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM chunk WHERE ${where}`, p))!.n;
    const rows = await this.db.rows<ChunkRow>(`SELECT ${CHUNK_COLS} FROM chunk WHERE ${where}
      ORDER BY page_num = 0, page_num, "top", chunk_order, create_timestamp DESC, rowid LIMIT ${limit < 0 ? 'ALL' : Math.floor(limit)} OFFSET ${Math.max(0, Math.floor(offset))}`, p);
    return { total, rows };
  }

  async search(documentId: string, terms: readonly string[], limit: number, offset: number, available: 0 | 1 | null = null): Promise<{ total: number; rows: ChunkRow[] }> {
    // The document's full-text rows, scored by FTS5 over the whole chunk table's statistics (fulltext.ts).
    const ranked = await this.searcher.searchDocument(documentId, terms);
    const rows = await this.db.rows<ChunkRow>(`SELECT ${CHUNK_COLS} FROM chunk WHERE rowid = ANY($1)`, [ranked]);
    const by = new Map(rows.map((r) => [r.rowid, r]));
    const hits = ranked.map((r) => by.get(r)).filter((r): r is ChunkRow => !!r && (available === null || r.available === available));
    return { total: hits.length, rows: hits.slice(Math.max(0, offset), limit < 0 ? undefined : Math.max(0, offset) + limit) };
  }

  async rewrite(at: { rowid: number; id: string; document_id: string; dataset_id: string }, c: ChunkRewrite, image?: Uint8Array): Promise<boolean> {
    const ok = await this.db.tx(async (t) => {
      // While the caller embedded, the chunk may have been removed (here or in another process): rewrite only the same chunk.
      const now = await t.one<{ rowid: number; token_num: number }>('SELECT rowid, token_num FROM chunk WHERE id = $1 AND document_id = $2 FOR UPDATE', [at.id, at.document_id]);
      if (!now || now.rowid !== at.rowid) return false;
      const { terms: _t, ...rest } = c;
      await rewriteChunk(t, at.rowid, { ...rest, lang: chunkLanguage(await languageNow(t, at.dataset_id), c.content, c.important_keywords, c.questions) });
      if (image) await storeImage(t, at.dataset_id, at.id, image);
      await moveCounts(t, { id: at.document_id, dataset_id: at.dataset_id }, 0, c.token_num - now.token_num); // the same chunk: its tokens only
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

  async setAvailable(datasetId: string, ids: readonly string[], on: boolean): Promise<boolean> {
    return this.db.tx(async (t) => {
      const unique = [...new Set(ids)];
      const n = await t.run('UPDATE chunk SET available = $1 WHERE id = ANY($2) AND dataset_id = $3', [on ? 1 : 0, unique, datasetId]);
      // One id that is not a chunk of the dataset: nothing is switched (the transaction rolls back).
      if (n !== unique.length) throw new NoSuchChunk();
      return true;
    }, { idempotent: true }).catch((e) => {
      if (e instanceof NoSuchChunk) return false;
      throw e;
    }).finally(() => this.wrote());
  }

  async embeddingSamples(datasetId: string, limit: number): Promise<Array<Pick<ChunkRow, 'rowid' | 'id' | 'document_id' | 'content' | 'questions' | 'vec_dim'> & { name: string }>> {
    return this.db.rows(`SELECT c.rowid, c.id, c.document_id, c.content, c.questions, c.vec_dim, d.name FROM chunk c JOIN document d ON d.id = c.document_id
      WHERE c.dataset_id = $1 AND c.available = 1 ORDER BY c.rowid LIMIT $2`, [datasetId, Math.max(0, Math.floor(limit))]);
  }

  async storedVectors(chunks: ReadonlyArray<Pick<ChunkRow, 'rowid' | 'vec_dim'>>): Promise<Map<number, Float32Array>> {
    const want = chunks.filter((c) => c.vec_dim > 0);
    const rows = await this.db.rows<{ rowid: number; vec_dim: number; vector: Buffer | null }>('SELECT rowid, vec_dim, vector FROM chunk WHERE rowid = ANY($1)', [want.map((c) => c.rowid)]);
    const dim = new Map(want.map((c) => [c.rowid, c.vec_dim]));
    const out = new Map<number, Float32Array>();
    for (const r of rows) {
      const v = vectorOf(r.vector);
      if (v && r.vec_dim === dim.get(r.rowid)) out.set(r.rowid, v);
    }
    return out;
  }

  async tagCounts(datasetIds: readonly string[]): Promise<Array<[string, number]>> {
    // Tags are JSON lists of strings stored as text (json, not jsonb: the text is kept as written).
    const rows = await this.db.rows<{ tag: string; n: number }>(`SELECT j.value AS tag, count(*) AS n FROM chunk c, json_array_elements(c.tag_kwd::json) j0, LATERAL (SELECT j0 #>> '{}' AS value) j
      WHERE c.dataset_id = ANY($1) AND c.tag_kwd <> '[]' AND json_typeof(j0) = 'string' GROUP BY j.value ORDER BY n DESC, tag`, [[...datasetIds]]);
    return rows.map((r) => [r.tag, r.n]);
  }

  async editTags(datasetId: string, edits: ReadonlyArray<{ tag: string; change: (tags: unknown[]) => unknown[] }>): Promise<void> {
    await this.db.tx(async (t) => {
      for (const { tag, change } of edits) {
        const rows = await t.rows<{ rowid: number; tag_kwd: string }>(`SELECT rowid, tag_kwd FROM chunk WHERE dataset_id = $1 AND tag_kwd <> '[]'
          AND EXISTS (SELECT 1 FROM json_array_elements(tag_kwd::json) j WHERE json_typeof(j) = 'string' AND j #>> '{}' = $2) ORDER BY rowid FOR UPDATE`, [datasetId, tag]);
        for (const r of rows) await t.run('UPDATE chunk SET tag_kwd = $1 WHERE rowid = $2', [JSON.stringify(change(JSON.parse(r.tag_kwd) as unknown[])), r.rowid]);
      }
    });
  }

  async image(id: string): Promise<Uint8Array | undefined> {
    const r = await this.db.one<{ data: Buffer }>('SELECT data FROM chunk_image WHERE id = $1', [id]);
    return r && new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength);
  }

  async reindexSlice(datasetId: string, after: number, limit: number, langOf: (text: string, keywords: string[], questions: string[]) => Lang): Promise<{ last: number | null; rewritten: number }> {
    const r = await this.db.tx((t) => reindexSlice(t, datasetId, after, limit, langOf), { idempotent: true });
    await this.wrote();
    return r;
  }

  async remove(doc: { id: string; dataset_id: string }, rowids: readonly number[]): Promise<void> {
    await this.db.tx(async (t) => {
      // The counters move down by the chunks still there (one deleted meanwhile is not counted twice).
      const gone = rowids.length
        ? (await t.one<{ n: number; tk: number }>('WITH d AS (DELETE FROM chunk WHERE rowid = ANY($1) AND document_id = $2 RETURNING token_num) SELECT count(*) AS n, COALESCE(sum(token_num), 0)::bigint AS tk FROM d',
          [[...rowids], doc.id]))!
        : { n: 0, tk: 0 };
      await moveCounts(t, doc, -gone.n, -gone.tk);
      faultPoint('chunks.delete:counted');
    }, { idempotent: true });
    faultPoint('chunks.delete:committed');
    await this.wrote();
  }
}

/** Moves a document's and its dataset's chunk and token counters (RAGFlow's increment/decrement_chunk_num). */
async function moveCounts(t: PgTx, doc: { id: string; dataset_id: string }, chunks: number, tokens: number): Promise<void> {
  if (!chunks && !tokens) return;
  await t.run('UPDATE document SET chunk_num = GREATEST(0, chunk_num + $1), token_num = GREATEST(0, token_num + $2) WHERE id = $3', [chunks, tokens, doc.id]);
  await t.run('UPDATE dataset SET chunk_num = GREATEST(0, chunk_num + $1), token_num = GREATEST(0, token_num + $2) WHERE id = $3', [chunks, tokens, doc.dataset_id]);
}

/** Keeps a chunk's image (served as /documents/images/{dataset_id}-{chunk_id}) and marks the chunk as an image's. */
async function storeImage(t: PgTx, datasetId: string, chunkId: string, image: Uint8Array): Promise<void> {
  const imageId = `${datasetId}-${chunkId}`;
  await t.run('INSERT INTO chunk_image (id, dataset_id, data) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET dataset_id = EXCLUDED.dataset_id, data = EXCLUDED.data',
    [imageId, datasetId, Buffer.from(image.buffer, image.byteOffset, image.byteLength)]);
  await t.run("UPDATE chunk SET image_id = $1, doc_type = 'image' WHERE id = $2", [imageId, chunkId]);
}

/** A chunk's full-text row as SQLite's FTS5 holds it (title, content, keywords, questions). */
export function chunkTerms(r: { content: string; index_text: string | null; important_keywords: string; questions: string; title: string; lang: string | null }): FtsTerms {
  return ftsTerms(r.title, r.index_text ?? r.content, JSON.parse(r.important_keywords) as string[], JSON.parse(r.questions) as string[], storedAnalysis(r.lang));
}

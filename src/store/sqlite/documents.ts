/** Documents and their file bytes on SQLite (interface/documents.ts). */
import { cachedStatement } from '../db.js';
import { getBlob, putBlob, pruneBlobs } from '../blobs.js';
import { removeDocumentChunks, retitleDocumentChunks } from '../chunks.js';
import { RUN } from '../interface/index.js';
import type {
  DocumentListQuery, DocumentRow, DocumentStore, DocumentUpdate, FileBytes, FileSource, NewFile, ReplaceResult, UploadTarget,
} from '../interface/index.js';
import { duplicateName, faultPoint, sha256Hex } from '../../util/index.js';
import { refreshDatasetCounts } from './datasets.js';
import { marks, setList } from './sql.js';
import type { SqliteConn } from './store.js';

/** A blob row's bytes (a Buffer better-sqlite3 made for this read), whole or in pieces. */
class BlobBytes implements FileBytes {
  constructor(private readonly data: Uint8Array) {}

  get size(): number {
    return this.data.byteLength;
  }

  async bytes(): Promise<Uint8Array> {
    return this.data;
  }

  async *stream(chunkSize = 1 << 20): AsyncIterable<Uint8Array> {
    for (let at = 0; at < this.data.byteLength; at += chunkSize) yield this.data.subarray(at, Math.min(this.data.byteLength, at + chunkSize));
  }
}

/** A file's bytes in one buffer (SQLite stores a blob as one value). */
async function gather(source: FileSource): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  const parts: Uint8Array[] = [];
  for await (const p of source) parts.push(p);
  return Buffer.concat(parts);
}

export class SqliteDocuments implements DocumentStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  /** The document when it is in the dataset (synchronous: other aggregates check it inside their transactions). */
  getNow(datasetId: string, id: string): DocumentRow | undefined {
    // Prepared once per connection: a request naming 100,000 ids would otherwise prepare (and hold) 100,000 statements.
    return cachedStatement(this.db, 'SELECT * FROM document WHERE id = ? AND dataset_id = ?').get(id, datasetId) as DocumentRow | undefined;
  }

  async get(datasetId: string, id: string): Promise<DocumentRow | undefined> {
    return this.getNow(datasetId, id);
  }

  async getMany(datasetId: string, ids: readonly string[]): Promise<Map<string, DocumentRow>> {
    const out = new Map<string, DocumentRow>();
    for (const id of ids) {
      const d = this.getNow(datasetId, id);
      if (d) out.set(id, d);
    }
    return out;
  }

  async nameExists(datasetId: string, name: string): Promise<boolean> {
    return !!this.db.prepare('SELECT 1 FROM document WHERE dataset_id = ? AND name = ? COLLATE NOCASE').get(datasetId, name);
  }

  async exactNameTaken(datasetId: string, name: string, exceptId: string): Promise<boolean> {
    return (this.db.prepare('SELECT name FROM document WHERE dataset_id = ? AND id != ?').all(datasetId, exceptId) as { name: string }[])
      .some((d) => d.name === name);
  }

  async upload(target: UploadTarget, files: readonly NewFile[], ids: readonly string[]): Promise<void> {
    const db = this.db;
    const t = target.time;
    // A blob is one value here: streamed files are gathered before the transaction (a failing
    // source throws here, before anything is written).
    // In order: several streams may be parts of one request body.
    const bytes: Uint8Array[] = [];
    for (const f of files) bytes.push(await gather(f.bytes));
    this.c.tx(() => {
      // Names compare as RAGFlow's MySQL collation does: case-insensitively. One lookup in the
      // (dataset_id, name COLLATE NOCASE) index per candidate name: 10,000 files into a dataset of
      // 10,000 cost 20,000 index probes, not 10,000 scans of the dataset's documents.
      const taken = cachedStatement(db, 'SELECT 1 FROM document WHERE dataset_id = ? AND name = ? COLLATE NOCASE');
      const insert = cachedStatement(db, `INSERT INTO document (id, dataset_id, name, suffix, type, size, blob_sha256, location, parser_id, parser_config,
          created_by, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      // Where each name's search for a free one stopped in this call: 10,000 files all named
      // `notes.txt` probe about 10,000 names, not 1 + 2 + … + 10,000 (the names before it are taken).
      const last = new Map<string, string>();
      files.forEach((f, i) => {
        const name = duplicateName(last.get(f.name) ?? f.name, (n) => !!taken.get(target.dataset_id, n), true);
        last.set(f.name, name);
        const sha = putBlob(db, bytes[i]!);
        faultPoint('upload:blob-written');
        const kind = target.kindOf(name, i);
        insert.run(ids[i], target.dataset_id, name, kind.suffix, kind.type, bytes[i]!.byteLength, sha, name, kind.parser_id, target.parser_config, target.created_by, t, t);
        faultPoint('upload:row-written');
      });
      // New documents have no chunks: the counters move by the number of files, no count over the dataset.
      cachedStatement(db, 'UPDATE dataset SET doc_num = doc_num + ?, update_time = ? WHERE id = ?').run(files.length, t, target.dataset_id);
      faultPoint('upload:counted');
    });
    faultPoint('upload:committed');
  }

  async list(q: DocumentListQuery): Promise<{ total: number; rows: DocumentRow[] }> {
    const where = ['dataset_id = @ds'];
    const p: Record<string, unknown> = { ds: q.dataset_id };
    if (q.name !== undefined) {
      where.push('name = @name COLLATE NOCASE');
      p.name = q.name;
    }
    if (q.ids?.length) {
      // Lists go in as one JSON parameter: one placeholder each would stop at SQLite's 32,766 variables.
      where.push('id IN (SELECT value FROM json_each(@ids))');
      p.ids = JSON.stringify(q.ids);
      // Looked up by id, not by scanning the dataset's index (10,000 documents: ~20 ms a page).
      where[0] = '+dataset_id = @ds';
    }
    if (q.noMetadata) where.push("meta_fields = '{}'");
    if (q.keywords) {
      // instr(), not LIKE: a LIKE pattern over 50,000 bytes fails ("LIKE or GLOB pattern too complex").
      where.push('instr(LOWER(name), @kw) > 0');
      p.kw = q.keywords;
    }
    if (q.suffixes?.length) {
      where.push('suffix IN (SELECT value FROM json_each(@sf))');
      p.sf = JSON.stringify(q.suffixes);
    }
    if (q.types?.length) {
      where.push('type IN (SELECT value FROM json_each(@ty))');
      p.ty = JSON.stringify(q.types);
    }
    if (q.runs?.length) {
      where.push('run IN (SELECT value FROM json_each(@runs))');
      p.runs = JSON.stringify(q.runs);
    }
    const whereSql = where.join(' AND ');
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM document WHERE ${whereSql}`).get(p) as { n: number }).n;
    const dir = q.desc ? 'DESC' : 'ASC';
    const rows = this.db.prepare(`SELECT * FROM document WHERE ${whereSql} ORDER BY ${q.orderby} ${dir}, rowid ${dir}
    LIMIT @limit OFFSET @offset`).all({ ...p, limit: q.limit, offset: q.offset }) as DocumentRow[];
    return { total, rows };
  }

  async update(doc: Pick<DocumentRow, 'id' | 'dataset_id'>, u: DocumentUpdate): Promise<void> {
    const db = this.db;
    const sets: Record<string, unknown> = { ...u.changes };
    this.c.tx(() => {
      if (u.resetChunks) {
        removeDocumentChunks(db, [doc.id]);
        Object.assign(sets, { run: RUN.UNSTART, progress: 0, progress_msg: '', chunk_num: 0, token_num: 0, process_duration: 0 });
      }
      const cols = Object.keys(sets);
      db.prepare(`UPDATE document SET ${setList(cols)} WHERE id = @id`).run({ ...sets, id: doc.id });
      if ('status' in sets) db.prepare('UPDATE chunk SET available = ? WHERE document_id = ?').run(sets.status === '1' ? 1 : 0, doc.id);
      if (typeof sets.name === 'string' && !u.resetChunks) retitleDocumentChunks(db, doc.id, sets.name);
      if (u.resetChunks) refreshDatasetCounts(db, doc.dataset_id);
    });
  }

  async setStatus(datasetId: string, ids: readonly string[], status: '0' | '1', time: number): Promise<Array<'set' | 'absent' | 'elsewhere'>> {
    const db = this.db;
    return this.c.tx(() => {
      const get = cachedStatement(db, 'SELECT id, dataset_id, status FROM document WHERE id = ?');
      return ids.map((id) => {
        const doc = get.get(id) as Pick<DocumentRow, 'id' | 'dataset_id' | 'status'> | undefined;
        if (!doc) return 'absent';
        if (doc.dataset_id !== datasetId) return 'elsewhere';
        if (doc.status !== status) {
          db.prepare('UPDATE document SET status = ?, update_time = ? WHERE id = ?').run(status, time, id);
          db.prepare('UPDATE chunk SET available = ? WHERE document_id = ?').run(Number(status), id);
        }
        return 'set';
      });
    });
  }

  async setRun(ids: readonly string[], run: string): Promise<void> {
    const set = cachedStatement(this.db, 'UPDATE document SET run = ?, progress = 0 WHERE id = ?');
    this.c.tx(() => ids.forEach((id) => set.run(run, id)));
  }

  async allOf(datasetId: string): Promise<DocumentRow[]> {
    return this.db.prepare('SELECT * FROM document WHERE dataset_id = ?').all(datasetId) as DocumentRow[];
  }

  async delete(datasetId: string, docs: ReadonlyArray<Pick<DocumentRow, 'id' | 'blob_sha256'>>): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      removeDocumentChunks(db, docs.map((d) => d.id));
      faultPoint('documents.delete:chunks-removed');
      const del = db.prepare('DELETE FROM document WHERE id = ?');
      for (const d of docs) del.run(d.id);
      faultPoint('documents.delete:rows-deleted');
      pruneBlobs(db, docs.map((d) => d.blob_sha256));
      faultPoint('documents.delete:blobs-pruned');
      refreshDatasetCounts(db, datasetId);
    });
    faultPoint('documents.delete:committed');
  }

  async file(sha256: string): Promise<FileBytes | undefined> {
    const data = getBlob(this.db, sha256);
    return data && new BlobBytes(data);
  }

  async files(sha256s: readonly string[]): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    for (const sha of new Set(sha256s)) {
      const data = getBlob(this.db, sha);
      if (data) out.set(sha, data);
    }
    return out;
  }

  async replaceContent(doc: Pick<DocumentRow, 'id' | 'dataset_id'>, source: FileSource, time: number): Promise<ReplaceResult> {
    const db = this.db;
    const bytes = await gather(source);
    const r = this.c.tx((): ReplaceResult => {
      // Read again inside the write: a parse queued by another connection since the caller's check wins.
      const cur = db.prepare('SELECT run, blob_sha256 FROM document WHERE id = ?').get(doc.id) as { run: string; blob_sha256: string } | undefined;
      if (!cur) return 'gone';
      if (cur.run === RUN.RUNNING) return 'running';
      if (sha256Hex(bytes) === cur.blob_sha256) return 'same';
      const sha = putBlob(db, bytes);
      faultPoint('replace:blob-written');
      db.prepare(`UPDATE document SET blob_sha256 = ?, size = ?, run = ?, progress = 0, progress_msg = '', process_begin_at = NULL,
        process_duration = 0, update_time = ? WHERE id = ?`).run(sha, bytes.byteLength, RUN.UNSTART, time, doc.id);
      faultPoint('replace:row-written');
      pruneBlobs(db, [cur.blob_sha256]);
      db.prepare('UPDATE dataset SET update_time = ? WHERE id = ?').run(time, doc.dataset_id);
      return 'replaced';
    });
    if (r === 'replaced') faultPoint('replace:committed');
    return r;
  }

  async facetRows(datasetId: string, f: Pick<DocumentListQuery, 'keywords' | 'runs' | 'types' | 'suffixes'>): Promise<Array<Pick<DocumentRow, 'suffix' | 'run' | 'meta_fields'>>> {
    const where = ['dataset_id = @ds'];
    const p: Record<string, unknown> = { ds: datasetId };
    if (f.keywords) (where.push('instr(LOWER(name), @kw) > 0'), (p.kw = f.keywords));
    if (f.runs?.length) (where.push('run IN (SELECT value FROM json_each(@runs))'), (p.runs = JSON.stringify(f.runs)));
    if (f.types?.length) (where.push('type IN (SELECT value FROM json_each(@ty))'), (p.ty = JSON.stringify(f.types)));
    if (f.suffixes?.length) (where.push('suffix IN (SELECT value FROM json_each(@sf))'), (p.sf = JSON.stringify(f.suffixes)));
    return this.db.prepare(`SELECT suffix, run, meta_fields FROM document WHERE ${where.join(' AND ')} ORDER BY rowid`).all(p) as Array<Pick<DocumentRow, 'suffix' | 'run' | 'meta_fields'>>;
  }

  async metaFieldsOf(datasetId: string, nonEmpty = false): Promise<Array<{ id: string; meta_fields: string }>> {
    return cachedStatement(this.db, `SELECT id, meta_fields FROM document WHERE dataset_id = ?${nonEmpty ? " AND meta_fields != '{}'" : ''} ORDER BY create_time, rowid`)
      .all(datasetId) as Array<{ id: string; meta_fields: string }>;
  }

  async editMetaFields(datasetId: string, ids: readonly string[], edit: (doc: { id: string; meta_fields: string }) => string | null, time: number): Promise<number> {
    const write = cachedStatement(this.db, 'UPDATE document SET meta_fields = ?, update_time = ? WHERE id = ?');
    return this.c.tx(() => {
      let n = 0;
      for (const id of ids) {
        const doc = this.getNow(datasetId, id);
        if (!doc) continue;
        const next = edit(doc);
        if (next === null) continue;
        write.run(next, time, id);
        n++;
      }
      return n;
    });
  }

  async metaFields(ids: readonly string[]): Promise<Map<string, string>> {
    const get = this.db.prepare('SELECT meta_fields FROM document WHERE id = ?');
    const out = new Map<string, string>();
    for (const id of ids) {
      const row = get.get(id) as { meta_fields: string } | undefined;
      if (row) out.set(id, row.meta_fields);
    }
    return out;
  }

  async inDatasets(ids: readonly string[], datasetIds: readonly string[]): Promise<Set<string>> {
    const sel = cachedStatement(this.db, `SELECT 1 FROM document WHERE id = ? AND dataset_id IN (${marks(datasetIds.length)})`);
    const out = new Set<string>();
    for (const id of ids) if (sel.get(id, ...datasetIds)) out.add(id);
    return out;
  }
}

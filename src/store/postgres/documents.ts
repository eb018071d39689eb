/** Documents and their file bytes on PostgreSQL (interface/documents.ts). */
import { createHash } from 'node:crypto';
import { RUN } from '../interface/index.js';
import type {
  DocumentListQuery, DocumentRow, DocumentStore, DocumentUpdate, FileBytes, FileSource, NewFile, ReplaceResult, UploadTarget,
} from '../interface/index.js';
import { duplicateName, faultPoint, sha256Hex } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';
import { BLOB_PART_BYTES, blobInfo, commitBlob, dropStaged, pruneBlobs, readBlob, stageBlob, type StagedBlob } from './blobs.js';
import { refreshDatasetCounts, removeDocumentChunks, retitleDocumentChunks } from './chunk-rows.js';
import { foldAscii } from './names.js';
import { dir, limitSql, orderColumn, setList, strip, stripAll, valuesOf } from './sql.js';

/** A stored file, read part by part from the database (never more than a part in memory while streaming). */
class PgFileBytes implements FileBytes {
  constructor(private readonly db: PgDb, private readonly sha256: string, readonly size: number) {}

  async bytes(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const p of this.stream()) parts.push(p);
    const b = Buffer.concat(parts);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  async *stream(chunkSize = 1 << 20): AsyncIterable<Uint8Array> {
    const it = await readBlob(this.db, this.sha256);
    if (!it) throw new Error(`The file ${this.sha256} is gone`);
    for await (const part of it) {
      for (let at = 0; at < part.byteLength; at += chunkSize) yield new Uint8Array(part.buffer, part.byteOffset + at, Math.min(chunkSize, part.byteLength - at));
    }
  }
}

/** Bytes of parts sent in one statement by putManyBytes. */
const PUT_STATEMENT_BYTES = 8 << 20;

/**
 * Bytes already in memory, stored under their sha256s inside the caller's transaction (parts of
 * BLOB_PART_BYTES); identical bytes are stored once (commitBlob's rules). A handful of statements
 * whatever the number of files: an upload of 10,000 small files is not 40,000 round trips.
 * Returns each one's sha256.
 */
export async function putManyBytes(t: PgTx, files: readonly Uint8Array[]): Promise<string[]> {
  const shas = files.map((b) => createHash('sha256').update(b).digest('hex'));
  const first = new Map<string, Uint8Array>();
  files.forEach((b, i) => first.has(shas[i]!) || first.set(shas[i]!, b));
  if (!first.size) return shas;
  // Stored already: nothing to write (the rows are locked so that a concurrent prune waits for this transaction).
  const stored = new Set((await t.rows<{ sha256: string }>('SELECT sha256 FROM blob WHERE sha256 = ANY($1) ORDER BY sha256 FOR UPDATE', [[...first.keys()]])).map((r) => r.sha256));
  const fresh = [...first].filter(([sha]) => !stored.has(sha)).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (!fresh.length) return shas;
  const ids = (await t.rows<{ id: number }>('INSERT INTO blob_content (create_time) SELECT ragloom_now_ms() FROM generate_series(1, $1) RETURNING id', [fresh.length]))
    .map((r) => Number(r.id));
  const parts: Array<[number, number, Buffer]> = [];
  fresh.forEach(([, bytes], i) => {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0, n = 0; at < buf.byteLength || n === 0; at += BLOB_PART_BYTES, n++) parts.push([ids[i]!, n, buf.subarray(at, at + BLOB_PART_BYTES)]);
  });
  for (let at = 0; at < parts.length;) {
    let end = at;
    for (let bytes = 0; end < parts.length && (end === at || bytes + parts[end]![2].byteLength <= PUT_STATEMENT_BYTES); end++) bytes += parts[end]![2].byteLength;
    const slice = parts.slice(at, end);
    await t.run('INSERT INTO blob_part (content_id, n, data) SELECT * FROM unnest($1::bigint[], $2::int[], $3::bytea[])',
      [slice.map((p) => p[0]), slice.map((p) => p[1]), slice.map((p) => p[2])]);
    at = end;
  }
  // In hash order (the locks' order); on a conflict (the same bytes published meanwhile) the existing row wins and is locked.
  const won = await t.rows<{ content_id: number }>(`INSERT INTO blob (sha256, size, parts, content_id)
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[]) ORDER BY 1
    ON CONFLICT (sha256) DO UPDATE SET sha256 = EXCLUDED.sha256 RETURNING content_id`,
  [fresh.map(([sha]) => sha), fresh.map(([, b]) => b.byteLength), fresh.map(([, b]) => Math.max(1, Math.ceil(b.byteLength / BLOB_PART_BYTES))), ids]);
  const used = new Set(won.map((r) => Number(r.content_id)));
  const unused = ids.filter((id) => !used.has(id));
  if (unused.length) await t.run('DELETE FROM blob_content WHERE id = ANY($1)', [unused]);
  faultPoint('pg-blob:published');
  return shas;
}

/** putManyBytes of one file. */
export async function putBytes(t: PgTx, bytes: Uint8Array): Promise<string> {
  return (await putManyBytes(t, [bytes]))[0]!;
}

/** The folded prefix every free-name candidate of `name` starts with (duplicateName only appends `(k)` to the stem). */
function candidatePrefix(name: string): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  return foldAscii(stem.replace(/\(\d+\)$/, ''));
}

export class PgDocuments implements DocumentStore {
  constructor(private readonly db: PgDb) {}

  async get(datasetId: string, id: string): Promise<DocumentRow | undefined> {
    return strip(await this.db.one('SELECT * FROM document WHERE id = $1 AND dataset_id = $2', [id, datasetId]));
  }

  async getMany(datasetId: string, ids: readonly string[]): Promise<Map<string, DocumentRow>> {
    const rows = stripAll<DocumentRow>(await this.db.rows('SELECT * FROM document WHERE id = ANY($1) AND dataset_id = $2', [[...new Set(ids)], datasetId]));
    const by = new Map(rows.map((r) => [r.id, r]));
    const out = new Map<string, DocumentRow>();
    for (const id of ids) if (by.has(id)) out.set(id, by.get(id)!);
    return out;
  }

  async nameExists(datasetId: string, name: string): Promise<boolean> {
    return !!(await this.db.one('SELECT 1 FROM document WHERE dataset_id = $1 AND ragloom_nocase(name) = ragloom_nocase($2)', [datasetId, name]));
  }

  async exactNameTaken(datasetId: string, name: string, exceptId: string): Promise<boolean> {
    return !!(await this.db.one('SELECT 1 FROM document WHERE dataset_id = $1 AND name = $2 AND id <> $3', [datasetId, name, exceptId]));
  }

  async upload(target: UploadTarget, files: readonly NewFile[], ids: readonly string[]): Promise<void> {
    const t0 = target.time;
    // Streams and files over a part are written part by part before the transaction (stageBlob:
    // never one buffer of the file, no transaction open while a client sends); the transaction
    // publishes them. A failing source, or a failing transaction, leaves no staged part behind.
    const staged = new Map<number, StagedBlob>();
    try {
      for (let i = 0; i < files.length; i++) {
        const b = files[i]!.bytes;
        if (!(b instanceof Uint8Array) || b.byteLength > BLOB_PART_BYTES) staged.set(i, await stageBlob(this.db, b));
      }
      await this.insertUpload(target, files, ids, staged);
    } catch (e) {
      if (staged.size) await dropStaged(this.db, [...staged.values()]).catch(() => undefined);
      throw e;
    }
    faultPoint('upload:committed');
  }

  private async insertUpload(target: UploadTarget, files: readonly NewFile[], ids: readonly string[], staged: ReadonlyMap<number, StagedBlob>): Promise<void> {
    const t0 = target.time;
    await this.db.tx(async (t) => {
      // One upload into a dataset at a time: names are made free case-insensitively (the unique
      // index is exact, as renames allow `a.txt` beside `A.TXT`), which a check-then-insert only
      // keeps when no other upload checks meanwhile.
      await t.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`upload:${target.dataset_id}`]);
      const prefixes = [...new Set(files.map((f) => candidatePrefix(f.name)))];
      const taken = new Set((await t.rows<{ n: string }>(`SELECT ragloom_nocase(name) AS n FROM document
        WHERE dataset_id = $1 AND EXISTS (SELECT 1 FROM unnest($2::text[]) p WHERE starts_with(ragloom_nocase(name), p))`, [target.dataset_id, prefixes])).map((r) => r.n));
      const last = new Map<string, string>();
      const rows: unknown[][] = [];
      // The small files in memory: a handful of statements for all of them.
      const inline = files.flatMap((f, i) => (staged.has(i) ? [] : [i]));
      const shas = new Map<number, string>();
      (await putManyBytes(t, inline.map((i) => files[i]!.bytes as Uint8Array))).forEach((sha, k) => shas.set(inline[k]!, sha));
      for (const [i, s] of [...staged].sort((a, b) => (a[1].sha256 < b[1].sha256 ? -1 : 1))) shas.set(i, await commitBlob(t, s));
      faultPoint('upload:blob-written');
      for (let i = 0; i < files.length; i++) {
        const f = files[i]!;
        const name = duplicateName(last.get(f.name) ?? f.name, (n) => taken.has(foldAscii(n)), true);
        last.set(f.name, name);
        taken.add(foldAscii(name));
        const kind = target.kindOf(name, i);
        rows.push([ids[i], name, kind.suffix, kind.type, staged.get(i)?.size ?? (f.bytes as Uint8Array).byteLength, shas.get(i), kind.parser_id]);
      }
      const col = (k: number) => rows.map((r) => r[k]);
      await t.run(`INSERT INTO document (id, dataset_id, name, suffix, type, size, blob_sha256, location, parser_id, parser_config, created_by, create_time, update_time)
        SELECT id, $1, name, suffix, type, size, sha, name, parser, $2, $3, $4, $4
        FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[], $10::text[], $11::text[]) WITH ORDINALITY
          AS x(id, name, suffix, type, size, sha, parser, k) ORDER BY k`,
      [target.dataset_id, target.parser_config, target.created_by, t0, col(0), col(1), col(2), col(3), col(4), col(5), col(6)]);
      faultPoint('upload:row-written');
      await t.run('UPDATE dataset SET doc_num = doc_num + $1, update_time = $2 WHERE id = $3', [files.length, t0, target.dataset_id]);
      faultPoint('upload:counted');
    });
  }

  async list(q: DocumentListQuery): Promise<{ total: number; rows: DocumentRow[] }> {
    const p: unknown[] = [q.dataset_id];
    const where = ['dataset_id = $1'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (q.name !== undefined) add((k) => `ragloom_nocase(name) = ragloom_nocase(${k})`, q.name);
    if (q.ids?.length) add((k) => `id = ANY(${k})`, [...q.ids]);
    if (q.keywords) add((k) => `strpos(ragloom_nocase(name), ${k}) > 0`, q.keywords);
    if (q.suffixes?.length) add((k) => `suffix = ANY(${k})`, [...q.suffixes]);
    if (q.types?.length) add((k) => `type = ANY(${k})`, [...q.types]);
    if (q.runs?.length) add((k) => `run = ANY(${k})`, [...q.runs]);
    if (q.noMetadata) where.push("meta_fields = '{}'");
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM document WHERE ${w}`, p))!.n;
    const d = dir(q.desc);
    const order = orderColumn(q.orderby);
    const rows = await this.db.rows(`SELECT * FROM document WHERE ${w} ORDER BY ${order} ${d}, ord ${d}
      LIMIT ${limitSql(q.limit)} OFFSET ${Math.max(0, Math.floor(q.offset))}`, p);
    return { total, rows: stripAll(rows) };
  }

  async update(doc: Pick<DocumentRow, 'id' | 'dataset_id'>, u: DocumentUpdate): Promise<void> {
    const sets: Record<string, unknown> = { ...u.changes };
    await this.db.tx(async (t) => {
      if (u.resetChunks) {
        await removeDocumentChunks(t, [doc.id]);
        Object.assign(sets, { run: RUN.UNSTART, progress: 0, progress_msg: '', chunk_num: 0, token_num: 0, process_duration: 0 });
      }
      const cols = Object.keys(sets);
      if (cols.length) await t.run(`UPDATE document SET ${setList(cols, 2)} WHERE id = $1`, [doc.id, ...valuesOf(sets, cols)]);
      if ('status' in sets) await t.run('UPDATE chunk SET available = $1 WHERE document_id = $2', [sets.status === '1' ? 1 : 0, doc.id]);
      if (typeof sets.name === 'string' && !u.resetChunks) await retitleDocumentChunks(t, doc.id);
      if (u.resetChunks) await refreshDatasetCounts(t, doc.dataset_id);
    }, { idempotent: true });
  }

  async allOf(datasetId: string): Promise<DocumentRow[]> {
    return stripAll(await this.db.rows('SELECT * FROM document WHERE dataset_id = $1 ORDER BY ord', [datasetId]));
  }

  async delete(datasetId: string, docs: ReadonlyArray<Pick<DocumentRow, 'id' | 'blob_sha256'>>): Promise<void> {
    await this.db.tx(async (t) => {
      await removeDocumentChunks(t, docs.map((d) => d.id));
      faultPoint('documents.delete:chunks-removed');
      await t.run('DELETE FROM document WHERE id = ANY($1)', [docs.map((d) => d.id)]);
      faultPoint('documents.delete:rows-deleted');
      await pruneBlobs(t, docs.map((d) => d.blob_sha256));
      faultPoint('documents.delete:blobs-pruned');
      await refreshDatasetCounts(t, datasetId);
    }, { idempotent: true });
    faultPoint('documents.delete:committed');
  }

  async file(sha256: string): Promise<FileBytes | undefined> {
    const info = await blobInfo(this.db, sha256);
    return info && new PgFileBytes(this.db, sha256, info.size);
  }

  async files(sha256s: readonly string[]): Promise<Map<string, Uint8Array>> {
    const rows = await this.db.rows<{ sha256: string; parts: number; n: number; data: Buffer }>(`SELECT b.sha256, b.parts, p.n, p.data
      FROM blob b JOIN blob_part p ON p.content_id = b.content_id WHERE b.sha256 = ANY($1) ORDER BY b.sha256, p.n`, [[...new Set(sha256s)]]);
    const parts = new Map<string, Buffer[]>();
    for (const r of rows) {
      const list = parts.get(r.sha256) ?? [];
      list.push(r.data);
      parts.set(r.sha256, list);
    }
    const out = new Map<string, Uint8Array>();
    for (const [sha, list] of parts) {
      const b = list.length === 1 ? list[0]! : Buffer.concat(list);
      out.set(sha, new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    }
    return out;
  }

  async replaceContent(doc: Pick<DocumentRow, 'id' | 'dataset_id'>, source: FileSource, time: number): Promise<ReplaceResult> {
    // A stream, or a file over a part, is staged part by part before the transaction (as an
    // upload's: never one buffer, no transaction open while the source yields); the transaction
    // publishes it, and whatever does not publish it drops the staged parts.
    const staged = source instanceof Uint8Array && source.byteLength <= BLOB_PART_BYTES ? undefined : await stageBlob(this.db, source);
    const inline = staged ? undefined : (source as Uint8Array);
    const sha256 = staged?.sha256 ?? sha256Hex(inline!);
    let r: ReplaceResult;
    try {
      r = await this.db.tx(async (t): Promise<ReplaceResult> => {
        // Read again inside the write (locked): a parse queued by another process since the caller's check wins.
        const cur = await t.one<{ run: string; blob_sha256: string }>('SELECT run, blob_sha256 FROM document WHERE id = $1 FOR UPDATE', [doc.id]);
        if (!cur) return 'gone';
        if (cur.run === RUN.RUNNING) return 'running';
        if (cur.blob_sha256 === sha256) return 'same';
        const sha = staged ? await commitBlob(t, staged) : await putBytes(t, inline!);
        faultPoint('replace:blob-written');
        await t.run(`UPDATE document SET blob_sha256 = $1, size = $2, run = $3, progress = 0, progress_msg = '', process_begin_at = NULL,
          process_duration = 0, update_time = $4 WHERE id = $5`, [sha, staged?.size ?? inline!.byteLength, RUN.UNSTART, time, doc.id]);
        faultPoint('replace:row-written');
        await pruneBlobs(t, [cur.blob_sha256]);
        await t.run('UPDATE dataset SET update_time = $1 WHERE id = $2', [time, doc.dataset_id]);
        return 'replaced';
      });
    } catch (e) {
      if (staged) await dropStaged(this.db, [staged]).catch(() => undefined);
      throw e;
    }
    if (staged && r !== 'replaced') await dropStaged(this.db, [staged]).catch(() => undefined);
    if (r === 'replaced') faultPoint('replace:committed');
    return r;
  }

  async setStatus(datasetId: string, ids: readonly string[], status: '0' | '1', time: number): Promise<Array<'set' | 'absent' | 'elsewhere'>> {
    return this.db.tx(async (t) => {
      const rows = await t.rows<{ id: string; dataset_id: string; status: string }>('SELECT id, dataset_id, status FROM document WHERE id = ANY($1) ORDER BY id FOR UPDATE', [[...new Set(ids)]]);
      const by = new Map(rows.map((r) => [r.id, r]));
      const out: Array<'set' | 'absent' | 'elsewhere'> = [];
      for (const id of ids) {
        const doc = by.get(id);
        if (!doc) out.push('absent');
        else if (doc.dataset_id !== datasetId) out.push('elsewhere');
        else {
          if (doc.status !== status) {
            await t.run('UPDATE document SET status = $1, update_time = $2 WHERE id = $3', [status, time, id]);
            await t.run('UPDATE chunk SET available = $1 WHERE document_id = $2', [Number(status), id]);
            doc.status = status;
          }
          out.push('set');
        }
      }
      return out;
    }, { idempotent: true });
  }

  async setRun(ids: readonly string[], run: string): Promise<void> {
    if (ids.length) await this.db.run('UPDATE document SET run = $1, progress = 0 WHERE id = ANY($2)', [run, [...ids]], { idempotent: true });
  }

  async facetRows(datasetId: string, f: Pick<DocumentListQuery, 'keywords' | 'runs' | 'types' | 'suffixes'>): Promise<Array<Pick<DocumentRow, 'suffix' | 'run' | 'meta_fields'>>> {
    const p: unknown[] = [datasetId];
    const where = ['dataset_id = $1'];
    const add = (sql: (k: string) => string, v: unknown) => (p.push(v), where.push(sql(`$${p.length}`)));
    if (f.keywords) add((k) => `strpos(ragloom_nocase(name), ${k}) > 0`, f.keywords);
    if (f.runs?.length) add((k) => `run = ANY(${k})`, [...f.runs]);
    if (f.types?.length) add((k) => `type = ANY(${k})`, [...f.types]);
    if (f.suffixes?.length) add((k) => `suffix = ANY(${k})`, [...f.suffixes]);
    return this.db.rows(`SELECT suffix, run, meta_fields FROM document WHERE ${where.join(' AND ')} ORDER BY ord`, p);
  }

  async metaFieldsOf(datasetId: string, nonEmpty = false): Promise<Array<{ id: string; meta_fields: string }>> {
    return this.db.rows(`SELECT id, meta_fields FROM document WHERE dataset_id = $1${nonEmpty ? " AND meta_fields <> '{}'" : ''} ORDER BY create_time, ord`, [datasetId]);
  }

  async editMetaFields(datasetId: string, ids: readonly string[], edit: (doc: { id: string; meta_fields: string }) => string | null, time: number): Promise<number> {
    return this.db.tx(async (t) => {
      const rows = stripAll<DocumentRow>(await t.rows('SELECT * FROM document WHERE id = ANY($1) AND dataset_id = $2 ORDER BY id FOR UPDATE', [[...new Set(ids)], datasetId]));
      const by = new Map(rows.map((r) => [r.id, r]));
      let n = 0;
      for (const id of ids) {
        const doc = by.get(id);
        if (!doc) continue;
        const next = edit(doc);
        if (next === null) continue;
        await t.run('UPDATE document SET meta_fields = $1, update_time = $2 WHERE id = $3', [next, time, id]);
        doc.meta_fields = next;
        n++;
      }
      return n;
    });
  }

  async metaFields(ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.db.rows<{ id: string; meta_fields: string }>('SELECT id, meta_fields FROM document WHERE id = ANY($1)', [[...new Set(ids)]]);
    const by = new Map(rows.map((r) => [r.id, r.meta_fields]));
    const out = new Map<string, string>();
    for (const id of ids) if (by.has(id)) out.set(id, by.get(id)!);
    return out;
  }

  async inDatasets(ids: readonly string[], datasetIds: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set(); // a search without document_ids asks this too: no round trip
    const rows = await this.db.rows<{ id: string }>('SELECT id FROM document WHERE id = ANY($1) AND dataset_id = ANY($2)', [[...new Set(ids)], [...datasetIds]]);
    const found = new Set(rows.map((r) => r.id));
    return new Set(ids.filter((id) => found.has(id)));
  }
}

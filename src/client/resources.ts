import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LocalTransport, OpeningTransport, type Transport } from './transport.js';
import { ApiError, RetCode, fail } from '../api/errors.js';
import { FileStream } from '../api/routes.js';
import type { AutoMetadataConfig, ChunkMethod, ListDocumentsParams, MetadataCondition, UpdateChunkParams, UpdateDatasetParams, UpdateDocumentParams } from './params.js';

/** Wire fields as plain properties plus the transport; `toJSON()` gives the wire shape. */
export abstract class Resource {
  protected readonly t!: Transport;
  constructor(t: Transport, data: Record<string, unknown>) {
    Object.defineProperty(this, 't', { value: t, enumerable: false });
    Object.assign(this, data);
  }
  protected assign(data: Record<string, unknown>): void {
    Object.assign(this, data);
  }
  toJSON(): Record<string, unknown> {
    return Object.fromEntries(Object.entries(this));
  }
}

export type ParseStatus = 'UNSTART' | 'RUNNING' | 'CANCEL' | 'DONE' | 'FAIL';

export interface ParseProgress {
  document_id: string;
  run: ParseStatus;
  progress: number;
  progress_msg: string;
}

export class Chunk extends Resource {
  declare readonly id: string;
  declare content: string;
  declare important_keywords: string[];
  declare questions: string[];
  declare tag_kwd: string[];
  declare document_id: string;
  declare dataset_id: string;
  declare available: boolean;
  declare positions: number[][];
  declare similarity?: number;
  declare vector_similarity?: number;
  declare term_similarity?: number;
  declare document_name?: string;
  declare document_keyword?: string;
  /** Retrieval with `highlight: true`: the content with `<em>` around the question's words. */
  declare highlight?: string;

  /** Changes content, keywords, questions, tag_kwd, positions or `available`; re-embeds. */
  async update(msg: UpdateChunkParams): Promise<void> {
    await this.t.call('chunks.update', { ...msg, dataset_id: this.dataset_id, document_id: this.document_id, chunk_id: this.id });
    for (const [k, v] of Object.entries(msg)) if (v !== undefined && v !== null) (this as Record<string, unknown>)[k] = v;
  }
}

export class Document extends Resource {
  declare readonly id: string;
  declare name: string;
  declare dataset_id: string;
  /** The dataset's method, or the one its file type forces (picture, presentation, email; audio files: 'audio'). */
  declare chunk_method: ChunkMethod | 'audio';
  declare parser_config: Record<string, unknown>;
  declare run: ParseStatus;
  declare progress: number;
  declare progress_msg: string;
  declare chunk_count: number;
  declare token_count: number;
  declare size: number;
  declare type: string;
  declare meta_fields: Record<string, unknown>;

  /** Renames, switches the chunk method (the document is reset), changes parser_config, meta_fields or `enabled`. */
  async update(msg: UpdateDocumentParams): Promise<this> {
    const d = await this.t.call<Record<string, unknown>>('documents.update', { ...msg, dataset_id: this.dataset_id, document_id: this.id });
    this.assign(d);
    return this;
  }

  /**
   * New bytes for this document (a changed file), keeping its id, name and settings. Identical
   * bytes (same sha256): nothing changes and it resolves `false`. Otherwise `true`: the document
   * is UNSTART again and keeps its old chunks, searchable, until `parseDocuments` swaps them for
   * the new content's in one transaction. Rejects with 102 while the document is being parsed.
   * `blob` may be a stream of bytes (a Node Readable such as `createReadStream(path)`, a web
   * ReadableStream, any async iterable), as an upload's: a large file is never one buffer on
   * PostgreSQL. A ragloom addition: the embedded engine only (a remote Client rejects with 103).
   * @example
   * if (await doc.replaceContent(await readFile('intro.md'))) await ds.parseDocuments([doc.id]);
   */
  async replaceContent(blob: Uint8Array | AsyncIterable<Uint8Array>): Promise<boolean> {
    const r = await this.t.call<{ replaced: boolean; document: Record<string, unknown> }>('documents.replaceContent', {
      dataset_id: this.dataset_id, document_id: this.id, blob,
    });
    this.assign(r.document);
    return r.replaced;
  }

  /** The uploaded bytes, unchanged. A 0-byte file rejects with 102 "This file is empty.". */
  download(): Promise<Uint8Array> {
    return this.t.call<Uint8Array>('documents.download', { dataset_id: this.dataset_id, document_id: this.id });
  }

  /**
   * The uploaded bytes as a stream of pieces, read from the store (or the response) as they are
   * consumed: a large file is never one buffer. Rejects as download() does before the first piece.
   */
  async downloadStream(): Promise<AsyncIterable<Uint8Array>> {
    const r = await this.t.call<FileStream | AsyncIterable<Uint8Array>>('documents.download', { dataset_id: this.dataset_id, document_id: this.id, stream: true });
    return r instanceof FileStream ? r.parts : r;
  }

  /**
   * Adds a chunk, embedded by the dataset's model; or, with `vector` (a ragloom addition), stored
   * with your own embedding model's vector (1–8192 numbers, scaled to unit length), which
   * `retrieve({ question_vector })` of the same model finds. Updating its content later embeds it
   * with the dataset's model again.
   */
  async addChunk(p: { content: string; important_keywords?: string[]; questions?: string[]; image_base64?: string; tag_kwd?: string[]; vector?: number[] }): Promise<Chunk> {
    const c = await this.t.call<Record<string, unknown>>('chunks.add', { ...p, dataset_id: this.dataset_id, document_id: this.id });
    return new Chunk(this.t, c);
  }

  async listChunks(p: { keywords?: string; page?: number; page_size?: number; id?: string } = {}): Promise<Chunk[]> {
    const r = await this.t.call<{ chunks: Record<string, unknown>[] }>('chunks.list', { ...p, dataset_id: this.dataset_id, document_id: this.id });
    return r.chunks.map((c) => new Chunk(this.t, c));
  }

  async deleteChunks(p: { ids?: string[] | null; delete_all?: boolean } = {}): Promise<void> {
    await this.t.call('chunks.delete', { chunk_ids: p.ids ?? null, delete_all: p.delete_all ?? false, dataset_id: this.dataset_id, document_id: this.id });
  }

  /**
   * One chunk as RAGFlow's index stores it (`GET …/chunks/{id}`: `doc_id`, `content_with_weight`,
   * `important_kwd`, …). An unknown id rejects with 102 `Chunk not found!`.
   */
  getChunk(chunk_id: string): Promise<Record<string, unknown>> {
    return this.t.call<Record<string, unknown>>('chunks.get', { dataset_id: this.dataset_id, document_id: this.id, chunk_id });
  }

  /** Switches chunks on or off for retrieval (`PATCH …/chunks`). */
  async switchChunks(p: { chunk_ids: string[]; available: boolean }): Promise<void> {
    await this.t.call('chunks.switch', { dataset_id: this.dataset_id, document_id: this.id, chunk_ids: p.chunk_ids, available_int: p.available ? 1 : 0 });
  }
}

export class DataSet extends Resource {
  declare readonly id: string;
  declare name: string;
  declare avatar: string | null;
  declare tenant_id: string;
  declare description: string | null;
  declare embedding_model: string;
  declare permission: string;
  declare document_count: number;
  declare chunk_count: number;
  declare chunk_method: ChunkMethod;
  declare parser_config: Record<string, unknown>;
  declare pagerank: number;

  async update(msg: UpdateDatasetParams): Promise<this> {
    const d = await this.t.call<Record<string, unknown>>('datasets.update', { ...msg, dataset_id: this.id });
    this.assign(d);
    return this;
  }

  /**
   * Uploads files: each `blob` is bytes in memory or a stream of them (a Node Readable, a web
   * ReadableStream, any async iterable of Uint8Array), or `path` names a file on this machine
   * (`display_name` defaults to its base name). Streams and files go to the store part by part,
   * never as one buffer (over HTTP as a multipart body read from disk).
   */
  async uploadDocuments(files: Array<UploadSource>): Promise<Document[]> {
    const spool = new Spool();
    try {
      const given = await Promise.all(files.map((f) => this.fileSource(f, spool)));
      const docs = await this.t.call<Record<string, unknown>[]>('documents.upload', { dataset_id: this.id, files: given });
      return docs.map((d) => new Document(this.t, d));
    } finally {
      await spool.close();
    }
  }

  /** An upload's file as the transport carries it: in process any stream; over HTTP bytes or a Blob backed by a file. */
  private async fileSource(f: UploadSource, spool: Spool): Promise<unknown> {
    if (!f || typeof f !== 'object' || (f.path === undefined && f.blob !== undefined && !isByteStream(f.blob)) || (f.path === undefined && f.blob === undefined)) return f;
    const inProcess = this.t instanceof LocalTransport || this.t instanceof OpeningTransport;
    if (f.path !== undefined) {
      if (typeof f.path !== 'string' || !f.path) throw new ApiError(RetCode.ARGUMENT_ERROR, '`path` must be the path of a file');
      const display_name = f.display_name ?? basename(f.path);
      try {
        return { display_name, blob: inProcess ? await openStream(f.path) : await openAsBlob(f.path) };
      } catch (e) {
        throw new ApiError(RetCode.ARGUMENT_ERROR, `${display_name}: cannot read ${f.path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
    }
    if (inProcess) return f;
    // Over HTTP a stream is written to a temporary file first, then sent from it (fetch sends a file-backed Blob as it reads it).
    return { display_name: f.display_name, blob: await openAsBlob(await spool.write(f.blob as AsyncIterable<Uint8Array>)) };
  }

  async listDocuments(p: ListDocumentsParams = {}): Promise<Document[]> {
    // The SDK's own check, before any request (the server answers RAGFlow's handler's error).
    if (p.id && p.ids?.length) fail('ID_AND_IDS');
    const r = await this.t.call<{ docs: Record<string, unknown>[] }>('documents.list', { ...p, dataset_id: this.id });
    return r.docs.map((d) => new Document(this.t, d));
  }

  async deleteDocuments(p: { ids?: string[] | null; delete_all?: boolean } = {}): Promise<void> {
    await this.t.call('documents.delete', { ids: p.ids ?? null, delete_all: p.delete_all ?? false, dataset_id: this.id });
  }

  /** Queues parsing and returns at once. Unknown ids: queues the rest, then rejects with 102. */
  async asyncParseDocuments(ids: string[]): Promise<void> {
    await this.t.call('documents.parse', { dataset_id: this.id, document_ids: ids });
  }

  async asyncCancelParseDocuments(ids: string[]): Promise<void> {
    await this.t.call('documents.stopParse', { dataset_id: this.id, document_ids: ids });
  }

  /** The auto-metadata configuration (RAGFlow SDK's get_auto_metadata): `{metadata, built_in_metadata}`. */
  getAutoMetadata(): Promise<AutoMetadataConfig> {
    return this.t.call<AutoMetadataConfig>('datasets.getAutoMetadata', { dataset_id: this.id });
  }

  /** Replaces the auto-metadata configuration (RAGFlow SDK's update_auto_metadata); resolves to it as stored. ragloom keeps it but extracts no metadata with a model. */
  updateAutoMetadata(cfg: Partial<AutoMetadataConfig>): Promise<AutoMetadataConfig> {
    return this.t.call<AutoMetadataConfig>('datasets.updateAutoMetadata', { ...cfg, dataset_id: this.id });
  }

  /**
   * Changes the `meta_fields` of documents in one request: `updates` (`{key, value, match?}`) and
   * `deletes` (`{key, value?}`) applied to the documents of `selector.document_ids`, narrowed by
   * `selector.metadata_condition`. Resolves to `{updated, matched_docs}`.
   */
  updateMetadata(p: { selector?: { document_ids?: string[]; metadata_condition?: MetadataCondition }; updates?: Array<{ key: string; value: unknown; match?: unknown }>; deletes?: Array<{ key: string; value?: unknown }> }): Promise<{ updated: number; matched_docs: number }> {
    return this.t.call('documents.updateMetadata', { ...p, dataset_id: this.id });
  }

  /** Per metadata key: its type and its values with how many documents hold each (most first). */
  async metadataSummary(p: { doc_ids?: string[] } = {}): Promise<Record<string, { type: string; values: Array<[string, number]> }>> {
    const r = await this.t.call<{ summary: Record<string, { type: string; values: Array<[string, number]> }> }>('documents.metadataSummary', {
      dataset_id: this.id, ...(p.doc_ids ? { doc_ids: p.doc_ids.join(',') } : {}),
    });
    return r.summary;
  }

  /** The tags of this dataset's chunks with how many chunks hold each, most used first. */
  listTags(): Promise<Array<[string, number]>> {
    return this.t.call('datasets.tags', { dataset_id: this.id });
  }

  /** Removes tags from every chunk of the dataset. */
  async deleteTags(tags: string[]): Promise<void> {
    await this.t.call('datasets.deleteTags', { dataset_id: this.id, tags });
  }

  /** Renames a tag on every chunk of the dataset. */
  async renameTag(from_tag: string, to_tag: string): Promise<void> {
    await this.t.call('datasets.renameTag', { dataset_id: this.id, from_tag, to_tag });
  }

  /** The documents by parse state, and the dataset's counters (`GET …/ingestions/summary`). */
  ingestionSummary(): Promise<{ doc_num: number; chunk_num: number; token_num: number; status: Record<string, number> }> {
    return this.t.call('datasets.ingestionSummary', { dataset_id: this.id });
  }

  /**
   * One entry per parse of a document, newest first (`GET …/ingestions?log_type=file`); an entry's
   * `id` is also its task's (`POST /tasks/{id}/cancel`).
   */
  ingestionLogs(p: { page?: number; page_size?: number; keywords?: string; operation_status?: string[]; orderby?: string; desc?: boolean } = {}): Promise<{ total: number; logs: Array<Record<string, unknown>> }> {
    return this.t.call('datasets.ingestionLogs', { ...p, log_type: 'file', dataset_id: this.id });
  }

  /**
   * Parses every document again with the dataset's current embedding model (after
   * `update({ embedding_model })`); resolves to how many were queued.
   */
  async reembed(): Promise<number> {
    return (await this.t.call<{ scheduled_count: number }>('datasets.runEmbedding', { dataset_id: this.id })).scheduled_count;
  }

  /**
   * Parses and resolves when each document is DONE, FAIL or CANCEL, with
   * `[document_id, status, chunk_count, token_count]` per document.
   */
  async parseDocuments(ids: string[], opts: { onProgress?: (p: ParseProgress) => void; pollMs?: number } = {}): Promise<Array<[string, ParseStatus, number, number]>> {
    await this.asyncParseDocuments(ids);
    const want = [...new Set(ids)];
    const last = new Map<string, string>();
    const ended = new Map<string, Document>();
    let open = want;
    const inProcess = this.t instanceof LocalTransport || this.t instanceof OpeningTransport;
    const list = async (p: Record<string, unknown>) => {
      // One listing per poll, not one per document. Over HTTP 200 ids per request: they travel in
      // the query string, and 500 (18 KB) exceed Node's 16 KB header limit (HTTP 431).
      const step = inProcess ? Infinity : 200;
      const out = { docs: [] as Document[], total: 0 };
      for (let i = 0; i < open.length; i += step) {
        const r = await this.t.call<{ docs: Record<string, unknown>[]; total: number }>('documents.list', { ...p, ids: open.slice(i, i + step), dataset_id: this.id });
        out.docs.push(...r.docs.map((d) => new Document(this.t, d)));
        out.total += r.total;
      }
      return out;
    };
    for (;;) {
      const t0 = performance.now();
      const elu0 = performance.eventLoopUtilization();
      // Only documents still parsing are polled; without a progress callback only those that
      // ended since the last poll are read.
      const docs = (await list(opts.onProgress ? { page_size: 0 } : { page_size: 0, run: ['DONE', 'FAIL', 'CANCEL'] })).docs;
      for (const d of docs) {
        const key = `${d.run}|${d.progress}`;
        if (opts.onProgress && last.get(d.id) !== key) opts.onProgress({ document_id: d.id, run: d.run, progress: d.progress, progress_msg: d.progress_msg });
        last.set(d.id, key);
        if (d.run !== 'UNSTART' && d.run !== 'RUNNING') ended.set(d.id, d);
      }
      // Documents deleted meanwhile are no longer listed, nor waited for (checked when none ended).
      let present = opts.onProgress ? new Set(docs.map((d) => d.id)) : undefined;
      if (!present && !docs.length && (await list({ page_size: 1, run: ['UNSTART', 'RUNNING'] })).total < open.length) {
        present = new Set((await list({ page_size: 0 })).docs.map((d) => d.id));
      }
      open = open.filter((id) => !ended.has(id) && (!present || present.has(id)));
      if (!open.length) return want.filter((id) => ended.has(id)).map((id) => { const d = ended.get(id)!; return [d.id, d.run, d.chunk_count, d.token_count]; });
      // Polling takes at most 1/20 of the time of the thread that writes the documents (10,000 on
      // SQLite: ~30 ms a poll). In process that is this thread's busy time: a poll of a PostgreSQL
      // store mostly waits for the database, and waiting 20 times that (seconds) would leave a
      // parse finished long ago unnoticed. Over HTTP the server's time is not seen: the poll's.
      const cost = inProcess ? performance.eventLoopUtilization(elu0).active : performance.now() - t0;
      await new Promise((r) => setTimeout(r, Math.max(opts.pollMs ?? 100, 20 * cost)));
    }
  }
}

/** A file to upload: `blob` (bytes, or a stream of them) or `path` (a file on this machine). */
export interface UploadSource {
  display_name?: string;
  blob?: Uint8Array | AsyncIterable<Uint8Array>;
  path?: string;
}

function isByteStream(v: unknown): boolean {
  return !!v && typeof v === 'object' && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

/** A file's read stream, opened now (a missing file fails here, not inside the upload). */
async function openStream(path: string): Promise<AsyncIterable<Uint8Array>> {
  const fh = await open(path, 'r');
  return fh.createReadStream();
}

/** Temporary files for streams sent over HTTP, removed when the upload ends. */
class Spool {
  private dir: string | undefined;
  private n = 0;

  async write(source: AsyncIterable<Uint8Array>): Promise<string> {
    this.dir ??= await mkdtemp(join(tmpdir(), 'ragloom-send-'));
    const path = join(this.dir, String(this.n++));
    await pipeline(Readable.from(source), createWriteStream(path));
    return path;
  }

  async close(): Promise<void> {
    if (this.dir) await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

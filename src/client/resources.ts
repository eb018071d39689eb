import type { Transport } from './transport.js';
import type { ChunkMethod, ListDocumentsParams, UpdateChunkParams, UpdateDatasetParams, UpdateDocumentParams } from './params.js';

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

  /** The uploaded bytes, unchanged. A 0-byte file rejects with 102 "This file is empty.". */
  download(): Promise<Uint8Array> {
    return this.t.call<Uint8Array>('documents.download', { dataset_id: this.dataset_id, document_id: this.id });
  }

  async addChunk(p: { content: string; important_keywords?: string[]; questions?: string[]; image_base64?: string; tag_kwd?: string[] }): Promise<Chunk> {
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

  async uploadDocuments(files: Array<{ display_name: string; blob: Uint8Array }>): Promise<Document[]> {
    const docs = await this.t.call<Record<string, unknown>[]>('documents.upload', { dataset_id: this.id, files });
    return docs.map((d) => new Document(this.t, d));
  }

  async listDocuments(p: ListDocumentsParams = {}): Promise<Document[]> {
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

  /**
   * Parses and resolves when each document is DONE, FAIL or CANCEL, with
   * `[document_id, status, chunk_count, token_count]` per document.
   */
  async parseDocuments(ids: string[], opts: { onProgress?: (p: ParseProgress) => void; pollMs?: number } = {}): Promise<Array<[string, ParseStatus, number, number]>> {
    await this.asyncParseDocuments(ids);
    const want = [...new Set(ids)];
    const last = new Map<string, string>();
    for (;;) {
      // One listing per poll, not one per document: large batches poll cheaply. 200 ids per
      // request: over HTTP they travel in the query string, and 500 (18 KB) exceed Node's 16 KB
      // header limit (HTTP 431).
      const docs: Document[] = [];
      for (let i = 0; i < want.length; i += 200) docs.push(...await this.listDocuments({ ids: want.slice(i, i + 200), page_size: 0 }));
      const order = new Map(want.map((id, i) => [id, i]));
      docs.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
      let finished = true;
      for (const d of docs) {
        const key = `${d.run}|${d.progress}`;
        if (opts.onProgress && last.get(d.id) !== key) opts.onProgress({ document_id: d.id, run: d.run, progress: d.progress, progress_msg: d.progress_msg });
        last.set(d.id, key);
        if (d.run === 'UNSTART' || d.run === 'RUNNING') finished = false;
      }
      if (finished) return docs.map((d) => [d.id, d.run, d.chunk_count, d.token_count]);
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
    }
  }
}

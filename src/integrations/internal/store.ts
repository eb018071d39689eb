/**
 * A framework's vector store over one ragloom dataset, through the Client only (local or remote).
 *
 * Each stored record (a LangChain Document, a LlamaIndex source document) is one ragloom document:
 * a `.txt` file holding its text, its metadata as the document's `meta_fields` (so
 * `metadata_condition` filters it), and its chunks added as they are (`addChunk`; never re-parsed),
 * each with the caller's vector or embedded by the dataset's model. The caller's key for the record
 * (LangChain's `ids`, LlamaIndex's `ref_doc_id`) is kept in `meta_fields.ref_doc_id`.
 */
import { ApiError, type Client, type DataSet, type Document, type MetadataCondition, type RetrieveParams } from '../../client/index.js';
import { citedChunk, type CitedChunk } from './chunks.js';

/** The meta_fields key holding the caller's key of a record. */
export const KEY_FIELD = 'ref_doc_id';
/** The meta_fields key holding the metadata as JSON when meta_fields could not hold it exactly. */
export const JSON_FIELD = 'metadata_json';

type Scalar = string | number;
type MetaValue = Scalar | Scalar[];

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/**
 * A record's metadata as meta_fields (strings, numbers, lists of them): nested objects become
 * dotted keys (`loc.lines.from`), booleans "true"/"false", other values JSON text; null and
 * undefined are left out. When that changes anything, the exact metadata is kept as JSON too, so
 * that it comes back as it went in.
 */
export function toMetaFields(metadata: Record<string, unknown> | undefined, key?: string): Record<string, MetaValue> {
  const out: Record<string, MetaValue> = {};
  let exact = true;
  const put = (k: string, v: unknown): void => {
    if (v === undefined || v === null) {
      exact = false;
      return;
    }
    if (isScalar(v) || (Array.isArray(v) && v.every(isScalar))) {
      out[k] = v as MetaValue;
      return;
    }
    exact = false;
    if (typeof v === 'boolean') out[k] = String(v);
    else if (v && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype) {
      for (const [kk, vv] of Object.entries(v)) put(`${k}.${kk}`, vv);
    } else out[k] = JSON.stringify(v) ?? String(v);
  };
  for (const [k, v] of Object.entries(metadata ?? {})) {
    if (k === KEY_FIELD || k === JSON_FIELD) exact = false;
    put(k, v);
  }
  if (!exact) out[JSON_FIELD] = JSON.stringify(metadata ?? {});
  if (key !== undefined) out[KEY_FIELD] = key;
  return out;
}

/** The metadata a record was stored with (a document ragloom parsed itself: its meta_fields). */
export function fromMetaFields(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const m = meta ?? {};
  if (typeof m[JSON_FIELD] === 'string') {
    try {
      const v = JSON.parse(m[JSON_FIELD]) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch { /* not ours: fall through to the fields as they are */ }
  }
  const { [KEY_FIELD]: _key, ...rest } = m;
  return rest;
}

/**
 * A metadata filter as `metadata_condition`: a MetadataCondition as it is, or `{ field: value }`
 * pairs that must all hold (a list value: one of the list).
 */
export function metadataCondition(filter: MetadataCondition | Record<string, unknown> | undefined | null): MetadataCondition | undefined {
  if (filter === undefined || filter === null) return undefined;
  if (typeof filter !== 'object' || Array.isArray(filter)) throw new TypeError('A filter is a metadata_condition ({ logic, conditions }) or an object of { field: value } pairs');
  if (Array.isArray((filter as MetadataCondition).conditions)) return filter as MetadataCondition;
  const conditions = Object.entries(filter).map(([name, value]) => ({
    name, comparison_operator: Array.isArray(value) ? ('in' as const) : ('=' as const), value,
  }));
  return conditions.length ? { logic: 'and', conditions } : undefined;
}

/** One record to store. */
export interface Entry {
  /** The caller's key (replaces a record stored under the same key when `replace`). */
  key?: string;
  /** The document's name (a `.txt` is appended unless it ends in .txt or .md). */
  name: string;
  metadata?: Record<string, unknown>;
  /** Its chunks, in order; `vector`: the caller's own (else the dataset's model embeds it). */
  chunks: Array<{ text: string; vector?: number[] }>;
}

/** A search hit: the chunk with its document's metadata as stored. */
export interface Hit {
  chunk: CitedChunk;
  metadata: Record<string, unknown>;
  /** The caller's key of the record, when it was stored with one. */
  key?: string;
}

const fileName = (name: string): string => {
  const base = (name.split(/[\\/]/).pop() ?? '').trim() || 'document';
  return /\.(txt|md)$/i.test(base) ? base : `${base}.txt`;
};

export class DatasetStore {
  private ds?: Promise<DataSet>;

  constructor(readonly client: Client, readonly datasetId: string) {
    if (!client || typeof client.retrieve !== 'function') throw new TypeError('"client" must be a ragloom Client');
    if (typeof datasetId !== 'string' || !datasetId) throw new TypeError('"dataset_id" must be the id of a dataset');
  }

  /** The dataset (looked up once; 102 when the client cannot see it). */
  dataset(): Promise<DataSet> {
    this.ds ??= this.client.listDatasets({ id: this.datasetId }).then((l) => {
      if (!l[0]) throw new ApiError(102, `You don't own the dataset ${this.datasetId}.`);
      return l[0];
    });
    this.ds.catch(() => { this.ds = undefined; });
    return this.ds;
  }

  /** Whether `model` (a ragloom embedding model's id, if any) is the one the dataset embeds with. */
  async embedsWith(model: string | undefined): Promise<boolean> {
    return model !== undefined && (await this.dataset()).embedding_model === model;
  }

  /** Every document of the dataset, with its meta_fields. */
  async documents(): Promise<Document[]> {
    return (await this.dataset()).listDocuments({ page_size: 0 });
  }

  /** Documents stored under these keys (or with these ids). */
  async find(keys: string[]): Promise<Document[]> {
    const want = new Set(keys);
    return (await this.documents()).filter((d) => want.has(d.id) || want.has(String(d.meta_fields?.[KEY_FIELD] ?? '\u0000')));
  }

  /**
   * Stores the entries; resolves to their document ids and chunk ids. Checked first (no blank
   * text); a failure part-way deletes what this call had written, then rejects.
   */
  async add(entries: Entry[], opts: { replace?: boolean; append?: boolean } = {}): Promise<Array<{ document_id: string; chunk_ids: string[] }>> {
    entries.forEach((e, i) => {
      if (!e.chunks.length) throw new ApiError(102, `Record ${i}: \`content\` is required`);
      e.chunks.forEach((c) => {
        if (typeof c.text !== 'string' || !c.text.trim()) throw new ApiError(102, `Record ${i}: \`content\` is required`);
      });
    });
    const ds = await this.dataset();
    const keys = entries.map((e) => e.key).filter((k): k is string => k !== undefined);
    const existing = keys.length && (opts.replace || opts.append) ? await this.find(keys) : [];
    const byKey = new Map(existing.map((d) => [String(d.meta_fields?.[KEY_FIELD] ?? d.id), d]));
    if (opts.replace && existing.length) await ds.deleteDocuments({ ids: existing.map((d) => d.id) });
    const fresh = entries.filter((e) => !(opts.append && e.key !== undefined && byKey.has(e.key)));
    const created = fresh.length
      ? await ds.uploadDocuments(fresh.map((e) => ({ display_name: fileName(e.name), blob: new TextEncoder().encode(e.chunks.map((c) => c.text).join('\n\n')) })))
      : [];
    const docOf = new Map<Entry, Document>(fresh.map((e, i) => [e, created[i]!]));
    try {
      const out: Array<{ document_id: string; chunk_ids: string[] }> = [];
      for (const e of entries) {
        const doc = docOf.get(e) ?? byKey.get(e.key!)!;
        if (docOf.has(e)) {
          const meta = toMetaFields(e.metadata, e.key);
          if (Object.keys(meta).length) await doc.update({ meta_fields: meta });
        }
        const chunk_ids: string[] = [];
        for (const c of e.chunks) chunk_ids.push((await doc.addChunk({ content: c.text, ...(c.vector ? { vector: c.vector } : {}) })).id);
        out.push({ document_id: doc.id, chunk_ids });
      }
      return out;
    } catch (err) {
      if (created.length) await ds.deleteDocuments({ ids: created.map((d) => d.id) }).catch(() => undefined);
      throw err;
    }
  }

  /** Deletes the documents stored under these keys or with these ids; resolves to how many. */
  async delete(keys: string[]): Promise<number> {
    const docs = await this.find(keys);
    if (docs.length) await (await this.dataset()).deleteDocuments({ ids: docs.map((d) => d.id) });
    return docs.length;
  }

  /** Deletes every document of the dataset. */
  async clear(): Promise<void> {
    await (await this.dataset()).deleteDocuments({ delete_all: true });
  }

  /** A retrieval over the dataset, each chunk with its document's stored metadata. */
  async search(p: Omit<RetrieveParams, 'dataset_ids'>): Promise<Hit[]> {
    const chunks = await this.client.retrieve({ ...p, dataset_ids: [this.datasetId] });
    if (!chunks.length) return [];
    const ids = [...new Set(chunks.map((c) => c.document_id))];
    const ds = await this.dataset();
    const meta = new Map<string, Record<string, unknown>>();
    // 200 ids a request: over HTTP they travel in the query string.
    for (let i = 0; i < ids.length; i += 200) {
      for (const d of await ds.listDocuments({ ids: ids.slice(i, i + 200), page_size: 0 })) meta.set(d.id, d.meta_fields ?? {});
    }
    return chunks.map((c) => {
      const m = meta.get(c.document_id) ?? {};
      const hit: Hit = { chunk: citedChunk(c), metadata: fromMetaFields(m) };
      if (typeof m[KEY_FIELD] === 'string') hit.key = m[KEY_FIELD];
      return hit;
    });
  }
}

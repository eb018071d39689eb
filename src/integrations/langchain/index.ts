/**
 * ragloom for LangChain.js (`ragloom/langchain`; peer: `@langchain/core` ^1): a retriever over
 * ragloom's hybrid retrieval, a vector store over one dataset, and ragloom's embedding models as
 * LangChain `Embeddings`. Each works with a local or a remote Client. docs/integrations.md.
 *
 * @example
 * import { Client } from 'ragloom';
 * import { RagloomRetriever } from 'ragloom/langchain';
 * const client = new Client({ path: './kb.db' });
 * const retriever = new RagloomRetriever({ client, dataset_ids: [ds.id], page_size: 5 });
 * const docs = await retriever.invoke('What raises the tides?');
 * // docs[0].metadata: { document_id, document_name, dataset_id, similarity, … }
 */
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { VectorStore, type MaxMarginalRelevanceSearchOptions } from '@langchain/core/vectorstores';
import { Embeddings, type EmbeddingsInterface, type EmbeddingsParams } from '@langchain/core/embeddings';
import { Document, type DocumentInterface } from '@langchain/core/documents';
import { maximalMarginalRelevance } from '@langchain/core/utils/math';
import type { CallbackManagerForRetrieverRun } from '@langchain/core/callbacks/manager';
import type { Client, MetadataCondition, RetrieveParams } from '../../client/index.js';
import { citedChunk, type CitedChunk } from '../internal/chunks.js';
import { lazyEmbedder, embedTexts, type EmbeddingOptions } from '../internal/embedder.js';
import { DatasetStore, metadataCondition, type Hit } from '../internal/store.js';
import type { Embedder } from '../../embed/index.js';

export type { CitedChunk } from '../internal/chunks.js';
export type { EmbeddingOptions } from '../internal/embedder.js';

/** What a retrieved chunk's `Document.metadata` holds. */
export type RagloomChunkMetadata = Omit<CitedChunk, 'content'>;

export interface RagloomRetrieverInput extends BaseRetrieverInput, Omit<RetrieveParams, 'question'> {
  client: Client;
}

/**
 * ragloom's hybrid retrieval as a LangChain retriever: `invoke(question)` resolves to the ranked
 * chunks as `Document`s (`pageContent`: the chunk's text; `metadata`: `id`, `document_id`,
 * `document_name`, `dataset_id`, `similarity`, `vector_similarity`, `term_similarity`,
 * `positions`, and `highlight` with `highlight: true`; `id`: the chunk's id). Every parameter of
 * `client.retrieve` except `question` is fixed here (RAGFlow's defaults: page_size 30, threshold
 * 0.2, weight 0.3). Errors are ragloom's `ApiError`s.
 */
export class RagloomRetriever extends BaseRetriever<RagloomChunkMetadata> {
  lc_namespace = ['ragloom', 'retrievers'];
  static override lc_name(): string {
    return 'RagloomRetriever';
  }

  readonly client: Client;
  /** The retrieval parameters (all but `question`). */
  readonly params: Omit<RetrieveParams, 'question'>;

  constructor(fields: RagloomRetrieverInput) {
    const { client, callbacks, tags, metadata, verbose, ...params } = fields ?? ({} as RagloomRetrieverInput);
    super({ callbacks, tags, metadata, verbose });
    if (!client || typeof client.retrieve !== 'function') throw new TypeError('RagloomRetriever needs { client, dataset_ids }');
    if (!Array.isArray(params.dataset_ids)) throw new TypeError('RagloomRetriever needs { client, dataset_ids } (a list of dataset ids)');
    this.client = client;
    this.params = params;
  }

  override async _getRelevantDocuments(query: string, _run?: CallbackManagerForRetrieverRun): Promise<Document<RagloomChunkMetadata>[]> {
    const chunks = await this.client.retrieve({ ...this.params, question: query });
    return chunks.map((c) => {
      const { content, ...metadata } = citedChunk(c);
      return new Document({ pageContent: content, metadata, id: c.id });
    });
  }
}

/**
 * ragloom's embedding models as LangChain `Embeddings`: the built-in ones (offline; default
 * `ragloom-static-en-256@Builtin`) or a registered one (`models`). With the model a dataset was
 * created with, a {@link RagloomVectorStore} leaves embedding to ragloom.
 */
export class RagloomEmbeddings extends Embeddings {
  private readonly lazy: ReturnType<typeof lazyEmbedder>;
  /** `name@factory` of the model. */
  readonly model: string;

  /**
   * The model is loaded on first use (a model this process cannot run is an error then, naming
   * it), so a store over a server's dataset can name the server's model. `maxRetries` defaults to
   * 0: a local model that fails fails again (LangChain's default retries 6 times).
   */
  constructor(fields: EmbeddingOptions & EmbeddingsParams = {}) {
    const { model, models, ...params } = fields;
    super({ maxRetries: 0, ...params });
    this.lazy = lazyEmbedder({ model, models });
    this.model = this.lazy.id;
  }

  /** The model (loaded now if it was not yet). */
  get embedder(): Embedder {
    return this.lazy.get();
  }

  embedDocuments(documents: string[]): Promise<number[][]> {
    return this.caller.call(() => embedTexts(this.embedder, documents));
  }

  async embedQuery(document: string): Promise<number[]> {
    return (await this.caller.call(() => embedTexts(this.embedder, [document])))[0]!;
  }
}

export interface RagloomVectorStoreArgs {
  client: Client;
  /** The dataset that holds the store. */
  dataset_id: string;
  /** The vector side's weight of searches by text, in [0, 1]. @default the Client's (0.3) */
  vector_similarity_weight?: number;
  /** Leave out chunks scoring below this. @default 0 (every hit up to k) */
  similarity_threshold?: number;
  /** Candidates per side. @default 1024 */
  top_k?: number;
  /** A rerank model (`name@factory`) for searches by text. */
  rerank_id?: string;
}

/** `fromTexts` / `fromDocuments`: an existing dataset, or a new one created with this name. */
export type RagloomVectorStoreFromArgs = Omit<RagloomVectorStoreArgs, 'dataset_id'> & ({ dataset_id: string } | { dataset_name: string });

/** A filter: a `metadata_condition`, or `{ field: value }` pairs that must all hold. */
export type RagloomFilter = MetadataCondition | Record<string, unknown>;

/**
 * One ragloom dataset as a LangChain vector store. Each added `Document` becomes a ragloom document
 * (a .txt file of its text, its metadata as `meta_fields`, one chunk); ids are ragloom's document
 * ids, or yours (`addDocuments(docs, { ids })` replaces what was stored under the same id).
 *
 * With `RagloomEmbeddings` of the dataset's own model, ragloom embeds (with the document name
 * mixed in) and searches by text are hybrid as `client.retrieve`. With any other `Embeddings`,
 * chunks keep that model's vectors and searches pass its question vector along with the text
 * (`question_vector`, docs/retrieval.md). Scores are ragloom's `similarity`.
 */
export class RagloomVectorStore extends VectorStore {
  declare FilterType: RagloomFilter;
  readonly client: Client;
  readonly datasetId: string;
  private readonly store: DatasetStore;
  private readonly args: RagloomVectorStoreArgs;

  _vectorstoreType(): string {
    return 'ragloom';
  }

  constructor(embeddings: EmbeddingsInterface, args: RagloomVectorStoreArgs) {
    super(embeddings, args);
    this.store = new DatasetStore(args?.client, args?.dataset_id);
    this.client = args.client;
    this.datasetId = args.dataset_id;
    this.args = args;
  }

  /** True when ragloom embeds itself: the embeddings are RagloomEmbeddings of the dataset's model. */
  ownEmbeddings(): Promise<boolean> {
    return this.store.embedsWith(this.embeddings instanceof RagloomEmbeddings ? this.embeddings.model : undefined);
  }

  override async addDocuments(documents: DocumentInterface[], options?: { ids?: string[] }): Promise<string[]> {
    if (await this.ownEmbeddings()) return this.put(documents, undefined, options?.ids);
    return this.addVectors(await this.embeddings.embedDocuments(documents.map((d) => d.pageContent)), documents, options);
  }

  /** Stores documents with your vectors (one per document, of one model). Returns their ids. */
  override async addVectors(vectors: number[][], documents: DocumentInterface[], options?: { ids?: string[] }): Promise<string[]> {
    if (!Array.isArray(vectors) || vectors.length !== documents.length) throw new TypeError(`addVectors needs one vector per document (${vectors?.length} vectors, ${documents.length} documents)`);
    return this.put(documents, vectors, options?.ids);
  }

  private async put(documents: DocumentInterface[], vectors: number[][] | undefined, ids: string[] | undefined): Promise<string[]> {
    if (ids !== undefined && (!Array.isArray(ids) || ids.length !== documents.length)) throw new TypeError(`"ids" needs one id per document (${ids?.length} ids, ${documents.length} documents)`);
    const stored = await this.store.add(documents.map((d, i) => {
      const key = ids?.[i] ?? d.id;
      const source = typeof d.metadata?.source === 'string' ? d.metadata.source : undefined;
      return { key, name: source ?? key ?? 'document', metadata: d.metadata, chunks: [{ text: d.pageContent, vector: vectors?.[i] }] };
    }), { replace: true });
    return stored.map((s, i) => ids?.[i] ?? documents[i]!.id ?? s.document_id);
  }

  /**
   * Deletes by `ids` (yours, or ragloom document ids), or everything with `deleteAll: true`.
   * Unknown ids are skipped.
   */
  override async delete(params?: { ids?: string[]; deleteAll?: boolean }): Promise<void> {
    if (params?.deleteAll === true) return this.store.clear();
    if (!Array.isArray(params?.ids)) throw new TypeError('delete({ ids }) or delete({ deleteAll: true })');
    await this.store.delete(params.ids);
  }

  private base(k: number, filter: RagloomFilter | undefined): Omit<RetrieveParams, 'dataset_ids' | 'question'> {
    if (!Number.isInteger(k) || k < 1) throw new TypeError(`k must be a whole number ≥ 1, got ${k}`);
    const p: Omit<RetrieveParams, 'dataset_ids' | 'question'> = { page_size: k, similarity_threshold: this.args.similarity_threshold ?? 0 };
    if (this.args.top_k !== undefined) p.top_k = this.args.top_k;
    const mc = metadataCondition(filter);
    if (mc) p.metadata_condition = mc;
    return p;
  }

  private toPairs(hits: Hit[]): Array<[Document, number]> {
    return hits.map((h) => [new Document({ pageContent: h.chunk.content, metadata: h.metadata, id: h.key ?? h.chunk.document_id }), h.chunk.similarity]);
  }

  /** The k chunks nearest to your vector (by cosine alone), with ragloom's similarity. */
  async similaritySearchVectorWithScore(query: number[], k: number, filter?: RagloomFilter): Promise<[Document, number][]> {
    return this.toPairs(await this.store.search({ ...this.base(k, filter), question: '', question_vector: query, vector_similarity_weight: 1 }));
  }

  /** Hybrid search by text (vector and term sides, docs/retrieval.md). */
  override async similaritySearchWithScore(query: string, k = 4, filter?: RagloomFilter): Promise<[Document, number][]> {
    const p: RetrieveParams = { ...this.base(k, filter), dataset_ids: [this.datasetId], question: query };
    if (this.args.vector_similarity_weight !== undefined) p.vector_similarity_weight = this.args.vector_similarity_weight;
    if (this.args.rerank_id !== undefined) p.rerank_id = this.args.rerank_id;
    if (!(await this.ownEmbeddings())) p.question_vector = await this.embeddings.embedQuery(query);
    const { dataset_ids: _d, ...rest } = p;
    return this.toPairs(await this.store.search(rest));
  }

  override async similaritySearch(query: string, k = 4, filter?: RagloomFilter): Promise<Document[]> {
    return (await this.similaritySearchWithScore(query, k, filter)).map(([d]) => d);
  }

  /**
   * Maximal marginal relevance: `fetchK` hybrid hits, then `k` of them chosen for relevance and
   * diversity (`lambda` 1: relevance only) over their embeddings by this store's `embeddings`.
   */
  override async maxMarginalRelevanceSearch(query: string, options: MaxMarginalRelevanceSearchOptions<this['FilterType']>): Promise<Document[]> {
    const { k = 4, fetchK = 20, lambda = 0.5, filter } = options ?? {};
    const pairs = await this.similaritySearchWithScore(query, Math.max(k, fetchK), filter);
    if (!pairs.length) return [];
    const [q, docs] = await Promise.all([this.embeddings.embedQuery(query), this.embeddings.embedDocuments(pairs.map(([d]) => d.pageContent))]);
    return maximalMarginalRelevance(q, docs, lambda, k).map((i) => pairs[i]![0]);
  }

  private static async open(embeddings: EmbeddingsInterface, args: RagloomVectorStoreFromArgs): Promise<RagloomVectorStore> {
    if ('dataset_id' in args) return new RagloomVectorStore(embeddings, args);
    const { dataset_name, ...rest } = args;
    const model = embeddings instanceof RagloomEmbeddings ? { embedding_model: embeddings.model } : {};
    const ds = await args.client.createDataset({ name: dataset_name, ...model });
    return new RagloomVectorStore(embeddings, { ...rest, dataset_id: ds.id });
  }

  /** A store of these texts (`metadatas`: one object per text, or one for all). */
  static override async fromTexts(texts: string[], metadatas: object[] | object, embeddings: EmbeddingsInterface, args: RagloomVectorStoreFromArgs): Promise<RagloomVectorStore> {
    const docs = texts.map((pageContent, i) => new Document({ pageContent, metadata: { ...(Array.isArray(metadatas) ? metadatas[i] : metadatas) } }));
    return RagloomVectorStore.fromDocuments(docs, embeddings, args);
  }

  /** A store of these documents: in the dataset `dataset_id`, or in a new dataset `dataset_name`. */
  static override async fromDocuments(docs: DocumentInterface[], embeddings: EmbeddingsInterface, args: RagloomVectorStoreFromArgs): Promise<RagloomVectorStore> {
    const store = await RagloomVectorStore.open(embeddings, args);
    await store.addDocuments(docs);
    return store;
  }
}

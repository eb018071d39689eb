/**
 * ragloom for LlamaIndex.TS (`ragloom/llamaindex`; peer: `@llamaindex/core` ^0.6.22, which
 * `llamaindex` 0.12 brings): a vector store over one dataset (DEFAULT, SPARSE and HYBRID modes,
 * `alpha` as ragloom's vector weight, metadata filters as `metadata_condition`), a retriever over
 * ragloom's hybrid retrieval, and ragloom's embedding models as a `BaseEmbedding`. Local or remote
 * Client. docs/integrations.md.
 *
 * @example
 * import { Settings, VectorStoreIndex } from 'llamaindex';
 * import { RagloomVectorStore, RagloomEmbedding } from 'ragloom/llamaindex';
 * Settings.embedModel = new RagloomEmbedding();
 * const index = await VectorStoreIndex.fromVectorStore(new RagloomVectorStore({ client, dataset_id: ds.id }));
 * const answer = await index.asQueryEngine().query({ query: 'What raises the tides?' });
 */
import { BaseEmbedding } from '@llamaindex/core/embeddings';
import { BaseRetriever } from '@llamaindex/core/retriever';
import {
  BaseVectorStore, VectorStoreQueryMode, type MetadataFilters, type VectorStoreQuery, type VectorStoreQueryResult,
} from '@llamaindex/core/vector-store';
import { MetadataMode, NodeRelationship, TextNode, type BaseNode, type NodeWithScore } from '@llamaindex/core/schema';
import type { QueryBundle } from '@llamaindex/core/query-engine';
import type { Client, MetadataCondition, MetadataOperator, RetrieveParams } from '../../client/index.js';
import type { Embedder } from '../../embed/index.js';
import { citedChunk, type CitedChunk } from '../internal/chunks.js';
import { lazyEmbedder, embedTexts, type EmbeddingOptions } from '../internal/embedder.js';
import { DatasetStore, type Entry } from '../internal/store.js';

export type { CitedChunk } from '../internal/chunks.js';
export type { EmbeddingOptions } from '../internal/embedder.js';

/**
 * ragloom's embedding models as a LlamaIndex `BaseEmbedding`: the built-in ones (offline; default
 * `ragloom-static-en-256@Builtin`) or a registered one (`models`). Set it as `Settings.embedModel`
 * (or the store's `embedModel`): with the dataset's own model, ragloom embeds and ranks by text.
 */
export class RagloomEmbedding extends BaseEmbedding {
  private readonly lazy: ReturnType<typeof lazyEmbedder>;
  /** `name@factory` of the model. */
  readonly model: string;

  /** The model is loaded on first use, so a store over a server's dataset can name the server's model. */
  constructor(opts: EmbeddingOptions = {}) {
    super();
    this.lazy = lazyEmbedder(opts);
    this.model = this.lazy.id;
    this.embedBatchSize = 256;
    this.getTextEmbeddings = (texts: string[]) => embedTexts(this.embedder, texts);
  }

  /** The model (loaded now if it was not yet). */
  get embedder(): Embedder {
    return this.lazy.get();
  }

  async getTextEmbedding(text: string): Promise<number[]> {
    return (await embedTexts(this.embedder, [text]))[0]!;
  }
}

/** LlamaIndex's filter operators as `metadata_condition` operators (docs/retrieval.md). */
const OPERATORS: Record<string, MetadataOperator> = {
  '==': '=', '!=': '≠', '>': '>', '<': '<', '>=': '≥', '<=': '≤', in: 'in', nin: 'not in',
  // An array field "contains" a value when one of its elements equals it.
  contains: '=', text_match: 'contains', is_empty: 'empty',
};

/**
 * LlamaIndex `MetadataFilters` as ragloom's `metadata_condition`. `any` (an array field holding
 * one of the values) and `all` (all of them) expand into one condition per value, which one
 * condition list can express only when their logic matches the filters' (`any` under `or`, `all`
 * under `and`) or the filter is alone; otherwise a TypeError says so.
 */
export function toMetadataCondition(filters: MetadataFilters | undefined): MetadataCondition | undefined {
  if (!filters?.filters?.length) return undefined;
  const logic = filters.condition === 'or' ? 'or' : 'and';
  const conditions: MetadataCondition['conditions'] = [];
  for (const f of filters.filters) {
    if (f.operator === 'any' || f.operator === 'all') {
      const want = f.operator === 'any' ? 'or' : 'and';
      const values = Array.isArray(f.value) ? f.value : [f.value];
      if (filters.filters.length > 1 && logic !== want) {
        throw new TypeError(`The "${f.operator}" filter on "${f.key}" needs the filters' condition "${want}" (metadata_condition has one logic for all its conditions)`);
      }
      for (const value of values) conditions.push({ name: f.key, comparison_operator: '=', value });
      if (filters.filters.length === 1) return { logic: want, conditions };
      continue;
    }
    const op = OPERATORS[f.operator];
    if (!op) throw new TypeError(`Filter operator "${f.operator}" is not supported by ragloom (supported: ${[...Object.keys(OPERATORS), 'any', 'all'].join(', ')})`);
    // RAGFlow reads every condition's `value` (KeyError without one): `is_empty` has none, send null.
    conditions.push({ name: f.key, comparison_operator: op, value: f.value === undefined ? null : f.value });
  }
  return { logic, conditions };
}

export interface RagloomVectorStoreOptions {
  client: Client;
  /** The dataset that holds the store. */
  dataset_id: string;
  /**
   * How nodes are embedded. A RagloomEmbedding of the dataset's own model (the default, for the
   * default model): ragloom embeds and ranks by the query text. Any other model: nodes keep its
   * embeddings and queries pass its query embedding (`question_vector`, docs/retrieval.md).
   * @default new RagloomEmbedding()
   */
  embedModel?: BaseEmbedding;
  /** Leave out chunks scoring below this. @default 0 (every hit up to similarityTopK) */
  similarity_threshold?: number;
  /** Candidates per side. @default 1024 */
  top_k?: number;
  /** A rerank model (`name@factory`). */
  rerank_id?: string;
}

/** `customParams` of a query: retrieval parameters for that query. */
export type RagloomQueryParams = Partial<Omit<RetrieveParams, 'dataset_ids' | 'question' | 'question_vector'>>;

/**
 * One ragloom dataset as a LlamaIndex vector store (`storesText`: queries return the nodes).
 * Nodes are grouped by their source document (`ref_doc_id`): each source is one ragloom document
 * (named by `file_name`, its metadata as `meta_fields`), each node one chunk; adding nodes of a
 * source already stored appends to it, and `delete(refDocId)` removes it (or a ragloom document
 * by its id). Query modes: DEFAULT (vector side only), SPARSE (term side only), HYBRID (`alpha` =
 * `vector_similarity_weight`; none given: ragloom's default 0.3); scores are ragloom's similarity.
 */
export class RagloomVectorStore extends BaseVectorStore<Client, RagloomQueryParams> {
  storesText = true;
  private readonly ragloom: Client;
  private readonly store: DatasetStore;
  private readonly opts: RagloomVectorStoreOptions;

  constructor(opts: RagloomVectorStoreOptions) {
    super({ embedModel: opts?.embedModel ?? new RagloomEmbedding() });
    this.store = new DatasetStore(opts?.client, opts?.dataset_id);
    this.ragloom = opts.client;
    this.opts = opts;
  }

  client(): Client {
    return this.ragloom;
  }

  /** True when ragloom embeds itself: `embedModel` is a RagloomEmbedding of the dataset's model. */
  ownEmbeddings(): Promise<boolean> {
    return this.store.embedsWith(this.embedModel instanceof RagloomEmbedding ? this.embedModel.model : undefined);
  }

  async add(nodes: BaseNode[]): Promise<string[]> {
    if (!nodes.length) return [];
    const own = await this.ownEmbeddings();
    const texts = nodes.map((n) => n.getContent(MetadataMode.NONE));
    let vectors: Array<number[] | undefined> = nodes.map((n) => n.embedding);
    if (!own && vectors.some((v) => !v)) vectors = await this.embedModel.getTextEmbeddingsBatch(texts);
    const groups = new Map<string, { entry: Entry; at: number[] }>();
    nodes.forEach((n, i) => {
      const key = n.sourceNode?.nodeId ?? n.id_;
      let g = groups.get(key);
      if (!g) {
        const m = n.metadata ?? {};
        const name = typeof m.file_name === 'string' ? m.file_name : typeof m.file_path === 'string' ? m.file_path : key;
        groups.set(key, (g = { entry: { key, name, metadata: m, chunks: [] }, at: [] }));
      }
      g.entry.chunks.push({ text: texts[i]!, vector: own ? undefined : vectors[i] });
      g.at.push(i);
    });
    const stored = await this.store.add([...groups.values()].map((g) => g.entry), { append: true });
    const ids = new Array<string>(nodes.length);
    [...groups.values()].forEach((g, j) => g.at.forEach((i, k) => (ids[i] = stored[j]!.chunk_ids[k]!)));
    return ids;
  }

  async delete(refDocId: string): Promise<void> {
    await this.store.delete([refDocId]);
  }

  async query(q: VectorStoreQuery<RagloomQueryParams>): Promise<VectorStoreQueryResult> {
    const mode = q.mode ?? VectorStoreQueryMode.DEFAULT;
    const text = typeof q.queryStr === 'string' ? q.queryStr : '';
    const own = await this.ownEmbeddings();
    const p: Omit<RetrieveParams, 'dataset_ids'> = { question: text, page_size: q.similarityTopK, similarity_threshold: this.opts.similarity_threshold ?? 0 };
    if (this.opts.top_k !== undefined) p.top_k = this.opts.top_k;
    if (this.opts.rerank_id !== undefined) p.rerank_id = this.opts.rerank_id;
    switch (mode) {
      case VectorStoreQueryMode.DEFAULT:
        p.vector_similarity_weight = 1;
        break;
      case VectorStoreQueryMode.SPARSE:
        p.vector_similarity_weight = 0;
        break;
      case VectorStoreQueryMode.HYBRID:
        if (q.alpha !== undefined) p.vector_similarity_weight = q.alpha;
        break;
      default:
        throw new TypeError(`Query mode "${mode}" is not supported by ragloom (supported: default, sparse, hybrid)`);
    }
    if (mode !== VectorStoreQueryMode.DEFAULT && !text.trim()) throw new TypeError(`A ${mode} query needs queryStr (the term side matches its words)`);
    if (mode !== VectorStoreQueryMode.SPARSE && (!own || !text.trim())) {
      if (!q.queryEmbedding?.length) throw new TypeError('This query needs queryEmbedding (the store keeps its embed model\'s vectors)');
      p.question_vector = q.queryEmbedding;
    }
    const mc = toMetadataCondition(q.filters);
    if (mc) p.metadata_condition = mc;
    if (q.docIds?.length) {
      const docs = await this.store.find(q.docIds);
      if (!docs.length) return { nodes: [], similarities: [], ids: [] };
      p.document_ids = docs.map((d) => d.id);
    }
    Object.assign(p, q.customParams ?? {});
    const hits = await this.store.search(p);
    return {
      nodes: hits.map((h) => new TextNode({
        id_: h.chunk.id, text: h.chunk.content, metadata: h.metadata,
        relationships: { [NodeRelationship.SOURCE]: { nodeId: h.key ?? h.chunk.document_id, metadata: {} } },
      })),
      similarities: hits.map((h) => h.chunk.similarity),
      ids: hits.map((h) => h.chunk.id),
    };
  }
}

export interface RagloomRetrieverOptions extends Omit<RetrieveParams, 'question'> {
  client: Client;
}

/** Metadata keys a response synthesizer leaves out of the model's context (it sees document_name). */
const NOT_FOR_LLM = ['id', 'document_id', 'dataset_id', 'similarity', 'vector_similarity', 'term_similarity', 'positions', 'highlight'];

/**
 * ragloom's hybrid retrieval as a LlamaIndex retriever (for `RetrieverQueryEngine`,
 * `ContextChatEngine`, …): each chunk a `TextNode` (`id_`: the chunk's id; metadata: document
 * name and id, dataset id, scores, positions) with ragloom's similarity as its score. Every
 * parameter of `client.retrieve` but the question is fixed here.
 */
export class RagloomRetriever extends BaseRetriever {
  readonly client: Client;
  readonly params: Omit<RetrieveParams, 'question'>;

  constructor(opts: RagloomRetrieverOptions) {
    super();
    const { client, ...params } = opts ?? ({} as RagloomRetrieverOptions);
    if (!client || typeof client.retrieve !== 'function') throw new TypeError('RagloomRetriever needs { client, dataset_ids }');
    if (!Array.isArray(params.dataset_ids)) throw new TypeError('RagloomRetriever needs { client, dataset_ids } (a list of dataset ids)');
    this.client = client;
    this.params = params;
  }

  async _retrieve(bundle: QueryBundle): Promise<NodeWithScore[]> {
    const q = bundle.query;
    const question = typeof q === 'string' ? q : q.map((d) => (d.type === 'text' ? d.text : '')).join(' ');
    const chunks = await this.client.retrieve({ ...this.params, question });
    return chunks.map((c) => {
      const { content, ...metadata } = citedChunk(c);
      const node = new TextNode<Record<string, unknown>>({
        id_: c.id, text: content, metadata, excludedLlmMetadataKeys: NOT_FOR_LLM, excludedEmbedMetadataKeys: NOT_FOR_LLM,
        relationships: { [NodeRelationship.SOURCE]: { nodeId: c.document_id, metadata: {} } },
      });
      return { node, score: c.similarity ?? 0 };
    });
  }
}

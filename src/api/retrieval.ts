/**
 * `retrieval` (RAGFlow's POST /retrieval): the wire parameters checked in RAGFlow's order, with
 * its defaults, codes and messages; the search itself is src/search (hybridSearch).
 * docs/retrieval.md describes every parameter.
 */
import type { Engine, Ctx } from '../core/index.js';
import { chatModel, keywordExtraction, crossLanguages, questionRelated, DEFAULT_CHAT_MODEL, type DatasetRow } from '../core/index.js';
import type { ChatModel } from '../llm/index.js';
import type { ModelConfig } from '../embed/index.js';
import {
  hybridSearch, createReranker, RerankError,
  type Reranker, type RetrieveResult, type MetadataFilter,
} from '../search/index.js';
import { readMetadataCondition } from './metadata.js';
import { apiError, fail } from './errors.js';
import { vectorParam } from './validate.js';
import { pyStr } from './pyfmt.js';
import { pyIntOf, pyFloatOf } from './listing.js';

export interface RetrieveParams {
  question?: unknown;
  dataset_ids?: unknown;
  document_ids?: unknown;
  page?: unknown;
  page_size?: unknown;
  similarity_threshold?: unknown;
  vector_similarity_weight?: unknown;
  top_k?: unknown;
  rerank_id?: unknown;
  keyword?: unknown;
  cross_languages?: unknown;
  metadata_condition?: unknown;
  highlight?: unknown;
  use_kg?: unknown;
  toc_enhance?: unknown;
  /** ragloom: the question's vector, made by the caller's own embedding model (else the datasets' model embeds the question). */
  question_vector?: unknown;
}

/** `out.unknown` receives the question's terms no chunk of the datasets holds (for an agent's offline model). */
export async function retrieve(e: Engine, ctx: Ctx, p: RetrieveParams, out?: { unknown?: string[] }): Promise<RetrieveResult> {
  if (p.dataset_ids === undefined || p.dataset_ids === null || (Array.isArray(p.dataset_ids) && p.dataset_ids.length === 0) || p.dataset_ids === '') {
    fail('DATASET_IDS_REQUIRED');
  }
  if (!Array.isArray(p.dataset_ids)) fail('DATASET_IDS_LIST');
  const kbs: DatasetRow[] = [];
  // A search reads, never writes: the check may come from the store's cache (a round trip saved).
  const visible = await e.store.datasets.getVisibleMany((p.dataset_ids as unknown[]).filter((id): id is string => typeof id === 'string'), ctx, { cached: true });
  for (const id of p.dataset_ids as unknown[]) {
    const kb = typeof id === 'string' ? visible.get(id) : undefined;
    if (!kb) fail('DATASET_NOT_OWNED', pyStr(id));
    if (!kbs.some((k) => k.id === kb.id)) kbs.push(kb);
  }
  if (new Set(kbs.map((k) => k.embd_id)).size > 1) fail('DIFFERENT_EMBEDDING_MODELS');
  if (p.question === undefined || p.question === null) fail('QUESTION_REQUIRED');
  if (typeof p.question !== 'string') fail('QUESTION_STRING');
  const page = Math.max(1, num(p.page, 1, true));
  const pageSize = Math.max(1, num(p.page_size, 30, true));
  const docIds = p.document_ids === undefined || p.document_ids === null ? [] : p.document_ids;
  if (!Array.isArray(docIds)) fail('DOCUMENTS_LIST');
  const kbIds = kbs.map((k) => k.id);
  const owned = await e.store.documents.inDatasets((docIds as unknown[]).map((d) => pyStr(d)), kbIds);
  for (const d of docIds as unknown[]) if (!owned.has(pyStr(d))) fail('DATASETS_DONT_OWN_DOCUMENT', pyStr(d));
  const metadata = parseMetadataCondition(p.metadata_condition);
  // RAGFlow takes any number for these two; a threshold above 1 then finds nothing and a weight
  // outside [0, 1] turns a side's score negative. Refused, as the CLI and chats refuse them.
  const threshold = num(p.similarity_threshold, 0.2);
  if (threshold < 0 || threshold > 1) fail('THRESHOLD_RANGE');
  // No weight given: the Client's default (RAGFlow's 0.3 unless `retrieval.defaultWeight` says otherwise).
  // null or '' is no weight too (issue 18's default applies), where RAGFlow's float() would fail.
  const weightGiven = !(p.vector_similarity_weight === undefined || p.vector_similarity_weight === null || p.vector_similarity_weight === '');
  const weight = num(weightGiven ? p.vector_similarity_weight : undefined, e.retrievalOptions.defaultWeight);
  if (weight < 0 || weight > 1) fail('WEIGHT_RANGE');
  const topK = num(p.top_k, 1024, true);
  if (topK <= 0) fail('TOP_K_POSITIVE');
  const highlight = highlightFlag(p.highlight);
  if (p.cross_languages !== undefined && p.cross_languages !== null && !Array.isArray(p.cross_languages)) {
    fail('CROSS_LANGUAGES_LIST');
  }
  // Query rewriting (RAGFlow: the tenant's default chat model) needs a model that writes text.
  const wantsKeywords = p.keyword === true || p.keyword === 'true';
  const languages = Array.isArray(p.cross_languages) ? (p.cross_languages as unknown[]).map((x) => pyStr(x)).filter(Boolean) : [];
  let rewriter: ChatModel | undefined;
  if (wantsKeywords || languages.length) {
    const what = languages.length ? '`cross_languages`' : '`keyword`';
    const id = await defaultChatModelId(e, ctx);
    rewriter = chatModel(e, id, kbs[0]!.embd_id);
    if (!rewriter) fail('NEEDS_CHAT_MODEL', what);
    if (rewriter!.capabilities?.rewrite === false) fail('NEEDS_WRITING_MODEL', what, id);
  }
  let reranker: Reranker | undefined;
  if (p.rerank_id !== undefined && p.rerank_id !== null && p.rerank_id !== '') {
    if (typeof p.rerank_id !== 'string') fail('RERANK_ID_STRING');
    reranker = resolveReranker(e, p.rerank_id);
  }
  const given = p.question_vector === undefined || p.question_vector === null ? undefined : vectorParam(p.question_vector, 'question_vector');
  let question = p.question.trim();
  // With its own vector, a blank question is a search by the vector alone (no terms to match).
  if (!question && !given) return { total: 0, chunks: [], doc_aggs: {} };
  if (!question) rewriter = undefined;
  if (rewriter && languages.length) question = await crossLanguages(rewriter, question, languages);
  // Appended with no separator, as RAGFlow's retrieval does (chats use ",").
  if (rewriter && wantsKeywords) question += await keywordExtraction(rewriter, question);

  const embedder = given ? undefined : e.models.embedder(kbs[0]!.embd_id);
  try {
    // The question's unknown terms are for a chat's or an agent's model, not part of RAGFlow's answer.
    const { unknown, ...res } = await hybridSearch(e.store.search, {
      datasets: kbs.map((k) => ({ id: k.id, pagerank: k.pagerank ?? 0, language: k.language })),
      question,
      embedQuestion: given ? async () => given : async (q) => (await embedder!.embed([q]))[0]!,
      documentIds: (docIds as unknown[]).map((x) => pyStr(x)),
      metadata,
      page,
      pageSize,
      threshold,
      weight,
      weightGiven,
      topK,
      highlight,
      reranker,
      options: e.retrievalOptions,
      related: questionRelated(question, e.retrievalOptions),
    });
    if (out) out.unknown = unknown;
    return res;
  } catch (err) {
    if (err instanceof RerankError) throw Object.assign(apiError('RERANK_FAILED', err.modelId, err.detail), { cause: err.cause ?? err });
    throw err;
  }
}

/** A number of the request as RAGFlow's handler casts it (`int(req.get(k, d))`, `float(…)`): absent → the default; else Python's cast or its error (code 100). */
function num(v: unknown, dflt: number, int = false): number {
  if (v === undefined) return dflt;
  return int ? pyIntOf(v) : pyFloatOf(v);
}

function highlightFlag(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && ['true', 'false'].includes(v.toLowerCase())) return v.toLowerCase() === 'true';
  return fail('HIGHLIGHT_BOOLEAN');
}

async function defaultChatModelId(e: Engine, ctx: Ctx): Promise<string> {
  return (await e.store.accounts.tenant(ctx.tenantId))?.llm_id || DEFAULT_CHAT_MODEL;
}

// ---- metadata_condition

/** The wire value of `metadata_condition`, read as RAGFlow reads it (src/api/metadata.ts); null when absent or falsy. */
export function parseMetadataCondition(v: unknown): MetadataFilter | null {
  return readMetadataCondition(v);
}

// ---- rerank_id

const rerankers = new WeakMap<Engine, Map<string, Reranker>>();

/** The reranker named by `rerank_id` (`name@factory`, or a bare name when unambiguous); 102 when unknown. */
export function resolveReranker(e: Engine, rerankId: string): Reranker {
  let m = rerankers.get(e);
  if (!m) rerankers.set(e, (m = new Map()));
  const cfg = findRerankModel(e, rerankId);
  const key = `${cfg.name}@${cfg.factory}|${cfg.base_url ?? ''}|${cfg.path ?? ''}`;
  let r = m.get(key);
  if (!r) m.set(key, (r = createReranker(cfg)));
  return r;
}

function findRerankModel(e: Engine, id: string): ModelConfig {
  const exact = e.models.get('rerank', id);
  if (exact) return exact;
  if (!id.includes('@')) {
    const byName = e.models.list('rerank').filter((m) => m.name === id);
    if (byName.length === 1) return byName[0]!;
  }
  return fail('RERANK_NOT_FOUND', id);
}

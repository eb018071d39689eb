/**
 * Dify's external knowledge API (RAGFlow's dify_retrieval_api.py): `POST /dify/retrieval
 * {knowledge_id, query, retrieval_setting: {top_k, score_threshold}, metadata_condition}` (or
 * the same as a GET query) answers `{records: [{content, score, title, metadata}]}` from one
 * dataset, so a Dify app can use a ragloom dataset as its knowledge base.
 */
import type { Engine, Ctx } from '../core/index.js';
import { getDataset, visibleDataset } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { retrieve } from './retrieval.js';
import { isPlainObject } from '../util/index.js';
import { readMetadataCondition, truthy } from './metadata.js';

type P = Record<string, unknown>;

const malformed = (why: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, `invalid or malformed arguments: ${why}; `);
};
const NUMBERS = 'top_k must be integer and score_threshold must be numeric';

function pyIntOf(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number(v.trim());
  return malformed(NUMBERS);
}

function pyFloatOf(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return malformed(NUMBERS);
}

/** `str(e)` of the Python exception whose repr a metadata_condition failure reports (`KeyError('name')` → `'name'`). */
function pyStrOfError(repr: string): string {
  const m = /^(\w+)\((['"])(.*)\2\)$/s.exec(repr);
  if (!m) return repr;
  return m[1] === 'KeyError' ? `'${m[3]}'` : m[3]!;
}

/**
 * The dataset's best chunks for `query` as Dify's records; the document's `meta_fields` plus its
 * id as `metadata`. Checked in RAGFlow's order: required arguments, `retrieval_setting` (101),
 * the dataset (404, 109), then `metadata_condition`, whose Python failures RAGFlow's handler
 * answers with code 500 and the exception's text.
 */
export async function difyRetrieval(e: Engine, ctx: Ctx, req: P): Promise<{ records: P[] }> {
  let setting: P = {};
  const fromQuery = req._query === true; // the GET form: strings of the query
  if (fromQuery) {
    if (req.top_k !== undefined && req.top_k !== '') setting.top_k = pyIntOf(req.top_k);
    if (req.score_threshold !== undefined && req.score_threshold !== '') setting.score_threshold = pyFloatOf(req.score_threshold);
  }
  const missing = ['knowledge_id', 'query'].filter((k) => !req[k]);
  if (missing.length) throw new ApiError(RetCode.ARGUMENT_ERROR, `required arguments are missing: ${missing.join(',')}; `);
  if (!fromQuery && req.retrieval_setting !== undefined && req.retrieval_setting !== null) {
    if (!isPlainObject(req.retrieval_setting)) malformed('retrieval_setting must be an object');
    setting = req.retrieval_setting as P;
  }
  const threshold = setting.score_threshold === undefined ? 0 : pyFloatOf(setting.score_threshold);
  const top = setting.top_k === undefined ? 1024 : pyIntOf(setting.top_k);
  const kbId = pyStr(req.knowledge_id);
  if (!(await getDataset(e, kbId))) throw new ApiError(RetCode.NOT_FOUND, 'Knowledgebase not found!');
  if (!(await visibleDataset(e, ctx, kbId))) throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
  const condition = fromQuery ? undefined : req.metadata_condition;
  try {
    readMetadataCondition(condition);
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(RetCode.SERVER_ERROR, pyStrOfError(err.message));
    throw err;
  }
  const r = await retrieve(e, ctx, {
    dataset_ids: [kbId], question: pyStr(req.query), page: 1, page_size: Math.max(1, top), similarity_threshold: threshold,
    vector_similarity_weight: 0.3, top_k: Math.max(1, top), metadata_condition: truthy(condition) ? condition : undefined,
  });
  const meta = await e.store.documents.metaFields(r.chunks.map((c) => String(c.document_id)));
  return {
    records: r.chunks.map((c) => {
      const docId = String(c.document_id);
      const fields = JSON.parse(meta.get(docId) ?? '{}') as P;
      return { content: c.content, score: c.similarity, title: c.document_keyword, metadata: { ...fields, doc_id: docId, document_id: docId } };
    }),
  };
}

/**
 * A dataset's extra indexes (dataset_api.py: knowledge graph, RAPTOR, mind map) and its
 * embedding (re-embed, check a model against the stored vectors), as ragloom has them: it builds
 * no knowledge graph, RAPTOR tree or mind map — the graph reads as empty, there is never a task to
 * trace or delete, and starting one answers "not supported by ragloom" — and it re-embeds a
 * dataset by parsing its documents again.
 */
import type { Engine, Ctx, ParseQueue, DocumentRow } from '../core/index.js';
import { visibleDataset, embedCached } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { notSupportedError } from './routes.js';
import { parseAll } from './parse.js';
import { fromBlob } from '../store/index.js';
import { cosine } from '../embed/similarity.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};

const INDEX_TYPES = ['graph', 'mindmap', 'raptor'];
const WHY: Record<string, string> = {
  graph: 'ragloom builds no knowledge graph (entity and relation extraction by a generative model)',
  raptor: 'ragloom builds no RAPTOR summary tree (cluster summaries by a generative model)',
  mindmap: 'ragloom builds no mind maps (a generative model drawing one from the chunks)',
};

function accessible(e: Engine, ctx: Ctx, datasetId: string) {
  if (!datasetId) dataError('Lack of "Dataset ID"');
  const kb = visibleDataset(e, ctx, datasetId);
  if (!kb) dataError('No authorization.');
  return kb!;
}

function indexType(p: P): string {
  return pyStr(p.index_type ?? p.type ?? '').toLowerCase();
}

/** `GET /datasets/{id}/graph`: `{graph: {}, mind_map: {}}` (RAGFlow's answer when none was built); 109 `No authorization.`. */
export function knowledgeGraph(e: Engine, ctx: Ctx, datasetId: string): P {
  if (!visibleDataset(e, ctx, datasetId)) throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
  return { graph: {}, mind_map: {} };
}

/** RAGFlow's check of `type`: one of graph, raptor, mindmap (102). */
function checkType(t: string): void {
  if (!INDEX_TYPES.includes(t)) dataError(`Invalid index type '${t}'. Must be one of ['graph', 'mindmap', 'raptor']`);
}

/** `POST /datasets/{id}/index?type=`: checked as RAGFlow checks it, then "not supported by ragloom" (501). */
export function runIndex(e: Engine, ctx: Ctx, datasetId: string, p: P): never {
  const t = indexType(p);
  checkType(t);
  const kb = accessible(e, ctx, datasetId);
  if (!e.db.prepare('SELECT 1 FROM document WHERE dataset_id = ? LIMIT 1').get(kb.id)) dataError(`No documents in Dataset ${datasetId}`);
  throw notSupportedError({ method: 'POST', path: `/datasets/:dataset_id/index?type=${t}`, why: WHY[t]! });
}

/** `GET /datasets/{id}/index?type=`: the task of that index — there is none, so `{}`. */
export function traceIndex(e: Engine, ctx: Ctx, datasetId: string, p: P): Record<string, never> {
  checkType(indexType(p));
  accessible(e, ctx, datasetId);
  return {};
}

/** `DELETE /datasets/{id}/index?type=` (or `/datasets/{id}/{type}`): nothing was built, nothing runs: `{}`. An unknown type: 101. */
export function deleteIndex(e: Engine, ctx: Ctx, datasetId: string, p: P): Record<string, never> {
  const t = indexType(p);
  if (!INDEX_TYPES.includes(t)) throw new ApiError(RetCode.ARGUMENT_ERROR, `Invalid index type '${t}'`);
  accessible(e, ctx, datasetId);
  return {};
}

/** `POST /datasets/{id}/embedding`: parses every document again (with the dataset's current model); `{scheduled_count}`. */
export function runEmbedding(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string): { scheduled_count: number } {
  const kb = accessible(e, ctx, datasetId);
  const docs = e.db.prepare('SELECT * FROM document WHERE dataset_id = ? ORDER BY create_time, rowid').all(kb.id) as DocumentRow[];
  if (!docs.length) dataError(`No documents in Dataset ${datasetId}`);
  parseAll(e, q, ctx, docs);
  return { scheduled_count: docs.length };
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * `POST /datasets/{id}/embedding/check {embd_id, check_num = 5}`: samples chunks (among the first
 * 1,000 switched on), embeds their text with `embd_id` and compares with the stored vectors
 * (content alone, and mixed with the title as stored; the better). Average ≥ 0.9: `{summary,
 * results}`; below: code 10 with the same data; another dimension: 102 `Embedding failure. …`.
 */
export async function checkEmbedding(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<P> {
  if (!req.embd_id) dataError('`embd_id` is required.');
  const kb = accessible(e, ctx, datasetId);
  const model = pyStr(req.embd_id);
  const st = e.models.embeddingStatus(model);
  if (st === 'unsupported') dataError(`Unsupported model: <${model}>`);
  if (st === 'unauthorized') dataError(`Unauthorized model: <${model}>`);
  const n = Math.max(0, Math.trunc(Number(req.check_num ?? 5)) || 0);
  const pool = e.db.prepare(`SELECT c.rowid, c.id, c.document_id, c.content, c.questions, c.vec_dim, d.name FROM chunk c JOIN document d ON d.id = c.document_id
    WHERE c.dataset_id = ? AND c.available = 1 ORDER BY c.rowid LIMIT 1000`).all(kb.id) as Array<{ rowid: number; id: string; document_id: string; content: string; questions: string; vec_dim: number; name: string }>;
  const samples = [...pool].sort(() => Math.random() - 0.5).slice(0, Math.min(n, pool.length)).sort((a, b) => a.rowid - b.rowid);
  const results: P[] = [];
  const sims: number[] = [];
  let mode = 'content_only';
  for (const c of samples) {
    const questions = JSON.parse(c.questions) as string[];
    const text = (questions.length ? questions.join('\n') : c.content).replace(/<\/?(table|td|caption|tr|th)( [^<>]{0,12})?>/g, ' ').trim();
    if (!text) {
      results.push({ chunk_id: c.id, reason: 'no_text' });
      continue;
    }
    const row = c.vec_dim > 0 ? e.db.prepare(`SELECT embedding FROM vec_${c.vec_dim} WHERE rowid = ?`).get(BigInt(c.rowid)) as { embedding: Buffer } | undefined : undefined;
    if (!row) {
      results.push({ chunk_id: c.id, reason: 'no_stored_vector' });
      continue;
    }
    const stored = fromBlob(row.embedding);
    let title: Float32Array;
    let content: Float32Array;
    try {
      [title, content] = (await embedCached(e, model, [c.name || 'Title', text])) as [Float32Array, Float32Array];
    } catch (err) {
      dataError(`Embedding failure. ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
    if (content.length !== stored.length) dataError(`Embedding failure. The dimension (${content.length}) of given embedding model is different from the original (${stored.length})`);
    const mixed = content.map((x, i) => 0.1 * title[i]! + 0.9 * x);
    let sim = cosine(content, stored);
    mode = 'content_only';
    const simMix = cosine(mixed, stored);
    if (simMix > sim) [sim, mode] = [simMix, 'title+content'];
    sims.push(sim);
    results.push({ chunk_id: c.id, doc_id: c.document_id, doc_name: c.name, vector_field: `q_${stored.length}_vec`, vector_dim: stored.length, cos_sim: round6(sim) });
  }
  const avg = sims.length ? sims.reduce((a, b) => a + b, 0) / sims.length : 0;
  const summary = {
    kb_id: kb.id, model, sampled: samples.length, valid: sims.length, avg_cos_sim: round6(avg),
    min_cos_sim: round6(sims.length ? Math.min(...sims) : 0), max_cos_sim: round6(sims.length ? Math.max(...sims) : 0), match_mode: mode,
  };
  if (!sims.length) dataError('No embedded chunks are available to compare.');
  const data = { summary, results };
  if (summary.avg_cos_sim >= 0.9) return data;
  throw new ApiError(RetCode.NOT_EFFECTIVE, 'Embedding model switch failed: the average similarity between old and new vectors is below 0.9, indicating incompatible vector spaces.', { data });
}

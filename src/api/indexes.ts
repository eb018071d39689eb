/**
 * A dataset's extra indexes (dataset_api.py: knowledge graph, RAPTOR, mind map) and its
 * embedding (re-embed, check a model against the stored vectors), as ragloom has them: it builds
 * no knowledge graph, RAPTOR tree or mind map — the graph reads as empty, there is never a task to
 * trace or delete, and starting one answers "not supported by ragloom" — and it re-embeds a
 * dataset by parsing its documents again.
 */
import type { Engine, Ctx, ParseQueue } from '../core/index.js';
import { visibleDataset, embedCached } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { notSupportedError } from './routes.js';
import { parseAll } from './parse.js';
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

async function accessible(e: Engine, ctx: Ctx, datasetId: string) {
  if (!datasetId) dataError('Lack of "Dataset ID"');
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) dataError('No authorization.');
  return kb!;
}

function indexType(p: P): string {
  return pyStr(p.index_type ?? p.type ?? '').toLowerCase();
}

/** `GET /datasets/{id}/graph`: `{graph: {}, mind_map: {}}` (RAGFlow's answer when none was built); 109 `No authorization.`. */
export async function knowledgeGraph(e: Engine, ctx: Ctx, datasetId: string): Promise<P> {
  if (!(await visibleDataset(e, ctx, datasetId))) throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
  return { graph: {}, mind_map: {} };
}

/** RAGFlow's check of `type`: one of graph, raptor, mindmap (102). */
function checkType(t: string): void {
  if (!INDEX_TYPES.includes(t)) dataError(`Invalid index type '${t}'. Must be one of ['graph', 'mindmap', 'raptor']`);
}

/** `POST /datasets/{id}/index?type=`: checked as RAGFlow checks it, then "not supported by ragloom" (501). */
export async function runIndex(e: Engine, ctx: Ctx, datasetId: string, p: P): Promise<never> {
  const t = indexType(p);
  checkType(t);
  const kb = await accessible(e, ctx, datasetId);
  if (!(await documentsOf(e, kb.id, 0)).total) dataError(`No documents in Dataset ${datasetId}`);
  throw notSupportedError({ method: 'POST', path: `/datasets/:dataset_id/index?type=${t}`, why: WHY[t]! });
}

/** `GET /datasets/{id}/index?type=`: the task of that index — there is none, so `{}`. */
export async function traceIndex(e: Engine, ctx: Ctx, datasetId: string, p: P): Promise<Record<string, never>> {
  checkType(indexType(p));
  await accessible(e, ctx, datasetId);
  return {};
}

/** `DELETE /datasets/{id}/index?type=` (or `/datasets/{id}/{type}`): nothing was built, nothing runs: `{}`. An unknown type: 101. */
export async function deleteIndex(e: Engine, ctx: Ctx, datasetId: string, p: P): Promise<Record<string, never>> {
  const t = indexType(p);
  if (!INDEX_TYPES.includes(t)) throw new ApiError(RetCode.ARGUMENT_ERROR, `Invalid index type '${t}'`);
  await accessible(e, ctx, datasetId);
  return {};
}

/** `POST /datasets/{id}/embedding`: parses every document again (with the dataset's current model); `{scheduled_count}`. */
export async function runEmbedding(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string): Promise<{ scheduled_count: number }> {
  const kb = await accessible(e, ctx, datasetId);
  const docs = (await documentsOf(e, kb.id, -1)).rows;
  if (!docs.length) dataError(`No documents in Dataset ${datasetId}`);
  await parseAll(e, q, ctx, docs);
  return { scheduled_count: docs.length };
}

/** The dataset's documents by creation (`limit` 0: the count alone; -1: all). */
const documentsOf = (e: Engine, datasetId: string, limit: number) =>
  e.store.documents.list({ dataset_id: datasetId, orderby: 'create_time', desc: false, limit, offset: 0 });

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * `POST /datasets/{id}/embedding/check {embd_id, check_num = 5}`: samples chunks (among the first
 * 1,000 switched on), embeds their text with `embd_id` and compares with the stored vectors
 * (content alone, and mixed with the title as stored; the better). Average ≥ 0.9: `{summary,
 * results}`; below: code 10 with the same data; another dimension: 102 `Embedding failure. …`.
 */
export async function checkEmbedding(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<P> {
  if (!req.embd_id) dataError('`embd_id` is required.');
  const kb = await accessible(e, ctx, datasetId);
  const model = pyStr(req.embd_id);
  const st = e.models.embeddingStatus(model);
  if (st === 'unsupported') dataError(`Unsupported model: <${model}>`);
  if (st === 'unauthorized') dataError(`Unauthorized model: <${model}>`);
  const n = Math.max(0, Math.trunc(Number(req.check_num ?? 5)) || 0);
  const pool = await e.store.chunks.embeddingSamples(kb.id, 1000);
  const samples = [...pool].sort(() => Math.random() - 0.5).slice(0, Math.min(n, pool.length)).sort((a, b) => a.rowid - b.rowid);
  const vectors = await e.store.chunks.storedVectors(samples);
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
    const stored = vectors.get(c.rowid);
    if (!stored) {
      results.push({ chunk_id: c.id, reason: 'no_stored_vector' });
      continue;
    }
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

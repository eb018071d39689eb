/**
 * Hybrid search over memory messages (RAGFlow §11, GET /messages/search), on the same analyzer,
 * full-text design (src/search/fulltext.ts over `memory_fts`) and vector-index design
 * (src/search/vector-index.ts, the store's 'memory' feed) as chunk retrieval:
 *
 *   similarity = w·vector_similarity + (1 − w)·term_similarity
 *
 * with w = RAGFlow's `keywords_similarity_weight` (in 0.25.6 the weight of the VECTOR side: the
 * name says the opposite), vector_similarity the cosine clamped to [0, 1], and term_similarity
 * the BM25 of the message divided by the query's own upper bound Σ idf·(k1+1) — the chunk
 * normalisation, so the threshold means the same for every query. Only messages with status = 1
 * and forget_at IS NULL in the given memories (and of the given agent / session / user) are
 * found. Candidates are the union of the vector side's and the full-text side's best
 * `candidatesPerSide(topN)` each, every candidate scored exactly on both sides; the threshold
 * applies to `similarity`; at most topN come back, best first (ties: the higher
 * term_similarity, then the newer message).
 *
 * The index knows only messages with a vector of `dim` dimensions (a memory has one embedding
 * model; RAGFlow refuses to change it on a non-empty memory), so on both sides a message without
 * one is not found; with no dimension at all (no question vector, dim ≤ 0) the text side alone
 * runs, its rows checked in the store. Agent, session and user ids are filters kept in the index
 * (VECTOR_SOURCES.memory.tags): they must not change after insert.
 *
 * Unlike chunk retrieval there is no pseudo-relevance feedback (Rocchio / RM3) here: RAGFlow
 * does none for messages, and a memory's few, short messages give it little to feed on.
 */
import type { SearchReader } from '../store/index.js';
import { memoryVectorIndex, type DimIndex, type VectorFilter } from './vector-index.js';
import { fts, textQuery, textSide } from './fulltext.js';
import type { FullTextEngine } from '../store/index.js';

export interface MemorySearchRequest {
  /** The memories searched (one embedding model). */
  memoryIds: string[];
  question: string;
  /** The question embedded with the memories' model; null: the text side alone. */
  questionVector: Float32Array | null;
  /** The memories' vector dimension (questionVector's length; ≤ 0 with no vector). */
  dim: number;
  /** RAGFlow `similarity_threshold` (default 0.2), applied to `similarity`. */
  threshold: number;
  /** RAGFlow `keywords_similarity_weight` (default 0.7): the weight of the VECTOR side, in [0, 1]. */
  vectorWeight: number;
  topN: number;
  /** Filters; undefined or '' = any. */
  agentId?: string;
  sessionId?: string;
  userId?: string;
}

export interface MemoryHit {
  /** memory_message.id (RAGFlow's message_id) */
  id: number;
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
}

/**
 * Candidates taken from each side: max(64, 4·topN). Deep enough that a message good on the
 * fused score but only average on each side is still seen (RAGFlow's smallest chunk window is
 * 30); each candidate costs one cosine and, for vector-only candidates, one re-analysis.
 */
export function candidatesPerSide(topN: number): number {
  return Math.max(64, 4 * topN);
}

interface Cand {
  id: number;
  vsim: number;
  tsim: number;
  sim: number;
}

export async function searchMemoryMessages(reader: SearchReader, req: MemorySearchRequest): Promise<MemoryHit[]> {
  const topN = Math.floor(req.topN);
  const memoryIds = [...new Set(req.memoryIds)];
  if (!(topN > 0) || memoryIds.length === 0) return [];
  // The text side reads the store's engine (and, without an index, checks rows there): a store
  // without one fails here, before any work, with fulltext.ts' error.
  const engine = fts(reader);
  const w = Math.min(1, Math.max(0, Number.isFinite(req.vectorWeight) ? req.vectorWeight : 0.7));
  const dim = req.dim > 0 ? req.dim : (req.questionVector?.length ?? 0);
  const qv = req.questionVector && req.questionVector.length ? unit(req.questionVector) : null;
  if (qv && qv.length !== dim) throw new RangeError(`The question vector has ${qv.length} dimensions, the memories ${dim}`);
  const tags: Record<string, string> = {};
  if (req.agentId) tags.agent_id = req.agentId;
  if (req.sessionId) tags.session_id = req.sessionId;
  if (req.userId) tags.user_id = req.userId;
  const filter: VectorFilter = { datasets: memoryIds, tags };
  const k = candidatesPerSide(topN);

  // The index decides what may be found (partition, searchable, tags), for both sides. Without a
  // dimension there is no index to ask: the rows are checked in the store.
  const ix: DimIndex | undefined = dim > 0 ? await memoryVectorIndex(reader, dim) : undefined;
  await reader.syncFullText?.('memory_fts');
  const accept = ix ? ix.matcher(filter) : storeMatcher(engine, memoryIds, tags);

  const cands = new Map<number, Cand>();
  const add = (id: number): Cand => {
    let c = cands.get(id);
    if (!c) cands.set(id, (c = { id, vsim: 0, tsim: 0, sim: 0 }));
    return c;
  };
  if (ix && qv) for (const h of ix.search(qv, k, filter)) add(h.rowid);
  // Selective: a tag filter, or memories holding under half of the messages (memory_fts is shared by all memories).
  const selective = Object.keys(tags).length > 0 || !ix || ix.shareOf(memoryIds) < 0.5;
  const text = textSide(reader, textQuery(reader, req.question, { table: 'memory_fts', lang: 'v2' }), k, accept, { selective });
  for (const [id, ts] of text.top) add(id).tsim = ts;
  const vectorOnly = [...cands.values()].filter((c) => c.tsim === 0).map((c) => c.id);
  for (const [id, ts] of text.scoresOf(vectorOnly)) cands.get(id)!.tsim = ts;

  const out: Cand[] = [];
  for (const c of cands.values()) {
    c.vsim = ix && qv ? Math.max(0, Math.min(1, ix.cosine(qv, c.id) ?? 0)) : 0;
    c.sim = w * c.vsim + (1 - w) * c.tsim;
    if (c.sim >= req.threshold) out.push(c);
  }
  out.sort((a, b) => b.sim - a.sim || b.tsim - a.tsim || b.id - a.id);
  return out.slice(0, topN).map((c) => ({ id: c.id, similarity: c.sim, vector_similarity: c.vsim, term_similarity: c.tsim }));
}

/** accept() without an index: the message row read by id (a searchable one: enabled, not forgotten). */
function storeMatcher(f: FullTextEngine, memoryIds: string[], tags: Record<string, string>): (id: number) => boolean {
  const mems = new Set(memoryIds);
  return (id) => {
    const r = f.messageFilter(id) as Record<string, string> | undefined;
    if (!r || !mems.has(r.memory_id!)) return false;
    for (const [col, v] of Object.entries(tags)) if (r[col] !== v) return false;
    return true;
  };
}

/** `v` itself when unit length (embedders normalise), else a normalised copy. */
function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (n === 0 || Math.abs(n - 1) < 1e-4) return v;
  const inv = 1 / Math.sqrt(n);
  return Float32Array.from(v, (x) => x * inv);
}

/**
 * Retrieval quality through the public API (`client.retrieve`).
 *
 *   npx tsx bench/quality.ts [--docs docs/benchmarks.md] [--json out.json] [--model name@factory]
 *       every collection in ../shared/datasets (Cranfield, NPL, ADI): each record one document
 *       (`chunk_method: 'one'`), every judged query with similarity_threshold 0 and page_size 100;
 *       one table (nDCG@10, recall@100, MAP per collection and the mean) for each configuration,
 *       and a paired comparison of each configuration against text-only (bench/multi-quality.ts).
 *   npx tsx bench/quality.ts --scoring [--json out.json]
 *       the same over the default's scoring candidates (SCORING_CONFIGS in bench/multi-quality.ts).
 *   npx tsx bench/quality.ts --cranfield [--json out.json] [--model name@factory] [--quick]
 *       the Cranfield detail below (feedback settings, candidates per side).
 *
 * Cranfield detail:
 * Loads the 1,398 non-empty abstracts once into bench/.cache/ (one document per abstract, named
 * after its title; one chunk each via addChunk; the default embedding model unless --model),
 * then runs the 225 queries under several configurations and prints nDCG@10, recall@100 and MAP
 * (graded gain 5−code, binary relevance for codes 1..4, `-1` not relevant, and nDCG@10 on the odd and even
 * query ids apart, to show a gain holds on both halves; see
 * shared/datasets/cranfield/README.md). Ranking metrics use similarity_threshold 0 and the
 * returned list only (page_size 100; MAP over those 100). The "default" row is the call with
 * every default (threshold 0.2, page_size 30, w 0.3, top_k 1024).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadCranfield, ndcgAt, recallAt, averagePrecision, Bm25, topK, type Cranfield } from './lib/cranfield.js';
import { openCranDb, type CranDb } from './lib/cran-db.js';
import type { RetrievalOptions, RetrieveParams } from '../src/index.js';
import { OptionClients } from './lib/option-clients.js';
import { upsertSection } from './lib/report.js';

const { values: args } = parseArgs({ options: { json: { type: 'string' }, model: { type: 'string' }, quick: { type: 'boolean' }, docs: { type: 'string' }, cranfield: { type: 'boolean' }, scoring: { type: 'boolean' } } });

interface Row { config: string; w: number | null; ndcg10: number; recall100: number; map: number; p50ms: number; queries: number; ndcg10Odd: number; ndcg10Even: number }

const relevant = (code: number | undefined) => code !== undefined && code >= 1 && code <= 4;

function metrics(c: Cranfield, ranked: Map<number, number[]>): { ndcg10: number; recall100: number; map: number; queries: number; ndcg10Odd: number; ndcg10Even: number } {
  let n = 0, ndcg = 0, rec = 0, map = 0;
  const half = [[0, 0], [0, 0]];
  for (const q of c.queries) {
    const judged = c.qrels.get(q.id);
    if (!judged || ![...judged.values()].some(relevant)) continue;
    const r = ranked.get(q.id) ?? [];
    n++;
    const nd = ndcgAt(r, judged, 10);
    ndcg += nd;
    half[q.id % 2]![0]! += nd;
    half[q.id % 2]![1]!++;
    rec += recallAt(r, judged, 100);
    map += averagePrecision(r, judged);
  }
  return { ndcg10: ndcg / n, recall100: rec / n, map: map / n, queries: n, ndcg10Odd: half[1]![0]! / half[1]![1]!, ndcg10Even: half[0]![0]! / half[0]![1]! };
}

/** A Client per ranking setting over the Cranfield file (settings are per Client: `new Client({ retrieval })`). */
const clientsOf = new Map<CranDb, OptionClients>();

async function run(c: Cranfield, db: CranDb, config: string, params: Omit<RetrieveParams, 'dataset_ids' | 'question'>, opts: Partial<RetrievalOptions> = {}): Promise<Row> {
  if (!clientsOf.has(db)) clientsOf.set(db, new OptionClients(db.client, db.clientOptions));
  const client = clientsOf.get(db)!.get(opts);
  const ranked = new Map<number, number[]>();
  const times: number[] = [];
  for (const q of c.queries) {
    const t0 = performance.now();
    const chunks = await client.retrieve({ dataset_ids: [db.dataset.id], question: q.text, ...params });
    times.push(performance.now() - t0);
    ranked.set(q.id, chunks.map((ch) => db.docOf.get(ch.document_id)!).filter((x) => x !== undefined));
  }
  times.sort((a, b) => a - b);
  const w = typeof params.vector_similarity_weight === 'number' ? params.vector_similarity_weight : 0.3;
  return { config, w, ...metrics(c, ranked), p50ms: times[Math.floor(times.length / 2)]! };
}

function plainBm25(c: Cranfield): Row {
  const bm = new Bm25(c.docs.map((d) => d.text));
  const ranked = new Map<number, number[]>();
  for (const q of c.queries) ranked.set(q.id, topK(bm.scores(q.text), 100).map((i) => c.docs[i]!.id));
  return { config: 'reference plain BM25 (bench/lib/cranfield.ts: k1 1.2, b 0.75, Porter2, stop words; not ragloom)', w: null, ...metrics(c, ranked), p50ms: NaN };
}

if (!args.cranfield) {
  const { runMultiCollection, SCORING_CONFIGS } = await import('./multi-quality.js');
  await runMultiCollection({ model: args.model, docs: args.scoring ? undefined : args.docs, json: args.json, ...(args.scoring ? { configs: SCORING_CONFIGS } : {}) });
} else await cranfieldDetail();

async function cranfieldDetail(): Promise<void> {
  const c = loadCranfield();
  if (!c) {
    console.error('Cranfield not found: set RAGLOOM_CRANFIELD or put shared/datasets/cranfield beside the repo');
    process.exit(1);
  }
  const t0 = performance.now();
  const db = await openCranDb(c, { model: args.model, log: (s) => process.stderr.write(`${s}\n`) });
  process.stderr.write(`loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  
  const rank = { page_size: 100, similarity_threshold: 0 };
  const noVecFb = { feedbackDocs: 0 };
  const noTermFb = { termFeedbackDocs: 0 };
  const rows: Row[] = [plainBm25(c)];
  rows.push(await run(c, db, 'ragloom BM25 only (w = 0), no feedback', { ...rank, vector_similarity_weight: 0 }, noTermFb));
  rows.push(await run(c, db, 'ragloom BM25 only (w = 0), term feedback (default)', { ...rank, vector_similarity_weight: 0 }));
  rows.push(await run(c, db, 'ragloom vector only (w = 1), no feedback', { ...rank, vector_similarity_weight: 1 }, noVecFb));
  rows.push(await run(c, db, 'ragloom vector only (w = 1), vector feedback (default)', { ...rank, vector_similarity_weight: 1 }));
  for (const w of args.quick ? [0.3] : [0.1, 0.2, 0.3, 0.4, 0.5, 0.7]) {
    rows.push(await run(c, db, `hybrid w = ${w}, no feedback`, { ...rank, vector_similarity_weight: w }, { ...noVecFb, ...noTermFb }));
    rows.push(await run(c, db, `hybrid w = ${w}, vector feedback only`, { ...rank, vector_similarity_weight: w }, noTermFb));
    rows.push(await run(c, db, `hybrid w = ${w}, vector + term feedback (default)`, { ...rank, vector_similarity_weight: w }));
  }
  rows.push(await run(c, db, 'DEFAULT call (no weight given: w 0.3 with vector agreement; threshold 0.2, page_size 30, top_k 1024)', {}));
  
  // Term feedback (RM3) settings around the defaults (10 docs, 10 terms, question weight 0.7, depth 30; Anserini's weight is 0.5).
  const rm3: Row[] = [];
  const w3 = { ...rank, vector_similarity_weight: 0.3 };
  if (!args.quick) {
    rm3.push(await run(c, db, 'no term feedback', w3, noTermFb));
    rm3.push(await run(c, db, 'default (10 docs, 10 terms, question weight 0.7, depth 30)', w3));
    rm3.push(await run(c, db, 're-score the whole window (depth 100)', w3, { termFeedbackDepth: 0 }));
    rm3.push(await run(c, db, 'depth 64', w3, { termFeedbackDepth: 64 }));
    rm3.push(await run(c, db, 'depth 20', w3, { termFeedbackDepth: 20 }));
    rm3.push(await run(c, db, '5 feedback docs', w3, { termFeedbackDocs: 5 }));
    rm3.push(await run(c, db, '20 feedback docs', w3, { termFeedbackDocs: 20 }));
    rm3.push(await run(c, db, '5 expansion terms', w3, { termFeedbackTerms: 5 }));
    rm3.push(await run(c, db, '20 expansion terms', w3, { termFeedbackTerms: 20 }));
    rm3.push(await run(c, db, 'question weight 0.3', w3, { termFeedbackQueryWeight: 0.3 }));
    rm3.push(await run(c, db, "question weight 0.5 (Anserini's)", w3, { termFeedbackQueryWeight: 0.5 }));
  }
  // Candidates per side: n = min(top_k, window); page_size 10 → window 70.
  const cand: Row[] = [];
  for (const k of args.quick ? [10, 70] : [10, 20, 40, 70]) {
    cand.push(await run(c, db, `top_k ${k}, page_size 10 (≤ ${k} candidates per side)`, { page_size: 10, similarity_threshold: 0, top_k: k }));
  }
  for (const k of args.quick ? [100] : [30, 100]) {
    cand.push(await run(c, db, `top_k ${k}, page_size 100 (≤ ${k} candidates per side)`, { page_size: 100, similarity_threshold: 0, top_k: k }));
  }
  await clientsOf.get(db)?.close();
  await db.client.close();
  
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : '—');
  const table = (rs: Row[]) => [
    '| configuration | nDCG@10 | recall@100 | MAP | nDCG@10 odd / even query ids | p50 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...rs.map((r) => `| ${r.config} | ${f(r.ndcg10)} | ${f(r.recall100)} | ${f(r.map)} | ${f(r.ndcg10Odd)} / ${f(r.ndcg10Even)} | ${Number.isFinite(r.p50ms) ? r.p50ms.toFixed(1) : '—'} |`),
  ].join('\n');
  const out = { dataset: 'cranfield', queries: rows[0]!.queries, model: db.dataset.embedding_model, rows, candidates: cand, termFeedback: rm3 };
  console.log(JSON.stringify(out, null, 2));
  console.log(`\n${table(rows)}\n\nCandidates per side (hybrid default):\n\n${table(cand)}\n\nTerm feedback settings (hybrid w 0.3):\n\n${table(rm3)}`);
  if (args.json) writeFileSync(args.json, JSON.stringify(out, null, 2));
  if (args.docs) {
    upsertSection(args.docs, 'Retrieval quality', [
      `Measured ${new Date().toISOString().slice(0, 10)} with \`npx tsx bench/quality.ts --cranfield --docs docs/benchmarks.md\` on Cranfield (1,398 non-empty abstracts,`,
      `${out.queries} queries with a relevant document), through \`client.retrieve\`, embedding model \`${out.model}\`.`,
      'One document per abstract, named after its title; one chunk each. Graded nDCG@10 (gain 5 − code), binary recall@100 and MAP',
      '(codes 1–4 relevant, `-1` not). Ranking rows use similarity_threshold 0 and page_size 100 (MAP over the 100 returned);',
      'the DEFAULT row is a call with every default (its recall@100 is capped by page_size 30). p50 includes embedding the question.',
      'Summary: [docs/retrieval.md#performance](retrieval.md#performance).',
      '',
      table(rows),
      '',
      'Candidates per side (n = min(top_k, result window)); hybrid defaults otherwise:',
      '',
      table(cand),
      '',
      'Term feedback (RM3) settings around the defaults, hybrid w 0.3 (the defaults are Anserini\'s RM3 defaults, chosen before',
      'measuring; the odd/even columns show the gain holds on both halves of the queries):',
      '',
      table(rm3),
    ].join('\n'));
  }
}

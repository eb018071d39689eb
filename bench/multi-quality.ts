/**
 * Retrieval quality on every collection in ../shared/datasets, through `client.retrieve`, the way
 * a user would measure it: each record one document (`chunk_method: 'one'`), every judged query
 * with similarity_threshold 0 and page_size 100. One table of nDCG@10 / recall@100 / MAP per
 * collection and the mean over collections (defaults are decided on the mean, never on one
 * collection), and a paired comparison of each configuration against text-only, query by query.
 * Run through `npx tsx bench/quality.ts` (see there).
 */
import { writeFileSync } from 'node:fs';
import { loadCollections, ndcg, recall, averagePrecision, judgedQueries, type Collection } from './lib/collections.js';
import { openCollectionDb, type CollectionDb } from './lib/collection-db.js';
import type { RetrievalOptions, RetrieveParams } from '../src/index.js';
import { OptionClients } from './lib/option-clients.js';
import { upsertSection } from './lib/report.js';

export interface Config {
  name: string;
  /** `client.retrieve` parameters beyond the ranking defaults below. */
  params?: Omit<RetrieveParams, 'dataset_ids' | 'question'>;
  /** Ranking settings for this configuration: the Client that runs it is opened with `{ retrieval: options }`. */
  options?: Partial<RetrievalOptions>;
}

export interface Scores { ndcg10: number; recall100: number; map: number; perQuery: number[]; p50ms: number }

const RANK = { page_size: 100, similarity_threshold: 0 };

/** Clients per ranking setting over each collection's cached file (closed by {@link closeOptionClients}). */
const clientsOf = new Map<CollectionDb, OptionClients>();

/** The Client ranking with `options` over `db`'s file: one per distinct settings, reused. */
function clientFor(db: CollectionDb, options: Partial<RetrievalOptions> = {}) {
  if (!clientsOf.has(db)) clientsOf.set(db, new OptionClients(db.client, db.clientOptions));
  return clientsOf.get(db)!.get(options);
}

/** Closes the Clients {@link evaluate} opened over `db` (not `db.client`). */
export async function closeOptionClients(db: CollectionDb): Promise<void> {
  await clientsOf.get(db)?.close();
  clientsOf.delete(db);
}

/** Runs one configuration over one loaded collection, with a Client opened with the configuration's ranking settings. */
export async function evaluate(c: Collection, db: CollectionDb, cfg: Config): Promise<Scores> {
  const client = clientFor(db, cfg.options);
  const perQuery: number[] = [];
  let rec = 0;
  let map = 0;
  const times: number[] = [];
  for (const q of judgedQueries(c)) {
    const t0 = performance.now();
    const chunks = await client.retrieve({ dataset_ids: [db.dataset.id], question: q.text, ...RANK, ...cfg.params });
    times.push(performance.now() - t0);
    const ranked = chunks.map((ch) => db.recordOf.get(ch.document_id)!).filter((x) => x !== undefined);
    const judged = c.qrels.get(q.id)!;
    perQuery.push(ndcg(ranked, judged, 10));
    rec += recall(ranked, judged, 100);
    map += averagePrecision(ranked, judged);
  }
  const n = perQuery.length;
  times.sort((a, b) => a - b);
  return { ndcg10: perQuery.reduce((a, b) => a + b, 0) / n, recall100: rec / n, map: map / n, perQuery, p50ms: times[Math.floor(n / 2)]! };
}

export const TEXT_ONLY: Config = { name: 'text only (w 0), no feedback', params: { vector_similarity_weight: 0 }, options: { termFeedbackDocs: 0, feedbackDocs: 0 } };

export const CONFIGS: Config[] = [
  TEXT_ONLY,
  { name: 'text only (w 0) + RM3', params: { vector_similarity_weight: 0 }, options: { feedbackDocs: 0 } },
  { name: 'vector only (w 1), no feedback', params: { vector_similarity_weight: 1 }, options: { termFeedbackDocs: 0, feedbackDocs: 0 } },
  ...[0.1, 0.2, 0.3, 0.5].map((w) => ({ name: `hybrid w ${w}, no feedback`, params: { vector_similarity_weight: w }, options: { termFeedbackDocs: 0, feedbackDocs: 0 } })),
  { name: 'previous default (w 0.3, Rocchio + RM3, no vector agreement)', params: {}, options: { vectorAgreement: false } },
  { name: 'DEFAULT ranking (no weight given)', params: {} },
];

const NO_FEEDBACK = { termFeedbackDocs: 0, feedbackDocs: 0 };

/**
 * The default's scoring candidates (issue 18), each a Client setting over the defaults and a call
 * with no weight (`npx tsx bench/quality.ts --scoring`): the vector agreement on and off, its
 * depth, feedback scaled by it, other default weights, and plain fixed weights for comparison.
 */
export const SCORING_CONFIGS: Config[] = [
  TEXT_ONLY,
  { name: 'text only (w 0) + RM3', params: { vector_similarity_weight: 0 }, options: { feedbackDocs: 0 } },
  { name: 'hybrid w 0.2, no feedback', params: { vector_similarity_weight: 0.2 }, options: NO_FEEDBACK },
  { name: 'no weight, no agreement (previous default)', params: {}, options: { vectorAgreement: false } },
  { name: 'no weight, no agreement, w 0.2', params: {}, options: { vectorAgreement: false, defaultWeight: 0.2 } },
  { name: 'no weight, no agreement, w 0.2, Rocchio 10 docs', params: {}, options: { vectorAgreement: false, defaultWeight: 0.2, feedbackDocs: 10 } },
  { name: 'vector agreement, no feedback', params: {}, options: NO_FEEDBACK },
  { name: 'vector agreement (DEFAULT)', params: {} },
  { name: 'vector agreement, depth 30', params: {}, options: { agreementDepth: 30 } },
  { name: 'vector agreement, Rocchio 10 docs', params: {}, options: { feedbackDocs: 10 } },
  { name: 'vector agreement + agreement-scaled feedback', params: {}, options: { agreementFeedback: true } },
  { name: 'vector agreement, w 0.4', params: {}, options: { defaultWeight: 0.4 } },
  { name: 'vector agreement, w 0.5', params: {}, options: { defaultWeight: 0.5 } },
];

/** Query-by-query comparison of `b` against `a` (same collection): mean difference, wins, losses. */
export function paired(a: number[], b: number[]): { delta: number; wins: number; losses: number } {
  let wins = 0;
  let losses = 0;
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    const x = b[i]! - a[i]!;
    d += x;
    if (x > 1e-9) wins++;
    else if (x < -1e-9) losses++;
  }
  return { delta: d / a.length, wins, losses };
}

export async function runMultiCollection(o: { model?: string; docs?: string; json?: string; configs?: Config[] } = {}): Promise<void> {
  const cols = loadCollections();
  if (!cols.length) {
    console.error('No collection found: put shared/datasets beside the repo (or set RAGLOOM_DATASETS)');
    process.exit(1);
  }
  const dbs = new Map<string, CollectionDb>();
  for (const c of cols) dbs.set(c.name, await openCollectionDb(c, { model: o.model, log: (s) => process.stderr.write(`${s}\n`) }));
  const configs = o.configs ?? CONFIGS;
  const results = new Map<string, Map<string, Scores>>();
  for (const cfg of configs) {
    const byCol = new Map<string, Scores>();
    for (const c of cols) byCol.set(c.name, await evaluate(c, dbs.get(c.name)!, cfg));
    results.set(cfg.name, byCol);
    const line = { config: cfg.name, ...Object.fromEntries([...byCol].map(([k, v]) => [k, { ndcg10: +v.ndcg10.toFixed(4), recall100: +v.recall100.toFixed(4), map: +v.map.toFixed(4), p50ms: +v.p50ms.toFixed(2) }])) };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  for (const db of dbs.values()) {
    await closeOptionClients(db);
    await db.client.close();
  }

  const f = (x: number) => x.toFixed(3);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const header = `| configuration | ${cols.map((c) => `${c.name} nDCG@10 / R@100 / MAP`).join(' | ')} | mean nDCG@10 | mean R@100 | mean MAP |`;
  const rows = [...results].map(([name, byCol]) => {
    const s = cols.map((c) => byCol.get(c.name)!);
    return `| ${name} | ${s.map((x) => `${f(x.ndcg10)} / ${f(x.recall100)} / ${f(x.map)}`).join(' | ')} | **${f(mean(s.map((x) => x.ndcg10)))}** | ${f(mean(s.map((x) => x.recall100)))} | ${f(mean(s.map((x) => x.map)))} |`;
  });
  const table = [header, `|---|${cols.map(() => '---:').join('|')}|---:|---:|---:|`, ...rows].join('\n');
  const base = results.get(TEXT_ONLY.name);
  const pairedRows = base
    ? [...results].filter(([name]) => name !== TEXT_ONLY.name).map(([name, byCol]) => `| ${name} | ${cols.map((c) => {
      const p = paired(base.get(c.name)!.perQuery, byCol.get(c.name)!.perQuery);
      return `${p.delta >= 0 ? '+' : ''}${p.delta.toFixed(3)} (${p.wins}↑ ${p.losses}↓)`;
    }).join(' | ')} |`)
    : [];
  const pairedTable = [`| against text only (nDCG@10 Δ, queries better ↑ / worse ↓) | ${cols.map((c) => `${c.name} (${judgedQueries(c).length} q)`).join(' | ')} |`, `|---|${cols.map(() => '---:').join('|')}|`, ...pairedRows].join('\n');
  console.log(`\n${table}\n\n${pairedTable}\n`);
  if (o.json) writeFileSync(o.json, JSON.stringify(Object.fromEntries([...results].map(([k, v]) => [k, Object.fromEntries([...v].map(([c, s]) => [c, { ...s, perQuery: undefined }]))])), null, 2));
  if (o.docs) {
    upsertSection(o.docs, 'Retrieval quality on every collection', [
      `Measured ${new Date().toISOString().slice(0, 10)} with \`npx tsx bench/quality.ts --docs docs/benchmarks.md\`: ${cols.map((c) => `${c.name} (${c.docs.filter((d) => d.text.trim()).length.toLocaleString('en')} records, ${judgedQueries(c).length} judged queries)`).join(', ')};`,
      'each record one document (`chunk_method: \'one\'`), every judged query through `client.retrieve` with similarity_threshold 0 and page_size 100.',
      'nDCG@10 (Cranfield graded 5 − code, the others binary), recall@100, MAP over the 100 returned. Defaults are decided on the mean.',
      '',
      table,
      '',
      'Paired, query by query, against text only without feedback:',
      '',
      pairedTable,
    ].join('\n'));
  }
}

/**
 * One sha256 per collection over every whole retrieval response, to show that a change leaves
 * English results unchanged to the last digit (every chunk, field and score of every page).
 *
 *   RAGLOOM_DATASETS=../shared/datasets npx tsx bench/response-hash.ts [--only npl]
 *
 * Each collection of ../shared/datasets loads as bench/quality.ts loads it (one document per
 * record, `chunk_method: 'one'`, cached in bench/.cache); every judged query is asked with the
 * default call, text only (w 0) and w 0.3 (page_size 100, threshold 0), and with RAGFlow's
 * defaults (page_size 30, threshold 0.2, highlight). Ids and times are left out (each chunk is
 * named by its record); the order, content, scores, content_ltks, highlight and every other field
 * stay. Compare two trees on the same files: two loads of a collection number the rows in the
 * order parsing finished, and equal scores are ordered by rowid. So load the collections with
 * the older tree, copy its bench/.cache/*.db into the newer tree's (which upgrades them when it
 * opens them, and re-indexes in the background first), and run this in both.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadCollections, judgedQueries } from './lib/collections.js';
import { openCollectionDb } from './lib/collection-db.js';

const { values: args } = parseArgs({ options: { only: { type: 'string' } } });
const CALLS: Array<[string, Record<string, unknown>]> = [
  ['default', { page_size: 100, similarity_threshold: 0 }],
  ['text only', { page_size: 100, similarity_threshold: 0, vector_similarity_weight: 0 }],
  ['w 0.3', { page_size: 100, similarity_threshold: 0, vector_similarity_weight: 0.3 }],
  ['RAGFlow defaults + highlight', { highlight: true }],
];
const VOLATILE = new Set(['id', 'document_id', 'dataset_id', 'kb_id', 'create_time', 'create_timestamp', 'row_id', 'image_id']);

for (const c of loadCollections(args.only ? args.only.split(',') : undefined)) {
  const db = await openCollectionDb(c, { log: (s) => process.stderr.write(`${s}\n`) });
  // A background re-index (a store of an older analyzer) first, when this tree has one.
  const core = await import('../src/core/index.js' as string).catch(() => null) as null | { fullTextReindex?: (e: unknown) => { idle(): Promise<void> } };
  const api = (db.client as unknown as { api?: { engine: unknown } }).api;
  if (api && core?.fullTextReindex) await core.fullTextReindex(api.engine).idle();
  const queries = judgedQueries(c);
  const all = createHash('sha256');
  let n = 0;
  for (const [name, params] of CALLS) {
    const h = createHash('sha256');
    for (const q of queries) {
      const chunks = await db.client.retrieve({ dataset_ids: [db.dataset.id], question: q.text, ...params });
      const rows = chunks.map((ch) => Object.fromEntries(Object.entries(ch as unknown as Record<string, unknown>)
        .filter(([k, v]) => !VOLATILE.has(k) && typeof v !== 'function')));
      const line = JSON.stringify({ q: q.id, rows: rows.map((r, i) => ({ record: db.recordOf.get((chunks[i] as unknown as { document_id: string }).document_id), ...r })) });
      h.update(line);
      all.update(line);
      n++;
    }
    console.log(`${c.name} ${name}: ${queries.length} responses ${h.digest('hex').slice(0, 16)}`);
  }
  console.log(`${c.name} all: ${n} responses ${all.digest('hex').slice(0, 16)}`);
  await db.client.close();
}

/**
 * One sha256 over whole ranked responses (totals, every field of every chunk in order, the
 * document aggregates), to show that a change leaves retrieval exactly as it was: run it on the
 * build before and the build after, on the same database files, and compare the hashes.
 *
 * - NPL (../shared/datasets/npl, 11,429 records, one chunk each): its 93 queries × 4 parameter
 *   sets = 372 responses.
 * - A synthetic store of `--size` chunks (default 100,000: bench/lib/chunks.ts passages, 1,000 a
 *   document, one per line, as bench/server.ts ingests them): 150 six-word spans of random
 *   passages × 3 parameter sets = 450 responses.
 *
 * The databases are built through the public API when their files are missing (in bench/.cache,
 * or RAGLOOM_BENCH_CACHE: point two checkouts at one folder so both read the same files) and
 * only read afterwards.
 *
 *   RAGLOOM_BENCH_CACHE=/tmp/rh npx tsx bench/retrieval-hash.ts [--size 100000] [--only npl|synthetic]
 *
 * Prints JSON ({set: {responses, sha256}}) and a table.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '../src/index.js';
import { npl } from './lib/collections.js';
import { openCollectionDb } from './lib/collection-db.js';
import { syntheticChunks } from './lib/chunks.js';
import { CACHE_DIR } from './lib/cran-db.js';

const { values: args } = parseArgs({
  options: {
    synthetic: { type: 'string' },
    size: { type: 'string', default: '100000' },
    only: { type: 'string' },
  },
});

type Params = Parameters<Client['retrieveWithTotals']>[0];
const enc = (s: string) => new TextEncoder().encode(s);

/** Hashes the responses to `questions × sets`, in that order. */
async function hashOf(client: Client, datasetId: string, questions: string[], sets: Array<Omit<Params, 'dataset_ids' | 'question'>>): Promise<{ responses: number; sha256: string }> {
  const h = createHash('sha256');
  let n = 0;
  for (const q of questions) {
    for (const s of sets) {
      const r = await client.retrieveWithTotals({ dataset_ids: [datasetId], question: q, ...s });
      h.update(JSON.stringify(r));
      h.update('\n');
      n++;
    }
  }
  return { responses: n, sha256: h.digest('hex') };
}

async function nplHash() {
  const c = npl();
  if (!c) throw new Error('NPL not found (../shared/datasets/npl)');
  const db = await openCollectionDb(c, { log: (s) => process.stderr.write(`${s}\n`) });
  try {
    return await hashOf(db.client, db.dataset.id, c.queries.map((q) => q.text), [
      {},
      { vector_similarity_weight: 0, similarity_threshold: 0, page_size: 30 },
      { vector_similarity_weight: 0.7, similarity_threshold: 0, page_size: 100 },
      { page: 2, page_size: 10, top_k: 200 },
    ]);
  } finally {
    await db.client.close();
  }
}

async function syntheticHash() {
  const size = Number(args.size);
  const path = args.synthetic ?? join(CACHE_DIR, `response-hash-synthetic-${size}.db`);
  const texts = syntheticChunks(size);
  const fresh = !existsSync(path);
  if (fresh) mkdirSync(dirname(path), { recursive: true });
  const client = new Client({ path });
  try {
    let [ds] = await client.listDatasets({ name: `hash-${size}` }).catch(() => []);
    if (!ds) {
      const t0 = performance.now();
      ds = await client.createDataset({ name: `hash-${size}`, chunk_method: 'naive', parser_config: { chunk_token_num: 64, delimiter: '\n' } });
      for (let i = 0; i < texts.length; i += 10_000) {
        const files = [];
        for (let j = i; j < Math.min(texts.length, i + 10_000); j += 1000) files.push({ display_name: `doc-${j / 1000}.txt`, blob: enc(texts.slice(j, j + 1000).join('\n')) });
        const docs = await ds.uploadDocuments(files);
        const status = await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 200 });
        if (status.some(([, run]) => run !== 'DONE')) throw new Error(`parse failed: ${JSON.stringify(status.slice(0, 3))}`);
        process.stderr.write(`synthetic: ${Math.min(texts.length, i + 10_000)}/${size} chunks (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
      }
    }
    let seed = 7;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const questions = Array.from({ length: 150 }, () => {
      const words = texts[Math.floor(rnd() * texts.length)]!.split(' ');
      const at = Math.floor(rnd() * (words.length - 6));
      return words.slice(at, at + 6).join(' ').replace(/[.,]/g, '');
    });
    return await hashOf(client, ds.id, questions, [
      {},
      { vector_similarity_weight: 0.3, similarity_threshold: 0.2, page_size: 30, top_k: 1024 },
      { vector_similarity_weight: 0, similarity_threshold: 0, page_size: 50 },
    ]);
  } finally {
    await client.close();
  }
}

const out: Record<string, { responses: number; sha256: string }> = {};
if (args.only !== 'synthetic') out.npl = await nplHash();
if (args.only !== 'npl') out[`synthetic-${args.size}`] = await syntheticHash();
process.stdout.write(`${JSON.stringify(out)}\n`);
for (const [k, v] of Object.entries(out)) process.stdout.write(`${k.padEnd(18)} ${String(v.responses).padStart(5)} responses  ${v.sha256}\n`);

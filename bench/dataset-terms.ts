/**
 * Search p50 with the whole store's term index (no memory budget) against each dataset's term
 * index (under a budget, read as one by src/search/dataset-terms.ts), back to back in one process
 * on one SQLite store of 4 datasets × N seeded 12-word chunks, over one and two datasets; also
 * whether every response is identical, and the term indexes' bytes per chunk.
 *
 *   N=25000 npx tsx bench/dataset-terms.ts      # prints JSON lines, then a table
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../src/api/index.js';
import { formatTable } from '../src/cli/table.js';
import { indexMemoryStats, setIndexMemory, termIndex, termIndexBytes } from '../src/search/index.js';
import { addChunks, WORDS } from '../test/support/seeded-chunks.js';

const N = Number(process.env.N ?? 5000);
const dir = mkdtempSync(join(tmpdir(), 'h30h-'));
const path = join(dir, 'kb.db');
const w = new Api({ path });
const ids: string[] = [];
for (let i = 0; i < 4; i++) {
  const ds = (await w.call('datasets.create', { name: `d${i}` })) as { id: string };
  for (let k = 0; k < N; k += 1000) await addChunks(w, ds.id, `d${i}-${k}.txt`, Math.min(1000, N - k), i * 1000 + k + 1);
  ids.push(ds.id);
}
const whole = new Api({ path });
const per = new Api({ path });
setIndexMemory(per.engine.store.search, 2 ** 40);
await termIndex(whole.engine.store.search);
let s = 7;
const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
const qs = Array.from({ length: 300 }, () => Array.from({ length: 4 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ') + ` ${Math.floor(rnd() * 37)}`);
const ask = (api: Api, q: string, d: string[]) => api.call('retrieval', { question: q, dataset_ids: d, similarity_threshold: 0, top_k: 100, page_size: 10 });
for (const d of [[ids[0]!], [ids[0]!, ids[1]!]]) {
  await ask(whole, 'wing', d); // loads
  await ask(per, 'wing', d);
}
const p50 = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const rows: string[][] = [];
for (const d of [[ids[0]!], [ids[0]!, ids[1]!]]) {
  const tw: number[] = [], tp: number[] = [];
  let same = 0;
  for (const q of qs) {
    let t = performance.now();
    const a = await ask(whole, q, d);
    tw.push(performance.now() - t);
    t = performance.now();
    const b = await ask(per, q, d);
    tp.push(performance.now() - t);
    if (JSON.stringify(a) === JSON.stringify(b)) same++;
  }
  const r = { datasets: d.length, chunksPerDataset: N, p50WholeMs: +p50(tw).toFixed(2), p50PerDatasetMs: +p50(tp).toFixed(2), identical: `${same}/${qs.length}` };
  console.log(JSON.stringify(r));
  rows.push([String(r.datasets), String(N), String(r.p50WholeMs), String(r.p50PerDatasetMs), r.identical]);
}
const st = indexMemoryStats(per.engine.store.search);
console.log(JSON.stringify({ wholeTermIndexBytesPerChunk: +(termIndexBytes(whole.engine.store.search) / (4 * N)).toFixed(1), perDatasetTermBytesPerChunk: st.terms.map((t) => +(t.bytes / t.rows).toFixed(1)) }));
console.log(formatTable(['datasets searched', 'chunks a dataset', 'p50 ms: store\'s term index', 'p50 ms: per dataset', 'identical responses'], rows));
await whole.close();
await per.close();
await w.close();
rmSync(dir, { recursive: true, force: true });

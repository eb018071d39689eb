/**
 * Resource hygiene of the local Client.
 *
 * 1. A child process does real work (parse in ingest worker threads, built-in embeddings, a chat
 *    answer, an agent run with CodeExec JavaScript in its sandbox thread, a memory message and
 *    its extraction queue, a parse still running at close), calls `client.close()` and must then
 *    exit by itself, at once: exit code 0, nothing left in `process.getActiveResourcesInfo()`,
 *    and as many OS threads as before the Client was made (test/faults/fixtures/hygiene-child.mjs).
 * 2. 1,000 cycles of `new Client({ path })` + listDatasets + close in this process, and 200
 *    failed opens of a file that is not a database: the open file descriptors return to their
 *    baseline and heap / RSS growth stays bounded. The figures are printed; RAGLOOM_WRITE_DOCS=1
 *    writes them to docs/reliability.md (section `## Resource hygiene`).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Client, ApiError } from '../../src/index.js';
import { writeDocs, writeSection } from './fixtures/docs-section.js';

const CHILD = fileURLToPath(new URL('./fixtures/hygiene-child.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MiB = 1024 * 1024;
/** Stated bounds for 1,000 open/close cycles. */
const FD_SLACK = 2;
const HEAP_GROWTH = 8 * MiB;
const RSS_GROWTH = 64 * MiB;
/** How long the child may live after close() resolved. */
const EXIT_MS = 3000;
/** Working cycles (worker threads and models each time) and their heap bound. */
const HEAVY = 6;
const HEAVY_HEAP = 16 * MiB;

let dir: string;
const report: string[] = [];

beforeAll(async () => {
  began = performance.now();
  dir = await mkdtemp(join(tmpdir(), 'ragloom-hygiene-'));
});

let began = 0;
afterAll(async () => {
  console.log(report.join('\n'));
  await rm(dir, { recursive: true, force: true });
  if (writeDocs && report.length === 3) {
    await writeSection('Resource hygiene', `Written by \`test/faults/hygiene.test.ts\` (\`RAGLOOM_WRITE_DOCS=1 npx vitest run test/faults/hygiene.test.ts\`).
Run time ${((performance.now() - began) / 1000).toFixed(0)} s.

**\`close()\` ends everything.** A child process (\`test/faults/fixtures/hygiene-child.mjs\`) parses two
files (ingest worker threads, built-in embeddings), retrieves, asks a chat, runs an agent whose
CodeExec JavaScript runs in its sandbox thread, adds a memory message (the extraction queue and its
timer), starts one more parse and calls \`client.close()\` while it runs. It never calls
\`process.exit\`. Stated bounds: it exits with code 0 within ${EXIT_MS / 1000} s of \`close()\` resolving, nothing is left in
\`process.getActiveResourcesInfo()\` but its own stdout/stderr pipes, and it has as many OS threads as
before the Client was made (every worker thread ended, not merely unref'd — an unref'd worker would
not keep the process alive, so only the thread count shows it).

- ${report[0]}

**1,000 open/close cycles** of \`new Client({ path })\` + \`listDatasets()\` + \`close()\` in one process (after
50 warm-up cycles), then 200 failed opens of a file that is not a database. Stated bounds: open file
descriptors (\`/proc/self/fd\`) back to the baseline ± ${FD_SLACK}; growth over the 1,000 cycles, after a full GC,
under ${HEAP_GROWTH / MiB} MiB of heap and ${RSS_GROWTH / MiB} MiB of RSS.

- ${report[1]}

**${HEAVY} working cycles**: each opens a Client, creates a dataset, uploads and parses a file (ingest
worker threads and the embedding model started and stopped every time), retrieves, adds a memory
message, and closes. Stated bounds: file descriptors and OS threads back to the baseline ± ${FD_SLACK},
heap growth under ${HEAVY_HEAP / MiB} MiB after a full GC.

- ${report[2]}

Leaks found: none in these paths. Two handles a constructor could leave open when it failed after
the file was open were closed (see Bad storage); the 200 failed opens above show that a refused
file leaves nothing open.`);
  }
});

const fds = () => readdirSync('/proc/self/fd').length;
const HAS_PROC = (() => {
  try {
    fds();
    return true;
  } catch {
    return false;
  }
})();

test('after client.close() the process exits by itself, with no thread, timer or handle left', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, join(dir, 'child.db')], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let closedAt = 0;
  child.stdout.on('data', (d: Buffer) => {
    out += d;
    if (!closedAt && out.includes('"closed"')) closedAt = performance.now();
  });
  child.stderr.on('data', (d: Buffer) => (err += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('exit', (c, s) => r([c, s])));
  const exitedAfter = performance.now() - closedAt;
  clearTimeout(killer);
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const main = lines.find((l) => 'closed' in l) as { closed: number; steps: [string, number][]; parsed: string[]; agent: string; hits: number; resources: string[]; baseline?: string[]; threads?: string[] } | undefined;
  expect(main, `child output: ${out}\n${err}`).toBeDefined();
  expect([code, signal]).toEqual([0, null]);
  // It did the work.
  expect(main!.parsed).toEqual(['DONE', 'DONE']);
  expect(main!.hits).toBeGreaterThan(0);
  expect(main!.agent).toBe('sum=5');
  // Nothing keeps it alive (its own stdout / stderr pipes aside), and every worker thread is
  // gone, not merely unref'd.
  expect(main!.resources.filter((r) => r !== 'PipeWrap' && r !== 'TTYWrap')).toEqual([]);
  if (main!.baseline) expect(main!.threads!.length).toBe(main!.baseline.length);
  expect(exitedAfter).toBeLessThan(EXIT_MS);
  report.push(
    `child: work ${main!.closed} ms (${main!.steps.map(([s, ms]) => `${s} ${ms}`).join(', ')}); ` +
    `active resources after close: ${JSON.stringify(main!.resources)}; OS threads before/after: ${main!.baseline?.length}/${main!.threads?.length}; ` +
    `exited ${Math.round(exitedAfter)} ms after close resolved (code ${code})`,
  );
}, 120_000);

test.skipIf(!HAS_PROC)('1,000 open/close cycles and 200 failed opens leak no file descriptors and bounded memory', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const mem = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, rss: m.rss, external: m.external + m.arrayBuffers };
  };
  const path = join(dir, 'cycles.db');
  // Warm up: the schema exists, modules and statements are compiled, caches are full.
  {
    const c = new Client({ path });
    await c.createDataset({ name: 'warm' });
    await c.close();
  }
  for (let i = 0; i < 50; i++) {
    const c = new Client({ path });
    await c.listDatasets();
    await c.close();
  }
  const fd0 = fds();
  const m0 = mem();
  const t0 = performance.now();
  const samples: string[] = [];
  for (let i = 1; i <= 1000; i++) {
    const c = new Client({ path });
    expect((await c.listDatasets()).length).toBe(1);
    await c.close();
    if (i % 250 === 0) {
      const m = mem();
      samples.push(`${i}: fd ${fds() - fd0 >= 0 ? '+' : ''}${fds() - fd0}, heap ${((m.heap - m0.heap) / MiB).toFixed(2)} MiB, RSS ${((m.rss - m0.rss) / MiB).toFixed(1)} MiB`);
    }
  }
  const cycleMs = (performance.now() - t0) / 1000;
  const m1 = mem();
  const fd1 = fds();

  // Failed opens close what they opened.
  const bad = join(dir, 'not-a-db.db');
  writeFileSync(bad, 'not a database\n'.repeat(1000));
  for (let i = 0; i < 200; i++) expect(() => new Client({ path: bad })).toThrow(ApiError);
  await new Promise((r) => setTimeout(r, 50));
  const fd2 = fds();

  report.push(
    `cycles: ${cycleMs.toFixed(2)} ms per open+listDatasets+close; fds baseline ${fd0}, after 1,000 cycles ${fd1}, after 200 failed opens ${fd2}; ` +
    `growth over 1,000 cycles (after gc): heap ${((m1.heap - m0.heap) / MiB).toFixed(2)} MiB, RSS ${((m1.rss - m0.rss) / MiB).toFixed(1)} MiB, external ${((m1.external - m0.external) / MiB).toFixed(2)} MiB; samples ${samples.join('; ')}`,
  );
  expect(Math.abs(fd1 - fd0)).toBeLessThanOrEqual(FD_SLACK);
  expect(Math.abs(fd2 - fd0)).toBeLessThanOrEqual(FD_SLACK);
  expect(m1.heap - m0.heap).toBeLessThan(HEAP_GROWTH);
  expect(m1.rss - m0.rss).toBeLessThan(RSS_GROWTH);
}, 120_000);

test.skipIf(!HAS_PROC)(`${HEAVY} working cycles (upload, parse, retrieve, memory add, close) leave no thread, descriptor or heap behind`, async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const threads = () => readdirSync('/proc/self/task').length;
  const path = join(dir, 'heavy.db');
  const cycle = async (i: number) => {
    const c = new Client({ path });
    const ds = await c.createDataset({ name: `d${i}` });
    const [d] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: Buffer.from(`Log ${i}: the tide comes in twice a day.\n\nThe keeper writes it down.`) }]);
    expect((await ds.parseDocuments([d!.id]))[0]![1]).toBe('DONE');
    expect((await c.retrieve({ dataset_ids: [ds.id], question: 'tide', similarity_threshold: 0 })).length).toBeGreaterThan(0);
    const m = await c.createMemory({ name: `m${i}`, memory_type: ['raw'], embd_id: 'universal-sentence-encoder-lite@Builtin', llm_id: 'ragloom-extractive@Builtin' });
    await c.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'where?', agent_response: 'by the light' });
    await c.close();
  };
  await cycle(-1); // warm-up: modules, models' code, the thread pool
  const fd0 = fds();
  const th0 = threads();
  const h0 = heap();
  const t0 = performance.now();
  for (let i = 1; i <= HEAVY; i++) await cycle(i);
  const ms = (performance.now() - t0) / HEAVY;
  await new Promise((r) => setTimeout(r, 50));
  const fd1 = fds();
  const th1 = threads();
  const h1 = heap();
  report.push(`working cycles: ${(ms / 1000).toFixed(2)} s each; fds ${fd0} → ${fd1}; OS threads ${th0} → ${th1}; heap growth ${((h1 - h0) / MiB).toFixed(2)} MiB`);
  expect(Math.abs(fd1 - fd0)).toBeLessThanOrEqual(FD_SLACK);
  expect(Math.abs(th1 - th0)).toBeLessThanOrEqual(FD_SLACK);
  expect(h1 - h0).toBeLessThan(HEAVY_HEAP);
}, 120_000);

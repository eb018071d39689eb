/**
 * `ragloom serve` on loopback: requests/s and latency (p50 / p95) of
 *   (a) retrieval, `POST /api/v1/retrieval` (the body the RAGFlow SDK's `rag.retrieve()` sends:
 *       page 1, page_size 30, similarity_threshold 0.2, vector_similarity_weight 0.3, top_k 1024);
 *   (b) the native completion, non-streamed, with the built-in model (`ragloom-extractive@Builtin`):
 *       `POST /api/v1/chats/{id}/completions` `{question, stream: false}` (no session_id: each
 *       request opens a new session and stores the exchange, as a one-shot API call does);
 * at 1, 8 and 32 concurrent clients, over 10k / 100k chunks.
 *
 *   npx tsx bench/server.ts [--sizes 10000,100000] [--clients 1,8,32] [--requests 1000]
 *                           [--chat-requests 300] [--db FILE] [--profile FILE] [--docs docs/benchmarks.md]
 *                           [--search-threads N]   (startServer's searchThreads; default: its default)
 *                           [--runs N]   (each level measured N times in a row; the table gives medians and ranges)
 *
 * Setup, through the REST interface as a user would: one dataset (naive, a backtick newline
 * delimiter: one chunk a line), the ~200-word synthetic passages of bench/lib/chunks.ts uploaded 1,000 per
 * document (one passage per line, so each is a chunk of its own, as bench/chat.ts does), 10
 * documents per multipart request, parsed with `POST /datasets/{id}/chunks`, polled until DONE.
 * Questions are 6-word spans of random passages (seeded). `--db FILE` keeps the database (an
 * existing one with the dataset `bench-<size>` already parsed is reused; one size per file).
 *
 * Clients: a child process (`node --import tsx bench/server.ts --client`) running N loops, each
 * sending its next request when the previous answer has been read, with node:http (a keep-alive
 * agent: one connection per loop, reused; fetch cost the client 2.7x the CPU, see clientMain).
 * The server has the parent process to itself; the two processes share the machine's cores. Each level starts
 * with `max(20, 2·N)` warm-up requests that are not counted. A request counts as an error unless
 * it answers HTTP 200 with `{"code":0`. Server / client CPU are the processes' user+system CPU
 * time over the measured wall time (100% = one core busy).
 *
 * `--profile FILE` writes a V8 CPU profile (.cpuprofile) of the server process covering only the
 * retrieval runs at 8 clients of the last size, and prints the functions with the most self time.
 * (`node --cpu-prof` on the whole script would mostly show the ingestion.)
 *
 * Prints one JSON object per measurement and a Markdown table; `--docs` writes the table into that
 * file's `## Server: requests/s on loopback` section.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Session } from 'node:inspector/promises';
import { startServer, type RunningServer } from '../src/server/index.js';
import { syntheticChunks } from './lib/chunks.js';
import { upsertSection } from './lib/report.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    clients: { type: 'string', default: '1,8,32' },
    requests: { type: 'string', default: '1000' },
    'chat-requests': { type: 'string', default: '300' },
    db: { type: 'string' },
    profile: { type: 'string' },
    docs: { type: 'string' },
    client: { type: 'boolean', default: false },
    'search-threads': { type: 'string' },
    runs: { type: 'string', default: '1' },
  },
});
const RUNS = Number(args.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a whole number ≥ 1, got ${args.runs}`);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

// ------------------------------------------------------------------------------------------ client process

interface ClientJob {
  url: string;
  key: string;
  /** Request bodies (JSON), used round-robin. */
  bodies: string[];
  clients: number;
  requests: number;
  warmup: number;
}

interface ClientResult { requests: number; errors: number; firstError?: string; seconds: number; p50: number; p95: number; p99: number; mean: number; clientCpu: number }

/**
 * The load generator (its job as JSON on stdin): `clients` loops over node:http with a keep-alive
 * agent (one socket per loop); prints READY, then one JSON line. node:http rather than fetch: on
 * the 68 KB retrieval answers fetch cost the client process 0.55 ms of CPU per request against
 * 0.2 ms (measured against a server answering from a cache), CPU the server shares.
 */
async function clientMain(): Promise<void> {
  let input = '';
  for await (const c of process.stdin) input += c;
  const job = JSON.parse(input) as ClientJob;
  const target = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.clients });
  const bodies = job.bodies.map((b) => Buffer.from(b));
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const fail = (why: string) => {
    errors++;
    firstError ??= why;
  };
  const one = (i: number): Promise<number> => new Promise((done) => {
    const t = performance.now();
    const body = bodies[i % bodies.length]!;
    const req = http.request({
      agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST',
      headers: { authorization: `Bearer ${job.key}`, 'content-type': 'application/json', 'content-length': body.length },
    }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString();
        if (res.statusCode !== 200 || !text.startsWith('{"code":0')) fail(`HTTP ${res.statusCode} ${text.slice(0, 200)}`);
        done(performance.now() - t);
      });
    });
    req.on('error', (e) => {
      fail(String(e));
      done(performance.now() - t);
    });
    req.end(body);
  });
  const run = async (count: number, lat?: number[]) => {
    next = 0;
    await Promise.all(Array.from({ length: job.clients }, async () => {
      for (let i = next++; i < count; i = next++) {
        const ms = await one(i);
        lat?.push(ms);
      }
    }));
  };
  await run(job.warmup);
  errors = 0;
  firstError = undefined;
  process.stdout.write('READY\n');
  const lat: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(job.requests, lat);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  lat.sort((a, b) => a - b);
  const out: ClientResult = {
    requests: lat.length, errors, firstError, seconds, p50: pct(lat, 50), p95: pct(lat, 95), p99: pct(lat, 99),
    mean: lat.reduce((a, b) => a + b, 0) / lat.length, clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** Runs one level in a child process; measures the server process's CPU over the counted part. */
function runClients(job: ClientJob): Promise<ClientResult & { serverCpu: number }> {
  return new Promise((resolve, reject) => {
    const here = fileURLToPath(import.meta.url);
    const child = spawn(process.execPath, ['--import', 'tsx', here, '--client'], {
      stdio: ['pipe', 'pipe', 'inherit'], cwd: join(dirname(here), '..'),
    });
    child.stdin.end(JSON.stringify(job));
    let out = '';
    let cpu0: NodeJS.CpuUsage | undefined;
    let t0 = 0;
    let serverCpu = 0;
    child.stdout.on('data', (c: Buffer) => {
      out += c;
      if (!cpu0 && out.includes('READY\n')) {
        cpu0 = process.cpuUsage();
        t0 = performance.now();
      }
      if (cpu0 && !serverCpu && /\n\{.*\}\n$/.test(out)) {
        const cpu = process.cpuUsage(cpu0);
        serverCpu = (cpu.user + cpu.system) / 1e6 / ((performance.now() - t0) / 1000);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) return reject(new Error(`client process exited ${code}: ${out.slice(-500)}`));
      resolve({ ...(JSON.parse(line) as ClientResult), serverCpu });
    });
  });
}

// ------------------------------------------------------------------------------------------ server side

async function call(srv: RunningServer, method: string, path: string, body?: unknown): Promise<{ code: number; data: any; message?: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(`${srv.url}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${srv.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = (await res.json()) as { code: number; data: any; message?: string }; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (out.code !== 0) throw new Error(`${method} ${path}: ${JSON.stringify(out).slice(0, 300)}`);
  return out;
}

/** The dataset `bench-<size>` with `texts` uploaded and parsed (or found already parsed). */
async function ingest(srv: RunningServer, size: number, texts: string[]): Promise<{ datasetId: string; chunks: number; seconds: number }> {
  const name = `bench-${size}`;
  const found = (await fetch(`${srv.url}/api/v1/datasets?name=${name}`, { headers: { authorization: `Bearer ${srv.apiKey}` } }).then((r) => r.json())) as { code: number; data?: Array<{ id: string; chunk_count: number }> };
  if (found.code === 0 && found.data?.[0] && found.data[0].chunk_count >= size) return { datasetId: found.data[0].id, chunks: found.data[0].chunk_count, seconds: 0 };
  const t0 = performance.now();
  const ds = (await call(srv, 'POST', '/datasets', { name, chunk_method: 'naive', parser_config: { chunk_token_num: 64, delimiter: '`\n`' } })).data.id as string;
  const ids: string[] = [];
  for (let i = 0; i < texts.length; i += 10_000) {
    const form = new FormData();
    for (let j = i; j < Math.min(texts.length, i + 10_000); j += 1000) {
      form.append('file', new Blob([texts.slice(j, j + 1000).join('\n')]), `doc-${j / 1000}.txt`);
    }
    const res = await fetch(`${srv.url}/api/v1/datasets/${ds}/documents`, { method: 'POST', headers: { authorization: `Bearer ${srv.apiKey}` }, body: form });
    const up = (await res.json()) as { code: number; data: Array<{ id: string }> };
    if (up.code !== 0) throw new Error(`upload: ${JSON.stringify(up).slice(0, 300)}`);
    ids.push(...up.data.map((d) => d.id));
  }
  await call(srv, 'POST', `/datasets/${ds}/chunks`, { document_ids: ids });
  for (;;) {
    await new Promise((ok) => setTimeout(ok, 1000));
    const docs = (await call(srv, 'GET', `/datasets/${ds}/documents?page_size=1000`)).data.docs as Array<{ run: string; progress_msg: string }>;
    const failed = docs.find((d) => d.run === 'FAIL');
    if (failed) throw new Error(`parse failed: ${failed.progress_msg}`);
    if (docs.every((d) => d.run === 'DONE')) break;
  }
  const listed = (await call(srv, 'GET', `/datasets?id=${ds}`)).data[0] as { chunk_count: number };
  return { datasetId: ds, chunks: listed.chunk_count, seconds: (performance.now() - t0) / 1000 };
}

interface Row {
  size: number; chunks: number; op: 'retrieval' | 'completion'; clients: number; requests: number; errors: number;
  rps: number; p50: number; p95: number; p99: number; serverCpu: number; clientCpu: number;
}

/** Self time per function of a CPU profile, top `n`. */
function topSelf(profile: { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>; samples: number[]; timeDeltas: number[] }, n = 25): string[] {
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const f = node.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

async function run(size: number, clients: number[], profile: string | undefined): Promise<Row[]> {
  const keep = !!args.db;
  const dir = keep ? dirname(args.db!) : join(tmpdir(), `ragloom-server-bench-${process.pid}`);
  const path = keep ? args.db! : join(dir, 'kb.db');
  if (!keep) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const srv = await startServer({ path, port: 0, ...(args['search-threads'] === undefined ? {} : { searchThreads: Number(args['search-threads']) }) });
  const rows: Row[] = [];
  try {
    const texts = syntheticChunks(size);
    const { datasetId, chunks, seconds } = await ingest(srv, size, texts);
    process.stderr.write(`${size}: ${chunks} chunks ${seconds ? `ingested over HTTP in ${seconds.toFixed(1)} s` : `reused from ${path}`}\n`);
    let seed = 7;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const questions = Array.from({ length: 500 }, () => {
      const words = texts[Math.floor(rnd() * texts.length)]!.split(' ');
      const at = Math.floor(rnd() * (words.length - 6));
      return words.slice(at, at + 6).join(' ').replace(/[.,]/g, '');
    });
    // The first query loads the vector index: not part of any level.
    const t = performance.now();
    await call(srv, 'POST', '/retrieval', { question: questions[0], dataset_ids: [datasetId] });
    process.stderr.write(`${size}: first retrieval (vector index load) ${(performance.now() - t).toFixed(0)} ms\n`);
    const chat = (await call(srv, 'POST', '/chats', { name: `bench-chat-${Date.now()}`, dataset_ids: [datasetId] })).data.id as string;

    const ops = [
      {
        op: 'retrieval' as const, url: `${srv.url}/api/v1/retrieval`, requests: Number(args.requests),
        bodies: questions.map((q) => JSON.stringify({
          page: 1, page_size: 30, similarity_threshold: 0.2, vector_similarity_weight: 0.3, top_k: 1024, rerank_id: null, keyword: false,
          question: q, dataset_ids: [datasetId], document_ids: [], cross_languages: null, metadata_condition: null, use_kg: false, toc_enhance: false,
        })),
      },
      {
        op: 'completion' as const, url: `${srv.url}/api/v1/chats/${chat}/completions`, requests: Number(args['chat-requests']),
        bodies: questions.map((q) => JSON.stringify({ question: q, stream: false })),
      },
    ];
    for (const o of ops) {
      if (o.requests <= 0) continue; // `--chat-requests 0`: retrieval only
      // This machine's speed drifts between runs minutes apart: --runs repeats a level back to back.
      for (const c of clients) for (let run = 0; run < RUNS; run++) {
        const profiling = profile && o.op === 'retrieval' && c === 8 && run === 0;
        const session = profiling ? new Session() : undefined;
        if (session) {
          session.connect();
          await session.post('Profiler.setSamplingInterval', { interval: 200 });
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        const r = await runClients({ url: o.url, key: srv.apiKey, bodies: o.bodies, clients: c, requests: o.requests, warmup: Math.max(20, 2 * c) });
        if (session) {
          const { profile: prof } = await session.post('Profiler.stop');
          writeFileSync(profile!, JSON.stringify(prof));
          session.disconnect();
          process.stderr.write(`CPU profile of the server (retrieval, 8 clients, ${size} chunks) → ${profile}\n${topSelf(prof as never).join('\n')}\n`);
        }
        if (r.errors) process.stderr.write(`${o.op} @${c}: ${r.errors} errors, first: ${r.firstError}\n`);
        const row: Row = {
          size, chunks, op: o.op, clients: c, requests: r.requests, errors: r.errors, rps: r.requests / r.seconds,
          p50: r.p50, p95: r.p95, p99: r.p99, serverCpu: r.serverCpu, clientCpu: r.clientCpu,
        };
        rows.push(row);
        process.stdout.write(`${JSON.stringify(row)}\n`);
      }
    }
  } finally {
    await srv.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** One row per level; with several runs of a level, each figure is the median (req/s and p95 with their range). */
function table(rows: Row[]): string {
  const f = (x: number, d = 1) => x.toFixed(d);
  const levels = new Map<string, Row[]>();
  for (const r of rows) {
    const key = `${r.size}|${r.op}|${r.clients}`;
    levels.set(key, [...(levels.get(key) ?? []), r]);
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const cell = (xs: number[], d: number, scale = 1) => {
    const v = xs.map((x) => x * scale);
    return v.length === 1 ? f(v[0]!, d) : `${f(median(v), d)} (${f(Math.min(...v), d)}–${f(Math.max(...v), d)})`;
  };
  const many = [...levels.values()].some((g) => g.length > 1);
  return [
    `| chunks | request | clients | ${many ? 'runs | ' : ''}requests | errors | req/s | p50 ms | p95 ms | p99 ms | server CPU | client CPU |`,
    `|---:|---|---:|${many ? '---:|' : ''}---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...[...levels.values()].map((g) => {
      const r = g[0]!;
      const pick = (k: keyof Row) => g.map((x) => x[k] as number);
      return `| ${r.chunks.toLocaleString('en')} | ${r.op === 'retrieval' ? '`POST /retrieval`' : '`POST /chats/{id}/completions` (built-in, non-stream)'} | ${r.clients} | ${many ? `${g.length} | ` : ''}${r.requests} | ${pick('errors').reduce((a, b) => a + b, 0)} | ${cell(pick('rps'), 0)} | ${f(median(pick('p50')))} | ${cell(pick('p95'), 1)} | ${f(median(pick('p99')))} | ${f(100 * median(pick('serverCpu')), 0)}% | ${f(100 * median(pick('clientCpu')), 0)}% |`;
    }),
  ].join('\n');
}

if (args.client) {
  await clientMain();
} else {
  const sizes = String(args.sizes).split(',').map(Number);
  if (args.db && sizes.length > 1) throw new Error('--db keeps one database: give one --sizes value with it');
  const clients = String(args.clients).split(',').map(Number);
  const all: Row[] = [];
  for (const [i, size] of sizes.entries()) all.push(...await run(size, clients, i === sizes.length - 1 ? args.profile : undefined));
  const t = table(all);
  process.stdout.write(`\n${t}\n`);
  if (args.docs) {
    upsertSection(args.docs, 'Server: requests/s on loopback', `Measured by \`npx tsx bench/server.ts --sizes ${args.sizes}\` (${new Date().toISOString().slice(0, 10)}; Node ${process.version}, 2 cores). ` +
      'The server (`startServer`, defaults) runs in the bench process; the clients run in a child process, each a loop of node:http requests ' +
      'over its own keep-alive connection that sends the next request when the previous answer has been read. Chunks are ~200-word synthetic ' +
      'passages ingested over HTTP (upload + parse); queries are 6-word spans of random passages; retrieval sends the RAGFlow SDK\'s ' +
      '`retrieve()` body (page_size 30, top_k 1024, hybrid with weight 0.3); the completion is non-streamed with the built-in ' +
      'extractive model, a new session per request. CPU columns are user+system time over wall time (100% = one core).\n\n' + t);
  }
}

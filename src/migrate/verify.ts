import { resolve } from 'node:path';
import type { Client, DataSet, Document } from '../client/index.js';
import { listAllDatasets, listAllDocuments, openEndpoint } from './endpoint.js';
import { MigrationError, readManifest, type Manifest, type ManifestEntry } from './manifest.js';
import { Reporter, type MigrationHooks } from './progress.js';

export interface VerifyOptions extends MigrationHooks {
  manifest: string;
  to: string;
  apiKey?: string;
  /** Wait up to this many seconds for parsing to end before judging (0: judge now). @default 0 */
  waitSeconds?: number;
  /** Share of failed documents above which verification fails. @default 0.05 */
  maxFailureRate?: number;
  /** A document with more chunks than this many times its dataset's average is flagged. @default 3 */
  outlierFactor?: number;
}

export interface RunDistribution {
  DONE: number;
  FAIL: number;
  /** Not parsed (yet): UNSTART, RUNNING, CANCEL. */
  pending: number;
}

export interface VerifyRow {
  kb_name: string;
  dataset_id: string | null;
  expected_documents: number;
  found_documents: number;
  /** Manifest files the target lacks (at most 20 named). */
  missing: string[];
  /** Target documents the manifest does not list (a reused dataset's own). */
  other_documents: number;
  runs: RunDistribution;
  failure_rate: number;
  average_chunks: number;
  /** Documents with more than `outlierFactor` × the dataset's average chunk count. */
  outliers: Array<{ name: string; chunk_count: number }>;
  ok: boolean;
}

export interface VerifyReport {
  ok: boolean;
  target: string;
  datasets: { expected: number; found: number };
  documents: { expected: number; found: number };
  runs: RunDistribution;
  failure_rate: number;
  rows: VerifyRow[];
  /** Why verification failed (empty when it passed). */
  problems: string[];
  /** Worth a look, not a failure (chunk-count outliers, extra documents). */
  flags: string[];
  seconds: number;
}

/**
 * Checks an import against its manifest: every entry has its dataset, every dataset the
 * manifest's files, their parsing ended (DONE / FAIL / pending), failures at most 5%. Documents
 * with over 3× their dataset's average chunk count are flagged. `ok` is false when anything is
 * missing, still pending, or failed too often.
 */
export async function migrateVerify(opts: VerifyOptions): Promise<VerifyReport> {
  const t0 = performance.now();
  const rep = new Reporter(opts);
  if (!opts.manifest) throw new MigrationError('Verify needs the export\'s manifest (--manifest)');
  const m = readManifest(resolve(opts.manifest));
  const maxRate = opts.maxFailureRate ?? 0.05;
  const factor = opts.outlierFactor ?? 3;
  const ep = openEndpoint(opts.to, { apiKey: opts.apiKey, role: 'target', mustExist: true });
  try {
    const deadline = Date.now() + Math.max(0, opts.waitSeconds ?? 0) * 1000;
    for (;;) {
      const found = await collect(ep.client, m, ep.id);
      const docs = [...found.values()].flatMap((x) => x.mine);
      const pending = docs.filter((d) => d.run === 'UNSTART' || d.run === 'RUNNING').length;
      rep.progress({ step: 'parse', done: docs.length - pending, total: docs.length });
      // A database file is parsed by whoever has it open: an import waits for its parsing, so
      // documents still pending there need the import run again, not more waiting.
      const hint = ep.remote
        ? 'verify again when parsing ends, or pass --wait'
        : `run \`ragloom migrate import --manifest ${resolve(opts.manifest)} --to ${ep.id}\` again: it parses them and waits until they are done`;
      if (!pending || Date.now() >= deadline) return judge(m, found, ep.id, maxRate, factor, (performance.now() - t0) / 1000, hint);
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await ep.client.close();
  }
}

interface Found {
  ds: DataSet | null;
  /** Target documents named in the manifest entry. */
  mine: Document[];
  others: number;
}

/** Each entry's dataset: the one the import recorded for this target, else one of its name. */
async function collect(c: Client, m: Manifest, target: string): Promise<Map<ManifestEntry, Found>> {
  const all = await listAllDatasets(c);
  const rec = m.imports[target];
  const out = new Map<ManifestEntry, Found>();
  const claimed = new Set(Object.values(rec?.datasets ?? {}).map((d) => d.dataset_id));
  for (const e of m.entries) {
    const placed = rec?.datasets[e.kb_id];
    const ds = placed
      ? all.find((d) => d.id === placed.dataset_id) ?? null
      : all.find((d) => d.name.toLowerCase() === e.kb_name.toLowerCase() && !claimed.has(d.id)) ?? null;
    if (!ds) {
      out.set(e, { ds: null, mine: [], others: 0 });
      continue;
    }
    const names = new Set(e.files.map((f) => f.name.toLowerCase()));
    const docs = await listAllDocuments(ds);
    const mine = docs.filter((d) => names.has(d.name.toLowerCase()));
    out.set(e, { ds, mine, others: docs.length - mine.length });
  }
  return out;
}

const distribution = (docs: Document[]): RunDistribution => ({
  DONE: docs.filter((d) => d.run === 'DONE').length,
  FAIL: docs.filter((d) => d.run === 'FAIL').length,
  pending: docs.filter((d) => d.run !== 'DONE' && d.run !== 'FAIL').length,
});

function judge(m: Manifest, found: Map<ManifestEntry, Found>, target: string, maxRate: number, factor: number, seconds: number, pendingHint: string): VerifyReport {
  const problems: string[] = [];
  const flags: string[] = [];
  const rows: VerifyRow[] = [];
  for (const e of m.entries) {
    const f = found.get(e)!;
    const names = new Set(f.mine.map((d) => d.name.toLowerCase()));
    const missing = e.files.filter((x) => !names.has(x.name.toLowerCase())).map((x) => x.name);
    const runs = distribution(f.mine);
    const rate = f.mine.length ? runs.FAIL / f.mine.length : 0;
    const done = f.mine.filter((d) => d.run === 'DONE');
    const avg = done.length ? done.reduce((n, d) => n + d.chunk_count, 0) / done.length : 0;
    const outliers = done.filter((d) => avg > 0 && d.chunk_count > factor * avg).map((d) => ({ name: d.name, chunk_count: d.chunk_count }));
    const before = problems.length;
    if (!f.ds) problems.push(`${e.kb_name}: no such dataset in the target`);
    else {
      if (missing.length) problems.push(`${e.kb_name}: ${missing.length} of ${e.files.length} documents missing (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''})`);
      if (runs.pending) problems.push(`${e.kb_name}: ${runs.pending} document(s) not parsed (yet): ${pendingHint}`);
      if (rate > maxRate) problems.push(`${e.kb_name}: ${(rate * 100).toFixed(1)}% of documents failed to parse (limit ${(maxRate * 100).toFixed(0)}%)`);
    }
    for (const o of outliers) flags.push(`${e.kb_name}: ${o.name} has ${o.chunk_count} chunks, over ${factor}× the dataset's average (${avg.toFixed(1)})`);
    if (f.others) flags.push(`${e.kb_name}: ${f.others} document(s) in the target dataset are not in the manifest`);
    rows.push({
      kb_name: e.kb_name, dataset_id: f.ds?.id ?? null, expected_documents: e.files.length, found_documents: f.mine.length, missing: missing.slice(0, 20),
      other_documents: f.others, runs, failure_rate: rate, average_chunks: avg, outliers, ok: problems.length === before,
    });
  }
  const runs = rows.reduce<RunDistribution>((a, r) => ({ DONE: a.DONE + r.runs.DONE, FAIL: a.FAIL + r.runs.FAIL, pending: a.pending + r.runs.pending }), { DONE: 0, FAIL: 0, pending: 0 });
  const docsFound = rows.reduce((n, r) => n + r.found_documents, 0);
  const rate = docsFound ? runs.FAIL / docsFound : 0;
  if (rate > maxRate) problems.push(`${(rate * 100).toFixed(1)}% of all documents failed to parse (limit ${(maxRate * 100).toFixed(0)}%)`);
  return {
    ok: problems.length === 0,
    target,
    datasets: { expected: m.entries.length, found: rows.filter((r) => r.dataset_id).length },
    documents: { expected: rows.reduce((n, r) => n + r.expected_documents, 0), found: docsFound },
    runs,
    failure_rate: rate,
    rows,
    problems,
    flags,
    seconds,
  };
}

import { parseArgs } from 'node:util';
import { SingleBar, Presets } from 'cli-progress';
import {
  migrateExport, migrateImport, migrateRollback, migrateVerify,
  type MigrationHooks, type MigrationProgress, type VerifyReport,
} from '../migrate/index.js';
import { formatTable } from './table.js';
import { intFlag, nearest, numberFlag, UsageError, writeJson, storeOf } from './args.js';
import { copyStore, verifyCopy } from '../store/copy.js';

const HELP: Record<string, string> = {
  export: `ragloom migrate export --from <url|db-file> --out DIR [--api-key K] [--include-disabled] [--dry-run] [--json]
  Downloads every active dataset's settings and its active documents' files into DIR (one folder
  per dataset, <name>_<id prefix>) and writes DIR/manifest.json. A URL is a RAGFlow (0.17.2,
  0.25.6) or ragloom server; a file is a ragloom database, opened read-only. Re-running into the
  same DIR keeps the files already downloaded. The key: --api-key, else RAGFLOW_API_KEY, else
  RAGLOOM_API_KEY; it is never printed or written.`,
  import: `ragloom migrate import --manifest DIR/manifest.json --to <url|db-file> [--api-key K]
                       [--batch-size N] [--embedding-model NAME@FACTORY] [--no-parse] [--dry-run] [--json]
  Reuses the target's dataset of each name or creates it (settings and pagerank of the source),
  uploads the files it lacks in batches (default 10) and starts parsing them (into a database file
  it waits until they are parsed). Re-running after an interruption uploads only what is missing. What it creates is recorded in the manifest for
  rollback. The key: --api-key, else RAGLOOM_API_KEY, else RAGFLOW_API_KEY.`,
  verify: `ragloom migrate verify --manifest DIR/manifest.json --to <url|db-file> [--api-key K]
                       [--wait SECONDS] [--max-failure-rate R] [--json]
  Compares the target with the manifest: datasets, documents per dataset, parse results (DONE /
  FAIL / pending), failure rate (> 5% fails), documents with over 3x their dataset's average
  chunk count (flagged). Exit status 0 only when verification passes. --wait waits for parsing.`,
  rollback: `ragloom migrate rollback --manifest DIR/manifest.json --to <url|db-file> [--api-key K]
                       [--keep-export] [--dry-run] [--json]
  Deletes the datasets the import created and the documents it added to existing datasets, then
  the export's folder (unless --keep-export). The export's source is never touched.`,
};

HELP.copy = `ragloom migrate copy --from <db-file|postgresql://…> --to <db-file|postgresql://…> [--verify] [--json]
  Copies a whole store between a SQLite file and a PostgreSQL database, either way: accounts and
  keys, datasets, documents and their files, chunks with their vectors (nothing is parsed or
  embedded again), chats, sessions, memories, agents. Ids and order are kept: the target ranks
  every search as the source does. The source is only read. Re-running after an interruption
  writes only what is missing. --verify only compares the two (row counts and keys of every
  table); exit status 0 when they agree.`;

const USAGE = `Usage: ragloom migrate export|import|verify|rollback|copy [options]   (ragloom migrate <command> --help)\n\n${Object.values(HELP).join('\n\n')}\n`;

export class MigrateUsageError extends Error {}

/** `ragloom migrate …`: exit status 0 on success (verify: only when verification passes). */
export async function runMigrateCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(USAGE);
    return sub === undefined ? 1 : 0;
  }
  if (!(sub in HELP)) {
    const near = nearest(sub, Object.keys(HELP));
    throw new MigrateUsageError(near ? `unknown migrate command "${sub}"; did you mean "${near}"? (ragloom migrate --help)` : `unknown migrate command "${sub}"\n\n${USAGE}`);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest, allowPositionals: false, options: {
        from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' }, manifest: { type: 'string' }, 'api-key': { type: 'string' },
        'dry-run': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, 'include-disabled': { type: 'boolean' },
        'batch-size': { type: 'string' }, 'embedding-model': { type: 'string' }, 'no-parse': { type: 'boolean' }, wait: { type: 'string' },
        'max-failure-rate': { type: 'string' }, 'keep-export': { type: 'boolean' }, verify: { type: 'boolean' },
      },
    });
  } catch (e) {
    throw new MigrateUsageError(`${(e as Error).message}\n\n${HELP[sub]}`);
  }
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(`${HELP[sub]}\n`);
    return 0;
  }
  const need = (flag: 'from' | 'to' | 'out' | 'manifest'): string => {
    if (!v[flag]) throw new MigrateUsageError(`--${flag} is required\n\n${HELP[sub]}`);
    return v[flag]!;
  };
  // Numeric flags are read by the helpers every command shares (their messages name the flag);
  // a refusal is a migrate usage error, with this command's help like the others above.
  const numeric = <T>(read: () => T): T => {
    try {
      return read();
    } catch (e) {
      if (e instanceof UsageError) throw new MigrateUsageError(`${e.message}\n\n${HELP[sub]}`);
      throw e;
    }
  };
  const json = !!v.json;
  const hooks = progressHooks(json);
  const apiKey = v['api-key'];
  try {
    switch (sub) {
      case 'export': {
        const s = await migrateExport({ from: need('from'), out: need('out'), apiKey, dryRun: v['dry-run'], includeDisabled: v['include-disabled'], ...hooks });
        hooks.stop();
        if (json) return print(s, 0);
        process.stdout.write(`${s.dry_run ? 'Would export' : 'Exported'} ${s.datasets} dataset(s), ${s.files} file(s), ${mb(s.bytes)}` +
          `${s.reused ? ` (${s.reused} kept from an earlier run)` : ''}; skipped ${s.skipped}; ${s.seconds.toFixed(1)} s` +
          `${s.files && s.seconds ? ` (${(s.files / s.seconds).toFixed(0)} documents/s)` : ''}\n${s.dry_run ? '' : `Manifest: ${s.manifest}\n`}`);
        return 0;
      }
      case 'import': {
        const batch = numeric(() => intFlag(v, 'batch-size', { min: 1, max: MAX_BATCH_SIZE }));
        const s = await migrateImport({
          manifest: need('manifest'), to: need('to'), apiKey, dryRun: v['dry-run'], batchSize: batch, embeddingModel: v['embedding-model'],
          parse: !v['no-parse'], ...hooks,
        });
        hooks.stop();
        if (json) return print(s, 0);
        process.stdout.write(formatTable(['DATASET', 'ACTION', 'TARGET ID', 'UPLOAD', 'PRESENT'],
          s.plan.map((r) => [r.kb_name, r.action, r.dataset_id ?? '(new)', String(r.upload), String(r.present)])));
        process.stdout.write(s.dry_run
          ? `Dry run: nothing was changed.\n`
          : `Created ${s.datasets_created}, reused ${s.datasets_reused} dataset(s); uploaded ${s.uploaded}, already present ${s.already_present}, ` +
            `failed ${s.failed}; parsing started for ${s.parse_started}` +
            `${s.parsed ? ` (parsed: ${s.parsed.DONE} DONE, ${s.parsed.FAIL} FAIL${s.parsed.CANCEL ? `, ${s.parsed.CANCEL} CANCEL` : ''})` : ''}; ${s.seconds.toFixed(1)} s` +
            `${s.uploaded && s.seconds ? ` (${(s.uploaded / s.seconds).toFixed(0)} documents/s)` : ''}\n`);
        return 0;
      }
      case 'verify': {
        const wait = numeric(() => intFlag(v, 'wait', { min: 0, max: MAX_WAIT_SECONDS, default: 0 }));
        const rate = numeric(() => numberFlag(v, 'max-failure-rate', { min: 0, max: 1 }));
        const r = await migrateVerify({ manifest: need('manifest'), to: need('to'), apiKey, waitSeconds: wait, maxFailureRate: rate, ...hooks });
        hooks.stop();
        if (json) return print(r, r.ok ? 0 : 1);
        printReport(r);
        return r.ok ? 0 : 1;
      }
      case 'copy': {
        const from = storeOf(need('from'));
        const to = storeOf(need('to'));
        if (v.verify) {
          const r = await verifyCopy(from, to);
          if (json) return print(r, r.ok ? 0 : 1);
          process.stdout.write(formatTable(['TABLE', 'SOURCE', 'TARGET', 'SAME'], r.tables.map((t) => [t.table, String(t.source), String(t.target), t.same ? 'yes' : 'NO'])));
          process.stdout.write(r.ok ? 'The target holds every row of the source.\n' : 'The target differs from the source.\n');
          return r.ok ? 0 : 1;
        }
        const s = await copyStore(from, to, json ? undefined : (p) => process.stderr.write(`\r${p.table}: ${p.read} read, ${p.written} written   `));
        if (!json) process.stderr.write('\n');
        if (json) return print(s, 0);
        process.stdout.write(formatTable(['TABLE', 'READ', 'WRITTEN'], s.tables.map((t) => [t.table, String(t.read), String(t.written)])));
        process.stdout.write(`Copied in ${s.seconds.toFixed(1)} s (rows already there were skipped); check with --verify.\n`);
        return 0;
      }
      default: {
        const s = await migrateRollback({ manifest: need('manifest'), to: need('to'), apiKey, dryRun: v['dry-run'], keepExport: v['keep-export'], ...hooks });
        hooks.stop();
        if (json) return print(s, 0);
        process.stdout.write(`${s.dry_run ? 'Would delete' : 'Deleted'} ${s.datasets_deleted} dataset(s) and ${s.documents_deleted} document(s) added to existing datasets` +
          `${s.export_removed ? '; removed the export' : ''}\n`);
        return 0;
      }
    }
  } finally {
    hooks.stop();
  }
}

function print(o: unknown, code: number): number {
  writeJson(o);
  return code;
}

const mb = (n: number) => (n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);

/** `--batch-size`: files per upload request. */
const MAX_BATCH_SIZE = 1000;
/** `--wait`: a day. */
const MAX_WAIT_SECONDS = 86_400;

function printReport(r: VerifyReport): void {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  process.stdout.write(formatTable(['DATASET', 'DOCS', 'FOUND', 'DONE', 'FAIL', 'PENDING', 'FAIL %', 'AVG CHUNKS', 'OUTLIERS', 'OK'],
    r.rows.map((x) => [x.kb_name, String(x.expected_documents), String(x.found_documents), String(x.runs.DONE), String(x.runs.FAIL), String(x.runs.pending),
      pct(x.failure_rate), x.average_chunks.toFixed(1), String(x.outliers.length), x.ok ? 'yes' : 'NO'])));
  process.stdout.write(`Datasets ${r.datasets.found}/${r.datasets.expected}, documents ${r.documents.found}/${r.documents.expected}; ` +
    `DONE ${r.runs.DONE}, FAIL ${r.runs.FAIL}, pending ${r.runs.pending}; failure rate ${pct(r.failure_rate)}\n`);
  for (const f of r.flags) process.stdout.write(`flag: ${f}\n`);
  for (const p of r.problems) process.stdout.write(`problem: ${p}\n`);
  process.stdout.write(r.ok ? 'Verification passed.\n' : 'Verification FAILED.\n');
}

/** A progress bar on a terminal (stderr); warnings on stderr always; nothing else, so --json output stays clean. */
function progressHooks(json: boolean): MigrationHooks & { stop(): void } {
  let bar: SingleBar | undefined;
  let barStep = '';
  const tty = process.stderr.isTTY && !json;
  return {
    log: (level, msg) => {
      if (level === 'warn') process.stderr.write(`${bar ? '\n' : ''}warning: ${msg}\n`);
    },
    onProgress: tty
      ? (p: MigrationProgress) => {
        if (!bar || barStep !== p.step) {
          bar?.stop();
          barStep = p.step;
          bar = new SingleBar({ format: ` ${p.step.padEnd(8)} {bar} {value}/{total} | {item}`, hideCursor: true, etaBuffer: 50 }, Presets.shades_classic);
          bar.start(p.total, p.done, { item: '' });
        }
        bar.setTotal(p.total);
        bar.update(p.done, { item: (p.item ?? '').slice(0, 40) });
      }
      : undefined,
    stop: () => {
      bar?.stop();
      bar = undefined;
    },
  };
}

import { parseArgs } from 'node:util';
import {
  Workspace,
  WorkspaceError,
  formatId,
  type DeleteResult,
  type ExportedModel,
  type PretrainedModel,
  type RecordKind,
  type RecordOf,
} from '../workspace/index.js';
import { formatTable } from './table.js';
import { writeJson as json } from './args.js';

const USAGE = `Usage: ragloom workspace <command> <dir> ... [--json]

  show <dir>                       version, path, counters, record counts, problems
  ls   <dir> [kind]                table of records (all kinds when kind is left out)
  add  <dir> <kind> [options]      create a record and save
  rm   <dir> <kind> <id> [--cascade]
                                   delete a record and save
  bind <dir> <project-id> <dataset-id>
                                   bind a project to a dataset and save

kinds: dataset, project, task, pretrained (pm), exported (em)

add options:
  --name <s>   --desc <s>   --type <s>   --path <s>
  --did <id>   (project: bind at creation)
  --pid <id>   (task, models)      --parent <id>  (task: prune parent)
  --tid <id>   (models)            --model <s>    (models)
  --exported-type <0|1>            (exported: 0 inference, 1 lite)

--json prints one JSON value on stdout instead of tables (errors: {"error": {"code", "message"}}).
`;

const KIND_ALIASES: Readonly<Record<string, RecordKind>> = {
  dataset: 'dataset',
  datasets: 'dataset',
  project: 'project',
  projects: 'project',
  task: 'task',
  tasks: 'task',
  pretrained: 'pretrained_model',
  pm: 'pretrained_model',
  'pretrained-model': 'pretrained_model',
  'pretrained-models': 'pretrained_model',
  pretrained_model: 'pretrained_model',
  exported: 'exported_model',
  em: 'exported_model',
  'exported-model': 'exported_model',
  'exported-models': 'exported_model',
  exported_model: 'exported_model',
};

const KIND_TITLE: Readonly<Record<RecordKind, string>> = {
  dataset: 'datasets',
  project: 'projects',
  task: 'tasks',
  pretrained_model: 'pretrained models',
  exported_model: 'exported models',
};

const KINDS: readonly RecordKind[] = ['dataset', 'project', 'task', 'pretrained_model', 'exported_model'];

/** Thrown for a bad command line; printed with the usage hint. */
class UsageError extends Error {}

function collection(ws: Workspace, kind: RecordKind) {
  switch (kind) {
    case 'dataset':
      return ws.datasets;
    case 'project':
      return ws.projects;
    case 'task':
      return ws.tasks;
    case 'pretrained_model':
      return ws.pretrainedModels;
    case 'exported_model':
      return ws.exportedModels;
  }
}

function parseKind(word: string | undefined): RecordKind {
  if (!word) throw new UsageError('missing <kind>');
  const kind = KIND_ALIASES[word.toLowerCase()];
  if (!kind) throw new UsageError(`unknown kind "${word}"; use dataset, project, task, pretrained or exported`);
  return kind;
}

// Wide (CJK) characters take two terminal columns; PaddleX names are often Chinese.
const COLUMNS: { readonly [K in RecordKind]: readonly [string, (r: RecordOf[K]) => string][] } = {
  dataset: [
    ['ID', (r) => r.id],
    ['NAME', (r) => r.name],
    ['TYPE', (r) => r.type],
    ['DESC', (r) => r.desc],
    ['CREATED', (r) => r.create_time],
    ['PATH', (r) => r.path],
  ],
  project: [
    ['ID', (r) => r.id],
    ['NAME', (r) => r.name],
    ['TYPE', (r) => r.type],
    ['DATASET', (r) => r.did || '-'],
    ['DESC', (r) => r.desc],
    ['CREATED', (r) => r.create_time],
  ],
  task: [
    ['ID', (r) => r.id],
    ['PROJECT', (r) => r.pid],
    ['PARENT', (r) => r.parent_id || '-'],
    ['NAME', (r) => r.name],
    ['DESC', (r) => r.desc],
    ['CREATED', (r) => r.create_time],
  ],
  pretrained_model: modelColumns<PretrainedModel>([]),
  exported_model: modelColumns<ExportedModel>([
    ['EXPORT', (r) => (r.exported_type === 0 ? 'inference' : r.exported_type === 1 ? 'lite' : String(r.exported_type))],
  ]),
};

function modelColumns<M extends PretrainedModel>(extra: [string, (r: M) => string][]): [string, (r: M) => string][] {
  return [
    ['ID', (r) => r.id],
    ['NAME', (r) => r.name],
    ['MODEL', (r) => r.model],
    ['TYPE', (r) => r.type],
    ['PROJECT', (r) => r.pid],
    ['TASK', (r) => r.tid],
    ...extra,
    ['CREATED', (r) => r.create_time],
    ['PATH', (r) => r.path],
  ];
}

function recordTable<K extends RecordKind>(kind: K, records: readonly RecordOf[K][]): string {
  const cols = COLUMNS[kind] as readonly [string, (r: RecordOf[K]) => string][];
  return formatTable(
    cols.map(([h]) => h),
    records.map((r) => cols.map(([, f]) => f(r))),
  );
}

const out = (s: string): void => void process.stdout.write(s);

async function show(dir: string, asJson: boolean): Promise<void> {
  const ws = await Workspace.open(dir);
  const c = ws.counters;
  const counter: Record<RecordKind, number> = {
    dataset: c.max_dataset_id,
    project: c.max_project_id,
    task: c.max_task_id,
    pretrained_model: c.max_pretrained_model_id,
    exported_model: c.max_exported_model_id,
  };
  const loaded = ws.loadedFrom === 'new' ? 'new (no workspace file yet)' : `workspace.${ws.loadedFrom}.pb`;
  if (asJson) {
    json({
      path: ws.dir, version: ws.version, loaded_from: ws.loadedFrom, recovered: ws.recovered, last_saved: ws.currentTime || null,
      kinds: KINDS.map((k) => ({ kind: k, count: collection(ws, k).size, counter: counter[k], next_id: formatId(k, counter[k] + 1) })),
      issues: ws.check(),
    });
    return;
  }
  out(
    formatTable(
      ['FIELD', 'VALUE'],
      [
        ['path', ws.dir],
        ['version', ws.version],
        ['loaded from', loaded + (ws.recovered.length ? `, recovered ${ws.recovered.join(' ')}` : '')],
        ['last saved', ws.currentTime || '-'],
      ],
    ),
  );
  out('\n');
  out(
    formatTable(
      ['KIND', 'COUNT', 'COUNTER', 'NEXT ID'],
      KINDS.map((k) => [KIND_TITLE[k], String(collection(ws, k).size), String(counter[k]), formatId(k, counter[k] + 1)]),
    ),
  );
  const issues = ws.check();
  out('\n');
  if (!issues.length) out('issues: none\n');
  else out(formatTable(['KIND', 'ID', 'ISSUE'], issues.map((i) => [i.kind, i.id || '-', i.message])));
}

async function ls(dir: string, kindWord: string | undefined, asJson: boolean): Promise<void> {
  const ws = await Workspace.open(dir);
  const kinds = kindWord ? [parseKind(kindWord)] : KINDS;
  if (asJson) {
    json(Object.fromEntries(kinds.map((k) => [k, collection(ws, k).list()])));
    return;
  }
  kinds.forEach((k, i) => {
    if (kinds.length > 1) out(`${i ? '\n' : ''}${KIND_TITLE[k]}:\n`);
    out(recordTable(k, collection(ws, k).list() as RecordOf[typeof k][]));
  });
}

type AddValues = Partial<Record<'name' | 'desc' | 'type' | 'path' | 'did' | 'pid' | 'tid' | 'parent' | 'model' | 'exported-type', string>>;

function addFields(kind: RecordKind, v: AddValues): Record<string, unknown> {
  const allowed: Record<RecordKind, (keyof AddValues)[]> = {
    dataset: ['name', 'desc', 'type', 'path'],
    project: ['name', 'desc', 'type', 'path', 'did'],
    task: ['name', 'desc', 'path', 'pid', 'parent'],
    pretrained_model: ['name', 'model', 'path', 'pid', 'tid'],
    exported_model: ['name', 'model', 'path', 'pid', 'tid', 'exported-type'],
  };
  const fields: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(v) as [keyof AddValues, string | undefined][]) {
    if (value === undefined) continue;
    if (!allowed[kind].includes(k)) throw new UsageError(`--${k} does not apply to a ${kind.replace('_', ' ')}`);
    if (k === 'exported-type') {
      if (!/^-?\d+$/.test(value)) throw new UsageError('--exported-type takes 0 (inference) or 1 (lite)');
      fields.exported_type = Number(value);
    } else fields[k === 'parent' ? 'parent_id' : k] = value;
  }
  return fields;
}

async function add(dir: string, kind: RecordKind, values: AddValues, asJson: boolean): Promise<void> {
  const fields = addFields(kind, values);
  const ws = await Workspace.open(dir);
  // The collection's input type depends on kind; the workspace checks every field itself.
  const target = collection(ws, kind) as unknown as { create(f: Record<string, unknown>): RecordOf[RecordKind] };
  const rec = target.create(fields);
  await ws.save();
  if (asJson) return json({ created: rec.id, kind, record: rec });
  out(`created ${rec.id}\n`);
  out(recordTable(kind, [rec] as RecordOf[typeof kind][]));
}

function printDeleted(r: DeleteResult): void {
  out(`deleted ${r.deleted.join(' ')}\n`);
  if (r.orphanedModels.length) {
    out(`warning: models ${r.orphanedModels.join(' ')} still point at deleted records (rm --cascade deletes them)\n`);
  }
}

async function remove(dir: string, kind: RecordKind, id: string, cascade: boolean, asJson: boolean): Promise<void> {
  const ws = await Workspace.open(dir);
  const r = collection(ws, kind).delete(id, { cascade });
  await ws.save();
  if (asJson) return json({ deleted: r.deleted, orphaned_models: r.orphanedModels });
  printDeleted(r);
}

async function bind(dir: string, pid: string, did: string, asJson: boolean): Promise<void> {
  const ws = await Workspace.open(dir);
  const pj = ws.bindDataset(pid, did);
  await ws.save();
  if (asJson) return json({ bound: pj.id, dataset: pj.did, project: pj });
  out(`bound ${pj.id} to ${pj.did}\n`);
}

/**
 * `ragloom workspace …`: argv holds the words after `workspace`. Prints tables to stdout,
 * errors to stderr. Returns 0 on success, 1 on a WorkspaceError or a bad command line.
 */


export async function runWorkspaceCommand(argv: string[]): Promise<number> {
  const asJson = argv.includes('--json');
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: 'string' },
        desc: { type: 'string' },
        type: { type: 'string' },
        path: { type: 'string' },
        did: { type: 'string' },
        pid: { type: 'string' },
        tid: { type: 'string' },
        parent: { type: 'string' },
        model: { type: 'string' },
        'exported-type': { type: 'string' },
        cascade: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        json: { type: 'boolean' },
      },
    });
    const [command, dir, ...rest] = positionals;
    if (values.help || command === 'help') {
      out(USAGE);
      return 0;
    }
    if (!command) throw new UsageError('missing <command>');
    if (!['show', 'ls', 'add', 'rm', 'bind'].includes(command)) throw new UsageError(`unknown command "${command}"`);
    if (!dir) throw new UsageError('missing <dir>');
    const { cascade, help: _help, json: _json, ...addValues } = values;
    const extra = (max: number): void => {
      if (rest.length > max) throw new UsageError(`unexpected argument "${rest[max]}"`);
    };
    const noOptions = (allowCascade: boolean): void => {
      const given = Object.entries(addValues).filter(([, v]) => v !== undefined).map(([k]) => `--${k}`);
      if (cascade && !allowCascade) given.push('--cascade');
      if (given.length) throw new UsageError(`${given.join(', ')} does not apply to "${command}"`);
    };
    switch (command) {
      case 'show':
        extra(0);
        noOptions(false);
        await show(dir, asJson);
        break;
      case 'ls':
        extra(1);
        noOptions(false);
        await ls(dir, rest[0], asJson);
        break;
      case 'add':
        extra(1);
        if (cascade) throw new UsageError('--cascade does not apply to "add"');
        await add(dir, parseKind(rest[0]), addValues, asJson);
        break;
      case 'rm': {
        extra(2);
        noOptions(true);
        const kind = parseKind(rest[0]);
        if (!rest[1]) throw new UsageError('missing <id>');
        await remove(dir, kind, rest[1], cascade === true, asJson);
        break;
      }
      case 'bind':
        extra(2);
        noOptions(false);
        if (!rest[0] || !rest[1]) throw new UsageError('bind needs <project-id> <dataset-id>');
        await bind(dir, rest[0], rest[1], asJson);
        break;
    }
    return 0;
  } catch (e) {
    const parseError = e instanceof TypeError && String((e as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (asJson && (e instanceof WorkspaceError || e instanceof UsageError || parseError)) {
      json({ error: { code: e instanceof WorkspaceError ? e.code : 'usage', message: (e as Error).message } });
      return 1;
    }
    if (e instanceof WorkspaceError) {
      process.stderr.write(`error [${e.code}]: ${e.message}\n`);
      return 1;
    }
    // parseArgs throws TypeError with code ERR_PARSE_ARGS_* for unknown or malformed options (parseError above).
    if (e instanceof UsageError || parseError) {
      process.stderr.write(`error: ${(e as Error).message}\n\n${USAGE}`);
      return 1;
    }
    throw e;
  }
}

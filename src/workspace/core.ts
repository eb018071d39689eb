import { isAbsolute, join, resolve } from 'node:path';
import { setUnknowns, unknownsOf } from './codec.js';
import { fail } from './errors.js';
import { COUNTER_FIELD, formatId, idNumber, localTime } from './ids.js';
import { canonicalDatasetType, compatible, COMPATIBLE_PROJECT_TYPES, isDatasetType, isProjectType, LEGACY_DATASET_TYPES } from './rules.js';
import type {
  Dataset,
  DeleteOptions,
  DeleteResult,
  ExportedModel,
  InputOf,
  PatchOf,
  PretrainedModel,
  Project,
  RecordKind,
  RecordOf,
  Task,
  WorkspaceIssue,
  WorkspaceMessage,
} from './types.js';

/** A stored record plus what the wire had that the record view does not show. */
export interface Entry<R> {
  rec: R;
  unknowns?: Uint8Array[];
  /** Dataset.type as the file spelled it (e.g. PaddleX's "detection"), written back unchanged. */
  storedType?: string;
}
type Maps = { [K in RecordKind]: Map<string, Entry<RecordOf[K]>> };

export const KINDS: readonly RecordKind[] = ['dataset', 'project', 'task', 'pretrained_model', 'exported_model'];

/** Message name of each kind, for errors. */
export const LABEL: Readonly<Record<RecordKind, string>> = {
  dataset: 'Dataset',
  project: 'Project',
  task: 'Task',
  pretrained_model: 'PretrainedModel',
  exported_model: 'ExportedModel',
};

const MAP_FIELD = {
  dataset: 'datasets',
  project: 'projects',
  task: 'tasks',
  pretrained_model: 'pretrained_models',
  exported_model: 'exported_models',
} as const satisfies Record<RecordKind, keyof WorkspaceMessage>;

/** Proto fields of each record, in field-number order. */
const FIELDS: { readonly [K in RecordKind]: readonly (keyof RecordOf[K])[] } = {
  dataset: ['id', 'name', 'desc', 'type', 'path', 'create_time'],
  project: ['id', 'name', 'desc', 'type', 'did', 'path', 'create_time'],
  task: ['id', 'name', 'desc', 'pid', 'path', 'create_time', 'parent_id'],
  pretrained_model: ['id', 'name', 'model', 'type', 'pid', 'tid', 'create_time', 'path'],
  exported_model: ['id', 'name', 'model', 'type', 'pid', 'tid', 'create_time', 'path', 'exported_type'],
};

/** What create() and update() accept per kind; every other proto field is read-only there. */
const CREATE_FIELDS: { readonly [K in RecordKind]: readonly string[] } = {
  dataset: ['name', 'desc', 'type', 'path'],
  project: ['name', 'desc', 'type', 'did', 'path'],
  task: ['pid', 'name', 'desc', 'parent_id', 'path'],
  pretrained_model: ['name', 'model', 'pid', 'tid', 'path'],
  exported_model: ['name', 'model', 'pid', 'tid', 'path', 'exported_type'],
};
const UPDATE_FIELDS: { readonly [K in RecordKind]: readonly string[] } = {
  dataset: ['name', 'desc', 'type', 'path'],
  project: ['name', 'desc', 'type', 'did', 'path'],
  task: ['name', 'desc', 'parent_id', 'path'],
  pretrained_model: ['name', 'model', 'pid', 'tid', 'path'],
  exported_model: ['name', 'model', 'pid', 'tid', 'path', 'exported_type'],
};

type Fields = Record<string, unknown>;

/** An id as messages show it: JSON (a string quoted); a value JSON cannot show (BigInt, symbol, cycle) by its type. */
function idText(id: unknown): string {
  if (id === undefined) return '(no id given)';
  try {
    const s = JSON.stringify(id);
    if (s !== undefined) return s;
  } catch {
    // a BigInt or a cycle
  }
  return `of type ${typeof id}`;
}
const MODEL_KINDS = ['pretrained_model', 'exported_model'] as const;

/**
 * The in-memory workspace and every rule. Each mutating method validates everything first and
 * only then changes state, so a thrown WorkspaceError leaves the workspace as it was.
 */
export class Core {
  version: string;
  path: string;
  current_time: string;
  unknowns: Uint8Array[] | undefined;
  readonly counters: Record<RecordKind, number>;
  readonly maps: Maps;
  /** Paths of records deleted since the last save, for save() to remove inside the folder. */
  readonly removedPaths = new Map<string, RecordKind>();

  constructor(
    readonly dir: string,
    msg: WorkspaceMessage,
  ) {
    this.version = msg.version;
    this.path = msg.path;
    this.current_time = msg.current_time;
    this.unknowns = unknownsOf(msg);
    this.counters = {
      dataset: msg.max_dataset_id,
      project: msg.max_project_id,
      task: msg.max_task_id,
      pretrained_model: msg.max_pretrained_model_id,
      exported_model: msg.max_exported_model_id,
    };
    this.maps = {
      dataset: new Map(),
      project: new Map(),
      task: new Map(),
      pretrained_model: new Map(),
      exported_model: new Map(),
    };
    for (const kind of KINDS) {
      const src = msg[MAP_FIELD[kind]] as Record<string, RecordOf[typeof kind]>;
      for (const [key, rec] of Object.entries(src)) this.putLoaded(kind, key, rec);
    }
  }

  /** Adds a record read from a file; dataset types are shown in ragloom's names. */
  putLoaded<K extends RecordKind>(kind: K, key: string, rec: RecordOf[K]): void {
    const entry: Entry<RecordOf[K]> = { rec: this.pick(kind, rec), unknowns: unknownsOf(rec) };
    if (kind === 'dataset') {
      const ds = entry.rec as Dataset;
      const canonical = canonicalDatasetType(ds.type);
      if (canonical !== ds.type) {
        entry.storedType = ds.type;
        ds.type = canonical;
      }
    }
    (this.maps[kind] as Map<string, Entry<RecordOf[K]>>).set(key, entry);
  }

  // A record holds exactly the proto fields, so spreading a patch can never add a stray key.
  private pick<K extends RecordKind>(kind: K, src: RecordOf[K]): RecordOf[K] {
    const out: Record<string, unknown> = {};
    for (const f of FIELDS[kind]) out[f as string] = (src as unknown as Fields)[f as string];
    return out as unknown as RecordOf[K];
  }

  // ---- message view -------------------------------------------------------------------------

  toMessage(): WorkspaceMessage {
    const maps = {} as Record<RecordKind, Record<string, unknown>>;
    for (const kind of KINDS) {
      const o: Record<string, unknown> = {};
      for (const [key, e] of this.maps[kind] as Map<string, Entry<RecordOf[RecordKind]>>) {
        Object.defineProperty(o, key, { value: this.wireRecord(kind, e), enumerable: true, writable: true, configurable: true });
      }
      maps[kind] = o;
    }
    const msg = {
      version: this.version,
      path: this.path,
      datasets: maps.dataset,
      projects: maps.project,
      tasks: maps.task,
      max_dataset_id: this.counters.dataset,
      max_project_id: this.counters.project,
      max_task_id: this.counters.task,
      current_time: this.current_time,
      max_pretrained_model_id: this.counters.pretrained_model,
      pretrained_models: maps.pretrained_model,
      max_exported_model_id: this.counters.exported_model,
      exported_models: maps.exported_model,
    } as WorkspaceMessage;
    return setUnknowns(msg, this.unknowns);
  }

  /** The record as it goes on the wire: stored dataset spelling and unknown fields restored. */
  wireRecord<K extends RecordKind>(kind: K, e: Entry<RecordOf[K]>): RecordOf[K] {
    const rec = { ...e.rec };
    if (kind === 'dataset' && e.storedType !== undefined) (rec as Dataset).type = e.storedType;
    return setUnknowns(rec, e.unknowns);
  }

  // ---- lookups ------------------------------------------------------------------------------

  entry<K extends RecordKind>(kind: K, id: string): Entry<RecordOf[K]> | undefined {
    return (this.maps[kind] as Map<string, Entry<RecordOf[K]>>).get(id);
  }

  private must<K extends RecordKind>(kind: K, id: string): Entry<RecordOf[K]> {
    const e = typeof id === 'string' ? this.entry(kind, id) : undefined;
    return e ?? fail('NOT_FOUND', [LABEL[kind], idText(id)]);
  }

  get<K extends RecordKind>(kind: K, id: string): RecordOf[K] | undefined {
    const e = this.entry(kind, id);
    return e ? { ...e.rec } : undefined;
  }

  list<K extends RecordKind>(kind: K): RecordOf[K][] {
    return [...(this.maps[kind] as Map<string, Entry<RecordOf[K]>>).values()].map((e) => ({ ...e.rec }));
  }

  private values<K extends RecordKind>(kind: K): RecordOf[K][] {
    return [...(this.maps[kind] as Map<string, Entry<RecordOf[K]>>).values()].map((e) => e.rec);
  }

  // ---- field checks -------------------------------------------------------------------------

  private checkKeys(kind: RecordKind, fields: unknown, allowed: readonly string[]): Fields {
    if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
      fail('INVALID_VALUE', ['fields', LABEL[kind], 'must be given as an object']);
    }
    const out: Fields = {};
    for (const [k, v] of Object.entries(fields as Fields)) {
      if (v === undefined) continue;
      if (!allowed.includes(k)) {
        if ((FIELDS[kind] as readonly string[]).includes(k)) fail('READ_ONLY_FIELD', [k, LABEL[kind]]);
        fail('UNKNOWN_FIELD', [k, LABEL[kind], allowed.join(', ')]);
      }
      if (k === 'exported_type') {
        if (v !== 0 && v !== 1) fail('INVALID_VALUE', [k, LABEL[kind], 'must be 0 (inference model) or 1 (lite model)']);
      } else if (typeof v !== 'string') {
        fail('INVALID_VALUE', [k, LABEL[kind], 'must be a string']);
      }
      out[k] = v;
    }
    // PaddleX never sets a task's name, so only tasks may leave it empty.
    if (kind !== 'task' && 'name' in out && (out.name as string).trim() === '') {
      fail('INVALID_VALUE', ['name', LABEL[kind], 'must not be empty']);
    }
    if ('path' in out) {
      if ((out.path as string).trim() === '') fail('INVALID_VALUE', ['path', LABEL[kind], 'must not be empty']);
      // No file system takes it: save() would fail after the snapshot was committed.
      if ((out.path as string).includes('\0')) fail('INVALID_VALUE', ['path', LABEL[kind], 'must not contain NUL characters']);
      // Entity paths are absolute in PaddleX; a relative one would depend on the caller's cwd.
      out.path = isAbsolute(out.path as string) ? out.path : resolve(out.path as string);
    }
    return out;
  }

  private require(kind: RecordKind, f: Fields, names: readonly string[]): void {
    for (const n of names) if (f[n] === undefined || f[n] === '') fail('MISSING_FIELD', [n, LABEL[kind]]);
  }

  private checkDatasetType(t: string): void {
    if (isDatasetType(t)) return;
    const hint = LEGACY_DATASET_TYPES[t];
    fail('INVALID_DATASET_TYPE', [String(t), hint ? ` (PaddleX's "${t}" is "${hint}")` : '']);
  }

  private checkProjectType(t: string): void {
    if (!isProjectType(t)) fail('INVALID_PROJECT_TYPE', [t]);
  }

  private checkBinding(pid: string, projectType: string, did: string): void {
    const ds = this.must('dataset', did).rec;
    if (!compatible(ds.type, projectType)) {
      const fits = isDatasetType(ds.type)
        ? `a ${ds.type} dataset fits projects of type ${COMPATIBLE_PROJECT_TYPES[ds.type].join(' / ')}`
        : `"${ds.type}" is not a known dataset type`;
      fail('TYPE_MISMATCH', [`Dataset ${did} (${ds.type}) cannot be bound to project ${pid} (${projectType}); ${fits}.`]);
    }
  }

  /** The project's bound dataset must exist and fit, as a task needs (PaddleX checks existence). */
  private checkBound(pid: string): void {
    const pj = this.must('project', pid).rec;
    if (!pj.did) fail('PROJECT_NOT_BOUND', [`Project ${pid} has no dataset bound; call bindDataset() before creating a task.`]);
    if (!this.entry('dataset', pj.did)) {
      fail('PROJECT_NOT_BOUND', [`Project ${pid} is bound to dataset ${pj.did}, which does not exist.`]);
    }
    this.checkBinding(pid, pj.type, pj.did);
  }

  private checkParent(taskId: string | undefined, pid: string, parentId: string): void {
    const parent = this.entry('task', parentId)?.rec;
    if (!parent) fail('INVALID_PARENT', [`Parent task ${parentId} does not exist.`]);
    if (parent.pid !== pid) {
      fail('INVALID_PARENT', [`Parent task ${parentId} belongs to project ${parent.pid}, not ${pid}.`]);
    }
    // Walk up from the new parent; meeting the task itself means a prune cycle.
    const seen = new Set<string>();
    for (let t: Task | undefined = parent; t; t = t.parent_id ? this.entry('task', t.parent_id)?.rec : undefined) {
      if (t.id === taskId) fail('INVALID_PARENT', [`Task ${taskId} cannot descend from itself (via ${parentId}).`]);
      if (seen.has(t.id)) break;
      seen.add(t.id);
    }
  }

  private checkModelOwner(pid: string, tid: string): Project {
    const pj = this.must('project', pid).rec;
    const task = this.must('task', tid).rec;
    if (task.pid !== pid) fail('TASK_PROJECT_MISMATCH', [tid, task.pid, pid]);
    return pj;
  }

  // ---- create -------------------------------------------------------------------------------

  /** Next id from the counter; ids already in the map (hand-edited files) are skipped, not reused. */
  private nextId(kind: RecordKind): { id: string; n: number } {
    let n = Math.max(this.counters[kind], 0) + 1;
    while (this.entry(kind, formatId(kind, n))) n++;
    return { id: formatId(kind, n), n };
  }

  create<K extends RecordKind>(kind: K, input: InputOf[K]): RecordOf[K] {
    const f = this.checkKeys(kind, input, CREATE_FIELDS[kind]);
    const { id, n } = this.nextId(kind);
    const now = localTime();
    const str = (k: string): string => (f[k] as string | undefined) ?? '';
    let rec: Dataset | Project | Task | PretrainedModel | ExportedModel;
    switch (kind) {
      case 'dataset':
        this.require(kind, f, ['name', 'type']);
        this.checkDatasetType(str('type'));
        rec = { id, name: str('name'), desc: str('desc'), type: str('type'), path: str('path') || join(this.dir, 'datasets', id), create_time: now };
        break;
      case 'project':
        this.require(kind, f, ['name', 'type']);
        this.checkProjectType(str('type'));
        if (str('did')) this.checkBinding(id, str('type'), str('did'));
        rec = { id, name: str('name'), desc: str('desc'), type: str('type'), did: str('did'), path: str('path') || join(this.dir, 'projects', id), create_time: now };
        break;
      case 'task': {
        this.require(kind, f, ['pid']);
        this.checkBound(str('pid'));
        if (str('parent_id')) this.checkParent(undefined, str('pid'), str('parent_id'));
        const pj = this.must('project', str('pid')).rec;
        rec = { id, name: str('name'), desc: str('desc'), pid: pj.id, path: str('path') || join(pj.path, id), create_time: now, parent_id: str('parent_id') };
        break;
      }
      case 'pretrained_model':
      case 'exported_model': {
        this.require(kind, f, kind === 'exported_model' ? ['name', 'pid', 'tid', 'path'] : ['name', 'pid', 'tid']);
        const pj = this.checkModelOwner(str('pid'), str('tid'));
        const base = { id, name: str('name'), model: str('model'), type: pj.type, pid: str('pid'), tid: str('tid'), create_time: now, path: str('path') || join(this.dir, 'pretrain', id) };
        rec = kind === 'exported_model' ? { ...base, exported_type: (f.exported_type as number | undefined) ?? 0 } : base;
        break;
      }
    }
    // All checks passed: only now touch the state.
    this.counters[kind] = n;
    (this.maps[kind] as Map<string, Entry<RecordOf[K]>>).set(id, { rec: rec as RecordOf[K] });
    return { ...(rec as RecordOf[K]) };
  }

  // ---- update -------------------------------------------------------------------------------

  update<K extends RecordKind>(kind: K, id: string, patch: PatchOf[K]): RecordOf[K] {
    const e = this.must(kind, id);
    const f = this.checkKeys(kind, patch, UPDATE_FIELDS[kind]);
    const next = { ...e.rec, ...f } as RecordOf[K];
    let storedType = e.storedType;
    switch (kind) {
      case 'dataset': {
        const ds = next as Dataset;
        if ('type' in f && f.type !== (e.rec as Dataset).type) {
          this.checkDatasetType(ds.type);
          for (const pj of this.values('project')) {
            if (pj.did === id && !compatible(ds.type, pj.type)) {
              fail('TYPE_MISMATCH', [`Dataset ${id} cannot become ${ds.type}: bound project ${pj.id} is ${pj.type}.`]);
            }
          }
          storedType = undefined;
        }
        break;
      }
      case 'project': {
        const pj = next as Project;
        const old = e.rec as Project;
        if ('type' in f && pj.type !== old.type) {
          this.checkProjectType(pj.type);
          const used =
            this.values('task').some((t) => t.pid === id) ||
            MODEL_KINDS.some((k) => this.values(k).some((m) => m.pid === id));
          if (used) fail('TYPE_LOCKED', [id]);
        }
        if (pj.did && (('did' in f && pj.did !== old.did) || ('type' in f && pj.type !== old.type))) {
          this.checkBinding(id, pj.type, pj.did);
        }
        break;
      }
      case 'task': {
        const t = next as Task;
        if ('parent_id' in f && t.parent_id) this.checkParent(id, t.pid, t.parent_id);
        break;
      }
      case 'pretrained_model':
      case 'exported_model': {
        const m = next as PretrainedModel;
        if ('pid' in f || 'tid' in f) m.type = this.checkModelOwner(m.pid, m.tid).type;
        break;
      }
    }
    (this.maps[kind] as Map<string, Entry<RecordOf[K]>>).set(id, { rec: next, unknowns: e.unknowns, storedType });
    return { ...next };
  }

  bind(pid: string, did: string): Project {
    const pj = this.must('project', pid).rec;
    if (typeof did !== 'string' || did === '') fail('INVALID_VALUE', ['did', 'Project', 'must name a dataset']);
    this.checkBinding(pid, pj.type, did);
    return this.update('project', pid, { did });
  }

  // ---- delete -------------------------------------------------------------------------------

  delete<K extends RecordKind>(kind: K, id: string, options: DeleteOptions = {}): DeleteResult {
    const e = this.must(kind, id);
    if (options === null || typeof options !== 'object') fail('INVALID_VALUE', ['options', LABEL[kind], 'must be an object']);
    const cascade = options.cascade === true;
    const gone: Partial<Record<RecordKind, string[]>> = { [kind]: [id] };
    if (kind === 'dataset') {
      const users = this.values('project').filter((p) => p.did === id).map((p) => p.id);
      if (users.length) fail('DATASET_IN_USE', [id, String(users.length), users.join(', ')]);
    } else if (kind === 'project' || kind === 'task') {
      const tasks =
        kind === 'project' ? this.values('task').filter((t) => t.pid === id).map((t) => t.id) : this.descendants(id);
      if (kind === 'task' && tasks.length && !cascade) fail('TASK_HAS_CHILDREN', [id, tasks.join(', ')]);
      gone.task = kind === 'task' ? [id, ...tasks] : tasks;
      if (kind === 'project') gone.project = [id];
    }
    // Models pointing at a removed project or task: deleted with cascade, otherwise reported.
    const goneProjects = new Set(gone.project ?? []);
    const goneTasks = new Set(gone.task ?? []);
    const hit: string[] = [];
    for (const mk of MODEL_KINDS) {
      if (kind === mk) continue;
      const ids = this.values(mk).filter((m) => goneProjects.has(m.pid) || goneTasks.has(m.tid)).map((m) => m.id);
      if (cascade && ids.length) gone[mk] = ids;
      hit.push(...ids);
    }
    const deleted: string[] = [];
    for (const k of KINDS) {
      for (const rid of gone[k] ?? []) {
        const rec = this.entry(k, rid)?.rec;
        if (!rec) continue;
        // Exported models live at the caller's path: never removed (PaddleX rmtree's it).
        if (k !== 'exported_model' && rec.path) this.removedPaths.set(rec.path, k);
        this.maps[k].delete(rid);
        deleted.push(rid);
      }
    }
    return { deleted, orphanedModels: cascade ? [] : hit };
  }

  /** Every task below `id` in the prune tree. */
  private descendants(id: string): string[] {
    const out: string[] = [];
    const queue = [id];
    while (queue.length) {
      const cur = queue.shift() as string;
      for (const t of this.values('task')) {
        if (t.parent_id === cur && t.id !== id && !out.includes(t.id)) {
          out.push(t.id);
          queue.push(t.id);
        }
      }
    }
    return out;
  }

  // ---- check --------------------------------------------------------------------------------

  /** What a loaded file holds that ragloom's rules would not allow (PaddleX allows all of it). */
  check(): WorkspaceIssue[] {
    const issues: WorkspaceIssue[] = [];
    const add = (kind: RecordKind, id: string, message: string): void => void issues.push({ kind, id, message });
    for (const kind of KINDS) {
      let max = 0;
      for (const [key, e] of this.maps[kind] as Map<string, Entry<RecordOf[RecordKind]>>) {
        if (e.rec.id !== key) add(kind, key, `map key ${key} holds a record with id "${e.rec.id}"`);
        max = Math.max(max, idNumber(kind, key) ?? 0);
      }
      if (max > this.counters[kind]) {
        add(kind, '', `counter ${COUNTER_FIELD[kind]} = ${this.counters[kind]} is below the largest id number ${max}`);
      }
    }
    for (const ds of this.values('dataset')) {
      if (!isDatasetType(ds.type)) add('dataset', ds.id, `unknown dataset type "${ds.type}"`);
    }
    for (const pj of this.values('project')) {
      if (!isProjectType(pj.type)) add('project', pj.id, `unknown project type "${pj.type}"`);
      const ds = pj.did ? this.entry('dataset', pj.did)?.rec : undefined;
      if (pj.did && !ds) add('project', pj.id, `bound dataset ${pj.did} does not exist`);
      if (ds && !compatible(ds.type, pj.type)) add('project', pj.id, `bound dataset ${ds.id} (${ds.type}) does not fit type ${pj.type}`);
    }
    for (const t of this.values('task')) {
      if (!this.entry('project', t.pid)) add('task', t.id, `project ${t.pid} does not exist`);
      if (t.parent_id) {
        const parent = this.entry('task', t.parent_id)?.rec;
        if (!parent) add('task', t.id, `parent task ${t.parent_id} does not exist`);
        else if (parent.pid !== t.pid) add('task', t.id, `parent task ${t.parent_id} belongs to project ${parent.pid}`);
      }
    }
    for (const mk of MODEL_KINDS) {
      for (const m of this.values(mk)) {
        if (!this.entry('project', m.pid)) add(mk, m.id, `project ${m.pid} does not exist`);
        const task = this.entry('task', m.tid)?.rec;
        if (!task) add(mk, m.id, `task ${m.tid} does not exist`);
        else if (task.pid !== m.pid) add(mk, m.id, `task ${m.tid} belongs to project ${task.pid}, not ${m.pid}`);
      }
    }
    return issues;
  }
}

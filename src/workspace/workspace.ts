import { join, resolve } from 'node:path';
import {
  decodeRecord,
  decodeWorkspace,
  emptyWorkspaceMessage,
  encodeRecord,
  encodeWorkspace,
  setUnknowns,
  unknownsOf,
  workspaceFromJSON,
} from './codec.js';
import { Core, KINDS, type Entry } from './core.js';
import { localTime } from './ids.js';
import { fail } from './errors.js';
import { faultPoint } from '../util/index.js';
import {
  commitSnapshot,
  FILES,
  isInside,
  mkdir,
  readWorkspaceFile,
  rm,
  scanRecordDirs,
  writeIfChanged,
  type LoadSource,
  type SaveStep,
} from './store.js';
import type {
  DeleteOptions,
  DeleteResult,
  InputOf,
  PatchOf,
  Project,
  RecordKind,
  RecordOf,
  WorkspaceIssue,
  WorkspaceMessage,
} from './types.js';

/** The version PaddleX 1.3 – 2.1 writes, and assumes for a file without one. */
export const WORKSPACE_VERSION = '0.2.0';

/**
 * One kind of record (`ws.datasets`, `ws.projects`, …). Records handed out are copies: editing
 * one changes nothing until it goes through `update()`, where the rules are checked.
 */
export class Collection<K extends RecordKind> {
  readonly #core: Core;
  constructor(
    core: Core,
    readonly kind: K,
  ) {
    this.#core = core;
  }

  /**
   * Adds a record with the next id of the kind's counter and the current local time.
   * @throws WorkspaceError on a missing, unknown, read-only or invalid field, or a broken rule.
   */
  create(fields: InputOf[K]): RecordOf[K] {
    return this.#core.create(this.kind, fields);
  }

  /** The record, or undefined when no record has this id. */
  get(id: string): RecordOf[K] | undefined {
    return this.#core.get(this.kind, id);
  }

  has(id: string): boolean {
    return this.#core.entry(this.kind, id) !== undefined;
  }

  /** All records, in map order (the file's order, then creation order). */
  list(): RecordOf[K][] {
    return this.#core.list(this.kind);
  }

  get size(): number {
    return this.#core.maps[this.kind].size;
  }

  /**
   * Changes some fields. `id`, `create_time` (and a task's `pid`, a model's `type`) are read-only.
   * @throws WorkspaceError NOT_FOUND for an unknown id, or the code of the broken rule.
   */
  update(id: string, patch: PatchOf[K]): RecordOf[K] {
    return this.#core.update(this.kind, id, patch);
  }

  /**
   * Removes a record. A dataset bound to a project is refused (DATASET_IN_USE). A project takes
   * its tasks with it; a task with child prune tasks needs `{ cascade: true }`. Models of a
   * removed project or task are kept and listed in `orphanedModels`, or removed with `cascade`.
   * Its folder inside the workspace is removed at the next `save()`.
   */
  delete(id: string, options?: DeleteOptions): DeleteResult {
    return this.#core.delete(this.kind, id, options);
  }
}

/** The absolute folder of a `dir` argument; a value that cannot name a folder is refused (INVALID_VALUE). */
function folder(dir: unknown): string {
  if (typeof dir !== 'string' || dir.includes('\0')) fail('INVALID_VALUE', ['dir', 'Workspace', 'must be a folder path (a string without NUL characters)']);
  return resolve(dir);
}

/** Options of {@link Workspace.save}. */
export interface SaveOptions {
  /**
   * Called after each step of the save (see docs/workspace.md); the crash tests kill the
   * process from here. Not needed in normal use.
   */
  onStep?: (step: SaveStep) => void;
}

/** Counter values of the workspace (the `max_*_id` fields). */
export interface Counters {
  max_dataset_id: number;
  max_project_id: number;
  max_task_id: number;
  max_pretrained_model_id: number;
  max_exported_model_id: number;
}

/** Each kind's root inside the folder; only there does save() remove a deleted record's folder. */
const MANAGED_ROOT: Readonly<Record<RecordKind, string | undefined>> = {
  dataset: 'datasets',
  project: 'projects',
  task: 'projects',
  pretrained_model: 'pretrain',
  exported_model: undefined,
};

/**
 * A PaddleX RESTful/GUI workspace folder.
 *
 * @example
 * const ws = await Workspace.open('/data/paddlex_workspace');
 * const ds = ws.datasets.create({ name: 'insects', type: 'detection_voc' });
 * const pj = ws.projects.create({ name: 'detector', type: 'detection' });
 * ws.bindDataset(pj.id, ds.id);
 * ws.tasks.create({ pid: pj.id });
 * await ws.save();
 */
export class Workspace {
  /** Absolute folder of the workspace (`Workspace.path` is set to it on load, as PaddleX does). */
  readonly dir: string;
  /** Which file was read: `newest` (flag present), `bak`, or `new`. */
  readonly loadedFrom: LoadSource;
  /** Ids PaddleX-style recovery read from `info.pb` files because the file had no datasets or projects. */
  readonly recovered: string[];
  readonly datasets: Collection<'dataset'>;
  readonly projects: Collection<'project'>;
  readonly tasks: Collection<'task'>;
  readonly pretrainedModels: Collection<'pretrained_model'>;
  readonly exportedModels: Collection<'exported_model'>;
  readonly #core: Core;
  #saving: Promise<void> = Promise.resolve();

  private constructor(dir: string, msg: WorkspaceMessage, loadedFrom: LoadSource, recovered: string[] = []) {
    this.dir = dir;
    this.loadedFrom = loadedFrom;
    this.recovered = recovered;
    // PaddleX sets version before parsing (so a file without one reads as 0.2.0) and
    // overwrites path with the folder it was started on. Entity paths are left as stored.
    const m = setUnknowns({ ...msg, version: msg.version || WORKSPACE_VERSION, path: dir }, unknownsOf(msg));
    this.#core = new Core(dir, m);
    this.datasets = new Collection(this.#core, 'dataset');
    this.projects = new Collection(this.#core, 'project');
    this.tasks = new Collection(this.#core, 'task');
    this.pretrainedModels = new Collection(this.#core, 'pretrained_model');
    this.exportedModels = new Collection(this.#core, 'exported_model');
  }

  /**
   * Opens a workspace folder the way PaddleX does: `workspace.newest.pb` if `.pb.success`
   * exists, else `workspace.bak.pb`, else a new, empty workspace (the folder is made on save).
   * If the loaded workspace has no datasets and no projects, records are recovered from
   * `datasets/D*\/info.pb`, `projects/P*\/info.pb` and `projects/P*\/T*\/info.pb`.
   * @throws WorkspaceError CORRUPT_FILE when the chosen file cannot be parsed (PaddleX would
   *   start empty and overwrite it two seconds later).
   */
  static async open(dir: string): Promise<Workspace> {
    const abs = folder(dir);
    const { source, file, bytes } = await readWorkspaceFile(abs);
    const msg = bytes ? decodeWorkspace(bytes, file) : emptyWorkspaceMessage();
    const ws = new Workspace(abs, msg, source);
    if (ws.datasets.size === 0 && ws.projects.size === 0) await ws.#recover();
    return ws;
  }

  /** A workspace for folder `dir` built from binary Workspace bytes (nothing is read from disk). */
  static fromBytes(bytes: Uint8Array, dir: string): Workspace {
    return new Workspace(folder(dir), decodeWorkspace(bytes), 'new');
  }

  /** A workspace for folder `dir` built from the JSON form (`toJSON()` output or its string). */
  static fromJSON(json: string | object, dir: string): Workspace {
    return new Workspace(folder(dir), workspaceFromJSON(json), 'new');
  }

  /**
   * Decodes binary `suitebackend.Workspace` bytes into a plain object with the proto's field
   * names and every field present. Values are as stored (no type mapping); unknown fields ride
   * along as the non-enumerable `$unknowns` so that {@link Workspace.encode} writes them back.
   */
  static decode(bytes: Uint8Array): WorkspaceMessage {
    return decodeWorkspace(bytes);
  }

  /** Encodes a plain Workspace message (as `decode()` returns it) to binary protobuf. */
  static encode(msg: WorkspaceMessage): Uint8Array {
    return encodeWorkspace(msg);
  }

  get version(): string {
    return this.#core.version;
  }

  /** `current_time` of the last save, `YYYY-MM-DD HH:MM:SS` local time. */
  get currentTime(): string {
    return this.#core.current_time;
  }

  get counters(): Counters {
    const c = this.#core.counters;
    return {
      max_dataset_id: c.dataset,
      max_project_id: c.project,
      max_task_id: c.task,
      max_pretrained_model_id: c.pretrained_model,
      max_exported_model_id: c.exported_model,
    };
  }

  /**
   * Binds a project to a dataset (PaddleX: PUT /workspace `{struct:'project', attr_dict:{did}}`).
   * @throws WorkspaceError NOT_FOUND for either id, TYPE_MISMATCH when the dataset type does
   *   not fit the project type (classification→classification, segmentation→segmentation,
   *   detection_voc→detection, detection_coco→detection/segmentation/instance_segmentation).
   */
  bindDataset(projectId: string, datasetId: string): Project {
    return this.#core.bind(projectId, datasetId);
  }

  /** Problems in loaded data that the rules would refuse (dangling ids, bad types, low counters). */
  check(): WorkspaceIssue[] {
    return this.#core.check();
  }

  /** The Workspace message `encode()` writes, as a plain object with proto field names. */
  toJSON(): WorkspaceMessage {
    return this.#core.toMessage();
  }

  /** Binary protobuf of the whole Workspace message, exactly what `save()` writes. */
  encode(): Uint8Array {
    return encodeWorkspace(this.#core.toMessage());
  }

  /**
   * Writes the workspace crash-safely (see `commitSnapshot` in store.ts and docs/workspace.md),
   * then makes each dataset / project / task / pretrained-model folder that lies inside the
   * workspace, writes `info.pb` for datasets, projects and tasks, and removes the folders of
   * records deleted since the last save. Saves run one at a time.
   */
  save(options: SaveOptions = {}): Promise<void> {
    const run = this.#saving.then(() => this.#save(options));
    this.#saving = run.catch(() => undefined);
    return run;
  }

  async #save(options: SaveOptions): Promise<void> {
    const core = this.#core;
    const step = (s: SaveStep): void => { faultPoint(`workspace:${s}`); options.onStep?.(s); };
    core.current_time = localTime();
    const bytes = this.encode();
    const removed = [...core.removedPaths];
    await commitSnapshot(this.dir, bytes, step);
    await this.#writeRecordFiles();
    step('records-written');
    await this.#removeFolders(removed);
    step('removed');
  }

  async #writeRecordFiles(): Promise<void> {
    const core = this.#core;
    for (const kind of ['dataset', 'project', 'task', 'pretrained_model'] as const) {
      for (const e of core.maps[kind].values() as IterableIterator<Entry<RecordOf[typeof kind]>>) {
        const p = e.rec.path;
        // Never write into folders outside the workspace: they belong to the user.
        if (!p || !isInside(this.dir, p)) continue;
        await mkdir(p, { recursive: true });
        // PaddleX never writes info.pb for models; recovery reads it only for these three.
        if (kind === 'pretrained_model') continue;
        const info = encodeRecord(kind, core.wireRecord(kind, e as Entry<RecordOf[typeof kind]>));
        await writeIfChanged(join(p, FILES.info), info, p);
      }
    }
  }

  async #removeFolders(removed: [string, RecordKind][]): Promise<void> {
    const core = this.#core;
    const alive: string[] = [];
    for (const kind of KINDS) for (const e of core.maps[kind].values()) if (e.rec.path) alive.push(e.rec.path);
    for (const [p, kind] of removed) {
      core.removedPaths.delete(p);
      const root = MANAGED_ROOT[kind];
      if (!root || !isInside(join(this.dir, root), p)) continue;
      // A record still living at (or below) this path keeps it.
      if (alive.some((a) => a === p || isInside(p, a))) continue;
      await rm(p, { recursive: true, force: true });
    }
  }

  /** PaddleX's recover_workspace, except that counters never go down. */
  async #recover(): Promise<void> {
    const { datasets, projects } = await scanRecordDirs(this.dir);
    const core = this.#core;
    const found: string[] = [];
    const load = <K extends 'dataset' | 'project' | 'task'>(kind: K, key: string, bytes: Uint8Array): boolean => {
      try {
        core.putLoaded(kind, key, decodeRecord(kind, bytes));
        found.push(key);
        return true;
      } catch {
        return false; // PaddleX logs an unreadable info.pb and goes on
      }
    };
    let maxD = 0;
    let maxP = 0;
    let maxT = 0;
    for (const d of datasets) {
      maxD = Math.max(maxD, d.number);
      if (d.info) load('dataset', d.name, d.info);
    }
    for (const p of projects) {
      maxP = Math.max(maxP, p.number);
      for (const t of p.children ?? []) maxT = Math.max(maxT, t.number);
      if (!p.info) continue;
      load('project', p.name, p.info);
      for (const t of p.children ?? []) if (t.info) load('task', t.name, t.info);
    }
    if (!datasets.length && !projects.length) return;
    core.counters.dataset = Math.max(core.counters.dataset, maxD);
    core.counters.project = Math.max(core.counters.project, maxP);
    core.counters.task = Math.max(core.counters.task, maxT);
    this.recovered.push(...found);
  }
}


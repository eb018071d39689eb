/**
 * Record shapes of the PaddleX workspace. Field names are the proto's (snake_case), so a record
 * is exactly the message PaddleX stores; ids and times are strings, as in the proto.
 */

/** `suitebackend.Dataset`. */
export interface Dataset {
  id: string;
  name: string;
  desc: string;
  /** One of {@link DATASET_TYPES} for records made by ragloom; files may hold other strings. */
  type: string;
  path: string;
  create_time: string;
}

/** `suitebackend.Project`. */
export interface Project {
  id: string;
  name: string;
  desc: string;
  /** One of {@link PROJECT_TYPES}. */
  type: string;
  /** Bound dataset id; "" until {@link Workspace.bindDataset} is called. */
  did: string;
  path: string;
  create_time: string;
}

/** `suitebackend.Task`. */
export interface Task {
  id: string;
  /** PaddleX never sets it; kept for the wire. */
  name: string;
  desc: string;
  pid: string;
  path: string;
  create_time: string;
  /** Parent task of a prune-retrain task; "" for ordinary training. */
  parent_id: string;
}

/** `suitebackend.PretrainedModel`. */
export interface PretrainedModel {
  id: string;
  name: string;
  /** Training model name, e.g. `FasterRCNN-ResNet18-WITH_FPN`. */
  model: string;
  /** The owning project's type. */
  type: string;
  pid: string;
  tid: string;
  create_time: string;
  path: string;
}

/** `suitebackend.ExportedModel`. */
export interface ExportedModel extends PretrainedModel {
  /** 0 = inference (server) model, 1 = lite model. */
  exported_type: number;
}

/**
 * `suitebackend.Workspace` as a plain object. Maps are keyed by record id. A message decoded
 * from bytes may carry a non-enumerable `$unknowns` (raw fields this schema does not know),
 * on itself and on each record, which encoding writes back.
 */
export interface WorkspaceMessage {
  version: string;
  path: string;
  datasets: Record<string, Dataset>;
  projects: Record<string, Project>;
  tasks: Record<string, Task>;
  max_dataset_id: number;
  max_project_id: number;
  max_task_id: number;
  current_time: string;
  max_pretrained_model_id: number;
  pretrained_models: Record<string, PretrainedModel>;
  max_exported_model_id: number;
  exported_models: Record<string, ExportedModel>;
}

/** The five record kinds, named as the CLI and error messages name them. */
export type RecordKind = 'dataset' | 'project' | 'task' | 'pretrained_model' | 'exported_model';

export interface RecordOf {
  dataset: Dataset;
  project: Project;
  task: Task;
  pretrained_model: PretrainedModel;
  exported_model: ExportedModel;
}

/** Dataset types ragloom writes (the names of the proto's comment). */
export const DATASET_TYPES = ['classification', 'segmentation', 'detection_voc', 'detection_coco'] as const;
export type DatasetType = (typeof DATASET_TYPES)[number];

/** Project types, as PaddleX's ProjectType enum (0..4) names them. */
export const PROJECT_TYPES = [
  'classification',
  'detection',
  'segmentation',
  'instance_segmentation',
  'remote_segmentation',
] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

/** Fields accepted by `ws.datasets.create()`. */
export interface DatasetInput {
  name: string;
  type: string;
  desc?: string;
  /** @default `<dir>/datasets/<id>` */
  path?: string;
}
export type DatasetPatch = Partial<Pick<Dataset, 'name' | 'desc' | 'type' | 'path'>>;

/** Fields accepted by `ws.projects.create()`. */
export interface ProjectInput {
  name: string;
  type: string;
  desc?: string;
  /** Bind at creation; same checks as {@link Workspace.bindDataset}. */
  did?: string;
  /** @default `<dir>/projects/<id>` */
  path?: string;
}
export type ProjectPatch = Partial<Pick<Project, 'name' | 'desc' | 'type' | 'did' | 'path'>>;

/** Fields accepted by `ws.tasks.create()`. */
export interface TaskInput {
  pid: string;
  name?: string;
  desc?: string;
  /** An existing task of the same project (makes a prune-retrain task). */
  parent_id?: string;
  /** @default `<project path>/<id>` */
  path?: string;
}
export type TaskPatch = Partial<Pick<Task, 'name' | 'desc' | 'parent_id' | 'path'>>;

/** Fields accepted by `ws.pretrainedModels.create()`; `type` is taken from the project. */
export interface PretrainedModelInput {
  name: string;
  pid: string;
  tid: string;
  model?: string;
  /** @default `<dir>/pretrain/<id>` */
  path?: string;
}
export type PretrainedModelPatch = Partial<Pick<PretrainedModel, 'name' | 'model' | 'pid' | 'tid' | 'path'>>;

/** Fields accepted by `ws.exportedModels.create()`; the path is the caller's, as in PaddleX. */
export interface ExportedModelInput {
  name: string;
  pid: string;
  tid: string;
  path: string;
  model?: string;
  /** 0 = inference (server) model, 1 = lite model. @default 0 */
  exported_type?: number;
}
export type ExportedModelPatch = Partial<
  Pick<ExportedModel, 'name' | 'model' | 'pid' | 'tid' | 'path' | 'exported_type'>
>;

export interface InputOf {
  dataset: DatasetInput;
  project: ProjectInput;
  task: TaskInput;
  pretrained_model: PretrainedModelInput;
  exported_model: ExportedModelInput;
}
export interface PatchOf {
  dataset: DatasetPatch;
  project: ProjectPatch;
  task: TaskPatch;
  pretrained_model: PretrainedModelPatch;
  exported_model: ExportedModelPatch;
}

/** Options of `delete()`. */
export interface DeleteOptions {
  /**
   * Also delete what points at the record: child prune tasks of a task, and the pretrained /
   * exported models of a deleted project or task. Without it a task with child tasks is
   * refused, and models are kept and listed in {@link DeleteResult.orphanedModels}.
   * @default false
   */
  cascade?: boolean;
}

/** What a `delete()` did. */
export interface DeleteResult {
  /** Every id removed, the requested one first. */
  deleted: string[];
  /** Models kept whose `pid` or `tid` now names a deleted record (empty with `cascade`). */
  orphanedModels: string[];
}

/** A problem found by {@link Workspace.check} in a loaded file (PaddleX allows all of these). */
export interface WorkspaceIssue {
  kind: RecordKind;
  id: string;
  message: string;
}

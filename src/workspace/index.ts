/**
 * ragloom/workspace: the PaddleX RESTful/GUI workspace record model — typed records, a store
 * and a protobuf codec byte-compatible with `package suitebackend`. See docs/workspace.md.
 */
export { Workspace, Collection, WORKSPACE_VERSION } from './workspace.js';
export type { SaveOptions, Counters } from './workspace.js';
export { WorkspaceError, ERROR_CODES } from './errors.js';
export type { WorkspaceErrorCode } from './errors.js';
export { decodeWorkspace, encodeWorkspace, decodeRecord, encodeRecord, workspaceFromJSON } from './codec.js';
export { PROTO_TEXT } from './schema.js';
export { FILES, SAVE_STEPS } from './store.js';
export type { LoadSource, SaveStep } from './store.js';
export { formatId, localTime } from './ids.js';
export { COMPATIBLE_PROJECT_TYPES, LEGACY_DATASET_TYPES } from './rules.js';
export { DATASET_TYPES, PROJECT_TYPES } from './types.js';
export type {
  Dataset,
  Project,
  Task,
  PretrainedModel,
  ExportedModel,
  WorkspaceMessage,
  RecordKind,
  RecordOf,
  DatasetType,
  ProjectType,
  DatasetInput,
  DatasetPatch,
  ProjectInput,
  ProjectPatch,
  TaskInput,
  TaskPatch,
  PretrainedModelInput,
  PretrainedModelPatch,
  ExportedModelInput,
  ExportedModelPatch,
  DeleteOptions,
  DeleteResult,
  WorkspaceIssue,
} from './types.js';

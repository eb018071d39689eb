/**
 * Error catalogue of the workspace module: code → message template with `%s` slots.
 * docs/workspace.md lists the same codes with cause and fix.
 */
const CATALOGUE = {
  NOT_FOUND: '%s %s does not exist.',
  UNKNOWN_FIELD: 'Unknown field "%s" for %s; known fields: %s.',
  READ_ONLY_FIELD: 'Field "%s" of %s is set by the workspace and cannot be given or changed.',
  MISSING_FIELD: 'Field "%s" is required to create a %s.',
  INVALID_VALUE: 'Field "%s" of %s %s.',
  INVALID_DATASET_TYPE: 'Dataset type "%s" is not one of classification, segmentation, detection_voc, detection_coco%s.',
  INVALID_PROJECT_TYPE:
    'Project type "%s" is not one of classification, detection, segmentation, instance_segmentation, remote_segmentation.',
  TYPE_MISMATCH: '%s',
  DATASET_IN_USE: 'Dataset %s is still used by %s project(s) (%s); delete or rebind those first.',
  PROJECT_NOT_BOUND: '%s',
  INVALID_PARENT: '%s',
  TASK_HAS_CHILDREN: 'Task %s is the parent of task(s) %s; delete those first or pass { cascade: true }.',
  TASK_PROJECT_MISMATCH: 'Task %s belongs to project %s, not %s.',
  TYPE_LOCKED: 'Project %s already has tasks or models; its type can no longer change.',
  CORRUPT_FILE: 'Cannot read %s: %s',
  INVALID_MESSAGE: 'Invalid workspace message: %s',
} as const;

export type WorkspaceErrorCode = keyof typeof CATALOGUE;

/** Every rule violation of the workspace module. Nothing was changed when it is thrown. */
export class WorkspaceError extends Error {
  override name = 'WorkspaceError';
  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
    opts?: ErrorOptions,
  ) {
    super(message, opts);
  }
}

/** Throws the catalogue entry `code` with its `%s` slots filled in order. */
export function fail(code: WorkspaceErrorCode, args: readonly string[], opts?: ErrorOptions): never {
  let i = 0;
  const message = CATALOGUE[code].replace(/%s/g, () => args[i++] ?? '');
  throw new WorkspaceError(code, message, opts);
}

/** The codes, for the docs test that keeps docs/workspace.md in step. */
export const ERROR_CODES = Object.keys(CATALOGUE) as WorkspaceErrorCode[];

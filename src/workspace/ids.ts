import type { RecordKind } from './types.js';

/** Id prefix and counter field of each kind, as PaddleX's workspace.py uses them. */
export const ID_PREFIX: Readonly<Record<RecordKind, string>> = {
  dataset: 'D',
  project: 'P',
  task: 'T',
  pretrained_model: 'PM',
  exported_model: 'EM',
};

export const COUNTER_FIELD = {
  dataset: 'max_dataset_id',
  project: 'max_project_id',
  task: 'max_task_id',
  pretrained_model: 'max_pretrained_model_id',
  exported_model: 'max_exported_model_id',
} as const satisfies Record<RecordKind, string>;

/** `D0001` … `D9999`, then the plain number: `D10000`. */
export function formatId(kind: RecordKind, n: number): string {
  return ID_PREFIX[kind] + (n < 10000 ? String(n).padStart(4, '0') : String(n));
}

/**
 * The number of an id of this kind, or undefined. `P` ids must not be read as `PM` ids, so
 * the suffix must be all digits.
 */
export function idNumber(kind: RecordKind, id: string): number | undefined {
  const prefix = ID_PREFIX[kind];
  if (!id.startsWith(prefix)) return undefined;
  const digits = id.slice(prefix.length);
  return /^\d+$/.test(digits) ? Number(digits) : undefined;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** Local time as `YYYY-MM-DD HH:MM:SS`, no zone: Python's `%Y-%m-%d %H:%M:%S`. */
export function localTime(d: Date = new Date()): string {
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

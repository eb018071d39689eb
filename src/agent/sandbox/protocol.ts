/** Messages between the JavaScript sandbox's worker thread and the thread that started it. */

/** `workerData` of one run. */
export interface JsJob {
  code: string;
  /** The arguments, already JSON: they are parsed inside the sandbox so no host object enters it. */
  argsJson: string;
  memoryMb: number;
  /** Characters of stdout (and, separately, of stderr) forwarded before the rest is cut. */
  maxOutputChars: number;
}

export type FromJsWorker =
  /** The context is built and the user's code is about to run: the time limit starts now. */
  | { t: 'ready' }
  | { t: 'out'; stream: 'stdout' | 'stderr'; text: string }
  /** `value` is the JSON text of main()'s result, produced inside the sandbox. */
  | { t: 'done'; ok: true; value: string }
  | { t: 'done'; ok: false; error: string; stack: string };

/**
 * One component of a canvas while it runs: its parameters (as the DSL holds them), its outputs and
 * inputs (kept inside the parameters, `outputs[k].value`, so the DSL written back carries a paused
 * run's state exactly as RAGFlow's does), and the common parameters every component has.
 */
import type { Canvas } from './canvas.js';
import { isLazy } from './types.js';

export type Params = Record<string, unknown> & {
  outputs?: Record<string, { value?: unknown; type?: string; ref?: string; [k: string]: unknown }>;
  inputs?: Record<string, { value?: unknown; [k: string]: unknown }>;
};

/** An input element: a reference found in a component's text (`get_input_elements_from_text`). */
export interface InputElement {
  name: string;
  value: unknown;
  /** The component the reference names ('' for sys./env.). */
  cpnId: string;
}

/** What a component type does. `invoke` sets outputs; a thrown error becomes the node's `_ERROR`. */
export interface ComponentImpl {
  /** The references the component reads (for pruning a node whose upstream has not run yet, and for traces). */
  inputElements?(node: Node, canvas: Canvas): Record<string, InputElement>;
  invoke(node: Node, canvas: Canvas, kwargs: Record<string, unknown>): Promise<void>;
  /** Resets per-run state (IterationItem / LoopItem index). */
  reset?(node: Node): void;
  /** The param that names what to run first inside (Iteration / Loop). */
  start?(node: Node, canvas: Canvas): string | undefined;
  /** IterationItem / LoopItem: the body is done. */
  end?(node: Node, canvas: Canvas): boolean;
}

export class Node {
  /** IterationItem / LoopItem position; -1 when finished. */
  idx = 0;
  /** Debug inputs shown in traces (what the component actually received). */
  shownInputs: Record<string, unknown> | undefined;

  constructor(
    readonly id: string,
    readonly type: string,
    readonly params: Params,
    readonly downstream: string[],
    readonly upstream: string[],
    readonly parentId: string | undefined,
    readonly impl: ComponentImpl,
  ) {
    if (!params.outputs || typeof params.outputs !== 'object' || Array.isArray(params.outputs)) params.outputs = {};
    if (!params.inputs || typeof params.inputs !== 'object' || Array.isArray(params.inputs)) params.inputs = {};
  }

  /** `typeLower` once: component checks in the run loop are by type, case-insensitive as RAGFlow's. */
  get kind(): string {
    return this.type.toLowerCase();
  }

  param<T = unknown>(name: string): T | undefined {
    return this.params[name] as T | undefined;
  }

  /** RAGFlow `output(k)`: the value, '' when the key was never set. */
  output(key: string): unknown {
    const o = this.params.outputs![key];
    return o ? o.value ?? null : '';
  }

  /** Every output's value (RAGFlow `output()`). */
  outputs(): Record<string, unknown> {
    return Object.fromEntries(Object.entries(this.params.outputs!).map(([k, o]) => [k, o?.value ?? null]));
  }

  setOutput(key: string, value: unknown): void {
    const outs = this.params.outputs!;
    if (!outs[key] || typeof outs[key] !== 'object') outs[key] = { value: null, type: typeName(value) };
    outs[key]!.value = value;
  }

  setInput(key: string, value: unknown): void {
    const ins = this.params.inputs!;
    if (!ins[key] || typeof ins[key] !== 'object') ins[key] = { value: null };
    ins[key]!.value = value;
  }

  error(): string | null {
    const e = this.params.outputs!._ERROR?.value;
    return typeof e === 'string' && e ? e : null;
  }

  /** Clears outputs (and, unless `onlyOutputs`, inputs) — RAGFlow `reset`. */
  reset(onlyOutputs = false): void {
    for (const o of Object.values(this.params.outputs!)) if (o && typeof o === 'object') o.value = null;
    this.idx = 0;
    this.impl.reset?.(this);
    if (onlyOutputs) return;
    for (const i of Object.values(this.params.inputs!)) if (i && typeof i === 'object') i.value = null;
    this.shownInputs = undefined;
  }

  /** Outputs as JSON can carry them (a text still streaming is not data yet). */
  outputsForWire(): Record<string, unknown> {
    return Object.fromEntries(Object.entries(this.outputs()).map(([k, v]) => [k, isLazy(v) ? null : v]));
  }
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'string' || isLazy(v)) return 'str';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'boolean') return 'bool';
  return 'dict';
}

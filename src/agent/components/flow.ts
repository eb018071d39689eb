/**
 * Iteration / IterationItem and Loop / LoopItem / ExitLoop (RAGFlow `iteration*.py`, `loop*.py`).
 * The run loop re-enters the item after each pass through the body (a body node without
 * downstream goes back to its parent's start); the item ends the body when the array is used up,
 * the loop count is reached or the termination condition holds.
 */
import type { ComponentImpl, Node } from '../node.js';
import type { Canvas } from '../canvas.js';
import { materialize } from '../canvas.js';
import { isPlainObject } from '../../util/index.js';

function childOf(c: Canvas, parent: Node, kind: string): string | undefined {
  for (const n of c.nodes.values()) if (n.parentId === parent.id && n.kind === kind) return n.id;
  return undefined;
}

async function items(c: Canvas, parent: Node): Promise<unknown> {
  const ref = String(parent.param('items_ref') ?? '');
  let v = await materialize(ref ? c.getVariableValue(ref) : undefined);
  if (typeof v === 'string') {
    try {
      const parsed = JSON.parse(v);
      if (Array.isArray(parsed)) v = parsed;
    } catch {
      /* not JSON: reported below */
    }
  }
  return v;
}

function typeName(v: unknown): string {
  if (v === null || v === undefined) return "<class 'NoneType'>";
  if (typeof v === 'string') return "<class 'str'>";
  if (typeof v === 'number') return Number.isInteger(v) ? "<class 'int'>" : "<class 'float'>";
  if (typeof v === 'boolean') return "<class 'bool'>";
  return "<class 'dict'>";
}

export const ITERATION: ComponentImpl = {
  start: (n, c) => childOf(c, n, 'iterationitem'),
  async invoke(n, c) {
    const arr = await items(c, n);
    if (!Array.isArray(arr)) throw new Error(`${String(n.param('items_ref') ?? '')} must be an array, but its type is ${typeName(arr)}`);
  },
};

/** Appends each body node's output to the parent's outputs that refer to it (`outputs.k.ref`). */
function collate(c: Canvas, item: Node, parent: Node): void {
  for (const [k, o] of Object.entries(parent.params.outputs ?? {})) {
    const ref = isPlainObject(o) && typeof o.ref === 'string' ? o.ref : '';
    if (!ref.includes('@')) continue;
    const [cid, v] = [ref.slice(0, ref.indexOf('@')), ref.slice(ref.indexOf('@') + 1)];
    const child = c.nodes.get(cid);
    if (!child || child.parentId !== parent.id) continue;
    const cur = parent.output(k);
    const list = Array.isArray(cur) ? cur : [];
    list.push(child.output(v));
    parent.setOutput(k, list);
  }
}

export const ITERATION_ITEM: ComponentImpl = {
  reset(n) {
    n.idx = 0;
  },
  async invoke(n, c) {
    const parent = c.parentOf(n);
    if (!parent) throw new Error('IterationItem has no parent Iteration.');
    const arr = await items(c, parent);
    if (!Array.isArray(arr)) {
      n.idx = -1;
      throw new Error(`${String(parent.param('items_ref') ?? '')} must be an array, but its type is ${typeName(arr)}`);
    }
    if (n.idx > 0) collate(c, n, parent);
    if (n.idx >= arr.length) {
      n.idx = -1;
      return;
    }
    n.setOutput('item', arr[n.idx]);
    n.setOutput('result', arr[n.idx]);
    n.setOutput('index', n.idx);
    n.idx += 1;
  },
  end: (n) => n.idx === -1,
};

function defaultOfType(type: string): unknown {
  if (type === 'number') return 0;
  if (type === 'boolean') return false;
  if (type.startsWith('object')) return {};
  if (type.startsWith('array')) return [];
  return '';
}

export const LOOP: ComponentImpl = {
  start: (n, c) => childOf(c, n, 'loopitem'),
  async invoke(n, c) {
    const vars = Array.isArray(n.params.loop_variables) ? n.params.loop_variables : [];
    for (const item of vars) {
      if (!isPlainObject(item) || !item.variable || !item.input_mode || !item.type) throw new Error('Loop Variable is not complete.');
      const name = String(item.variable);
      if (item.input_mode === 'variable') n.setOutput(name, await materialize(c.getVariableValue(String(item.value ?? ''))));
      else if (item.input_mode === 'constant') n.setOutput(name, item.value ?? defaultOfType(String(item.type)));
      else n.setOutput(name, defaultOfType(String(item.type)));
    }
  },
};

/** LoopItem's own comparison (RAGFlow `LoopItem.evaluate_condition`): by the variable's type. */
export function loopCondition(v: unknown, op: string, value: unknown): boolean {
  if (typeof v === 'string') {
    const s = String(value ?? '');
    switch (op) {
      case 'contains': return v.includes(s);
      case 'not contains': return !v.includes(s);
      case 'start with': return v.startsWith(s);
      case 'end with': return v.endsWith(s);
      case 'is': return v === s;
      case 'is not': return v !== s;
      case 'empty': return v === '';
      case 'not empty': return v !== '';
    }
  } else if (typeof v === 'boolean') {
    const b = typeof value === 'string' ? value.toLowerCase() === 'true' : !!value;
    switch (op) {
      case 'is': return v === b;
      case 'is not': return v !== b;
      case 'empty': return false;
      case 'not empty': return true;
    }
  } else if (typeof v === 'number') {
    const x = Number(value);
    switch (op) {
      case '=': return v === x;
      case '≠': return v !== x;
      case '>': return v > x;
      case '<': return v < x;
      case '≥': return v >= x;
      case '≤': return v <= x;
      case 'empty': return false;
      case 'not empty': return true;
    }
  } else if (Array.isArray(v)) {
    switch (op) {
      case 'contains': return v.includes(value);
      case 'not contains': return !v.includes(value);
      case 'is': return JSON.stringify(v) === JSON.stringify(value);
      case 'is not': return JSON.stringify(v) !== JSON.stringify(value);
      case 'empty': return v.length === 0;
      case 'not empty': return v.length > 0;
    }
  } else if (isPlainObject(v)) {
    if (op === 'empty') return Object.keys(v).length === 0;
    if (op === 'not empty') return Object.keys(v).length > 0;
  } else if (v === null || v === undefined) {
    return op === 'empty';
  }
  throw new Error(`Invalid operator: ${op}`);
}

export const LOOP_ITEM: ComponentImpl = {
  reset(n) {
    n.idx = 0;
  },
  async invoke(n, c) {
    const parent = c.parentOf(n);
    if (!parent) throw new Error('LoopItem has no parent Loop.');
    const max = Math.floor(Number(parent.param('maximum_loop_count') ?? 0)) || 0;
    if (n.idx >= max) {
      n.idx = -1;
      return;
    }
    n.idx += 1;
  },
  end(n, c) {
    if (n.idx === -1) return true;
    const parent = c.parentOf(n)!;
    const op = String(parent.param('logical_operator') ?? 'and');
    if (op !== 'and' && op !== 'or') throw new Error("Invalid logical operator,should be 'and' or 'or'.");
    const conds = Array.isArray(parent.params.loop_termination_condition) ? parent.params.loop_termination_condition : [];
    if (!conds.length) return false;
    const results = conds.map((item) => {
      if (!isPlainObject(item) || !item.variable || !item.operator) throw new Error('Loop condition is incomplete.');
      const v = c.getVariableValue(String(item.variable));
      const mode = item.input_mode ?? 'constant';
      if (mode !== 'variable' && mode !== 'constant') throw new Error('Invalid input mode.');
      const value = mode === 'variable' ? c.getVariableValue(String(item.value ?? '')) : item.value ?? '';
      return loopCondition(v, String(item.operator), value);
    });
    const stop = op === 'and' ? results.every(Boolean) : results.some(Boolean);
    if (stop) n.idx = -1;
    return stop;
  },
};

export const EXIT_LOOP: ComponentImpl = {
  async invoke() {
    /* the run loop leaves the Loop */
  },
};

/** References in a component's parameters, resolved synchronously (for src/agent/ops). */
import type { Node } from '../node.js';
import type { Canvas } from '../canvas.js';
import { materialize } from '../canvas.js';
import { isLazy } from '../types.js';
import { findRefs, normalizeRef, type Resolve } from '../ops/index.js';

/**
 * A synchronous resolver for the references in a component's parameters; upstream texts that are
 * still streaming are read to the end first (they are stored as plain text from then on).
 */
export async function resolver(n: Node, c: Canvas): Promise<Resolve> {
  const refs = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      for (const r of findRefs(v)) refs.add(r);
      if (/^[a-zA-Z:0-9]+@[A-Za-z0-9_.-]+$/.test(v)) refs.add(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(n.params);
  for (const r of refs) {
    const at = r.indexOf('@');
    if (at < 0) continue;
    const src = c.nodes.get(r.slice(0, at));
    const root = r.slice(at + 1).split('.')[0]!;
    const v = src?.output(root);
    if (src && isLazy(v)) src.setOutput(root, await materialize(v));
  }
  return (ref: string) => {
    try {
      return c.getVariableValue(normalizeRef(ref));
    } catch {
      return undefined;
    }
  };
}


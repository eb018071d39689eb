/**
 * Builds small canvas DSLs for tests: components by id with their type, params, downstream and
 * parent; upstream is derived. The shape is RAGFlow's v0.20+ DSL exactly.
 */
import type { CanvasEvent } from '../../src/agent/index.js';

export interface Spec {
  type: string;
  params?: Record<string, unknown>;
  down?: string[];
  parent?: string;
}

export function buildDsl(spec: Record<string, Spec>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const components: Record<string, unknown> = {};
  for (const [id, s] of Object.entries(spec)) {
    components[id] = {
      obj: { component_name: s.type, params: s.params ?? {} },
      downstream: s.down ?? [],
      upstream: Object.entries(spec).filter(([, o]) => (o.down ?? []).includes(id)).map(([k]) => k),
      ...(s.parent ? { parent_id: s.parent } : {}),
    };
  }
  return {
    components,
    history: [],
    path: [],
    retrieval: [],
    globals: { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [] },
    graph: { nodes: Object.keys(spec).map((id) => ({ id, data: { name: id.split(':')[1] ?? id } })), edges: [] },
    ...extra,
  };
}

/** All events of a run. */
export async function collect(it: AsyncIterable<CanvasEvent>): Promise<CanvasEvent[]> {
  const out: CanvasEvent[] = [];
  for await (const ev of it) out.push(ev);
  return out;
}

/** The text of the `message` events. */
export function messageText(events: CanvasEvent[]): string {
  return events.filter((e) => e.event === 'message').map((e) => String(e.data.content ?? '')).join('');
}

/** The component ids in `node_finished` order. */
export function finished(events: CanvasEvent[]): string[] {
  return events.filter((e) => e.event === 'node_finished').map((e) => String(e.data.component_id));
}

/**
 * An agent's session as users hold it (RAGFlow SDK's `Session` of type "agent"): ask it questions,
 * resume it after a form (`UserFillUp`) with `inputs`, or read the raw run events.
 */
import type { Transport } from './transport.js';
import { Resource } from './resources.js';
import { Message, type ReferenceChunk } from './chat.js';

/** One event of a run, as RAGFlow streams it (`data:{event, message_id, created_at, task_id, data, session_id}`). */
export interface AgentEvent {
  event: 'workflow_started' | 'node_started' | 'node_finished' | 'message' | 'message_end' | 'user_inputs' | 'workflow_finished' | string;
  message_id: string;
  created_at: number;
  task_id: string;
  session_id: string;
  data: Record<string, unknown> & { content?: string; reference?: unknown };
}

/** One node's record in a trace (`return_trace: true`). */
export interface TraceEntry {
  component_id: string;
  trace: Array<{
    inputs: unknown;
    outputs: Record<string, unknown>;
    component_id: string;
    component_name: string;
    component_type: string;
    error: string | null;
    elapsed_time: number;
    created_at: number;
  }>;
}

export interface AgentAskOptions {
  stream?: boolean;
  /** Values for the Begin (or a paused UserFillUp) form: `{ name: { value, type? } }`. */
  inputs?: Record<string, { value: unknown; type?: string; [k: string]: unknown }>;
  /** Run the latest published version instead of the draft (sessionless runs). */
  release?: boolean;
  /** Give each node's inputs, outputs, elapsed time and error with the answer. */
  return_trace?: boolean;
  user_id?: string;
  /** Stops the run (the model request and any running code are aborted). */
  signal?: AbortSignal;
  [key: string]: unknown;
}

/** An agent's answer: the text of its Message components, and what the run produced. */
export class AgentMessage extends Message {
  /** `workflow_finished`, or `user_inputs` when the run paused for a form. */
  event = 'workflow_finished';
  /** The form the run waits for (on `user_inputs`). */
  inputs?: Record<string, unknown>;
  tips?: string;
  /** Per-node records (with `return_trace: true`). */
  trace?: TraceEntry[];
  /** Structured outputs by component id (LLM / Agent components with an output schema). */
  structured?: Record<string, unknown>;
  /** The final node's outputs. */
  outputs?: unknown;
  /** The RAGFlow reference object (`{chunks, doc_aggs}`) as the run gathered it. */
  raw_reference?: unknown;
}

type Reference = { chunks?: Record<string, ReferenceChunk> | ReferenceChunk[]; doc_aggs?: unknown };

function chunkList(ref: unknown): ReferenceChunk[] | null {
  if (!ref || typeof ref !== 'object') return null;
  const c = (ref as Reference).chunks;
  if (!c) return null;
  const list = Array.isArray(c) ? c : Object.values(c);
  return list.length ? list : null;
}

export class AgentSession extends Resource {
  declare readonly id: string;
  declare agent_id: string;
  declare name: string;
  declare user_id: string;
  declare message: Array<{ role: string; content: string; id?: string; reference?: unknown[] }>;
  declare dsl: Record<string, unknown>;

  constructor(t: Transport, data: Record<string, unknown>) {
    super(t, data);
    // The SDK names the history `messages`; RAGFlow's agent sessions answer with `message`.
    if (!Object.prototype.hasOwnProperty.call(this, 'messages')) {
      Object.defineProperty(this, 'messages', { get: () => this.message, enumerable: false });
    }
  }

  /**
   * Asks the agent. Resolves to the answer (the text of its Message components); with
   * `{ stream: true }` an AsyncIterable of AgentMessages whose `content` grows cumulatively, the
   * last one (`final: true`) carrying references, trace and the event that ended the run
   * (`workflow_finished`, or `user_inputs` when a form waits: answer it with `{ inputs }`).
   */
  ask(question: string, opts?: AgentAskOptions & { stream?: false }): Promise<AgentMessage>;
  ask(question: string, opts: AgentAskOptions & { stream: true }): AsyncIterable<AgentMessage>;
  ask(question: string, opts: AgentAskOptions = {}): Promise<AgentMessage> | AsyncIterable<AgentMessage> {
    const { stream = false, ...rest } = opts;
    if (!stream) {
      return this.t.call<AgentEvent>('agents.completion', { ...rest, agent_id: this.agent_id, session_id: this.id, query: question, stream: false })
        .then((ev) => this.finish(question, ev, ev?.data?.content ?? ''));
    }
    return this.streamAnswer(question, rest);
  }

  /** The run's raw events, in order (what RAGFlow streams), ending with `workflow_finished` or `user_inputs`. */
  async *events(question: string, opts: AgentAskOptions = {}): AsyncGenerator<AgentEvent> {
    const abort = new AbortController();
    const outer = opts.signal;
    if (outer?.aborted) abort.abort(outer.reason);
    else outer?.addEventListener('abort', () => abort.abort(outer.reason), { once: true });
    const { stream: _stream, ...rest } = opts;
    const it = await this.t.call<AsyncIterable<AgentEvent>>('agents.completion', {
      ...rest, agent_id: this.agent_id, session_id: this.id, query: question, stream: true, signal: abort.signal,
    });
    try {
      yield* it;
    } finally {
      abort.abort(); // the caller broke out: stop the run
    }
  }

  private async *streamAnswer(question: string, opts: AgentAskOptions): AsyncGenerator<AgentMessage> {
    let content = '';
    let last: AgentEvent | undefined;
    for await (const ev of this.events(question, opts)) {
      last = ev;
      if (ev.event === 'message' && typeof ev.data?.content === 'string' && ev.data.content) {
        content += ev.data.content;
        yield new AgentMessage({ content, role: 'assistant', id: ev.message_id, session_id: ev.session_id, final: false });
      }
    }
    if (last) yield this.finish(question, last, content);
  }

  private finish(question: string, ev: AgentEvent, content: string): AgentMessage {
    const d = (ev?.data ?? {}) as Record<string, unknown>;
    const m = new AgentMessage({ content, role: 'assistant', id: ev?.message_id ?? null, session_id: ev?.session_id, final: true });
    m.event = ev?.event ?? 'workflow_finished';
    m.reference = chunkList(d.reference);
    m.raw_reference = d.reference;
    if (d.trace) m.trace = d.trace as TraceEntry[];
    if (d.structured) m.structured = d.structured as Record<string, unknown>;
    if ('outputs' in d) m.outputs = d.outputs;
    if (ev?.event === 'user_inputs') {
      m.inputs = d.inputs as Record<string, unknown>;
      m.tips = typeof d.tips === 'string' ? d.tips : '';
    }
    if (Array.isArray(this.message)) {
      this.message.push({ role: 'user', content: question, id: m.id ?? undefined }, { role: 'assistant', content, id: m.id ?? undefined });
    }
    return m;
  }
}

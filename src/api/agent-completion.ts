/**
 * `agents.completion` (`POST /agents/chat/completions`, reference §10): runs an agent's canvas for
 * one question or one form answer, in a session (given, or created for this run), and stores the
 * turn and the canvas state when the run ends. Everything is validated before the first event, so
 * a bad request is an ApiError, never a half-written stream.
 *
 * The run does not depend on who reads its events: a reader that stops early (RAGFlow's SDK stops
 * at `message_end`) does not cut the run short; only the request's `signal` cancels it. The turn
 * is stored once the run has ended (finished, paused for a form, or cancelled).
 */
import type { Engine, Ctx } from '../core/index.js';
import { chatModel } from '../core/index.js';
import {
  accessibleAgent, agentDslForRun, getAgentSession, insertAgentSession, latestVersionTitle, saveAgentTurn, sessionDslFrom,
  type AgentTurnMessage,
} from '../core/agents.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { chatModelExists } from './models.js';
import { defaultModelOf } from './chats.js';
import { retrieve } from './retrieval.js';
import * as memories from './memories.js';
import type { ExtractionQueue } from '../memory/index.js';
import { Canvas, type CanvasEvent, type CanvasChunk, type DocAgg, type RuntimeDeps } from '../agent/index.js';
import { runCode } from '../agent/sandbox/index.js';
import { ChatModelError } from '../llm/index.js';
import { isPlainObject, newId, nowMs, faultPoint } from '../util/index.js';

type P = Record<string, unknown>;

/** An event as the API sends it: the canvas's, with the session. */
export type AgentEventOut = CanvasEvent & { session_id: string };

/** What the agent runtime may use, for this caller. */
export async function runtimeDeps(e: Engine, ctx: Ctx, memoryTasks?: ExtractionQueue): Promise<RuntimeDeps> {
  const o = e.agentOptions;
  const tenant = await e.tenantRow(ctx.tenantId);
  const embdId = tenant.embd_id;
  return {
    tenantId: ctx.tenantId,
    chatModel(llmId) {
      const id = llmId || defaultModelOf(tenant);
      const m = chatModelExists(e, id) ? chatModel(e, id, embdId) : undefined;
      if (!m) throw new Error(`\`llm_id\` ${id} doesn't exist`);
      return m;
    },
    async retrieve(req) {
      // retrieve() checks every dataset is the caller's (RAGFlow's "You don't own the dataset …").
      const found: { unknown?: string[] } = {};
      const r = await retrieve(e, ctx, {
        dataset_ids: req.dataset_ids, question: req.question, similarity_threshold: req.similarity_threshold,
        vector_similarity_weight: req.vector_similarity_weight, top_k: req.top_k, page: 1, page_size: req.top_n,
        ...(req.rerank_id ? { rerank_id: req.rerank_id } : {}),
      }, found);
      const chunks = (r.chunks as unknown as P[]).map((c): CanvasChunk => ({
        ...c,
        id: String(c.id),
        content: String(c.content ?? ''),
        document_id: String(c.document_id ?? ''),
        document_name: String(c.document_keyword ?? c.document_name ?? ''),
        dataset_id: String(c.dataset_id ?? ''),
        image_id: String(c.image_id ?? ''),
        positions: Array.isArray(c.positions) ? c.positions : [],
        url: null,
        similarity: Number(c.similarity ?? 0),
        vector_similarity: Number(c.vector_similarity ?? 0),
        term_similarity: Number(c.term_similarity ?? 0),
        doc_type: String(c.doc_type ?? ''),
      }));
      const aggs = Array.isArray(r.doc_aggs) ? (r.doc_aggs as unknown as DocAgg[]) : [];
      return { chunks, doc_aggs: aggs, unknown: found.unknown ?? [] };
    },
    embed: (texts) => e.models.embedder(embdId).embed(texts),
    runCode,
    sqlDirs: o.sql_dirs ?? [],
    invokeAllow: o.invoke_allow ?? [],
    codeTimeoutMs: o.code_timeout_ms,
    codeMemoryMb: o.code_memory_mb,
    saveToMemory: memoryTasks
      ? async (ids, userInput, response) => {
        await memories.addMessage(e, ctx, memoryTasks, { memory_id: ids, agent_id: '', session_id: '', user_input: userInput, agent_response: response, user_id: ctx.userId });
      }
      : undefined,
  };
}

const truthy = (v: unknown) => v === true || (typeof v === 'string' && v.trim().toLowerCase() === 'true');

/** A single-consumer queue: the run pushes, the reader pulls; a reader that leaves stops nothing. */
class EventQueue<T> {
  private items: T[] = [];
  private waiting: ((v: IteratorResult<T>) => void) | undefined;
  private failed: unknown;
  private done = false;
  private failWaiting: ((e: unknown) => void) | undefined;
  push(v: T): void {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = this.failWaiting = undefined;
      w({ value: v, done: false });
    } else this.items.push(v);
  }
  end(err?: unknown): void {
    this.done = true;
    this.failed = err;
    if (this.waiting) {
      const w = this.waiting;
      const f = this.failWaiting!;
      this.waiting = this.failWaiting = undefined;
      if (err) f(err);
      else w({ value: undefined, done: true });
    }
  }
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.done) {
        if (this.failed) throw this.failed;
        return;
      }
      const r = await new Promise<IteratorResult<T>>((resolve, reject) => {
        this.waiting = resolve;
        this.failWaiting = reject;
      });
      if (r.done) return;
      yield r.value;
    }
  }
}

function mapRunError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof ChatModelError) return new ApiError(RetCode.EXCEPTION_ERROR, err.message, { cause: err });
  return new ApiError(RetCode.EXCEPTION_ERROR, err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * `{agent_id, query | question, session_id?, inputs, user_id, stream = true, return_trace, release, signal}`.
 * Non-streamed: the last event, its `data.content` all message text, `data.reference` the run's
 * reference (and `data.trace` with `return_trace`). Streamed: the events in order.
 */
export async function agentCompletion(e: Engine, ctx: Ctx, memoryTasks: ExtractionQueue | undefined, req: P): Promise<AgentEventOut | AsyncIterable<AgentEventOut>> {
  const agentId = typeof req.agent_id === 'string' ? req.agent_id : '';
  if (!agentId) throw new ApiError(RetCode.ARGUMENT_ERROR, '`agent_id` is required.');
  if (truthy(req['openai-compatible']) || req['openai-compatible'] === 1) {
    throw new ApiError(RetCode.ARGUMENT_ERROR, 'The OpenAI-compatible agent mode (`openai-compatible: true`) is not available in ragloom; send `query` without it.');
  }
  let sessionId = typeof req.session_id === 'string' ? req.session_id : '';
  const query = pyStr(req.query ?? req.question ?? '');
  const inputs = isPlainObject(req.inputs) ? req.inputs : {};
  const userId = typeof req.user_id === 'string' && req.user_id ? req.user_id : ctx.userId;
  const stream = req.stream === undefined ? true : truthy(req.stream) || req.stream === 1;
  const returnTrace = truthy(req.return_trace) || req.return_trace === 1;
  const signal = req.signal instanceof AbortSignal ? req.signal : undefined;

  let dsl: Record<string, unknown>;
  let newSession: { agent_id: string; version_title: string | null } | undefined;
  if (sessionId) {
    const s = (await getAgentSession(e, sessionId)) ?? (() => {
      throw new ApiError(RetCode.DATA_ERROR, 'Session not found!');
    })();
    if (s.agent_id !== agentId) throw new ApiError(RetCode.OPERATING_ERROR, 'Session does not belong to the requested agent.');
    if (!(await accessibleAgent(e, ctx, agentId))) throw new ApiError(RetCode.OPERATING_ERROR, 'Only authorized users can access this agent session.');
    dsl = JSON.parse(s.dsl) as Record<string, unknown>;
  } else {
    const agent = await accessibleAgent(e, ctx, agentId);
    if (!agent) throw new ApiError(RetCode.OPERATING_ERROR, 'Make sure you have permission to access the agent.');
    const release = truthy(req.release) || req.release === 1;
    dsl = sessionDslFrom(await agentDslForRun(e, agent, release));
    newSession = { agent_id: agent.id, version_title: await latestVersionTitle(e, agent.id, release) };
  }

  let canvas: Canvas;
  try {
    canvas = new Canvas(dsl, await runtimeDeps(e, ctx, memoryTasks));
  } catch (err) {
    throw new ApiError(RetCode.DATA_ERROR, `This agent cannot run: ${(err as Error).message}`);
  }
  // A run without a session gets one, once the request is known to be runnable.
  if (newSession) {
    sessionId = newId();
    await insertAgentSession(e, { id: sessionId, agent_id: newSession.agent_id, user_id: userId, dsl, messages: [], version_title: newSession.version_title, source: 'agent' });
  }

  const sid = sessionId;
  const queue = new EventQueue<AgentEventOut>();
  let content = '';
  const reference: P = {};
  const trace: Array<{ component_id: string; trace: unknown[] }> = [];
  const structured: P = {};
  let last: AgentEventOut | undefined;
  const t0 = performance.now();

  // The run goes on whatever the reader does; it ends (and the turn is stored) on its own.
  const finished = (async () => {
    try {
      for await (const ev of canvas.run({ query, inputs, user_id: userId, signal, timeoutMs: e.agentOptions.run_timeout_ms })) {
        const out: AgentEventOut = { ...ev, session_id: sid };
        if (ev.event === 'message') content += typeof ev.data.content === 'string' ? ev.data.content : '';
        if (isPlainObject(ev.data.reference)) Object.assign(reference, ev.data.reference);
        if (ev.event === 'node_finished') {
          const d = ev.data;
          const outs = d.outputs;
          if (isPlainObject(outs) && 'structured' in outs && typeof d.component_id === 'string') structured[d.component_id] = outs.structured;
          if (returnTrace) trace.push({ component_id: String(d.component_id), trace: [JSON.parse(JSON.stringify(d))] });
        }
        last = out;
        queue.push(out);
      }
      if (e.isClosed) return;
      const messageId = last?.message_id ?? newId();
      const append: AgentTurnMessage[] = [
        { role: 'user', content: query, id: messageId, created_at: nowMs() / 1000 },
        { role: 'assistant', content, id: messageId, created_at: nowMs() / 1000, reference: Object.keys(reference).length ? reference : { chunks: {}, doc_aggs: {} } },
      ];
      faultPoint('agents.turn:ran');
      await saveAgentTurn(e, sid, { append, dsl: canvas.toDsl(), errors: canvas.error || undefined, durationSec: (performance.now() - t0) / 1000 });
      faultPoint('agents.turn:saved');
      queue.end();
    } catch (err) {
      queue.end(mapRunError(err));
    }
  })();

  if (stream) return queue;

  const events: AgentEventOut[] = [];
  for await (const ev of queue) events.push(ev);
  await finished;
  const final = events[events.length - 1];
  if (!final) throw new ApiError(RetCode.EXCEPTION_ERROR, 'The agent produced no events.');
  const data: P = isPlainObject(final.data) ? { ...final.data } : {};
  data.content = content;
  data.reference = reference;
  if (Object.keys(structured).length) data.structured = structured;
  if (returnTrace) data.trace = trace;
  if (returnTrace && canvas.toolTrace.length) data.tool_trace = canvas.toolTrace;
  if (final.event !== 'workflow_finished' && final.event !== 'user_inputs' && canvas.error) data.error = canvas.error;
  return { ...final, data };
}

/**
 * The canvas runtime: runs a RAGFlow v0.20+ agent DSL the way RAGFlow's `agent/canvas.py` does
 * (reference §10), in-process. A run appends the entry `begin` to the path, then executes the newly
 * appended path entries as one concurrent batch (at most 5 at a time), emits `node_started` /
 * `node_finished` around them, streams Message components as `message` events, and extends the
 * path with what runs next: a Categorize / Switch's chosen branch, an Iteration's IterationItem, a
 * finished body's parent's downstream, else `downstream`. A node that reads the output of a
 * component not yet on the path is dropped from the batch; it is reached again through that
 * component's downstream (this is how joins wait). A pending `UserFillUp` pauses the run
 * (`user_inputs`); the state lives in the DSL the caller stores, so the next ask resumes.
 *
 * @example
 * const canvas = new Canvas(dsl, deps);
 * for await (const ev of canvas.run({ query: 'hello' })) console.log(ev.event, ev.data);
 * const state = canvas.toDsl(); // store it: the session's next run starts from here
 */
import { randomUUID } from 'node:crypto';
import { Node, type ComponentImpl, type InputElement } from './node.js';
import { VARIABLE_REF } from './catalog.js';
import { isLazy, type CanvasChunk, type CanvasEvent, type DocAgg, type LazyText, type RunOptions, type RuntimeDeps } from './types.js';
import { COMPONENTS } from './components/index.js';
import { isPlainObject } from '../util/index.js';

const DEFAULT_PROLOGUE = "Hi! I'm your smart assistant. What can I do for you?";
const MAX_CONCURRENCY = 5;
/** A run that appends more than this many path entries is stopped (a loop without an exit). */
const MAX_PATH = 10_000;

export const CANCELED = 'Task has been canceled';

const ALIAS_REF = /\{* *\{(item|index|result)\} *\}*/gi;

/** UTC `YYYY-MM-DD HH:MM:SS` (RAGFlow's sys.date). */
function sysDate(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

function deepCopy<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** A text that streams once and replays for later readers (RAGFlow consumes its partials once). */
export function lazyText(source: () => AsyncIterable<string>, onDone?: (text: string) => void): LazyText {
  let started = false;
  let done = false;
  let text = '';
  let waiters: Array<() => void> = [];
  let failure: unknown;
  return {
    lazy: true,
    async *stream() {
      if (!started) {
        started = true;
        try {
          for await (const piece of source()) {
            text += piece;
            yield piece;
          }
          done = true;
          onDone?.(text);
        } catch (e) {
          failure = e;
          done = true;
          throw e;
        } finally {
          done = true;
          for (const w of waiters) w();
          waiters = [];
        }
        return;
      }
      if (!done) await new Promise<void>((r) => waiters.push(r));
      if (failure) throw failure;
      if (text) yield text;
    },
  };
}

/** Reads a whole lazy text (or returns the value as it is). */
export async function materialize(v: unknown): Promise<unknown> {
  if (!isLazy(v)) return v;
  let s = '';
  for await (const piece of v.stream()) s += piece;
  return s;
}

/** A value as prompt text: strings as they are, data as JSON, nothing as ''. */
export function asText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

export class Canvas {
  readonly dsl: Record<string, unknown>;
  readonly nodes = new Map<string, Node>();
  path: string[];
  history: Array<[string, unknown]>;
  globals: Record<string, unknown>;
  variables: Record<string, { type?: string; value?: unknown }>;
  retrieval: Array<{ chunks: Record<string, CanvasChunk>; doc_aggs: Record<string, DocAgg> }>;
  /**
   * The run's question terms that no retrieved dataset holds (every Retrieval of the run agrees),
   * for the built-in model's decline; not stored with the DSL. Undefined before any Retrieval.
   */
  private unknown: string[] | undefined;
  memory: unknown[];
  taskId: string;
  messageId = '';
  /** The run's error (a component failed without a handler). */
  error = '';
  /** Aborted by the caller, or when the run's time limit passes. */
  signal: AbortSignal = new AbortController().signal;
  /** Tool calls made inside Agent components during this run (for traces). */
  readonly toolTrace: Array<{ component_id: string; trace: Array<Record<string, unknown>> }> = [];
  private readonly names = new Map<string, string>();

  constructor(
    dsl: Record<string, unknown>,
    readonly deps: RuntimeDeps,
    registry: Record<string, ComponentImpl> = COMPONENTS,
  ) {
    this.dsl = deepCopy(dsl);
    const comps = this.dsl.components;
    if (!isPlainObject(comps)) throw new Error('DSL has no components.');
    for (const [id, raw] of Object.entries(comps)) {
      if (!isPlainObject(raw) || !isPlainObject(raw.obj)) throw new Error(`Component '${id}' has no obj.`);
      const type = String(raw.obj.component_name ?? '');
      const impl = registry[type];
      if (!impl) throw new Error(`Component '${id}': ${type} is not supported.`);
      if (!isPlainObject(raw.obj.params)) raw.obj.params = {};
      const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
      raw.downstream = list(raw.downstream);
      raw.upstream = list(raw.upstream);
      const parent = typeof raw.parent_id === 'string' && raw.parent_id ? raw.parent_id : undefined;
      this.nodes.set(id, new Node(id, type, raw.obj.params as Record<string, unknown>, raw.downstream as string[], raw.upstream as string[], parent, impl));
    }
    const graph = this.dsl.graph;
    if (isPlainObject(graph) && Array.isArray(graph.nodes)) {
      for (const n of graph.nodes) if (isPlainObject(n) && isPlainObject(n.data) && typeof n.data.name === 'string') this.names.set(String(n.id), n.data.name);
    }
    this.path = Array.isArray(this.dsl.path) ? (this.dsl.path as unknown[]).map(String).filter((p) => this.nodes.has(p)) : [];
    this.history = Array.isArray(this.dsl.history) ? (this.dsl.history as Array<[string, unknown]>) : [];
    this.globals = isPlainObject(this.dsl.globals) ? (this.dsl.globals as Record<string, unknown>) : {
      'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [],
    };
    if (!Array.isArray(this.globals['sys.history'])) this.globals['sys.history'] = [];
    if (!this.globals['sys.date']) this.globals['sys.date'] = sysDate();
    this.variables = isPlainObject(this.dsl.variables) ? (this.dsl.variables as Canvas['variables']) : {};
    // `env.x` values come from `variables` when the DSL has not materialised them yet.
    for (const [k, v] of Object.entries(this.variables)) {
      if (!(`env.${k}` in this.globals)) this.globals[`env.${k}`] = isPlainObject(v) && v.value !== undefined && v.value !== null ? v.value : defaultFor(isPlainObject(v) ? String(v.type ?? '') : '');
    }
    this.retrieval = Array.isArray(this.dsl.retrieval)
      ? (this.dsl.retrieval as unknown[]).filter(isPlainObject).map((r) => ({
        chunks: isPlainObject(r.chunks) ? (r.chunks as Record<string, CanvasChunk>) : {},
        doc_aggs: isPlainObject(r.doc_aggs) ? (r.doc_aggs as Record<string, DocAgg>) : {},
      }))
      : [];
    this.memory = Array.isArray(this.dsl.memory) ? (this.dsl.memory as unknown[]) : [];
    this.taskId = typeof this.dsl.task_id === 'string' && this.dsl.task_id ? this.dsl.task_id : randomUUID().replace(/-/g, '');
  }

  // ------------------------------------------------------------------ lookups

  node(id: string): Node {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`Can't find component '${id}'`);
    return n;
  }

  componentName(id: string): string {
    return this.names.get(id) ?? '';
  }

  prologue(): string {
    const p = this.nodes.get('begin')?.param<string>('prologue');
    return typeof p === 'string' ? p : DEFAULT_PROLOGUE;
  }

  parentOf(n: Node): Node | undefined {
    return n.parentId ? this.nodes.get(n.parentId) : undefined;
  }

  /**
   * Can component `id` still run in this run, i.e. is it reachable (downstream, a branch of a
   * Categorize or Switch, an exception goto) from a component of the current step? A node whose
   * reference waits on a component that can is put off, as RAGFlow puts it off; one that cannot
   * (the branch of a Categorize that was not taken) no longer holds it back. RAGFlow waits on it
   * for ever: a Message joining a Categorize's branches (smart_customer_service_specialist) never
   * ran. Components inside an Iteration or Loop keep RAGFlow's rule (they run from their parent).
   */
  private mayStillRun(id: string, step: string[]): boolean {
    const target = this.nodes.get(id);
    if (!target) return false;
    if (target.parentId) return true;
    const seen = new Set<string>();
    const todo = [...step];
    while (todo.length) {
      const cur = todo.pop()!;
      if (cur === id) return true;
      if (seen.has(cur)) continue;
      seen.add(cur);
      const n = this.nodes.get(cur);
      if (!n) continue;
      if (n.kind === 'iteration' || n.kind === 'loop') return true; // its body may lead anywhere
      const next = [...n.downstream, ...asIdList(n.param('exception_goto'))];
      if (n.kind === 'categorize' || n.kind === 'switch') {
        const p = n.params as { category_description?: unknown; conditions?: unknown; end_cpn_ids?: unknown };
        const branches = [
          ...Object.values(isPlainObject(p.category_description) ? p.category_description : {}),
          ...(Array.isArray(p.conditions) ? p.conditions : []),
        ];
        for (const b of branches) if (isPlainObject(b)) next.push(...asIdList(b.to));
        next.push(...asIdList(p.end_cpn_ids));
      }
      todo.push(...next);
    }
    return false;
  }

  /** `{cpn@var.path}`, `sys.x`, `env.x` → value (RAGFlow `get_variable_value`). */
  getVariableValue(exp: string): unknown {
    const e = exp.replace(/^[{\s]+|[}\s]+$/g, '');
    const at = e.indexOf('@');
    if (at < 0) return this.globals[e];
    const cpnId = e.slice(0, at);
    const varName = e.slice(at + 1);
    const n = this.nodes.get(cpnId);
    if (!n) throw new Error(`Can't find variable: '${cpnId}@${varName}'`);
    const dot = varName.indexOf('.');
    const root = n.output(dot < 0 ? varName : varName.slice(0, dot));
    return dot < 0 ? root : pathValue(root, varName.slice(dot + 1));
  }

  setVariableValue(exp: string, value: unknown): void {
    const e = exp.replace(/^[{\s]+|[}\s]+$/g, '');
    const at = e.indexOf('@');
    if (at < 0) {
      this.globals[e] = value;
      return;
    }
    const cpnId = e.slice(0, at);
    const varName = e.slice(at + 1);
    const n = this.nodes.get(cpnId);
    if (!n) throw new Error(`Can't find variable: '${cpnId}@${varName}'`);
    const dot = varName.indexOf('.');
    if (dot < 0) {
      n.setOutput(varName, value);
      return;
    }
    const root = varName.slice(0, dot);
    let obj = n.output(root);
    if (!isPlainObject(obj)) obj = {};
    let cur = obj as Record<string, unknown>;
    const keys = varName.slice(dot + 1).split('.');
    for (const k of keys.slice(0, -1)) {
      if (!isPlainObject(cur[k])) cur[k] = {};
      cur = cur[k] as Record<string, unknown>;
    }
    cur[keys[keys.length - 1]!] = value;
    n.setOutput(root, obj);
  }

  /** Whether `exp` names a variable (RAGFlow `is_reff`). */
  isRef(exp: string): boolean {
    const e = exp.replace(/^[{]+|[}]+$/g, '');
    const at = e.indexOf('@');
    if (at < 0) return e in this.globals;
    return e.split('@').length === 2 && this.nodes.has(e.slice(0, at));
  }

  /** The references in a text, with their values (RAGFlow `get_input_elements_from_text`). */
  inputElementsFromText(node: Node, text: string): Record<string, InputElement> {
    const res: Record<string, InputElement> = {};
    if (typeof text !== 'string' || !text) return res;
    for (const m of text.matchAll(VARIABLE_REF)) {
      const exp = m[1]!;
      const at = exp.indexOf('@');
      const cpnId = at > 0 ? exp.slice(0, at) : '';
      let value: unknown;
      try {
        value = this.getVariableValue(exp);
      } catch {
        value = undefined;
      }
      res[exp] = { name: cpnId ? `${this.componentName(cpnId)}@${exp.slice(at + 1)}` : exp, value, cpnId };
    }
    // `{item}` / `{index}` / `{result}` inside an Iteration: its IterationItem's outputs.
    for (const m of text.matchAll(ALIAS_REF)) {
      const alias = m[1]!.toLowerCase();
      if (alias in res) continue;
      const parent = this.parentOf(node);
      if (!parent || parent.kind !== 'iteration') continue;
      const item = [...this.nodes.values()].find((n) => n.parentId === parent.id && n.kind === 'iterationitem');
      if (!item) continue;
      res[alias] = { name: `${this.componentName(item.id)}@${alias}`, value: item.output(alias), cpnId: item.id };
    }
    return res;
  }

  /** Substitutes references in a text with their values (RAGFlow `string_format` of the elements). */
  async render(node: Node, text: string): Promise<string> {
    if (typeof text !== 'string') return asText(text);
    const els = this.inputElementsFromText(node, text);
    let out = text;
    for (const [k, el] of Object.entries(els)) {
      const v = asText(await materialize(el.value));
      out = out.replace(new RegExp(`\\{${escapeRe(k)}\\}`, 'g'), () => v);
    }
    return out;
  }

  /** The conversation's last `window` turns (RAGFlow `get_history`). */
  getHistory(window: number): Array<{ role: string; content: string }> {
    if (!(window > 0)) return [];
    return this.history.slice(-window * 2).map(([role, obj]) => ({
      role,
      content: isPlainObject(obj) ? asText(obj.content ?? '') : asText(obj),
    }));
  }

  /** Adds retrieved chunks to this run's reference (RAGFlow `add_reference`), and the query's terms none of the datasets holds. */
  addReference(chunks: CanvasChunk[], docAggs: DocAgg[], unknown?: string[]): void {
    if (unknown) this.unknown = this.unknown ? this.unknown.filter((t) => unknown.includes(t)) : [...unknown];
    if (!this.retrieval.length) this.retrieval.push({ chunks: {}, doc_aggs: {} });
    const r = this.retrieval[this.retrieval.length - 1]!;
    for (const c of chunks) if (!(c.id in r.chunks)) r.chunks[c.id] = c;
    for (const d of docAggs) if (!(d.doc_name in r.doc_aggs)) r.doc_aggs[d.doc_name] = d;
  }

  /** The query terms this run's Retrievals found in no chunk (see `unknown`). */
  unknownTerms(): string[] | undefined {
    return this.unknown;
  }

  getReference(): { chunks: Record<string, CanvasChunk>; doc_aggs: Record<string, DocAgg> } {
    return this.retrieval[this.retrieval.length - 1] ?? { chunks: {}, doc_aggs: {} };
  }

  private hasReference(): boolean {
    const r = this.getReference();
    return Object.keys(r.chunks).length > 0 || Object.keys(r.doc_aggs).length > 0;
  }

  /** The DSL with the run's state, to store and resume from (RAGFlow `str(canvas)`). */
  toDsl(): Record<string, unknown> {
    const out: Record<string, unknown> = { ...this.dsl };
    const comps: Record<string, unknown> = {};
    for (const [id, raw] of Object.entries(this.dsl.components as Record<string, Record<string, unknown>>)) {
      const n = this.nodes.get(id)!;
      const params = { ...n.params, outputs: Object.fromEntries(Object.entries(n.params.outputs!).map(([k, o]) => [k, { ...o, value: isLazy(o?.value) ? null : o?.value ?? null }])) };
      comps[id] = { ...raw, obj: { ...(raw.obj as object), params } };
    }
    out.components = comps;
    out.path = this.path;
    out.history = this.history;
    out.globals = this.globals;
    out.retrieval = this.retrieval;
    out.memory = this.memory;
    out.task_id = this.taskId;
    return deepCopy(out);
  }

  // ------------------------------------------------------------------ run

  private decorate(event: CanvasEvent['event'], data: Record<string, unknown>, createdAt: number): CanvasEvent {
    return { event, message_id: this.messageId, created_at: createdAt, task_id: this.taskId, data };
  }

  /** Resolves a component's declared inputs (RAGFlow `get_input`). */
  private async getInput(n: Node): Promise<Record<string, unknown>> {
    const res: Record<string, unknown> = {};
    for (const key of Object.keys(n.params.inputs!)) {
      const v = n.param(key);
      if (v === undefined || v === null) continue;
      if (typeof v === 'string' && this.isRef(v)) n.setInput(key, await materialize(this.getVariableValue(v)));
      else if (typeof v === 'string' && new RegExp(VARIABLE_REF.source).test(v)) n.setInput(key, await this.render(n, v));
      else n.setInput(key, v);
      res[key] = n.params.inputs![key]!.value;
    }
    return res;
  }

  /** Runs one component with its retries and error handling (RAGFlow `ComponentBase.invoke`). */
  async invoke(n: Node, kwargs: Record<string, unknown>): Promise<void> {
    const t0 = performance.now() / 1000;
    n.setOutput('_created_time', t0);
    const retries = Math.max(0, Math.min(10, Number(n.param('max_retries') ?? 0) || 0));
    const delay = Math.max(0, Math.min(60, Number(n.param('delay_after_error') ?? 2) || 0));
    let message = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (this.signal.aborted) {
        message = this.abortMessage();
        break;
      }
      if (n.params.outputs!._ERROR) n.params.outputs!._ERROR.value = null;
      message = '';
      try {
        await n.impl.invoke(n, this, kwargs);
        message = n.error() ?? '';
      } catch (e) {
        message = this.signal.aborted ? this.abortMessage() : e instanceof Error ? e.message : String(e);
      }
      if (!message || message.startsWith(CANCELED) || attempt === retries) break;
      await sleep(delay * 1000, this.signal);
    }
    if (message) {
      const fallback = n.param('exception_method') === 'comment' ? n.param('exception_default_value') : undefined;
      if (fallback && !message.startsWith(CANCELED)) {
        if (n.params.outputs!._ERROR) n.params.outputs!._ERROR.value = null;
        n.setOutput(n.kind === 'llm' || n.kind === 'agent' ? 'content' : 'result', fallback);
      } else n.setOutput('_ERROR', message);
    }
    n.setOutput('_elapsed_time', performance.now() / 1000 - t0);
  }

  private nodeStarted(id: string): CanvasEvent {
    const n = this.node(id);
    return this.decorate('node_started', {
      inputs: null, created_at: Math.floor(Date.now() / 1000), component_id: id, component_name: this.componentName(id), component_type: n.type, thoughts: '',
    }, this.createdAt);
  }

  private nodeFinished(n: Node): CanvasEvent {
    const created = Number(n.output('_created_time')) || performance.now() / 1000;
    return this.decorate('node_finished', {
      inputs: n.shownInputs ?? Object.fromEntries(Object.entries(n.params.inputs!).map(([k, o]) => [k, isLazy(o?.value) ? null : o?.value ?? null])),
      outputs: n.outputsForWire(),
      component_id: n.id,
      component_name: this.componentName(n.id),
      component_type: n.type,
      error: n.error(),
      elapsed_time: performance.now() / 1000 - created,
      created_at: created,
    }, this.createdAt);
  }

  private createdAt = 0;

  private addUserInput(q: string): void {
    this.history.push(['user', q]);
    (this.globals['sys.history'] as unknown[]).push(`user: ${q}`);
  }

  /**
   * Runs the canvas for one question (or one form answer), yielding RAGFlow's events. Cancelled
   * by `signal` or when `timeoutMs` passes: the run stops between and inside components, and ends
   * with `workflow_finished` whose outputs say `Task has been canceled`.
   */
  async *run(opts: RunOptions = {}): AsyncGenerator<CanvasEvent> {
    const limit = opts.timeoutMs ?? 600_000;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new Error(`${CANCELED}: the run passed its time limit of ${limit} ms`)), limit);
    timer.unref?.();
    const onAbort = () => ctl.abort(opts.signal?.reason);
    if (opts.signal?.aborted) ctl.abort(opts.signal.reason);
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    this.signal = ctl.signal;
    try {
      yield* this.execute(opts);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async *execute(opts: RunOptions): AsyncGenerator<CanvasEvent> {
    this.globals['sys.date'] = sysDate();
    const st = performance.now() / 1000;
    this.messageId = randomUUID().replace(/-/g, '');
    this.createdAt = Math.floor(Date.now() / 1000);
    this.error = '';
    const query = typeof opts.query === 'string' ? opts.query : '';
    this.addUserInput(query);
    for (const id of new Set(this.path)) this.nodes.get(id)?.reset(true);
    if (query) this.globals['sys.query'] = query;
    if (opts.user_id) this.globals['sys.user_id'] = opts.user_id;
    if (opts.files && opts.files.length) this.globals['sys.files'] = opts.files;
    this.globals['sys.conversation_turns'] = (Number(this.globals['sys.conversation_turns']) || 0) + 1;
    const inputs = isPlainObject(opts.inputs) ? opts.inputs : {};
    const isFillUp = (id: string | undefined) => !!id && this.nodes.get(id)?.kind === 'userfillup';

    if (!this.path.length || !isFillUp(this.path[this.path.length - 1])) this.path.push('begin');
    this.retrieval.push({ chunks: {}, doc_aggs: {} });
    this.unknown = undefined;
    yield this.decorate('workflow_started', { inputs: opts.inputs ?? null }, this.createdAt);

    const runBatch = async (from: number, to: number) => {
      const jobs: Array<() => Promise<void>> = [];
      let i = from;
      while (i < to) {
        const n = this.node(this.path[i]!);
        let kwargs: Record<string, unknown>;
        if (n.kind === 'begin' || n.kind === 'userfillup') {
          kwargs = { inputs };
          i++;
        } else {
          const els = n.impl.inputElements?.(n, this) ?? {};
          const waits = !isFillUp(this.path[0]) && Object.values(els).some((el) => el.cpnId && !this.path.slice(0, i).includes(el.cpnId) && this.mayStillRun(el.cpnId, this.path.slice(from)));
          if (waits) {
            this.path.splice(i, 1);
            to--;
            continue;
          }
          kwargs = await this.getInput(n);
          i++;
        }
        jobs.push(() => this.invoke(n, kwargs));
      }
      await pool(jobs, MAX_CONCURRENCY);
    };

    let idx = this.path.length - 1;
    const partials: string[] = [];
    while (idx < this.path.length) {
      if (this.signal.aborted) {
        this.error = this.abortMessage();
        break;
      }
      if (this.path.length > MAX_PATH) {
        this.error = `The run stopped after ${MAX_PATH} steps (a loop that never exits?).`;
        break;
      }
      let to = this.path.length;
      for (let i = idx; i < to; i++) yield this.nodeStarted(this.path[i]!);
      await runBatch(idx, to);
      to = this.path.length;
      for (let i = idx; i < to; i++) {
        const n = this.node(this.path[i]!);
        if (n.kind === 'message') {
          const content = n.output('content');
          if (isLazy(content)) {
            let all = '';
            try {
              for await (const piece of content.stream()) {
                if (!piece) continue;
                if (piece === '<think>') {
                  yield this.decorate('message', { content: '', start_to_think: true }, this.createdAt);
                  continue;
                }
                if (piece === '</think>') {
                  yield this.decorate('message', { content: '', end_to_think: true }, this.createdAt);
                  continue;
                }
                all += piece;
                yield this.decorate('message', { content: piece }, this.createdAt);
              }
            } catch (e) {
              n.setOutput('_ERROR', this.signal.aborted ? this.abortMessage() : e instanceof Error ? e.message : String(e));
            }
            n.setOutput('content', all);
            const after = (n.impl as { afterStream?: (n: Node, c: Canvas, text: string) => Promise<void> }).afterStream;
            if (after) await after(n, this, all);
          } else {
            yield this.decorate('message', { content: asText(content) }, this.createdAt);
          }
          yield this.decorate('message_end', this.messageEnd(n), this.createdAt);
          while (partials.length) {
            const p = this.node(partials[0]!);
            if (isLazy(p.output('content'))) break;
            yield this.nodeFinished(p);
            partials.shift();
          }
        }

        let otherBranch = false;
        const err = n.error();
        if (err) {
          const method = n.param<string>('exception_method');
          const gotoIds = asIdList(n.param('exception_goto'));
          const dflt = n.param('exception_default_value');
          if (method && !err.startsWith(CANCELED) && gotoIds.length) {
            for (const g of gotoIds) if (this.nodes.has(g)) this.path.push(g);
            otherBranch = true;
          } else if (method && !err.startsWith(CANCELED) && dflt) {
            yield this.decorate('message', { content: asText(dflt) }, this.createdAt);
            yield this.decorate('message_end', {}, this.createdAt);
          } else {
            this.error = err;
          }
        }

        if (n.kind !== 'iteration' && n.kind !== 'loop') {
          if (isLazy(n.output('content'))) {
            if (this.error) {
              n.setOutput('content', null);
              yield this.nodeFinished(n);
            } else partials.push(n.id);
          } else yield this.nodeFinished(n);
        }

        const append = (id: string | undefined) => {
          if (otherBranch || !id) return;
          if (this.path[this.path.length - 1] === id) return;
          this.path.push(id);
        };
        const extend = (ids: unknown) => {
          for (const id of asIdList(ids)) append(id);
        };
        const parent = this.parentOf(n);
        if ((n.kind === 'iterationitem' || n.kind === 'loopitem') && n.impl.end?.(n, this)) {
          if (parent) {
            yield this.nodeFinished(parent);
            extend(parent.downstream);
          }
        } else if (n.kind === 'categorize' || n.kind === 'switch') {
          extend(n.output('_next'));
        } else if (n.kind === 'iteration' || n.kind === 'loop') {
          if (!err) append(n.impl.start?.(n, this));
        } else if (n.kind === 'exitloop' && parent?.kind === 'loop') {
          yield this.nodeFinished(parent);
          extend(parent.downstream);
        } else if (!n.downstream.length && parent) {
          append(parent.impl.start?.(parent, this));
        } else {
          extend(n.downstream);
        }
      }

      if (this.error) break;
      idx = to;

      const pending = this.path.slice(idx);
      if (pending.some((id) => isFillUp(id))) {
        const order = [...pending.filter((id) => isFillUp(id)), ...pending.filter((id) => !isFillUp(id))];
        const form: Record<string, unknown> = {};
        let tips = '';
        for (const id of order) {
          const f = this.node(id);
          if (f.kind !== 'userfillup') continue;
          await this.invoke(f, {});
          Object.assign(form, f.params.inputs);
          if (f.param('enable_tips') !== false) tips = asText(f.output('tips'));
        }
        this.path = order;
        yield this.decorate('user_inputs', { inputs: form, tips }, this.createdAt);
        return;
      }
    }
    this.path = this.path.slice(0, idx);
    const last = this.path.length ? this.nodes.get(this.path[this.path.length - 1]!) : undefined;
    if (!this.error) {
      const outputs = last ? last.outputsForWire() : {};
      yield this.decorate('workflow_finished', { inputs: opts.inputs ?? null, outputs, elapsed_time: performance.now() / 1000 - st, created_at: st }, this.createdAt);
      this.history.push(['assistant', outputs]);
      (this.globals['sys.history'] as unknown[]).push(`assistant: ${asText(outputs.content ?? '')}`);
    } else if (this.error.startsWith(CANCELED)) {
      yield this.decorate('workflow_finished', { inputs: opts.inputs ?? null, outputs: CANCELED, error: this.error, elapsed_time: performance.now() / 1000 - st, created_at: st }, this.createdAt);
    }
  }

  private abortMessage(): string {
    const r = this.signal.reason;
    return r instanceof Error && r.message.startsWith(CANCELED) ? r.message : CANCELED;
  }

  private messageEnd(n: Node): Record<string, unknown> {
    const end: Record<string, unknown> = {};
    const status = n.param('status');
    if (status) end.status = status;
    const attachment = n.output('attachment');
    if (isPlainObject(attachment)) end.attachment = attachment;
    if (this.hasReference()) end.reference = this.getReference();
    return end;
  }
}

function defaultFor(type: string): unknown {
  if (type === 'number') return 0;
  if (type === 'boolean') return false;
  if (type === 'object') return {};
  if (type.startsWith('array')) return [];
  return '';
}

/** `a.b.0.c` inside a value; JSON text is parsed on the way (RAGFlow `get_variable_param_value`). */
export function pathValue(obj: unknown, path: string): unknown {
  let cur = obj;
  if (!path) return cur;
  for (const key of path.split('.')) {
    if (cur === null || cur === undefined) return null;
    if (typeof cur === 'string') {
      try {
        cur = JSON.parse(cur);
      } catch {
        return null;
      }
    }
    if (Array.isArray(cur)) {
      const i = Number.parseInt(key, 10);
      if (!Number.isInteger(i)) return null;
      cur = cur[i < 0 ? cur.length + i : i];
      continue;
    }
    if (isPlainObject(cur)) {
      cur = Object.prototype.hasOwnProperty.call(cur, key) ? cur[key] : null;
      continue;
    }
    return null;
  }
  return cur ?? null;
}

function asIdList(v: unknown): string[] {
  if (typeof v === 'string') return v ? [v] : [];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && !!x);
  return [];
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Waits `ms`, or less when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Runs jobs with at most `n` at a time. */
async function pool(jobs: Array<() => Promise<void>>, n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const j = jobs[next++]!;
      await j();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, worker));
}

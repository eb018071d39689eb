/**
 * Extraction work: after a raw message is stored, a row in `memory_task` asks for its semantic /
 * episodic / procedural items. The rows are the queue: they outlive the process, and the next
 * open resumes whatever is still pending. One task runs at a time per process; processes sharing
 * a store split the queue (each task claimed by one, under a lease it renews).
 *
 * A model error is retried (3 attempts, backoff); output that is not the expected JSON stores
 * nothing and records why on the task (`progress_msg`), as does a model that cannot extract (the
 * built-in extractive model) or a memory whose items no longer fit.
 */
import type { ChatModel } from '../llm/index.js';
import type { MemoryStore, TaskLease, TaskRow } from '../store/index.js';
import { faultPoint } from '../util/index.js';
import { extract, canExtract, maskToTypes } from './extract.js';

export interface TaskDeps {
  /** The store the tasks, memories and messages are in; `isOpen` false once it is closed. */
  store: { readonly memories: MemoryStore; readonly isOpen: boolean };
  /** The chat model of a memory's llm_id, or undefined when it is not available. */
  model(llmId: string): ChatModel | undefined;
  /** Unit vectors with a memory's embedding model. */
  embed(embdId: string, texts: string[]): Promise<Float32Array[]>;
  isClosed(): boolean;
  /** Where failures are reported besides the task row. @default console.warn */
  log?: (msg: string) => void;
  /** How long a claim lasts without renewal (tests shorten it). @default TASK_LEASE_MS */
  leaseMs?: number;
  /**
   * A store shared with other processes (PostgreSQL): listen for the tasks they queue (the store's
   * wake-ups), and look for tasks this often besides (a lost wake-up, a dead process's lease run
   * out). Absent: only on kicks and due times.
   */
  pollMs?: number;
}

export const TASK_ATTEMPTS = 3;
/**
 * How long a claimed task is left to its process before another may take it. The claimer renews
 * the lease every third of it while it works (a model call may take minutes), so only a dead
 * claimer's task comes due again: after at most this long.
 */
export const TASK_LEASE_MS = 30_000;
const RETRY_MS = [200, 1_000, 5_000];
/** How soon a queue whose store failed looks again. */
const PAUSE_MS = 1_000;

export class ExtractionQueue {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly abort = new AbortController();
  /** Tasks this process is running → the lease it holds on each. */
  private readonly claimed = new Map<number, TaskLease>();
  private readonly leaseMs: number;

  /** A shared store's wake-ups (tasks queued or released by other processes). */
  private watching: Promise<(() => Promise<void>) | null> = Promise.resolve(null);
  /** A kick came while draining: look once more before stopping. */
  private again = false;
  /** The last drain failed on the store (logged once until one gets through). */
  private pausedOn = false;

  constructor(private readonly d: TaskDeps) {
    this.leaseMs = d.leaseMs ?? TASK_LEASE_MS;
    if (d.pollMs !== undefined) this.watching = d.store.memories.watchTasks(() => this.kick()).catch(() => null);
  }

  /** Starts working through pending tasks (when already working, it looks again before it stops). */
  kick(): void {
    if (this.d.isClosed()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.again = false;
    this.running = this.drain().catch((e) => this.paused(e)).finally(() => {
      this.running = null;
      if (this.again) this.kick();
    });
  }

  private get tasks(): MemoryStore {
    return this.d.store.memories;
  }

  /** Resolves when no task is pending or running (tests, benchmarks); waits out retries. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) {
        await this.running;
        continue;
      }
      if (this.d.isClosed() || (await this.tasks.pendingTasks()) === 0) return;
      const due = (await this.tasks.nextDue()) as number;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, Math.min(50, due - Date.now())));
      else this.kick();
    }
  }

  /** Stops: an unfinished task stays pending, and due at once, for the next open. */
  async close(): Promise<void> {
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    await (await this.watching)?.().catch(() => undefined);
    const held = [...this.claimed.values()];
    await this.running?.catch(() => undefined);
    // The engine is closing but its store is still open here (closers run before it closes):
    // what it still holds is due again at once.
    if (held.length && this.d.store.isOpen) await this.tasks.releaseTasks(held, Date.now());
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.d.isClosed() || this.abort.signal.aborted) return;
      // Claim the task due first: other processes may be draining the same queue. The claim is a
      // lease, renewed while this process works on it; a process that dies leaves the task to
      // another once the lease runs out.
      const c = await this.tasks.claimTask(Date.now(), this.leaseMs);
      this.pausedOn = false;
      if (!c) {
        await this.scheduleRetry();
        return;
      }
      const t = c.task;
      this.claimed.set(t.id, c.lease);
      faultPoint('memory.extract:claimed');
      const renew = setInterval(() => this.renew(t.id), Math.max(10, Math.floor(this.leaseMs / 3)));
      renew.unref();
      try {
        await this.run(t);
      } finally {
        clearInterval(renew);
        this.claimed.delete(t.id);
      }
    }
  }

  /** Moves this process's lease on; a lease another process took (this one stalled past it) is given up. */
  private renew(id: number): void {
    const lease = this.claimed.get(id);
    if (lease === undefined || this.d.isClosed() || !this.d.store.isOpen) return;
    this.tasks.renewTask(lease, Date.now(), this.leaseMs).then(
      (ok) => {
        if (!ok) this.claimed.delete(id);
      },
      () => undefined, // busy: the lease has two more renewals before it runs out
    );
  }

  /** A task waiting for its retry time (or another process's lease): wake up then; on a shared store, poll too. */
  private async scheduleRetry(): Promise<void> {
    if (this.timer || this.d.isClosed()) return;
    const at = await this.tasks.nextDue();
    const poll = this.d.pollMs;
    if (at === null && poll === undefined) return;
    this.lookAgainIn(Math.max(0, Math.min(at === null ? Infinity : at - Date.now(), poll ?? Infinity)));
  }

  /** One timer at a time: the next look for due work. */
  private lookAgainIn(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  /**
   * The store failed under the queue (a shared database away, a statement timeout): nothing was
   * claimed or stored, so nothing is lost; say so once and look again later, since no caller
   * awaits a drain a kick started.
   */
  private paused(e: unknown): void {
    if (this.d.isClosed() || this.abort.signal.aborted || !this.d.store.isOpen) return;
    if (!this.pausedOn) (this.d.log ?? console.warn)(`ragloom memory: extraction paused, the store failed: ${e instanceof Error ? e.message : String(e)}; looking again every ${PAUSE_MS} ms`);
    this.pausedOn = true;
    this.lookAgainIn(PAUSE_MS);
  }

  /** Logs a failure the task row records too. */
  private failed(t: TaskRow, msg: string): void {
    (this.d.log ?? console.warn)(`ragloom memory ${t.memory_id}: extraction of message ${t.message_id} failed: ${msg}`);
  }

  private async finish(t: TaskRow, status: 'done' | 'failed', msg: string): Promise<void> {
    const lease = this.claimed.get(t.id);
    // Only while holding the lease: a task another process took over is its to finish.
    if (lease && (await this.tasks.finishTask(t, lease, status, msg, Date.now())) && status === 'failed') this.failed(t, msg);
  }

  private async run(t: TaskRow): Promise<void> {
    const input = await this.tasks.taskInput(t);
    if (!input) return this.finish(t, 'failed', 'the message is gone (evicted or deleted) before its extraction ran');
    const { memory: mem, raw } = input;
    const types = maskToTypes(mem.memory_type).filter((x) => x !== 'raw');
    if (!types.length) return this.finish(t, 'done', 'nothing to extract (raw only)');
    const model = this.d.model(mem.llm_id);
    if (!model) return this.finish(t, 'failed', `the chat model ${mem.llm_id} is not available`);
    if (!canExtract(model)) return this.finish(t, 'failed', `the chat model ${mem.llm_id} cannot extract memories (it does not generate text)`);
    const m = /^User Input: ([\s\S]*?)\nAgent Response: ([\s\S]*)$/.exec(raw.content);
    let res;
    try {
      res = await extract(model, {
        types,
        userInput: m ? m[1]! : raw.content,
        agentResponse: m ? m[2]! : '',
        conversationTime: raw.valid_at,
        now: Date.now(),
        temperature: mem.temperature,
        systemPrompt: mem.system_prompt || undefined,
        userPrompt: mem.user_prompt || undefined,
        signal: this.abort.signal,
      });
    } catch (e) {
      if (this.abort.signal.aborted) return; // closing: stays pending for the next open
      const msg = (e as Error).message;
      if (t.attempts + 1 >= TASK_ATTEMPTS) return this.finish(t, 'failed', `${msg} (after ${TASK_ATTEMPTS} attempts)`);
      const lease = this.claimed.get(t.id);
      if (lease) await this.tasks.retryTask(t, lease, msg, Date.now() + RETRY_MS[t.attempts]!);
      return;
    }
    faultPoint('memory.extract:answered');
    if (res.error) return this.finish(t, 'failed', `the model's answer was not usable: ${res.error}`);
    if (!res.items.length) return this.finish(t, 'done', 'no items extracted');
    let vectors: Float32Array[];
    try {
      vectors = await this.d.embed(mem.embd_id, res.items.map((i) => i.content));
    } catch (e) {
      return this.finish(t, 'failed', `embedding failed: ${(e as Error).message}`);
    }
    if (this.d.isClosed()) return;
    faultPoint('memory.extract:embedded');
    // One transaction: nothing when another process took the task over (stalled past the lease);
    // the raw message may have been evicted while the model was answering.
    const lease = this.claimed.get(t.id);
    if (!lease) return; // lost to another process while the model answered: its to store
    const stored = await this.tasks.storeItems(t, lease, raw.id, res.items.map((it, i) => ({
      message_type: it.type, source_id: raw.id, user_id: raw.user_id, agent_id: raw.agent_id, session_id: raw.session_id,
      content: it.content, vector: vectors[i] ?? null, valid_at: it.valid_at, invalid_at: it.invalid_at, fifo_at: raw.fifo_at,
    })), {
      done: `${res.items.length} items extracted`,
      gone: GONE,
      full: doNotFit,
    }, Date.now());
    if (stored === 'raw-gone') this.failed(t, GONE);
    else if (typeof stored === 'object') this.failed(t, doNotFit(stored.full));
  }
}

const GONE = 'the message was evicted before its items were stored';
const doNotFit = (e: Error): string => `the extracted items do not fit: ${e.message}`;

/**
 * Memories (RAGFlow §11; table memory), their messages (memory_message with memory_fts) under the
 * FIFO byte budget, and extraction tasks (memory_task).
 *
 * The budget: a message costs its content's UTF-8 bytes plus 4 bytes per vector dimension, stored
 * on its row; a memory's `used_bytes` and `message_count` change in the transaction of every
 * insert and eviction and never exceed `memory_size`. Room is made by evicting in FIFO order
 * (forgotten messages first by forget_at, then the oldest by fifo_at, ties by id); a raw message
 * takes its extracted items along. Two processes adding to one memory at once must keep the totals
 * exact: the insert, its evictions and the totals are one transaction that excludes the other's.
 */

export interface MemoryRow {
  id: string;
  tenant_id: string;
  name: string;
  avatar: string;
  memory_type: number;
  storage_type: string;
  embd_id: string;
  llm_id: string;
  permissions: string;
  description: string;
  memory_size: number;
  forgetting_policy: string;
  temperature: number;
  system_prompt: string;
  user_prompt: string;
  used_bytes: number;
  message_count: number;
  created_by: string;
  create_time: number;
  update_time: number;
}

export interface MessageRow {
  id: number;
  memory_id: string;
  message_type: string;
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  valid_at: number;
  invalid_at: number | null;
  forget_at: number | null;
  status: number;
}

export interface NewMessage {
  message_type: 'raw' | 'semantic' | 'episodic' | 'procedural';
  /** 0 for raw messages; the raw message's id for extracted items. */
  source_id: number;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  vector: Float32Array | null;
  valid_at: number;
  invalid_at: number | null;
  /** The eviction position: a raw message's own time; an extracted item's parent's. */
  fifo_at: number;
}

export interface Usage {
  /** Bytes charged now. */
  used: number;
  /** memory_size. */
  budget: number;
  /** Messages stored (raw and extracted). */
  messages: number;
}

/** A message, or a batch, that cannot fit the memory's budget; nothing was written. */
export class MemoryFullError extends Error {
  override name = 'MemoryFullError';
  constructor(readonly needed: number, readonly budget: number, message: string) {
    super(message);
  }
}

export type MemoryChanges = Partial<Pick<MemoryRow, 'name' | 'avatar' | 'memory_type' | 'embd_id' | 'llm_id' | 'permissions' | 'description' |
  'memory_size' | 'forgetting_policy' | 'temperature' | 'system_prompt' | 'user_prompt'>>;

export interface MemoryListQuery {
  tenantIds: readonly string[];
  /** another tenant's memories only when `team` */
  ownTenantId: string;
  /** any of these type bits */
  typeMask?: number;
  storageType?: string;
  /** a substring of the name, lower case */
  keywords?: string;
  limit: number;
  offset: number;
}

/** One raw message to add to one memory (POST /messages), and whether its extraction is queued. */
export interface RawMessageAdd {
  memoryId: string;
  message: NewMessage;
  queueTask: boolean;
}

/** What became of one RawMessageAdd: stored (with its id), the memory gone, or not fitting. */
export type RawMessageResult = { ok: true; id: number } | { ok: false; gone: true } | { ok: false; full: MemoryFullError };

export interface MessageListQuery {
  memoryId: string;
  agentIds?: readonly string[];
  /** a substring of the session id, compared lowercased */
  keywords?: string;
  limit: number;
  offset: number;
}

export interface TaskState {
  status: string;
  attempts: number;
  progress_msg: string;
  update_time: number;
}

export interface RecentQuery {
  memoryIds: readonly string[];
  agentId?: string;
  sessionId?: string;
  limit: number;
}

/** An extraction task as the queue holds it. */
export interface TaskRow {
  id: number;
  memory_id: string;
  message_id: number;
  attempts: number;
}

/**
 * A claim's hold on a task, as the store checks it: SQLite, the update_time the claim stamped
 * (moved on by each renewal); PostgreSQL, the claim's random token. Opaque to callers.
 */
export interface TaskLease {
  readonly id: number;
  mark: number | string;
}

export interface TaskClaim {
  task: TaskRow;
  lease: TaskLease;
}

/** What an extraction needs of its memory and its raw message. */
export interface TaskInput {
  memory: Pick<MemoryRow, 'id' | 'memory_type' | 'embd_id' | 'llm_id' | 'temperature' | 'system_prompt' | 'user_prompt'>;
  raw: Pick<MessageRow, 'id' | 'user_id' | 'agent_id' | 'session_id' | 'content' | 'valid_at'> & { fifo_at: number };
}

/** What storing a task's extracted items came to. */
export type StoreItemsResult = 'stored' | 'lost-lease' | 'raw-gone' | { full: MemoryFullError };

export interface MemoryStore {
  get(id: string): Promise<MemoryRow | undefined>;
  /**
   * Inserts the memory under a free name (`duplicateName` against the tenant's memories,
   * case-insensitively), check and insert in one transaction. Returns the name.
   */
  create(row: MemoryRow): Promise<string>;
  /**
   * One transaction: a new name is made free as on create; the changes and update_time are
   * written; a new `memory_size` is applied at once (FIFO evictions). Returns the name written.
   */
  update(id: string, tenantId: string, changes: MemoryChanges, time: number): Promise<string | undefined>;
  list(q: MemoryListQuery): Promise<{ total: number; rows: MemoryRow[] }>;
  /** The memory, its messages (and their full-text rows) and its tasks, one transaction. */
  delete(id: string): Promise<void>;
  usage(id: string): Promise<Usage | undefined>;
  /**
   * Stores raw messages, one per memory, in ONE transaction (a crash leaves a message in all or
   * none of them): each with its evictions and, when asked, its extraction task. A memory gone
   * or a message that does not fit is reported and skipped (nothing of it written).
   */
  addRaw(adds: readonly RawMessageAdd[], now: number): Promise<RawMessageResult[]>;
  /**
   * Stores messages in one memory, evicting first to make room for all of them together (never
   * the unit of `protect`). Rejects with MemoryFullError (nothing written) when one is larger than
   * the budget or the batch cannot fit; with Error when the memory is gone. One transaction.
   */
  insert(memoryId: string, msgs: readonly NewMessage[], opts: { now: number; protect?: number }): Promise<{ ids: number[]; evicted: number[] }>;
  /** Raw messages (newest first), each with its extracted items and its latest task's state. */
  listMessages(q: MessageListQuery): Promise<{ total: number; rows: Array<{ message: MessageRow; items: MessageRow[]; task: TaskState | undefined }> }>;
  /** A message of the memory, with its vector (null when it has none). */
  getMessage(memoryId: string, id: number): Promise<(MessageRow & { vector: Float32Array | null }) | undefined>;
  /** Sets forget_at the first time. */
  forget(id: number, time: number): Promise<void>;
  setStatus(id: number, enabled: boolean): Promise<void>;
  /** Not forgotten messages of the memories, newest first. */
  recent(q: RecentQuery): Promise<MessageRow[]>;
  /** Messages held by the memories. */
  countMessages(memoryIds: readonly string[]): Promise<number>;
  /** Messages by id (absent ones left out). */
  messages(ids: readonly number[]): Promise<Map<number, MessageRow>>;

  // ---- extraction tasks: each is claimed with a lease that the claimer renews while it works.
  // SQLite: the lease is the task's update_time (a conditional update wins it). PostgreSQL: the
  // memory_task queue (FOR UPDATE SKIP LOCKED, a token and an expiry on the server's clock).
  pendingTasks(): Promise<number>;
  /**
   * When a pending task is next claimable, on this process's clock (ms; at most now when one is
   * due, a leased task counts from its lease's end), or null when none is pending.
   */
  nextDue(): Promise<number | null>;
  /** Claims the pending task due first (by id) for `leaseMs` from `now`; undefined when none is due. */
  claimTask(now: number, leaseMs: number): Promise<TaskClaim | undefined>;
  /** Moves a held lease on to `leaseMs` from `now`; false when it is no longer held (another claim has the task). */
  renewTask(lease: TaskLease, now: number, leaseMs: number): Promise<boolean>;
  /**
   * Calls `wake` when another process may have queued or released a task (PostgreSQL: a NOTIFY at
   * the commit, and after the listening connection reconnects). Resolves to the function that
   * stops it. SQLite has no signal between processes: it never calls `wake`.
   */
  watchTasks(wake: () => void): Promise<() => Promise<void>>;
  /** Makes held tasks due at `now` (closing: another open may take them at once). */
  releaseTasks(leases: readonly TaskLease[], now: number): Promise<void>;
  /** Ends a held task ('done' | 'failed'); false when the lease was lost. */
  finishTask(t: TaskRow, lease: TaskLease, status: 'done' | 'failed', msg: string, now: number): Promise<boolean>;
  /** A held task's failed attempt: counted, its lease ended, due again at `due` (this process's clock). */
  retryTask(t: TaskRow, lease: TaskLease, msg: string, due: number): Promise<void>;
  /** The task's memory and raw message (undefined when either is gone). */
  taskInput(t: TaskRow): Promise<TaskInput | undefined>;
  /**
   * Stores a task's extracted items and finishes it ('done', `msg`), one transaction: nothing when
   * the lease was lost; the task fails when the raw message is gone or the items do not fit.
   */
  storeItems(t: TaskRow, lease: TaskLease, rawId: number, items: readonly NewMessage[], msgs: { done: string; gone: string; full: (e: MemoryFullError) => string }, now: number): Promise<StoreItemsResult>;
}

import { SqliteStore, type Db, type TenantRow } from '../store/index.js';
import { ModelRegistry, DEFAULT_EMBEDDING_MODEL, type ModelConfig } from '../embed/index.js';
import { chatModelExists } from './chat-models.js';
import { AskError } from './ask.js';
import { resolveRetrievalOptions, type RetrievalOptions } from '../search/index.js';

/** Who is calling: every operation runs for one user inside one tenant. */
export interface Ctx {
  tenantId: string;
  userId: string;
}

export interface EngineOptions {
  /** SQLite file path, or ':memory:'. */
  path: string;
  /** The tenant's models (chat, embedding, rerank). */
  models?: ModelConfig[];
  /** `name@factory` of the tenant's default chat model. */
  default_chat_model?: string;
  /** `name@factory` of the tenant's default embedding model. @default the built-in default */
  default_embedding_model?: string;
  /** What agents may reach outside the process (src/agent). */
  agents?: AgentOptions;
  /** This engine's ranking settings (unknown keys or bad values: TypeError). @default DEFAULT_RETRIEVAL_OPTIONS */
  retrieval?: Partial<RetrievalOptions>;
  /**
   * Open an existing store without ever writing to it (an export's source, a report): no schema
   * upgrade, no recovery of interrupted work, no stored defaults updated; every write fails with
   * the file's SQLITE_READONLY error. @default false
   */
  readonly?: boolean;
}

/** Agent runtime settings: nothing outside the process is reachable unless listed here. */
export interface AgentOptions {
  /** Directories whose SQLite files ExeSQL components may read. @default none (ExeSQL refused) */
  sql_dirs?: string[];
  /** URL origins (`https://api.example.com`) Invoke components may call; `['*']`: any. @default none */
  invoke_allow?: string[];
  /** CodeExec limits. @default 10 000 ms, 256 MB */
  code_timeout_ms?: number;
  code_memory_mb?: number;
  /** One agent run's limit. @default 600 000 ms */
  run_timeout_ms?: number;
}

/** One open database plus the models it may use; shared by Api and the parse queue. */
export class Engine {
  /** Everything the engine keeps (src/store). */
  readonly store: SqliteStore;
  /** The SQLite store's connection (tools and tests that inspect the file). */
  readonly db: Db;
  readonly models: ModelRegistry;
  /** The local default user in the local default tenant, as the embedded Client acts. */
  readonly local: Ctx;
  readonly agentOptions: AgentOptions;
  /** The ranking settings every retrieval of this engine uses (frozen; `EngineOptions.retrieval` over the defaults). */
  readonly retrievalOptions: Readonly<RetrievalOptions>;
  /** Opened with `readonly`: background work that writes (recovery, queues) stays off. */
  readonly readonly: boolean;
  private closed = false;
  private readonly closers: Array<() => Promise<void> | void> = [];

  constructor(opts: EngineOptions) {
    this.retrievalOptions = resolveRetrievalOptions(opts.retrieval); // before the file is opened
    this.readonly = opts.readonly === true;
    this.store = new SqliteStore(opts.path, { readonly: this.readonly });
    this.db = this.store.db;
    try {
      this.models = new ModelRegistry(opts.models ?? []);
      this.agentOptions = { ...(opts.agents ?? {}) };
      if (opts.default_chat_model && !chatModelExists(this, opts.default_chat_model)) {
        throw new AskError(102, `\`llm_id\` ${opts.default_chat_model} doesn't exist`);
      }
      this.local = this.ensureLocalAccount(opts);
    } catch (e) {
      this.db.close(); // a constructor that throws must not keep the file open
      throw e;
    }
  }

  /** The tenant's stored defaults (its embedding and chat models). */
  async tenantRow(id: string): Promise<TenantRow> {
    return (await this.store.accounts.tenant(id))!;
  }

  onClose(fn: () => Promise<void> | void): void {
    this.closers.push(fn);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closers.reverse()) await fn();
    await this.models.close();
    await this.store.close();
  }

  private ensureLocalAccount(opts: EngineOptions): Ctx {
    // The store opens synchronously here (SQLite): `new Client()` throws what the file throws.
    return this.store.accounts.ensureLocalNow({
      embd_id: opts.default_embedding_model ?? DEFAULT_EMBEDDING_MODEL, llm_id: opts.default_chat_model ?? '',
    });
  }
}

import { SqliteStore, PgStore, type Db, type Store, type TenantRow, type PgConnectionConfig, type PostgresTuning } from '../store/index.js';
import { ModelRegistry, DEFAULT_EMBEDDING_MODEL, type ModelConfig } from '../embed/index.js';
import { chatModelExists } from './chat-models.js';
import { AskError } from './ask.js';
import { resolveRetrievalOptions, checkIndexMemory, setIndexMemory, type RetrievalOptions } from '../search/index.js';

/** Who is calling: every operation runs for one user inside one tenant. */
export interface Ctx {
  tenantId: string;
  userId: string;
}

export interface EngineOptions {
  /** SQLite file path, or ':memory:'. Not with `postgres`. */
  path?: string;
  /**
   * A PostgreSQL database instead of a file: `postgresql://user:pass@host:port/db` or a `pg` pool
   * config. The database must exist (an empty one gets the schema); open with `Engine.open`.
   */
  postgres?: string | PgConnectionConfig;
  /** How long PostgreSQL calls wait, and the pool's size (with `postgres` only; checked by the Client and startServer). */
  postgresOptions?: PostgresTuning;
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
  /**
   * Bytes the in-memory search indexes of this process may hold (docs/scaling.md, "Memory
   * budget"): the chunks' vector indexes load per dataset on its first search, and when they and
   * the shared text side exceed this the datasets searched least recently are dropped (loaded
   * again by their next search). A whole number ≥ 1 MiB, or Infinity; else TypeError.
   * @default Infinity (every dataset searched stays loaded)
   */
  indexMemory?: number;
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
  /** Everything the engine keeps (src/store): SQLite or PostgreSQL. */
  readonly store: Store;
  readonly models: ModelRegistry;
  /** The local default user in the local default tenant, as the embedded Client acts (set once, at open). */
  local: Ctx;
  readonly agentOptions: AgentOptions;
  /** The ranking settings every retrieval of this engine uses (frozen; `EngineOptions.retrieval` over the defaults). */
  readonly retrievalOptions: Readonly<RetrievalOptions>;
  /** Opened with `readonly`: background work that writes (recovery, queues) stays off. */
  readonly readonly: boolean;
  private closed = false;
  private readonly closers: Array<() => Promise<void> | void> = [];

  /**
   * Opens a SQLite store synchronously (`opts.path`); `Engine.open` opens either kind. `opened`: a
   * store opened already (PostgreSQL), whose local account `open` sets.
   */
  constructor(opts: EngineOptions, opened?: Store) {
    this.retrievalOptions = resolveRetrievalOptions(opts.retrieval); // before the file is opened
    const indexMemory = checkIndexMemory(opts.indexMemory);
    this.readonly = opts.readonly === true;
    if (!opened && typeof opts.path !== 'string') throw new TypeError('Engine needs a SQLite `path` (or Engine.open with `postgres`)');
    this.store = opened ?? new SqliteStore(opts.path!, { readonly: this.readonly });
    setIndexMemory(this.store.search, indexMemory);
    try {
      this.models = new ModelRegistry(opts.models ?? []);
      this.agentOptions = { ...(opts.agents ?? {}) };
      if (opts.default_chat_model && !chatModelExists(this, opts.default_chat_model)) {
        throw new AskError(102, `\`llm_id\` ${opts.default_chat_model} doesn't exist`);
      }
      // The store opens synchronously here (SQLite): `new Client()` throws what the file throws.
      this.local = this.store instanceof SqliteStore ? this.store.accounts.ensureLocalNow(localDefaults(opts)) : { tenantId: '', userId: '' };
    } catch (e) {
      if (!opened) void this.store.close(); // a constructor that throws must not keep the file open
      throw e;
    }
  }

  /** Opens the engine on its store: a SQLite file (`path`) or a PostgreSQL database (`postgres`). */
  static async open(opts: EngineOptions): Promise<Engine> {
    if (opts.postgres === undefined) return new Engine(opts);
    const store = await PgStore.open(opts.postgres, { ...opts.postgresOptions, readonly: opts.readonly === true });
    try {
      const e = new Engine(opts, store);
      e.local = await store.accounts.ensureLocal(localDefaults(opts));
      return e;
    } catch (err) {
      await store.close();
      throw err;
    }
  }

  /** The SQLite store's connection (tools and tests that inspect the file); an Error on another store. */
  get db(): Db {
    if (this.store instanceof SqliteStore) return this.store.db;
    throw new Error(`engine.db is a SQLite connection; this engine's store is ${this.store.kind} (${this.store.name})`);
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
    // The closers' last writes (leases released) go through on a database that answers, and fail
    // at once on one that does not: the close never waits out `unreachableMs`.
    this.store.beginClose?.();
    for (const fn of this.closers.reverse()) await fn();
    await this.models.close();
    await this.store.close();
  }
}

/** The local account's stored defaults, from the engine's configuration. */
function localDefaults(opts: EngineOptions): { embd_id: string; llm_id: string } {
  return { embd_id: opts.default_embedding_model ?? DEFAULT_EMBEDDING_MODEL, llm_id: opts.default_chat_model ?? '' };
}

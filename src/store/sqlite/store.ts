/**
 * The SQLite store (interface/store.ts): one database file (or `:memory:`) on one connection,
 * WAL, foreign keys on, migrated on open (db.ts, migrations.ts). Each async method runs its
 * statements synchronously when called — a write as one `BEGIN IMMEDIATE` transaction (`tx`) —
 * and resolves with the result: no transaction is ever open across an await.
 */
import { openDatabase, type Db, type OpenOptions } from '../db.js';
import type { StoreLocator } from '../interface/index.js';
import { sqliteSearch, type SqliteSearch } from './search.js';
import { SqliteAccounts } from './accounts.js';
import { SqliteDatasets } from './datasets.js';
import { SqliteDocuments } from './documents.js';
import { SqliteSearchApps } from './search-apps.js';
import { SqliteChunks } from './chunk-store.js';
import { SqliteParseWork } from './parse.js';
import { SqliteMemories } from './memories.js';
import { SqliteChats } from './chats.js';
import { SqliteAgents } from './agents.js';
import type { Store } from '../interface/index.js';

export interface SqliteOpenOptions extends OpenOptions {
  /**
   * Read through a memory map of this many bytes (search threads: a retrieval reads scattered
   * chunk rows, and SQLite's own page cache holds few of them; mapped, a page is read without a copy).
   */
  mmapBytes?: number;
}

/** One connection and its transactions: what every SQLite aggregate is built on. */
export class SqliteConn {
  constructor(readonly db: Db) {}

  /**
   * Runs `fn` in one SQLite transaction (synchronous by design: no awaits inside). It takes the
   * write lock at BEGIN (IMMEDIATE): a deferred transaction that reads first and writes later
   * cannot wait for another process's lock at its first write ("database is locked" at once,
   * busy_timeout notwithstanding); IMMEDIATE waits for it at BEGIN, up to busy_timeout.
   */
  tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly db: Db;
  readonly name: string;
  readonly locator: StoreLocator;
  readonly readonly: boolean;
  readonly search: SqliteSearch;
  readonly accounts: SqliteAccounts;
  readonly datasets: SqliteDatasets;
  readonly documents: SqliteDocuments;
  readonly chunks: SqliteChunks;
  readonly parse: SqliteParseWork;
  readonly memories: SqliteMemories;
  readonly chats: SqliteChats;
  readonly agents: SqliteAgents;
  readonly searchApps: SqliteSearchApps;
  protected readonly conn: SqliteConn;

  /** Opens (creating and migrating when needed) the database at `path`; throws what SQLite throws. */
  constructor(path: string, opts: SqliteOpenOptions = {}) {
    this.db = openDatabase(path, opts);
    try {
      if (opts.mmapBytes) this.db.pragma(`mmap_size = ${opts.mmapBytes}`);
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.name = this.db.name;
    this.locator = { kind: 'sqlite', path };
    this.readonly = opts.readonly === true;
    this.conn = new SqliteConn(this.db);
    this.search = sqliteSearch(this.db);
    this.accounts = new SqliteAccounts(this.conn, this.readonly);
    this.datasets = new SqliteDatasets(this.conn);
    this.documents = new SqliteDocuments(this.conn);
    this.chunks = new SqliteChunks(this.conn);
    this.parse = new SqliteParseWork(this.conn, this.chunks);
    this.memories = new SqliteMemories(this.conn);
    this.chats = new SqliteChats(this.conn);
    this.agents = new SqliteAgents(this.conn);
    this.searchApps = new SqliteSearchApps(this.conn);
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  async probe(part: 'records' | 'search' | 'files'): Promise<void> {
    const table = part === 'records' ? 'dataset' : part === 'search' ? 'chunk_fts' : 'blob';
    this.db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

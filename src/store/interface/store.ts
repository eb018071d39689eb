/**
 * The store: everything ragloom keeps, behind one async interface with one module per aggregate.
 *
 * - Each method is one unit of work. A write runs in one transaction inside the store; no
 *   transaction is ever held across an `await` of a caller (src/api, src/core). Checks that must
 *   hold at the moment of the write (the document still exists, the name is still free, the lease
 *   is still held) are made inside that transaction and reported as results, not thrown as ApiErrors:
 *   validation, defaults, permissions and error codes stay in src/api.
 * - Reads are shaped for a database reached over the network: a method that serves a page or a
 *   batch takes all its ids at once (never a query per row in a caller's loop).
 * - Work two processes may race for is decided inside the store with locks: parse claims
 *   (parse.ts), a memory's byte budget (memories.ts), name uniqueness on create (datasets, chats,
 *   memories, agents), extraction-task leases.
 * - Search follows the store through change feeds and row readers (search.ts).
 *
 * Implementations: SQLite (src/store/sqlite, the default: one file, WAL) and PostgreSQL
 * (src/store/postgres: many processes on many hosts). Every implementation passes test/store/contract.
 */
import type { AccountStore } from './accounts.js';
import type { DatasetStore } from './datasets.js';
import type { DocumentStore } from './documents.js';
import type { ChunkStore } from './chunks.js';
import type { ParseWorkStore } from './parse.js';
import type { ChatStore } from './chats.js';
import type { MemoryStore } from './memories.js';
import type { AgentStore } from './agents.js';
import type { SearchReader } from './search.js';
import type { SearchAppStore } from './search-apps.js';

/**
 * Where a store lives, in a form another thread or process can open it from (search threads,
 * child processes): a SQLite file, or a PostgreSQL connection (a URL or a `pg` pool config).
 */
export type StoreLocator = { kind: 'sqlite'; path: string } | { kind: 'postgres'; connection: string | Record<string, unknown>; /** PostgresTuning the store was opened with. */ options?: Record<string, number> };

export interface Store {
  /** 'sqlite' | 'postgres' */
  readonly kind: string;
  /** What messages call the store: a file path, or host:port/database (never a password). */
  readonly name: string;
  readonly locator: StoreLocator;
  /** Opened read-only: every write rejects, and nothing is upgraded or recovered. */
  readonly readonly: boolean;
  readonly accounts: AccountStore;
  readonly datasets: DatasetStore;
  readonly documents: DocumentStore;
  readonly chunks: ChunkStore;
  readonly parse: ParseWorkStore;
  readonly chats: ChatStore;
  readonly memories: MemoryStore;
  readonly agents: AgentStore;
  readonly search: SearchReader;
  readonly searchApps: SearchAppStore;
  readonly isOpen: boolean;
  /**
   * One small read of a part of the store, for a health check; rejects with the part's error.
   * 'records': the tables of datasets, documents and the rest; 'search': the full-text index;
   * 'files': the stored file bytes.
   */
  probe(part: 'records' | 'search' | 'files'): Promise<void>;
  /**
   * The owner is closing (its last writes follow, then close()): from here a call never waits for
   * a database that cannot be reached, and one the database leaves unanswered is cut, so that the
   * close stays prompt. Absent where nothing can be unreachable (a SQLite file).
   */
  beginClose?(): void;
  close(): Promise<void>;
}

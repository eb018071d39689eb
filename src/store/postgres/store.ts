/**
 * The PostgreSQL store (interface/store.ts): every aggregate over one `PgDb` pool (db.ts: retries,
 * timeouts, a clear error while the server is away), migrated on open (migrations.ts). Many
 * processes on many hosts may open one database: writes that race are decided by row locks,
 * advisory locks and unique indexes inside each unit of work, and each process's search follows
 * the commit-order-safe change feed (search.ts, fulltext.ts).
 */
import type { Store, StoreLocator } from '../interface/index.js';
import { PgDb, PG_TUNING_KEYS, type PostgresOptions, type PostgresTuning } from './db.js';
import { migratePostgres, PG_SCHEMA_VERSION } from './migrations.js';
import { SchemaError } from './errors.js';
import { sweepStaged } from './blobs.js';
import type { PgConnectionConfig } from './driver.js';
import { PgAccounts } from './accounts.js';
import { PgDatasets } from './datasets.js';
import { PgDocuments } from './documents.js';
import { PgChunks } from './chunk-store.js';
import { PgParseWork } from './parse.js';
import { PgChats } from './chats.js';
import { PgMemories } from './memory-store.js';
import { PgAgents } from './agents.js';
import { FeedGate, PgSearch } from './search.js';
import { PgSearchApps } from './search-apps.js';
import { PgFullText } from './fulltext.js';

export interface PgStoreOptions extends Omit<PostgresOptions, 'connection'> {
  /** Opened read-only: every write rejects (the server refuses it), nothing is migrated. */
  readonly?: boolean;
}

export class PgStore implements Store {
  readonly kind = 'postgres';
  readonly name: string;
  readonly locator: StoreLocator;
  readonly readonly: boolean;
  readonly accounts: PgAccounts;
  readonly datasets: PgDatasets;
  readonly documents: PgDocuments;
  readonly chunks: PgChunks;
  readonly parse: PgParseWork;
  readonly chats: PgChats;
  readonly memories: PgMemories;
  readonly agents: PgAgents;
  readonly search: PgSearch;
  readonly searchApps: PgSearchApps;
  private readonly fullText: PgFullText;
  private readonly gate: FeedGate;

  private constructor(readonly db: PgDb, connection: string | PgConnectionConfig, readonly_: boolean, tuning: PostgresTuning) {
    this.name = db.target;
    this.locator = { kind: 'postgres', connection, options: { ...tuning } as Record<string, number> };
    this.readonly = readonly_;
    const gate = new FeedGate(db);
    this.gate = gate;
    // This process's own commits are seen by its next search at once (not after their NOTIFY).
    db.onCommit = () => gate.touch();
    this.fullText = new PgFullText(db, gate);
    // After this process's own writes, its full-text copy catches up at once (read-your-writes);
    // other processes' writes arrive through the feed before their next search.
    const wrote = () => this.fullText.refresh().catch(() => undefined);
    this.accounts = new PgAccounts(db, readonly_);
    this.datasets = new PgDatasets(db, gate);
    this.documents = new PgDocuments(db);
    this.chunks = new PgChunks(db, this.fullText, wrote);
    this.parse = new PgParseWork(db, this.chunks, wrote);
    this.chats = new PgChats(db);
    this.memories = new PgMemories(db, wrote);
    this.agents = new PgAgents(db);
    this.search = new PgSearch(db, this.fullText, gate);
    this.searchApps = new PgSearchApps(db);
  }

  /**
   * Connects (the database must exist: DatabaseMissingError names it otherwise), brings an empty
   * or older database to the current schema (unless read-only) and removes uploads that died
   * before they were published.
   */
  static async open(connection: string | PgConnectionConfig, opts: PgStoreOptions = {}): Promise<PgStore> {
    const { readonly = false, ...rest } = opts;
    const given = readonly ? withReadOnly(connection) : connection;
    const db = await PgDb.connect({ ...rest, connection: given });
    try {
      if (readonly) {
        const v = await db.one<{ v: number | null }>("SELECT CASE WHEN to_regclass('schema_version') IS NULL THEN NULL ELSE (SELECT max(version) FROM schema_version) END AS v");
        if (!v?.v) throw new SchemaError(db.target, `${db.target} holds no ragloom store yet: nothing to read`);
        if (v.v > PG_SCHEMA_VERSION) throw new SchemaError(db.target, `Database schema version ${v.v} is newer than this ragloom (${PG_SCHEMA_VERSION}); upgrade ragloom.`);
      } else {
        await migratePostgres(db, opts.targetVersion);
        await sweepStaged(db);
      }
      const tuning = Object.fromEntries(PG_TUNING_KEYS.filter((k) => rest[k] !== undefined).map((k) => [k, rest[k]]));
      return new PgStore(db, connection, readonly, tuning);
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  /**
   * One small read of a part of the store (a health check). Search reads the change feed (each
   * process's indexes and FTS5 copy follow it), files their parts.
   */
  async probe(part: 'records' | 'search' | 'files'): Promise<void> {
    await this.db.one(`SELECT 1 FROM ${part === 'records' ? 'dataset' : part === 'search' ? 'change_log' : 'blob_part'} LIMIT 1`);
  }

  get isOpen(): boolean {
    return !this.db.isClosed;
  }

  beginClose(): void {
    this.db.beginClose();
  }

  async close(): Promise<void> {
    if (this.db.isClosed) return;
    this.fullText.close();
    this.parse.close();
    await this.gate.close();
    await this.db.close();
  }
}

/** The connection with every transaction read-only (the server refuses writes). */
function withReadOnly(c: string | PgConnectionConfig): PgConnectionConfig {
  const base: PgConnectionConfig = typeof c === 'string' ? { connectionString: c } : { ...c };
  const opt = typeof base.options === 'string' ? `${base.options} ` : '';
  return { ...base, options: `${opt}-c default_transaction_read_only=on` };
}

export { openDatabase, cachedStatement } from './db.js';
export type { Db, OpenOptions } from './db.js';
export { migrate, MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
export { putBlob, getBlob, pruneBlobs } from './blobs.js';
export { upsertChunk, upsertChunks, removeChunkRows, rewriteChunk, removeDocumentChunks, retitleDocumentChunks, chunkRowidsOfDocuments, storedAnalysis } from './chunks.js';
export { vecTable, toBlob, fromBlob } from './vectors.js';
export { SqliteStore, SqliteConn } from './sqlite/store.js';
export { openStore } from './open.js';
export type { StoreOpenOptions } from './open.js';
export type { SqliteOpenOptions } from './sqlite/store.js';
export { sqliteSearch, SqliteSearch } from './sqlite/search.js';
export { messageCost, allocatorHooks, SqliteMemories } from './sqlite/memories.js';
export { RUN, MemoryFullError, UNRELEASED_VERSIONS_KEPT, VECTOR_SOURCES, FTS_COLUMN_WEIGHTS } from './interface/index.js';
export type * from './interface/index.js';
export {
  PgStore, openPostgres, isPostgresUrl, PostgresStoreError, DatabaseUnavailableError, DatabaseMissingError, CommitOutcomeUnknownError,
  StatementTimeoutError, SchemaError, tuningProblem, PG_TUNING_KEYS, PG_DEFAULTS,
} from './postgres/index.js';
export type { PostgresOptions, PostgresTuning, PgConnectionConfig, PgStoreOptions } from './postgres/index.js';

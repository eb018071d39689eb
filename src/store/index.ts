export { openDatabase, cachedStatement } from './db.js';
export type { Db, OpenOptions } from './db.js';
export { migrate, MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
export { putBlob, getBlob, pruneBlobs } from './blobs.js';
export { upsertChunk, upsertChunks, removeChunkRows, rewriteChunk, removeDocumentChunks, retitleDocumentChunks, chunkRowidsOfDocuments, storedAnalysis, reindexDatasetSlice, datasetAnalyses, markDatasetReindexed } from './chunks.js';
export type { ChunkRow, NewChunk } from './chunks.js';
export { vecTable, toBlob, fromBlob } from './vectors.js';
export { recordParseStarts, finishParseLogs, getParseLog, PARSE_LOG_SELECT } from './parse-log.js';
export type { ParseLogRow } from './parse-log.js';
export {
  openPostgres, isPostgresUrl, PostgresStoreError, DatabaseUnavailableError, DatabaseMissingError, CommitOutcomeUnknownError,
  StatementTimeoutError, SchemaError,
} from './postgres/index.js';
export type { PostgresOptions, PgConnectionConfig } from './postgres/index.js';

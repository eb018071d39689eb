export { PgStore } from './store.js';
export { LOAD_PAGES } from './sql.js';
export type { PgStoreOptions } from './store.js';
export { openPostgres } from './open.js';
export { PgDb, PG_DEFAULTS, PG_TUNING_KEYS, isPostgresUrl, targetOf, tuningProblem } from './db.js';
export type { PostgresOptions, PostgresTuning, PgQuery, PgTx, TxOptions } from './db.js';
export type { PgConnectionConfig } from './driver.js';
export { migratePostgres, PG_MIGRATIONS, PG_SCHEMA_VERSION, PG_TABLES } from './migrations.js';
export {
  PostgresStoreError, DatabaseUnavailableError, DatabaseMissingError, CommitOutcomeUnknownError, StatementTimeoutError, StoreClosedError, SchemaError,
  isConnectionError, isUniqueViolation, isRetryableConflict, isStatementTimeout,
} from './errors.js';
export { feedStart, readFeed, reportReader, dropReader, trimFeed, FeedFollower, FEED_CHANNEL } from './feed.js';
export type { FeedPosition, Change, FeedPage, FollowerOptions } from './feed.js';
export { PARSE_JOBS, MEMORY_TASKS, claimJobs, renewLeases, holdLease, releaseLease, enqueueParse, finishParseJob, leaseOwner, LeaseKeeper } from './claims.js';
export type { LeaseQueue, Lease } from './claims.js';
export { lockMemory, evictFor, insertMessages, resizeMemory } from './memories.js';
export type { PgNewMessage, PgUsage, InsertOutcome } from './memories.js';
export { NAME_INDEXES, nameClash, insertUnderFreeName, foldAscii } from './names.js';
export type { NameIndex } from './names.js';
export { stageBlob, commitBlob, putBlob, readBlob, getBlob, blobInfo, pruneBlobs, sweepStaged, BLOB_PART_BYTES } from './blobs.js';
export type { StagedBlob } from './blobs.js';

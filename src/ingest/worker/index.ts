export { IngestWorker, IngestError, INGEST_DEFAULTS } from './pool.js';
export type { IngestLimits, ParseOutcome } from './pool.js';
export type { AnalyzeItem } from './protocol.js';

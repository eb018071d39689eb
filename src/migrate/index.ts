/**
 * Moving knowledge bases between RAGFlow releases, ragloom servers and ragloom files:
 * export → import → verify (→ rollback), over the RAGFlow REST interface or a database file.
 */
export { migrateExport, type ExportOptions, type ExportSummary } from './export.js';
export { migrateImport, type ImportOptions, type ImportSummary, type ImportPlanRow } from './import.js';
export { migrateVerify, type VerifyOptions, type VerifyReport, type VerifyRow, type RunDistribution } from './verify.js';
export { migrateRollback, type RollbackOptions, type RollbackSummary } from './rollback.js';
export { MigrationError, MANIFEST_NAME, CHUNK_METHODS, readManifest, type Manifest, type ManifestEntry, type ManifestFile, type ImportRecord } from './manifest.js';
export { HTTP_TIMEOUT_MS } from './endpoint.js';
export type { MigrationProgress, MigrationHooks } from './progress.js';

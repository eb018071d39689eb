/**
 * The parse log: one row per parse of a document (RAGFlow's pipeline_operation_log, served as the
 * dataset's ingestion logs; a row's id is also the parse's task id, `/tasks/{task_id}`). A row is
 * written when the parse is queued (operation_status '1', RUNNING) and finished from the
 * document's own row when the parse ends (DONE, FAIL, or CANCEL when stopped). Call inside the
 * transaction that changes the documents.
 */
import { cachedStatement, type Db } from './db.js';
import { newId } from '../util/index.js';

import type { ParseLogRow } from './interface/index.js';

/** Opens one log row per document being (re)queued; a row still open for it (a parse superseded) is closed as CANCEL. */
export function recordParseStarts(db: Db, documentIds: readonly string[], tenantId: string): void {
  const now = Date.now();
  const close = cachedStatement(db, "UPDATE parse_log SET operation_status = '2', update_time = ? WHERE document_id = ? AND operation_status = '1'");
  const open = cachedStatement(db, `INSERT INTO parse_log (id, document_id, dataset_id, tenant_id, parser_id, document_name, document_suffix,
      document_type, source_from, create_time, update_time)
    SELECT ?, id, dataset_id, ?, parser_id, name, suffix, type, source_type, ?, ? FROM document WHERE id = ?`);
  for (const id of documentIds) {
    close.run(now, id);
    open.run(newId(), tenantId, now, now, id);
  }
}

/** Finishes the open rows of documents no longer RUNNING with their state (run, progress, message, timing). */
export function finishParseLogs(db: Db, documentIds: readonly string[]): void {
  const finish = cachedStatement(db, `UPDATE parse_log SET (operation_status, progress, progress_msg, process_begin_at, process_duration, update_time) =
      (SELECT d.run, d.progress, d.progress_msg, d.process_begin_at, d.process_duration, ? FROM document d WHERE d.id = parse_log.document_id)
    WHERE document_id = ? AND operation_status = '1' AND EXISTS (SELECT 1 FROM document d WHERE d.id = ? AND d.run != '1')`);
  const now = Date.now();
  for (const id of documentIds) finish.run(now, id, id);
}

/**
 * A row as it reads now: a row left open whose document is gone or no longer parsing (deleted
 * mid-parse, stopped by another process) reads as CANCEL, or as the document's final state.
 */
export const PARSE_LOG_SELECT = `SELECT l.id, l.document_id, l.dataset_id, l.tenant_id, l.parser_id, l.document_name, l.document_suffix,
    l.document_type, l.source_from, l.progress, l.progress_msg, l.process_begin_at, l.process_duration,
    CASE WHEN l.operation_status = '1' AND (d.id IS NULL OR d.run != '1') THEN COALESCE(d.run, '2') ELSE l.operation_status END AS operation_status,
    l.create_time, l.update_time
  FROM parse_log l LEFT JOIN document d ON d.id = l.document_id`;

/** One row by id (its task id), or undefined. */
export function getParseLog(db: Db, id: string): ParseLogRow | undefined {
  return cachedStatement(db, `${PARSE_LOG_SELECT} WHERE l.id = ?`).get(id) as ParseLogRow | undefined;
}

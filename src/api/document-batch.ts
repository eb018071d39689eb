/**
 * Operations on several documents at once (document_api.py): switching documents on or off
 * (`batch-update-status`) and the web app's run / cancel (`/documents/ingest`), over the same
 * parse queue as the parse routes.
 */
import type { Engine, Ctx, ParseQueue, DocumentRow } from '../core/index.js';
import { ownedDataset, visibleDataset, RUN } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { cancelParsing, parseAll } from './parse.js';
import { cachedStatement } from '../store/index.js';

type P = Record<string, unknown>;
const argError = (message: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, message);
};

/**
 * `POST /datasets/{id}/documents/batch-update-status {doc_ids, status: "0"|"1"}`: each document
 * (and its chunks) switched on or off; `{doc_id: {status} | {error}}`. Any error: code 500
 * `Partial failure` with the same map (the others are switched).
 */
export function batchUpdateStatus(e: Engine, ctx: Ctx, datasetId: string, req: P): Record<string, P> {
  const ids = req.doc_ids ?? [];
  if (!Array.isArray(ids) || !ids.length) argError('"doc_ids" must be a non-empty list.');
  if ((ids as unknown[]).some((x) => typeof x !== 'string' || !x)) argError('"doc_ids" must contain non-empty document IDs.');
  const status = pyStr(req.status ?? -1);
  if (status !== '0' && status !== '1') argError(`"Status" must be either 0 or 1:${status}!`);
  const kb = ownedDataset(e, ctx, datasetId);
  if (!kb) throw new ApiError(RetCode.DATA_ERROR, "You don't own the dataset.");
  const result: Record<string, P> = {};
  let failed = false;
  e.tx(() => {
    const get = cachedStatement(e.db, 'SELECT id, dataset_id, status FROM document WHERE id = ?');
    for (const id of ids as string[]) {
      const doc = get.get(id) as Pick<DocumentRow, 'id' | 'dataset_id' | 'status'> | undefined;
      if (!doc) {
        result[id] = { error: 'Document not found' };
        failed = true;
      } else if (doc.dataset_id !== kb!.id) {
        result[id] = { error: 'Document not found in this dataset.' };
        failed = true;
      } else {
        if (doc.status !== status) {
          e.db.prepare('UPDATE document SET status = ?, update_time = ? WHERE id = ?').run(status, Date.now(), id);
          e.db.prepare('UPDATE chunk SET available = ? WHERE document_id = ?').run(Number(status), id);
        }
        result[id] = { status };
      }
    }
  });
  if (failed) throw new ApiError(RetCode.SERVER_ERROR, 'Partial failure', { data: result });
  return result;
}

/**
 * `POST /documents/ingest {doc_ids, run, delete?}`: `run` "1" parses the documents again, "2"
 * stops them (one not parsing: 102 `Cannot cancel a task that is not in RUNNING status`), any
 * other status is set as it is. A document the caller cannot see: 109 `No authorization.`.
 */
export function ingest(e: Engine, q: ParseQueue, ctx: Ctx, req: P): true {
  if (!('doc_ids' in req)) throw new ApiError(RetCode.EXCEPTION_ERROR, "KeyError('doc_ids')");
  const ids = Array.isArray(req.doc_ids) ? req.doc_ids.map((x) => pyStr(x)) : [];
  const get = cachedStatement(e.db, 'SELECT * FROM document WHERE id = ?');
  const docs = ids.map((id) => get.get(id) as DocumentRow | undefined);
  if (docs.some((d) => !d || !visibleDataset(e, ctx, d.dataset_id))) throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.', { data: null });
  if (!('run' in req)) throw new ApiError(RetCode.EXCEPTION_ERROR, "KeyError('run')");
  const run = pyStr(req.run);
  const all = docs as DocumentRow[];
  if (run === RUN.CANCEL) {
    const idle = all.find((d) => d.run !== RUN.RUNNING && d.run !== RUN.CANCEL);
    if (idle) throw new ApiError(RetCode.DATA_ERROR, 'Cannot cancel a task that is not in RUNNING status', { data: null });
    cancelParsing(e, q, all.filter((d) => d.run === RUN.RUNNING));
  } else if (run === RUN.RUNNING) {
    parseAll(e, q, ctx, all);
  } else {
    e.tx(() => all.forEach((d) => e.db.prepare('UPDATE document SET run = ?, progress = 0 WHERE id = ?').run(run, d.id)));
  }
  return true;
}

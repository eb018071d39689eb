/**
 * Operations on several documents at once (document_api.py): switching documents on or off
 * (`batch-update-status`) and the web app's run / cancel (`/documents/ingest`), over the same
 * parse queue as the parse routes.
 */
import type { Engine, Ctx, ParseQueue, DocumentRow } from '../core/index.js';
import { ownedDataset, RUN } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { cancelParsing, parseAll } from './parse.js';

type P = Record<string, unknown>;
const argError = (message: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, message);
};

/**
 * `POST /datasets/{id}/documents/batch-update-status {doc_ids, status: "0"|"1"}`: each document
 * (and its chunks) switched on or off; `{doc_id: {status} | {error}}`. Any error: code 500
 * `Partial failure` with the same map (the others are switched).
 */
export async function batchUpdateStatus(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<Record<string, P>> {
  const ids = req.doc_ids ?? [];
  if (!Array.isArray(ids) || !ids.length) argError('"doc_ids" must be a non-empty list.');
  if ((ids as unknown[]).some((x) => typeof x !== 'string' || !x)) argError('"doc_ids" must contain non-empty document IDs.');
  const status = pyStr(req.status ?? -1);
  if (status !== '0' && status !== '1') argError(`"Status" must be either 0 or 1:${status}!`);
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) throw new ApiError(RetCode.DATA_ERROR, "You don't own the dataset.");
  const result: Record<string, P> = {};
  let failed = false;
  // One transaction: the dataset's documents among the ids (and their chunks) switched, the others reported.
  const outcome = await e.store.documents.setStatus(kb.id, ids as string[], status as '0' | '1', Date.now());
  (ids as string[]).forEach((id, i) => {
    if (outcome[i] === 'absent') {
      result[id] = { error: 'Document not found' };
      failed = true;
    } else if (outcome[i] === 'elsewhere') {
      result[id] = { error: 'Document not found in this dataset.' };
      failed = true;
    } else result[id] = { status };
  });
  if (failed) throw new ApiError(RetCode.SERVER_ERROR, 'Partial failure', { data: result });
  return result;
}

/**
 * `POST /documents/ingest {doc_ids, run, delete?}`: `run` "1" parses the documents again, "2"
 * stops them (one not parsing: 102 `Cannot cancel a task that is not in RUNNING status`), any
 * other status is set as it is. A document the caller cannot see: 109 `No authorization.`.
 */
export async function ingest(e: Engine, q: ParseQueue, ctx: Ctx, req: P): Promise<true> {
  if (!('doc_ids' in req)) throw new ApiError(RetCode.EXCEPTION_ERROR, "KeyError('doc_ids')");
  const ids = Array.isArray(req.doc_ids) ? req.doc_ids.map((x) => pyStr(x)) : [];
  const found = await e.store.parse.documents(ids);
  const docs = ids.map((id) => found.get(id));
  const visible = await e.store.datasets.getVisibleMany([...new Set([...found.values()].map((d) => d.dataset_id))], ctx);
  if (docs.some((d) => !d || !visible.has(d.dataset_id))) throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.', { data: null });
  if (!('run' in req)) throw new ApiError(RetCode.EXCEPTION_ERROR, "KeyError('run')");
  const run = pyStr(req.run);
  const all = docs as DocumentRow[];
  if (run === RUN.CANCEL) {
    const idle = all.find((d) => d.run !== RUN.RUNNING && d.run !== RUN.CANCEL);
    if (idle) throw new ApiError(RetCode.DATA_ERROR, 'Cannot cancel a task that is not in RUNNING status', { data: null });
    await cancelParsing(e, q, all.filter((d) => d.run === RUN.RUNNING));
  } else if (run === RUN.RUNNING) {
    await parseAll(e, q, ctx, all);
  } else {
    await e.store.documents.setRun(all.map((d) => d.id), run);
  }
  return true;
}

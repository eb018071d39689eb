import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, RUN, type ParseQueue } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { pyListRepr, faultPoint } from '../util/index.js';

/** The dataset (owned by the caller) and the de-duplicated `document_ids` of a parse/stop request. */
async function target(e: Engine, ctx: Ctx, datasetId: string, req: Record<string, unknown>) {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const raw = req.document_ids;
  if (!Array.isArray(raw) || raw.length === 0) fail('DOCUMENT_IDS_REQUIRED');
  return { kb, ids: [...new Set(Array.from(raw, (x) => pyStr(x)))] };
}

export async function parseDocuments(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string, req: Record<string, unknown>): Promise<void> {
  const { kb, ids } = await target(e, ctx, datasetId, req);
  const docs = await e.store.documents.getMany(kb.id, ids);
  const found = ids.map((id) => docs.get(id)).filter((d) => !!d);
  if (found.some((d) => d.run === RUN.RUNNING)) fail('PARSE_RUNNING');
  const have = new Set(found.map((d) => d.id));
  const missing = ids.filter((id) => !have.has(id));
  await e.store.parse.reset(found.map((d) => d.id));
  faultPoint('parse:reset');
  await q.enqueue(found.map((d) => d.id));
  // RAGFlow queues the valid ones, then reports the rest.
  if (missing.length) fail('DOCUMENTS_NOT_FOUND', pyListRepr(missing));
}

export async function stopParsing(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string, req: Record<string, unknown>): Promise<void> {
  const { kb, ids } = await target(e, ctx, datasetId, req);
  const rows = await e.store.documents.getMany(kb.id, ids);
  const docs = ids.map((id) => {
    const d = rows.get(id);
    if (!d) fail('DOCUMENT_NOT_OWNED', id);
    return d;
  });
  for (const d of docs) {
    if (d.run !== RUN.RUNNING) {
      throw new ApiError(RetCode.DATA_ERROR, "Can't stop parsing document that has not started or already completed", {
        data: { error_code: 'DOC_STOP_PARSING_INVALID_STATE' },
      });
    }
  }
  await e.store.parse.cancel(docs.map((d) => d.id)); // CANCEL, and the counts of the old chunks, the dataset's counters
  for (const d of docs) q.cancel(d.id);
}

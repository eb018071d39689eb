/**
 * Starting and stopping the parse of documents. RAGFlow 0.25.6 has two pairs of routes for it and
 * both are served from here: the SDK's `POST`/`DELETE /datasets/{id}/chunks` (chunk_api.parse /
 * stop_parsing: first failure ends the request) and `POST /datasets/{id}/documents/parse` /
 * `…/documents/stop` (document_api: every document is tried, `{success_count, errors}` answers).
 */
import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, RUN, type ParseQueue, type DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { pyListRepr, faultPoint } from '../util/index.js';

type P = Record<string, unknown>;

/** The caller's dataset and the `document_ids` of a parse/stop request: de-duplicated, with RAGFlow's duplicate messages. */
async function target(e: Engine, ctx: Ctx, datasetId: string, req: P) {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const raw = req.document_ids;
  if (!Array.isArray(raw) || raw.length === 0) fail('DOCUMENT_IDS_REQUIRED');
  const all = Array.from(raw, (x) => pyStr(x));
  const counts = new Map<string, number>();
  for (const id of all) counts.set(id, (counts.get(id) ?? 0) + 1);
  const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => `Duplicate document ids: ${id}`);
  const ids = [...counts.keys()];
  const docs = await e.store.documents.getMany(kb.id, ids);
  const found = ids.map((id) => docs.get(id)).filter((d): d is DocumentRow => !!d);
  const have = new Set(found.map((d) => d.id));
  return { kb, found, missing: ids.filter((id) => !have.has(id)), duplicates };
}

/** Marks documents for parsing and queues them (old chunks stay searchable until the new ones replace them). */
export async function parseAll(e: Engine, q: ParseQueue, ctx: Ctx, docs: DocumentRow[]): Promise<void> {
  const ids = docs.map((d) => d.id);
  await e.store.parse.reset(ids, ctx.tenantId); // one transaction: the parse-log rows open with the reset
  faultPoint('parse:reset');
  await q.enqueue(ids);
}

/** Stops documents: CANCEL, their previous chunks' counts back, the queue told. */
export async function cancelParsing(e: Engine, q: ParseQueue, docs: DocumentRow[]): Promise<void> {
  // CANCEL, the old chunks' counts back (and the datasets' counters), the parse-log rows finished: one transaction.
  await e.store.parse.cancel(docs.map((d) => d.id));
  for (const d of docs) q.cancel(d.id);
}

/**
 * `POST /datasets/{id}/chunks` (chunk_api.parse): a document being parsed refuses the request;
 * unknown ids are reported after the others are queued; duplicates answer `{success_count, errors}`.
 */
export async function parseDocuments(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string, req: P): Promise<{ success_count: number; errors: string[] } | undefined> {
  const { found, missing, duplicates } = await target(e, ctx, datasetId, req);
  if (found.some((d) => d.run === RUN.RUNNING)) fail('PARSE_RUNNING');
  await parseAll(e, q, ctx, found);
  // RAGFlow queues the valid ones, then reports the rest.
  if (missing.length) fail('DOCUMENTS_NOT_FOUND', pyListRepr(missing));
  if (duplicates.length) return { success_count: found.length, errors: duplicates };
  return undefined;
}

/** `DELETE /datasets/{id}/chunks` (chunk_api.stop_parsing): all-or-nothing. */
export async function stopParsing(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string, req: P): Promise<{ success_count: number; errors: string[] } | undefined> {
  const { found, missing, duplicates } = await target(e, ctx, datasetId, req);
  if (missing.length) fail('DOCUMENT_NOT_OWNED', missing[0]!);
  if (found.some((d) => d.run !== RUN.RUNNING)) {
    throw new ApiError(RetCode.DATA_ERROR, "Can't stop parsing document that has not started or already completed", {
      data: { error_code: 'DOC_STOP_PARSING_INVALID_STATE' },
    });
  }
  await cancelParsing(e, q, found);
  if (duplicates.length) return { success_count: found.length, errors: duplicates };
  return undefined;
}

/**
 * `POST /datasets/{id}/documents/parse` (document_api.parse_documents): every known document is
 * (re)queued, one being parsed included; unknown ids fail the request after that, with 102
 * `Documents not found: [...]`; otherwise `{success_count, errors?}` (duplicates).
 */
export async function startParsing(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string, req: P): Promise<{ success_count: number; errors?: string[] }> {
  const { found, missing, duplicates } = await target(e, ctx, datasetId, req);
  if (missing.length && !found.length) fail('DOCUMENTS_NOT_FOUND', pyListRepr(missing));
  await parseAll(e, q, ctx, found);
  if (missing.length) fail('DOCUMENTS_NOT_FOUND', pyListRepr(missing));
  return duplicates.length ? { success_count: found.length, errors: duplicates } : { success_count: found.length };
}

/**
 * `POST /datasets/{id}/documents/stop` (document_api.stop_parse_documents): unknown ids fail the
 * request before anything stops; a document neither running nor cancelled is an entry of
 * `errors`, the rest stop; the answer is `{success_count, errors?}` either way.
 */
export async function stopParsingDocuments(e: Engine, q: ParseQueue, ctx: Ctx, datasetId: string, req: P): Promise<{ success_count: number; errors?: string[] }> {
  const { found, missing, duplicates } = await target(e, ctx, datasetId, req);
  if (missing.length) fail('DOCUMENTS_NOT_FOUND', pyListRepr(missing));
  const errors = [...duplicates];
  const stoppable = found.filter((d) => {
    if (d.run === RUN.RUNNING || d.run === RUN.CANCEL) return true;
    errors.push("Can't stop parsing document that has not started or already completed");
    return false;
  });
  await cancelParsing(e, q, stoppable.filter((d) => d.run === RUN.RUNNING));
  return errors.length ? { success_count: stoppable.length, errors } : { success_count: stoppable.length };
}

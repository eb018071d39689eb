/**
 * `documents.replaceContent` (a ragloom addition; no REST route, so the embedded engine only):
 * new bytes under an existing document, for re-ingesting a file that changed. The document keeps
 * its id, name, chunk method, parser_config, meta_fields and `enabled`.
 */
import type { Engine, Ctx } from '../core/index.js';
import { documentToWire, RUN } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { MAX_UPLOAD_BYTES, capped, isStream, tooLargeToStore } from './documents.js';
import { nowMs, sha256Hex } from '../util/index.js';

export interface ReplaceContentResult {
  /** false: the bytes were identical (same sha256) and nothing changed. */
  replaced: boolean;
  /** The document after the call (wire shape). */
  document: Record<string, unknown>;
}

/**
 * Identical bytes (the same sha256 as the stored file) change nothing: `replaced: false`, the
 * document as it is. Other bytes, in one transaction: the new blob is stored, the document points
 * at it (`size`, `update_time`), its parse state goes back to UNSTART (progress 0), and the old
 * blob is dropped when no other document uses it. The document's chunks stay, searchable and
 * counted, until its next parse swaps them for the new content's in one transaction (as any
 * re-parse does; a parse that fails or is cancelled leaves them).
 *
 * `blob` is bytes or a stream of them (a Node Readable, a web ReadableStream, any async iterable),
 * as an upload's. Codes: 102 the dataset is not the caller's or the document not the dataset's;
 * 101 `blob` is not bytes (or a stream yields something else); 500 larger than the store holds;
 * 102 `REPLACE_RUNNING` while the document is being parsed (its parse would otherwise finish
 * with the old content's chunks).
 */
export async function replaceDocumentContent(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): Promise<ReplaceContentResult> {
  const kb = typeof datasetId === 'string' ? await e.store.datasets.getOwned(datasetId, ctx.tenantId) : undefined;
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const doc = typeof documentId === 'string' ? await e.store.documents.get(kb.id, documentId) : undefined;
  if (!doc) fail('DOCUMENT_NOT_OWNED', documentId);
  const blob = req.blob;
  if (!(blob instanceof Uint8Array) && !isStream(blob)) throw new ApiError(RetCode.ARGUMENT_ERROR, `${doc.name}: \`blob\` must be a Uint8Array, a Buffer or a stream of them`);
  if (blob instanceof Uint8Array && blob.byteLength > MAX_UPLOAD_BYTES) throw new ApiError(RetCode.SERVER_ERROR, tooLargeToStore(doc.name, blob.byteLength));
  if (doc.run === RUN.RUNNING) fail('REPLACE_RUNNING');
  if (blob instanceof Uint8Array && blob.byteLength === doc.size && sha256Hex(blob) === doc.blob_sha256) return { replaced: false, document: documentToWire(doc) };
  // The store reads the document's state again inside the write: a parse queued by another
  // connection since the check above wins. A stream is checked as it is read (bytes, the size
  // limit), and one that fails stores nothing.
  const r = await e.store.documents.replaceContent(doc, blob instanceof Uint8Array ? blob : capped(doc.name, blob), nowMs());
  if (r === 'gone') fail('DOCUMENT_NOT_OWNED', documentId);
  if (r === 'running') fail('REPLACE_RUNNING');
  return { replaced: r === 'replaced', document: documentToWire((await e.store.documents.get(kb.id, doc.id))!) };
}

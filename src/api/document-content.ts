/**
 * `documents.replaceContent` (a ragloom addition; no REST route, so the embedded engine only):
 * new bytes under an existing document, for re-ingesting a file that changed. The document keeps
 * its id, name, chunk method, parser_config, meta_fields and `enabled`.
 */
import type { Engine, Ctx } from '../core/index.js';
import { ownedDataset, documentToWire, getDocument, RUN } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { MAX_UPLOAD_BYTES, tooLargeToStore } from './documents.js';
import { nowMs, sha256Hex, faultPoint } from '../util/index.js';
import { putBlob, pruneBlobs } from '../store/index.js';

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
 * Codes: 102 the dataset is not the caller's or the document not the dataset's; 101 `blob` is not
 * bytes; 500 larger than the store holds; 102 `REPLACE_RUNNING` while the document is being parsed
 * (its parse would otherwise finish with the old content's chunks).
 */
export function replaceDocumentContent(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: Record<string, unknown>): ReplaceContentResult {
  const kb = ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED', datasetId);
  const doc = getDocument(e, kb.id, documentId);
  if (!doc) fail('DOCUMENT_NOT_OWNED', documentId);
  const blob = req.blob;
  if (!(blob instanceof Uint8Array)) throw new ApiError(RetCode.ARGUMENT_ERROR, `${doc.name}: \`blob\` must be a Uint8Array or Buffer`);
  if (blob.byteLength > MAX_UPLOAD_BYTES) throw new ApiError(RetCode.SERVER_ERROR, tooLargeToStore(doc.name, blob.byteLength));
  if (doc.run === RUN.RUNNING) fail('REPLACE_RUNNING');
  if (blob.byteLength === doc.size && sha256Hex(blob) === doc.blob_sha256) return { replaced: false, document: documentToWire(doc) };
  const t = nowMs();
  e.tx(() => {
    // Read again inside the write: a parse queued by another connection since the check above wins.
    const cur = e.db.prepare('SELECT run, blob_sha256 FROM document WHERE id = ?').get(doc.id) as { run: string; blob_sha256: string } | undefined;
    if (!cur) fail('DOCUMENT_NOT_OWNED', documentId);
    if (cur.run === RUN.RUNNING) fail('REPLACE_RUNNING');
    const sha = putBlob(e.db, blob);
    faultPoint('replace:blob-written');
    e.db.prepare(`UPDATE document SET blob_sha256 = ?, size = ?, run = ?, progress = 0, progress_msg = '', process_begin_at = NULL,
        process_duration = 0, update_time = ? WHERE id = ?`).run(sha, blob.byteLength, RUN.UNSTART, t, doc.id);
    faultPoint('replace:row-written');
    pruneBlobs(e.db, [cur.blob_sha256]);
    e.db.prepare('UPDATE dataset SET update_time = ? WHERE id = ?').run(t, kb.id);
  });
  faultPoint('replace:committed');
  return { replaced: true, document: documentToWire(getDocument(e, kb.id, doc.id)!) };
}

/**
 * Reading files out of the store by id (document_api.py): a document's bytes by its id alone
 * (`GET /documents/{id}`, `/preview` with its type), the thumbnails' map, chunk images
 * (`/documents/images/{dataset_id}-{chunk_id}`: the image a chunk was added with), and sandbox
 * artifacts (ragloom's agents write none).
 */
import type { Engine, Ctx } from '../core/index.js';
import { visibleDataset, type DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { withFileInfo } from './routes.js';
import { getBlob, cachedStatement } from '../store/index.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};

/** A document by id, if the caller can see its dataset. */
function visibleDocument(e: Engine, ctx: Ctx, documentId: string): DocumentRow | undefined {
  const doc = cachedStatement(e.db, 'SELECT * FROM document WHERE id = ?').get(documentId) as DocumentRow | undefined;
  return doc && visibleDataset(e, ctx, doc.dataset_id) ? doc : undefined;
}

/** `GET /documents/{id}`: the document's bytes (attachment), as the dataset-scoped download; unknown → 102 `The dataset not own the document {id}.`. */
export function downloadById(e: Engine, ctx: Ctx, documentId: string): Uint8Array {
  if (!documentId) dataError('Specify document_id please.');
  const doc = visibleDocument(e, ctx, documentId);
  if (!doc) fail('DOWNLOAD_NOT_OWNED', documentId);
  const data = getBlob(e.db, doc!.blob_sha256);
  if (!data || data.length === 0) fail('FILE_EMPTY');
  return withFileInfo(new Uint8Array(data!), { name: doc!.name });
}

// RAGFlow's CONTENT_TYPE_MAP (api/utils/web_utils.py).
const TYPES: Record<string, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', doc: 'application/msword', pdf: 'application/pdf',
  csv: 'text/csv', xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  md: 'text/markdown', markdown: 'text/markdown', mdx: 'text/markdown', htm: 'text/html', html: 'text/html', json: 'application/json',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff', tif: 'image/tiff',
  webp: 'image/webp', svg: 'image/svg+xml', ico: 'image/x-icon', avif: 'image/avif', heic: 'image/heic',
  ppt: 'application/vnd.ms-powerpoint', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  ...Object.fromEntries('txt py js java c cpp h php go ts sh cs kt sql'.split(' ').map((x) => [x, 'text/plain'])),
};
// Served as attachments whatever they are (a page or an SVG would run in the caller's origin).
const FORCE_ATTACHMENT = new Set(['htm', 'html', 'shtml', 'xht', 'xhtml', 'xml', 'mhtml', 'svg']);
const FORCE_ATTACHMENT_TYPES = new Set(['text/html', 'image/svg+xml', 'application/xhtml+xml', 'text/xml', 'application/xml', 'multipart/related']);

/**
 * `GET /documents/{id}/preview` (and the legacy `/document/get/{id}`): the bytes with the type
 * of the file's extension; pages and SVGs as attachments. Unknown → 102 `Document not found!`.
 */
export function previewDocument(e: Engine, ctx: Ctx, documentId: string): Uint8Array {
  const doc = visibleDocument(e, ctx, documentId);
  if (!doc) dataError('Document not found!');
  const ext = /\.([^.]+)$/.exec(doc!.name.toLowerCase())?.[1];
  const contentType = ext ? TYPES[ext] ?? `${doc!.type === 'visual' ? 'image' : 'application'}/${ext}` : undefined;
  const attach = (ext !== undefined && FORCE_ATTACHMENT.has(ext)) || (contentType !== undefined && FORCE_ATTACHMENT_TYPES.has(contentType));
  return withFileInfo(new Uint8Array(getBlob(e.db, doc!.blob_sha256) ?? []), { contentType, disposition: attach ? 'attachment' : 'none' });
}

/** `GET /thumbnails?doc_ids=…`: `{doc_id: thumbnail}` of the documents the caller can see (ragloom makes no thumbnails: ""). */
export function thumbnails(e: Engine, ctx: Ctx, q: P): Record<string, string> {
  const ids = Array.isArray(q.doc_ids) ? q.doc_ids.map((x) => pyStr(x)) : [];
  if (!ids.length) throw new ApiError(RetCode.ARGUMENT_ERROR, 'Lack of "Document ID"');
  const out: Record<string, string> = {};
  for (const id of ids) {
    const doc = visibleDocument(e, ctx, id);
    if (!doc) continue;
    const t = doc.thumbnail ?? '';
    out[doc.id] = t && !t.startsWith('data:image/') ? `/api/v1/documents/images/${doc.dataset_id}-${t}` : t;
  }
  return out;
}

/** `GET /documents/images/{dataset_id}-{name}`: a chunk's image (image/JPEG, as RAGFlow labels them all). Not two parts, or none: 102 `Image not found.`. */
export function documentImage(e: Engine, imageId: string): Uint8Array {
  if (imageId.split('-').length !== 2) dataError('Image not found.');
  const row = cachedStatement(e.db, 'SELECT data FROM chunk_image WHERE id = ?').get(imageId) as { data: Buffer } | undefined;
  if (!row) dataError('Image not found.');
  return withFileInfo(new Uint8Array(row!.data), { contentType: 'image/JPEG', disposition: 'none' });
}

const ARTIFACT_TYPES = new Set(['.png', '.jpg', '.jpeg', '.svg', '.pdf', '.csv', '.json', '.html']);

/** `GET /documents/artifact/{filename}`: RAGFlow's checks of the name; ragloom's agents write no artifacts, so any valid name is 102 `Artifact not found.`. */
export function artifact(filename: string): never {
  if (!filename || /[/\\]/.test(filename)) dataError('Invalid filename.');
  const ext = /(\.[^.]*)$/.exec(filename.replace(/^\.+/, ''))?.[1]?.toLowerCase() ?? '';
  if (!ARTIFACT_TYPES.has(ext)) dataError('Invalid file type.');
  return dataError('Artifact not found.');
}

/**
 * Reading files out of the store by id (document_api.py): a document's bytes by its id alone
 * (`GET /documents/{id}`, `/preview` with its type), the thumbnails' map, chunk images
 * (`/documents/images/{dataset_id}-{chunk_id}`: the image a chunk was added with), and sandbox
 * artifacts (ragloom's agents write none).
 */
import type { Engine, Ctx } from '../core/index.js';
import type { DocumentRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { withFileInfo } from './routes.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};

/** Documents by id (absent ones left out), those whose dataset the caller can see. */
async function visibleDocuments(e: Engine, ctx: Ctx, ids: readonly string[]): Promise<Map<string, DocumentRow>> {
  const docs = await e.store.parse.documents(ids);
  const visible = await e.store.datasets.getVisibleMany([...new Set([...docs.values()].map((d) => d.dataset_id))], ctx);
  return new Map([...docs].filter(([, d]) => visible.has(d.dataset_id)));
}

/** A document by id, if the caller can see its dataset. */
async function visibleDocument(e: Engine, ctx: Ctx, documentId: string): Promise<DocumentRow | undefined> {
  return (await visibleDocuments(e, ctx, [documentId])).get(documentId);
}

/** A stored file's bytes (a copy the caller owns), or undefined. */
async function fileBytes(e: Engine, sha256: string): Promise<Uint8Array | undefined> {
  const f = await e.store.documents.file(sha256);
  return f && new Uint8Array(await f.bytes());
}

/** `GET /documents/{id}`: the document's bytes (attachment), as the dataset-scoped download; unknown → 102 `The dataset not own the document {id}.`. */
export async function downloadById(e: Engine, ctx: Ctx, documentId: string): Promise<Uint8Array> {
  if (!documentId) dataError('Specify document_id please.');
  const doc = await visibleDocument(e, ctx, documentId);
  if (!doc) fail('DOWNLOAD_NOT_OWNED', documentId);
  const data = await fileBytes(e, doc!.blob_sha256);
  if (!data || data.length === 0) fail('FILE_EMPTY');
  return withFileInfo(data!, { name: doc!.name });
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
export async function previewDocument(e: Engine, ctx: Ctx, documentId: string): Promise<Uint8Array> {
  const doc = await visibleDocument(e, ctx, documentId);
  if (!doc) dataError('Document not found!');
  const ext = /\.([^.]+)$/.exec(doc!.name.toLowerCase())?.[1];
  const contentType = ext ? TYPES[ext] ?? `${doc!.type === 'visual' ? 'image' : 'application'}/${ext}` : undefined;
  const attach = (ext !== undefined && FORCE_ATTACHMENT.has(ext)) || (contentType !== undefined && FORCE_ATTACHMENT_TYPES.has(contentType));
  return withFileInfo((await fileBytes(e, doc!.blob_sha256)) ?? new Uint8Array(), { contentType, disposition: attach ? 'attachment' : 'none' });
}

/** `GET /thumbnails?doc_ids=…`: `{doc_id: thumbnail}` of the documents the caller can see (ragloom makes no thumbnails: ""). */
export async function thumbnails(e: Engine, ctx: Ctx, q: P): Promise<Record<string, string>> {
  const ids = Array.isArray(q.doc_ids) ? q.doc_ids.map((x) => pyStr(x)) : [];
  if (!ids.length) throw new ApiError(RetCode.ARGUMENT_ERROR, 'Lack of "Document ID"');
  const out: Record<string, string> = {};
  const docs = await visibleDocuments(e, ctx, ids);
  for (const id of ids) {
    const doc = docs.get(id);
    if (!doc) continue;
    const t = doc.thumbnail ?? '';
    out[doc.id] = t && !t.startsWith('data:image/') ? `/api/v1/documents/images/${doc.dataset_id}-${t}` : t;
  }
  return out;
}

/** `GET /documents/images/{dataset_id}-{name}`: a chunk's image (image/JPEG, as RAGFlow labels them all). Not two parts, or none: 102 `Image not found.`. */
export async function documentImage(e: Engine, imageId: string): Promise<Uint8Array> {
  if (imageId.split('-').length !== 2) dataError('Image not found.');
  const data = await e.store.chunks.image(imageId);
  if (!data) dataError('Image not found.');
  return withFileInfo(data!, { contentType: 'image/JPEG', disposition: 'none' });
}

const ARTIFACT_TYPES = new Set(['.png', '.jpg', '.jpeg', '.svg', '.pdf', '.csv', '.json', '.html']);

/** `GET /documents/artifact/{filename}`: RAGFlow's checks of the name; ragloom's agents write no artifacts, so any valid name is 102 `Artifact not found.`. */
export function artifact(filename: string): never {
  if (!filename || /[/\\]/.test(filename)) dataError('Invalid filename.');
  const ext = /(\.[^.]*)$/.exec(filename.replace(/^\.+/, ''))?.[1]?.toLowerCase() ?? '';
  if (!ARTIFACT_TYPES.has(ext)) dataError('Invalid file type.');
  return dataError('Artifact not found.');
}

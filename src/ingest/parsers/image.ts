/**
 * Images (PNG, JPEG, GIF, WebP, TIFF, AVIF, SVG): OCR → text blocks with pixel positions on page 1.
 * SVG is drawn first (never read as markup), at a size that keeps it under `maxOcrPixels`.
 */
import type { ParsedDocument } from '../types.js';
import { fail, shortMessage, warn } from './common.js';
import type { Ctx } from './common.js';
import { linesToBlocks } from './layout.js';
import { ocrImage, sniffImage } from './ocr.js';
import { MissingPackageError } from '../../util/index.js';

/** Small drawings are drawn at up to twice their nominal size: OCR reads small type poorly. */
const SVG_MAX_ZOOM = 2;

export async function parseImage(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const info = sniffImage(data);
  if (!info) fail('Invalid image: not a PNG, JPEG, GIF, WebP, TIFF, AVIF or SVG file');
  const doc: ParsedDocument = { format: 'image', blocks: [], pages: 1, meta: { type: info.type } };
  if (info.width && info.height) {
    doc.meta!['width'] = String(info.width);
    doc.meta!['height'] = String(info.height);
  }
  if (!ctx.opts.ocr) {
    warn(doc, 'OCR is disabled: no text extracted from the image');
    return doc;
  }
  let zoom: number | undefined;
  if (info.type === 'svg') {
    // A vector image is drawn at whatever size fits, never refused for its nominal size.
    const px = (info.width ?? 300) * (info.height ?? 150);
    zoom = Math.min(SVG_MAX_ZOOM, Math.sqrt(ctx.opts.maxOcrPixels / px));
  } else if (info.width && info.height && info.width * info.height > ctx.opts.maxOcrPixels) {
    warn(doc, `Image is too large for OCR (${info.width}×${info.height} > ${ctx.opts.maxOcrPixels} pixels): no text extracted`);
    return doc;
  }
  let lines;
  try {
    lines = await ocrImage(data, zoom === undefined ? {} : { zoom, maxPixels: ctx.opts.maxOcrPixels });
  } catch (e) {
    if (e instanceof MissingPackageError) fail(e.message, e);
    fail(`Could not decode the image for OCR: ${shortMessage(e)}`, e);
  }
  doc.blocks = linesToBlocks(lines, { page: 1 });
  if (doc.blocks.length === 0) warn(doc, 'OCR found no text in the image');
  return doc;
}

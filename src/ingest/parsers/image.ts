/** Images (PNG, JPEG, GIF, WebP, TIFF): OCR → text blocks with pixel positions on page 1. */
import type { ParsedDocument } from '../types.js';
import { fail, shortMessage, warn } from './common.js';
import type { Ctx } from './common.js';
import { linesToBlocks } from './layout.js';
import { ocrImage, sniffImage } from './ocr.js';
import { MissingPackageError } from '../../util/index.js';

export async function parseImage(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const info = sniffImage(data);
  if (!info) fail('Invalid image: not a PNG, JPEG, GIF, WebP or TIFF file');
  const doc: ParsedDocument = { format: 'image', blocks: [], pages: 1, meta: { type: info.type } };
  if (info.width && info.height) {
    doc.meta!['width'] = String(info.width);
    doc.meta!['height'] = String(info.height);
  }
  if (!ctx.opts.ocr) {
    warn(doc, 'OCR is disabled: no text extracted from the image');
    return doc;
  }
  if (info.width && info.height && info.width * info.height > ctx.opts.maxOcrPixels) {
    warn(doc, `Image is too large for OCR (${info.width}×${info.height} > ${ctx.opts.maxOcrPixels} pixels): no text extracted`);
    return doc;
  }
  let lines;
  try {
    lines = await ocrImage(data);
  } catch (e) {
    if (e instanceof MissingPackageError) fail(e.message, e);
    fail(`Could not decode the image for OCR: ${shortMessage(e)}`, e);
  }
  doc.blocks = linesToBlocks(lines, { page: 1 });
  if (doc.blocks.length === 0) warn(doc, 'OCR found no text in the image');
  return doc;
}

/**
 * DOCX with mammoth → HTML → blocks. Mammoth maps Word's heading styles to h1–h6 and keeps tables
 * (with merged cells as colspan/rowspan); explicit page breaks are carried through as a private-use
 * sentinel so blocks get an approximate `page`. Embedded PNG/JPEG pictures become image blocks.
 */
import mammoth from 'mammoth';
import type { Block, ParsedDocument } from '../types.js';
import { fail, warn } from './common.js';
import type { Ctx } from './common.js';
import { domToBlocks, parseHtml } from './html-blocks.js';
import { guardZip } from './zip.js';

/** U+E000 (private use) stands for a page break inside mammoth's output. */
const PAGE_BREAK = '\uE000';
const MAX_IMAGES = 200;
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

const STYLE_MAP = [
  "p[style-name='Title'] => h1:fresh",
  // Outline-style custom names used by many templates.
  "p[style-name='Heading'] => h1:fresh",
  "p[style-name='Chapter'] => h1:fresh",
];

interface MammothElement {
  type: string;
  breakType?: string;
  value?: string;
  children?: MammothElement[];
}

/** Replaces page-break elements with a text run holding the sentinel (mammoth drops breaks). */
function markPageBreaks(el: MammothElement): MammothElement {
  if (el.children) {
    el.children = el.children.map((c) =>
      c.type === 'break' && c.breakType === 'page' ? { type: 'text', value: PAGE_BREAK } : markPageBreaks(c),
    );
  }
  return el;
}

export async function parseDocx(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  await guardZip(data, 'DOCX', ctx.opts.maxUnzippedBytes);
  const images: { bytes: Uint8Array; contentType: string; alt?: string }[] = [];
  let skippedImages = 0;
  let result: { value: string; messages: { type: string; message: string }[] };
  try {
    result = await mammoth.convertToHtml(
      { buffer: Buffer.from(data.buffer, data.byteOffset, data.byteLength) },
      {
        styleMap: STYLE_MAP,
        transformDocument: markPageBreaks,
        convertImage: mammoth.images.imgElement(async (image) => {
          const ct = image.contentType;
          if (images.length < MAX_IMAGES && (ct === 'image/png' || ct === 'image/jpeg')) {
            const bytes = await image.read();
            if (bytes.length <= MAX_IMAGE_BYTES) {
              images.push({ bytes: new Uint8Array(bytes), contentType: ct });
              return { src: `ragloom-image:${images.length - 1}` };
            }
          }
          skippedImages++;
          return { src: '' };
        }),
      },
    );
  } catch (e) {
    const m = (e as Error).message ?? '';
    if (/central directory|zip|end of data/i.test(m)) fail('Invalid DOCX: damaged ZIP package', e);
    if (/word\/document\.xml|main document/i.test(m)) fail('Invalid DOCX: no word/document.xml (is this a Word file?)', e);
    fail(`Invalid DOCX: ${m.split('\n')[0]}`, e);
  }
  const blocks = domToBlocks(parseHtml(result.value), {
    tableHtml: true,
    image: (src, alt) => {
      const m = /^ragloom-image:(\d+)$/.exec(src);
      const img = m ? images[Number(m[1])] : undefined;
      if (!img) return undefined;
      return { kind: 'image', text: alt, image: img.bytes };
    },
  });

  // Assign pages from the sentinels, then strip them.
  let page = 1;
  const out: Block[] = [];
  for (const b of blocks) {
    const lead = /^[\s\uE000]*/.exec(b.text)![0];
    const startPage = page + [...lead].filter((c) => c === PAGE_BREAK).length;
    page += [...b.text].filter((c) => c === PAGE_BREAK).length;
    const strip = (s: string) => s.replace(/\uE000/g, '');
    const text = strip(b.text).replace(/^\s+|\s+$/g, '');
    if (!text && b.kind !== 'image') continue;
    const nb: Block = { ...b, text, page: startPage };
    if (b.rows) nb.rows = b.rows.map((r) => r.map((c) => strip(c).trim()));
    out.push(nb);
  }
  // Only explicit breaks are known (Word lays out the rest), so `page` is a lower bound and the
  // document's page count is left unset.
  const doc: ParsedDocument = { format: 'docx', blocks: out, meta: { explicitPageBreaks: String(page - 1) } };
  const h1 = out.find((b) => b.kind === 'heading' && b.level === 1);
  if (h1) doc.title = h1.text;
  if (skippedImages) warn(doc, `DOCX: ${skippedImages} image(s) not extracted (not PNG/JPEG, too large, or over ${MAX_IMAGES})`);
  const errors = result.messages.filter((m) => m.type === 'error');
  if (errors.length) warn(doc, `DOCX: ${errors.length} element(s) could not be read: ${errors[0]!.message}`);
  return doc;
}

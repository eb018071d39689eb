/**
 * DOCX with mammoth → HTML → blocks. Mammoth maps Word's heading styles to h1–h6 and keeps tables
 * (with merged cells as colspan/rowspan); explicit page breaks are carried through as a private-use
 * sentinel so blocks get an approximate `page`. Embedded PNG/JPEG pictures become image blocks.
 *
 * Speed (large documents): the package's parts are inflated with Node's zlib instead of mammoth's
 * JSZip/pako, markup mammoth never reads (revision-save ids `w:rsid*`, tab stops: half of the
 * 872-page handbook's 5 MB document.xml) is dropped before mammoth's XML parser sees it, and
 * mammoth's well-formed HTML is read with htmlparser2 rather than the spec HTML parser.
 */
import { load } from 'cheerio';
import mammoth from 'mammoth';
import type { Block, ParsedDocument } from '../types.js';
import { fail, warn } from './common.js';
import type { Ctx } from './common.js';
import { domToBlocks } from './html-blocks.js';
import type { DomNode } from './html-blocks.js';
import { guardZip, readZipEntry } from './zip.js';
import type { ZipEntry } from './zip.js';

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

/**
 * Markup mammoth never reads, dropped before its XML parser builds a DOM of it: revision-save and
 * paragraph ids (hex attributes; the lookahead keeps the match inside a tag, since text content
 * never has a `>` before the next `<` — Word escapes it), paragraph tab stops (`<w:tabs>`, layout
 * only; a run's `<w:tab/>` is kept) and explicit left-to-right (`<w:rtl w:val="0"/>`). A `<` in
 * text is always escaped, so the element patterns only ever match markup.
 */
const UNREAD_MARKUP = /\s(?:w:rsid[A-Za-z]*|w14:paraId|w14:textId)="[0-9A-Fa-f]*"(?=[^<>]*>)|<w:tabs>[^]*?<\/w:tabs>|<w:rtl w:val="0"\/>/g;

/**
 * The package as mammoth's zip interface (`exists` / `read`), over the already-listed entries.
 * Mammoth accepts it as `{ file }` in place of `{ buffer }` (lib/unzip.js).
 */
function docxPackage(data: Uint8Array, entries: ZipEntry[]) {
  const byName = new Map(entries.map((e) => [e.name, e]));
  return {
    exists: (name: string): boolean => byName.has(name),
    read: async (name: string, encoding?: string): Promise<Uint8Array | string> => {
      const e = byName.get(name);
      if (!e) throw new Error(`damaged ZIP package: no entry ${name}`);
      const bytes = readZipEntry(data, e);
      if (encoding === 'base64') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
      if (!encoding) return bytes;
      const text = new TextDecoder(encoding).decode(bytes);
      return name.endsWith('.xml') ? text.replace(UNREAD_MARKUP, '') : text;
    },
  };
}

export async function parseDocx(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const entries = await guardZip(data, 'DOCX', ctx.opts.maxUnzippedBytes);
  const images: { bytes: Uint8Array; contentType: string; alt?: string }[] = [];
  let skippedImages = 0;
  let result: { value: string; messages: { type: string; message: string }[] };
  const options = {
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
  };
  try {
    try {
      // `file` (an opened package) is mammoth's third input besides `path` and `buffer` (lib/unzip.js).
      result = await mammoth.convertToHtml({ file: docxPackage(data, entries) } as unknown as { buffer: Buffer }, options);
    } catch (e) {
      // A mammoth without that input: the same conversion from the bytes (slower, same output).
      if (!/Could not find file in options/.test((e as Error)?.message ?? '')) throw e;
      result = await mammoth.convertToHtml({ buffer: Buffer.from(data.buffer, data.byteOffset, data.byteLength) }, options);
    }
  } catch (e) {
    const m = (e as Error).message ?? '';
    if (/central directory|zip|end of data/i.test(m)) fail('Invalid DOCX: damaged ZIP package', e);
    if (/word\/document\.xml|main document/i.test(m)) fail('Invalid DOCX: no word/document.xml (is this a Word file?)', e);
    fail(`Invalid DOCX: ${m.split('\n')[0]}`, e);
  }
  // Mammoth writes well-formed HTML: htmlparser2 (HTML mode) builds the same tree as parse5, faster.
  const root = load(result.value, { xml: { xmlMode: false, decodeEntities: true } }).root()[0] as unknown as DomNode;
  const blocks = domToBlocks(root, {
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
  const count = (s: string): number => {
    let n = 0;
    for (let i = s.indexOf(PAGE_BREAK); i >= 0; i = s.indexOf(PAGE_BREAK, i + 1)) n++;
    return n;
  };
  const strip = (s: string) => (s.includes(PAGE_BREAK) ? s.replace(/\uE000/g, '') : s);
  for (const b of blocks) {
    const startPage = page + count(/^[\s\uE000]*/.exec(b.text)![0]);
    page += count(b.text);
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

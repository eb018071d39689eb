/**
 * Document parsers: uploaded bytes → ParsedDocument. `parseFile` picks a parser by extension,
 * sniffs the content when the extension is unknown or plainly wrong for a binary format, and
 * bounds every parse in size and time. Failures are ParseErrors whose message fits a
 * document's `progress_msg`; no library error or stack escapes.
 *
 * @example
 * const doc = await parseFile(bytes, 'report.pdf', { timeoutMs: 60_000 });
 */
import type { DocFormat, ParsedDocument } from '../types.js';
import { ParseError } from '../types.js';
import { checkAbort, fail, resolveOptions, shortMessage } from './common.js';
import type { Ctx, ParserOptions } from './common.js';
import { looksBinary } from './decode.js';
import type { ParseInner } from './eml.js';
import { sniffImage } from './ocr.js';
import { isOle, isZip, listZip } from './zip.js';

export { DEFAULTS } from './common.js';
export type { ParserOptions } from './common.js';

/** Extension → format. Code and config files are plain text, as in RAGFlow's naive parser. */
const EXTENSIONS: Record<string, DocFormat> = {
  pdf: 'pdf',
  docx: 'docx', docm: 'docx', dotx: 'docx',
  xlsx: 'xlsx', xlsm: 'xlsx',
  csv: 'csv', tsv: 'csv',
  pptx: 'pptx', pptm: 'pptx',
  html: 'html', htm: 'html', xhtml: 'html',
  md: 'markdown', markdown: 'markdown', mdx: 'markdown',
  txt: 'text', text: 'text', log: 'text', ini: 'text', cfg: 'text', conf: 'text', yml: 'text', yaml: 'text',
  xml: 'text', sql: 'text', py: 'text', js: 'text', ts: 'text', java: 'text', c: 'text', h: 'text', cpp: 'text',
  cs: 'text', go: 'text', rs: 'text', rb: 'text', php: 'text', sh: 'text', css: 'text',
  eml: 'eml',
  json: 'json', jsonl: 'json', ldjson: 'json',
  png: 'image', apng: 'image', jpg: 'image', jpeg: 'image', jpe: 'image', jfif: 'image', gif: 'image', webp: 'image',
  tif: 'image', tiff: 'image', avif: 'image', svg: 'image',
};

/**
 * RAGFlow's visual and aural types that ragloom cannot decode. Some are text inside (EPS, XML
 * playlists): they are refused, never indexed as their markup.
 */
const OTHER_IMAGES = new Set('bmp ico icon heic heif psd eps ai cdr pcx tga exif fpx pcd dxf ufo raw wmf emf xcf jp2 jxl dng svgz'.split(' '));
const VIDEO_OR_SOUND = new Set(('mpg mpeg avi rm rmvb mov wmv asf dat asx wvx mpe mpa mp4 mkv '
  + 'da wave wav mp3 aac flac ogg aiff au midi wma realaudio vqf oggvorbis ape m4a').split(' '));

const extOf = (filename: string): string => {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const i = base.lastIndexOf('.');
  return i > 0 ? base.slice(i + 1).toLowerCase() : '';
};

/** The format a file name implies, or undefined when the extension is not supported. */
export function detectFormat(filename: string): DocFormat | undefined {
  return EXTENSIONS[extOf(filename)];
}

/** The format the bytes themselves show, for unknown extensions and lying binary ones. */
export function sniffFormat(data: Uint8Array): DocFormat | undefined {
  const head = new TextDecoder('latin1').decode(data.subarray(0, 1024));
  if (head.includes('%PDF-')) return 'pdf';
  if (sniffImage(data)) return 'image';
  if (isZip(data)) {
    const names = listZip(data)?.map((e) => e.name) ?? [];
    if (names.some((n) => n.startsWith('word/'))) return 'docx';
    if (names.some((n) => n.startsWith('xl/'))) return 'xlsx';
    if (names.some((n) => n.startsWith('ppt/'))) return 'pptx';
    return undefined;
  }
  if (isOle(data) || looksBinary(data)) return undefined;
  const t = head.replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<(!doctype html|html)[\s>]/i.test(t)) return 'html';
  if (/^(Received|Return-Path|From|MIME-Version|Message-ID|Delivered-To|X-[\w-]+|Date|Subject):[ \t]/im.test(t.split('\n\n')[0] ?? '') &&
    /^(From|Date|Subject|To):/im.test(t)) return 'eml';
  if (/^[[{]/.test(t)) {
    try {
      JSON.parse(new TextDecoder().decode(data));
      return 'json';
    } catch {
      // not JSON after all
    }
  }
  return 'text';
}

const BINARY: ReadonlySet<DocFormat> = new Set(['pdf', 'docx', 'xlsx', 'pptx', 'image']);

/**
 * Extension first for supported types (a `.md` that starts with HTML stays Markdown); the content
 * decides when the extension is unknown, or when a binary format's magic bytes are missing but
 * another format's are present (a PNG named `.pdf`).
 */
function chooseFormat(data: Uint8Array, filename: string): DocFormat {
  const byExt = detectFormat(filename);
  if (byExt && BINARY.has(byExt)) {
    const sniffed = sniffFormat(data);
    if (sniffed && sniffed !== byExt && BINARY.has(sniffed)) return sniffed;
    return byExt;
  }
  if (byExt) {
    // A text extension on a binary container (e.g. a PDF saved as .txt).
    const sniffed = looksBinary(data) ? sniffFormat(data) : undefined;
    return sniffed && BINARY.has(sniffed) ? sniffed : byExt;
  }
  const ext = extOf(filename);
  if (OTHER_IMAGES.has(ext) || VIDEO_OR_SOUND.has(ext)) {
    // A picture under another image's name still reads; anything else is refused, not read as text.
    if (sniffImage(data)) return 'image';
    fail(OTHER_IMAGES.has(ext)
      ? `Unsupported image format: .${ext} (images are read as PNG, JPEG, GIF, WebP, TIFF, AVIF or SVG)`
      : `Unsupported file type: .${ext} (video and sound are not parsed)`);
  }
  const sniffed = sniffFormat(data);
  if (!sniffed) {
    fail(ext ? `Unsupported file type: .${ext}` : 'Unsupported file type: the content is not a recognised document format');
  }
  return sniffed;
}

const NAMES: Record<DocFormat, string> = {
  pdf: 'PDF', docx: 'DOCX', xlsx: 'XLSX', csv: 'CSV', pptx: 'PPTX', html: 'HTML', markdown: 'Markdown',
  text: 'text', eml: 'email', json: 'JSON', image: 'image',
};

/**
 * An empty file: plain text and Markdown hold no text, as RAGFlow's readers find (the document
 * is parsed, with no chunk); every other format has a structure an empty file lacks.
 */
function emptyFile(filename: string): ParsedDocument {
  const format = detectFormat(filename);
  if (format === 'text' || format === 'markdown') return { format, blocks: [] };
  fail('File is empty');
}

/** Runs the format's parser; modules load on first use so a TXT parse never loads pdf.js or ONNX. */
const dispatch: ParseInner = async (data, filename, ctx) => {
  if (data.byteLength === 0) return emptyFile(filename);
  checkAbort(ctx.signal);
  const format = chooseFormat(data, filename);
  const ext = extOf(filename);
  try {
    switch (format) {
      case 'pdf': return await (await import('./pdf.js')).parsePdf(data, ctx);
      case 'docx': return await (await import('./docx.js')).parseDocx(data, ctx);
      case 'xlsx': return await (await import('./xlsx.js')).parseXlsx(data, ctx);
      case 'csv': return await (await import('./csv.js')).parseCsv(data, ctx, ext === 'tsv');
      case 'pptx': return await (await import('./pptx.js')).parsePptx(data, ctx);
      case 'html': return await (await import('./html.js')).parseHtmlFile(data, ctx);
      case 'markdown': return await (await import('./markdown.js')).parseMarkdown(data, ctx);
      case 'text': return await (await import('./text.js')).parseText(data, ctx);
      case 'eml': return await (await import('./eml.js')).parseEml(data, ctx, dispatch);
      case 'json': return await (await import('./json.js')).parseJson(data, ctx, ext === 'jsonl' || ext === 'ldjson');
      case 'image': return await (await import('./image.js')).parseImage(data, ctx);
    }
  } catch (e) {
    if (e instanceof ParseError) throw e;
    checkAbort(ctx.signal);
    // A library bug or an input it chokes on: report it as this format's failure, without the stack.
    throw new ParseError(`Could not parse ${NAMES[format]} file: ${shortMessage(e)}`, { cause: e });
  }
};

/**
 * Parses one file. Rejects with a ParseError when the file is empty, larger than `maxBytes`,
 * unsupported, malformed, encrypted, cancelled through `signal`, or not done in `timeoutMs`.
 * The timer stops waiting and aborts cooperative work (page loops, pdf.js); CPU-bound work inside a
 * library call cannot be pre-empted in-thread, so run untrusted batches in a worker that can be
 * terminated.
 */
export async function parseFile(data: Uint8Array, filename: string, opts: ParserOptions = {}): Promise<ParsedDocument> {
  if (!(data instanceof Uint8Array)) throw new TypeError('parseFile: data must be a Uint8Array');
  const o = resolveOptions(opts);
  if (data.byteLength === 0) return emptyFile(filename);
  if (data.byteLength > o.maxBytes) {
    const mib = (n: number) => Math.round((n / 1048576) * 10) / 10;
    fail(`File is too large to parse (${mib(data.byteLength)} MiB; the limit is ${mib(o.maxBytes)} MiB)`);
  }
  const ac = new AbortController();
  const onOuter = () => ac.abort(new ParseError('Parsing was cancelled'));
  if (o.signal?.aborted) onOuter();
  o.signal?.addEventListener('abort', onOuter, { once: true });
  const limit = o.timeoutMs < 10_000 ? `${o.timeoutMs} ms` : `${Math.round(o.timeoutMs / 1000)} s`;
  const timer = setTimeout(() => ac.abort(new ParseError(`Parsing timed out after ${limit}`)), o.timeoutMs);
  const aborted = new Promise<never>((_, reject) => {
    const f = () => reject(ac.signal.reason as Error);
    if (ac.signal.aborted) f();
    else ac.signal.addEventListener('abort', f, { once: true });
  });
  aborted.catch(() => undefined); // observed via race; avoid an unhandled rejection after success
  const ctx: Ctx = { opts: o, signal: ac.signal, warnings: [], depth: 0 };
  try {
    const work = dispatch(data, filename, ctx);
    work.catch(() => undefined); // after a timeout the abandoned work may still reject
    return await Promise.race([work, aborted]);
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onOuter);
    if (!ac.signal.aborted) ac.abort(new ParseError('Parsing finished'));
  }
}

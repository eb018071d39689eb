/**
 * HTML / XHTML (including inline XBRL): title, readable main text via Readability over linkedom,
 * falling back to the whole cleaned body when Readability finds too little; tables as table blocks.
 */
import { Readability } from '@mozilla/readability';
import { load } from 'cheerio';
import { parseHTML } from 'linkedom';
import type { Block, ParsedDocument } from '../types.js';
import { DEFAULTS, fail, tidy } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';
import { domToBlocks, nodeText, parseHtml } from './html-blocks.js';
import type { DomNode } from './html-blocks.js';

/** Boilerplate removed before anything else looks at the page. */
const BOILERPLATE = [
  'script', 'style', 'noscript', 'template', 'iframe', 'svg', 'nav', 'aside', 'form', 'button',
  '[role="navigation"]', '[role="banner"]', '[role="contentinfo"]', '[role="search"]', '[aria-hidden="true"]',
  '[hidden]', 'body > header', 'body > footer', '#toc', '.toc', '.mw-jump-link', '.navbox', '.reflist', '.mw-editsection',
  '.breadcrumb', '.breadcrumbs', '[aria-label="breadcrumb" i]', '[aria-label="breadcrumbs" i]', '.nav-panel', '.skip-link', '.skip-to-content',
];

/**
 * Navigation that pages write as plain text: texinfo's "Next: …, Previous: …, Up: …" line, a
 * "Skip to content" link, a breadcrumb trail ("Home › Docs › Guide"). Such a block is left out.
 */
function isNavigation(text: string): boolean {
  const t = text.trim();
  if (t.length > 300) return false;
  if ((t.match(/\b(?:Next|Previous|Prev|Up|Top|Contents|Index)\s*:/g)?.length ?? 0) >= 2) return true;
  if (/^(?:skip|jump) to (?:the )?(?:main )?(?:content|navigation|search|menu)\b/i.test(t) && t.length < 60) return true;
  // A trail: three or more short items between › » > | separators, and no sentence in it.
  const items = t.split(/\s+[›»|>]\s+/);
  return items.length >= 3 && items.every((i) => i.length > 0 && i.length <= 40 && !/[.!?]\s/.test(i));
}

/** Finds the charset an HTML/XHTML file declares in its first 4 KiB. */
export function declaredCharset(data: Uint8Array): string | undefined {
  const head = new TextDecoder('latin1').decode(data.subarray(0, 4096));
  const m =
    /<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)/i.exec(head) ?? /<\?xml[^>]+encoding\s*=\s*["']([\w-]+)["']/i.exec(head);
  return m?.[1];
}

/** Elements without content (never pushed), and elements whose end tag may be left out (not counted). */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'basefont', 'bgsound', 'frame', 'keygen', 'image']);
const OPTIONAL_END = new Set(['p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'option', 'optgroup', 'rb', 'rt', 'rtc', 'rp', 'colgroup', 'caption', 'html', 'head', 'body']);
/** Raw-text elements: their content is not markup. */
const RAW = ['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext'];
const RAW_END = new Map(RAW.map((n) => [n, new RegExp(`</${n}[\\s/>]`, 'gi')]));
const TAG_NAME = /(\/?)([a-zA-Z][^\s/>]*)/y;

/**
 * Fails when elements nest deeper than `limit`, by one linear scan of the tags (no tree is
 * built): a close tag pops to its open tag as a parser would; void elements and elements whose
 * end tag is optional (`p`, `li`, `td`, …) are not counted, so sloppy but ordinary pages pass.
 * Tree building, Readability and the block walk all slow down or recurse with depth.
 */
export function checkHtmlDepth(html: string, limit: number): void {
  const stack: string[] = [];
  let i = 0;
  let gt = -1;
  for (;;) {
    const lt = html.indexOf('<', i);
    if (lt < 0) return;
    if (html.startsWith('!--', lt + 1)) {
      const end = html.indexOf('-->', lt + 4);
      if (end < 0) return;
      i = end + 3;
      continue;
    }
    TAG_NAME.lastIndex = lt + 1;
    const m = TAG_NAME.exec(html);
    if (!m) {
      i = lt + 1;
      continue;
    }
    if (gt <= lt) gt = html.indexOf('>', lt + 1); // one search per '>', not per '<'
    if (gt < 0) return;
    i = gt + 1;
    const name = m[2]!.toLowerCase();
    if (m[1]) {
      const at = stack.lastIndexOf(name);
      if (at >= 0) stack.length = at;
      continue;
    }
    const raw = RAW_END.get(name);
    if (raw) {
      raw.lastIndex = i;
      if (!raw.exec(html)) return;
      i = raw.lastIndex;
      continue;
    }
    if (VOID.has(name) || OPTIONAL_END.has(name) || html[gt - 1] === '/') continue;
    stack.push(name);
    if (stack.length > limit) fail(`HTML nests elements deeper than ${limit} levels (the nesting depth limit); refusing to parse it`);
  }
}

export interface HtmlResult {
  title?: string;
  blocks: Block[];
  /** "readability" when the article extractor was used, else "body". */
  mode: 'readability' | 'body';
}

/**
 * Extracts title and blocks from an HTML string. Readability's article wins when it holds at least
 * a fifth of the cleaned body's text (and 200 characters); on short or table-laid-out pages
 * (filings, e-mail templates) it often keeps too little, so the body is used instead.
 */
export function extractHtml(html: string, maxDepth: number = DEFAULTS.maxNestingDepth): HtmlResult {
  checkHtmlDepth(html, maxDepth);
  const $ = load(html);
  let title = tidy($('head > title').first().text() || $('title').first().text()) || undefined;
  title ??= tidy($('meta[property="og:title"]').attr('content') ?? '') || undefined;
  // Inline XBRL's hidden header duplicates facts; the namespaced tag needs an escaped selector.
  $(BOILERPLATE.join(', ')).remove();
  $('ix\\:header').remove();
  $('[style]').each((_, el) => {
    if (/display\s*:\s*none|visibility\s*:\s*hidden/i.test($(el).attr('style') ?? '')) $(el).remove();
  });
  const cleaned = $.html();
  const body = ($('body')[0] ?? $.root()[0]) as unknown as DomNode;
  const bodyLen = nodeText(body).length;

  let article: { content?: string | null; textContent?: string | null; title?: string | null } | null = null;
  try {
    const { document } = parseHTML(cleaned);
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 300 }).parse();
  } catch {
    article = null; // Readability gives up on odd DOMs; the body path below still works
  }
  const articleLen = tidy(article?.textContent ?? '').length;
  let blocks: Block[];
  let mode: HtmlResult['mode'];
  if (article?.content && articleLen >= 200 && articleLen >= bodyLen * 0.2) {
    blocks = domToBlocks(parseHtml(article.content), { tableHtml: true });
    mode = 'readability';
  } else {
    blocks = domToBlocks(body, { tableHtml: true });
    mode = 'body';
  }
  blocks = blocks.filter((b) => (b.kind !== 'text' && b.kind !== 'list') || !isNavigation(b.text));
  if (!title) {
    const h = blocks.find((b) => b.kind === 'heading');
    title = h?.text ?? (tidy(article?.title ?? '') || undefined);
  }
  if (title && blocks[0]?.text !== title) blocks.unshift({ kind: 'title', text: title });
  else if (title && blocks[0]) blocks[0] = { ...blocks[0], kind: 'title' };
  return { title, blocks, mode };
}

export async function parseHtmlFile(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const { text, encoding } = decodeText(data, declaredCharset(data));
  const r = extractHtml(text, ctx.opts.maxNestingDepth);
  const doc: ParsedDocument = { format: 'html', blocks: r.blocks, meta: { encoding, extractor: r.mode } };
  if (r.title) doc.title = r.title;
  return doc;
}

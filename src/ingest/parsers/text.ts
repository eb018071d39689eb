/**
 * Plain text: any common encoding; form feeds (`\f`) start a new page; blank lines split
 * paragraphs. On paginated text the running header and footer of each page (RFC-style
 * `Resnick  Standards Track  [Page 3]`) become `header` / `footer` blocks, which chunkers skip,
 * as the PDF layout marks them.
 */
import type { Block, ParsedDocument } from '../types.js';
import { pageWanted } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';
import { runningEdges } from './running-lines.js';

export async function parseText(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const { text, encoding } = decodeText(data);
  const pages = text.split('\f');
  // A form feed closing the last page does not open another one.
  while (pages.length > 1 && pages[pages.length - 1]!.trim() === '') pages.pop();
  const lines = pages.map((p) => p.split(/\r?\n/));
  const edges = pages.length > 1 ? runningEdges(lines) : undefined;
  const blocks: Block[] = [];
  const edge = (kind: 'header' | 'footer', part: string[], page: number) => {
    const t = part.map((l) => l.replace(/\s+/g, ' ').trim()).filter(Boolean).join('\n');
    if (t) blocks.push({ kind, text: t, page });
  };
  lines.forEach((pageLines, i) => {
    const page = i + 1;
    if (!pageWanted(page, ctx.opts.pages)) return;
    const { top, bottom } = edges?.[i] ?? { top: 0, bottom: pageLines.length };
    edge('header', pageLines.slice(0, top), page);
    // Keep indentation inside a paragraph: fixed-width tables and grammars depend on it.
    for (const p of pageLines.slice(top, bottom).join('\n').split(/\n[ \t]*\n/)) {
      const t = p.replace(/[ \t]+$/gm, '').replace(/^\n+/, '').trimEnd();
      if (t.trim() !== '') blocks.push({ kind: 'text', text: t, page });
    }
    edge('footer', pageLines.slice(bottom), page);
  });
  const doc: ParsedDocument = { format: 'text', blocks, meta: { encoding } };
  if (pages.length > 1) doc.pages = pages.length;
  return doc;
}

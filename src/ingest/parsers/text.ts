/** Plain text: any common encoding; form feeds (`\f`) start a new page; blank lines split paragraphs. */
import type { Block, ParsedDocument } from '../types.js';
import { pageWanted } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';

export async function parseText(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  const { text, encoding } = decodeText(data);
  const pages = text.split('\f');
  // A form feed closing the last page does not open another one.
  while (pages.length > 1 && pages[pages.length - 1]!.trim() === '') pages.pop();
  const blocks: Block[] = [];
  pages.forEach((pageText, i) => {
    const page = i + 1;
    if (!pageWanted(page, ctx.opts.pages)) return;
    // Keep indentation inside a paragraph: fixed-width tables and grammars depend on it.
    for (const p of pageText.split(/\n[ \t]*\n/)) {
      const t = p.replace(/[ \t]+$/gm, '').replace(/^\n+/, '').trimEnd();
      if (t.trim() !== '') blocks.push({ kind: 'text', text: t, page });
    }
  });
  const doc: ParsedDocument = { format: 'text', blocks, meta: { encoding } };
  if (pages.length > 1) doc.pages = pages.length;
  return doc;
}

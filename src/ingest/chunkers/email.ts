/**
 * `email`: headers and body as text (RAGFlow `rag/app/email.py`), then every attachment chunked
 * with `naive` under the same parser_config.
 */
import type { ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { finalize, isRunning } from './common.js';
import { intOf, str } from './config.js';
import { naiveMerge, txtSplit } from './merge.js';
import { naive } from './naive.js';

/** Headers written first, in this order, as `Name: value` lines. */
const HEADERS = ['From', 'To', 'Cc', 'Bcc', 'Reply-To', 'Subject', 'Date'];
// RAGFlow reads the message text with TxtParser's own defaults before naive_merge.
const TXT_TOKENS = 128;
const TXT_DELIMITER = '\n!?;。；！？';

export function email(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const pc = ctx.parserConfig;
  const meta = Object.fromEntries(Object.entries(doc.meta ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const lines = HEADERS.flatMap((h) => (meta[h.toLowerCase()] ? [`${h}: ${meta[h.toLowerCase()]}`] : []));
  const body = doc.blocks.filter((b) => !isRunning(b) && b.text.trim()).map((b) => b.text);
  const text = [...lines, ...body].join('\n');
  const drafts: ChunkDraft[] = [];
  if (text.trim()) {
    const sections = txtSplit(text, TXT_TOKENS, TXT_DELIMITER).map((t) => ({ text: t }));
    for (const m of naiveMerge(sections, intOf(pc.chunk_token_num, 512), str(pc.delimiter, '\n'))) drafts.push({ content: m.text });
  }
  const notes: string[] = [];
  for (const a of doc.attachments ?? []) {
    if (a.parsed) {
      const r = naive(a.parsed, { ...ctx, filename: a.filename });
      drafts.push(...r.chunks);
      notes.push(...(r.notes ?? []).map((n) => `${a.filename}: ${n}`));
    } else if (a.error) notes.push(`attachment ${a.filename} skipped: ${a.error}`);
  }
  // Attachments keep their own positions (PDF pages); ordering follows the mail, body first.
  const result = finalize(drafts, doc, notes);
  result.chunks.forEach((d, i) => {
    d.page_num = i + 1;
    d.top = i;
  });
  return result;
}

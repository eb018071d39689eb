/**
 * `tag`: a tag set (RAGFlow `rag/app/tag.py`). Each row pairs content with comma-separated tags;
 * the chunk's content is the text and `tag_kwd` the tags, with "." written "_" (tags are
 * field names downstream).
 */
import type { ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { filled, finalize, isRunning, splitTwoFieldLines } from './common.js';

const tagList = (s: string) =>
  s
    .split(',')
    .map((t) => t.trim().replace(/\./g, '_'))
    .filter(Boolean);

const draft = (content: string, tags: string): ChunkDraft => ({ content, tag_kwd: tagList(tags) });

export function tag(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  void ctx;
  const drafts: ChunkDraft[] = [];
  if (doc.format === 'xlsx') {
    // Spreadsheet: the first two non-empty cells of a row are content and tags.
    for (const t of doc.blocks) {
      if (t.kind !== 'table') continue;
      for (const r of t.rows ?? []) {
        const cells = r.filter(filled);
        if (cells.length >= 2) drafts.push(draft(cells[0]!, cells[1]!));
      }
    }
    return finalize(drafts, doc);
  }
  // CSV/TXT: rows of two fields close a chunk; other lines accumulate into its content, each
  // after a "\n" as RAGFlow builds it.
  let rows: { fields: string[]; raw: string }[];
  if (doc.format === 'csv') {
    rows = doc.blocks.filter((b) => b.kind === 'table').flatMap((t) => (t.rows ?? []).map((r) => ({ fields: r, raw: r.join(',') })));
  } else {
    rows = splitTwoFieldLines(doc.blocks.filter((b) => !isRunning(b) && b.kind !== 'table').map((b) => b.text).join('\n').split('\n'));
  }
  let content = '';
  for (const { fields, raw } of rows) {
    if (fields.length !== 2) {
      content += `\n${raw}`;
      continue;
    }
    content += `\n${fields[0]}`;
    if (content.trim()) drafts.push(draft(content, fields[1]!));
    content = '';
  }
  return finalize(drafts, doc);
}

import type { Block, ChunkContext, DocFormat, ParsedDocument } from '../../../src/ingest/types.js';

export const text = (t: string, extra: Partial<Block> = {}): Block => ({ kind: 'text', text: t, ...extra });
export const heading = (t: string, level = 1, extra: Partial<Block> = {}): Block => ({ kind: 'heading', text: t, level, ...extra });
export const tableBlock = (rows: string[][], extra: Partial<Block> = {}): Block => ({
  kind: 'table',
  text: rows.map((r) => r.join('\t')).join('\n'),
  rows,
  ...extra,
});

export const doc = (format: DocFormat, blocks: Block[], extra: Partial<ParsedDocument> = {}): ParsedDocument => ({
  format,
  blocks,
  ...extra,
});
export const txt = (t: string): ParsedDocument => doc('text', [text(t)]);

export const ctx = (parserConfig: Record<string, unknown> = {}, extra: Partial<ChunkContext> = {}): ChunkContext => ({
  filename: 'doc.txt',
  parserConfig,
  ...extra,
});

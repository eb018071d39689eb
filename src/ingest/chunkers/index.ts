/**
 * RAGFlow's chunk methods as pure functions: ParsedDocument + ChunkContext → ChunkResult.
 * See docs/chunking.md for what each method does and where ragloom differs.
 */
import { countTokens } from '../../text/index.js';
import type { ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { book } from './book.js';
import type { ChunkMethod } from './common.js';
import { intOf } from './config.js';
import { email } from './email.js';
import { knowledgeGraph } from './knowledge-graph.js';
import { laws } from './laws.js';
import { manual } from './manual.js';
import { naive } from './naive.js';
import { one } from './one.js';
import { paper } from './paper.js';
import { picture } from './picture.js';
import { presentation } from './presentation.js';
import { qa } from './qa.js';
import { resume } from './resume.js';
import { table } from './table.js';
import { tag } from './tag.js';

const METHODS: Record<string, ChunkMethod> = {
  naive: (d, c) => naive(d, c),
  qa,
  table,
  paper,
  book,
  laws,
  presentation,
  picture,
  one,
  email,
  manual,
  tag,
  resume,
  knowledge_graph: knowledgeGraph,
};

/** Every chunk method ragloom implements, by RAGFlow's `chunk_method` name. */
export const CHUNK_METHODS: readonly string[] = Object.freeze(Object.keys(METHODS));

/**
 * Chunks a parsed document with a RAGFlow chunk method. Deterministic and synchronous.
 * `auto_keywords` / `auto_questions` above 0 need a chat model: they are skipped with a note.
 *
 * @throws TypeError for a method name not in {@link CHUNK_METHODS}.
 * @example chunkDocument('naive', doc, { filename: 'a.txt', parserConfig: { chunk_token_num: 128 } })
 */
export function chunkDocument(method: string, doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const fn = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!fn) throw new TypeError(`Unknown chunk method "${method}"; expected one of ${CHUNK_METHODS.join(', ')}`);
  const result = fn(doc, ctx);
  const notes = [...(result.notes ?? [])];
  for (const key of ['auto_keywords', 'auto_questions']) {
    if (intOf(ctx.parserConfig[key], 0) > 0) notes.push(`${key}: no chat model configured; skipped`);
  }
  return notes.length ? { chunks: result.chunks, notes } : { chunks: result.chunks };
}

/** A chunk's `token_count` contribution: cl100k tokens of its content (the store sums these). */
export function chunkTokenCount(draft: ChunkDraft): number {
  return countTokens(draft.content);
}

export { effectiveParserConfig } from './config.js';

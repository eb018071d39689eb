/**
 * The four analysed columns of a chunk's full-text row, computed wherever it is cheapest: the
 * ingest worker computes them next to the chunks it makes (so the writing thread only writes),
 * and the store computes them itself for chunks that come without.
 */
import { analyzeForIndex } from './analyze.js';

/** title (the document's name), content (or index text), important keywords, questions: each analysed. */
export type FtsTerms = readonly [title: string, content: string, keywords: string, questions: string];

// Many chunks share a document name: analyse it once.
let lastTitle = '';
let lastTitleTerms = '';

/** The full-text row of a chunk (src/text/analyze.ts `analyzeForIndex` per column). */
export function ftsTerms(title: string, text: string, keywords: readonly string[] = [], questions: readonly string[] = []): FtsTerms {
  if (title !== lastTitle) {
    lastTitleTerms = analyzeForIndex(title);
    lastTitle = title;
  }
  return [lastTitleTerms, analyzeForIndex(text), listTerms(keywords), listTerms(questions)];
}

// Most chunks have no keywords or questions.
const listTerms = (a: readonly string[]): string => (a.length === 0 ? '' : analyzeForIndex(a.join(' ')));

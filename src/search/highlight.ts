import { analyze, type Analysis } from '../text/index.js';

const CLOSERS = `)\\]}"'”’»」』）`;
const SENTENCE_END = new RegExp(`(?<=[.!?;][${CLOSERS}]*)\\s+|(?<=[。！？；\\n][${CLOSERS}]*)(?![${CLOSERS}])\\s*`, 'u');

/**
 * RAGFlow-style highlight: the sentences of `content` that hold a query term, with each matching
 * word wrapped in <em>, joined by "..."; undefined when nothing matches.
 */
export function highlight(content: string, question: string, lang: Analysis = 'en'): string | undefined {
  const terms = new Set(analyze(question, lang));
  if (terms.size === 0) return undefined;
  // A sentence keeps the quotes and brackets that close it; Latin stops end one only before a
  // space, so "3.14" and "e.g.," stay whole.
  const sentences = content.split(SENTENCE_END).filter((s) => s.trim());
  const hits: string[] = [];
  for (const s of sentences) {
    let found = false;
    // Apostrophes only inside a word (don't, engine’s): a trailing one is a closing quote.
    const marked = s.replace(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu, (w) => {
      const a = analyze(w, lang);
      if (a.length && a.every((t) => terms.has(t))) {
        found = true;
        return `<em>${w}</em>`;
      }
      return w;
    });
    if (found) hits.push(marked.trim());
  }
  return hits.length ? hits.join('...') : undefined;
}

/**
 * The four analysed columns of a chunk's full-text row, computed wherever it is cheapest: the
 * ingest worker computes them next to the chunks it makes (so the writing thread only writes),
 * and the store computes them itself for chunks that come without.
 */
import { analyzeForIndex, type Analysis } from './analyze.js';
import { detectLanguage } from './detect.js';
import type { Lang, LangSetting } from './languages.js';

/** title (the document's name), content (or index text), important keywords, questions: each analysed. */
export type FtsTerms = readonly [title: string, content: string, keywords: string, questions: string];

// Many chunks share a document name: analyse it once.
let lastTitle = '';
let lastTitleLang: Analysis = 'en';
let lastTitleTerms = '';

/** The full-text row of a chunk analysed as `lang` (src/text/analyze.ts `analyzeForIndex` per column). */
export function ftsTerms(title: string, text: string, keywords: readonly string[] = [], questions: readonly string[] = [], lang: Analysis = 'en'): FtsTerms {
  if (title !== lastTitle || lang !== lastTitleLang) {
    lastTitleTerms = analyzeForIndex(title, lang);
    lastTitle = title;
    lastTitleLang = lang;
  }
  return [lastTitleTerms, analyzeForIndex(text, lang), listTerms(keywords, lang), listTerms(questions, lang)];
}

// Most chunks have no keywords or questions.
const listTerms = (a: readonly string[], lang: Analysis): string => (a.length === 0 ? '' : analyzeForIndex(a.join(' '), lang));

/**
 * The language a chunk of a dataset with `setting` is analysed as: the dataset's language, or the
 * language detected from the chunk's text (its keywords and questions too when it has little).
 */
export function chunkLanguage(setting: LangSetting, text: string, keywords: readonly string[] = [], questions: readonly string[] = []): Lang {
  if (setting !== 'auto') return setting;
  return detectLanguage(text.length >= 200 || (!keywords.length && !questions.length) ? text : [text, ...keywords, ...questions].join('\n'));
}

/**
 * The language a question is analysed as, over datasets with these settings: theirs when they
 * all have the same one, else the question's own (detected; when it cannot be told, the first
 * dataset language given, else English).
 */
export function questionLanguage(settings: readonly LangSetting[], question: string): Lang {
  const first = settings[0];
  if (first !== undefined && first !== 'auto' && settings.every((s) => s === first)) return first;
  const fixed = settings.find((s): s is Lang => s !== 'auto');
  return detectLanguage(question, fixed ?? 'en');
}

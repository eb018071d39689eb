/**
 * Snowball's stemmers and stop-word lists per language, from Orama's packages (@orama/stemmers:
 * the JavaScript Snowball generates; @orama/stopwords: Snowball's lists), each loaded the first
 * time a text of its language is analysed.
 */
import { createRequire } from 'node:module';
import { LANGS, type Lang } from './languages.js';

const require = createRequire(import.meta.url);

type Stemmer = (w: string) => string;

const stemmers = new Map<Lang, Stemmer | null>();
const stops = new Map<Lang, ReadonlySet<string> | null>();

/** `lang`'s Snowball stemmer; null when it has none (Czech, Slovak, Vietnamese, CJK; English is wink's, analyze.ts). */
export function stemmerOf(lang: Lang): Stemmer | null {
  let s = stemmers.get(lang);
  if (s === undefined) {
    const name = LANGS[lang].stemmer;
    s = name ? (require(`@orama/stemmers/${name}`) as { stemmer: Stemmer }).stemmer : null;
    stemmers.set(lang, s);
  }
  return s;
}

/** `lang`'s stop words (lower-case, with their diacritics); null when it has none. */
export function stopWords(lang: Lang): ReadonlySet<string> | null {
  let s = stops.get(lang);
  if (s === undefined) {
    const name = LANGS[lang].stopwords;
    s = name ? new Set((require(`@orama/stopwords/${name}`) as { stopwords: string[] }).stopwords) : null;
    stops.set(lang, s);
  }
  return s;
}

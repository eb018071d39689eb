/**
 * The languages the full-text analyzer knows, and how a dataset's `language` setting picks one.
 *
 * RAGFlow (since 0.26.4, through infinity-sdk's tokenizer) maps the lower-cased, trimmed setting to
 * a Snowball stemmer for 16 languages ("english", "dutch", "german", "french", "spanish",
 * "italian", "portuguese", "portuguese br", "russian", "arabic", "danish", "finnish", "hungarian",
 * "norwegian", "romanian", "swedish", "turkish") and folds diacritics without stemming for
 * "czech" and "slovak". ragloom accepts the same names, the other names of RAGFlow's language list
 * (Chinese, Traditional Chinese, Japanese, Korean, Indonesian, Bulgarian, Vietnamese) and
 * Greek and Ukrainian (Snowball has stemmers for them), and each language's ISO 639-1 code.
 * Any other value — null, '', a language without an analyzer — means "detect each chunk's language".
 */

/** An analyzer language: ISO 639-1 codes. */
export type Lang =
  | 'en' | 'de' | 'fr' | 'es' | 'it' | 'pt' | 'nl' | 'sv' | 'no' | 'da' | 'fi' | 'ru' | 'hu' | 'ro' | 'tr' | 'ar'
  | 'cs' | 'sk' | 'id' | 'bg' | 'el' | 'uk' | 'vi' | 'zh' | 'ja' | 'ko';

/** A dataset's analysis: one language for all its chunks, or each chunk's own (`'auto'`). */
export type LangSetting = Lang | 'auto';

export type Script = 'latin' | 'cyrillic' | 'arabic' | 'greek' | 'cjk';

export interface LangDef {
  readonly script: Script;
  /** `@orama/stemmers/<name>`: Snowball's stemmer, generated JavaScript (absent: no stemming). */
  readonly stemmer?: string;
  /** `@orama/stopwords/<name>`: Snowball's stop-word list (absent: none). */
  readonly stopwords?: string;
  /** franc's ISO 639-3 code, for detection (absent: found by script, or never detected). */
  readonly franc?: string;
}

export const LANGS: Readonly<Record<Lang, LangDef>> = {
  // English keeps wink's Porter2 stemmer and stop words (analyze.ts): its terms stay those of analyzer version 2.
  en: { script: 'latin', franc: 'eng' },
  de: { script: 'latin', stemmer: 'german', stopwords: 'german', franc: 'deu' },
  fr: { script: 'latin', stemmer: 'french', stopwords: 'french', franc: 'fra' },
  es: { script: 'latin', stemmer: 'spanish', stopwords: 'spanish', franc: 'spa' },
  it: { script: 'latin', stemmer: 'italian', stopwords: 'italian', franc: 'ita' },
  pt: { script: 'latin', stemmer: 'portuguese', stopwords: 'portuguese', franc: 'por' },
  nl: { script: 'latin', stemmer: 'dutch', stopwords: 'dutch', franc: 'nld' },
  sv: { script: 'latin', stemmer: 'swedish', stopwords: 'swedish', franc: 'swe' },
  no: { script: 'latin', stemmer: 'norwegian', stopwords: 'norwegian', franc: 'nob' },
  da: { script: 'latin', stemmer: 'danish', stopwords: 'danish', franc: 'dan' },
  fi: { script: 'latin', stemmer: 'finnish', stopwords: 'finnish', franc: 'fin' },
  hu: { script: 'latin', stemmer: 'hungarian', stopwords: 'hungarian', franc: 'hun' },
  ro: { script: 'latin', stemmer: 'romanian', stopwords: 'romanian', franc: 'ron' },
  tr: { script: 'latin', stemmer: 'turkish', stopwords: 'turkish', franc: 'tur' },
  id: { script: 'latin', stemmer: 'indonesian', stopwords: 'indonesian', franc: 'ind' },
  // Czech and Slovak: diacritics folded, no stemming (as RAGFlow; Snowball has no stemmer for them).
  cs: { script: 'latin', franc: 'ces' },
  sk: { script: 'latin', franc: 'slk' },
  vi: { script: 'latin', franc: 'vie' },
  ru: { script: 'cyrillic', stemmer: 'russian', stopwords: 'russian', franc: 'rus' },
  bg: { script: 'cyrillic', stemmer: 'bulgarian', stopwords: 'bulgarian', franc: 'bul' },
  uk: { script: 'cyrillic', stemmer: 'ukrainian', stopwords: 'ukrainian', franc: 'ukr' },
  ar: { script: 'arabic', stemmer: 'arabic', stopwords: 'arabic', franc: 'arb' },
  el: { script: 'greek', stemmer: 'greek', stopwords: 'greek', franc: 'ell' },
  zh: { script: 'cjk', stopwords: 'mandarin' },
  ja: { script: 'cjk', stopwords: 'japanese' },
  ko: { script: 'cjk' },
};

/** Setting names (lower-cased, trimmed) → language: RAGFlow's names, then other names and codes. */
const NAMES: ReadonlyMap<string, Lang> = new Map<string, Lang>([
  ['english', 'en'], ['german', 'de'], ['french', 'fr'], ['spanish', 'es'], ['italian', 'it'], ['portuguese', 'pt'],
  ['portuguese br', 'pt'], ['dutch', 'nl'], ['swedish', 'sv'], ['norwegian', 'no'], ['danish', 'da'], ['finnish', 'fi'],
  ['hungarian', 'hu'], ['romanian', 'ro'], ['turkish', 'tr'], ['russian', 'ru'], ['arabic', 'ar'], ['czech', 'cs'],
  ['slovak', 'sk'], ['chinese', 'zh'], ['traditional chinese', 'zh'], ['japanese', 'ja'], ['korean', 'ko'],
  ['indonesian', 'id'], ['indonesia', 'id'], ['bulgarian', 'bg'], ['vietnamese', 'vi'], ['greek', 'el'], ['ukrainian', 'uk'],
  ['norwegian bokmål', 'no'], ['bokmål', 'no'], ['pt-br', 'pt'], ['zh-hans', 'zh'], ['zh-hant', 'zh'], ['nb', 'no'],
  ...(Object.keys(LANGS) as Lang[]).map((k): [string, Lang] => [k, k]),
]);

/**
 * The analysis a dataset's `language` setting asks for: its language when ragloom has an analyzer
 * for it (case and surrounding spaces ignored), else `'auto'` (each chunk's language detected).
 *
 * @example languageSetting('German') // 'de'
 * @example languageSetting(' portuguese BR ') // 'pt'
 * @example languageSetting(null) // 'auto'
 */
export function languageSetting(language: string | null | undefined): LangSetting {
  if (typeof language !== 'string') return 'auto';
  return NAMES.get(language.trim().toLowerCase()) ?? 'auto';
}

/** Whether `s` is an analyzer language (a stored chunk's `lang`). */
export const isLang = (s: unknown): s is Lang => typeof s === 'string' && Object.hasOwn(LANGS, s);

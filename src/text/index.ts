export { countTokens, truncateTokens, cl100kEncoder } from './tokens.js';
export { analyze, analyzeForIndex, stem, englishIsV2, ANALYZER_VERSION } from './analyze.js';
export type { Analysis } from './analyze.js';
export { ftsTerms, chunkLanguage, questionLanguage } from './fts-terms.js';
export type { FtsTerms } from './fts-terms.js';
export { languageSetting, isLang, LANGS } from './languages.js';
export type { Lang, LangSetting } from './languages.js';
export { detectLanguage } from './detect.js';

export { countTokens, truncateTokens, cl100kEncoder } from './tokens.js';
export { analyze, analyzeForIndex, stem, ANALYZER_VERSION } from './analyze.js';
export { ftsTerms } from './fts-terms.js';
export type { FtsTerms } from './fts-terms.js';

export { countTokens, truncateTokens, cl100kEncoder } from './tokens.js';
export { analyze, analyzeForIndex, stem, ANALYZER_VERSION } from './analyze.js';
export { ftsTerms } from './fts-terms.js';
export type { FtsTerms } from './fts-terms.js';
export { splitSentences, splitProse, capLength, units, typicalLineWidth } from './sentences.js';
export type { Sentence, SentenceKind, SplitOptions, Unit, UnitOptions } from './sentences.js';

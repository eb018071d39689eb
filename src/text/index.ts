export { countTokens, truncateTokens, cl100kEncoder } from './tokens.js';
export { analyze, analyzeForIndex, stem, ANALYZER_VERSION } from './analyze.js';

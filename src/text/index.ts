export { countTokens, truncateTokens, cl100kEncoder } from './tokens.js';

export { retrieve } from './retrieve.js';
export type { RetrieveParams, RetrieveResult } from './retrieve.js';
export { highlight } from './highlight.js';

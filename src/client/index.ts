export { Client } from './client.js';
export type { ClientOptions } from './client.js';
export { DataSet, Document, Chunk } from './resources.js';
export type { ParseStatus, ParseProgress } from './resources.js';

export { Client } from './client.js';
export type { ClientOptions } from './client.js';
export { DataSet, Document, Chunk } from './resources.js';
export type { ParseStatus, ParseProgress } from './resources.js';
export { Chat, Session, Message } from './chat.js';
export type { AskOptions, ReferenceChunk } from './chat.js';
export { Memory } from './memory.js';
export type { MemoryMessage } from './memory.js';

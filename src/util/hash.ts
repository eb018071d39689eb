import { createHash } from 'node:crypto';
import xxhashInit from 'xxhash-wasm';

// xxhash-wasm needs an async instantiate; ESM top-level await keeps every caller sync.
const xx = await xxhashInit();

/** RAGFlow's chunk id: xxhash64 hex of (content + document_id), UTF-8. */
export function chunkId(content: string, documentId: string): string {
  return xx.h64ToString(content + documentId);
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

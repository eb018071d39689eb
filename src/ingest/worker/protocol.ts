import type { ChunkDraft } from '../types.js';

/** Messages between the parse queue (main thread) and an ingest worker. */
export type ToWorker =
  | { type: 'parse'; job: number; data: Uint8Array; filename: string; method: string; parserConfig: Record<string, unknown> }
  | { type: 'embed'; job: number; modelId: string; texts: string[] };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; job: number; progress: number; message: string }
  | { type: 'parsed'; job: number; chunks: ChunkDraft[]; notes: string[]; blocks: number; pages?: number; warnings: string[] }
  | { type: 'embedded'; job: number; vectors: Float32Array[] }
  | { type: 'error'; job: number; message: string; parseError: boolean };

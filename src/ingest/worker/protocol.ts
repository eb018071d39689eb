import type { ChunkDraft } from '../types.js';
import type { FtsTerms } from '../../text/index.js';

/** A chunk to analyse for the full-text index (the store's `ftsTerms` arguments). */
export interface AnalyzeItem { title: string; text: string; keywords?: string[]; questions?: string[] }

/** Messages between the parse queue (main thread) and an ingest worker. */
export type ToWorker =
  | { type: 'parse'; job: number; data: Uint8Array; filename: string; method: string; parserConfig: Record<string, unknown> }
  | { type: 'embed'; job: number; modelId: string; texts: string[] }
  | { type: 'analyze'; job: number; items: AnalyzeItem[] };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; job: number; progress: number; message: string }
  | { type: 'parsed'; job: number; chunks: ChunkDraft[]; terms: FtsTerms[]; notes: string[]; blocks: number; pages?: number; warnings: string[] }
  | { type: 'embedded'; job: number; vectors: Float32Array[] }
  | { type: 'analyzed'; job: number; terms: FtsTerms[] }
  | { type: 'error'; job: number; message: string; parseError: boolean };

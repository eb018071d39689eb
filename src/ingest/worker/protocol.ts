import type { ChunkDraft } from '../types.js';
import type { FtsTerms, Lang, LangSetting } from '../../text/index.js';

/** A chunk to analyse for the full-text index (the store's `ftsTerms` arguments). */
export interface AnalyzeItem { title: string; text: string; keywords?: string[]; questions?: string[]; lang?: Lang }

/** One file of a parse job; `lang`: its dataset's analysis (text/languages.ts `languageSetting`; default English). */
export interface ParseItem { data: Uint8Array; filename: string; method: string; parserConfig: Record<string, unknown>; lang?: LangSetting }

/** One file's outcome: its chunks with everything the writer needs, so the writing thread only writes. */
export interface ParseOutcome {
  chunks: ChunkDraft[];
  /** Each chunk's full-text row, with the file name as title (the store's `NewChunk.terms`). */
  terms: FtsTerms[];
  /** The language each chunk is analysed as (the store's `NewChunk.lang`). */
  langs: Lang[];
  /** Each chunk's token count (`chunkTokenCount`). */
  tokens: number[];
  /** sha256 of the texts to embed: the file name (title) first, then each chunk's embed text. */
  shas: string[];
  notes: string[];
  blocks: number;
  pages?: number;
  warnings: string[];
}

/** What the worker sends for a parsed file: its outcome and the time spent parsing and chunking it (ms). */
export interface ParsedItem extends ParseOutcome {
  ms: number;
}

/** A file the parser refused: its message, fit for `progress_msg`. */
export interface FailedItem { error: string }

/** Messages between the parse queue (main thread) and an ingest worker. */
export type ToWorker =
  | { type: 'parse'; job: number; items: ParseItem[] }
  | { type: 'embed'; job: number; modelId: string; texts: string[] }
  | { type: 'analyze'; job: number; items: AnalyzeItem[] }
  /** Skip job `job` if it has not started (cancelled while waiting in line). */
  | { type: 'drop'; job: number };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; job: number; progress: number; message: string }
  /** A parse job's parsers are loaded and its first file starts: its time bound starts now. */
  | { type: 'started'; job: number }
  | { type: 'parsed'; job: number; results: Array<ParsedItem | FailedItem> }
  /** The vectors one after the other in one buffer (one transfer, not one per vector). */
  | { type: 'embedded'; job: number; flat: Float32Array; dim: number; ms: number }
  | { type: 'analyzed'; job: number; terms: FtsTerms[] }
  | { type: 'error'; job: number; message: string; parseError: boolean };

/**
 * The contract between parsers (bytes → ParsedDocument) and chunk methods
 * (ParsedDocument → ChunkDraft[]). Parsers know formats, chunk methods know
 * RAGFlow's chunking rules; neither touches the store.
 */

/** RAGFlow's position tuple: [page (1-based), x0, x1, top, bottom]. */
export type Position = [number, number, number, number, number];

export type BlockKind =
  | 'title' // document title
  | 'heading' // section heading; `level` 1..6
  | 'text' // paragraph / running text
  | 'list' // list item
  | 'table' // a table; `rows` holds the cells, `text` a readable rendering
  | 'code'
  | 'image' // an embedded picture; `text` holds OCR text or alt text
  | 'header' // running page header
  | 'footer' // running page footer
  | 'caption';

export interface Block {
  kind: BlockKind;
  /** Plain text of the block (tables: rows rendered as text). */
  text: string;
  /** Heading level, 1 = top. */
  level?: number;
  /** 1-based page, slide or sheet number. */
  page?: number;
  positions?: Position[];
  /** Table cells, first row = header when `header` is true. */
  rows?: string[][];
  header?: boolean;
  /** Sheet name for spreadsheet tables. */
  sheet?: string;
  /** HTML rendering of a table, when available. */
  html?: string;
  /** Raw bytes of an image block (png/jpeg), when available. */
  image?: Uint8Array;
}

export type DocFormat =
  | 'pdf' | 'docx' | 'xlsx' | 'csv' | 'pptx' | 'html' | 'markdown' | 'text'
  | 'eml' | 'json' | 'image';

export interface ParsedDocument {
  format: DocFormat;
  title?: string;
  blocks: Block[];
  /** Number of pages / slides / sheets, when the format has them. */
  pages?: number;
  /** Format metadata, e.g. email headers (from, to, subject, date), PDF info. */
  meta?: Record<string, string>;
  /** Email attachments, parsed recursively. */
  attachments?: Attachment[];
  /** Things the parser could not do but survived (e.g. "page 3: OCR found no text"). */
  warnings?: string[];
}

export interface Attachment {
  filename: string;
  contentType?: string;
  size: number;
  parsed?: ParsedDocument;
  error?: string;
}

export interface ParseOptions {
  /** Page ranges to parse, 1-based inclusive, RAGFlow's `pages` parser_config. */
  pages?: [number, number][];
  /** Run OCR on image-only pages and images (default true). */
  ocr?: boolean;
  /** Abort long work. */
  signal?: AbortSignal;
}

/** A parse failure whose message is fit for a document's `progress_msg`. */
export class ParseError extends Error {
  override name = 'ParseError';
}

/** What a chunk method produces; the store adds ids, vectors and counts. */
export interface ChunkDraft {
  /** Text stored and returned as the chunk's `content`. */
  content: string;
  /** Text to embed when it differs from content (qa: the question only). */
  embedText?: string;
  /** Text to index for full-text search when it differs from content. */
  indexText?: string;
  important_keywords?: string[];
  questions?: string[];
  tag_kwd?: string[];
  positions?: Position[];
  /** 1-based page of the chunk's first block, for ordering. */
  page_num?: number;
  /** Vertical offset of the first block on its page, for ordering. */
  top?: number;
  doc_type?: 'text' | 'table' | 'image';
  image?: Uint8Array;
  /**
   * parent_child: the parent chunk's text (RAGFlow `mom_with_weight`). The draft itself is a
   * child: its content is what gets indexed and embedded; retrieval may return the parent.
   */
  mom?: string;
}

export interface ChunkContext {
  /** The document's file name (with extension). */
  filename: string;
  /** The effective parser_config (document's over dataset's). */
  parserConfig: Record<string, unknown>;
  language?: string;
}

export interface ChunkResult {
  chunks: ChunkDraft[];
  /** Human-readable notes for progress_msg (e.g. "resume: no chat model, chunked as naive"). */
  notes?: string[];
}

import type { Engine } from './engine.js';
import { RUN, type DocumentRow } from '../store/index.js';
import { sniffFormat } from '../ingest/parsers/index.js';
import { fileSuffix } from '../util/index.js';

/** The `run` column holds RAGFlow's TaskStatus digits (RUN); the wire shows names. */
export const RUN_NAMES = ['UNSTART', 'RUNNING', 'CANCEL', 'DONE', 'FAIL'] as const;
export type RunName = (typeof RUN_NAMES)[number];
export { RUN };
export type { DocumentRow };

const isoLocal = (ms: number): string => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 19);

export function documentToWire(r: DocumentRow): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    location: r.location,
    thumbnail: r.thumbnail ?? '',
    dataset_id: r.dataset_id,
    chunk_method: r.parser_id,
    parser_config: JSON.parse(r.parser_config),
    source_type: r.source_type,
    type: r.type,
    suffix: r.suffix,
    created_by: r.created_by,
    size: r.size,
    token_count: r.token_num,
    chunk_count: r.chunk_num,
    progress: r.progress,
    progress_msg: r.progress_msg,
    process_begin_at: r.process_begin_at === null ? null : isoLocal(r.process_begin_at),
    process_duration: r.process_duration,
    run: RUN_NAMES[Number(r.run)] ?? r.run,
    status: r.status,
    meta_fields: JSON.parse(r.meta_fields),
    create_time: r.create_time,
    create_date: isoLocal(r.create_time),
    update_time: r.update_time,
    update_date: isoLocal(r.update_time),
  };
}

export async function getDocument(e: Engine, datasetId: string, id: unknown): Promise<DocumentRow | undefined> {
  if (typeof id !== 'string') return undefined;
  return e.store.documents.get(datasetId, id);
}

// RAGFlow's filename_type() groups (api/utils/file_utils.py).
const DOC_EXT = new Set(('msg eml doc docx ppt pptx yml yaml xml htm html json jsonl ldjson csv txt ini xls xlsx wps rtf hlp pages numbers key md mdx '
  + 'py js java c cpp h php go ts sh cs kt sql tsx jsx rb rs swift scala lua r pl css scss less vue epub log toml cfg conf properties tex bib').split(' '));
const AUDIO_EXT = new Set('da wave wav mp3 aac flac ogg aiff au midi wma realaudio vqf oggvorbis ape m4a'.split(' '));
const VISUAL_EXT = new Set(('jpg jpeg png tif tiff gif pcx tga exif fpx svg psd cdr pcd dxf ufo eps ai raw wmf webp avif apng icon ico bmp '
  + 'mpg mpeg avi rm rmvb mov wmv asf dat asx wvx mpe mpa mp4 mkv').split(' '));

export type FileType = 'pdf' | 'doc' | 'aural' | 'visual' | 'other';

/** RAGFlow's file type of a name: pdf | doc | aural | visual | other (other is rejected). */
export function fileType(suffix: string): FileType {
  if (suffix === 'pdf') return 'pdf';
  if (DOC_EXT.has(suffix)) return 'doc';
  if (AUDIO_EXT.has(suffix)) return 'aural';
  if (VISUAL_EXT.has(suffix)) return 'visual';
  return 'other';
}

/**
 * An uploaded file's type: by its extension, as RAGFlow types it; a name without one (`README`,
 * `LICENSE`, `COPYING`, `GPL-3`) by its content, as the parser reads it (docs/parsers.md): text,
 * PDF, DOCX / XLSX / PPTX, HTML, JSON, e-mail, images by their magic bytes. `other` (refused) for
 * an extension RAGFlow does not know (`.exe`, as RAGFlow refuses it) or content that is none of
 * those (a program, an archive).
 */
export function uploadFileType(name: string, data: Uint8Array): FileType {
  const suffix = fileSuffix(name);
  if (suffix) return fileType(suffix);
  const format = sniffFormat(data);
  if (!format) return 'other';
  return format === 'pdf' ? 'pdf' : format === 'image' ? 'visual' : 'doc';
}

/** The chunk method a new document gets: by type first, else the dataset's. */
export function documentChunkMethod(suffix: string, datasetMethod: string, type: FileType = fileType(suffix)): string {
  const t = type;
  if (t === 'visual') return 'picture';
  if (t === 'aural') return 'audio';
  if (['ppt', 'pptx', 'pages'].includes(suffix)) return 'presentation';
  if (['msg', 'eml'].includes(suffix)) return 'email';
  return datasetMethod;
}

/** A document as RAGFlow's `Document.to_dict()` (the model's own field names: kb_id, parser_id, chunk_num, run as a digit). */
export function documentRaw(r: DocumentRow): Record<string, unknown> {
  return {
    id: r.id, thumbnail: r.thumbnail, kb_id: r.dataset_id, parser_id: r.parser_id, pipeline_id: null, parser_config: JSON.parse(r.parser_config),
    source_type: r.source_type, type: r.type, created_by: r.created_by, name: r.name, location: r.location, size: r.size, token_num: r.token_num,
    chunk_num: r.chunk_num, progress: r.progress, progress_msg: r.progress_msg,
    process_begin_at: r.process_begin_at === null ? null : isoLocal(r.process_begin_at), process_duration: r.process_duration, suffix: r.suffix,
    run: r.run, status: r.status, create_time: r.create_time, create_date: isoLocal(r.create_time), update_time: r.update_time, update_date: isoLocal(r.update_time),
  };
}

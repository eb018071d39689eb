import type { ChunkRow } from '../store/index.js';

/** A chunk as RAGFlow's chunk list returns it. */
export function chunkToWire(r: ChunkRow, docName: string): Record<string, unknown> {
  return {
    id: r.id,
    content: r.content,
    document_id: r.document_id,
    docnm_kwd: docName,
    document_keyword: docName,
    document_name: docName,
    important_keywords: JSON.parse(r.important_keywords),
    tag_kwd: JSON.parse(r.tag_kwd),
    questions: JSON.parse(r.questions),
    dataset_id: r.dataset_id,
    image_id: r.image_id,
    available: r.available === 1,
    positions: JSON.parse(r.positions),
    doc_type: r.doc_type,
    create_time: r.create_time,
    create_timestamp: r.create_timestamp,
  };
}

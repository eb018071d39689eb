import type { Engine, Ctx } from './engine.js';
import type { DatasetRow } from '../store/index.js';

export type { DatasetRow };

const isoLocal = (ms: number): string => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 19);
};

/** The wire shape: RAGFlow's KB row with its renamed keys. */
export function datasetToWire(r: DatasetRow): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    avatar: r.avatar,
    tenant_id: r.tenant_id,
    description: r.description,
    language: r.language,
    embedding_model: r.embd_id,
    permission: r.permission,
    created_by: r.created_by,
    chunk_method: r.parser_id,
    parser_config: JSON.parse(r.parser_config),
    pagerank: r.pagerank,
    similarity_threshold: r.similarity_threshold,
    vector_similarity_weight: r.vector_similarity_weight,
    status: r.status,
    document_count: r.doc_num,
    chunk_count: r.chunk_num,
    token_num: r.token_num,
    create_time: r.create_time,
    create_date: isoLocal(r.create_time),
    update_time: r.update_time,
    update_date: isoLocal(r.update_time),
  };
}

export function getDataset(e: Engine, id: string): Promise<DatasetRow | undefined> {
  return e.store.datasets.get(id);
}

/** A dataset the caller owns (its tenant's), or undefined. */
export async function ownedDataset(e: Engine, ctx: Ctx, id: unknown): Promise<DatasetRow | undefined> {
  if (typeof id !== 'string') return undefined;
  return e.store.datasets.getOwned(id, ctx.tenantId);
}

/** A dataset the caller can read (own or team-shared), or undefined. */
export async function visibleDataset(e: Engine, ctx: Ctx, id: unknown): Promise<DatasetRow | undefined> {
  if (typeof id !== 'string') return undefined;
  return e.store.datasets.getVisible(id, ctx);
}

export function nameTaken(e: Engine, tenantId: string, name: string, exceptId?: string): Promise<boolean> {
  return e.store.datasets.nameTaken(tenantId, name, exceptId);
}

import type { Engine, Ctx } from './engine.js';
import { cachedStatement, type DatasetRow } from '../store/index.js';

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

/** Datasets the caller can see: its tenant's own, plus `team` datasets of tenants it joined. */
export const VISIBLE_SQL = `(d.tenant_id = @tenant OR (d.permission = 'team' AND d.tenant_id IN
  (SELECT tenant_id FROM user_tenant WHERE user_id = @user)))`;

export function getDataset(e: Engine, id: string): DatasetRow | undefined {
  return e.db.prepare('SELECT * FROM dataset WHERE id = ?').get(id) as DatasetRow | undefined;
}

/** A dataset the caller owns (its tenant's), or undefined. */
export function ownedDataset(e: Engine, ctx: Ctx, id: unknown): DatasetRow | undefined {
  if (typeof id !== 'string') return undefined;
  return e.db.prepare('SELECT * FROM dataset WHERE id = ? AND tenant_id = ?').get(id, ctx.tenantId) as DatasetRow | undefined;
}

/** A dataset the caller can read (own or team-shared), or undefined. */
export function visibleDataset(e: Engine, ctx: Ctx, id: unknown): DatasetRow | undefined {
  if (typeof id !== 'string') return undefined;
  // Cached: every retrieval and chat turn checks its datasets (a prepare costs ~0.1 ms).
  return cachedStatement(e.db, `SELECT * FROM dataset d WHERE d.id = @id AND ${VISIBLE_SQL}`).get({ id, tenant: ctx.tenantId, user: ctx.userId }) as DatasetRow | undefined;
}

export function nameTaken(e: Engine, tenantId: string, name: string, exceptId?: string): boolean {
  return !!e.db.prepare("SELECT 1 FROM dataset WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND status = '1' AND id != ?")
    .get(tenantId, name, exceptId ?? '');
}

/** Recomputes a dataset's counters from its documents (after bulk changes). */
export function refreshDatasetCounts(e: Engine, datasetId: string): void {
  e.db.prepare(`UPDATE dataset SET
      doc_num = (SELECT COUNT(*) FROM document WHERE dataset_id = @id),
      chunk_num = (SELECT COALESCE(SUM(chunk_num), 0) FROM document WHERE dataset_id = @id),
      token_num = (SELECT COALESCE(SUM(token_num), 0) FROM document WHERE dataset_id = @id)
    WHERE id = @id`).run({ id: datasetId });
}

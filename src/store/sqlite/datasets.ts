/** Datasets on SQLite (interface/datasets.ts). */
import { cachedStatement, type Db } from '../db.js';
import { removeDocumentChunks, datasetAnalyses, markDatasetReindexed } from '../chunks.js';
import { pruneBlobs } from '../blobs.js';
import type { Ctx, DatasetChanges, DatasetListQuery, DatasetRow, DatasetStore, LiveDataset, NewDataset } from '../interface/index.js';
import { duplicateName, faultPoint } from '../../util/index.js';
import { setList } from './sql.js';
import type { SqliteConn } from './store.js';

/** Datasets the caller can see: its tenant's own, plus `team` datasets of tenants it joined. */
const VISIBLE_SQL = `(d.tenant_id = @tenant OR (d.permission = 'team' AND d.tenant_id IN
  (SELECT tenant_id FROM user_tenant WHERE user_id = @user)))`;

/** Recomputes a dataset's counters from its documents (after bulk changes; inside the caller's transaction). */
export function refreshDatasetCounts(db: Db, datasetId: string): void {
  db.prepare(`UPDATE dataset SET
      doc_num = (SELECT COUNT(*) FROM document WHERE dataset_id = @id),
      chunk_num = (SELECT COALESCE(SUM(chunk_num), 0) FROM document WHERE dataset_id = @id),
      token_num = (SELECT COALESCE(SUM(token_num), 0) FROM document WHERE dataset_id = @id)
    WHERE id = @id`).run({ id: datasetId });
}

export class SqliteDatasets implements DatasetStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  async get(id: string): Promise<DatasetRow | undefined> {
    return this.db.prepare('SELECT * FROM dataset WHERE id = ?').get(id) as DatasetRow | undefined;
  }

  async getOwned(id: string, tenantId: string): Promise<DatasetRow | undefined> {
    return this.db.prepare('SELECT * FROM dataset WHERE id = ? AND tenant_id = ?').get(id, tenantId) as DatasetRow | undefined;
  }

  async getVisible(id: string, who: Ctx): Promise<DatasetRow | undefined> {
    // Cached: every retrieval and chat turn checks its datasets (a prepare costs ~0.1 ms).
    return cachedStatement(this.db, `SELECT * FROM dataset d WHERE d.id = @id AND ${VISIBLE_SQL}`).get({ id, tenant: who.tenantId, user: who.userId }) as DatasetRow | undefined;
  }

  async getOwnedMany(ids: readonly string[], tenantId: string): Promise<Map<string, DatasetRow>> {
    const get = cachedStatement(this.db, 'SELECT * FROM dataset WHERE id = ? AND tenant_id = ?');
    const out = new Map<string, DatasetRow>();
    for (const id of new Set(ids)) {
      const d = get.get(id, tenantId) as DatasetRow | undefined;
      if (d) out.set(id, d);
    }
    return out;
  }

  async getVisibleMany(ids: readonly string[], who: Ctx): Promise<Map<string, DatasetRow>> {
    // One cached statement per id: an in-process SQLite read costs microseconds, and retrieval's
    // lists are short (a networked store reads them in one query).
    const get = cachedStatement(this.db, `SELECT * FROM dataset d WHERE d.id = @id AND ${VISIBLE_SQL}`);
    const out = new Map<string, DatasetRow>();
    for (const id of new Set(ids)) {
      const d = get.get({ id, tenant: who.tenantId, user: who.userId }) as DatasetRow | undefined;
      if (d) out.set(id, d);
    }
    return out;
  }

  async exists(id: string): Promise<boolean> {
    return !!this.db.prepare('SELECT 1 FROM dataset WHERE id = ?').get(id);
  }

  private taken(tenantId: string, name: string, exceptId = ''): boolean {
    return !!this.db.prepare("SELECT 1 FROM dataset WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND status = '1' AND id != ?")
      .get(tenantId, name, exceptId);
  }

  async nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean> {
    return this.taken(tenantId, name, exceptId);
  }

  async create(row: NewDataset): Promise<string> {
    return this.c.tx(() => {
      const name = duplicateName(row.name, (n) => this.taken(row.tenant_id, n));
      this.db.prepare(`INSERT INTO dataset (id, tenant_id, name, avatar, description, embd_id, permission, created_by, parser_id,
        parser_config, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        row.id, row.tenant_id, name, row.avatar, row.description, row.embd_id, row.permission, row.created_by, row.parser_id, row.parser_config,
        row.create_time, row.update_time);
      return name;
    });
  }

  async list(q: DatasetListQuery): Promise<{ total: number; rows: DatasetRow[] }> {
    const where = [VISIBLE_SQL, "d.status = '1'"];
    const params: Record<string, unknown> = { tenant: q.who.tenantId, user: q.who.userId };
    if (q.id !== undefined) {
      params.id = q.id;
      where.push('d.id = @id');
    }
    if (q.name !== undefined) {
      params.name = q.name;
      where.push('d.name = @name COLLATE NOCASE');
    }
    if (q.keywords) {
      params.kw = q.keywords;
      where.push('instr(LOWER(d.name), @kw) > 0');
    }
    if (q.parser_id) {
      params.parser = q.parser_id;
      where.push('d.parser_id = @parser');
    }
    const whereSql = where.join(' AND ');
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM dataset d WHERE ${whereSql}`).get(params) as { n: number }).n;
    const dir = q.desc ? 'DESC' : 'ASC';
    const rows = this.db.prepare(`SELECT d.* FROM dataset d WHERE ${whereSql} ORDER BY d.${q.orderby} ${dir}, d.rowid ${dir}
    LIMIT @limit OFFSET @offset`).all({ ...params, limit: q.limit, offset: q.offset }) as DatasetRow[];
    return { total, rows };
  }

  async runCounts(datasetIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
    const counts = this.db.prepare('SELECT run, COUNT(*) AS n FROM document WHERE dataset_id = ? GROUP BY run');
    const out = new Map<string, Record<string, number>>();
    for (const id of new Set(datasetIds)) {
      const c: Record<string, number> = {};
      for (const x of counts.all(id) as { run: string; n: number }[]) c[x.run] = x.n;
      out.set(id, c);
    }
    return out;
  }

  async update(id: string, changes: DatasetChanges): Promise<void> {
    this.c.tx(() => {
      const cols = Object.keys(changes);
      this.db.prepare(`UPDATE dataset SET ${setList(cols)} WHERE id = @id`).run({ ...changes, id });
    });
  }

  async filesSize(id: string): Promise<number> {
    return (this.db.prepare('SELECT COALESCE(SUM(size), 0) AS n FROM document WHERE dataset_id = ?').get(id) as { n: number }).n;
  }

  async idsOfTenant(tenantId: string): Promise<string[]> {
    return (this.db.prepare('SELECT id FROM dataset WHERE tenant_id = ?').all(tenantId) as { id: string }[]).map((r) => r.id);
  }

  async delete(ids: readonly string[]): Promise<void> {
    const db = this.db;
    this.c.tx(() => {
      for (const id of ids) {
        const docs = db.prepare('SELECT id, blob_sha256 FROM document WHERE dataset_id = ?').all(id) as { id: string; blob_sha256: string }[];
        removeDocumentChunks(db, docs.map((d) => d.id));
        faultPoint('datasets.delete:chunks-removed');
        db.prepare('DELETE FROM document WHERE dataset_id = ?').run(id);
        faultPoint('datasets.delete:documents-deleted');
        pruneBlobs(db, docs.map((d) => d.blob_sha256));
        faultPoint('datasets.delete:blobs-pruned');
        db.prepare('DELETE FROM dataset WHERE id = ?').run(id);
        faultPoint('datasets.delete:dataset-deleted');
      }
    });
    faultPoint('datasets.delete:committed');
  }

  async analyses(): Promise<Array<{ id: string; language: string | null; fts_language: string | null }>> {
    return datasetAnalyses(this.db);
  }

  async markReindexed(id: string, language: string | null, analysis: string): Promise<boolean> {
    return this.c.tx(() => markDatasetReindexed(this.db, id, language, analysis));
  }

  async live(ids: readonly string[]): Promise<LiveDataset[]> {
    const get = cachedStatement(this.db, "SELECT id, name, embd_id, pagerank, language FROM dataset WHERE id = ? AND status = '1'");
    const out: LiveDataset[] = [];
    for (const id of ids) {
      const d = get.get(id) as LiveDataset | undefined;
      if (d) out.push(d);
    }
    return out;
  }
}

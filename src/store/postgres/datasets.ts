/** Datasets on PostgreSQL (interface/datasets.ts). */
import type { Ctx, DatasetChanges, DatasetListQuery, DatasetRow, DatasetStore, LiveDataset, NewDataset } from '../interface/index.js';
import { duplicateName, faultPoint } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';
import { pruneBlobs } from './blobs.js';
import { removeDocumentChunks } from './chunk-rows.js';
import { foldAscii } from './names.js';
import { dir, limitSql, setList, strip, stripAll, valuesOf } from './sql.js';
import type { FeedGate } from './search.js';

/** Datasets the caller can see: its tenant's own, plus `team` datasets of tenants it joined ($T tenant, $U user). */
const visible = (tenant: string, user: string) => `(d.tenant_id = ${tenant} OR (d.permission = 'team' AND d.tenant_id IN
  (SELECT tenant_id FROM user_tenant WHERE user_id = ${user})))`;

/**
 * Serialises the creates of one kind of named row of a tenant (datasets, memories, chats, agents):
 * "the name is free, insert it" then holds across processes as SQLite's one writer makes it hold.
 */
export async function lockNames(t: PgTx, kind: string, tenantId: string): Promise<void> {
  await t.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`${kind}:${tenantId}`]);
}

/** Cached visibility checks kept per process (the most recent ones). */
const VISIBLE_CACHE = 256;

export class PgDatasets implements DatasetStore {
  /** getVisibleMany's cached reads, by caller and ids, each with the gate's mark it was read at. */
  private readonly visibleCache = new Map<string, { mark: number; rows: DatasetRow[] }>();

  /** `gate`: its wake-ups (any commit of this process, a NOTIFY of a dataset or team change on any node, each second) end the cache. */
  constructor(private readonly db: PgDb, private readonly gate?: FeedGate) {}

  async get(id: string): Promise<DatasetRow | undefined> {
    return strip(await this.db.one('SELECT * FROM dataset WHERE id = $1', [id]));
  }

  async getOwned(id: string, tenantId: string): Promise<DatasetRow | undefined> {
    return strip(await this.db.one('SELECT * FROM dataset WHERE id = $1 AND tenant_id = $2', [id, tenantId]));
  }

  async getVisible(id: string, who: Ctx): Promise<DatasetRow | undefined> {
    return strip(await this.db.one(`SELECT * FROM dataset d WHERE d.id = $1 AND ${visible('$2', '$3')}`, [id, who.tenantId, who.userId]));
  }

  private static byIds(ids: readonly string[], rows: DatasetRow[]): Map<string, DatasetRow> {
    const by = new Map(rows.map((r) => [r.id, r]));
    const out = new Map<string, DatasetRow>();
    for (const id of new Set(ids)) if (by.has(id)) out.set(id, by.get(id)!);
    return out;
  }

  async getOwnedMany(ids: readonly string[], tenantId: string): Promise<Map<string, DatasetRow>> {
    const rows = stripAll<DatasetRow>(await this.db.rows('SELECT * FROM dataset WHERE id = ANY($1) AND tenant_id = $2', [[...new Set(ids)], tenantId]));
    return PgDatasets.byIds(ids, rows);
  }

  async getVisibleMany(ids: readonly string[], who: Ctx, opts: { cached?: boolean } = {}): Promise<Map<string, DatasetRow>> {
    const read = async () => stripAll<DatasetRow>(await this.db.rows(`SELECT * FROM dataset d WHERE d.id = ANY($1) AND ${visible('$2', '$3')}`,
      [[...new Set(ids)], who.tenantId, who.userId]));
    if (!opts.cached || !this.gate || !(await this.gate.listens())) return PgDatasets.byIds(ids, await read());
    // Kept until the gate's next wake-up: a search then skips a round trip (~0.3 ms on loopback).
    const key = JSON.stringify([who.tenantId, who.userId, [...new Set(ids)].sort()]);
    const mark = this.gate.mark();
    const hit = this.visibleCache.get(key);
    let rows = hit?.mark === mark ? hit.rows : undefined;
    if (!rows) {
      rows = await read();
      // Not kept when a wake-up came while it was read (the read may predate the change).
      if (this.gate.mark() === mark) {
        this.visibleCache.delete(key);
        this.visibleCache.set(key, { mark, rows });
        if (this.visibleCache.size > VISIBLE_CACHE) this.visibleCache.delete(this.visibleCache.keys().next().value!);
      }
    }
    return PgDatasets.byIds(ids, rows.map((r) => ({ ...r })));
  }

  async exists(id: string): Promise<boolean> {
    return !!(await this.db.one('SELECT 1 FROM dataset WHERE id = $1', [id]));
  }

  private async names(q: PgDb | PgTx, tenantId: string, exceptId = ''): Promise<Set<string>> {
    const rows = await q.rows<{ n: string }>("SELECT ragloom_nocase(name) AS n FROM dataset WHERE tenant_id = $1 AND status = '1' AND id <> $2", [tenantId, exceptId]);
    return new Set(rows.map((r) => r.n));
  }

  async nameTaken(tenantId: string, name: string, exceptId = ''): Promise<boolean> {
    return !!(await this.db.one("SELECT 1 FROM dataset WHERE tenant_id = $1 AND ragloom_nocase(name) = ragloom_nocase($2) AND status = '1' AND id <> $3",
      [tenantId, name, exceptId]));
  }

  async create(row: NewDataset): Promise<string> {
    return this.db.tx(async (t) => {
      await lockNames(t, 'dataset', row.tenant_id);
      const taken = await this.names(t, row.tenant_id);
      const name = duplicateName(row.name, (n) => taken.has(foldAscii(n)));
      await t.run(`INSERT INTO dataset (id, tenant_id, name, avatar, description, embd_id, permission, created_by, parser_id, parser_config, create_time, update_time)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, [
        row.id, row.tenant_id, name, row.avatar, row.description, row.embd_id, row.permission, row.created_by, row.parser_id, row.parser_config,
        row.create_time, row.update_time]);
      return name;
    });
  }

  async list(q: DatasetListQuery): Promise<{ total: number; rows: DatasetRow[] }> {
    const params: unknown[] = [q.who.tenantId, q.who.userId];
    const where = [visible('$1', '$2'), "d.status = '1'"];
    if (q.id !== undefined) (params.push(q.id), where.push(`d.id = $${params.length}`));
    if (q.name !== undefined) (params.push(q.name), where.push(`ragloom_nocase(d.name) = ragloom_nocase($${params.length})`));
    if (q.keywords) (params.push(q.keywords), where.push(`strpos(ragloom_nocase(d.name), $${params.length}) > 0`));
    if (q.parser_id) (params.push(q.parser_id), where.push(`d.parser_id = $${params.length}`));
    const w = where.join(' AND ');
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM dataset d WHERE ${w}`, params))!.n;
    const d = dir(q.desc);
    const rows = await this.db.rows(`SELECT d.* FROM dataset d WHERE ${w} ORDER BY d.${q.orderby === 'update_time' ? 'update_time' : 'create_time'} ${d}, d.ord ${d}
      LIMIT ${limitSql(q.limit)} OFFSET ${Math.max(0, Math.floor(q.offset))}`, params);
    return { total, rows: stripAll(rows) };
  }

  async filesSize(id: string): Promise<number> {
    return (await this.db.one<{ n: number }>('SELECT COALESCE(sum(size), 0)::bigint AS n FROM document WHERE dataset_id = $1', [id]))!.n;
  }

  async runCounts(datasetIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
    const ids = [...new Set(datasetIds)];
    const rows = await this.db.rows<{ dataset_id: string; run: string; n: number }>('SELECT dataset_id, run, count(*) AS n FROM document WHERE dataset_id = ANY($1) GROUP BY dataset_id, run', [ids]);
    const out = new Map<string, Record<string, number>>(ids.map((id) => [id, {}]));
    for (const r of rows) out.get(r.dataset_id)![r.run] = r.n;
    return out;
  }

  async update(id: string, changes: DatasetChanges): Promise<void> {
    const cols = Object.keys(changes);
    if (!cols.length) return;
    await this.db.run(`UPDATE dataset SET ${setList(cols, 2)} WHERE id = $1`, [id, ...valuesOf(changes, cols)], { idempotent: true });
  }

  async idsOfTenant(tenantId: string): Promise<string[]> {
    return (await this.db.rows<{ id: string }>('SELECT id FROM dataset WHERE tenant_id = $1 ORDER BY ord', [tenantId])).map((r) => r.id);
  }

  async delete(ids: readonly string[]): Promise<void> {
    await this.db.tx(async (t) => {
      for (const id of ids) {
        const docs = await t.rows<{ id: string; blob_sha256: string }>('SELECT id, blob_sha256 FROM document WHERE dataset_id = $1', [id]);
        await removeDocumentChunks(t, docs.map((d) => d.id));
        faultPoint('datasets.delete:chunks-removed');
        await t.run('DELETE FROM document WHERE dataset_id = $1', [id]);
        faultPoint('datasets.delete:documents-deleted');
        await pruneBlobs(t, docs.map((d) => d.blob_sha256));
        faultPoint('datasets.delete:blobs-pruned');
        await t.run('DELETE FROM dataset WHERE id = $1', [id]);
        faultPoint('datasets.delete:dataset-deleted');
      }
    }, { idempotent: true });
    faultPoint('datasets.delete:committed');
  }

  async live(ids: readonly string[]): Promise<LiveDataset[]> {
    const rows = await this.db.rows<LiveDataset>("SELECT id, name, embd_id, pagerank, language FROM dataset WHERE id = ANY($1) AND status = '1'", [[...new Set(ids)]]);
    const by = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => by.get(id)).filter((d): d is LiveDataset => !!d);
  }

  async analyses(): Promise<Array<{ id: string; language: string | null; fts_language: string | null }>> {
    return this.db.rows('SELECT id, language, fts_language FROM dataset ORDER BY ord');
  }

  async markReindexed(id: string, language: string | null, analysis: string): Promise<boolean> {
    return (await this.db.run('UPDATE dataset SET fts_language = $1 WHERE id = $2 AND language IS NOT DISTINCT FROM $3', [analysis, id, language], { idempotent: true })) === 1;
  }
}

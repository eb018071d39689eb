/** Search apps on PostgreSQL (interface/search-apps.ts). */
import type { NewSearchApp, SearchAppChanges, SearchAppListQuery, SearchAppRow, SearchAppStore } from '../interface/index.js';
import { duplicateName } from '../../util/index.js';
import type { PgDb, PgTx } from './db.js';
import { lockNames } from './datasets.js';
import { foldAscii } from './names.js';
import { dir, orderColumn, setList, strip, stripAll, valuesOf } from './sql.js';

export class PgSearchApps implements SearchAppStore {
  constructor(private readonly db: PgDb) {}

  async get(id: string): Promise<SearchAppRow | undefined> {
    return strip(await this.db.one("SELECT * FROM search WHERE id = $1 AND status = '1'", [id]));
  }

  private async taken(q: PgDb | PgTx, tenantId: string, name: string): Promise<boolean> {
    return !!(await q.one("SELECT 1 FROM search WHERE tenant_id = $1 AND ragloom_nocase(name) = ragloom_nocase($2) AND status = '1'", [tenantId, name]));
  }

  async nameTaken(tenantId: string, name: string): Promise<boolean> {
    return this.taken(this.db, tenantId, name);
  }

  async create(row: NewSearchApp): Promise<string> {
    return this.db.tx(async (t) => {
      await lockNames(t, 'search', row.tenant_id);
      const taken = new Set((await t.rows<{ n: string }>("SELECT ragloom_nocase(name) AS n FROM search WHERE tenant_id = $1 AND status = '1'", [row.tenant_id])).map((r) => r.n));
      const name = duplicateName(row.name, (n) => taken.has(foldAscii(n)));
      await t.run(`INSERT INTO search (id, tenant_id, name, description, avatar, search_config, created_by, create_time, update_time)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [row.id, row.tenant_id, name, row.description, row.avatar, row.search_config, row.created_by, row.create_time, row.update_time]);
      return name;
    });
  }

  async list(q: SearchAppListQuery): Promise<{ total: number; rows: SearchAppRow[] }> {
    const p: unknown[] = [[...q.tenantIds]];
    let w = "tenant_id = ANY($1) AND status = '1'";
    if (q.keywords) (p.push(q.keywords), (w += ' AND strpos(ragloom_nocase(name), $2) > 0'));
    const total = (await this.db.one<{ n: number }>(`SELECT count(*) AS n FROM search WHERE ${w}`, p))!.n;
    const d = dir(q.desc);
    // search.name is NOCASE on SQLite: its order folds ASCII case.
    let sql = `SELECT * FROM search WHERE ${w} ORDER BY ${orderColumn(q.orderby, ['name'])} ${d}, ord ${d}`;
    if (q.page) sql += ` LIMIT ${q.page.limit < 0 ? 'ALL' : Math.floor(q.page.limit)} OFFSET ${Math.max(0, Math.floor(q.page.offset))}`;
    return { total, rows: stripAll(await this.db.rows(sql, p)) };
  }

  async update(id: string, changes: SearchAppChanges): Promise<void> {
    const cols = Object.keys(changes);
    if (cols.length) await this.db.run(`UPDATE search SET ${setList(cols, 2)} WHERE id = $1`, [id, ...valuesOf(changes, cols)], { idempotent: true });
  }

  async delete(id: string): Promise<void> {
    await this.db.run('DELETE FROM search WHERE id = $1', [id], { idempotent: true });
  }
}

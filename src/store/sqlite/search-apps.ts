/** Search apps on SQLite (interface/search-apps.ts). */
import type { NewSearchApp, SearchAppChanges, SearchAppListQuery, SearchAppRow, SearchAppStore } from '../interface/index.js';
import { duplicateName } from '../../util/index.js';
import { setList } from './sql.js';
import type { SqliteConn } from './store.js';

export class SqliteSearchApps implements SearchAppStore {
  constructor(private readonly c: SqliteConn) {}

  private get db() {
    return this.c.db;
  }

  async get(id: string): Promise<SearchAppRow | undefined> {
    return this.db.prepare("SELECT * FROM search WHERE id = ? AND status = '1'").get(id) as SearchAppRow | undefined;
  }

  private taken(tenantId: string, name: string): boolean {
    return !!this.db.prepare("SELECT 1 FROM search WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND status = '1'").get(tenantId, name);
  }

  async nameTaken(tenantId: string, name: string): Promise<boolean> {
    return this.taken(tenantId, name);
  }

  async create(row: NewSearchApp): Promise<string> {
    return this.c.tx(() => {
      const name = duplicateName(row.name, (n) => this.taken(row.tenant_id, n));
      this.db.prepare(`INSERT INTO search (id, tenant_id, name, description, avatar, search_config, created_by, create_time, update_time)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(row.id, row.tenant_id, name, row.description, row.avatar, row.search_config, row.created_by, row.create_time, row.update_time);
      return name;
    });
  }

  async list(q: SearchAppListQuery): Promise<{ total: number; rows: SearchAppRow[] }> {
    const where = [`tenant_id IN (SELECT value FROM json_each(?))`, "status = '1'"];
    const args: unknown[] = [JSON.stringify(q.tenantIds)];
    if (q.keywords) (where.push('instr(LOWER(name), ?) > 0'), args.push(q.keywords));
    const w = where.join(' AND ');
    const total = this.db.prepare(`SELECT COUNT(*) FROM search WHERE ${w}`).pluck().get(...args) as number;
    const dir = q.desc ? 'DESC' : 'ASC';
    let sql = `SELECT * FROM search WHERE ${w} ORDER BY ${q.orderby} ${dir}, rowid ${dir}`;
    if (q.page) (sql += ' LIMIT ? OFFSET ?'), args.push(q.page.limit, q.page.offset);
    return { total, rows: this.db.prepare(sql).all(...args) as SearchAppRow[] };
  }

  async update(id: string, changes: SearchAppChanges): Promise<void> {
    this.c.tx(() => this.db.prepare(`UPDATE search SET ${setList(Object.keys(changes))} WHERE id = @id`).run({ ...changes, id }));
  }

  async delete(id: string): Promise<void> {
    this.db.prepare('DELETE FROM search WHERE id = ?').run(id);
  }
}

/** Search apps (RAGFlow's search: a named `search_config` over datasets; table search). */

export interface SearchAppRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  avatar: string;
  /** JSON */
  search_config: string;
  /** '1' live; RAGFlow's soft delete would be '0' (ragloom deletes the row) */
  status: string;
  created_by: string;
  create_time: number;
  update_time: number;
}

export type NewSearchApp = Omit<SearchAppRow, 'status'>;

export interface SearchAppListQuery {
  /** the owners whose apps are listed */
  tenantIds: readonly string[];
  /** a substring of the name, lower case (the name is compared lowercased) */
  keywords?: string;
  /** a column of the app */
  orderby: keyof SearchAppRow;
  desc: boolean;
  /** SQL's LIMIT and OFFSET; absent: every row. */
  page?: { limit: number; offset: number };
}

export type SearchAppChanges = Partial<Pick<SearchAppRow, 'name' | 'description' | 'avatar' | 'search_config' | 'update_time'>>;

export interface SearchAppStore {
  /** A live app by id. */
  get(id: string): Promise<SearchAppRow | undefined>;
  /** Another live app of the tenant has this name (case-insensitively). */
  nameTaken(tenantId: string, name: string): Promise<boolean>;
  /**
   * Inserts the app under a free name: `row.name`, or `duplicateName`'s next one while a live app
   * of the tenant holds it; check and insert are one transaction. Returns the name.
   */
  create(row: NewSearchApp): Promise<string>;
  list(q: SearchAppListQuery): Promise<{ total: number; rows: SearchAppRow[] }>;
  update(id: string, changes: SearchAppChanges): Promise<void>;
  delete(id: string): Promise<void>;
}

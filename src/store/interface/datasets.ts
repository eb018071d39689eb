/** Datasets (RAGFlow's knowledge bases; table dataset). */
import type { Ctx } from './accounts.js';

export interface DatasetRow {
  id: string;
  tenant_id: string;
  name: string;
  avatar: string | null;
  description: string | null;
  language: string;
  embd_id: string;
  permission: string;
  created_by: string;
  parser_id: string;
  parser_config: string;
  pagerank: number;
  similarity_threshold: number;
  vector_similarity_weight: number;
  status: string;
  doc_num: number;
  chunk_num: number;
  token_num: number;
  create_time: number;
  update_time: number;
}

/** A new dataset: the columns a create sets (the others take their defaults). */
export type NewDataset = Pick<DatasetRow, 'id' | 'tenant_id' | 'name' | 'avatar' | 'description' | 'embd_id' | 'permission' |
  'created_by' | 'parser_id' | 'parser_config' | 'create_time' | 'update_time'>;

/** The columns an update may set. */
export type DatasetChanges = Partial<Pick<DatasetRow, 'name' | 'avatar' | 'description' | 'embd_id' | 'permission' | 'pagerank' |
  'language' | 'parser_id' | 'parser_config' | 'update_time'>>;

/** A dataset page as GET /datasets asks for it (datasets the caller can see, live ones). */
export interface DatasetListQuery {
  who: Ctx;
  /** exactly this id */
  id?: string;
  /** this name, compared case-insensitively */
  name?: string;
  /** a substring of the name, lower case (the name is compared lowercased) */
  keywords?: string;
  /** this chunk method */
  parser_id?: string;
  orderby: 'create_time' | 'update_time';
  desc: boolean;
  /** SQL's LIMIT and OFFSET: a negative limit is no limit. */
  limit: number;
  offset: number;
}

/** A live dataset as search and answers need it. */
export interface LiveDataset {
  id: string;
  name: string;
  embd_id: string;
  pagerank: number;
  /** The dataset's language setting (a search reads the question in it). */
  language: string | null;
}

export interface DatasetStore {
  get(id: string): Promise<DatasetRow | undefined>;
  /** The dataset when `tenantId` owns it. */
  getOwned(id: string, tenantId: string): Promise<DatasetRow | undefined>;
  /** The dataset when the caller can read it: its tenant's own, or a `team` dataset of a tenant it joined. */
  getVisible(id: string, who: Ctx): Promise<DatasetRow | undefined>;
  /** Of `ids`, the datasets `tenantId` owns (any status), by id; the others absent. */
  getOwnedMany(ids: readonly string[], tenantId: string): Promise<Map<string, DatasetRow>>;
  /**
   * Of `ids`, the datasets the caller can read (as getVisible; any status), by id; the others absent.
   * `cached`: the store may answer from what this process read before, as long as no change to a
   * dataset or a team's members can have reached it since (PostgreSQL: until the next wake-up of
   * its change feed; a change on another node arrives with its NOTIFY, as chunks do). For reads
   * that only search (retrieval), never for a check before a write.
   */
  getVisibleMany(ids: readonly string[], who: Ctx, opts?: { cached?: boolean }): Promise<Map<string, DatasetRow>>;
  exists(id: string): Promise<boolean>;
  /** Another live dataset of the tenant has this name (case-insensitively). */
  nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean>;
  /**
   * Inserts the dataset under a free name: `row.name`, or `duplicateName`'s next one while a live
   * dataset of the tenant holds it. The check and the insert are one transaction that excludes
   * every other create of the store (two concurrent creates never get one name). Returns the name.
   */
  create(row: NewDataset): Promise<string>;
  list(q: DatasetListQuery): Promise<{ total: number; rows: DatasetRow[] }>;
  /** Per dataset, its documents counted by `run` ('0'…'4'; runs without documents absent). */
  runCounts(datasetIds: readonly string[]): Promise<Map<string, Record<string, number>>>;
  update(id: string, changes: DatasetChanges): Promise<void>;
  /** The total size in bytes of the dataset's documents' files. */
  filesSize(id: string): Promise<number>;
  /** Every dataset id of the tenant (any status). */
  idsOfTenant(tenantId: string): Promise<string[]>;
  /**
   * Deletes the datasets with their documents, chunks (rows, full-text and vector entries) and the
   * blobs no other document uses, in one transaction.
   */
  delete(ids: readonly string[]): Promise<void>;
  /** The live (status '1') datasets among `ids`, in the order given; missing ones left out. */
  live(ids: readonly string[]): Promise<LiveDataset[]>;
  /** Every dataset's `language` and the analysis its chunks' full-text rows were last brought to (`fts_language`), by creation. */
  analyses(): Promise<Array<{ id: string; language: string | null; fts_language: string | null }>>;
  /**
   * Records that the dataset's full-text rows are analysed as `analysis`, if its `language` is
   * still `language` (a change meanwhile starts its re-index over). Whether it was recorded.
   */
  markReindexed(id: string, language: string | null, analysis: string): Promise<boolean>;
}

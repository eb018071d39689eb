/**
 * The PostgreSQL schema: everything the SQLite store holds (src/store/migrations.ts), as ordered
 * migrations. `schema_version` lists the steps applied; each step runs in its own transaction
 * (PostgreSQL's DDL is transactional: a step is applied whole or not at all) under an advisory
 * lock, so processes opening one database at once apply each step once. Steps are idempotent too
 * (IF NOT EXISTS, CREATE OR REPLACE). Never edit a released step: add a new one.
 *
 * Stock PostgreSQL ≥ 14, no extension. It mirrors the SQLite schema as of its step 15; a new
 * SQLite step that adds data must add it here too (a new step here once this one is released).
 * How it maps the SQLite schema:
 * - Text columns are written `TEXT` below and become `text COLLATE "C"`: byte order, as SQLite's
 *   BINARY collation compares, so every ORDER BY ranks as on SQLite whatever the database's locale.
 *   SQLite's NOCASE (ASCII letters only) is `ragloom_nocase(x)`, in the unique indexes of names.
 * - Times in ms and counters are bigint (read as JS numbers: db.ts), REAL is double precision,
 *   JSON stays text (the exact string written is the string read: jsonb would reorder keys).
 * - Vectors are a `bytea` column of float32 (little-endian, as the SQLite store's blobs) beside
 *   the chunk; no vector table, no full-text table: searches run on each process's in-memory
 *   indexes (src/search), which follow `change_log` (feed.ts) instead of FTS5 and vec0.
 * - File bytes are content-addressed (`blob.sha256`) and stored in parts of ≤ 1 MiB
 *   (`blob_part`), so they stream in and out (blobs.ts).
 * - Work shared by processes (`parse_job`, `memory_task`) carries a lease (claims.ts).
 * - Names that RAGFlow keeps unique have unique indexes (names.ts): datasets and chats (live
 *   ones) and memories per tenant, agents per tenant and category (all NOCASE, as SQLite
 *   compares them), documents per dataset (exactly), users' e-mails.
 */
import { faultPoint } from '../../util/index.js';
import type { PgDb } from './db.js';
import { SchemaError } from './errors.js';

export interface PgMigration {
  /** What the step adds (kept in schema_version). */
  readonly name: string;
  readonly sql: string;
}

/** `TEXT` in the steps' SQL: text compared byte by byte (see the module comment). */
const sql = (s: string): string => s.replace(/\bTEXT\b/g, 'text COLLATE "C"');

/**
 * Change-log trigger function for a row table (feed.ts): one log row per inserted, deleted or
 * watched-column-updated row, written by statement-level triggers from the transition tables (a
 * 5,000-row insert costs one INSERT … SELECT, not 5,000 trigger calls), then one wake-up.
 */
function logTrigger(table: string, topic: string, part: string, id: string, watched: string[]): string {
  const fn = `ragloom_log_${table}`;
  const cols = (a: string) => watched.map((c) => `${a}.${c}`).join(', ');
  return `
    CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO change_log (topic, part, rid) SELECT '${topic}', ${part}, ${id} FROM new_rows;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO change_log (topic, part, rid) SELECT '${topic}', ${part}, ${id} FROM old_rows;
      ELSE
        INSERT INTO change_log (topic, part, rid)
          SELECT '${topic}', n.${part}, n.${id} FROM new_rows n JOIN old_rows o ON o.${id} = n.${id}
            WHERE (${cols('n')}) IS DISTINCT FROM (${cols('o')})
          UNION ALL
          SELECT '${topic}', o.${part}, o.${id} FROM new_rows n JOIN old_rows o ON o.${id} = n.${id}
            WHERE n.${part} <> o.${part};
      END IF;
      IF FOUND THEN PERFORM pg_notify('ragloom_change', '${topic}'); END IF;
      RETURN NULL;
    END $fn$;
    CREATE OR REPLACE TRIGGER ${table}_log_ins AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();
    CREATE OR REPLACE TRIGGER ${table}_log_del AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();
    CREATE OR REPLACE TRIGGER ${table}_log_upd AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();`;
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    name: 'accounts: tenants, users, API keys (as SQLite after its step 9)',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE OR REPLACE FUNCTION ragloom_nocase(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$ SELECT translate($1, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') $$;
      CREATE OR REPLACE FUNCTION ragloom_now_ms() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE
        AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
      CREATE TABLE IF NOT EXISTS tenant (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, embd_id TEXT NOT NULL, llm_id TEXT NOT NULL DEFAULT '',
        create_time bigint NOT NULL
      );
      CREATE TABLE IF NOT EXISTS "user" (
        id TEXT PRIMARY KEY, nickname TEXT NOT NULL, email TEXT NOT NULL DEFAULT '', create_time bigint NOT NULL,
        is_superuser integer NOT NULL DEFAULT 0, password TEXT NOT NULL DEFAULT ''
      );
      CREATE UNIQUE INDEX IF NOT EXISTS user_email ON "user" (ragloom_nocase(email)) WHERE email <> '';
      CREATE TABLE IF NOT EXISTS user_tenant (
        user_id TEXT NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
        tenant_id TEXT NOT NULL REFERENCES tenant(id) ON DELETE CASCADE,
        role TEXT NOT NULL DEFAULT 'owner',
        PRIMARY KEY (user_id, tenant_id)
      );
      CREATE TABLE IF NOT EXISTS api_token (
        token_sha256 TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenant(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
        create_time bigint NOT NULL, source TEXT NOT NULL DEFAULT '', hint TEXT NOT NULL DEFAULT ''
      );
      CREATE INDEX IF NOT EXISTS api_token_user ON api_token (user_id, source);
    `),
  },
  {
    name: 'datasets, documents and their bytes (content-addressed, in parts)',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS dataset (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenant(id),
        name TEXT NOT NULL,
        avatar TEXT, description TEXT,
        language TEXT NOT NULL DEFAULT 'English',
        embd_id TEXT NOT NULL,
        permission TEXT NOT NULL DEFAULT 'me',
        created_by TEXT NOT NULL,
        parser_id TEXT NOT NULL DEFAULT 'naive',
        parser_config TEXT NOT NULL DEFAULT '{}',
        pagerank integer NOT NULL DEFAULT 0,
        similarity_threshold double precision NOT NULL DEFAULT 0.2,
        vector_similarity_weight double precision NOT NULL DEFAULT 0.3,
        status TEXT NOT NULL DEFAULT '1',
        doc_num bigint NOT NULL DEFAULT 0,
        chunk_num bigint NOT NULL DEFAULT 0,
        token_num bigint NOT NULL DEFAULT 0,
        create_time bigint NOT NULL, update_time bigint NOT NULL,
        -- the language its chunks' full-text rows are analysed as (SQLite's step 13)
        fts_language TEXT DEFAULT 'en'
      );
      CREATE INDEX IF NOT EXISTS dataset_tenant ON dataset (tenant_id, create_time);
      CREATE UNIQUE INDEX IF NOT EXISTS dataset_name_unique ON dataset (tenant_id, ragloom_nocase(name)) WHERE status = '1';
      -- A blob's bytes: parts written as they stream in, before the hash is known (blobs.ts).
      CREATE TABLE IF NOT EXISTS blob_content (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, create_time bigint NOT NULL
      );
      CREATE TABLE IF NOT EXISTS blob_part (
        content_id bigint NOT NULL REFERENCES blob_content(id) ON DELETE CASCADE,
        n integer NOT NULL, data bytea NOT NULL,
        PRIMARY KEY (content_id, n)
      );
      -- Files are mostly compressed already (pdf, docx, images): stored out of line, not compressed again.
      ALTER TABLE blob_part ALTER COLUMN data SET STORAGE EXTERNAL;
      CREATE TABLE IF NOT EXISTS blob (
        sha256 TEXT PRIMARY KEY, size bigint NOT NULL, parts integer NOT NULL,
        content_id bigint NOT NULL UNIQUE REFERENCES blob_content(id) ON DELETE CASCADE
      );
      CREATE TABLE IF NOT EXISTS document (
        id TEXT PRIMARY KEY,
        dataset_id TEXT NOT NULL REFERENCES dataset(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        suffix TEXT NOT NULL DEFAULT '',
        type TEXT NOT NULL,
        size bigint NOT NULL,
        blob_sha256 TEXT NOT NULL REFERENCES blob(sha256),
        location TEXT NOT NULL,
        thumbnail TEXT,
        parser_id TEXT NOT NULL,
        parser_config TEXT NOT NULL DEFAULT '{}',
        source_type TEXT NOT NULL DEFAULT 'local',
        created_by TEXT NOT NULL,
        token_num bigint NOT NULL DEFAULT 0,
        chunk_num bigint NOT NULL DEFAULT 0,
        progress double precision NOT NULL DEFAULT 0,
        progress_msg TEXT NOT NULL DEFAULT '',
        process_begin_at bigint,
        process_duration double precision NOT NULL DEFAULT 0,
        run TEXT NOT NULL DEFAULT '0',
        status TEXT NOT NULL DEFAULT '1',
        meta_fields TEXT NOT NULL DEFAULT '{}',
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS document_dataset ON document (dataset_id, create_time);
      CREATE INDEX IF NOT EXISTS document_dataset_name ON document (dataset_id, ragloom_nocase(name));
      CREATE UNIQUE INDEX IF NOT EXISTS document_name_unique ON document (dataset_id, name);
      CREATE INDEX IF NOT EXISTS document_blob ON document (blob_sha256);
    `),
  },
  {
    name: 'chunks with their vectors, the embedding cache, the change log',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS chunk (
        rowid bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL REFERENCES document(id) ON DELETE CASCADE,
        dataset_id TEXT NOT NULL,
        content TEXT NOT NULL,
        important_keywords TEXT NOT NULL DEFAULT '[]',
        questions TEXT NOT NULL DEFAULT '[]',
        tag_kwd TEXT NOT NULL DEFAULT '[]',
        positions TEXT NOT NULL DEFAULT '[]',
        available integer NOT NULL DEFAULT 1,
        image_id TEXT NOT NULL DEFAULT '',
        doc_type TEXT NOT NULL DEFAULT '',
        chunk_order integer NOT NULL DEFAULT 0,
        page_num integer NOT NULL DEFAULT 0,
        top integer NOT NULL DEFAULT 0,
        token_num integer NOT NULL DEFAULT 0,
        vec_dim integer NOT NULL DEFAULT 0,
        vector bytea,
        create_time TEXT NOT NULL,
        create_timestamp double precision NOT NULL,
        index_text TEXT,
        -- the language its full-text row is analysed as (SQLite's step 13)
        lang TEXT,
        -- 1: its full-text row has the document's name as title terms; 0: none, a chunk added
        -- through the API (SQLite's step 14)
        titled integer NOT NULL DEFAULT 1
      );
      ALTER TABLE chunk ALTER COLUMN vector SET STORAGE EXTERNAL;
      CREATE INDEX IF NOT EXISTS chunk_document ON chunk (document_id, chunk_order, page_num, top);
      CREATE INDEX IF NOT EXISTS chunk_dataset ON chunk (dataset_id, rowid);
      CREATE TABLE IF NOT EXISTS embedding_cache (
        model TEXT NOT NULL, sha256 TEXT NOT NULL, vector bytea NOT NULL, create_time bigint NOT NULL,
        PRIMARY KEY (model, sha256)
      );
      -- The change feed (feed.ts): read in (txid, seq) order below the oldest running transaction.
      CREATE TABLE IF NOT EXISTS change_log (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        topic TEXT NOT NULL, part TEXT NOT NULL, rid bigint NOT NULL,
        PRIMARY KEY (txid, seq)
      );
      -- Where each node's feed reader is (trimming keeps what a live reader has not read).
      CREATE TABLE IF NOT EXISTS feed_reader (
        node TEXT PRIMARY KEY, txid xid8 NOT NULL, seen_at bigint NOT NULL
      );
      -- The feed's horizon: below it every transaction that could write this database's log has
      -- ended. The snapshot's oldest running transaction, leaving out those of backends connected
      -- to other databases of the server (they cannot write here; a backend never changes
      -- database, so an xid shown for one is theirs for good; one not shown yet counts as ours).
      CREATE OR REPLACE FUNCTION ragloom_feed_horizon() RETURNS xid8 LANGUAGE sql STABLE AS $fn$
        WITH s AS (SELECT pg_current_snapshot() AS snap),
        other AS (
          SELECT backend_xid::text::bigint AS x FROM pg_stat_activity
          WHERE backend_xid IS NOT NULL AND datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database())
        )
        SELECT COALESCE(
          (SELECT min(r) FROM pg_snapshot_xip(s.snap) AS r
            WHERE NOT EXISTS (SELECT 1 FROM other WHERE other.x = r::text::bigint % 4294967296)),
          pg_snapshot_xmax(s.snap))
        FROM s
      $fn$;
      ${logTrigger('chunk', 'chunk', 'dataset_id', 'rowid', ['available', 'vec_dim', 'vector', 'dataset_id', 'document_id', 'content', 'index_text', 'important_keywords', 'questions', 'lang'])}
    `),
  },
  {
    name: 'parse work: one job per queued document, claimed with a lease',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS parse_job (
        document_id TEXT PRIMARY KEY REFERENCES document(id) ON DELETE CASCADE,
        dataset_id TEXT NOT NULL,
        queued_at bigint NOT NULL,
        lease_owner TEXT, lease_token uuid, lease_until bigint,
        claims integer NOT NULL DEFAULT 0,
        -- queued again while leased: it runs once more after the current run ends
        again boolean NOT NULL DEFAULT false
      );
      CREATE INDEX IF NOT EXISTS parse_job_queue ON parse_job (queued_at, document_id);
    `),
  },
  {
    name: 'chat assistants, their sessions and messages',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS chat (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenant(id),
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT 'A helpful Assistant',
        icon TEXT NOT NULL DEFAULT '',
        language TEXT NOT NULL DEFAULT 'English',
        dataset_ids TEXT NOT NULL DEFAULT '[]',
        llm_id TEXT NOT NULL DEFAULT '',
        llm_setting TEXT NOT NULL DEFAULT '{}',
        prompt_config TEXT NOT NULL DEFAULT '{}',
        meta_data_filter TEXT NOT NULL DEFAULT '{}',
        similarity_threshold double precision NOT NULL DEFAULT 0.1,
        vector_similarity_weight double precision NOT NULL DEFAULT 0.3,
        top_n integer NOT NULL DEFAULT 6,
        top_k integer NOT NULL DEFAULT 1024,
        rerank_id TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL DEFAULT '1',
        created_by TEXT NOT NULL,
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS chat_tenant ON chat (tenant_id, status, create_time);
      CREATE UNIQUE INDEX IF NOT EXISTS chat_name_unique ON chat (tenant_id, ragloom_nocase(name)) WHERE status = '1';
      CREATE TABLE IF NOT EXISTS chat_session (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        user_id TEXT NOT NULL DEFAULT '',
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS chat_session_chat ON chat_session (chat_id, create_time);
      CREATE TABLE IF NOT EXISTS chat_message (
        seq bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES chat_session(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        reference TEXT
      );
      CREATE INDEX IF NOT EXISTS chat_message_session ON chat_message (session_id, seq);
    `),
  },
  {
    name: 'memories: messages with their FIFO order and vectors, extraction tasks with leases',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS memory (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenant(id),
        name TEXT NOT NULL,
        avatar TEXT NOT NULL DEFAULT '',
        memory_type integer NOT NULL DEFAULT 1,
        storage_type TEXT NOT NULL DEFAULT 'table',
        embd_id TEXT NOT NULL,
        llm_id TEXT NOT NULL,
        permissions TEXT NOT NULL DEFAULT 'me',
        description TEXT NOT NULL DEFAULT '',
        memory_size bigint NOT NULL DEFAULT 5242880,
        forgetting_policy TEXT NOT NULL DEFAULT 'FIFO',
        temperature double precision NOT NULL DEFAULT 0.5,
        system_prompt TEXT NOT NULL DEFAULT '',
        user_prompt TEXT NOT NULL DEFAULT '',
        used_bytes bigint NOT NULL DEFAULT 0,
        message_count bigint NOT NULL DEFAULT 0,
        created_by TEXT NOT NULL,
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS memory_tenant ON memory (tenant_id, update_time);
      CREATE UNIQUE INDEX IF NOT EXISTS memory_name_unique ON memory (tenant_id, ragloom_nocase(name));
      CREATE TABLE IF NOT EXISTS memory_message (
        id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        message_type TEXT NOT NULL,
        source_id bigint NOT NULL DEFAULT 0,
        user_id TEXT NOT NULL DEFAULT '',
        agent_id TEXT NOT NULL DEFAULT '',
        session_id TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL,
        dim integer NOT NULL DEFAULT 0,
        vector bytea,
        valid_at bigint NOT NULL,
        invalid_at bigint,
        forget_at bigint,
        fifo_at bigint NOT NULL,
        status integer NOT NULL DEFAULT 1,
        size bigint NOT NULL,
        create_time bigint NOT NULL
      );
      ALTER TABLE memory_message ALTER COLUMN vector SET STORAGE EXTERNAL;
      CREATE INDEX IF NOT EXISTS memory_message_fifo ON memory_message (memory_id, (forget_at IS NULL), (COALESCE(forget_at, fifo_at)), id);
      CREATE INDEX IF NOT EXISTS memory_message_list ON memory_message (memory_id, source_id, valid_at);
      CREATE INDEX IF NOT EXISTS memory_message_source ON memory_message (source_id) WHERE source_id <> 0;
      ${logTrigger('memory_message', 'memory', 'memory_id', 'id', ['status', 'forget_at', 'vector', 'dim', 'memory_id', 'content'])}
      CREATE TABLE IF NOT EXISTS memory_task (
        id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        message_id bigint NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        progress_msg TEXT NOT NULL DEFAULT '',
        create_time bigint NOT NULL,
        update_time bigint NOT NULL,
        due_at bigint NOT NULL DEFAULT 0,
        lease_owner TEXT, lease_token uuid, lease_until bigint,
        claims integer NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS memory_task_pending ON memory_task (id) WHERE status = 'pending';
      CREATE INDEX IF NOT EXISTS memory_task_message ON memory_task (memory_id, message_id);
    `),
  },
  {
    name: 'agents, their versions, sessions and messages',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS agent (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenant(id),
        title TEXT NOT NULL,
        avatar TEXT NOT NULL DEFAULT '',
        description TEXT,
        permission TEXT NOT NULL DEFAULT 'me',
        release integer NOT NULL DEFAULT 0,
        canvas_type TEXT NOT NULL DEFAULT '',
        canvas_category TEXT NOT NULL DEFAULT 'agent_canvas',
        tags TEXT NOT NULL DEFAULT '',
        dsl TEXT NOT NULL DEFAULT '{}',
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS agent_title_unique ON agent (tenant_id, canvas_category, ragloom_nocase(title));
      CREATE INDEX IF NOT EXISTS agent_team ON agent (permission, tenant_id);
      CREATE TABLE IF NOT EXISTS agent_version (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agent(id) ON DELETE CASCADE,
        title TEXT,
        description TEXT,
        release integer NOT NULL DEFAULT 0,
        dsl TEXT NOT NULL DEFAULT '{}',
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS agent_version_agent ON agent_version (agent_id, create_time);
      CREATE TABLE IF NOT EXISTS agent_session (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agent(id) ON DELETE CASCADE,
        name TEXT NOT NULL DEFAULT '',
        user_id TEXT NOT NULL DEFAULT '',
        exp_user_id TEXT,
        source TEXT NOT NULL DEFAULT 'agent',
        dsl TEXT NOT NULL DEFAULT '{}',
        version_title TEXT,
        tokens bigint NOT NULL DEFAULT 0,
        duration double precision NOT NULL DEFAULT 0,
        round integer NOT NULL DEFAULT 0,
        thumb_up integer NOT NULL DEFAULT 0,
        errors TEXT,
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS agent_session_agent ON agent_session (agent_id, update_time);
      CREATE INDEX IF NOT EXISTS agent_session_user ON agent_session (agent_id, user_id);
      CREATE TABLE IF NOT EXISTS agent_message (
        session_id TEXT NOT NULL REFERENCES agent_session(id) ON DELETE CASCADE,
        seq integer NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        reference TEXT,
        PRIMARY KEY (session_id, seq)
      );
    `),
  },
  {
    // SQLite's step 15: the rest of RAGFlow's REST interface (src/api/routes.ts).
    name: 'parse logs (one per parse of a document), search apps, chunk images',
    sql: sql(`
      CREATE TABLE IF NOT EXISTS parse_log (
        id TEXT PRIMARY KEY,
        document_id TEXT NOT NULL,
        dataset_id TEXT NOT NULL REFERENCES dataset(id) ON DELETE CASCADE,
        tenant_id TEXT NOT NULL,
        parser_id TEXT NOT NULL,
        document_name TEXT NOT NULL,
        document_suffix TEXT NOT NULL DEFAULT '',
        document_type TEXT NOT NULL DEFAULT '',
        source_from TEXT NOT NULL DEFAULT 'local',
        progress double precision NOT NULL DEFAULT 0,
        progress_msg TEXT NOT NULL DEFAULT '',
        process_begin_at bigint,
        process_duration double precision NOT NULL DEFAULT 0,
        operation_status TEXT NOT NULL DEFAULT '1',
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS parse_log_dataset ON parse_log (dataset_id, create_time);
      CREATE INDEX IF NOT EXISTS parse_log_open ON parse_log (document_id) WHERE operation_status = '1';
      CREATE TABLE IF NOT EXISTS search (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenant(id),
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        avatar TEXT NOT NULL DEFAULT '',
        search_config TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT '1',
        created_by TEXT NOT NULL,
        create_time bigint NOT NULL, update_time bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS search_tenant ON search (tenant_id, status, create_time);
      CREATE TABLE IF NOT EXISTS chunk_image (
        id TEXT PRIMARY KEY,
        dataset_id TEXT NOT NULL REFERENCES dataset(id) ON DELETE CASCADE,
        data bytea NOT NULL
      );
    `),
  },
  {
    name: 'the store interface (issue 29): insertion order of listed rows, parse claims of processes, the feed by topic',
    sql: sql(`
      -- SQLite breaks ties of every ORDER BY with rowid (insertion order): these tables get one.
      ALTER TABLE user_tenant ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE api_token ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE dataset ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE document ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE chat ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE chat_session ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE memory ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE agent ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE agent_version ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE agent_session ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE parse_log ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      ALTER TABLE search ADD COLUMN IF NOT EXISTS ord bigint GENERATED ALWAYS AS IDENTITY;
      -- Which process parses which document (interface/parse.ts: pid, host, heartbeat), as SQLite's.
      CREATE TABLE IF NOT EXISTS parse_owner (
        document_id TEXT PRIMARY KEY, pid integer NOT NULL, host TEXT NOT NULL, heartbeat bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS parse_owner_pid ON parse_owner (pid, host);
      -- A follower of one topic reads past the other topic's rows through this index.
      CREATE INDEX IF NOT EXISTS change_log_topic ON change_log (topic, txid, seq);
      -- A chunk's analysed full-text row (title, content, keywords, questions), as SQLite's chunk_fts
      -- holds it: written with the chunk (the ingest worker analysed it already), so a process that
      -- loads its FTS5 copy reads terms instead of analysing every chunk again. NULL: not stored
      -- (a copied store): the reader analyses the row.
      ALTER TABLE chunk ADD COLUMN IF NOT EXISTS fts text[];
      -- The dimensions chunks are stored with (SearchReader.chunkDims), read by skipping through it.
      CREATE INDEX IF NOT EXISTS chunk_vec_dim ON chunk (vec_dim);
      -- A chunk's lang alone no longer logs it: a re-index slice logs the rows whose terms change
      -- (a row whose terms stay is only relabelled), as SQLite's does (chunk-rows.ts).
      ${logTrigger('chunk', 'chunk', 'dataset_id', 'rowid', ['available', 'vec_dim', 'vector', 'dataset_id', 'document_id', 'content', 'index_text', 'important_keywords', 'questions'])}
    `),
  },
  {
    // Nodes pull parse work from parse_job (issue 30): within one queueing, documents go in their
    // own order (SQLite's), read from the index rather than sorted per claim.
    name: 'parse jobs in document order',
    sql: sql(`
      ALTER TABLE parse_job ADD COLUMN IF NOT EXISTS ord bigint NOT NULL DEFAULT 0;
      CREATE INDEX IF NOT EXISTS parse_job_order ON parse_job (queued_at, ord, document_id);
      DROP INDEX IF EXISTS parse_job_queue;
    `),
  },
  {
    // Each node keeps the datasets a search checks (datasets.ts: getVisibleMany's cache) until a
    // wake-up of its feed gate: a change of a dataset or of a team's members wakes every node.
    name: 'wake-ups for dataset and team changes',
    sql: sql(`
      CREATE OR REPLACE FUNCTION ragloom_wake_dataset() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_notify('ragloom_change', 'dataset');
        RETURN NULL;
      END $fn$;
      CREATE OR REPLACE TRIGGER dataset_wake AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dataset
        FOR EACH STATEMENT EXECUTE FUNCTION ragloom_wake_dataset();
      CREATE OR REPLACE TRIGGER user_tenant_wake AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON user_tenant
        FOR EACH STATEMENT EXECUTE FUNCTION ragloom_wake_dataset();
    `),
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** The tables the schema makes: a database holding any of them without `schema_version` is someone else's. */
export const PG_TABLES = [
  'meta', 'tenant', 'user', 'user_tenant', 'api_token', 'dataset', 'blob_content', 'blob_part', 'blob', 'document', 'chunk',
  'embedding_cache', 'change_log', 'feed_reader', 'parse_job', 'chat', 'chat_session', 'chat_message', 'memory', 'memory_message',
  'memory_task', 'agent', 'agent_version', 'agent_session', 'agent_message', 'parse_log', 'search', 'chunk_image', 'parse_owner',
] as const;

/** Advisory lock key of schema changes ('ragl' in ASCII): one process migrates at a time. */
const MIGRATION_LOCK = 0x7261676c;

async function versionOf(db: PgDb): Promise<{ version: number; foreign: string[] }> {
  const r = await db.one<{ has: boolean; foreign: string[] | null }>(`
    SELECT to_regclass('schema_version') IS NOT NULL AS has,
      (SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_class c
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm') AND c.relname = ANY($1)) AS foreign`,
    [PG_TABLES]);
  if (!r!.has) return { version: 0, foreign: r!.foreign ?? [] };
  const v = await db.one<{ v: number | null }>('SELECT max(version) AS v FROM schema_version');
  return { version: v?.v ?? 0, foreign: [] };
}

/**
 * Applies every step above the database's version (up to `target`); returns the version found.
 * Refuses a database whose schema is newer than this ragloom's, or that holds tables of ragloom's
 * names it did not create.
 */
export async function migratePostgres(db: PgDb, target = PG_SCHEMA_VERSION): Promise<number> {
  const { version: from, foreign } = await versionOf(db);
  if (from === 0 && foreign.length) {
    throw new SchemaError(db.target, `Database ${db.target} holds tables ragloom did not create (${foreign.join(', ')}): give ragloom an empty database of its own.`);
  }
  if (from > PG_SCHEMA_VERSION) {
    throw new SchemaError(db.target, `Database schema version ${from} is newer than this ragloom (${PG_SCHEMA_VERSION}); upgrade ragloom.`);
  }
  for (let v = from; v < target; v++) {
    await db.tx(async (t) => {
      await t.run('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await t.run('CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)');
      // Another process may have applied this step since the version was read.
      const cur = (await t.one<{ v: number | null }>('SELECT max(version) AS v FROM schema_version'))?.v ?? 0;
      if (cur > v) return;
      await t.run(PG_MIGRATIONS[v]!.sql);
      faultPoint(`pg-migrate:${v + 1}:applied`);
      await t.run('INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, ragloom_now_ms())', [v + 1, PG_MIGRATIONS[v]!.name]);
    }, { idempotent: true });
    faultPoint(`pg-migrate:${v + 1}:committed`);
  }
  return from;
}

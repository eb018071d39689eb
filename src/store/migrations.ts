import type { Database } from 'better-sqlite3';
import { ftsTerms, ANALYZER_VERSION } from '../text/index.js';
import { jsonList, sha256Hex, faultPoint } from '../util/index.js';

/**
 * Ordered schema migrations; `PRAGMA user_version` holds the number applied. Each step is
 * idempotent (IF NOT EXISTS) so a crash between the DDL and the version bump is harmless.
 * Never edit a released step: add a new one.
 */
export const MIGRATIONS: ReadonlyArray<(db: Database) => void> = [
  // 1: accounts, datasets, documents, content-addressed blobs
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS tenant (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, embd_id TEXT NOT NULL, llm_id TEXT NOT NULL DEFAULT '',
      create_time INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS user (
      id TEXT PRIMARY KEY, nickname TEXT NOT NULL, email TEXT NOT NULL DEFAULT '', create_time INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS user_tenant (
      user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE,
      tenant_id TEXT NOT NULL REFERENCES tenant(id) ON DELETE CASCADE,
      role TEXT NOT NULL DEFAULT 'owner',
      PRIMARY KEY (user_id, tenant_id)
    );
    CREATE TABLE IF NOT EXISTS api_token (
      token TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenant(id) ON DELETE CASCADE,
      user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, create_time INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS dataset (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL REFERENCES tenant(id),
      name TEXT NOT NULL COLLATE NOCASE,
      avatar TEXT, description TEXT,
      language TEXT NOT NULL DEFAULT 'English',
      embd_id TEXT NOT NULL,
      permission TEXT NOT NULL DEFAULT 'me',
      created_by TEXT NOT NULL,
      parser_id TEXT NOT NULL DEFAULT 'naive',
      parser_config TEXT NOT NULL DEFAULT '{}',
      pagerank INTEGER NOT NULL DEFAULT 0,
      similarity_threshold REAL NOT NULL DEFAULT 0.2,
      vector_similarity_weight REAL NOT NULL DEFAULT 0.3,
      status TEXT NOT NULL DEFAULT '1',
      doc_num INTEGER NOT NULL DEFAULT 0,
      chunk_num INTEGER NOT NULL DEFAULT 0,
      token_num INTEGER NOT NULL DEFAULT 0,
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS dataset_tenant_name ON dataset(tenant_id, name);
    CREATE TABLE IF NOT EXISTS blob (
      sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL
    );
    CREATE TABLE IF NOT EXISTS document (
      id TEXT PRIMARY KEY,
      dataset_id TEXT NOT NULL REFERENCES dataset(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      suffix TEXT NOT NULL DEFAULT '',
      type TEXT NOT NULL,
      size INTEGER NOT NULL,
      blob_sha256 TEXT NOT NULL REFERENCES blob(sha256),
      location TEXT NOT NULL,
      thumbnail TEXT,
      parser_id TEXT NOT NULL,
      parser_config TEXT NOT NULL DEFAULT '{}',
      source_type TEXT NOT NULL DEFAULT 'local',
      created_by TEXT NOT NULL,
      token_num INTEGER NOT NULL DEFAULT 0,
      chunk_num INTEGER NOT NULL DEFAULT 0,
      progress REAL NOT NULL DEFAULT 0,
      progress_msg TEXT NOT NULL DEFAULT '',
      process_begin_at INTEGER,
      process_duration REAL NOT NULL DEFAULT 0,
      run TEXT NOT NULL DEFAULT '0',
      status TEXT NOT NULL DEFAULT '1',
      meta_fields TEXT NOT NULL DEFAULT '{}',
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS document_dataset ON document(dataset_id, create_time);
  `),
  // 2: chunks with a full-text index and per-dimension vector indexes (created on demand)
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS chunk (
      rowid INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      document_id TEXT NOT NULL REFERENCES document(id) ON DELETE CASCADE,
      dataset_id TEXT NOT NULL,
      content TEXT NOT NULL,
      important_keywords TEXT NOT NULL DEFAULT '[]',
      questions TEXT NOT NULL DEFAULT '[]',
      tag_kwd TEXT NOT NULL DEFAULT '[]',
      positions TEXT NOT NULL DEFAULT '[]',
      available INTEGER NOT NULL DEFAULT 1,
      image_id TEXT NOT NULL DEFAULT '',
      doc_type TEXT NOT NULL DEFAULT '',
      chunk_order INTEGER NOT NULL DEFAULT 0,
      page_num INTEGER NOT NULL DEFAULT 0,
      top INTEGER NOT NULL DEFAULT 0,
      token_num INTEGER NOT NULL DEFAULT 0,
      vec_dim INTEGER NOT NULL DEFAULT 0,
      create_time TEXT NOT NULL,
      create_timestamp REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS chunk_document ON chunk(document_id, chunk_order, page_num, top);
    CREATE INDEX IF NOT EXISTS chunk_dataset ON chunk(dataset_id);
    CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
      title, content, keywords, questions,
      tokenize = 'unicode61 remove_diacritics 2', content = '', contentless_delete = 1
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts_terms USING fts5vocab(chunk_fts, row);
    CREATE TABLE IF NOT EXISTS vec_index (dim INTEGER PRIMARY KEY, table_name TEXT NOT NULL);
  `),
  // 3: embedding cache keyed by (model, content hash)
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS embedding_cache (
      model TEXT NOT NULL, sha256 TEXT NOT NULL, vector BLOB NOT NULL, create_time INTEGER NOT NULL,
      PRIMARY KEY (model, sha256)
    ) WITHOUT ROWID;
  `),
  // 4: retrieval: the index text of a chunk when it differs from its content, a change log that
  // keeps in-memory vector indexes in step (filled by triggers, so rolled-back writes leave no
  // trace), and the full-text rows re-indexed with the wink-nlp analyzer (ANALYZER_VERSION 2).
  (db) => {
    const cols = (db.prepare('PRAGMA table_info(chunk)').all() as { name: string }[]).map((c) => c.name);
    if (!cols.includes('index_text')) db.exec('ALTER TABLE chunk ADD COLUMN index_text TEXT');
    db.exec(`
      CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS vec_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL);
      CREATE TRIGGER IF NOT EXISTS chunk_vec_log_ins AFTER INSERT ON chunk BEGIN INSERT INTO vec_log (rid) VALUES (new.rowid); END;
      CREATE TRIGGER IF NOT EXISTS chunk_vec_log_del AFTER DELETE ON chunk BEGIN INSERT INTO vec_log (rid) VALUES (old.rowid); END;
      CREATE TRIGGER IF NOT EXISTS chunk_vec_log_upd AFTER UPDATE OF available, vec_dim, dataset_id, content, questions ON chunk
        BEGIN INSERT INTO vec_log (rid) VALUES (new.rowid); END;
    `);
    reindexFullText(db);
  },
  // 5: inserts are found by rowid (they only grow), so the insert trigger of step 4 goes: it
  // cost more than the rest of a chunk insert (an AUTOINCREMENT log row per chunk).
  (db) => db.exec('DROP TRIGGER IF EXISTS chunk_vec_log_ins'),
  // 6: full-text bulk loading. FTS5 flushes its pending terms to a new segment every 1 MiB
  // (hashsize) and merges 4 segments of a level (automerge): with 16 MiB and 8, a 5,000-chunk
  // transaction writes one segment and merges run half as often. Stored in chunk_fts_config, so
  // every connection uses them; query results are the same (only the segment layout differs).
  (db) => db.exec(`
    INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('hashsize', ${16 * 1024 * 1024});
    INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('automerge', 8);
  `),
  // 7: chat assistants (RAGFlow's dialog; deleted = status '0', as RAGFlow soft-deletes), their
  // sessions (RAGFlow's conversation) and the sessions' messages, one row each (RAGFlow keeps one
  // JSON list per session; appending a row keeps an answer's write independent of the history's
  // length). An answer's reference is stored on its row.
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS chat (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL REFERENCES tenant(id),
      name TEXT NOT NULL COLLATE NOCASE,
      description TEXT NOT NULL DEFAULT 'A helpful Assistant',
      icon TEXT NOT NULL DEFAULT '',
      language TEXT NOT NULL DEFAULT 'English',
      dataset_ids TEXT NOT NULL DEFAULT '[]',
      llm_id TEXT NOT NULL DEFAULT '',
      llm_setting TEXT NOT NULL DEFAULT '{}',
      prompt_config TEXT NOT NULL DEFAULT '{}',
      meta_data_filter TEXT NOT NULL DEFAULT '{}',
      similarity_threshold REAL NOT NULL DEFAULT 0.1,
      vector_similarity_weight REAL NOT NULL DEFAULT 0.3,
      top_n INTEGER NOT NULL DEFAULT 6,
      top_k INTEGER NOT NULL DEFAULT 1024,
      rerank_id TEXT NOT NULL DEFAULT '',
      status TEXT NOT NULL DEFAULT '1',
      created_by TEXT NOT NULL,
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS chat_tenant ON chat(tenant_id, status, create_time);
    CREATE TABLE IF NOT EXISTS chat_session (
      id TEXT PRIMARY KEY,
      chat_id TEXT NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      user_id TEXT NOT NULL DEFAULT '',
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS chat_session_chat ON chat_session(chat_id, create_time);
    CREATE TABLE IF NOT EXISTS chat_message (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL REFERENCES chat_session(id) ON DELETE CASCADE,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      extra TEXT NOT NULL DEFAULT '{}',
      reference TEXT
    );
    CREATE INDEX IF NOT EXISTS chat_message_session ON chat_message(session_id, seq);
  `),
  // 8: memories (RAGFlow §11). A memory keeps its running byte total and message count, changed in
  // the same transaction as every insert and eviction; `memory_message_fifo` is the eviction
  // order (forgotten first by forget_at, then by fifo_at, ties by id), so the allocator finds its
  // victims in O(log n) without scanning. Messages have a full-text table shaped like chunk_fts
  // and a change log for the in-memory vector index (src/search), as chunks do; extraction work
  // waits in memory_task until done, so it survives a restart.
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS memory (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL REFERENCES tenant(id),
      name TEXT NOT NULL,
      avatar TEXT NOT NULL DEFAULT '',
      memory_type INTEGER NOT NULL DEFAULT 1,
      storage_type TEXT NOT NULL DEFAULT 'table',
      embd_id TEXT NOT NULL,
      llm_id TEXT NOT NULL,
      permissions TEXT NOT NULL DEFAULT 'me',
      description TEXT NOT NULL DEFAULT '',
      memory_size INTEGER NOT NULL DEFAULT 5242880,
      forgetting_policy TEXT NOT NULL DEFAULT 'FIFO',
      temperature REAL NOT NULL DEFAULT 0.5,
      system_prompt TEXT NOT NULL DEFAULT '',
      user_prompt TEXT NOT NULL DEFAULT '',
      used_bytes INTEGER NOT NULL DEFAULT 0,
      message_count INTEGER NOT NULL DEFAULT 0,
      created_by TEXT NOT NULL,
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_tenant ON memory(tenant_id, update_time);
    CREATE TABLE IF NOT EXISTS memory_message (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
      message_type TEXT NOT NULL,
      source_id INTEGER NOT NULL DEFAULT 0,
      user_id TEXT NOT NULL DEFAULT '',
      agent_id TEXT NOT NULL DEFAULT '',
      session_id TEXT NOT NULL DEFAULT '',
      content TEXT NOT NULL,
      dim INTEGER NOT NULL DEFAULT 0,
      vector BLOB,
      valid_at INTEGER NOT NULL,
      invalid_at INTEGER,
      forget_at INTEGER,
      fifo_at INTEGER NOT NULL,
      status INTEGER NOT NULL DEFAULT 1,
      size INTEGER NOT NULL,
      create_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_message_fifo ON memory_message(memory_id, (forget_at IS NULL), COALESCE(forget_at, fifo_at), id);
    CREATE INDEX IF NOT EXISTS memory_message_list ON memory_message(memory_id, source_id, valid_at);
    CREATE INDEX IF NOT EXISTS memory_message_source ON memory_message(source_id) WHERE source_id != 0;
    CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
      title, content, keywords, questions,
      tokenize = 'unicode61 remove_diacritics 2', content = '', contentless_delete = 1
    );
    CREATE TABLE IF NOT EXISTS memory_vec_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL);
    CREATE TRIGGER IF NOT EXISTS memory_message_vec_del AFTER DELETE ON memory_message
      BEGIN INSERT INTO memory_vec_log (rid) VALUES (old.id); END;
    CREATE TRIGGER IF NOT EXISTS memory_message_vec_upd AFTER UPDATE OF status, forget_at, vector, dim, memory_id ON memory_message
      BEGIN INSERT INTO memory_vec_log (rid) VALUES (new.id); END;
    CREATE TABLE IF NOT EXISTS memory_task (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
      message_id INTEGER NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending',
      attempts INTEGER NOT NULL DEFAULT 0,
      progress_msg TEXT NOT NULL DEFAULT '',
      create_time INTEGER NOT NULL,
      update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memory_task_pending ON memory_task(status, id);
    CREATE INDEX IF NOT EXISTS memory_task_message ON memory_task(memory_id, message_id);
  `),
  // 9: identity for `ragloom serve` (src/api/identity.ts). API keys are stored as their sha256
  // only: `api_token.token` becomes `token_sha256` (any key written in clear before is hashed in
  // place), with where the key came from (`source`: admin | user) and a short `hint` to tell keys
  // apart. Users get `is_superuser` (the serving admin) and a `password` hash; e-mails are unique.
  (db) => {
    const cols = (t: string) => (db.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name);
    const user = cols('user');
    if (!user.includes('is_superuser')) db.exec('ALTER TABLE user ADD COLUMN is_superuser INTEGER NOT NULL DEFAULT 0');
    if (!user.includes('password')) db.exec("ALTER TABLE user ADD COLUMN password TEXT NOT NULL DEFAULT ''");
    const token = cols('api_token');
    if (token.includes('token')) {
      const clear = (db.prepare('SELECT token FROM api_token').all() as { token: string }[]).map((r) => r.token);
      db.exec('ALTER TABLE api_token RENAME COLUMN token TO token_sha256');
      faultPoint('migrate:9:renamed');
      const upd = db.prepare('UPDATE api_token SET token_sha256 = ? WHERE token_sha256 = ?');
      for (const t of clear) upd.run(sha256Hex(t), t);
    }
    if (!token.includes('source')) db.exec("ALTER TABLE api_token ADD COLUMN source TEXT NOT NULL DEFAULT ''");
    if (!token.includes('hint')) db.exec("ALTER TABLE api_token ADD COLUMN hint TEXT NOT NULL DEFAULT ''");
    db.exec(`
      CREATE INDEX IF NOT EXISTS api_token_user ON api_token(user_id, source);
      CREATE UNIQUE INDEX IF NOT EXISTS user_email ON user(email COLLATE NOCASE) WHERE email != '';
    `);
  },
  // 10: which process is parsing a document (pid, host, heartbeat): a second process opening the
  // same file re-queues only documents whose parser is gone, not those another live process holds.
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS parse_owner (
      document_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, heartbeat INTEGER NOT NULL
    ) WITHOUT ROWID;
  `),
  // 11: agents (RAGFlow's user_canvas; `tenant_id` is the owner, RAGFlow's user_id), their saved
  // versions (user_canvas_version) and their sessions (api_4_conversation). A session keeps its
  // own canvas state (`dsl`) and its messages one row each, as chat sessions do, numbered per
  // session (`seq`); an answer's reference is stored on its row. Titles compare case-insensitively
  // (RAGFlow's MySQL collation).
  (db) => db.exec(`
    CREATE TABLE IF NOT EXISTS agent (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL REFERENCES tenant(id),
      title TEXT NOT NULL COLLATE NOCASE,
      avatar TEXT NOT NULL DEFAULT '',
      description TEXT,
      permission TEXT NOT NULL DEFAULT 'me',
      release INTEGER NOT NULL DEFAULT 0,
      canvas_type TEXT NOT NULL DEFAULT '',
      canvas_category TEXT NOT NULL DEFAULT 'agent_canvas',
      tags TEXT NOT NULL DEFAULT '',
      dsl TEXT NOT NULL DEFAULT '{}',
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS agent_tenant ON agent(tenant_id, canvas_category, title);
    CREATE INDEX IF NOT EXISTS agent_team ON agent(permission, tenant_id);
    CREATE TABLE IF NOT EXISTS agent_version (
      id TEXT PRIMARY KEY,
      agent_id TEXT NOT NULL REFERENCES agent(id) ON DELETE CASCADE,
      title TEXT,
      description TEXT,
      release INTEGER NOT NULL DEFAULT 0,
      dsl TEXT NOT NULL DEFAULT '{}',
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS agent_version_agent ON agent_version(agent_id, create_time);
    CREATE TABLE IF NOT EXISTS agent_session (
      id TEXT PRIMARY KEY,
      agent_id TEXT NOT NULL REFERENCES agent(id) ON DELETE CASCADE,
      name TEXT NOT NULL DEFAULT '',
      user_id TEXT NOT NULL DEFAULT '',
      exp_user_id TEXT,
      source TEXT NOT NULL DEFAULT 'agent',
      dsl TEXT NOT NULL DEFAULT '{}',
      version_title TEXT,
      tokens INTEGER NOT NULL DEFAULT 0,
      duration REAL NOT NULL DEFAULT 0,
      round INTEGER NOT NULL DEFAULT 0,
      thumb_up INTEGER NOT NULL DEFAULT 0,
      errors TEXT,
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS agent_session_agent ON agent_session(agent_id, update_time);
    CREATE INDEX IF NOT EXISTS agent_session_user ON agent_session(agent_id, user_id);
    CREATE TABLE IF NOT EXISTS agent_message (
      session_id TEXT NOT NULL REFERENCES agent_session(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      extra TEXT NOT NULL DEFAULT '{}',
      reference TEXT,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
  `),
  // 12: a document's name within its dataset, as uploads compare it (case-insensitively): the
  // duplicate-name check of each uploaded file is one index probe, not a scan of the dataset.
  (db) => db.exec(`
    CREATE INDEX IF NOT EXISTS document_dataset_name ON document(dataset_id, name COLLATE NOCASE);
  `),
  // 13: languages (analyzer version 3). `chunk.lang` is the language a chunk's full-text row is
  // analysed as (NULL: analyzer version 2, rows written before); `dataset.fts_language` the
  // analysis its chunks' rows were last re-indexed to (languages.ts `languageSetting` of its
  // `language`; NULL: version 2). Where it differs from the setting, core/reindex.ts re-indexes
  // the dataset's rows in the background, searchable throughout; this step only adds the columns.
  (db) => {
    const cols = (t: string) => (db.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name);
    if (!cols('chunk').includes('lang')) db.exec('ALTER TABLE chunk ADD COLUMN lang TEXT');
    // New datasets are English (the `language` default) and their chunks are written as such:
    // nothing to re-index. Those that exist now have rows of version 2 (NULL: re-index them).
    if (!cols('dataset').includes('fts_language')) db.exec("ALTER TABLE dataset ADD COLUMN fts_language TEXT DEFAULT 'en'; UPDATE dataset SET fts_language = NULL");
    db.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('analyzer_version', ?)").run(String(ANALYZER_VERSION));
  },
  // 14: whether a chunk's full-text row carries its document's name as title terms. RAGFlow gives
  // them to parsed chunks only (a rename gives them to every chunk); a chunk added through the API
  // has none. Every existing chunk keeps the ones it was indexed with.
  (db) => db.exec(`
    ALTER TABLE chunk ADD COLUMN titled INTEGER NOT NULL DEFAULT 1;
  `),
  // 15: the rest of RAGFlow's REST interface (src/api/routes.ts). `parse_log` is one row per parse
  // of a document (RAGFlow's pipeline_operation_log, and its id is the parse's task id): written
  // when the parse is queued, finished from the document's row when it ends. `search` holds search
  // apps (RAGFlow's search; deleted = status '0'). `chunk_image` keeps the image a chunk was given
  // (`image_base64`), served as /documents/images/{dataset_id}-{chunk_id}.
  (db) => db.exec(`
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
      progress REAL NOT NULL DEFAULT 0,
      progress_msg TEXT NOT NULL DEFAULT '',
      process_begin_at INTEGER,
      process_duration REAL NOT NULL DEFAULT 0,
      operation_status TEXT NOT NULL DEFAULT '1',
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS parse_log_dataset ON parse_log(dataset_id, create_time);
    CREATE INDEX IF NOT EXISTS parse_log_open ON parse_log(document_id) WHERE operation_status = '1';
    CREATE TABLE IF NOT EXISTS search (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL REFERENCES tenant(id),
      name TEXT NOT NULL COLLATE NOCASE,
      description TEXT NOT NULL DEFAULT '',
      avatar TEXT NOT NULL DEFAULT '',
      search_config TEXT NOT NULL DEFAULT '{}',
      status TEXT NOT NULL DEFAULT '1',
      created_by TEXT NOT NULL,
      create_time INTEGER NOT NULL, update_time INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS search_tenant ON search(tenant_id, status, create_time);
    CREATE TABLE IF NOT EXISTS chunk_image (
      id TEXT PRIMARY KEY,
      dataset_id TEXT NOT NULL REFERENCES dataset(id) ON DELETE CASCADE,
      data BLOB NOT NULL
    );
  `),
];

/**
 * Rebuilds every chunk's full-text row with analyzer version 2 (title = its document's name), and
 * records that version. Migration 4's step.
 */
export function reindexFullText(db: Database): number {
  db.exec("INSERT INTO chunk_fts (chunk_fts) VALUES ('delete-all')");
  faultPoint('migrate:fts-cleared');
  const ins = db.prepare('INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)');
  const rows = db.prepare(`SELECT c.rowid AS rowid, c.content AS content, c.index_text AS index_text, c.important_keywords AS kw,
    c.questions AS qs, COALESCE(d.name, '') AS title FROM chunk c LEFT JOIN document d ON d.id = c.document_id`).all() as
    { rowid: number; content: string; index_text: string | null; kw: string; qs: string; title: string }[];
  // Analyzer version 2, as released with this step: its rows read as version 2 until migration 13's re-index.
  for (const r of rows) ins.run(BigInt(r.rowid), ...ftsTerms(r.title, r.index_text ?? r.content, jsonList(r.kw), jsonList(r.qs), 'v2'));
  db.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('analyzer_version', '2')").run();
  return rows.length;
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies every migration above the file's version, each in its own transaction. */
export function migrate(db: Database, target = SCHEMA_VERSION): number {
  const from = db.pragma('user_version', { simple: true }) as number;
  if (from > SCHEMA_VERSION) {
    throw new Error(`Database schema version ${from} is newer than this ragloom (${SCHEMA_VERSION}); upgrade ragloom.`);
  }
  for (let v = from; v < target; v++) {
    db.transaction(() => {
      // Another process may have applied this step since the version was read.
      if ((db.pragma('user_version', { simple: true }) as number) > v) return;
      MIGRATIONS[v]!(db);
      faultPoint(`migrate:${v + 1}:applied`);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
    faultPoint(`migrate:${v + 1}:committed`);
  }
  return from;
}

/**
 * Copies a whole store between SQLite and PostgreSQL, either way (`ragloom migrate copy`):
 * accounts and keys, datasets, documents and their bytes, chunks with their vectors (no
 * re-parse), the embedding cache, chats and sessions, memories with their messages and tasks,
 * agents with their versions and sessions. Ids, row ids and insertion order are kept, so the
 * target ranks every search exactly as the source did.
 *
 * - The source is opened read-only and read in one snapshot per table; the target is written a
 *   page at a time, each page one transaction that skips rows already there (by primary key):
 *   an interrupted copy is run again and writes only what is missing.
 * - `verifyCopy` compares every table's row count and a digest of its keys on both sides.
 * - Full-text rows and vector tables are the target's own: SQLite's FTS5 rows and vec0 vectors
 *   are written from the copied columns; PostgreSQL keeps vectors in `chunk.vector` and computes
 *   full-text rows in each process.
 */
import { createHash } from 'node:crypto';
import type { Db } from './db.js';
import { cachedStatement } from './db.js';
import { vecTable, toBlob, fromBlob } from './vectors.js';
import { getBlob as getSqliteBlob } from './blobs.js';
import { storedAnalysis } from './chunks.js';
import { ftsTerms } from '../text/index.js';
import { SqliteStore } from './sqlite/store.js';
import { PgStore } from './postgres/store.js';
import type { PgDb } from './postgres/db.js';
import type { PgConnectionConfig } from './postgres/driver.js';
import { getBlob } from './postgres/blobs.js';
import { putBytes } from './postgres/documents.js';

/** The tables copied, parents first, with the key that orders and identifies their rows. */
const TABLES: ReadonlyArray<{ name: string; key: readonly string[]; sqliteOrder: string; pgOrder: string }> = [
  { name: 'tenant', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'id' },
  { name: 'user', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'id' },
  { name: 'user_tenant', key: ['user_id', 'tenant_id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'api_token', key: ['token_sha256'], sqliteOrder: 'rowid', pgOrder: 'token_sha256' },
  { name: 'dataset', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'blob', key: ['sha256'], sqliteOrder: 'rowid', pgOrder: 'sha256' },
  { name: 'document', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'chunk', key: ['rowid'], sqliteOrder: 'rowid', pgOrder: 'rowid' },
  { name: 'embedding_cache', key: ['model', 'sha256'], sqliteOrder: 'model, sha256', pgOrder: 'model, sha256' },
  { name: 'chat', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'chat_session', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'chat_message', key: ['seq'], sqliteOrder: 'seq', pgOrder: 'seq' },
  { name: 'memory', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'memory_message', key: ['id'], sqliteOrder: 'id', pgOrder: 'id' },
  { name: 'memory_task', key: ['id'], sqliteOrder: 'id', pgOrder: 'id' },
  { name: 'agent', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'agent_version', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'agent_session', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'agent_message', key: ['session_id', 'seq'], sqliteOrder: 'rowid', pgOrder: 'session_id, seq' },
  { name: 'parse_log', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'search', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'ord' },
  { name: 'chunk_image', key: ['id'], sqliteOrder: 'rowid', pgOrder: 'id' },
];

/** PostgreSQL identity columns set past the copied ids (new rows must not reuse them). */
const SEQUENCES: ReadonlyArray<[table: string, column: string]> = [['chunk', 'rowid'], ['memory_message', 'id'], ['chat_message', 'seq'], ['memory_task', 'id']];

/** Rows per page (one target transaction each). */
const PAGE = 2_000;

export type StoreTarget = { path: string } | { postgres: string | PgConnectionConfig };

export interface CopyProgress {
  table: string;
  read: number;
  written: number;
}

export interface CopyResult {
  tables: Array<{ table: string; read: number; written: number }>;
  seconds: number;
}

export interface VerifyResult {
  ok: boolean;
  tables: Array<{ table: string; source: number; target: number; same: boolean }>;
}

const q = (c: string): string => (c === 'user' || c === 'top' ? `"${c}"` : c);

/** The columns SQLite's schema gives a table (the authority: PostgreSQL has each of them, and more). */
function sqliteColumns(db: Db, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${JSON.stringify(table)})`).all() as Array<{ name: string }>).map((c) => c.name).filter((c) => !(table === 'blob' && c === 'data'));
}

type Row = Record<string, unknown>;

/** Reads the source a page at a time, each table in one snapshot. */
interface Source {
  pages(table: (typeof TABLES)[number], cols: string[], each: (rows: Row[]) => Promise<void>): Promise<void>;
  /** Bytes of blobs and vectors of chunks, for a page. */
  blobBytes(sha: string): Promise<Uint8Array | undefined>;
  vectors(rows: Row[]): Promise<Map<number, Float32Array>>;
  keys(table: (typeof TABLES)[number]): Promise<string[]>;
  close(): Promise<void>;
}

interface Target {
  write(table: (typeof TABLES)[number], cols: string[], rows: Row[], src: Source): Promise<number>;
  finish(): Promise<void>;
  keys(table: (typeof TABLES)[number]): Promise<string[]>;
  close(): Promise<void>;
}

function sqliteSource(s: SqliteStore): Source {
  const db = s.db;
  return {
    async pages(t, cols, each) {
      // One read transaction: the pages of a table come from one snapshot.
      // A table WITHOUT ROWID is read by its key (its rows have no insertion order).
      const noRowid = /WITHOUT\s+ROWID/i.test((db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(t.name) as string | undefined) ?? '');
      const order = noRowid && t.sqliteOrder === 'rowid' ? t.key.map(q).join(', ') : t.sqliteOrder;
      const rows = db.prepare(`SELECT ${cols.map(q).join(', ')} FROM ${q(t.name)} ORDER BY ${order}`).all() as Row[];
      for (let i = 0; i < rows.length; i += PAGE) await each(rows.slice(i, i + PAGE));
    },
    blobBytes: async (sha) => getSqliteBlob(db, sha),
    async vectors(rows) {
      const out = new Map<number, Float32Array>();
      const tables = new Map((db.prepare('SELECT dim, table_name FROM vec_index').all() as Array<{ dim: number; table_name: string }>).map((r) => [r.dim, r.table_name]));
      for (const r of rows) {
        const t = tables.get(r.vec_dim as number);
        if (!t) continue;
        const b = cachedStatement(db, `SELECT embedding FROM ${t} WHERE rowid = ?`).pluck().get(BigInt(r.rowid as number)) as Buffer | undefined;
        if (b) out.set(r.rowid as number, fromBlob(b));
      }
      return out;
    },
    async keys(t) {
      return (db.prepare(`SELECT ${t.key.map(q).join(` || '\u0001' || `)} AS k FROM ${q(t.name)}`).pluck().all() as unknown[]).map(String);
    },
    close: () => s.close(),
  };
}

function pgSource(s: PgStore): Source {
  const db: PgDb = s.db;
  return {
    async pages(t, cols, each) {
      await db.tx(async (tx) => {
        for (let off = 0; ; off += PAGE) {
          const rows = await tx.rows<Row>(`SELECT ${cols.map(q).join(', ')} FROM ${q(t.name)} ORDER BY ${t.pgOrder} LIMIT ${PAGE} OFFSET ${off}`);
          if (rows.length) await each(rows);
          if (rows.length < PAGE) break;
        }
      }, { isolation: 'repeatable read', idempotent: true });
    },
    blobBytes: (sha) => getBlob(db, sha),
    async vectors(rows) {
      const got = await db.rows<{ rowid: number; vector: Buffer | null }>('SELECT rowid, vector FROM chunk WHERE rowid = ANY($1)', [rows.map((r) => r.rowid)]);
      const out = new Map<number, Float32Array>();
      for (const r of got) if (r.vector) out.set(r.rowid, fromBlob(r.vector));
      return out;
    },
    async keys(t) {
      return (await db.rows<{ k: string }>(`SELECT (${t.key.map((k) => `${q(k)}::text`).join(` || E'\\x01' || `)}) AS k FROM ${q(t.name)}`)).map((r) => r.k);
    },
    close: () => s.close(),
  };
}

const hex = (b: Uint8Array | Buffer | null | undefined): string | null => (b ? `\\x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')}` : null);

function pgTarget(s: PgStore): Target {
  const db = s.db;
  return {
    async write(t, cols, rows, src) {
      if (t.name === 'blob') {
        // One look-up for the page: a blob the target holds already (a resumed copy) is neither
        // read from the source nor written; putBytes publishes the others (and takes a blob
        // published meanwhile by another writer as it is).
        const have = new Set((await db.rows<{ sha256: string }>('SELECT sha256 FROM blob WHERE sha256 = ANY($1)', [rows.map((r) => r.sha256 as string)])).map((r) => r.sha256));
        let n = 0;
        for (const r of rows) {
          if (have.has(r.sha256 as string)) continue;
          const bytes = await src.blobBytes(r.sha256 as string);
          if (!bytes) continue;
          await db.tx((tx) => putBytes(tx, bytes), { idempotent: true });
          n++;
        }
        return n;
      }
      let out = rows;
      let names = cols;
      if (t.name === 'chunk') {
        const v = await src.vectors(rows);
        out = rows.map((r) => ({ ...r, vector: hex(toBlobOrNull(v.get(r.rowid as number))) }));
        names = [...cols, 'vector'];
      } else if (t.name === 'memory_message' || t.name === 'embedding_cache') {
        out = rows.map((r) => ({ ...r, vector: hex(r.vector as Buffer | null) }));
      } else if (t.name === 'chunk_image') {
        out = rows.map((r) => ({ ...r, data: hex(r.data as Buffer) }));
      }
      // Columns by name, typed by the table (json_populate_recordset); rows already there are skipped.
      return db.run(`INSERT INTO ${q(t.name)} (${names.map(q).join(', ')}) SELECT ${names.map(q).join(', ')} FROM json_populate_recordset(NULL::${q(t.name)}, $1)
        ON CONFLICT DO NOTHING`, [JSON.stringify(out)], { idempotent: true });
    },
    async finish() {
      for (const [table, col] of SEQUENCES) {
        await db.run(`SELECT setval(pg_get_serial_sequence('${table}', '${col}'), GREATEST((SELECT max(${col}) FROM ${table}), 1))`, [], { idempotent: true });
      }
    },
    keys: (t) => pgSource(s).keys(t),
    close: () => s.close(),
  };
}

const toBlobOrNull = (v: Float32Array | undefined): Buffer | null => (v && v.length ? toBlob(v) : null);

function sqliteTarget(s: SqliteStore): Target {
  const db = s.db;
  return {
    async write(t, cols, rows, src) {
      if (t.name === 'blob') {
        let n = 0;
        for (const r of rows) {
          if (cachedStatement(db, 'SELECT 1 FROM blob WHERE sha256 = ?').get(r.sha256)) continue;
          const bytes = await src.blobBytes(r.sha256 as string);
          if (!bytes) continue;
          n += cachedStatement(db, 'INSERT OR IGNORE INTO blob (sha256, size, data) VALUES (?, ?, ?)').run(r.sha256, r.size, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).changes;
        }
        return n;
      }
      const vectors = t.name === 'chunk' ? await src.vectors(rows) : undefined;
      const ins = db.prepare(`INSERT OR IGNORE INTO ${q(t.name)} (${cols.map(q).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
      let n = 0;
      db.transaction(() => {
        for (const r of rows) {
          const changed = ins.run(...cols.map((c) => sqliteValue(r[c]))).changes;
          n += changed;
          if (!changed) continue;
          if (t.name === 'chunk') indexChunk(db, r, vectors!.get(r.rowid as number));
          else if (t.name === 'memory_message') {
            cachedStatement(db, 'INSERT INTO memory_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)')
              .run(BigInt(r.id as number), ...ftsTerms('', r.content as string, [], [], 'v2'));
          }
        }
      }).immediate();
      return n;
    },
    async finish() {},
    keys: (t) => sqliteSource(s).keys(t),
    close: () => s.close(),
  };
}

const sqliteValue = (v: unknown): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** A copied chunk's full-text row and vector, as SQLite's store writes them (store/chunks.ts). */
function indexChunk(db: Db, r: Row, vector: Float32Array | undefined): void {
  const title = r.titled ? ((cachedStatement(db, 'SELECT name FROM document WHERE id = ?').pluck().get(r.document_id) as string | undefined) ?? '') : '';
  const terms = ftsTerms(title, (r.index_text as string | null) ?? (r.content as string), JSON.parse(r.important_keywords as string) as string[],
    JSON.parse(r.questions as string) as string[], storedAnalysis(r.lang as string | null));
  cachedStatement(db, 'INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)').run(BigInt(r.rowid as number), ...terms);
  if (vector && vector.length) {
    cachedStatement(db, `INSERT INTO ${vecTable(db, vector.length)} (rowid, dataset_id, embedding) VALUES (?, ?, ?)`).run(BigInt(r.rowid as number), r.dataset_id, toBlob(vector));
  }
}

async function openSource(from: StoreTarget): Promise<Source> {
  return 'postgres' in from ? pgSource(await PgStore.open(from.postgres, { readonly: true })) : sqliteSource(new SqliteStore(from.path, { readonly: true }));
}

async function openTarget(to: StoreTarget): Promise<Target> {
  return 'postgres' in to ? pgTarget(await PgStore.open(to.postgres)) : sqliteTarget(new SqliteStore(to.path));
}

/** The SQLite schema's columns of every table (an in-memory store of this version). */
function schemaColumns(): Map<string, string[]> {
  const mem = new SqliteStore(':memory:');
  try {
    return new Map(TABLES.map((t) => [t.name, sqliteColumns(mem.db, t.name)]));
  } finally {
    void mem.close();
  }
}

/** Copies every table of `from` into `to` (see the module comment); resumable. */
export async function copyStore(from: StoreTarget, to: StoreTarget, onProgress?: (p: CopyProgress) => void): Promise<CopyResult> {
  const started = Date.now();
  const cols = schemaColumns();
  const src = await openSource(from);
  let dst: Target | undefined;
  try {
    dst = await openTarget(to);
    const tables: CopyResult['tables'] = [];
    for (const t of TABLES) {
      const c = cols.get(t.name)!;
      const done = { table: t.name, read: 0, written: 0 };
      await src.pages(t, c, async (rows) => {
        done.written += await dst!.write(t, c, rows, src);
        done.read += rows.length;
        onProgress?.({ ...done });
      });
      tables.push(done);
    }
    await dst.finish();
    return { tables, seconds: (Date.now() - started) / 1000 };
  } finally {
    await dst?.close();
    await src.close();
  }
}

/** Compares every copied table's row count and a digest of its keys in `from` and `to`. */
export async function verifyCopy(from: StoreTarget, to: StoreTarget): Promise<VerifyResult> {
  const src = await openSource(from);
  let dst: Target | undefined;
  try {
    dst = await openTarget(to);
    const digest = (keys: string[]) => createHash('sha256').update(keys.sort().join('\n')).digest('hex');
    const tables: VerifyResult['tables'] = [];
    for (const t of TABLES) {
      const [a, b] = [await src.keys(t), await dst.keys(t)];
      tables.push({ table: t.name, source: a.length, target: b.length, same: a.length === b.length && digest(a) === digest(b) });
    }
    return { ok: tables.every((t) => t.same), tables };
  } finally {
    await dst?.close();
    await src.close();
  }
}

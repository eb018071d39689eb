/**
 * The full-text engine of a process on PostgreSQL: FTS5 itself, in a private in-memory SQLite
 * database that follows the PostgreSQL change feed. PostgreSQL holds the rows; each process
 * keeps the full-text rows of the chunks and memory messages it searches, exactly as the SQLite
 * store's FTS5 tables hold them (same tokenizer, same terms, same bm25 and statistics), so a
 * ranked page is the same to the last digit on both stores. src/store/sqlite/fulltext.ts reads
 * this database as it reads a store file.
 *
 * - A table is loaded on first use, in one snapshot (repeatable read) taken at a feed position
 *   (feed.ts feedStart), then kept up to date by reading the feed from there: the rows it names
 *   are read again (gone: removed). `sync(table)` catches up; search calls it before it reads
 *   (SearchReader.syncFullText), and the store calls it after its own writes.
 * - Memory: per chunk its FTS5 index entries and its document (searchDocument's filter), ~300
 *   bytes a chunk of ~30 words; no texts (a search reads those from PostgreSQL while its term index
 *   is not built: FullTextEngine.chunkTexts). Memory messages keep theirs (memory search reads
 *   them). docs/scaling.md.
 */
import Database from 'better-sqlite3';
import type { FtsTable, FullTextEngine } from '../interface/index.js';
import { SqliteFullText } from '../sqlite/fulltext.js';
import { cachedStatement as stmt } from '../db.js';
import { ftsTerms } from '../../text/index.js';
import type { PgDb } from './db.js';
import { feedStart, type FeedPosition } from './feed.js';
import { chunkTerms } from './chunk-store.js';
import type { FeedGate } from './search.js';
import { LOAD_PAGES, ORDERED_PAGES } from './sql.js';

/** The FTS5 table definition of the SQLite store (src/store/migrations.ts steps 2 and 8). */
export const FTS5_TABLE = (name: string) => `CREATE VIRTUAL TABLE ${name} USING fts5(
  title, content, keywords, questions,
  tokenize = 'unicode61 remove_diacritics 2', content = '', contentless_delete = 1
)`;

// The chunks' rows hold what FTS5 queries join on (their document) and no texts: a search reads
// those from PostgreSQL (FullTextEngine.chunkTexts). They were two thirds of the copy's bytes.
const SCHEMA = `
  CREATE TABLE chunk (rowid INTEGER PRIMARY KEY, document_id TEXT NOT NULL);
  CREATE INDEX chunk_document ON chunk (document_id);
  ${FTS5_TABLE('chunk_fts')};
  INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('hashsize', ${16 * 1024 * 1024});
  INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('automerge', 8);
  CREATE TABLE vec_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL);
  CREATE TABLE memory_message (id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, agent_id TEXT NOT NULL, session_id TEXT NOT NULL,
    user_id TEXT NOT NULL, content TEXT NOT NULL, status INTEGER NOT NULL, forget_at INTEGER);
  ${FTS5_TABLE('memory_fts')};
  CREATE TABLE memory_vec_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL);
`;


interface ChunkText {
  rowid: number; document_id: string; content: string; index_text: string | null; important_keywords: string; questions: string;
  titled: number; lang: string | null; name: string | null;
  /** The stored full-text row as a JSON array (null: analyse the row). */
  fts: string | null;
}
interface MessageText { id: number; memory_id: string; agent_id: string; session_id: string; user_id: string; content: string; status: number; forget_at: number | null }

// The stored full-text row as JSON text: node-postgres parses a text[] in JavaScript, character by
// character (~10× slower than JSON.parse, and most of a load's time at 100k chunks).
const CHUNK_SQL = `SELECT c.rowid, c.document_id, c.content, c.index_text, c.important_keywords, c.questions, c.titled, c.lang, d.name,
  array_to_json(c.fts)::text AS fts FROM chunk c LEFT JOIN document d ON d.id = c.document_id`;
const MESSAGE_SQL = 'SELECT id, memory_id, agent_id, session_id, user_id, content, status, forget_at FROM memory_message';

const TOPIC: Record<FtsTable, string> = { chunk_fts: 'chunk', memory_fts: 'memory' };

/** Per-document full-text search of chunks (ChunkStore.search). */
export interface ChunkSearcher {
  /** Rowids of the document's chunks matching any of the terms, best first (bm25 weighted 1, 2, 30, 20, as SQLite's). */
  searchDocument(documentId: string, terms: readonly string[]): Promise<number[]>;
}

export class PgFullText implements FullTextEngine, ChunkSearcher {
  private readonly mem = new Database(':memory:');
  private readonly inner: SqliteFullText;
  private readonly at = new Map<FtsTable, FeedPosition>();
  private readonly running = new Map<FtsTable, Promise<void>>();
  private readonly again = new Set<FtsTable>();
  private closed = false;
  private wanted = false;

  constructor(private readonly db: PgDb, private readonly gate: FeedGate) {
    this.mem.exec(SCHEMA);
    this.inner = new SqliteFullText(this.mem);
  }

  /** Bytes of the in-memory database (its pages: text columns, FTS5 index; 0 once closed). */
  get bytes(): number {
    if (this.closed) return 0;
    return (this.mem.pragma('page_count', { simple: true }) as number) * (this.mem.pragma('page_size', { simple: true }) as number);
  }

  /** Whether the table is loaded in this process. */
  loaded(table: FtsTable): boolean {
    return this.at.has(table);
  }

  /**
   * Loads the table (first use) or applies what changed since; every write committed before the
   * call is seen when it resolves. Concurrent calls share one read (which then goes round again).
   */
  sync(table: FtsTable): Promise<void> {
    const cur = this.running.get(table);
    if (cur) {
      this.again.add(table);
      return cur;
    }
    const run = (async () => {
      try {
        do {
          this.again.delete(table);
          if (this.closed) return;
          if (!this.at.has(table)) await this.load(table);
          else await this.catchUp(table);
        } while (this.again.has(table));
      } finally {
        this.running.delete(table);
      }
    })();
    this.running.set(table, run);
    return run;
  }

  /** This process reads the engine (search): its own writes load and refresh it from now on. */
  want(): void {
    this.wanted = true;
  }

  /** Catches up after this process's own writes: the tables loaded, or both once the engine is wanted. */
  async refresh(): Promise<void> {
    const tables: FtsTable[] = this.wanted ? ['chunk_fts', 'memory_fts'] : [...this.at.keys()];
    for (const t of tables) await this.sync(t);
  }

  private async load(table: FtsTable): Promise<void> {
    await this.db.tx(async (t) => {
      const head = await feedStart(t);
      await t.run(ORDERED_PAGES);
      this.clear(table);
      const page = (after: number): Promise<Array<ChunkText | MessageText>> => table === 'chunk_fts'
        ? t.rows<ChunkText>(`${CHUNK_SQL} WHERE c.rowid > $1 ORDER BY c.rowid LIMIT ${LOAD_PAGES.text}`, [after])
        : t.rows<MessageText>(`${MESSAGE_SQL} WHERE id > $1 ORDER BY id LIMIT ${LOAD_PAGES.text}`, [after]);
      let next = page(0);
      for (;;) {
        const rows = await next;
        if (!rows.length) break;
        const last = rows[rows.length - 1]!;
        // The next page is asked for before this one is indexed: the server reads it meanwhile.
        if (rows.length === LOAD_PAGES.text) {
          next = page(table === 'chunk_fts' ? (last as ChunkText).rowid : (last as MessageText).id);
          next.catch(() => undefined); // awaited below; a throw in between must not leave it unhandled
        }
        // A load logs nothing per row: the clear above changed the statistics' key already.
        this.mem.transaction(() => {
          for (const r of rows) table === 'chunk_fts' ? this.putChunk(r as ChunkText, true) : this.putMessage(r as MessageText, true);
        })();
        if (rows.length < LOAD_PAGES.text) break;
      }
      this.at.set(table, head);
    }, { isolation: 'repeatable read', idempotent: true });
  }

  private clear(table: FtsTable): void {
    this.mem.transaction(() => {
      if (table === 'chunk_fts') {
        this.mem.exec("DELETE FROM chunk; INSERT INTO chunk_fts (chunk_fts) VALUES ('delete-all'); INSERT INTO vec_log (rid) VALUES (0)");
      } else {
        this.mem.exec("DELETE FROM memory_message; INSERT INTO memory_fts (memory_fts) VALUES ('delete-all'); INSERT INTO memory_vec_log (rid) VALUES (0)");
      }
    })();
  }

  private async catchUp(table: FtsTable): Promise<void> {
    let pos = this.at.get(table)!;
    if (await this.gate.quiet(TOPIC[table]!, pos)) return;
    const mark = this.gate.mark();
    const dirty = new Set<number>();
    let heldBack = false;
    for (;;) {
      const page = await this.gate.readPage(TOPIC[table]!, pos);
      if (page.reload) {
        this.at.delete(table);
        await this.load(table);
        return;
      }
      for (const c of page.changes) dirty.add(c.rid);
      pos = page.next;
      heldBack ||= page.heldBack;
      if (!page.more) break;
    }
    this.gate.settled(TOPIC[table]!, mark, pos, heldBack);
    if (dirty.size) {
      const ids = [...dirty];
      const found = new Map<number, ChunkText | MessageText>();
      for (let i = 0; i < ids.length; i += LOAD_PAGES.text) {
        const part = ids.slice(i, i + LOAD_PAGES.text);
        if (table === 'chunk_fts') for (const r of await this.db.rows<ChunkText>(`${CHUNK_SQL} WHERE c.rowid = ANY($1)`, [part])) found.set(r.rowid, r);
        else for (const r of await this.db.rows<MessageText>(`${MESSAGE_SQL} WHERE id = ANY($1)`, [part])) found.set(r.id, r);
      }
      this.mem.transaction(() => {
        for (const id of ids) {
          this.drop(table, id);
          const r = found.get(id);
          if (r) table === 'chunk_fts' ? this.putChunk(r as ChunkText) : this.putMessage(r as MessageText);
        }
      })();
    }
    this.at.set(table, pos);
  }

  private drop(table: FtsTable, id: number): void {
    const rows = table === 'chunk_fts' ? 'chunk' : 'memory_message';
    const key = table === 'chunk_fts' ? 'rowid' : 'id';
    if (!stmt(this.mem, `SELECT 1 FROM ${rows} WHERE ${key} = ?`).get(id)) return;
    stmt(this.mem, `DELETE FROM ${table} WHERE rowid = ?`).run(BigInt(id));
    stmt(this.mem, `DELETE FROM ${rows} WHERE ${key} = ?`).run(id);
    stmt(this.mem, `INSERT INTO ${table === 'chunk_fts' ? 'vec_log' : 'memory_vec_log'} (rid) VALUES (?)`).run(id);
  }

  /** `loading`: a load (no change logged per row). */
  private putChunk(r: ChunkText, loading = false): void {
    const title = r.titled ? r.name ?? '' : '';
    stmt(this.mem, 'INSERT INTO chunk (rowid, document_id) VALUES (?, ?)').run(r.rowid, r.document_id);
    const stored = r.fts === null ? null : (JSON.parse(r.fts) as string[]);
    const terms = stored && stored.length === 4 ? stored : chunkTerms({ ...r, title });
    stmt(this.mem, 'INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)').run(BigInt(r.rowid), terms[0], terms[1], terms[2], terms[3]);
    if (!loading) stmt(this.mem, 'INSERT INTO vec_log (rid) VALUES (?)').run(r.rowid);
  }

  private putMessage(r: MessageText, loading = false): void {
    stmt(this.mem, 'INSERT INTO memory_message (id, memory_id, agent_id, session_id, user_id, content, status, forget_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.id, r.memory_id, r.agent_id, r.session_id, r.user_id, r.content, r.status, r.forget_at);
    stmt(this.mem, 'INSERT INTO memory_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)').run(BigInt(r.id), ...ftsTerms('', r.content, [], [], 'v2'));
    if (!loading) stmt(this.mem, 'INSERT INTO memory_vec_log (rid) VALUES (?)').run(r.id);
  }

  async searchDocument(documentId: string, terms: readonly string[]): Promise<number[]> {
    await this.sync('chunk_fts');
    if (!terms.length) return [];
    // Every field RAGFlow's full-text query reads, the title too (as SQLite's store).
    const match = `{title content keywords questions} : (${terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ')})`;
    return stmt(this.mem, `SELECT f.rowid FROM chunk_fts f JOIN chunk c ON c.rowid = f.rowid WHERE chunk_fts MATCH ? AND c.document_id = ?
      ORDER BY bm25(chunk_fts, 1, 2, 30, 20)`).pluck().all(match, documentId) as number[];
  }

  // ---- FullTextEngine: FTS5 as on a SQLite store (read after `sync`)

  statsKey(table: FtsTable): string {
    return this.inner.statsKey(table);
  }

  totals(table: FtsTable): number[] {
    return this.inner.totals(table);
  }

  count(table: FtsTable, match: string, limit?: number): number {
    return this.inner.count(table, match, limit);
  }

  all(table: FtsTable, match: string): Array<[number, number]> {
    return this.inner.all(table, match);
  }

  top(table: FtsTable, match: string, limit: number, offset: number): Array<[number, number]> {
    return this.inner.top(table, match, limit, offset);
  }

  scores(table: FtsTable, match: string, rowids: readonly number[]): Array<[number, number]> {
    return this.inner.scores(table, match, rowids);
  }

  readonly chunkTexts = false;

  texts(table: FtsTable, rowids: readonly number[]): Array<[number, string, string | null, string, string, string, string | null]> {
    if (table === 'chunk_fts') throw new Error("PostgreSQL's FTS5 copy holds no chunk texts: read them from the store (SearchReader.termRows, fulltext.ts storedRowTerms)");
    return this.inner.texts(table, rowids);
  }

  messageFilter(id: number): { memory_id: string; agent_id: string; session_id: string; user_id: string } | undefined {
    return this.inner.messageFilter(id);
  }

  close(): void {
    this.closed = true;
    this.mem.close();
  }
}

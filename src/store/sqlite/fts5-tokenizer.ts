/**
 * FTS5's own tokenizer and SQLite's own ln(), in a private in-memory database: the term index
 * (src/search/term-index.ts) splits the terms FTS5 might read differently (anything but plain
 * ASCII words) and computes FTS5's idf through them, so its scores equal FTS5's bit for bit
 * (V8's Math.log may differ in the last bit).
 */
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { TextTokenizer } from '../interface/index.js';

export class Fts5Tokenizer implements TextTokenizer {
  private readonly db: Database.Database;
  private readonly ins: Statement;
  private readonly sel: Statement;
  private readonly clear: Statement;
  private readonly lnSql: Statement;

  /** `tableSql`: the CREATE statement of the table whose tokenizer is wanted (its `tokenize = …` option). */
  constructor(tableSql: string) {
    const m = /tokenize\s*=\s*('(?:[^']|'')*'|"(?:[^"]|"")*")/i.exec(tableSql);
    const mem = new Database(':memory:');
    mem.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = ${m ? m[1] : "'unicode61'"});
      CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);`);
    this.db = mem;
    this.ins = mem.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
    this.sel = mem.prepare('SELECT doc, offset, term FROM v');
    this.clear = mem.prepare('DELETE FROM t');
    this.lnSql = mem.prepare('SELECT ln(?)').pluck();
  }

  tokenise(texts: readonly string[]): string[][] {
    const out = texts.map((): Array<[number, string]> => []);
    this.db.transaction(() => {
      texts.forEach((x, i) => this.ins.run(i, x));
      for (const [doc, off, term] of this.sel.raw().iterate() as IterableIterator<[number, number, string]>) out[doc]!.push([off, term]);
      this.clear.run();
    })();
    return out.map((toks) => toks.sort((a, b) => a[0] - b[0]).map((x) => x[1]));
  }

  ln(x: number): number | null {
    return this.lnSql.get(x) as number | null;
  }
}

/**
 * Name uniqueness on a real PostgreSQL under concurrent creates from separate pools: refusing
 * creates let exactly one through (the others get the reference's error), renaming creates end
 * with distinct names in RAGFlow's order, and the folding matches SQLite's NOCASE.
 */
import { describe, expect, it } from 'vitest';
import { server, openDb, freshUrl, seedBase } from './fixture.js';
import { insertUnderFreeName, nameClash, foldAscii, type PgDb, type PgTx } from '../../../src/store/postgres/index.js';
import { apiError } from '../../../src/api/errors.js';

async function pools(n: number): Promise<PgDb[]> {
  const url = await freshUrl('names');
  const first = await openDb(url);
  await seedBase(first);
  return [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => openDb(url))))];
}

const insertChat = (t: PgTx, id: string, name: string) =>
  t.run("INSERT INTO chat (id, tenant_id, name, created_by, create_time, update_time) VALUES ($1, 't1', $2, 'u1', 1, 1)", [id, name]);

async function createDataset(db: PgDb, id: string, wanted: string): Promise<string> {
  return db.tx(async (t) => {
    const taken = new Set((await t.rows<{ n: string }>("SELECT ragloom_nocase(name) AS n FROM dataset WHERE tenant_id = 't1' AND status = '1'")).map((r) => r.n));
    return insertUnderFreeName(t, 'dataset_name_unique', wanted, taken, (name) =>
      t.run(`INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ($1, 't1', $2, 'm', 'u1', 1, 1)`, [id, name]).then(() => undefined));
  });
}

describe.skipIf(!server)('PostgreSQL name uniqueness', () => {
  it('10 pools creating the chat "Helper" at once: one succeeds, nine get the reference error, nothing partial', async () => {
    const dbs = await pools(10);
    const results = await Promise.all(dbs.map((db, i) => db.tx(async (t) => {
      await insertChat(t, `c${i}`, i % 2 ? 'Helper' : 'HELPER');
      await t.run("INSERT INTO chat_session (id, chat_id, name, create_time, update_time) VALUES ($1, $1, 'first', 1, 1)", [`c${i}`]);
      return 'created';
    }).catch((e: unknown) => {
      if (nameClash(e) === 'chat_name_unique') return 'Duplicated chat name in creating chat.';
      throw e;
    })));
    expect(results.filter((r) => r === 'created')).toHaveLength(1);
    expect(results.filter((r) => r === 'Duplicated chat name in creating chat.')).toHaveLength(9);
    expect(await dbs[0]!.one('SELECT (SELECT count(*)::int FROM chat) AS chats, (SELECT count(*)::int FROM chat_session) AS sessions')).toEqual({ chats: 1, sessions: 1 });
    // A deleted chat (status '0') frees its name, as chatNameTaken reads it.
    await dbs[0]!.run("UPDATE chat SET status = '0'");
    await dbs[1]!.tx((t) => insertChat(t, 'again', 'helper'));
  });

  it('dataset renames: 10 pools creating "notes" at once get notes, notes(1) … notes(9); a rename onto a taken name gets DATASET_NAME_EXISTS', async () => {
    const dbs = await pools(10);
    const names = await Promise.all(dbs.map((db, i) => createDataset(db, `ds${i}`, 'notes')));
    expect([...names].sort()).toEqual(['notes', ...Array.from({ length: 9 }, (_, i) => `notes(${i + 1})`)].sort());
    // Case-insensitively, as SQLite's NOCASE: "NOTES" is taken too, but "Énotes" and "énotes" differ outside ASCII.
    expect(await createDataset(dbs[0]!, 'upper', 'NOTES')).toBe('NOTES(10)');
    expect(await createDataset(dbs[0]!, 'e1', 'Énotes')).toBe('Énotes');
    expect(await createDataset(dbs[0]!, 'e2', 'énotes')).toBe('énotes');
    const e = await dbs[1]!.run("UPDATE dataset SET name = 'Notes(3)' WHERE id = 'upper'").then(() => null, (x: unknown) => x);
    expect(nameClash(e)).toBe('dataset_name_unique');
    expect(apiError('DATASET_NAME_EXISTS', 'Notes(3)').message).toBe("Dataset name 'Notes(3)' already exists");
  });

  it('memories and agents: unique per tenant (agents per category), case-insensitively', async () => {
    const [db] = await pools(1);
    const mem = (id: string, name: string) => db!.run("INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, created_by, create_time, update_time) VALUES ($1, 't1', $2, 'e', 'l', 'u1', 1, 1)", [id, name]);
    await mem('m1', 'Notes');
    expect(nameClash(await mem('m2', 'NOTES').catch((x: unknown) => x))).toBe('memory_name_unique');
    const agent = (id: string, title: string, cat: string) => db!.run("INSERT INTO agent (id, tenant_id, title, canvas_category, create_time, update_time) VALUES ($1, 't1', $2, $3, 1, 1)", [id, title, cat]);
    await agent('a1', 'Bot', 'agent_canvas');
    await agent('a2', 'bot', 'dataflow_canvas'); // another category
    expect(nameClash(await agent('a3', 'BOT', 'agent_canvas').catch((x: unknown) => x))).toBe('agent_title_unique');
    const user = (id: string, email: string) => db!.run('INSERT INTO "user" (id, nickname, email, create_time) VALUES ($1, $1, $2, 1)', [id, email]);
    await user('x1', 'Ann@Example.org');
    await user('x2', '');
    await user('x3', ''); // empty e-mails never clash
    expect(nameClash(await user('x4', 'ann@example.ORG').catch((x: unknown) => x))).toBe('user_email');
  });

  it('documents: exact names per dataset (a rename to "X.TXT" beside "x.txt" is allowed, as RAGFlow allows it); uploads rename before the extension', async () => {
    const dbs = await pools(6);
    await dbs[0]!.run(`INSERT INTO blob_content (create_time) VALUES (1);
      INSERT INTO blob (sha256, size, parts, content_id) SELECT 'b2', 0, 0, max(id) FROM blob_content`);
    const upload = (db: PgDb, id: string, name: string) => db.tx(async (t) => {
      const taken = new Set((await t.rows<{ n: string }>("SELECT name AS n FROM document WHERE dataset_id = 'd1'")).map((r) => foldAscii(r.n)));
      return insertUnderFreeName(t, 'document_name_unique', name, taken, (n) => t.run(`INSERT INTO document (id, dataset_id, name, type, size, blob_sha256,
        location, parser_id, created_by, create_time, update_time) VALUES ($1, 'd1', $2, 'doc', 0, 'b2', $2, 'naive', 'u1', 1, 1)`, [id, n]).then(() => undefined),
      { isFile: true, fold: (s) => s });
    });
    const names = await Promise.all(dbs.map((db, i) => upload(db, `up${i}`, 'a.txt')));
    expect([...names].sort()).toEqual(['a(1).txt', 'a(2).txt', 'a(3).txt', 'a(4).txt', 'a(5).txt', 'a.txt']);
    expect(await dbs[0]!.run("UPDATE document SET name = 'A.TXT' WHERE name = 'a(1).txt'")).toBe(1); // beside a.txt
    const other = (await dbs[0]!.one<{ name: string }>("SELECT name FROM document WHERE id = 'up1'"))!.name;
    expect(nameClash(await dbs[0]!.run("UPDATE document SET name = $1 WHERE id = 'up2'", [other]).then(() => null, (x: unknown) => x))).toBe('document_name_unique');
  });

  it('another unique violation is not taken for a name clash', async () => {
    const [db] = await pools(1);
    const e = await db!.tx(async (t) => {
      await insertChat(t, 'c1', 'one');
      await insertChat(t, 'c1', 'two'); // same id: the primary key refuses
    }).then(() => null, (x: unknown) => x);
    expect((e as { code: string }).code).toBe('23505');
    expect(nameClash(e)).toBeUndefined();
  });
});

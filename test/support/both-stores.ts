/**
 * A test file's two stores: fresh SQLite files and fresh PostgreSQL databases (skipped, with the
 * reason, where no PostgreSQL server can run), opened as an Api as a node opens them; files and
 * databases are removed after the file's tests.
 */
import { afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../../src/api/index.js';
import { createDatabase, dropDatabase, pgServer, pgSkipReason, type PgServer } from './postgres.js';

export type Where = { path: string } | { postgres: string };

export const openApi = (w: Where): Promise<Api> => ('postgres' in w ? Api.open(w) : Promise.resolve(new Api(w)));

/**
 * `stores`: [name, a new store of that kind each call (undefined: no PostgreSQL server)];
 * `dir`: a temporary directory of the file's own; `reason`: why PostgreSQL is skipped.
 */
export async function bothStores(prefix: string): Promise<{ stores: Array<[string, () => Promise<Where | undefined>]>; dir: string; server: PgServer | undefined; reason: string }> {
  const dir = mkdtempSync(join(tmpdir(), `ragloom-${prefix}-`));
  const server = await pgServer();
  const reason = await pgSkipReason();
  const dbs: string[] = [];
  afterAll(async () => {
    for (const u of dbs) await dropDatabase(server!, u).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  const stores: Array<[string, () => Promise<Where | undefined>]> = [
    ['SQLite', async () => ({ path: join(dir, `s${Math.random().toString(36).slice(2)}.db`) })],
    ['PostgreSQL', async () => {
      if (!server) return undefined;
      const u = await createDatabase(server, prefix);
      dbs.push(u);
      return { postgres: u };
    }],
  ];
  return { stores, dir, server, reason };
}

/**
 * The acceptance suite runs every test twice, once per way in (DESIGN.md "One operation layer,
 * three ways in"):
 *
 * - `local`: `new Client({ path })`, the engine in-process;
 * - `remote`: `startServer({ path, port: 0 })` on loopback and `new Client({ baseUrl, apiKey })`
 *   with the server's admin key (who the local Client acts as);
 * - `postgres`: `new Client({ postgres })`, the engine in-process on a new database of the run's
 *   PostgreSQL (test/support/postgres.ts); left out, with the reason printed, where there is none.
 *
 * ```ts
 * describe.each(MODES)('%s mode', (mode) => {
 *   const test = acceptance(mode);
 *   test('…', async ({ client, reference }) => { … });
 * });
 * ```
 *
 * `client` is the mode's Client over a fresh database; `reference` is a local Client over a second
 * fresh database: a test that must give the same numbers in both modes (scores, answers) runs the
 * same steps on both and compares (ids and times differ between databases, nothing else may).
 */
import { test as base, expect } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, ApiError, type DataSet, type Document } from '../../src/index.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import type { ModelConfig } from '../../src/embed/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';

export type Mode = 'local' | 'remote' | 'postgres';

const pg = await pgServer();
const pgReason = await pgSkipReason();
if (pgReason) console.warn(`acceptance: no postgres mode (${pgReason})`);
export const MODES: readonly Mode[] = pg ? ['local', 'remote', 'postgres'] : ['local', 'remote'];

/** The engine runs in this process (local and postgres modes), not behind a server. */
export const inProcess = (mode: Mode): boolean => mode !== 'remote';

export interface Opened {
  client: Client;
  /** The server (remote mode). */
  server?: RunningServer;
  /** Closes the client, then the server. */
  close(): Promise<void>;
}

/** Models given to the engine: the Client's in local mode, the server's in remote mode. */
export interface EngineModels {
  models?: ModelConfig[];
  default_chat_model?: string;
}

/** A Client of `mode` over the database at `path`. */
export async function openClient(mode: Mode, path: string, m: EngineModels = {}): Promise<Opened> {
  if (mode === 'local') {
    const client = new Client({ path, ...m });
    return { client, close: () => client.close() };
  }
  if (mode === 'postgres') {
    const url = await createStoreDatabase(pg!, 'acc');
    const client = new Client({ postgres: url, ...m });
    return {
      client,
      close: async () => {
        await client.close();
        await dropDatabase(pg!, url);
      },
    };
  }
  const server = await startServer({ path, port: 0, ...m });
  const client = new Client({ baseUrl: server.url, apiKey: server.apiKey });
  return {
    client,
    server,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

export interface AcceptanceFixtures {
  mode: Mode;
  dir: string;
  /** Models for `client` and `reference` (override with `test.scoped({ models: … })`). */
  models: EngineModels;
  client: Client;
  /** A local Client over a database of its own, to compare `client`'s answers with. */
  reference: Client;
}

/** The fixtures of one mode. */
export function acceptance(mode: Mode) {
  return base.extend<AcceptanceFixtures>({
    mode,
    models: {},
    // eslint-disable-next-line no-empty-pattern
    dir: async ({}, use) => {
      const d = await mkdtemp(join(tmpdir(), `ragloom-acc-${mode}-`));
      await use(d);
      await rm(d, { recursive: true, force: true });
    },
    client: async ({ dir, models }, use) => {
      const o = await openClient(mode, join(dir, 'kb.db'), models);
      try {
        await use(o.client);
      } finally {
        await o.close();
      }
    },
    reference: async ({ dir, models }, use) => {
      const c = new Client({ path: join(dir, 'reference.db'), ...models });
      try {
        await use(c);
      } finally {
        await c.close();
      }
    },
  });
}

/** Awaits `p` and returns its ApiError as `[code, message]` (fails the test otherwise). */
export async function failure(p: Promise<unknown> | (() => Promise<unknown>)): Promise<[number, string]> {
  const e = await caught(p);
  return [e.code, e.message];
}

/** Awaits `p` and returns the ApiError it rejected with (fails the test otherwise). */
export async function caught(p: Promise<unknown> | (() => Promise<unknown>)): Promise<ApiError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw new Error(`expected an ApiError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected the call to reject');
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

export const EMBD = 'ragloom-static-en-256@Builtin';
export const LLM = 'ragloom-extractive@Builtin';
export const NOT_AN_ID = '0'.repeat(32);

/** Three small documents about different things. */
export const CORPUS: Readonly<Record<string, string>> = {
  'tides.md': '# Tides\n\nThe gravitational pull of the moon raises the ocean tides twice a day. Spring tides happen at new and full moon, when the sun and the moon pull together. Neap tides happen at the quarter moons.',
  'bread.md': '# Bread\n\nKnead the dough for ten minutes. Let it rise for one hour in a warm place, then bake it at 220 degrees for thirty minutes. A crusty loaf sounds hollow when tapped.',
  'rivers.txt': 'Rivers carry water from mountains to the sea. The Nile is the longest river in Africa; the Amazon carries the most water of any river on Earth.',
};

/** A dataset with CORPUS uploaded and parsed (every document DONE). */
export async function parsedDataset(c: Client, name = 'science'): Promise<{ ds: DataSet; docs: Document[] }> {
  const ds = await c.createDataset({ name });
  const docs = await ds.uploadDocuments(Object.entries(CORPUS).map(([display_name, text]) => ({ display_name, blob: enc(text) })));
  const done = await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 20 });
  expect(done.map(([, run]) => run)).toEqual(docs.map(() => 'DONE'));
  return { ds, docs };
}

/** Keys that differ between two databases for the same steps (ids, times), removed by {@link portable}. */
const VOLATILE = /(^|_)(id|ids|time|timestamp|date|at|tenant_id|created_by)$|^(id|kb_id|doc_id|document_id|dataset_id|chat_id|session_id|memory_id|image_id|docnm_kwd)$/;

/** A JSON copy of `v` without ids and times: what two databases given the same steps must agree on. */
export function portable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(portable);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(JSON.parse(JSON.stringify(v)) as Record<string, unknown>)
        .filter(([k]) => !VOLATILE.test(k))
        .map(([k, x]) => [k, portable(x)]),
    );
  }
  return v;
}

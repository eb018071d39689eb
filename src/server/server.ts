import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { Api, SearchPool, attachSearchPool, detachSearchPool, checkPostgresOptions } from '../api/index.js';
import { checkIndexMemory, warmSearch } from '../search/index.js';
import { buildApp } from './app.js';
import { isPostgresUrl, type PgConnectionConfig, type PostgresTuning } from '../store/index.js';

type EngineOptions = ConstructorParameters<typeof Api>[0];

export interface ServerOptions {
  /** The SQLite database file served (created if missing); a `postgresql://` URL here is read as `postgres`. */
  path?: string;
  /**
   * A PostgreSQL database instead of a file (`postgresql://user:pass@host:port/db` or a `pg` pool
   * config): many servers on many hosts may serve one (docs/scaling.md). It must exist; an empty
   * one gets the schema. Searches run in the server's own thread (no `searchThreads`).
   */
  postgres?: string | PgConnectionConfig;
  /**
   * With `postgres`: how long calls wait for the database and the pool's size, as
   * `new Client({ postgresOptions })`; unknown or out of range: ApiError 101. `ragloom serve`
   * reads them from `RAGLOOM_PG_*` variables.
   */
  postgresOptions?: PostgresTuning;
  /** @default 9380 (RAGFlow's API port); 0 picks a free port */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** The models every tenant may use (chat, embedding, rerank), as `new Client({ models })`. */
  models?: EngineOptions['models'];
  /** `name@factory` of the default chat model (else the built-in extractive model). */
  default_chat_model?: string;
  /** `name@factory` of the default embedding model. @default the built-in default */
  default_embedding_model?: string;
  /** What agents may reach (SQLite dirs for ExeSQL, origins for Invoke, limits), as `new Client({ agents })`. */
  agents?: EngineOptions['agents'];
  /**
   * Ranking settings of every retrieval the server runs (feedback steps, exact vector scan), as
   * `new Client({ retrieval })`; unknown keys or bad values: TypeError. @default DEFAULT_RETRIEVAL_OPTIONS
   */
  retrieval?: EngineOptions['retrieval'];
  /** Largest JSON or form request body, in bytes; larger → HTTP 413. @default 16 MiB */
  bodyLimit?: number;
  /** Largest uploaded file, in bytes; larger → HTTP 413. @default 256 MiB */
  uploadLimit?: number;
  /** Most files in one upload request. @default 1000 */
  uploadFiles?: number;
  /** Most bytes of files in one upload request; more → HTTP 413. @default 1 GiB (RAGFlow's MAX_CONTENT_LENGTH) */
  uploadTotalLimit?: number;
  /** How long `close()` lets in-flight requests (streams included) finish before aborting them, ms. @default 30 s */
  shutdownTimeout?: number;
  /**
   * Issue a new persisted admin key even when one exists (`ragloom serve --new-key`); the key
   * is returned as `apiKey`. @default false
   */
  newAdminKey?: boolean;
  /** Fastify's request log (pino, to stdout). @default false */
  logger?: boolean;
  /**
   * Worker threads that run retrievals (and chats' retrieval), each with its own read-only
   * connection and its own copy of the search indexes (~2 KB per chunk at 256-d: memory grows
   * with each thread); 0 runs them on the server's own thread. Requests with a rerank model
   * always run on the server's thread. Ignored for a `:memory:` database.
   * @default min(2, cores − 1): 1 on 2 cores, 0 on one
   */
  searchThreads?: number;
  /**
   * Bytes the in-memory search indexes may hold (per search thread, and in the server's own
   * thread), as `new Client({ indexMemory })`: datasets' vector indexes load on first search and
   * the least recently searched are dropped past it. docs/scaling.md, "Memory budget".
   * @default Infinity
   */
  indexMemory?: number;
}

export interface RunningServer {
  /** `http://host:port`; the REST API is under `${url}/api/v1`. */
  url: string;
  /**
   * An admin API key (`ragflow-…`): on the store's first serve (`firstStart`), its persisted admin
   * key, shown this once; on later serves a fresh key for the same admin, valid until `close()`.
   */
  apiKey: string;
  /** The store had no admin key before this start: `apiKey` is persisted, keep it. */
  firstStart: boolean;
  /** Stops accepting connections, lets in-flight requests finish (aborting them after `shutdownTimeout`), then closes the database. */
  close(): Promise<void>;
}

/** Defaults, frozen (bytes, ms). */
export const SERVER_DEFAULTS = Object.freeze({
  port: 9380,
  host: '127.0.0.1',
  bodyLimit: 16 * 1024 * 1024 /* bytes */,
  uploadLimit: 256 * 1024 * 1024 /* bytes per file */,
  uploadFiles: 1000 /* files per request */,
  uploadTotalLimit: 1024 * 1024 * 1024 /* bytes per request */,
  shutdownTimeout: 30_000 /* ms */,
  newAdminKey: false,
  logger: false,
  searchThreads: Math.min(2, Math.max(0, availableParallelism() - 1)),
});

const KNOWN = ['path', 'postgres', 'postgresOptions', 'models', 'default_chat_model', 'default_embedding_model', 'agents', 'retrieval', 'indexMemory', ...Object.keys(SERVER_DEFAULTS)];

function resolveOptions(o: ServerOptions): Readonly<Required<Omit<ServerOptions, 'models' | 'default_chat_model' | 'default_embedding_model' | 'agents' | 'retrieval' | 'postgresOptions' | 'indexMemory'>> & ServerOptions> {
  if (!o || typeof o !== 'object') throw new TypeError('startServer({ path }) needs an options object');
  for (const k of Object.keys(o)) {
    if (!KNOWN.includes(k)) {
      const near = KNOWN.find((x) => x.toLowerCase() === k.toLowerCase());
      throw new TypeError(`Unknown option "${k}"${near ? `; did you mean "${near}"?` : ''}`);
    }
  }
  const given = isPostgresUrl(o.path) ? { ...o, path: undefined, postgres: o.path } : o;
  if (given.postgres !== undefined) {
    if (given.path !== undefined) throw new TypeError('startServer: pass either "path" (a SQLite file) or "postgres" (a PostgreSQL database), not both');
    const pg = given.postgres;
    if (typeof pg === 'string' ? !isPostgresUrl(pg) : !pg || typeof pg !== 'object' || Array.isArray(pg)) {
      throw new TypeError('startServer: "postgres" must be a connection string (postgresql://user:pass@host:port/db) or a pg pool config object');
    }
  } else if (typeof given.path !== 'string' || !given.path) throw new TypeError('startServer: "path" (the database file) or "postgres" is required');
  checkPostgresOptions(given);
  const r = { ...SERVER_DEFAULTS, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) } as Required<ServerOptions>;
  for (const k of ['port', 'bodyLimit', 'uploadLimit', 'uploadFiles', 'uploadTotalLimit', 'shutdownTimeout', 'searchThreads'] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 0) throw new TypeError(`startServer: "${k}" must be a non-negative integer`);
  }
  try {
    checkIndexMemory(r.indexMemory);
  } catch (e) {
    throw new TypeError(`startServer: ${(e as Error).message}`);
  }
  return Object.freeze(r);
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Serves a database over RAGFlow's REST interface (`/api/v1`) and the OpenAI-compatible
 * completion (`/api/v1/openai/{chat_id}/chat/completions`).
 * @example
 * const srv = await startServer({ path: './kb.db', port: 0 });
 * const res = await fetch(`${srv.url}/api/v1/datasets`, { headers: { authorization: `Bearer ${srv.apiKey}` } });
 * await srv.close();
 */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const o = resolveOptions(opts);
  const engineOpts = { models: o.models, default_chat_model: o.default_chat_model, default_embedding_model: o.default_embedding_model, agents: o.agents, retrieval: o.retrieval, indexMemory: o.indexMemory };
  const api = await Api.open(o.postgres !== undefined ? { ...engineOpts, postgres: o.postgres, postgresOptions: o.postgresOptions } : { ...engineOpts, path: o.path });
  const inflight = new Set<AbortController>();
  let closing = false;
  let pool: SearchPool | undefined;
  try {
    // Search threads open the SQLite file themselves; on PostgreSQL searches run in this thread.
    if (o.searchThreads > 0 && o.path !== undefined && o.path !== ':memory:') {
      pool = new SearchPool({ path: o.path, threads: o.searchThreads, indexMemory: o.indexMemory });
      attachSearchPool(api.engine.store.search, pool);
    }
    const boot = (await api.call('auth.bootstrap', { new_admin_key: o.newAdminKey })) as { api_key: string; first_start: boolean };
    const app = await buildApp(api, { bodyLimit: o.bodyLimit, uploads: { fileSize: o.uploadLimit, files: o.uploadFiles, total: o.uploadTotalLimit }, logger: o.logger }, inflight, () => closing);
    await app.listen({ port: o.port, host: o.host });
    // On PostgreSQL searches run in this thread: its indexes load now, in the background (the
    // search threads of a SQLite server build theirs when they start).
    if (o.postgres !== undefined) {
      void api.engine.store.datasets.analyses().then(
        (ds) => warmSearch(api.engine.store.search, ds.map((d) => d.id)),
        (e: unknown) => console.warn(`ragloom search: preloading the search indexes failed: the datasets could not be listed: ${e instanceof Error ? e.message : String(e)}`),
      );
    }
    const { port } = app.server.address() as AddressInfo;
    let closed: Promise<void> | undefined;
    return {
      url: `http://${urlHost(o.host)}:${port}`,
      apiKey: boot.api_key,
      firstStart: boot.first_start,
      close: () =>
        (closed ??= (async () => {
          closing = true;
          // Requests in flight finish on a database that answers; on one that does not, their
          // calls fail at once (STORE_CLOSED) rather than wait out `unreachableMs`.
          api.engine.store.beginClose?.();
          const timer = setTimeout(() => {
            for (const a of inflight) a.abort();
            app.server.closeAllConnections();
          }, o.shutdownTimeout);
          // Once no request is in flight, the connections left are idle or have sent nothing yet
          // (a client's spare keep-alive socket): close them rather than wait for the client.
          const sweep = setInterval(() => {
            if (inflight.size === 0) app.server.closeAllConnections();
          }, 25);
          try {
            await app.close();
          } finally {
            clearInterval(sweep);
            clearTimeout(timer);
            detachSearchPool(api.engine.store.search);
            await pool?.close();
            // Parse work still queued stays RUNNING in the store and resumes on the next open.
            await api.close();
          }
        })()),
    };
  } catch (e) {
    detachSearchPool(api.engine.store.search);
    await pool?.close();
    await api.close();
    throw e;
  }
}

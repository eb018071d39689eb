import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ApiError, Client, type DataSet, type Document } from '../client/index.js';
import { MigrationError } from './manifest.js';

/** The HTTP time limit of every migration request (RAGFlow's own migration tooling uses 300 s). */
export const HTTP_TIMEOUT_MS = 300_000;

export interface Endpoint {
  client: Client;
  /** URL (no credentials) or absolute file path: how the manifest names it. */
  id: string;
  remote: boolean;
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/**
 * A URL becomes a remote Client (key: the flag, else the environment), anything else a database
 * file. A source file is opened read-only (nothing of it is ever written); a file the caller
 * expects to exist (verify, rollback) must exist.
 */
export function openEndpoint(target: string, opts: { apiKey?: string; role: 'source' | 'target'; mustExist?: boolean }): Endpoint {
  if (typeof target !== 'string' || !target.trim()) throw new MigrationError(`The ${opts.role} is missing: give a server URL or a database file`);
  if (isUrl(target)) {
    const apiKey = opts.apiKey || keyFromEnv(opts.role);
    if (!apiKey) {
      throw new MigrationError(`${target} needs an API key: pass --api-key or set ${opts.role === 'source' ? 'RAGFLOW_API_KEY (or RAGLOOM_API_KEY)' : 'RAGLOOM_API_KEY (or RAGFLOW_API_KEY)'}`);
    }
    let client: Client;
    try {
      client = new Client({ baseUrl: target, apiKey, timeout_ms: HTTP_TIMEOUT_MS });
    } catch (e) {
      throw new MigrationError((e as Error).message);
    }
    const u = new URL(target);
    return { client, id: `${u.origin}${u.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`, remote: true };
  }
  const path = resolve(target);
  if ((opts.role === 'source' || opts.mustExist) && !existsSync(path)) throw new MigrationError(`No database file at ${path}`);
  // A source file is read, never written: no schema upgrade, no recovery, no defaults stored.
  return { client: new Client({ path, readonly: opts.role === 'source' }), id: path, remote: false };
}

/**
 * The direction the tools are made for is RAGFlow → ragloom: a source prefers RAGFLOW_API_KEY,
 * a target RAGLOOM_API_KEY; either falls back to the other.
 */
function keyFromEnv(role: 'source' | 'target'): string | undefined {
  const order = role === 'source' ? ['RAGFLOW_API_KEY', 'RAGLOOM_API_KEY'] : ['RAGLOOM_API_KEY', 'RAGFLOW_API_KEY'];
  for (const k of order) if (process.env[k]) return process.env[k];
  return undefined;
}

/** The largest page the tools ask for; servers that cap pages lower (RAGFlow 0.27: 100) get 100. */
const PAGE = 1000;
const isPageCap = (e: unknown) => e instanceof ApiError && /page_size/.test(e.message);

async function allPages<T>(fetchPage: (page: number, size: number) => Promise<T[]>): Promise<T[]> {
  let size = PAGE;
  const out: T[] = [];
  for (let page = 1; ; page++) {
    let rows: T[];
    try {
      rows = await fetchPage(page, size);
    } catch (e) {
      if (page !== 1 || size !== PAGE || !isPageCap(e)) throw e;
      size = 100;
      page = 0;
      continue;
    }
    out.push(...rows);
    if (rows.length < size) return out;
  }
}

/** Every dataset the key can see, oldest first (RAGFlow: own and the team datasets of joined tenants). */
export function listAllDatasets(c: Client): Promise<DataSet[]> {
  return allPages((page, page_size) => c.listDatasets({ page, page_size, orderby: 'create_time', desc: false }));
}

/** Every document of a dataset, oldest first. */
export function listAllDocuments(ds: DataSet): Promise<Document[]> {
  return allPages((page, page_size) => ds.listDocuments({ page, page_size, orderby: 'create_time', desc: false }));
}

/** A dataset's (or document's) field as the wire gave it; RAGFlow versions differ in which they send. */
export function field<T = unknown>(o: { toJSON(): Record<string, unknown> }, k: string): T | undefined {
  return o.toJSON()[k] as T | undefined;
}

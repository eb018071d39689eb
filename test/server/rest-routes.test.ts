/**
 * Issue 34, item 8: every route RAGFlow 0.25.6 registers (fixtures/ragflow-0.25.6-routes.txt, read
 * from its source) is a row of src/api/routes.ts — served, or answered with the explicit "not
 * supported by ragloom" envelope — and over HTTP each one authenticates as RAGFlow's decorator
 * does: a missing or bad key gets RAGFlow's 401 envelope on every login route (token, widget,
 * Dify and open routes have their own answers).
 */
import { describe, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ROUTES, UNSUPPORTED_ROUTES, API_PREFIX, NOT_SUPPORTED_CODE, type AuthKind } from '../../src/api/routes.js';
import { test } from './fixtures.js';

const norm = (p: string) => p.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, ':x');
const RAGFLOW = readFileSync(fileURLToPath(new URL('./fixtures/ragflow-0.25.6-routes.txt', import.meta.url)), 'utf8')
  .split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(' ') as [string, string]);
const full = (r: { prefix?: string; path: string }) => (r.prefix ?? API_PREFIX) + r.path;
const ALL = [...ROUTES.map((r) => ({ ...r, served: true })), ...UNSUPPORTED_ROUTES.map((u) => ({ ...u, served: false }))];

/** A path of the row with each param filled (a composite `<a>:<b>` segment stays matchable). */
const fill = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => `x${name.length}`);

const UNAUTHORIZED = { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null };

describe('the route table against RAGFlow 0.25.6', () => {
  test('every RAGFlow route is a row (served or explicitly unsupported); no row is both', () => {
    const ours = new Map(ALL.map((r) => [`${r.method} ${norm(full(r))}`, r]));
    // HEAD (the agent webhooks list it) is answered by the GET row, as Fastify answers HEAD for every GET route.
    const missing = RAGFLOW.filter(([m, p]) => !ours.has(`${m === 'HEAD' ? 'GET' : m} ${norm(p)}`)).map(([m, p]) => `${m} ${p}`);
    expect(missing).toEqual([]);
    const keys = ALL.map((r) => `${r.method} ${norm(full(r))}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(RAGFLOW.length).toBeGreaterThan(240);
    for (const u of UNSUPPORTED_ROUTES) {
      expect(u.why.length, `${u.method} ${u.path}`).toBeGreaterThan(20);
      expect(u.source).toMatch(/^[a-z_0-9]+\.[a-z_0-9]+/);
    }
  });
});

describe('authentication on every route, over HTTP', () => {
  test('each row answers a missing and a bad key as its RAGFlow decorator does', async ({ srv }) => {
    const expected: Record<AuthKind, (key: string | null) => [number, unknown] | null> = {
      login: () => [401, UNAUTHORIZED],
      token: (key) => [401, key === null ? { code: 0, message: "`Authorization` can't be empty", data: null } : { code: 109, message: 'Authentication error: API key is invalid!', data: null }],
      apikey: (key) => [403, { code: 403, message: key === null ? 'Authorization header is missing!' : 'API-KEY is invalid!' }],
      // Checked after the body's required arguments, with HTTP 200 (sent below).
      beta: (key) => [200, { code: 102, message: key === null ? 'Authorization is not valid!' : 'Authentication error: API key is invalid!"' }],
      none: () => null,
    };
    const failures: string[] = [];
    for (const r of ALL) {
      const want = expected[r.auth];
      for (const key of [null, 'ragflow-not-a-key']) {
        const w = want(key);
        if (!w) continue;
        const body = Object.fromEntries(((r as { validates?: readonly string[] }).validates ?? []).map((k) => [k, k === 'kb_ids' ? ['x'] : 'x']));
        const res = await fetch(srv.url + fill(full(r)), {
          method: r.method,
          headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...(r.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
          body: r.method === 'GET' ? undefined : JSON.stringify(body),
        });
        const got = [res.status, await res.json().catch(() => 'not JSON')];
        if (JSON.stringify(got) !== JSON.stringify(w)) failures.push(`${r.method} ${full(r)} key=${key}: ${JSON.stringify(got)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('an unsupported route answers, after its authentication, RAGFlow\'s envelope with 501 naming it and why', async ({ srv, api }) => {
    const failures: string[] = [];
    for (const u of UNSUPPORTED_ROUTES) {
      const res = await fetch(srv.url + fill(full(u)), {
        method: u.method, headers: { authorization: `Bearer ${api.key}`, ...(u.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
        body: u.method === 'GET' ? undefined : JSON.stringify(Object.fromEntries((u.validates ?? []).map((k) => [k, 'x']))),
      });
      const body = await res.json();
      const want = {
        code: NOT_SUPPORTED_CODE,
        message: `${u.method} ${full(u).replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')} is not supported by ragloom: ${u.why}.`,
        data: { error_code: 'NOT_SUPPORTED_BY_RAGLOOM' },
      };
      if (res.status !== 200 || JSON.stringify(body) !== JSON.stringify(want)) failures.push(`${u.method} ${full(u)}: ${res.status} ${JSON.stringify(body)}`);
    }
    expect(failures).toEqual([]);
    expect(NOT_SUPPORTED_CODE).toBe(501);
  });

  test('an unsupported route with RAGFlow\'s @validate_request answers its missing arguments first (and langfuse its empty values)', async ({ api, srv }) => {
    const post = async (path: string, body: unknown, key: string | null = api.key) => (await fetch(srv.url + path, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body),
    })).json();
    expect(await post('/v1/llm/set_api_key', { llm_factory: 'OpenAI' })).toEqual({ code: 101, message: 'required argument are missing: api_key; ', data: null });
    expect(await post('/api/v1/mcp/servers', {})).toEqual({ code: 101, message: 'required argument are missing: name,url,server_type; ', data: null });
    // The widget checks its key inside the handler, after the arguments.
    expect(await post('/api/v1/searchbots/mindmap', { question: 'q' }, null)).toEqual({ code: 101, message: 'required argument are missing: kb_ids; ', data: null });
    expect(await post('/api/v1/searchbots/mindmap', { question: 'q', kb_ids: [] }, null)).toEqual({ code: 102, message: 'Authorization is not valid!' });
    expect((await api.call('POST', '/agents/test_db_connection', { db_type: 'mysql' })).body).toEqual({
      code: 101, message: 'required argument are missing: database,username,host,port,password; ', data: null,
    });
    for (const method of ['POST', 'PUT'] as const) {
      expect((await api.call(method, '/langfuse/api-key', { public_key: 'pub' })).body).toEqual({ code: 101, message: 'required argument are missing: secret_key,host; ', data: null });
      expect((await api.call(method, '/langfuse/api-key', { secret_key: '', public_key: 'pub', host: 'http://host' })).body).toEqual({ code: 102, message: 'Missing required fields' });
      expect((await api.call(method, '/langfuse/api-key', { secret_key: 's', public_key: 'pub', host: 'http://host' })).body.code).toBe(NOT_SUPPORTED_CODE);
    }
  });

  test('open routes answer without a key; the legacy /v1/system/healthz too; /v1 paths RAGFlow lacks are 404', async ({ srv }) => {
    for (const p of ['/api/v1/system/healthz', '/v1/system/healthz']) {
      const r = await fetch(srv.url + p);
      expect([r.status, await r.json()], p).toEqual([200, { db: 'ok', doc_engine: 'ok', storage: 'ok', status: 'ok' }]);
    }
    const llm = await fetch(`${srv.url}/v1/llm/my_llms`);
    expect([llm.status, await llm.json()]).toEqual([401, UNAUTHORIZED]);
    expect((await fetch(`${srv.url}/v1/nothing`)).status).toBe(404);
    const head = await fetch(`${srv.url}/api/v1/agents/a1/webhook`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});

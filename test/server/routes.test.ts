/** api/routes.ts: the table covers the SDK's REST calls; the pure helpers behave as RAGFlow reads requests. */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import {
  ROUTES, ROUTE_BY_OP, matchRoute, buildPath, coerceQuery, splitRequest, successEnvelope, errorEnvelope, decodeEnvelope, bearerToken, pyInt, pyFloat,
} from '../../src/api/routes.js';
import { Api, ApiError, type OpName } from '../../src/api/index.js';
import { test } from './fixtures.js';

/** Every REST call the RAGFlow Python SDK 0.25.6 makes for the resources ragloom serves. */
const SDK_CALLS: Array<[string, string]> = [
  ['POST', '/datasets'], ['DELETE', '/datasets'], ['GET', '/datasets'], ['PUT', '/datasets/D'],
  ['POST', '/datasets/D/documents'], ['GET', '/datasets/D/documents'], ['DELETE', '/datasets/D/documents'],
  ['POST', '/datasets/D/chunks'], ['DELETE', '/datasets/D/chunks'],
  ['PATCH', '/datasets/D/documents/X'], ['GET', '/datasets/D/documents/X'],
  ['GET', '/datasets/D/documents/X/chunks'], ['POST', '/datasets/D/documents/X/chunks'], ['DELETE', '/datasets/D/documents/X/chunks'],
  ['PATCH', '/datasets/D/documents/X/chunks/C'],
  ['POST', '/retrieval'],
  ['POST', '/chats'], ['DELETE', '/chats'], ['GET', '/chats'], ['GET', '/chats/C'], ['PATCH', '/chats/C'],
  ['POST', '/chats/C/sessions'], ['GET', '/chats/C/sessions'], ['DELETE', '/chats/C/sessions'], ['PATCH', '/chats/C/sessions/S'],
  ['POST', '/chats/C/completions'],
  ['POST', '/memories'], ['GET', '/memories'], ['DELETE', '/memories/M'], ['PUT', '/memories/M'], ['GET', '/memories/M/config'], ['GET', '/memories/M'],
  ['POST', '/messages'], ['GET', '/messages/search'], ['GET', '/messages'],
  ['DELETE', '/messages/M:7'], ['PUT', '/messages/M:7'], ['GET', '/messages/M:7/content'],
  ['GET', '/agents'], ['GET', '/agents/A'], ['POST', '/agents'], ['PUT', '/agents/A'], ['DELETE', '/agents/A'],
  ['POST', '/agents/A/sessions'], ['GET', '/agents/A/sessions'], ['DELETE', '/agents/A/sessions'],
];

describe('ROUTES', () => {
  it.each(SDK_CALLS)('%s %s is served', (method, path) => {
    const m = matchRoute(method, path);
    expect(m?.route, `${method} ${path}`).toBeDefined();
  });

  it('splits a composite segment into its params', () => {
    expect(matchRoute('PUT', '/messages/abc:12')!.params).toEqual({ memory_id: 'abc', message_id: '12' });
    expect(matchRoute('GET', '/messages/abc:12/content')!.route!.op).toBe('messages.content');
    expect(matchRoute('GET', '/messages/search')!.route!.op).toBe('messages.search');
    expect(matchRoute('PATCH', '/datasets')).toEqual({ params: {}, allowed: ['POST', 'GET', 'DELETE'] });
    expect(matchRoute('GET', '/nothing')).toBeUndefined();
  });

  it('one row per method and path; every row is documented', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.prefix ?? ''}${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const r of ROUTES) {
      expect(r.source.length).toBeGreaterThan(0);
      expect(r.status).toBe(200);
      if (r.auth === 'token') expect(['documents.parse', 'documents.stopParse', 'retrieval', 'agentSessions.delete']).toContain(r.op);
    }
    expect(ROUTE_BY_OP['chats.completion']!.path).toBe('/chats/:chat_id/completions');
  });

  test('every op of the table exists in the Api', async ({ dir }) => {
    const api = new Api({ path: join(dir, 'kb.db') });
    try {
      for (const r of ROUTES) {
        const e = await api.call(r.op as OpName, { signal: AbortSignal.abort() }).catch((x: unknown) => x);
        expect(e instanceof TypeError && /Unknown operation/.test(e.message), r.op).toBe(false);
      }
    } finally {
      await api.close();
    }
  });
});

describe('query strings', () => {
  it('casts like RAGFlow: int(), Pydantic lax, desc != "false", getlist, csv lists', () => {
    const q = (op: OpName, s: string) => coerceQuery(ROUTE_BY_OP[op]!, new URLSearchParams(s));
    expect(q('documents.list', 'page=2&page_size= 10 &desc=False&suffix=md&suffix=txt&run=DONE&run_status[]=1&ids=a&other=x')).toEqual({
      page: 2, page_size: 10, desc: false, suffix: ['md', 'txt'], run: ['DONE', '1'], ids: ['a'],
    });
    expect(() => q('documents.list', 'page=1.5')).toThrow(new ApiError(100, 'ValueError("invalid literal for int() with base 10: \'1.5\'")'));
    expect(q('datasets.list', 'page=3&desc=yes&include_parsing_status=0&ext={}&extra=1&page_size=x')).toEqual({ page: 3, desc: true, include_parsing_status: false, ext: '{}', extra: '1', page_size: 'x' });
    expect(q('chats.list', 'desc=TRUE&owner_ids=a&owner_ids=b')).toEqual({ desc: true, owner_ids: ['a', 'b'] });
    expect(q('messages.search', 'memory_id=a,b&similarity_threshold=.5&top_n=3')).toEqual({ memory_id: ['a', 'b'], similarity_threshold: 0.5, top_n: 3 });
    expect(q('messages.recent', 'memory_id=a&memory_id=b')).toEqual({ memory_id: ['a', 'b'] });
    expect(q('chunks.list', 'available=true')).toEqual({ available: true });
    expect(() => q('messages.search', 'similarity_threshold=high')).toThrow('ValueError("could not convert string to float: \'high\'")');
  });

  it('pyInt / pyFloat accept what Python accepts', () => {
    expect([pyInt(' 12 '), pyInt('+3'), pyInt('-4'), pyInt('1_000')]).toEqual([12, 3, -4, 1000]);
    for (const bad of ['', '1.0', '0x10', '1__0', 'ten']) expect(() => pyInt(bad)).toThrow(ApiError);
    expect([pyFloat('1'), pyFloat('1.'), pyFloat('.5'), pyFloat('1e3'), pyFloat('-inf')]).toEqual([1, 1, 0.5, 1000, -Infinity]);
    expect(Number.isNaN(pyFloat('nan'))).toBe(true);
  });
});

describe('client-side helpers', () => {
  it('splitRequest puts params where the route wants them', () => {
    expect(splitRequest(ROUTE_BY_OP['documents.list']!, { dataset_id: 'd1', page: 2, desc: false, run: ['DONE', 'FAIL'], name: null })).toEqual({
      method: 'GET', path: '/datasets/d1/documents', query: [['page', '2'], ['desc', 'false'], ['run', 'DONE'], ['run', 'FAIL']],
    });
    expect(splitRequest(ROUTE_BY_OP['chunks.update']!, { dataset_id: 'd', document_id: 'x', chunk_id: 'c', content: 'hi' })).toEqual({
      method: 'PATCH', path: '/datasets/d/documents/x/chunks/c', query: [], body: { content: 'hi' },
    });
    expect(splitRequest(ROUTE_BY_OP['messages.status']!, { memory_id: 'm', message_id: 7, status: true }).path).toBe('/messages/m:7');
    const files = [{ display_name: 'a.txt', blob: new Uint8Array([1]) }];
    expect(splitRequest(ROUTE_BY_OP['documents.upload']!, { dataset_id: 'd', files }).files).toBe(files);
    expect(() => buildPath('/datasets/:dataset_id', {})).toThrow(TypeError);
  });

  it('envelopes encode and decode symmetrically', () => {
    const cases: Array<[OpName, unknown]> = [
      ['datasets.list', { data: [{ id: 'a' }], total_datasets: 1 }],
      ['chunks.add', { id: 'c' }],
      ['documents.list', { total: 0, docs: [] }],
      ['memories.config', { id: 'm' }],
      ['messages.add', 'All add to task.'],
      ['agentSessions.list', { data: [{ id: 's' }], total: 1 }],
    ];
    for (const [op, result] of cases) {
      const r = ROUTE_BY_OP[op]!;
      expect(decodeEnvelope(r, JSON.parse(JSON.stringify(successEnvelope(r, result))))).toEqual({ ok: true, result });
    }
    expect(successEnvelope(ROUTE_BY_OP['chunks.delete']!, undefined)).toEqual({ code: 0 });
    expect(successEnvelope(ROUTE_BY_OP['chunks.delete']!, { success_count: 2, errors: ['Duplicate chunk ids: c'] })).toEqual({ code: 0, data: { success_count: 2, errors: ['Duplicate chunk ids: c'] } });
    expect(successEnvelope(ROUTE_BY_OP['documents.parse']!, undefined)).toEqual({ code: 0 });
    const partial = Object.defineProperty({ success_count: 1 }, Symbol.for('ragloom.resultMessage'), { value: 'Partially deleted 1 chats with 1 errors' });
    expect(successEnvelope(ROUTE_BY_OP['chats.delete']!, partial)).toEqual({ code: 0, message: 'Partially deleted 1 chats with 1 errors', data: { success_count: 1 } });

    const err = decodeEnvelope(ROUTE_BY_OP['chats.get']!, { code: 109, message: 'No authorization.', data: false });
    expect(err.ok).toBe(false);
    expect(!err.ok && [err.error.code, err.error.message]).toEqual([109, 'No authorization.']);
    expect(errorEnvelope(ROUTE_BY_OP['chats.get'], { code: 109, message: 'No authorization.' })).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect(errorEnvelope(ROUTE_BY_OP['chats.get'], { code: 102, message: 'x' })).toEqual({ code: 102, message: 'x' });
    expect(errorEnvelope(ROUTE_BY_OP['datasets.create'], { code: 100, message: 'E()' })).toEqual({ code: 100, message: 'E()', data: null });
    expect(errorEnvelope(ROUTE_BY_OP['memories.config'], { code: 404, message: 'nf' })).toEqual({ code: 404, message: 'nf', data: null });
    expect(errorEnvelope(ROUTE_BY_OP['memories.config'], { code: 101, message: 'bad' })).toEqual({ code: 101, message: 'bad' });
  });

  it('bearerToken reads the header as each decorator does', () => {
    expect(bearerToken('login', 'Bearer abc')).toBe('abc');
    expect(bearerToken('login', 'bearer abc')).toBe('abc');
    expect(bearerToken('login', 'abc')).toBe('abc');
    expect(bearerToken('token', 'Token abc')).toBe('abc');
    expect(bearerToken('token', 'Bearer')).toBeUndefined();
    expect(bearerToken('login', undefined)).toBeUndefined();
  });
});

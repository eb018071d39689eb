/**
 * Issue 34, item 8, over HTTP with RAGFlow 0.25.6's request shapes: `/system/*` (ping, version,
 * config, healthz, status, tokens, stats), tasks of the parse queue, `/users/me`, plugin tools,
 * the Langfuse key, the document routes outside a dataset (thumbnails, ingest, artifacts), the
 * batch status switch, Dify's external knowledge API, and the agent routes (tags, reset, logs,
 * webhook logs, re-runs).
 */
import { describe, expect } from 'vitest';
import { test, upload, waitParsed, parsedDataset, DOCS, type Http } from './fixtures.js';

const UNAUTHORIZED = { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null };
const BEGIN = { components: { begin: { obj: { component_name: 'Begin', params: {} }, downstream: [], upstream: [] } } };

async function dataset(api: Http): Promise<{ ds: string; ids: string[] }> {
  const ds = (await api.call('POST', '/datasets', { name: 'kb' })).body.data.id as string;
  const up = await upload(api, ds, DOCS);
  return { ds, ids: up.body.data.map((d: { id: string }) => d.id) };
}

describe('/system/*', () => {
  test('ping, version, config and healthz need no key; status does', async ({ api, srv }) => {
    const ping = await fetch(`${srv.url}/api/v1/system/ping`);
    expect([ping.status, await ping.text()]).toEqual([200, 'pong']);
    expect((await api.call('GET', '/system/version', undefined, { key: null })).body).toEqual({ code: 0, message: 'success', data: expect.stringMatching(/^ragloom-\d+\.\d+\.\d+.* \(RAGFlow v0\.25\.6 REST API\)$/) });
    expect((await api.call('GET', '/system/config', undefined, { key: null })).body).toEqual({ code: 0, message: 'success', data: { registerEnabled: 0, disablePasswordLogin: true } });
    const h = await api.call('GET', '/system/healthz', undefined, { key: null });
    expect([h.status, h.body]).toEqual([200, { db: 'ok', doc_engine: 'ok', storage: 'ok', status: 'ok' }]);

    const s = await api.call('GET', '/system/status');
    expect(s.body.code).toBe(0);
    expect(s.body.data).toMatchObject({ doc_engine: { type: 'sqlite', status: 'green' }, storage: { status: 'green' }, database: { status: 'green' } });
    const [beat] = Object.values(s.body.data.task_executor_heartbeats) as Array<Array<{ pending: number; done: number }>>;
    expect(beat![0]).toMatchObject({ pending: 0, done: 0 });
    expect((await api.call('GET', '/system/status', undefined, { key: null })).body).toEqual(UNAUTHORIZED);
  });

  test('tokens: a new key works at once, is listed by its hint, and stops working when deleted', async ({ api }) => {
    const created = (await api.call('POST', '/system/tokens?name=ci')).body;
    expect(created.code).toBe(0);
    const key = created.data.token as string;
    expect(created.data).toMatchObject({ tenant_id: expect.any(String), token: expect.any(String) });
    expect((await api.call('GET', '/datasets', undefined, { key })).body.code).toBe(0);
    const listed = (await api.call('GET', '/system/tokens')).body.data as Array<{ token: unknown; hint: string }>;
    expect(listed.length).toBeGreaterThanOrEqual(2);
    expect(listed.every((t) => t.token === null)).toBe(true);
    expect(listed.some((t) => key.startsWith(t.hint.replace(/…$/, '')))).toBe(true);
    expect((await api.call('DELETE', `/system/tokens/${key}`)).body).toEqual({ code: 0, message: 'success', data: true });
    expect((await api.call('GET', '/datasets', undefined, { key })).body).toEqual(UNAUTHORIZED);
    // An unknown key is deleted "successfully" too, as RAGFlow's filter_delete; the caller's own key still works.
    expect((await api.call('DELETE', '/system/tokens/nope')).body.data).toBe(true);
    expect((await api.call('GET', '/system/tokens')).body.code).toBe(0);
    expect((await api.call('POST', '/system/tokens', undefined, { key: 'bad' })).body).toEqual(UNAUTHORIZED);
  });

  test('stats count the tenant\'s agent sessions per day; a bad date gives empty series', async ({ api }) => {
    const agent = (await api.call('POST', '/agents', { title: 't', dsl: BEGIN })).body.data.id;
    for (let i = 0; i < 2; i++) expect((await api.call('POST', `/agents/${agent}/sessions`, {})).body.code).toBe(0);
    const today = new Date();
    const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    const r = (await api.call('GET', `/system/stats?from_date=${day}&to_date=${day}`)).body;
    expect(r.code).toBe(0);
    expect(r.data.pv).toEqual([[`${day} 00:00:00`, 2]]);
    expect(r.data.uv).toEqual([[`${day} 00:00:00`, 1]]);
    expect(Object.keys(r.data).sort()).toEqual(['pv', 'round', 'speed', 'thumb_up', 'tokens', 'uv']);
    expect((await api.call('GET', '/system/stats?from_date=2000-01-01&to_date=2000-01-02')).body.data.pv).toEqual([]);
    expect((await api.call('GET', '/system/stats?from_date=yesterday')).body.data.pv).toEqual([]);
  });
});

describe('tasks of the parse queue', () => {
  test('a parse\'s log id is its task: POST /tasks/{id}/cancel and PATCH /tasks/{id} {action: stop} stop it', async ({ api }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'big' })).body.data.id;
    const many: Record<string, string> = {};
    for (let i = 0; i < 30; i++) many[`n${i}.md`] = `# Note ${i}\n\n${'The quick brown fox jumps over the lazy dog. '.repeat(200)}`;
    const ids = (await upload(api, ds, many)).body.data.map((d: { id: string }) => d.id) as string[];
    await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ids });
    const logs = (await api.call('GET', `/datasets/${ds}/ingestions?log_type=file&orderby=create_time&desc=false`)).body.data.logs as Array<{ id: string; document_id: string }>;
    expect(logs).toHaveLength(30);
    const [a, b] = [logs.at(-1)!, logs.at(-2)!]; // the queue's tail: not parsed yet
    expect((await api.call('POST', `/tasks/${a.id}/cancel`)).body).toEqual({ code: 0, message: 'success', data: true });
    expect((await api.call('PATCH', `/tasks/${b.id}`, { action: 'stop' })).body).toEqual({ code: 0, message: 'success', data: true });
    for (const l of [a, b]) expect((await api.call('GET', `/datasets/${ds}/documents?id=${l.document_id}`)).body.data.docs[0].run).toBe('CANCEL');
    expect((await api.call('PATCH', `/tasks/${b.id}`, { action: 'pause' })).body).toEqual({ code: 101, message: "Invalid action 'pause'. Only 'stop' is supported.", data: null });
    expect((await api.call('PATCH', `/tasks/${b.id}`, {})).body).toMatchObject({ code: 101, message: 'required argument are missing: action; ' });
    // Unknown tasks: true, as RAGFlow answers.
    expect((await api.call('POST', '/tasks/nope/cancel')).body.data).toBe(true);
    expect((await api.call('POST', `/tasks/${a.id}/cancel`, undefined, { key: null })).body).toEqual(UNAUTHORIZED);
    await api.call('POST', `/datasets/${ds}/documents/stop`, { document_ids: ids });
  });
});

describe('the caller and instance-wide reads', () => {
  test('/users/me, /plugin/tools, /langfuse/api-key', async ({ api }) => {
    const me = (await api.call('GET', '/users/me')).body;
    expect(me.code).toBe(0);
    expect(me.data).toMatchObject({ id: expect.any(String), tenant_id: expect.any(String), is_active: '1' });
    expect(me.data).not.toHaveProperty('password');
    expect(me.data).not.toHaveProperty('access_token');
    expect((await api.call('GET', '/plugin/tools')).body).toEqual({ code: 0, message: 'success', data: [] });
    expect((await api.call('GET', '/langfuse/api-key')).body).toEqual({ code: 0, message: 'Have not record any Langfuse keys.', data: null });
    expect((await api.call('DELETE', '/langfuse/api-key')).body).toEqual({ code: 0, message: 'Have not record any Langfuse keys.', data: null });
    for (const [m, p] of [['GET', '/users/me'], ['GET', '/plugin/tools'], ['GET', '/langfuse/api-key']]) {
      expect((await api.call(m!, p!, undefined, { key: 'bad' })).body, p).toEqual(UNAUTHORIZED);
    }
  });
});

describe('documents outside a dataset route', () => {
  test('batch-update-status switches documents and their chunks; a bad id is a partial failure (500 with the map)', async ({ api }) => {
    const { datasetId: ds, docIds } = await parsedDataset(api);
    const path = `/datasets/${ds}/documents/batch-update-status`;
    expect((await api.call('POST', path, { doc_ids: [docIds[0]], status: '0' })).body).toEqual({ code: 0, message: 'success', data: { [docIds[0]!]: { status: '0' } } });
    const chunks = (await api.call('GET', `/datasets/${ds}/documents/${docIds[0]}/chunks`)).body.data.chunks as Array<{ available: boolean }>;
    expect(chunks.every((c) => c.available === false)).toBe(true);
    const hits = (await api.call('POST', '/retrieval', { question: 'moon tides', dataset_ids: [ds] })).body.data.chunks as Array<{ document_id: string }>;
    expect(hits.every((c) => c.document_id !== docIds[0])).toBe(true);
    const partial = (await api.call('POST', path, { doc_ids: [docIds[0], 'nope'], status: 1 })).body;
    expect(partial).toEqual({ code: 500, message: 'Partial failure', data: { [docIds[0]!]: { status: '1' }, nope: { error: 'Document not found' } } });
    expect((await api.call('POST', path, { doc_ids: [], status: '1' })).body).toMatchObject({ code: 101, message: '"doc_ids" must be a non-empty list.' });
    expect((await api.call('POST', path, { doc_ids: [''], status: '1' })).body).toMatchObject({ code: 101, message: '"doc_ids" must contain non-empty document IDs.' });
    expect((await api.call('POST', path, { doc_ids: docIds, status: '2' })).body).toMatchObject({ code: 101, message: '"Status" must be either 0 or 1:2!' });
    expect((await api.call('POST', '/datasets/nope/documents/batch-update-status', { doc_ids: docIds, status: '1' })).body).toMatchObject({ code: 102, message: "You don't own the dataset." });
  });

  test('ingest runs and cancels; thumbnails by id; artifacts are checked and never found', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    expect((await api.call('POST', '/documents/ingest', { doc_ids: ids, run: '1' })).body).toEqual({ code: 0, message: 'success', data: true });
    await waitParsed(api, ds, ids);
    expect((await api.call('POST', '/documents/ingest', { doc_ids: ids, run: '2' })).body).toEqual({ code: 102, message: 'Cannot cancel a task that is not in RUNNING status', data: null });
    expect((await api.call('POST', '/documents/ingest', { doc_ids: ['nope'], run: '1' })).body).toEqual({ code: 109, message: 'No authorization.', data: null });
    expect((await api.call('POST', '/documents/ingest', { run: '1' })).body).toEqual({ code: 100, message: "KeyError('doc_ids')", data: null });

    const th = (await api.call('GET', `/thumbnails?doc_ids=${ids[0]}&doc_ids=nope`)).body;
    expect(th).toEqual({ code: 0, message: 'success', data: { [ids[0]]: '' } });
    expect((await api.call('GET', '/thumbnails')).body).toEqual({ code: 101, message: 'Lack of "Document ID"', data: false });
    expect((await api.call('GET', `/thumbnails?doc_ids=${ids[0]}`, undefined, { key: null })).body).toEqual(UNAUTHORIZED);

    expect((await api.call('GET', '/documents/artifact/chart.png')).body).toEqual({ code: 102, message: 'Artifact not found.' });
    expect((await api.call('GET', '/documents/artifact/run.exe')).body).toEqual({ code: 102, message: 'Invalid file type.' });
    expect((await api.call('GET', '/documents/artifact/..%2Fsecret.png')).body).toEqual({ code: 102, message: 'Invalid filename.' });
  });
});

describe("Dify's external knowledge API", () => {
  test('records from one dataset; auth and argument errors carry their code as the HTTP status', async ({ api, srv }) => {
    const { datasetId: ds, docIds } = await parsedDataset(api);
    await api.call('PATCH', `/datasets/${ds}/documents/${docIds[0]}`, { meta_fields: { topic: 'sea' } });
    const r = await api.call('POST', '/dify/retrieval', { knowledge_id: ds, query: 'moon tides', retrieval_setting: { top_k: 2, score_threshold: 0 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['records']);
    expect(r.body.records.length).toBeGreaterThan(0);
    expect(r.body.records.length).toBeLessThanOrEqual(2);
    expect(r.body.records[0]).toMatchObject({ title: 'tides.md', content: expect.stringContaining('moon'), score: expect.any(Number), metadata: { topic: 'sea', doc_id: docIds[0], document_id: docIds[0] } });
    // The GET form takes the same as a query string.
    const g = await api.call('GET', `/dify/retrieval?knowledge_id=${ds}&query=bread&top_k=1`);
    expect(g.body.records).toHaveLength(1);
    expect(g.body.records[0].title).toBe('bread.md');
    // metadata_condition narrows; one matching nothing gives no records.
    const none = await api.call('POST', '/dify/retrieval', { knowledge_id: ds, query: 'moon', metadata_condition: { conditions: [{ name: 'topic', comparison_operator: 'is', value: 'land' }] } });
    expect(none.body).toEqual({ records: [] });

    const cases: Array<[unknown, number, string]> = [
      [{ query: 'x' }, 400, 'required arguments are missing: knowledge_id; '],
      [{ knowledge_id: ds }, 400, 'required arguments are missing: query; '],
      [{ knowledge_id: ds, query: 'x', retrieval_setting: { top_k: 'many' } }, 400, 'invalid or malformed arguments: top_k must be integer and score_threshold must be numeric; '],
      [{ knowledge_id: ds, query: 'x', retrieval_setting: 'all' }, 400, 'invalid or malformed arguments: retrieval_setting must be an object; '],
      [{ knowledge_id: 'nope', query: 'x' }, 404, 'Knowledgebase not found!'],
      // The condition is read inside RAGFlow's try: its Python failure is code 500 with the exception's text.
      [{ knowledge_id: ds, query: 'x', metadata_condition: -1 }, 500, "'int' object has no attribute 'get'"],
      [{ knowledge_id: ds, query: 'x', metadata_condition: { conditions: [{ comparison_operator: 'is', value: 1 }] } }, 500, "'name'"],
    ];
    for (const [body, status, message] of cases) {
      const e = await api.call('POST', '/dify/retrieval', body);
      expect([e.status, e.body], JSON.stringify(body)).toEqual([status, { code: status === 400 ? 101 : status, message }]);
    }
    // A body that cannot be read: Dify's handler catches the read's exception (101).
    const malformed = await api.call('POST', '/dify/retrieval', undefined, { raw: '{"a": ', headers: { 'content-type': 'application/json' } });
    expect([malformed.status, malformed.body]).toEqual([400, {
      code: 101, message: 'invalid or malformed arguments: 400 Bad Request: The browser (or proxy) sent a request that this server could not understand.; ',
    }]);
    const list = await api.call('POST', '/dify/retrieval', [1]);
    expect(list.body).toEqual({ code: 101, message: 'invalid or malformed arguments: JSON payload must be an object.; ' });
    // apikey_required: 403 with RAGFlow's messages.
    const noKey = await fetch(`${srv.url}/api/v1/dify/retrieval`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([noKey.status, await noKey.json()]).toEqual([403, { code: 403, message: 'Authorization header is missing!' }]);
    const oneWord = await api.call('POST', '/dify/retrieval', {}, { key: null, headers: { authorization: 'token' } });
    expect([oneWord.status, oneWord.body]).toEqual([403, { code: 403, message: 'Please check your authorization format.' }]);
    const bad = await api.call('POST', '/dify/retrieval', {}, { key: 'nope' });
    expect([bad.status, bad.body]).toEqual([403, { code: 403, message: 'API-KEY is invalid!' }]);
  });
});

describe('agent routes', () => {
  test('tags, reset, logs and webhook logs', async ({ api }) => {
    const agent = (await api.call('POST', '/agents', { title: 'tagged', dsl: BEGIN })).body.data.id;
    const other = (await api.call('POST', '/agents', { title: 'other', dsl: BEGIN })).body.data.id;
    expect((await api.call('PUT', `/agents/${agent}/tags`, { tags: 'Support, faq' })).body).toEqual({ code: 0, message: 'success', data: true });
    await api.call('PUT', `/agents/${other}/tags`, { tags: ['faq'] });
    const tags = (await api.call('GET', '/agents/tags')).body;
    expect(tags.code).toBe(0);
    expect(tags.data[0]).toEqual({ tag: 'faq', count: 2 });
    expect(tags.data).toHaveLength(2);
    expect((await api.call('PUT', '/agents/nope/tags', { tags: 'x' })).body).toMatchObject({ code: 103, message: 'Agent not found or no permission.' });

    const reset = (await api.call('POST', `/agents/${agent}/reset`)).body;
    expect(reset.code).toBe(0);
    expect(reset.data.components.begin).toBeDefined();
    expect((await api.call('GET', `/agents/${agent}/logs/some-message`)).body).toEqual({ code: 0, message: 'success', data: {} });
    const hooks = (await api.call('GET', `/agents/${agent}/webhook/logs?since_ts=100`)).body;
    expect(hooks).toEqual({ code: 0, message: 'success', data: { webhook_id: null, events: [], next_since_ts: 100, finished: false } });
    expect((await api.call('GET', '/agents/nope/webhook/logs')).body).toMatchObject({ code: 102, message: 'Canvas not found.' });
    expect((await api.call('POST', '/agents/nope/reset')).body.code).not.toBe(0);
  });

  test('POST /agents/rerun parses again the document of an ingestion log', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: [ids[0]] });
    await waitParsed(api, ds, [ids[0]!]);
    const log = (await api.call('GET', `/datasets/${ds}/ingestions?log_type=file`)).body.data.logs[0];
    expect((await api.call('POST', '/agents/rerun', { id: log.id, dsl: {}, component_id: 'begin' })).body).toEqual({ code: 0, message: 'success', data: true });
    await waitParsed(api, ds, [ids[0]!]);
    expect((await api.call('GET', `/datasets/${ds}/ingestions?log_type=file`)).body.data.total).toBe(2);
    expect((await api.call('POST', '/agents/rerun', { id: 'nope', dsl: {}, component_id: 'begin' })).body).toMatchObject({ code: 102, message: 'Document not found.' });
    expect((await api.call('POST', '/agents/rerun', { id: log.id })).body).toMatchObject({ code: 101, message: 'required argument are missing: dsl,component_id; ' });
  });
});

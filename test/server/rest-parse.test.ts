/**
 * Issue 34, items 1 and 5, over HTTP with RAGFlow 0.25.6's request shapes: `documents/parse` and
 * `documents/stop` (document_api.py) beside the SDK's `/chunks` pair, the listing rules (negative
 * pages, unknown `orderby`), and paths with an empty segment as Werkzeug routes them.
 */
import { describe, expect } from 'vitest';
import { test, upload, waitParsed, DOCS, type Http } from './fixtures.js';

const NOT_A_DOC = '0'.repeat(32);

async function dataset(api: Http, name = 'kb'): Promise<{ ds: string; ids: string[] }> {
  const ds = (await api.call('POST', '/datasets', { name })).body.data.id as string;
  const up = await upload(api, ds, DOCS);
  return { ds, ids: up.body.data.map((d: { id: string }) => d.id) };
}

describe('POST /datasets/{id}/documents/parse', () => {
  test('parses with login auth and answers {success_count}; the /chunks route keeps its own answer', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const r = await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ids });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 0, data: { success_count: 2 } });
    await waitParsed(api, ds, ids);
    const docs = (await api.call('GET', `/datasets/${ds}/documents`)).body.data.docs;
    for (const d of docs) {
      expect(d.run).toBe('DONE');
      expect(d.progress_msg).toContain('Task done');
      expect(d.chunk_count).toBeGreaterThan(0);
    }
    // Parsing again (a re-parse of DONE documents) is accepted too.
    expect((await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ids })).body).toEqual({ code: 0, data: { success_count: 2 } });
    await waitParsed(api, ds, ids);
    // The SDK's older pair stays: `{"code":0}`.
    expect((await api.call('POST', `/datasets/${ds}/chunks`, { document_ids: ids })).body).toEqual({ code: 0 });
    await waitParsed(api, ds, ids);
  });

  test('duplicates are reported in data.errors; unknown ids fail after the known ones are queued', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const dup = await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: [ids[0], ids[0], ids[1]] });
    expect(dup.body).toEqual({ code: 0, data: { success_count: 2, errors: [`Duplicate document ids: ${ids[0]}`] } });
    await waitParsed(api, ds, ids);
    const mixed = await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: [ids[0], 'invalid_id', ids[1]] });
    expect(mixed.body).toEqual({ code: 102, message: "Documents not found: ['invalid_id']" });
    await waitParsed(api, ds, ids); // the known ones were parsed all the same
    expect((await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ['invalid_id'] })).body).toEqual({ code: 102, message: "Documents not found: ['invalid_id']" });
  });

  test('bad bodies and datasets answer as document_api.parse_documents', async ({ api }) => {
    const { ds } = await dataset(api);
    for (const body of [{}, { document_ids: [] }, { document_ids: 'abc' }, { document_ids: null }]) {
      expect((await api.call('POST', `/datasets/${ds}/documents/parse`, body)).body, JSON.stringify(body)).toEqual({ code: 102, message: '`document_ids` is required' });
    }
    expect((await api.call('POST', '/datasets/invalid_dataset_id/documents/parse', { document_ids: ['x'] })).body).toEqual({
      code: 102, message: "You don't own the dataset invalid_dataset_id.",
    });
    expect((await api.call('POST', `/datasets/${ds}/documents/parse`, undefined, { raw: '{bad', headers: { 'content-type': 'application/json' } })).body).toEqual({
      code: 100, message: "<BadRequest '400: Bad Request'>", data: null,
    });
    // login_required: RAGFlow's 401 envelope, not token_required's.
    for (const key of [null, 'invalid_key_123']) {
      const r = await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ['x'] }, { key });
      expect([r.status, r.body]).toEqual([401, { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null }]);
    }
  });
});

describe('POST /datasets/{id}/documents/stop', () => {
  test('stops running documents; one not running is an entry of errors, not a failure', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    // A document that never ran: an error entry, code 0.
    expect((await api.call('POST', `/datasets/${ds}/documents/stop`, { document_ids: [ids[0]] })).body).toEqual({
      code: 0, data: { success_count: 0, errors: ["Can't stop parsing document that has not started or already completed"] },
    });
    // A big queue keeps some documents RUNNING long enough to stop them.
    const many: Record<string, string> = {};
    for (let i = 0; i < 40; i++) many[`n${i}.md`] = `# Note ${i}\n\n${'The quick brown fox jumps over the lazy dog. '.repeat(200)}`;
    const up = await upload(api, ds, many);
    const queued = up.body.data.map((d: { id: string }) => d.id) as string[];
    expect((await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: queued })).body.code).toBe(0);
    const last = queued[queued.length - 1]!;
    const r = await api.call('POST', `/datasets/${ds}/documents/stop`, { document_ids: [...queued, last] });
    expect(r.body.code).toBe(0);
    // The queue's tail cannot have been parsed yet; any that were are error entries.
    expect(r.body.data.success_count).toBeGreaterThan(20);
    expect(r.body.data.errors[0]).toBe(`Duplicate document ids: ${last}`);
    expect(r.body.data.success_count + r.body.data.errors.length).toBe(queued.length + 1);
    const doc = (await api.call('GET', `/datasets/${ds}/documents?id=${last}`)).body.data.docs[0];
    expect(doc.run).toBe('CANCEL');
    // Stopping a cancelled document again counts as a success (RAGFlow: run in RUNNING or CANCEL).
    expect((await api.call('POST', `/datasets/${ds}/documents/stop`, { document_ids: [last] })).body).toEqual({ code: 0, data: { success_count: 1 } });
  });

  test('unknown ids fail before anything stops; bad bodies and datasets', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    expect((await api.call('POST', `/datasets/${ds}/documents/stop`, { document_ids: [ids[0], 'nope'] })).body).toEqual({ code: 102, message: "Documents not found: ['nope']" });
    expect((await api.call('POST', `/datasets/${ds}/documents/stop`, { document_ids: [] })).body).toEqual({ code: 102, message: '`document_ids` is required' });
    expect((await api.call('POST', `/datasets/${NOT_A_DOC}/documents/stop`, { document_ids: ids })).body).toEqual({ code: 102, message: `You don't own the dataset ${NOT_A_DOC}.` });
    // The SDK's DELETE /chunks keeps RAGFlow's first-failure answers.
    expect((await api.call('DELETE', `/datasets/${ds}/chunks`, { document_ids: ['nope'] })).body).toEqual({ code: 102, message: "You don't own the document nope." });
    expect((await api.call('DELETE', `/datasets/${ds}/chunks`, { document_ids: [ids[0]] })).body).toEqual({
      code: 102, message: "Can't stop parsing document that has not started or already completed", data: { error_code: 'DOC_STOP_PARSING_INVALID_STATE' },
    });
  });
});

describe('listing rules', () => {
  test('documents: an unknown orderby and a negative page fail as RAGFlow\'s query does (code 100); page 0 lists all', async ({ api }) => {
    const { ds } = await dataset(api);
    expect((await api.call('GET', `/datasets/${ds}/documents?orderby=unknown`)).body).toEqual({
      code: 100, message: 'AttributeError("type object \'Document\' has no attribute \'unknown\'")', data: null,
    });
    const neg = (await api.call('GET', `/datasets/${ds}/documents?page=-1&page_size=2`)).body;
    expect(neg.code).toBe(100);
    expect(neg.message).toMatch(/^ProgrammingError\(1064, "You have an error in your SQL syntax; .*near '-2' at line 1"\)$/);
    expect((await api.call('GET', `/datasets/${ds}/documents?page_size=-1`)).body.code).toBe(100);
    expect((await api.call('GET', `/datasets/${ds}/documents?page=0&page_size=1`)).body.data.docs).toHaveLength(2);
    expect((await api.call('GET', `/datasets/${ds}/documents?orderby=name&desc=false`)).body.data.docs.map((d: { name: string }) => d.name)).toEqual(['bread.md', 'tides.md']);
    expect((await api.call('GET', `/datasets/${ds}/documents?page=x`)).body).toEqual({ code: 100, message: 'ValueError("invalid literal for int() with base 10: \'x\'")', data: null });
  });

  test('documents: types and run filters checked as _get_docs_with_request checks them, in its order; id with ids fails as its handler does', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const list = async (qs: string) => (await api.call('GET', `/datasets/${ds}/documents?${qs}`)).body;
    const names = async (qs: string) => (await list(qs)).data.docs.map((d: { name: string }) => d.name).sort();
    // run: names or values, SCHEDULE (5) included; values stripped, empty ones dropped.
    expect(await names('run=SCHEDULE&run=5')).toEqual([]);
    expect(await names('run=%20unstart%20&run=')).toEqual(['bread.md', 'tides.md']);
    expect(await list('run=INVALID_STATUS')).toEqual({ code: 102, message: 'Invalid filter run status conditions: INVALID_STATUS' });
    // types: RAGFlow's file types only.
    expect(await names('types=doc')).toEqual(['bread.md', 'tides.md']);
    expect(await names('types=pdf')).toEqual([]);
    expect(await list('types=pdfx&types=doc')).toEqual({ code: 102, message: 'Invalid filter conditions: pdfx type' });
    expect((await list('types=a&types=b')).message).toMatch(/^Invalid filter conditions: (a, b|b, a) types$/);
    // The order: types, run, then id, then name, then id with ids.
    expect((await list('types=x&run=y')).message).toBe('Invalid filter conditions: x type');
    expect((await list('run=y&id=ghost')).message).toBe('Invalid filter run status conditions: y');
    expect((await list('id=ghost&name=nope.md')).message).toBe("You don't own the document ghost.");
    expect((await list('id=ghost&ids=x')).message).toBe("You don't own the document ghost.");
    expect(await list(`id=${ids[0]}&ids=${ids[1]}`)).toEqual({ code: 100, message: "ValueError('not enough values to unpack (expected 4, got 2)')", data: null });
    // An id, or ids, replace the metadata filter's documents (the other filters still apply).
    await api.call('PATCH', `/datasets/${ds}/documents/${ids[0]}`, { meta_fields: { topic: 'baking' } });
    const none = encodeURIComponent(JSON.stringify({ topic: 'sailing' }));
    expect(await names(`metadata=${none}`)).toEqual([]);
    expect((await names(`metadata=${none}&id=${ids[1]}`)).length).toBe(1);
    expect((await names(`metadata=${none}&ids=${ids[0]}&ids=${ids[1]}&keywords=tides`))).toEqual(['tides.md']);
  });

  test('documents ?type=filter: counts by suffix, run status and metadata value over the filtered documents', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    await api.call('PATCH', `/datasets/${ds}/documents/${ids[0]}`, { meta_fields: { topic: ['baking', 'bread'], year: 2024, note: ' ' } });
    const r = (await api.call('GET', `/datasets/${ds}/documents?type=filter`)).body;
    expect(r).toEqual({
      code: 0, message: 'success',
      data: { total: 2, filter: { suffix: { md: 2 }, run_status: { 0: 2 }, metadata: { topic: { baking: 1, bread: 1 }, year: { 2024: 1 }, empty_metadata: { true: 1 } } } },
    });
    expect((await api.call('GET', `/datasets/${ds}/documents?type=filter&keywords=BREAD`)).body.data).toEqual({
      total: 1, filter: { suffix: { md: 1 }, run_status: { 0: 1 }, metadata: { empty_metadata: { true: 1 } } },
    });
    expect((await api.call('GET', `/datasets/${ds}/documents?type=filter&run=DONE`)).body.data.total).toBe(0);
    expect((await api.call('GET', `/datasets/${ds}/documents?type=filter&types=nope`)).body).toEqual({ code: 102, message: 'Invalid filter conditions: nope type' });
  });

  test('chats, sessions, agents and search apps refuse an unknown orderby and a negative page too', async ({ api }) => {
    const chat = (await api.call('POST', '/chats', { name: 'c' })).body.data.id;
    await api.call('POST', `/chats/${chat}/sessions`, { name: 's' });
    const agent = (await api.call('POST', '/agents', { title: 't', dsl: { components: { begin: { obj: { component_name: 'Begin', params: {} }, downstream: [], upstream: [] } } } })).body.data.id;
    await api.call('POST', '/searches', { name: 'finder' });
    const cases: Array<[string, string]> = [
      ['/chats?orderby=bogus', 'Dialog'], [`/chats/${chat}/sessions?orderby=bogus`, 'Conversation'], ['/agents?orderby=bogus', 'UserCanvas'],
      [`/agents/${agent}/sessions?orderby=bogus`, 'API4Conversation'], ['/searches?orderby=bogus', 'Search'],
    ];
    for (const [path, model] of cases) {
      expect((await api.call('GET', path)).body, path).toEqual({ code: 100, message: `AttributeError("type object '${model}' has no attribute 'bogus'")`, data: null });
    }
    for (const path of ['/chats?page=-1&page_size=5', `/chats/${chat}/sessions?page=-1&page_size=5`, '/agents?page=-2&page_size=5', `/agents/${agent}/sessions?page=-1`, '/searches?page=-1&page_size=5']) {
      const b = (await api.call('GET', path)).body;
      expect([b.code, b.message.slice(0, 22)], path).toEqual([100, 'ProgrammingError(1064,']);
    }
    expect((await api.call('GET', `/chats/${chat}/sessions?page_size=0`)).body.data).toEqual([]);
  });

  test('chunks: a page below 1 is a negative slice (code 100); page_size 0 takes all', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    for (const content of ['alpha one', 'beta two', 'gamma three']) await api.call('POST', `/datasets/${ds}/documents/${ids[0]}/chunks`, { content });
    expect((await api.call('GET', `/datasets/${ds}/documents/${ids[0]}/chunks?page=0`)).body).toEqual({
      code: 100, message: "ValueError('Search does not support negative slicing.')", data: null,
    });
    expect((await api.call('GET', `/datasets/${ds}/documents/${ids[0]}/chunks?page_size=0`)).body.data.chunks).toHaveLength(3);
  });
});

describe('paths with an empty segment (Werkzeug merges the slashes)', () => {
  test('a route there of the same method answers 308 to the merged path; another method 405; none 404', async ({ api, srv }) => {
    const raw = (method: string, path: string) => fetch(`${srv.url}/api/v1${path}`, {
      method, redirect: 'manual', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}',
    });
    const get = await raw('GET', '/datasets//documents?page=1');
    expect(get.status).toBe(308);
    expect(get.headers.get('location')).toBe('/api/v1/datasets/documents?page=1');
    for (const [m, p] of [['DELETE', '/datasets//documents'], ['POST', '/datasets//documents/parse'], ['POST', '/chats//sessions']] as const) {
      const r = await raw(m, p);
      expect([r.status, await r.json()], `${m} ${p}`).toEqual([200, { code: 100, message: "<MethodNotAllowed '405: Method Not Allowed'>", data: null }]);
    }
    expect((await raw('GET', '/nothing//here')).status).toBe(404);
    // A trailing slash is not an empty id: RAGFlow's strict_slashes=False.
    expect((await api.call('GET', '/datasets/')).body.code).toBe(0);
    expect((await api.call('PATCH', '/chats/abc/sessions/', { name: 'x' })).body).toEqual({ code: 100, message: "<MethodNotAllowed '405: Method Not Allowed'>", data: null });
    // Followed (as requests and fetch do), the redirect reaches the merged route.
    const followed = await api.call('GET', '/datasets//documents');
    expect(followed.body).toMatchObject({ code: 102 });
    expect(followed.body.message).toMatch(/lacks permission for dataset 'documents'/);
  });
});

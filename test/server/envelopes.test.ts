/**
 * The REST interface route family by route family: RAGFlow's envelopes (`get_result` vs
 * `get_json_result`, §1), codes and HTTP statuses, for a happy path and the errors.
 */
import { describe, expect } from 'vitest';
import { test, upload, parsedDataset } from './fixtures.js';

const NOT_A_UUID = '0'.repeat(32);

describe('datasets (get_result)', () => {
  test('create / list / update / delete', async ({ api }) => {
    const c = await api.call('POST', '/datasets', { name: 'kb', avatar: null, description: null, embedding_model: null, permission: 'me', chunk_method: 'naive' });
    expect(c.status).toBe(200);
    expect(Object.keys(c.body)).toEqual(['code', 'data']);
    expect(c.body.data).toEqual(expect.objectContaining({ name: 'kb', chunk_method: 'naive', document_count: 0 }));
    const id = c.body.data.id;

    const l = await api.call('GET', '/datasets?page=1&page_size=30&orderby=create_time&desc=True');
    expect(l.body).toEqual({ code: 0, data: [expect.objectContaining({ id, name: 'kb' })], total_datasets: 1 });
    expect((await api.call('GET', `/datasets?id=${id}`)).body.data).toHaveLength(1);

    const u = await api.call('PUT', `/datasets/${id}`, { name: 'kb2' });
    expect(u.body).toEqual({ code: 0, data: expect.objectContaining({ id, name: 'kb2' }) });

    const d = await api.call('DELETE', '/datasets', { ids: [id], delete_all: false });
    expect(d.body).toEqual({ code: 0, data: { success_count: 1 } });
  });

  test('whole numbers RAGFlow writes as floats stay floats on the wire (parser_config.graphrag retry back-offs)', async ({ api }) => {
    const created = await api.call('POST', '/datasets', { name: 'floats', description: '"retry_backoff_seconds":3,' });
    expect(created.text).toContain('"retry_backoff_seconds":2.0,"retry_backoff_max_seconds":60.0,');
    expect(created.text).toContain('"description":"\\"retry_backoff_seconds\\":3,"'); // inside a string: left alone
    const listed = await api.call('GET', '/datasets?name=floats');
    expect(listed.text).toContain('"retry_backoff_seconds":2.0');
    expect(listed.body.data[0].parser_config.graphrag.retry_backoff_max_seconds).toBe(60);
  });

  test('errors are {code, message} with no data', async ({ api }) => {
    expect((await api.call('POST', '/datasets', { name: '' })).body).toEqual({
      code: 101, message: 'Field: <name> - Message: <String should have at least 1 character> - Value: <>',
    });
    expect((await api.call('POST', '/datasets', { name: 'x', foo: 1 })).body).toEqual({
      code: 101, message: 'Field: <foo> - Message: <Extra inputs are not permitted> - Value: <1>',
    });
    const other = (await api.call('GET', '/datasets?name=nope')).body;
    expect(other.code).toBe(102);
    expect(other.message).toMatch(/^User '[0-9a-f]{32}' lacks permission for dataset 'nope'$/);
    expect(Object.keys(other)).toEqual(['code', 'message']);
    expect((await api.call('PUT', `/datasets/${NOT_A_UUID}`, {})).body.code).toBe(101);
    // Pydantic lax parsing of the query: "2" is an int, "abc" is not; unknown keys are extras.
    expect((await api.call('GET', '/datasets?page_size=2')).body.code).toBe(0);
    expect((await api.call('GET', '/datasets?page=abc')).body).toEqual({ code: 101, message: 'Field: <page> - Message: <Input should be a valid integer, unable to parse string as an integer> - Value: <abc>' });
    expect((await api.call('GET', '/datasets?foo=1')).body).toEqual({ code: 101, message: 'Field: <foo> - Message: <Extra inputs are not permitted> - Value: <1>' });
  });

  test('strict JSON: content type, malformed JSON and non-object payloads are 101', async ({ api }) => {
    expect((await api.call('POST', '/datasets', undefined, { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).body).toEqual({
      code: 101, message: 'Unsupported content type: Expected application/json, got application/x-www-form-urlencoded',
    });
    expect((await api.call('DELETE', '/datasets')).body).toEqual({ code: 101, message: 'Unsupported content type: Expected application/json, got None' });
    expect((await api.call('POST', '/datasets', undefined, { raw: '{"name": "x",', headers: { 'content-type': 'application/json' } })).body).toEqual({
      code: 101, message: 'Malformed JSON syntax: Missing commas/brackets or invalid encoding',
    });
    expect((await api.call('POST', '/datasets', [1])).body).toEqual({ code: 101, message: 'Invalid request payload: expected object, got list' });
    expect((await api.call('POST', '/datasets', 'x')).body).toEqual({ code: 101, message: 'Invalid request payload: expected object, got str' });
    // A falsy payload is `{}`: deleting nothing succeeds.
    expect((await api.call('DELETE', '/datasets', [])).body).toEqual({ code: 0, data: { success_count: 0 } });
  });
});

describe('documents', () => {
  test('list is get_json_result; update / delete are get_result; query strings are cast like RAGFlow', async ({ api }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'kb' })).body.data.id;
    const up = await upload(api, ds, { 'a.txt': 'alpha', 'b.md': '# beta' });
    const [a, b] = up.body.data;
    const l = await api.call('GET', `/datasets/${ds}/documents?page=1&page_size=30&orderby=create_time&desc=false&keywords=&create_time_from=0&create_time_to=0`);
    expect(l.body).toEqual({ code: 0, message: 'success', data: { total: 2, docs: [expect.objectContaining({ id: a.id }), expect.objectContaining({ id: b.id })] } });
    expect((await api.call('GET', `/datasets/${ds}/documents?ids=${b.id}&ids=${a.id}`)).body.data.total).toBe(2);
    expect((await api.call('GET', `/datasets/${ds}/documents?suffix=md`)).body.data.docs.map((d: { id: string }) => d.id)).toEqual([b.id]);
    expect((await api.call('GET', `/datasets/${ds}/documents?run=UNSTART&run=DONE`)).body.data.total).toBe(2);
    expect((await api.call('GET', `/datasets/${ds}/documents?run=BOGUS`)).body).toEqual({ code: 102, message: 'Invalid filter run status conditions: BOGUS' });
    expect((await api.call('GET', `/datasets/${ds}/documents?page=x`)).body).toEqual({
      code: 100, message: 'ValueError("invalid literal for int() with base 10: \'x\'")', data: null,
    });
    expect((await api.call('GET', `/datasets/${NOT_A_UUID}/documents`)).body).toEqual({ code: 102, message: `You don't own the dataset ${NOT_A_UUID}. ` });

    const u = await api.call('PATCH', `/datasets/${ds}/documents/${a.id}`, { name: 'a2.txt' });
    expect(u.body).toEqual({ code: 0, data: expect.objectContaining({ id: a.id, name: 'a2.txt' }) });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${a.id}`, { name: 'a2.pdf' })).body).toEqual({ code: 101, message: "The extension of file can't be changed" });

    expect((await api.call('DELETE', `/datasets/${ds}/documents`, { ids: null, delete_all: false })).body).toEqual({
      code: 102, message: `should either provide doc ids or set delete_all(true), dataset: ${ds}. `,
    });
    expect((await api.call('DELETE', `/datasets/${ds}/documents`, { ids: [a.id] })).body).toEqual({ code: 0, data: { deleted: 1 } });
  });

  test('upload errors: no file part, unsupported type (code 500), unknown dataset', async ({ api }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'kb' })).body.data.id;
    expect((await api.call('POST', `/datasets/${ds}/documents`, {})).body).toEqual({ code: 101, message: 'No file part!' });
    expect((await upload(api, ds, { 'x.exe': 'MZ' })).body).toEqual({ code: 500, message: 'x.exe: This type of file has not been supported yet!' });
    expect((await upload(api, NOT_A_UUID, { 'a.txt': 'a' })).body).toEqual({ code: 102, message: `Can't find the dataset with ID ${NOT_A_UUID}!` });
  });
});

describe('parsing, chunks and retrieval (token_required routes and get_result)', () => {
  test('parse, stop-parse, chunk add / list / update / delete, retrieve', async ({ api }) => {
    const { datasetId: ds, docIds: [doc] } = await parsedDataset(api);

    const stop = await api.call('DELETE', `/datasets/${ds}/chunks`, { document_ids: [doc] });
    expect(stop.body).toEqual({
      code: 102, message: "Can't stop parsing document that has not started or already completed", data: { error_code: 'DOC_STOP_PARSING_INVALID_STATE' },
    });
    expect((await api.call('POST', `/datasets/${ds}/chunks`, { document_ids: [] })).body).toEqual({ code: 102, message: '`document_ids` is required' });

    const add = await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: 'Lunar tides follow the moon.', important_keywords: ['moon'], questions: [] });
    expect(add.body).toEqual({ code: 0, data: { chunk: expect.objectContaining({ content: 'Lunar tides follow the moon.', document_id: doc }) } });
    const cid = add.body.data.chunk.id;
    expect((await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: ' ' })).body).toEqual({ code: 102, message: '`content` is required' });

    const list = await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?page=1&page_size=30&keywords=&id=`);
    expect(list.body.code).toBe(0);
    expect(Object.keys(list.body)).toEqual(['code', 'data']);
    expect(list.body.data.total).toBeGreaterThanOrEqual(2);
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?id=${cid}`)).body.data.chunks[0].id).toBe(cid);
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?page_size=two`)).body.code).toBe(100);

    // get_result drops the data of these: `{"code":0}`.
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks/${cid}`, { content: 'Lunar tides follow the moon closely.' })).body).toEqual({ code: 0 });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks/nope`, {})).body).toEqual({ code: 102, message: "Can't find this chunk nope" });

    const r = await api.call('POST', '/retrieval', {
      page: 1, page_size: 30, similarity_threshold: 0.2, vector_similarity_weight: 0.3, top_k: 1024, rerank_id: null, keyword: false,
      question: 'moon tides', dataset_ids: [ds], document_ids: [], cross_languages: null, metadata_condition: null, use_kg: false, toc_enhance: false,
    });
    expect(r.body.code).toBe(0);
    expect(r.body.data.chunks.length).toBeGreaterThan(0);
    expect(r.body.data.chunks[0]).toEqual(expect.objectContaining({ similarity: expect.any(Number), dataset_id: ds }));
    expect((await api.call('POST', '/retrieval', { dataset_ids: [ds], question: '' })).body).toEqual({ code: 0, data: { total: 0, chunks: [], doc_aggs: {} } });
    expect((await api.call('POST', '/retrieval', { question: 'x' })).body).toEqual({ code: 102, message: '`dataset_ids` is required.' });

    expect((await api.call('DELETE', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: [cid], delete_all: false })).body).toEqual({ code: 0 });
    expect((await api.call('DELETE', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: [cid] })).body).toEqual({ code: 102, message: 'rm_chunk deleted chunks 0, expect 1' });
  });
});

describe('chats and sessions (get_json_result)', () => {
  test('create / list / get / update / sessions / delete', async ({ api }) => {
    const c = await api.call('POST', '/chats', { name: 'helper', icon: '', dataset_ids: [] });
    expect(c.body).toEqual({ code: 0, message: 'success', data: expect.objectContaining({ name: 'helper' }) });
    const id = c.body.data.id;
    expect((await api.call('GET', '/chats?page=1&page_size=30&orderby=create_time&desc=true')).body).toEqual({
      code: 0, message: 'success', data: { chats: [expect.objectContaining({ id })], total: 1 },
    });
    expect((await api.call('GET', `/chats/${id}`)).body.data.id).toBe(id);
    expect((await api.call('PATCH', `/chats/${id}`, { name: 'helper 2' })).body).toEqual({ code: 0, message: 'success', data: expect.objectContaining({ name: 'helper 2' }) });

    const s = await api.call('POST', `/chats/${id}/sessions`, { name: 'first' });
    expect(s.body).toEqual({ code: 0, message: 'success', data: expect.objectContaining({ name: 'first', chat_id: id }) });
    expect((await api.call('GET', `/chats/${id}/sessions?page=1&page_size=30&orderby=create_time&desc=True`)).body.data).toHaveLength(1);
    expect((await api.call('GET', `/chats/${id}/sessions?page_size=0`)).body.data).toEqual([]);
    expect((await api.call('PATCH', `/chats/${id}/sessions/${s.body.data.id}`, { name: 'renamed' })).body.data.name).toBe('renamed');
    expect((await api.call('PATCH', `/chats/${id}/sessions/${s.body.data.id}`, { messages: [] })).body).toEqual({ code: 102, message: '`messages` cannot be changed.' });

    // A partial delete: success, with the message in the envelope.
    const del = await api.call('DELETE', `/chats/${id}/sessions`, { ids: [s.body.data.id, 'nope'] });
    expect(del.body).toEqual({ code: 0, message: 'Partially deleted 1 sessions with 1 errors', data: { success_count: 1, errors: ["The chat doesn't own the session nope"] } });
    expect((await api.call('DELETE', '/chats', { ids: [id], delete_all: false })).body).toEqual({ code: 0, message: 'success', data: { success_count: 1 } });
    expect((await api.call('DELETE', '/chats', { ids: [id] })).body).toEqual({ code: 102, message: `Chat(${id}) not found.` });
  });

  test('errors: 102 {code, message}; No authorization. carries data: false; unhandled casts are code 100', async ({ api }) => {
    expect((await api.call('POST', '/chats', { name: '' })).body).toEqual({ code: 102, message: '`name` is required.' });
    expect((await api.call('GET', `/chats/${NOT_A_UUID}`)).body).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect((await api.call('POST', `/chats/${NOT_A_UUID}/sessions`, {})).body).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect((await api.call('GET', '/chats?owner_ids=someone')).body).toEqual({ code: 103, message: 'Only authorized owner_ids can be queried.', data: false });
    expect((await api.call('GET', '/chats?page=one')).body).toEqual({ code: 100, message: 'ValueError("invalid literal for int() with base 10: \'one\'")', data: null });
  });

  test('lenient JSON bodies: malformed → 100 BadRequest; non-objects → 100 TypeError / AttributeError; forms are read', async ({ api }) => {
    const bad = await api.call('POST', '/chats', undefined, { raw: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({ code: 100, message: "<BadRequest '400: Bad Request'>", data: null });
    expect((await api.call('POST', '/chats', [1])).body).toEqual({ code: 100, message: "TypeError('JSON payload must be an object.')", data: null });
    expect((await api.call('POST', '/chats', 'x')).body).toEqual({ code: 100, message: 'AttributeError("\'str\' object has no attribute \'get\'")', data: null });
    expect((await api.call('POST', '/chats', undefined, { raw: 'hello', headers: { 'content-type': 'text/plain' } })).body).toEqual({
      code: 100, message: "TypeError('Request body is not a valid form payload.')", data: null,
    });
    const form = await api.call('POST', '/chats', undefined, { raw: 'name=from+a+form', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.body.data.name).toBe('from a form');
  });
});

describe('memories and messages (get_json_result, message: true)', () => {
  test('create / list / config / update / messages / delete', async ({ api }) => {
    const m = await api.call('POST', '/memories', { name: 'notes', memory_type: ['raw'], embd_id: 'ragloom-static-en-256@Builtin', llm_id: 'ragloom-extractive@Builtin' });
    expect(m.body).toEqual({ code: 0, message: true, data: expect.objectContaining({ name: 'notes', memory_type: ['raw'] }) });
    const id = m.body.data.id;
    expect((await api.call('GET', '/memories?page=1&page_size=50')).body).toEqual({ code: 0, message: true, data: { memory_list: [expect.objectContaining({ id })], total_count: 1 } });
    expect((await api.call('GET', `/memories/${id}/config`)).body.data.id).toBe(id);
    expect((await api.call('PUT', `/memories/${id}`, { description: 'd' })).body).toEqual({ code: 0, message: true, data: expect.objectContaining({ description: 'd' }) });

    const add = await api.call('POST', '/messages', { memory_id: [id], agent_id: 'a1', session_id: 's1', user_input: 'I like tea.', agent_response: 'Noted: tea.', user_id: '' });
    expect(add.body).toEqual({ code: 0, message: 'All add to task.', data: null });
    const recent = await api.call('GET', `/messages?memory_id=${id}&limit=10`);
    expect(recent.body.code).toBe(0);
    expect(recent.body.message).toBe(true);
    const mid = recent.body.data[0].message_id;
    const listed = await api.call('GET', `/memories/${id}?agent_id=a1&page=1&page_size=50`);
    expect(listed.body.data.messages.total_count).toBe(1);
    const search = await api.call('GET', `/messages/search?memory_id=${id}&query=tea&similarity_threshold=0&keywords_similarity_weight=0.7&top_n=10`);
    expect(search.body).toEqual({ code: 0, message: true, data: [expect.objectContaining({ message_id: mid })] });
    expect((await api.call('GET', `/messages/${id}:${mid}/content`)).body.data.content).toContain('I like tea.');
    expect((await api.call('PUT', `/messages/${id}:${mid}`, { status: false })).body).toEqual({ code: 0, message: true, data: null });
    expect((await api.call('DELETE', `/messages/${id}:${mid}`, {})).body).toEqual({ code: 0, message: true, data: null });

    expect((await api.call('DELETE', `/memories/${id}`, {})).body).toEqual({ code: 0, message: true, data: null });
  });

  test('errors: validate_request 101 with data null; argument errors bare; not found 404 with data null', async ({ api }) => {
    expect((await api.call('POST', '/memories', { name: 'x' })).body).toEqual({ code: 101, message: 'required argument are missing: memory_type,embd_id,llm_id; ', data: null });
    expect((await api.call('POST', '/memories', { name: ' ', memory_type: ['raw'], embd_id: 'ragloom-static-en-256@Builtin', llm_id: 'ragloom-extractive@Builtin' })).body).toEqual({
      code: 101, message: 'Memory name cannot be empty or whitespace.',
    });
    expect((await api.call('GET', `/memories/${NOT_A_UUID}/config`)).body).toEqual({ code: 404, message: `Memory '${NOT_A_UUID}' not found.`, data: null });
    expect((await api.call('GET', '/messages')).body).toEqual({ code: 101, message: 'memory_ids is required.' });
    expect((await api.call('PUT', `/messages/${NOT_A_UUID}:1`, {})).body).toEqual({ code: 101, message: 'required argument are missing: status; ', data: null });
    expect((await api.call('PUT', `/messages/${NOT_A_UUID}:1`, { status: 'yes' })).body).toEqual({ code: 101, message: 'Status must be a boolean.' });
    expect((await api.call('GET', '/messages/search?memory_id=x&top_n=many')).body).toEqual({
      code: 100, message: 'ValueError("invalid literal for int() with base 10: \'many\'")', data: null,
    });
  });
});

describe('transport errors', () => {
  test('unknown route → 404 RAGFlow body; a known path with another method → 405 as code 100', async ({ api }) => {
    const nf = await api.call('GET', '/nowhere/at/all', undefined, { key: null });
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ code: 404, message: 'Not Found: /api/v1/nowhere/at/all', data: null, error: 'Not Found' });
    const root = await fetch(api.base.replace('/api/v1', '/'));
    expect(root.status).toBe(404);
    expect(await root.json()).toEqual({ code: 404, message: 'Not Found: /', data: null, error: 'Not Found' });
    const wrong = await api.call('PATCH', '/datasets', {});
    expect(wrong.status).toBe(200);
    expect(wrong.body).toEqual({ code: 100, message: "<MethodNotAllowed '405: Method Not Allowed'>", data: null });
    // Trailing slashes are tolerated (RAGFlow: strict_slashes = False).
    expect((await api.call('GET', '/datasets/')).body.code).toBe(0);
  });

  test('a body over bodyLimit → HTTP 413', async ({ serve }) => {
    const srv = await serve({ bodyLimit: 1024 });
    const res = await fetch(`${srv.url}/api/v1/chats`, {
      method: 'POST', headers: { authorization: `Bearer ${srv.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(4096) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 100, message: "<RequestEntityTooLarge '413: Request Entity Too Large'>", data: null });
  });
});

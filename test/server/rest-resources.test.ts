/**
 * Issue 34, items 2 and 4, over HTTP with RAGFlow 0.25.6's request shapes: single-resource reads
 * and deletes (a dataset, a chunk, a document by id, a chat, an agent session, a session's
 * messages), and the chunk behaviours RAGFlow's clients rely on (counts, duplicate deletes,
 * `keywords`, `available`, switching chunks, chunk images).
 */
import { describe, expect } from 'vitest';
import { test, upload, parsedDataset, type Http } from './fixtures.js';

const NOT_AN_ID = '0'.repeat(32);
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

async function docWithChunks(api: Http): Promise<{ ds: string; doc: string; chunks: string[] }> {
  const ds = (await api.call('POST', '/datasets', { name: 'kb' })).body.data.id as string;
  const doc = (await upload(api, ds, { 'ragflow_test_upload_0.txt': 'This is the content of a test TXT file.' })).body.data[0].id as string;
  const chunks: string[] = [];
  chunks.push((await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: 'ragflow test upload' })).body.data.chunk.id);
  for (let i = 0; i < 4; i++) chunks.push((await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: `chunk test ${i}` })).body.data.chunk.id);
  return { ds, doc, chunks };
}

describe('single resources', () => {
  test('GET /datasets/{id}: the dataset with size and connectors; another tenant\'s or an unknown one is 102', async ({ api }) => {
    const { datasetId } = await parsedDataset(api);
    const r = await api.call('GET', `/datasets/${datasetId}`);
    expect(r.body.code).toBe(0);
    expect(r.body.data).toMatchObject({ id: datasetId, name: 'science', document_count: 2, connectors: [] });
    expect(r.body.data.size).toBeGreaterThan(100);
    const bad = (await api.call('GET', `/datasets/${NOT_AN_ID}`)).body;
    expect(bad.code).toBe(102);
    expect(bad.message).toMatch(new RegExp(`^User '[0-9a-f]{32}' lacks permission for dataset '${NOT_AN_ID}'$`));
    const other = (await api.call('POST', '/users', { email: 'o@example.com', nickname: 'o' })).body.data.api_key;
    expect((await api.call('GET', `/datasets/${datasetId}`, undefined, { key: other })).body.code).toBe(102);
  });

  test('GET …/chunks/{chunk_id}: the stored chunk with RAGFlow\'s index names; unknown → 102 Chunk not found!', async ({ api }) => {
    const { ds, doc, chunks } = await docWithChunks(api);
    const r = (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks/${chunks[1]}`)).body;
    expect(r.code).toBe(0);
    expect(r.data).toMatchObject({ id: chunks[1], doc_id: doc, kb_id: ds, content_with_weight: 'chunk test 0', available_int: 1, docnm_kwd: 'ragflow_test_upload_0.txt' });
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks/nope`)).body).toEqual({ code: 102, message: 'Chunk not found!' });
    expect((await api.call('GET', `/datasets/${ds}/documents/${NOT_AN_ID}/chunks/${chunks[0]}`)).body).toEqual({ code: 102, message: `You don't own the document ${NOT_AN_ID}.` });
    expect((await api.call('GET', `/datasets/${NOT_AN_ID}/documents/${doc}/chunks/${chunks[0]}`)).body).toEqual({ code: 102, message: `You don't own the dataset ${NOT_AN_ID}.` });
  });

  test('GET /documents/{id} and /documents/{id}/preview: the bytes, as a download and with their type', async ({ api, srv }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'kb' })).body.data.id;
    const [md, page] = (await upload(api, ds, { 'a.md': '# A\n\ntext', 'b.html': '<p>hi</p>' })).body.data.map((d: { id: string }) => d.id);
    const get = (p: string, key = api.key) => fetch(`${srv.url}/api/v1${p}`, { headers: { authorization: `Bearer ${key}` } });
    const dl = await get(`/documents/${md}`);
    expect([dl.status, dl.headers.get('content-type'), dl.headers.get('content-disposition'), await dl.text()]).toEqual([200, 'application/octet-stream', 'attachment; filename=a.md', '# A\n\ntext']);
    const pv = await get(`/documents/${md}/preview`);
    expect([pv.headers.get('content-type'), pv.headers.get('content-disposition'), await pv.text()]).toEqual(['text/markdown', null, '# A\n\ntext']);
    // A page is never shown inline (it would run in the caller's origin).
    const html = await get(`/documents/${page}/preview`);
    expect([html.headers.get('content-type'), html.headers.get('content-disposition'), html.headers.get('x-content-type-options')]).toEqual(['text/html', 'attachment', 'nosniff']);
    expect((await api.call('GET', `/document/get/${md}`)).text).toBe('# A\n\ntext');
    expect((await api.call('GET', `/documents/${NOT_AN_ID}`)).body).toEqual({ code: 102, message: `The dataset not own the document ${NOT_AN_ID}.` });
    expect((await api.call('GET', `/documents/${NOT_AN_ID}/preview`)).body).toEqual({ code: 102, message: 'Document not found!' });
    const other = (await api.call('POST', '/users', { email: 'p@example.com', nickname: 'p' })).body.data.api_key;
    expect((await get(`/documents/${md}`, other)).status).toBe(200); // an envelope, HTTP 200 …
    expect(await (await get(`/documents/${md}`, other)).json()).toEqual({ code: 102, message: `The dataset not own the document ${md}.` }); // … refusing
  });

  test('GET /datasets/{id}/documents/{doc}: an unknown or another tenant\'s dataset answers as an unknown document (document_api.download looks the pair up)', async ({ api }) => {
    const ds = (await api.call('POST', '/datasets', { name: 'kb' })).body.data.id;
    const doc = (await upload(api, ds, { 'a.txt': 'one' })).body.data[0].id;
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}`)).text).toBe('one');
    expect((await api.call('GET', `/datasets/${NOT_AN_ID}/documents/${doc}`)).body).toEqual({ code: 102, message: `The dataset not own the document ${doc}.` });
    const other = (await api.call('POST', '/users', { email: 'd@example.com', nickname: 'd' })).body.data.api_key;
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}`, undefined, { key: other })).body).toEqual({ code: 102, message: `The dataset not own the document ${doc}.` });
  });

  test('DELETE /chats/{id}: soft-deletes one chat; another tenant\'s is 109', async ({ api }) => {
    const chat = (await api.call('POST', '/chats', { name: 'c' })).body.data.id;
    expect((await api.call('DELETE', `/chats/${chat}`)).body).toEqual({ code: 0, message: 'success', data: true });
    expect((await api.call('GET', `/chats/${chat}`)).body).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect((await api.call('DELETE', `/chats/${chat}`)).body).toEqual({ code: 109, message: 'No authorization.', data: false });
  });

  test('DELETE /agents/{id}/sessions/{session_id}: data is how many went; no access is 103', async ({ api }) => {
    const dsl = { components: { begin: { obj: { component_name: 'Begin', params: { prologue: 'Hi' } }, downstream: [], upstream: [] } } };
    const agent = (await api.call('POST', '/agents', { title: 'a', dsl })).body.data.id;
    const s = (await api.call('POST', `/agents/${agent}/sessions`, {})).body.data.id;
    expect((await api.call('DELETE', `/agents/${agent}/sessions/${s}`)).body).toEqual({ code: 0, message: 'success', data: 1 });
    expect((await api.call('DELETE', `/agents/${agent}/sessions/${s}`)).body).toEqual({ code: 0, message: 'success', data: 0 });
    expect((await api.call('GET', `/agents/${agent}/sessions/${s}`)).body).toEqual({ code: 102, message: 'Session not found!' });
    expect((await api.call('DELETE', `/agents/${NOT_AN_ID}/sessions/${s}`)).body).toEqual({ code: 103, message: 'Make sure you have permission to access the agent.', data: false });
  });

  test('session messages: feedback on an answer, deleting a question with its answer', async ({ api }) => {
    const chat = (await api.call('POST', '/chats', { name: 'c' })).body.data.id;
    const session = (await api.call('POST', `/chats/${chat}/sessions`, { name: 's' })).body.data.id;
    const ans = (await api.call('POST', `/chats/${chat}/completions`, { question: 'hello', session_id: session, stream: false })).body.data;
    const fb = await api.call('PUT', `/chats/${chat}/sessions/${session}/messages/${ans.id}/feedback`, { thumbup: false, feedback: 'wrong' });
    expect(fb.body.code).toBe(0);
    expect(fb.body.data.messages.at(-1)).toMatchObject({ role: 'assistant', id: ans.id, thumbup: false, feedback: 'wrong' });
    expect((await api.call('PUT', `/chats/${chat}/sessions/${session}/messages/${ans.id}/feedback`, { thumbup: 'yes' })).body).toEqual({ code: 102, message: 'thumbup must be a boolean' });
    expect((await api.call('PUT', `/chats/${chat}/sessions/nope/messages/${ans.id}/feedback`, { thumbup: true })).body).toEqual({ code: 102, message: 'Session not found!' });
    const del = await api.call('DELETE', `/chats/${chat}/sessions/${session}/messages/${ans.id}`);
    expect(del.body.code).toBe(0);
    expect(del.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['assistant']); // the prologue is left
    expect((await api.call('DELETE', `/chats/${NOT_AN_ID}/sessions/${session}/messages/${ans.id}`)).body).toEqual({ code: 109, message: 'No authorization.', data: false });
  });
});

describe('chunk behaviours', () => {
  test('adding the same content again counts again (RAGFlow\'s increment_chunk_num); deletes count down', async ({ api }) => {
    const { ds, doc } = await docWithChunks(api);
    const count = async () => (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks`)).body.data.doc.chunk_count as number;
    expect(await count()).toBe(5);
    const again = (await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: 'chunk test 0' })).body.data.chunk.id;
    expect(await count()).toBe(6);
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks`)).body.data.total).toBe(5);
    expect((await api.call('DELETE', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: [again] })).body).toEqual({ code: 0 });
    expect(await count()).toBe(5);
    expect((await api.call('GET', `/datasets/${ds}`)).body.data.chunk_count).toBe(5);
  });

  test('deleting a list with duplicate ids answers {success_count, errors}; unknown ids fail after the found ones go', async ({ api }) => {
    const { ds, doc, chunks } = await docWithChunks(api);
    const r = await api.call('DELETE', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: [...chunks.slice(1), ...chunks.slice(1)] });
    expect(r.body).toEqual({ code: 0, data: { success_count: 4, errors: chunks.slice(1).map((c) => `Duplicate chunk ids: ${c}`) } });
    const left = (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks`)).body.data;
    expect([left.total, left.chunks.length]).toEqual([1, 1]);
    expect((await api.call('DELETE', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: [chunks[0], 'invalid_id'] })).body).toEqual({ code: 102, message: 'rm_chunk deleted chunks 1, expect 2' });
    expect((await api.call('DELETE', `/datasets/${ds}/documents/${doc}/chunks`, {})).body).toEqual({ code: 0 });
  });

  test('keywords match an added chunk\'s own text (it has no title terms, as in RAGFlow)', async ({ api }) => {
    const { ds, doc } = await docWithChunks(api);
    const n = async (q: string) => (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?keywords=${encodeURIComponent(q)}`)).body.data.chunks.length;
    expect(await n('')).toBe(5);
    expect(await n('chunk')).toBe(4);
    expect(await n('ragflow')).toBe(1); // the document's name holds it too: added chunks have no title terms
    expect(await n('1')).toBe(1);
    expect(await n('unknown')).toBe(0);
  });

  test('available: int() of the value as RAGFlow reads it; the listing filters on it; PATCH …/chunks switches many', async ({ api }) => {
    const { ds, doc, chunks } = await docWithChunks(api);
    const path = `/datasets/${ds}/documents/${doc}/chunks/${chunks[1]}`;
    for (const v of [true, 1, false, 0, '1']) expect((await api.call('PATCH', path, { available: v })).body, String(v)).toEqual({ code: 0 });
    expect((await api.call('PATCH', path, { available: 'True' })).body).toEqual({ code: 100, message: 'ValueError("invalid literal for int() with base 10: \'True\'")', data: null });
    expect((await api.call('PATCH', path, { available: null })).body).toEqual({
      code: 100, message: 'TypeError("int() argument must be a string, a bytes-like object or a real number, not \'NoneType\'")', data: null,
    });
    expect((await api.call('PATCH', path, { available: false })).body).toEqual({ code: 0 });
    const off = (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?available=false`)).body.data;
    expect(off.chunks.map((c: { id: string }) => c.id)).toEqual([chunks[1]]);
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?available=true`)).body.data.total).toBe(4);
    // The batch switch.
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: chunks, available_int: 0 })).body).toEqual({ code: 0, data: true });
    expect((await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?available=false`)).body.data.total).toBe(5);
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: chunks, available: true })).body).toEqual({ code: 0, data: true });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: [] })).body).toEqual({ code: 102, message: '`chunk_ids` is required.' });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: chunks })).body).toEqual({ code: 102, message: '`available_int` or `available` is required.' });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}/chunks`, { chunk_ids: ['nope'], available: true })).body).toEqual({ code: 102, message: 'Index updating failure' });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${NOT_AN_ID}/chunks`, { chunk_ids: chunks, available: true })).body).toEqual({ code: 102, message: 'Document not found!' });
  });

  test('a chunk added with image_base64 keeps its image: /documents/images/{dataset}-{chunk} serves it (no key, as RAGFlow)', async ({ api, srv }) => {
    const { ds, doc } = await docWithChunks(api);
    const c = (await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: 'a red pixel', image_base64: PNG.toString('base64') })).body.data.chunk;
    expect(c.image_id).toBe(`${ds}-${c.id}`);
    const img = await fetch(`${srv.url}/api/v1/documents/images/${c.image_id}`);
    expect([img.status, img.headers.get('content-type')]).toEqual([200, 'image/JPEG']);
    expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    const listed = (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks?id=${c.id}`)).body.data.chunks[0];
    expect(listed.image_id).toBe(c.image_id);
    expect(await (await fetch(`${srv.url}/api/v1/documents/images/${ds}-nope`)).json()).toEqual({ code: 102, message: 'Image not found.' });
    expect(await (await fetch(`${srv.url}/api/v1/documents/images/nodash`)).json()).toEqual({ code: 102, message: 'Image not found.' });
    expect((await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content: 'x', image_base64: 'abc' })).body).toEqual({ code: 100, message: "Error('Incorrect padding')", data: null });
  });
});

/**
 * Issue 34, items 7 and 8 (the dataset routes), over HTTP with RAGFlow 0.25.6's request shapes:
 * the dataset update (echo, embedding change, parent/child delimiter, validation wording and
 * codes), tags, the dataset search (retrieval test), the knowledge-graph / RAPTOR / mind-map index
 * routes with their older names, re-embedding and the embedding check, and ingestion logs.
 */
import { describe, expect } from 'vitest';
import { test, upload, waitParsed, parsedDataset, DOCS, type Http } from './fixtures.js';

const UNAUTHORIZED = { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null };

async function emptyDataset(api: Http, name = 'kb'): Promise<string> {
  return (await api.call('POST', '/datasets', { name })).body.data.id as string;
}

describe('PUT /datasets/{id} (item 7)', () => {
  test('echoes every field it accepted, connectors included; GET /datasets/{id} reads the same', async ({ api }) => {
    const ds = await emptyDataset(api);
    const r = await api.call('PUT', `/datasets/${ds}`, { name: 'renamed', description: 'd', language: 'English', pagerank: 5, connectors: [{ id: 'c1', auto_parse: '1' }] });
    expect(r.body.code).toBe(0);
    expect(r.body.data).toMatchObject({ id: ds, name: 'renamed', description: 'd', language: 'English', pagerank: 5, connectors: [{ id: 'c1', auto_parse: '1' }] });
    expect((await api.call('PUT', `/datasets/${ds}`, { name: 'again', connectors: [] })).body.data.connectors).toEqual([]);
    const got = (await api.call('GET', `/datasets/${ds}`)).body.data;
    expect(got).toMatchObject({ id: ds, name: 'again', description: 'd', pagerank: 5, connectors: [] });
    expect((await api.call('PUT', `/datasets/${ds}`, { connectors: 'x' })).body).toMatchObject({ code: 101, message: expect.stringContaining('Input should be a valid list') });
  });

  test('the embedding model may change over existing chunks (0.25.6); POST …/embedding re-embeds them', async ({ api }) => {
    const { datasetId: ds, docIds } = await parsedDataset(api);
    expect((await api.call('GET', `/datasets/${ds}`)).body.data.chunk_count).toBeGreaterThan(0);
    const r = await api.call('PUT', `/datasets/${ds}`, { embedding_model: 'ragloom-static-en-128@Builtin' });
    expect([r.body.code, r.body.data?.embedding_model]).toEqual([0, 'ragloom-static-en-128@Builtin']);
    expect((await api.call('PUT', `/datasets/${ds}`, { embedding_model: 'nope@OpenAI' })).body).toMatchObject({ code: 102, message: expect.stringMatching(/^Unsupported model: <?nope@OpenAI>?$/) });
    // The stored vectors were made by the old model: the check says they differ (code 10), then re-embedding fixes that.
    const before = await api.call('POST', `/datasets/${ds}/embedding/check`, { embd_id: 'ragloom-static-en-128@Builtin', check_num: 3 });
    expect(before.body).toEqual({ code: 102, message: 'Embedding failure. The dimension (128) of given embedding model is different from the original (256)' });
    const run = await api.call('POST', `/datasets/${ds}/embedding`);
    expect(run.body).toEqual({ code: 0, data: { scheduled_count: 2 } });
    await waitParsed(api, ds, docIds);
    const after = await api.call('POST', `/datasets/${ds}/embedding/check`, { embd_id: 'ragloom-static-en-128@Builtin', check_num: 3 });
    expect(after.body.code, after.text).toBe(0);
    const chunks = (await api.call('GET', `/datasets/${ds}`)).body.data.chunk_count;
    expect(after.body.data.summary).toMatchObject({ kb_id: ds, model: 'ragloom-static-en-128@Builtin', sampled: Math.min(3, chunks), valid: Math.min(3, chunks) });
    expect(after.body.data.results[0]).toMatchObject({ vector_dim: 128, vector_field: 'q_128_vec' });
    expect(after.body.data.summary.avg_cos_sim).toBeGreaterThan(0.9);
    expect((await api.call('POST', `/datasets/${ds}/embedding/check`, {})).body).toEqual({ code: 102, message: '`embd_id` is required.' });
    expect((await api.call('POST', `/datasets/${ds}/embedding/check`, { embd_id: 'nope@X' })).body).toEqual({ code: 102, message: 'Unsupported model: <nope@X>' });
    const empty = await emptyDataset(api, 'empty');
    expect((await api.call('POST', `/datasets/${empty}/embedding`)).body).toEqual({ code: 102, message: `No documents in Dataset ${empty}` });
    expect((await api.call('POST', '/datasets/nope/embedding')).body).toEqual({ code: 102, message: 'No authorization.' });
  });

  test('parent/child: an empty children delimiter is refused; use_parent_child sets the flattened keys', async ({ api }) => {
    const ds = await emptyDataset(api);
    const bad = (await api.call('PUT', `/datasets/${ds}`, { parser_config: { parent_child: { use_parent_child: true, children_delimiter: '' } } })).body;
    expect(bad.code).toBe(101);
    expect(bad.message).toContain('parser_config.parent_child.children_delimiter');
    expect(bad.message).toContain('String should have at least 1 character');
    const on = (await api.call('PUT', `/datasets/${ds}`, { parser_config: { parent_child: { use_parent_child: true, children_delimiter: '\n\n' } } })).body;
    expect(on.data.parser_config).toMatchObject({ children_delimiter: '\n\n', enable_children: true, parent_child: { use_parent_child: true, children_delimiter: '\n\n' } });
    const off = (await api.call('PUT', `/datasets/${ds}`, { parser_config: { chunk_token_num: 256 } })).body;
    expect(off.data.parser_config).toMatchObject({ chunk_token_num: 256, children_delimiter: '', enable_children: false });
  });

  test('codes and wording: empty update 102, bad JSON 101, lax query coercion in the validation library\'s words', async ({ api }) => {
    const ds = await emptyDataset(api);
    expect((await api.call('PUT', `/datasets/${ds}`, {})).body).toEqual({ code: 102, message: 'No properties were modified' });
    const raw = (body: string) => api.call('PUT', `/datasets/${ds}`, undefined, { raw: body, headers: { 'content-type': 'application/json' } });
    expect((await raw('a')).body).toEqual({ code: 101, message: 'Malformed JSON syntax: Missing commas/brackets or invalid encoding' });
    expect((await raw('"a"')).body).toEqual({ code: 101, message: 'Invalid request payload: expected object, got str' });
    expect((await api.call('PUT', `/datasets/${ds}`, { parser_config: 'x' })).body.message).toContain('Input should be a valid dictionary or instance of ParserConfig');
    expect((await api.call('PUT', `/datasets/${ds}`, { parser_config: { chunk_token_num: 'string' } })).body.message).toContain('Input should be a valid integer');
    expect((await api.call('PUT', `/datasets/${ds}`, { auto_metadata_config: 'x' })).body.message).toContain('Input should be a valid dictionary or instance of AutoMetadataConfig');

    for (const [query, msg] of [
      ['page=a', 'Input should be a valid integer, unable to parse string as an integer'],
      ['page_size=a', 'Input should be a valid integer, unable to parse string as an integer'],
      ['desc=maybe', 'Input should be a valid boolean, unable to interpret input'],
      ['ext=5', 'Input should be a valid dictionary'],
    ]) {
      const b = (await api.call('GET', `/datasets?${query}`)).body;
      expect([b.code, b.message.includes(msg)], `${query}: ${b.message}`).toEqual([101, true]);
    }
    expect((await api.call('GET', '/datasets?page=1&page_size=2&desc=false')).body.code).toBe(0);
    expect((await api.call('GET', `/datasets?ext=${encodeURIComponent(JSON.stringify({ keywords: 'k' }))}`)).body.data.map((d: { id: string }) => d.id)).toEqual([ds]);
    expect((await api.call('GET', `/datasets?ext=${encodeURIComponent(JSON.stringify({ keywords: 'zzz' }))}`)).body.data).toEqual([]);

    // A document's name may change, not its extension (101); an empty update of a document is 102.
    const up = await upload(api, ds, DOCS);
    const doc = up.body.data[0].id;
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}`, { name: 'renamed.txt' })).body).toEqual({ code: 101, message: "The extension of file can't be changed" });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}`, { name: 'renamed.md' })).body.code).toBe(0);
    // A parser_config update merges into the document's; one without raptor drops its raptor (update_parser_config).
    const cfgOf = async () => (await api.call('GET', `/datasets/${ds}/documents?id=${doc}`)).body.data.docs[0].parser_config;
    expect(await cfgOf()).toHaveProperty('raptor');
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}`, { parser_config: { raptor: { use_raptor: false } } })).body.code).toBe(0);
    expect((await cfgOf()).raptor).toMatchObject({ use_raptor: false, max_token: 256 });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}`, { parser_config: { chunk_token_num: 256 } })).body.code).toBe(0);
    const after = await cfgOf();
    expect([after.chunk_token_num, 'raptor' in after, after.delimiter]).toEqual([256, false, '\n']);
    // name is `str | None` in UpdateDocumentReq: None passes it and fails in validate_document_name (100, no data).
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}`, { name: null })).body).toEqual({ code: 100, message: "AttributeError('NoneType' object has no attribute 'encode')" });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/${doc}`, { name: 5 })).body).toEqual({ code: 102, message: 'Field: <name> - Message: <Input should be a valid string> - Value: <5>' });
    // The older PUT of a document is the same operation.
    expect((await api.call('PUT', `/datasets/${ds}/documents/${doc}`, { name: 'again.pdf' })).body).toEqual({ code: 101, message: "The extension of file can't be changed" });
  });
});

describe('tags (item 8)', () => {
  test('list, aggregate, rename and delete the tag_kwd of chunks', async ({ api }) => {
    const ds = await emptyDataset(api);
    const doc = (await upload(api, ds, { 'a.txt': 'x' })).body.data[0].id;
    for (const [content, tag_kwd] of [['one', ['red', 'blue']], ['two', ['red']], ['three', []]] as const) {
      expect((await api.call('POST', `/datasets/${ds}/documents/${doc}/chunks`, { content, tag_kwd })).body.code).toBe(0);
    }
    expect((await api.call('GET', `/datasets/${ds}/tags`)).body).toEqual({ code: 0, data: [['red', 2], ['blue', 1]] });
    const other = await emptyDataset(api, 'other');
    const doc2 = (await upload(api, other, { 'b.txt': 'y' })).body.data[0].id;
    await api.call('POST', `/datasets/${other}/documents/${doc2}/chunks`, { content: 'four', tag_kwd: ['blue'] });
    expect((await api.call('GET', `/datasets/tags/aggregation?dataset_ids=${ds},${other}`)).body).toEqual({ code: 0, data: [{ value: 'blue', count: 2 }, { value: 'red', count: 2 }] });
    expect((await api.call('PUT', `/datasets/${ds}/tags`, { from_tag: 'red', to_tag: 'crimson' })).body).toEqual({ code: 0, data: { from: 'red', to: 'crimson' } });
    expect((await api.call('GET', `/datasets/${ds}/tags`)).body.data).toEqual([['crimson', 2], ['blue', 1]]);
    expect((await api.call('DELETE', `/datasets/${ds}/tags`, { tags: ['blue'] })).body).toEqual({ code: 0, data: {} });
    expect((await api.call('GET', `/datasets/${ds}/tags`)).body.data).toEqual([['crimson', 2]]);
    const chunks = (await api.call('GET', `/datasets/${ds}/documents/${doc}/chunks`)).body.data.chunks;
    expect(chunks.map((c: { tag_kwd: string[] }) => c.tag_kwd).sort()).toEqual([[], ['crimson'], ['crimson']]);

    expect((await api.call('GET', '/datasets/nope/tags')).body).toEqual({ code: 102, message: 'No authorization.' });
    expect((await api.call('GET', '/datasets/tags/aggregation')).body).toEqual({ code: 102, message: 'Lack of dataset_ids in query parameters' });
    expect((await api.call('GET', `/datasets/tags/aggregation?dataset_ids=${ds},nope`)).body).toEqual({ code: 102, message: "No authorization for dataset 'nope'" });
    expect((await api.call('DELETE', `/datasets/${ds}/tags`, {})).body).toEqual({ code: 102, message: 'Lack of tags in request body' });
    expect((await api.call('DELETE', `/datasets/${ds}/tags`, { tags: 'blue' })).body).toEqual({ code: 101, message: 'tags must be a list of strings' });
    expect((await api.call('PUT', `/datasets/${ds}/tags`, { from_tag: 'a' })).body).toEqual({ code: 102, message: 'Lack of from_tag or to_tag in request body' });
    expect((await api.call('PUT', `/datasets/${ds}/tags`, { from_tag: ' ', to_tag: 'b' })).body).toEqual({ code: 101, message: 'from_tag and to_tag must not be empty' });
    expect((await api.call('GET', `/datasets/${ds}/tags`, undefined, { key: null })).body).toEqual(UNAUTHORIZED);
  });
});

describe('dataset search (item 8)', () => {
  test('POST /datasets/search and /datasets/{id}/search answer the retrieval test with the index\'s field names', async ({ api }) => {
    const { datasetId: ds } = await parsedDataset(api);
    const r = (await api.call('POST', '/datasets/search', { dataset_ids: [ds], question: 'moon tides' })).body;
    expect(r.code).toBe(0);
    expect(r.data.total).toBeGreaterThan(0);
    expect(r.data.chunks[0]).toMatchObject({ kb_id: ds, content_with_weight: expect.stringContaining('moon') });
    expect(r.data.chunks[0]).toHaveProperty('doc_id');
    expect(r.data.doc_aggs[0]).toMatchObject({ doc_name: 'tides.md' });
    const one = (await api.call('POST', `/datasets/${ds}/search`, { question: 'bread dough', size: 1 })).body;
    expect([one.code, one.data.chunks.length]).toEqual([0, 1]);
    expect(one.data.chunks[0].content_with_weight).toContain('dough');
    // meta_data_filter's manual conditions are RAGFlow's own {key, op, value} (op as meta_filter spells it).
    const docs = (await api.call('GET', `/datasets/${ds}/documents`)).body.data.docs as { id: string; name: string }[];
    const tides = docs.find((d) => d.name === 'tides.md')!.id;
    expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [tides] }, updates: [{ key: 'author', value: 'qa_batch2' }], deletes: [] })).body.code).toBe(0);
    const manual = (m: unknown[], logic = 'and') => api.call('POST', `/datasets/${ds}/search`, { question: 'moon bread', meta_data_filter: { method: 'manual', logic, manual: m } });
    const hit = (await manual([{ key: 'author', op: '=', value: 'QA_batch2' }])).body;
    expect(hit.code).toBe(0);
    expect(hit.data.chunks.map((c: { doc_id: string }) => c.doc_id)).toEqual([tides]);
    expect((await manual([{ key: 'author', op: 'contains', value: 'batch' }])).body.data.chunks.length).toBeGreaterThan(0);
    expect((await manual([{ key: 'author', op: '=', value: 'nobody' }])).body.data.chunks).toEqual([]);
    expect((await manual([{ key: 'author', op: 'is', value: 'qa_batch2' }])).body.data.chunks).toEqual([]); // 'is' is convert_conditions' alias, not meta_filter's
    // A condition without its keys raises in meta_filter; the handler answers its own 102.
    for (const bad of [[{ name: 'author', comparison_operator: '=', value: 'qa_batch2' }], [{ key: 'author', value: 'qa_batch2' }], ['author']]) {
      expect((await manual(bad)).body, JSON.stringify(bad)).toEqual({ code: 102, message: 'Internal server error' });
    }
    expect((await api.call('POST', `/datasets/${ds}/search`, { question: 'moon', meta_data_filter: { method: 'auto' } })).body.code).toBe(102);
    expect((await api.call('POST', '/datasets/search', { dataset_ids: ['nope'], question: 'x' })).body).toEqual({ code: 102, message: 'Only owner of dataset nope authorized for this operation.' });
    // SearchDatasetsReq ignores unknown keys; its fields are checked (101).
    expect((await api.call('POST', `/datasets/${ds}/search`, { question: 'moon', unknown_key: 1 })).body.code).toBe(0);
    expect((await api.call('POST', `/datasets/${ds}/search`, { question: 'moon', similarity_threshold: 2 })).body).toMatchObject({ code: 101, message: expect.stringContaining('less than or equal to 1') });
    expect((await api.call('POST', '/datasets/search', { dataset_ids: [], question: 'moon' })).body).toMatchObject({ code: 101, message: expect.stringContaining('dataset_ids') });
    expect((await api.call('POST', `/datasets/${ds}/search`, {})).body).toMatchObject({ code: 101, message: expect.stringContaining('question') });
  });
});

describe('index routes: knowledge graph, RAPTOR, mind map (item 8)', () => {
  test('the graph is empty; tracing and deleting find nothing; starting one is "not supported by ragloom"', async ({ api }) => {
    const ds = await emptyDataset(api);
    expect((await api.call('GET', `/datasets/${ds}/graph`)).body).toEqual({ code: 0, data: { graph: {}, mind_map: {} } });
    expect((await api.call('GET', `/datasets/${ds}/knowledge_graph`)).body).toEqual({ code: 0, data: { graph: {}, mind_map: {} } });
    expect((await api.call('GET', '/datasets/nope/graph')).body).toEqual({ code: 109, message: 'No authorization.' });
    for (const type of ['graph', 'raptor', 'mindmap']) {
      expect((await api.call('GET', `/datasets/${ds}/index?type=${type}`)).body).toEqual({ code: 0, data: {} });
      expect((await api.call('DELETE', `/datasets/${ds}/index?type=${type}`)).body).toEqual({ code: 0, data: {} });
      expect((await api.call('DELETE', `/datasets/${ds}/${type}`)).body).toEqual({ code: 0, data: {} });
    }
    expect((await api.call('GET', `/datasets/${ds}/index?type=tree`)).body).toEqual({ code: 102, message: "Invalid index type 'tree'. Must be one of ['graph', 'mindmap', 'raptor']" });
    expect((await api.call('DELETE', `/datasets/${ds}/index?type=tree`)).body).toEqual({ code: 101, message: "Invalid index type 'tree'" });
    expect((await api.call('POST', `/datasets/${ds}/index?type=graph`)).body).toEqual({ code: 102, message: `No documents in Dataset ${ds}` });
    await upload(api, ds, DOCS);
    const run = await api.call('POST', `/datasets/${ds}/index?type=raptor`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ code: 501, data: { error_code: 'NOT_SUPPORTED_BY_RAGLOOM' } });
    expect(run.body.message).toMatch(/not supported by ragloom.*RAPTOR/);
    // The older route names.
    expect((await api.call('POST', `/datasets/${ds}/run_graphrag`)).body).toMatchObject({ code: 501, message: expect.stringContaining('knowledge graph') });
    expect((await api.call('POST', `/datasets/${ds}/run_raptor`)).body.code).toBe(501);
    expect((await api.call('GET', `/datasets/${ds}/trace_graphrag`)).body).toEqual({ code: 0, data: {}, message: 'success' });
    expect((await api.call('GET', `/datasets/${ds}/trace_raptor`)).body).toEqual({ code: 0, data: {}, message: 'success' });
    expect((await api.call('DELETE', `/datasets/${ds}/knowledge_graph`)).body).toEqual({ code: 0, data: {} });
    expect((await api.call('GET', `/datasets/${ds}/index?type=graph`, undefined, { key: 'bad' })).body).toEqual(UNAUTHORIZED);
  });
});

describe('ingestion logs and summary (item 8)', () => {
  test('each parse is a file log; the summary counts documents by state', async ({ api }) => {
    const ds = await emptyDataset(api);
    const ids = (await upload(api, ds, DOCS)).body.data.map((d: { id: string }) => d.id);
    expect((await api.call('GET', `/datasets/${ds}/ingestions/summary`)).body.data).toEqual({
      doc_num: 2, chunk_num: 0, token_num: 0, status: { unstart_count: 2, running_count: 0, cancel_count: 0, done_count: 0, fail_count: 0 },
    });
    await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ids });
    await waitParsed(api, ds, ids);
    const sum = (await api.call('GET', `/datasets/${ds}/ingestions/summary`)).body.data;
    expect(sum.status).toEqual({ unstart_count: 0, running_count: 0, cancel_count: 0, done_count: 2, fail_count: 0 });
    expect(sum.chunk_num).toBeGreaterThan(0);

    expect((await api.call('GET', `/datasets/${ds}/ingestions`)).body).toEqual({ code: 0, data: { total: 0, logs: [] } });
    const files = (await api.call('GET', `/datasets/${ds}/ingestions?log_type=file`)).body.data;
    expect(files.total).toBe(2);
    expect(files.logs[0]).toMatchObject({ kb_id: ds, task_type: 'Parse', operation_status: '3', progress: 1 });
    expect(new Set(files.logs.map((l: { document_id: string }) => l.document_id))).toEqual(new Set(ids));
    const named = (await api.call('GET', `/datasets/${ds}/ingestions?log_type=file&keywords=TIDES`)).body.data;
    expect(named.logs.map((l: { document_name: string }) => l.document_name)).toEqual(['tides.md']);
    expect((await api.call('GET', `/datasets/${ds}/ingestions?log_type=file&page=1&page_size=1`)).body.data).toMatchObject({ total: 2, logs: [expect.anything()] });
    const one = (await api.call('GET', `/datasets/${ds}/ingestions/${files.logs[0].id}`)).body;
    expect(one).toMatchObject({ code: 0, data: { id: files.logs[0].id, kb_id: ds, operation_status: '3' } });
    expect(one.data).not.toHaveProperty('document_id');

    expect((await api.call('GET', `/datasets/${ds}/ingestions/nope`)).body).toEqual({ code: 102, message: 'Log not found' });
    expect((await api.call('GET', `/datasets/${ds}/ingestions?log_type=x`)).body).toEqual({ code: 102, message: 'Invalid "log_type", expected "dataset" or "file"' });
    expect((await api.call('GET', `/datasets/${ds}/ingestions?orderby=bogus`)).body).toEqual({ code: 102, message: 'Internal server error' });
    expect((await api.call('GET', `/datasets/${ds}/ingestions?page=x`)).body).toEqual({ code: 101, message: "invalid literal for int() with base 10: 'x'" });
    expect((await api.call('GET', '/datasets/nope/ingestions')).body).toEqual({ code: 102, message: 'No authorization.' });
    expect((await api.call('GET', '/datasets/nope/ingestions/summary')).body.code).toBe(102);
  });
});

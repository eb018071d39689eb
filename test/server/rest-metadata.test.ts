/**
 * Issue 34, item 3, over HTTP with RAGFlow 0.25.6's request shapes: the batch metadata update
 * (`PATCH …/documents/metadatas` and the older `POST …/metadata/update`), the summary and the
 * flattened view, the auto-metadata configuration of a dataset and of a document, the checks of a
 * document's `meta_fields`, and `metadata_condition` wherever a route accepts one.
 */
import { describe, expect } from 'vitest';
import { test, upload, waitParsed, type Http } from './fixtures.js';

const FILES: Record<string, string> = {
  'zhuge.txt': 'Zhuge Liang served the kingdom of Shu as its chancellor in the Three Kingdoms period.',
  'cao.txt': 'Cao Cao unified the north of China at the end of the Eastern Han dynasty.',
  'sun.txt': 'Sun Quan ruled the kingdom of Wu from Jianye on the Yangtze river.',
};

async function dataset(api: Http): Promise<{ ds: string; ids: string[] }> {
  const ds = (await api.call('POST', '/datasets', { name: 'history' })).body.data.id as string;
  const up = await upload(api, ds, FILES);
  return { ds, ids: up.body.data.map((d: { id: string }) => d.id) };
}

const metaOf = async (api: Http, ds: string) => {
  const docs = (await api.call('GET', `/datasets/${ds}/documents?orderby=name&desc=false`)).body.data.docs as Array<{ name: string; meta_fields: unknown }>;
  return Object.fromEntries(docs.map((d) => [d.name, d.meta_fields]));
};

describe('batch metadata update', () => {
  test('updates and deletes over document_ids; the older POST …/metadata/update is the same operation', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const r = await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, {
      selector: { document_ids: ids }, updates: [{ key: 'author', value: 'chen shou' }, { key: 'tags', value: ['history', 'china'] }], deletes: [],
    });
    expect(r.body).toEqual({ code: 0, data: { updated: 3, matched_docs: 3 } });
    expect(await metaOf(api, ds)).toEqual({
      'cao.txt': { author: 'chen shou', tags: ['history', 'china'] },
      'sun.txt': { author: 'chen shou', tags: ['history', 'china'] },
      'zhuge.txt': { author: 'chen shou', tags: ['history', 'china'] },
    });
    // A list value gains new items (deduplicated); `match` replaces one value; a delete by value drops it.
    const again = await api.call('POST', `/datasets/${ds}/metadata/update`, {
      selector: { document_ids: [ids[0]] }, updates: [{ key: 'tags', value: ['china', 'shu'] }, { key: 'author', value: 'pei songzhi', match: 'chen shou' }], deletes: [{ key: 'tags', value: 'history' }],
    });
    expect(again.body).toEqual({ code: 0, data: { updated: 1, matched_docs: 1 } });
    expect((await metaOf(api, ds))['zhuge.txt']).toEqual({ author: 'pei songzhi', tags: ['china', 'shu'] });
    // Nothing changes: matched but not updated.
    expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: ids }, updates: [], deletes: [{ key: 'absent' }] })).body).toEqual({
      code: 0, data: { updated: 0, matched_docs: 3 },
    });
    // A delete without value drops the key.
    await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: ids }, deletes: [{ key: 'tags' }] });
    expect((await metaOf(api, ds))['cao.txt']).toEqual({ author: 'chen shou' });
    // Empty document ids select nothing.
    expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [] }, updates: [{ key: 'a', value: 'b' }] })).body).toEqual({
      code: 0, data: { updated: 0, matched_docs: 0 },
    });
  });

  test('metadata_condition narrows the listed documents; a condition alone selects none (RAGFlow intersects the two)', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    await api.call('PATCH', `/datasets/${ds}/documents/${ids[0]}`, { meta_fields: { kingdom: 'Shu' } });
    await api.call('PATCH', `/datasets/${ds}/documents/${ids[2]}`, { meta_fields: { kingdom: 'Wu' } });
    const cond = { logic: 'and', conditions: [{ name: 'kingdom', comparison_operator: 'is', value: 'Shu' }] };
    expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: ids, metadata_condition: cond }, updates: [{ key: 'chancellor', value: 'yes' }] })).body).toEqual({
      code: 0, data: { updated: 1, matched_docs: 1 },
    });
    expect((await metaOf(api, ds))['zhuge.txt']).toEqual({ kingdom: 'Shu', chancellor: 'yes' });
    expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { metadata_condition: cond }, updates: [{ key: 'x', value: 1 }] })).body).toEqual({
      code: 0, data: { updated: 0, matched_docs: 0 },
    });
    const none = { conditions: [{ name: 'nonexistent_key', comparison_operator: 'is', value: 'v' }] };
    expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: ids, metadata_condition: none }, updates: [{ key: 'x', value: 1 }] })).body).toEqual({
      code: 0, data: { updated: 0, matched_docs: 0 },
    });
  });

  test('bad bodies are refused in RAGFlow\'s order, code 102, nothing written', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const cases: Array<[unknown, string]> = [
      [{ selector: [1], updates: [], deletes: [] }, 'selector must be an object.'],
      [{ selector: {}, updates: { key: 'value' }, deletes: [] }, 'updates and deletes must be lists.'],
      [{ selector: {}, updates: [], deletes: 'x' }, 'updates and deletes must be lists.'],
      [{ selector: { metadata_condition: [1] } }, 'metadata_condition must be an object.'],
      [{ selector: { document_ids: 'doc-1' } }, 'document_ids must be a list.'],
      [{ selector: {}, updates: [{ key: '' }] }, 'Each update requires key and value.'],
      [{ selector: {}, updates: [{ key: 'a' }] }, 'Each update requires key and value.'],
      [{ selector: {}, updates: [{ key: 'a', value: 1 }], deletes: [{ x: 'y' }] }, 'Each delete requires key.'],
      [{ selector: { document_ids: [ids[0], 'doc-does-not-exist-1', 'doc-does-not-exist-2'] }, updates: [{ key: 'author', value: 'test' }] }, `These documents do not belong to dataset ${ds}: doc-does-not-exist-1, doc-does-not-exist-2`],
    ];
    for (const [body, message] of cases) {
      expect((await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, body)).body, JSON.stringify(body)).toEqual({ code: 102, message });
    }
    expect(Object.values(await metaOf(api, ds))).toEqual([{}, {}, {}]);
    expect((await api.call('PATCH', '/datasets/invalid_dataset_id/documents/metadatas', { selector: { document_ids: [] } })).body).toEqual({
      code: 102, message: "You don't own the dataset invalid_dataset_id.",
    });
    // The older route's message ends with a space, as RAGFlow's does.
    expect((await api.call('POST', '/datasets/invalid_dataset_id/metadata/update', { selector: {} })).body).toEqual({
      code: 102, message: "You don't own the dataset invalid_dataset_id. ",
    });
    for (const key of [null, 'invalid_key']) {
      const r = await api.call('PATCH', `/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [] }, updates: [], deletes: [] }, { key });
      expect([r.status, r.body]).toEqual([401, { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null }]);
    }
  });
});

describe('summary and flattened metadata', () => {
  test('the summary counts each value (list items one by one), with the type most values have', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const payloads = [{ tags: ['foo', 'bar'], author: 'alice', year: 220 }, { tags: ['foo'], author: 'bob', year: 208 }, { tags: ['bar', 'baz'], author: '', when: '2024-01-02T03:04:05' }];
    for (const [i, meta_fields] of payloads.entries()) expect((await api.call('PATCH', `/datasets/${ds}/documents/${ids[i]}`, { meta_fields })).body.code).toBe(0);
    const { summary } = (await api.call('GET', `/datasets/${ds}/metadata/summary`)).body.data;
    expect(summary.tags.type).toBe('list');
    expect(Object.fromEntries(summary.tags.values)).toEqual({ foo: 2, bar: 2, baz: 1 });
    expect(summary.author).toEqual({ type: 'string', values: [['alice', 1], ['bob', 1], ['', 1]] });
    expect(summary.year).toEqual({ type: 'number', values: [['220', 1], ['208', 1]] });
    expect(summary.when.type).toBe('time');
    // Restricted to some documents.
    const some = (await api.call('GET', `/datasets/${ds}/metadata/summary?doc_ids=${ids[1]}`)).body.data.summary;
    expect(some.author.values).toEqual([['bob', 1]]);
    expect((await api.call('GET', '/datasets/invalid_kb/metadata/summary')).body).toEqual({ code: 102, message: "You don't own the dataset invalid_kb. " });

    const flat = await api.call('GET', `/datasets/metadata/flattened?dataset_ids=${ds}`);
    expect(flat.body.code).toBe(0);
    expect(flat.body.data.tags).toEqual({ foo: [ids[0], ids[1]], bar: [ids[0], ids[2]], baz: [ids[2]] });
    expect(flat.body.data.year).toEqual({ 220: [ids[0]], 208: [ids[1]] });
    expect((await api.call('GET', '/datasets/metadata/flattened')).body).toEqual({ code: 102, message: 'Lack of dataset_ids in query parameters' });
    expect((await api.call('GET', `/datasets/metadata/flattened?dataset_ids=${ds},nope`)).body).toEqual({ code: 102, message: "No authorization for dataset 'nope'" });
  });
});

describe('meta_fields of one document', () => {
  test('values must be str, int, float or lists of them; the error names the field and its value', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    const bad: Array<[unknown, string]> = [
      ['not a dict', 'Input should be a valid dictionary'],
      [{ k: { nested: 1 } }, "The type is not supported: {'nested': 1}"],
      [{ k: [1, { a: 1 }] }, "The type is not supported in list: [1, {'a': 1}]"],
      [{ k: null }, 'The type is not supported: None'],
    ];
    for (const [meta_fields, msg] of bad) {
      const r = (await api.call('PATCH', `/datasets/${ds}/documents/${ids[0]}`, { meta_fields })).body;
      expect(r.code, JSON.stringify(meta_fields)).toBe(102);
      expect(r.message).toContain('meta_fields');
      expect(r.message).toContain(msg);
    }
    expect((await metaOf(api, ds))['zhuge.txt']).toEqual({});
    // A list's strings are split on RAGFlow's separators and deduplicated when stored.
    const ok = await api.call('PATCH', `/datasets/${ds}/documents/${ids[0]}`, { meta_fields: { people: ['Liu Bei, Guan Yu；Zhang Fei', 'Liu Bei'], rank: 1.5, active: true } });
    expect(ok.body.code).toBe(0);
    expect((await metaOf(api, ds))['zhuge.txt']).toEqual({ people: ['Liu Bei', 'Guan Yu', 'Zhang Fei'], rank: 1.5, active: true });
  });
});

describe('auto-metadata configuration', () => {
  test('a dataset keeps its metadata fields; bad fields are refused at their place', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    expect((await api.call('GET', `/datasets/${ds}/metadata/config`)).body).toEqual({ code: 0, data: { metadata: [], built_in_metadata: [] } });
    const fields = [{ key: ' character ', type: 'string', description: 'Historical figure name' }, { key: 'achievements', type: 'list', enum: ['war', 'law'] }];
    const put = await api.call('PUT', `/datasets/${ds}/metadata/config`, { metadata: fields });
    expect(put.body).toEqual({
      code: 0,
      data: {
        metadata: [{ key: 'character', type: 'string', description: 'Historical figure name', enum: null }, { key: 'achievements', type: 'list', description: null, enum: ['war', 'law'] }],
        built_in_metadata: [],
      },
    });
    expect((await api.call('GET', `/datasets/${ds}/metadata/config`)).body.data).toEqual(put.body.data);
    // It lives in the dataset's parser_config.
    expect((await api.call('GET', `/datasets/${ds}`)).body.data.parser_config.metadata).toEqual(put.body.data.metadata);

    for (const [body, field] of [
      [{ metadata: [{ key: 'a', type: 'blob' }] }, 'metadata.0.type'],
      [{ metadata: [{ type: 'string' }] }, 'metadata.0.key'],
      [{ metadata: [{ key: '', type: 'string' }] }, 'metadata.0.key'],
      [{ metadata: 'x' }, 'metadata'],
      [{ fields: [] }, 'fields'],
    ] as const) {
      const r = (await api.call('PUT', `/datasets/${ds}/metadata/config`, body)).body;
      expect([r.code, r.message.includes(field)], JSON.stringify(body)).toEqual([101, true]);
    }
    expect((await api.call('GET', `/datasets/${ds}/metadata/config`)).body.data).toEqual(put.body.data);
    for (const m of ['GET', 'PUT']) {
      const r = (await api.call(m, '/datasets/invalid_dataset_id/metadata/config', m === 'PUT' ? { metadata: [] } : undefined)).body;
      expect([r.code, r.message], m).toEqual([102, expect.stringMatching(/^User '.+' lacks permission for dataset 'invalid_dataset_id'$/)]);
    }

    // A document's own config: merged into its parser_config, answered as the document's model dict.
    const doc = await api.call('PUT', `/datasets/${ds}/documents/${ids[0]}/metadata/config`, { metadata: [{ key: 'era', type: 'string' }] });
    expect(doc.body.code).toBe(0);
    expect(doc.body.data).toMatchObject({ id: ids[0], kb_id: ds, parser_config: { metadata: [{ key: 'era', type: 'string' }] } });
    expect((await api.call('PUT', `/datasets/${ds}/documents/${ids[0]}/metadata/config`, {})).body).toEqual({ code: 101, message: 'metadata is required' });
    expect((await api.call('PUT', `/datasets/${ds}/documents/nonexistent_doc_id/metadata/config`, { metadata: [] })).body).toEqual({
      code: 102, message: `Document nonexistent_doc_id not found in dataset ${ds}`,
    });
    expect((await api.call('PUT', `/datasets/invalid_dataset_id/documents/${ids[0]}/metadata/config`, { metadata: [] })).body.code).toBe(102);
    for (const key of [null, 'invalid_key']) {
      for (const [m, p] of [['GET', `/datasets/${ds}/metadata/config`], ['PUT', `/datasets/${ds}/metadata/config`], ['PUT', `/datasets/${ds}/documents/${ids[0]}/metadata/config`]] as const) {
        const r = await api.call(m, p, m === 'PUT' ? {} : undefined, { key });
        expect([r.status, r.body], `${m} ${p}`).toEqual([401, { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null }]);
      }
    }
  });
});

describe('metadata_condition wherever it is accepted', () => {
  test('the documents listing and retrieval filter by it; malformed conditions fail with the Python error RAGFlow raises (code 100)', async ({ api }) => {
    const { ds, ids } = await dataset(api);
    await api.call('PATCH', `/datasets/${ds}/documents/${ids[0]}`, { meta_fields: { character: 'Zhuge Liang', era: 'Three Kingdoms' } });
    await api.call('PATCH', `/datasets/${ds}/documents/${ids[1]}`, { meta_fields: { character: 'Cao Cao', era: 'Late Eastern Han' } });
    await api.call('POST', `/datasets/${ds}/documents/parse`, { document_ids: ids });
    await waitParsed(api, ds, ids);

    const cond = { logic: 'and', conditions: [{ name: 'character', comparison_operator: 'is', value: 'Zhuge Liang' }] };
    const q = encodeURIComponent(JSON.stringify(cond));
    const listed = (await api.call('GET', `/datasets/${ds}/documents?metadata_condition=${q}`)).body;
    expect(listed.code).toBe(0);
    expect(listed.data.docs.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    const or = { logic: 'or', conditions: [{ name: 'character', comparison_operator: 'is', value: 'Zhuge Liang' }, { name: 'era', comparison_operator: 'contains', value: 'Han' }] };
    expect((await api.call('GET', `/datasets/${ds}/documents?metadata_condition=${encodeURIComponent(JSON.stringify(or))}`)).body.data.docs.map((d: { id: string }) => d.id).sort()).toEqual([ids[0], ids[1]].sort());

    const hits = (await api.call('POST', '/retrieval', { question: 'chancellor of Shu', dataset_ids: [ds], metadata_condition: cond })).body;
    expect(hits.code).toBe(0);
    expect(hits.data.chunks.length).toBeGreaterThan(0);
    expect(new Set(hits.data.chunks.map((c: { document_id: string }) => c.document_id))).toEqual(new Set([ids[0]]));
    // An operator RAGFlow does not know matches nothing.
    const unknownOp = { conditions: [{ name: 'character', comparison_operator: 'resembles', value: 'Zhuge Liang' }] };
    expect((await api.call('POST', '/retrieval', { question: 'chancellor of Shu', dataset_ids: [ds], metadata_condition: unknownOp })).body.data.chunks).toEqual([]);

    const malformed: Array<[unknown, string]> = [
      [[1], 'AttributeError("\'list\' object has no attribute \'get\'")'],
      ['abc', 'AttributeError("\'str\' object has no attribute \'get\'")'],
      [{ conditions: 5 }, 'TypeError("\'int\' object is not iterable")'],
      [{ conditions: [{ name: 'a', value: 'b' }] }, "KeyError('comparison_operator')"],
      [{ conditions: [{ comparison_operator: 'is', value: 'b' }] }, "KeyError('name')"],
      [{ conditions: [{ comparison_operator: 'is', name: 'a' }] }, "KeyError('value')"],
      [{ conditions: ['x'] }, 'TypeError("string indices must be integers, not \'str\'")'],
    ];
    for (const [mc, message] of malformed) {
      expect((await api.call('POST', '/retrieval', { question: 'q', dataset_ids: [ds], metadata_condition: mc })).body, JSON.stringify(mc)).toEqual({ code: 100, message, data: null });
    }
    // A falsy condition is no filter.
    expect((await api.call('POST', '/retrieval', { question: 'chancellor of Shu', dataset_ids: [ds], metadata_condition: {} })).body.data.chunks.length).toBeGreaterThan(0);
    const listing = async (mc: string) => (await api.call('GET', `/datasets/${ds}/documents?metadata_condition=${encodeURIComponent(mc)}`)).body;
    expect(await listing('{"conditions": [{"name": "a"}]}')).toEqual({ code: 100, message: "KeyError('comparison_operator')", data: null });
    expect(await listing('{bad')).toEqual({ code: 102, message: 'metadata_condition must be valid JSON: {bad.' });
    expect(await listing('[1]')).toEqual({ code: 102, message: 'metadata_condition must be an object.' });
    expect((await api.call('GET', `/datasets/${ds}/documents?metadata=${encodeURIComponent('{"character": ["Cao Cao", "Sun Quan"]}')}`)).body.data.docs.map((d: { id: string }) => d.id)).toEqual([ids[1]]);
    expect((await api.call('GET', `/datasets/${ds}/documents?metadata=x`)).body).toEqual({ code: 102, message: 'metadata must be valid JSON.' });
  });
});

describe('POST /retrieval numbers', () => {
  test('page, page_size, top_k and the two weights are cast as chunk_api.retrieval_test casts them: Python int() / float() errors, code 100', async ({ api }) => {
    const { ds } = await dataset(api);
    const ask = async (extra: Record<string, unknown>) => (await api.call('POST', '/retrieval', { question: 'kingdom', dataset_ids: [ds], ...extra })).body;
    for (const extra of [{ page: '2' }, { page: 0 }, { page: -1 }, { page_size: '1' }, { page: 1.7 }, { top_k: '5' }, { similarity_threshold: '0.1' }, { vector_similarity_weight: true }]) {
      expect((await ask(extra)).code, JSON.stringify(extra)).toBe(0);
    }
    const none = (fn: string) => ({ code: 100, message: `TypeError("${fn}() argument must be a string${fn === 'int' ? ', a bytes-like object' : ''} or a real number, not 'NoneType'")`, data: null });
    expect(await ask({ page: null })).toEqual(none('int'));
    expect(await ask({ page_size: null })).toEqual(none('int'));
    expect(await ask({ top_k: null })).toEqual(none('int'));
    expect(await ask({ similarity_threshold: null })).toEqual(none('float'));
    expect(await ask({ page: 'a' })).toEqual({ code: 100, message: 'ValueError("invalid literal for int() with base 10: \'a\'")', data: null });
    expect(await ask({ page_size: '1.5' })).toEqual({ code: 100, message: 'ValueError("invalid literal for int() with base 10: \'1.5\'")', data: null });
    expect(await ask({ vector_similarity_weight: 'x' })).toEqual({ code: 100, message: 'ValueError("could not convert string to float: \'x\'")', data: null });
    expect(await ask({ top_k: [1] })).toEqual({ code: 100, message: 'TypeError("int() argument must be a string, a bytes-like object or a real number, not \'list\'")', data: null });
    expect(await ask({ top_k: -1 })).toEqual({ code: 102, message: '`top_k` must be greater than 0' });
  });
});

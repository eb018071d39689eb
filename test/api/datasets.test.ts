import { describe, expect } from 'vitest';
import { test, apiError } from '../helpers.js';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

describe('Client#createDataset()', () => {
  test('only required params: defaults of the reference', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    expect(ds.id).toMatch(/^[0-9a-f]{32}$/);
    expect(ds.name).toBe('kb');
    expect(ds.permission).toBe('me');
    expect(ds.chunk_method).toBe('naive');
    expect(ds.avatar).toBeNull();
    expect(ds.description).toBeNull();
    expect(ds.embedding_model).toBe('ragloom-static-en-256@Builtin');
    expect(ds.document_count).toBe(0);
    expect(ds.chunk_count).toBe(0);
    expect(ds.pagerank).toBe(0);
    const cfg = ds.parser_config as Record<string, any>;
    expect(cfg.chunk_token_num).toBe(512);
    expect(cfg.delimiter).toBe('\n');
    expect(cfg.topn_tags).toBe(3);
    expect(cfg.raptor.use_raptor).toBe(true);
    expect(cfg.graphrag.use_graphrag).toBe(true);
    expect(cfg.table_context_size).toBe(0);
    expect(cfg.image_context_size).toBe(0);
    expect(cfg.children_delimiter).toBe('');
    expect(cfg).toHaveProperty('llm_id');
  });

  test('required and optional params', async ({ client }) => {
    const ds = await client.createDataset({
      name: '  spaced  ', avatar: PNG, description: 'd', permission: 'team', chunk_method: 'qa',
      embedding_model: ' universal-sentence-encoder-lite@Builtin ',
    });
    expect(ds.name).toBe('spaced');
    expect(ds.avatar).toBe(PNG);
    expect(ds.permission).toBe('team');
    expect(ds.chunk_method).toBe('qa');
    expect(ds.embedding_model).toBe('universal-sentence-encoder-lite@Builtin');
    expect(ds.parser_config).toMatchObject({ raptor: { use_raptor: false }, graphrag: { use_graphrag: false } });
  });

  test('a partial parser_config gets Pydantic defaults: raptor and graphrag end up off', async ({ client }) => {
    const ds = await client.createDataset({ name: 'p', parser_config: { chunk_token_num: 1024 } });
    const cfg = ds.parser_config as Record<string, any>;
    expect(cfg.chunk_token_num).toBe(1024);
    expect(cfg.topn_tags).toBe(1);
    expect(cfg.delimiter).toBe('\\n');
    expect(cfg.raptor.use_raptor).toBe(false);
    expect(cfg.graphrag.use_graphrag).toBe(false);
    const empty = await client.createDataset({ name: 'e', parser_config: {} });
    expect((empty.parser_config as any).raptor.use_raptor).toBe(true);
  });

  test('knowledge_graph is not a dataset chunk_method; table/one get the base config only', async ({ client }) => {
    const e = await apiError(client.createDataset({ name: 'x', chunk_method: 'knowledge_graph' as never }));
    expect(e.code).toBe(101);
    expect(e.message).toContain("Input should be 'naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag' or 'resume'");
    const t = await client.createDataset({ name: 't', chunk_method: 'table' });
    expect(Object.keys(t.parser_config).sort()).toEqual(['children_delimiter', 'image_context_size', 'llm_id', 'table_context_size']);
  });

  test('duplicate names (case-insensitive) are renamed name(1), name(2)', async ({ client }) => {
    await client.createDataset({ name: 'Docs' });
    expect((await client.createDataset({ name: 'docs' })).name).toBe('docs(1)');
    expect((await client.createDataset({ name: 'DOCS' })).name).toBe('DOCS(2)');
  });

  test.for([
    [{ name: '' }, 'String should have at least 1 character'],
    [{ name: '   ' }, 'String should have at least 1 character'],
    [{ name: 'a'.repeat(129) }, 'String should have at most 128 characters'],
    [{ name: 3 }, 'Input should be a valid string'],
    [{}, 'Field required'],
    [{ name: 'a', avatar: 'abc' }, 'Missing MIME prefix. Expected format: data:<mime>;base64,<data>'],
    [{ name: 'a', avatar: 'image/png;base64,xx' }, "Invalid MIME prefix format. Must start with 'data:'"],
    [{ name: 'a', avatar: 'data:image/gif;base64,xx' }, "Unsupported MIME type. Allowed: ['image/jpeg', 'image/png']"],
    [{ name: 'a', embedding_model: 'noat' }, 'Embedding model identifier must follow <model_name>@<provider> format'],
    [{ name: 'a', embedding_model: '' }, 'Embedding model identifier must follow <model_name>@<provider> format'],
    [{ name: 'a', embedding_model: '@x' }, 'Both model_name and provider must be non-empty strings'],
    [{ name: 'a', embedding_model: 'm@ ' }, 'Both model_name and provider must be non-empty strings'],
    [{ name: 'a', permission: 'ME' }, "Input should be 'me' or 'team'"],
    [{ name: 'a', chunk_method: '' }, "Input should be 'naive'"],
    [{ name: 'a', parser_config: { chunk_token_num: 0 } }, 'Input should be greater than or equal to 1'],
    [{ name: 'a', parser_config: { chunk_token_num: 2049 } }, 'Input should be less than or equal to 2048'],
    [{ name: 'a', parser_config: { chunk_token_num: 3.5 } }, 'Input should be a valid integer'],
    [{ name: 'a', parser_config: { auto_keywords: 33 } }, 'Input should be less than or equal to 32'],
    [{ name: 'a', parser_config: { auto_questions: 11 } }, 'Input should be less than or equal to 10'],
    [{ name: 'a', parser_config: { topn_tags: 0 } }, 'Input should be greater than or equal to 1'],
    [{ name: 'a', parser_config: { delimiter: '' } }, 'String should have at least 1 character'],
    [{ name: 'a', parser_config: { html4excel: 'yes' } }, 'Input should be a valid boolean'],
    [{ name: 'a', parser_config: { raptor: { max_token: 0 } } }, 'Input should be greater than or equal to 1'],
    [{ name: 'a', parser_config: { graphrag: { method: 'x' } } }, "Input should be 'light', 'general' or 'ner'"],
    [{ name: 'a', parser_config: { unknown_key: 1 } }, 'Extra inputs are not permitted'],
    [{ name: 'a', tenant_id: 'x' }, 'Extra inputs are not permitted'],
    [{ name: 'a', parser_config: { ext: { s: 'x'.repeat(70000) } } }, 'Parser config exceeds size limit (max 65,535 characters)'],
  ])('rejects %j with 101', async (row, { client }) => {
    const [req, msg] = row as unknown as [Record<string, unknown>, string | undefined];
    const e = await apiError(client.createDataset(req as never));
    expect(e.code).toBe(101);
    if (msg) expect(e.message).toContain(msg);
    expect(await client.listDatasets()).toHaveLength(0);
  });

  test('Pydantic lines name the field and the value', async ({ client }) => {
    const e = await apiError(client.createDataset({ name: 'a', permission: 'x' as never }));
    expect(e.message).toBe("Field: <permission> - Message: <Input should be 'me' or 'team'> - Value: <x>");
  });

  test('unknown model → 102 Unsupported; in RAGFlow\'s catalogue but not configured → Unauthorized; names over 128 bytes → 102', async ({ client }) => {
    let e = await apiError(client.createDataset({ name: 'a', embedding_model: 'nope@Nowhere' }));
    expect([e.code, e.message]).toEqual([102, 'Unsupported model: <nope@Nowhere>']);
    e = await apiError(client.createDataset({ name: 'a', embedding_model: 'text-embedding-3-small@OpenAI' }));
    expect([e.code, e.message]).toEqual([102, 'Unauthorized model: <text-embedding-3-small@OpenAI>']);
    // RAGFlow v0.25.6's catalogue (conf/llm_factories.json), read as RAGFlow reads an id.
    for (const [id, verdict] of [
      ['text-embedding-v3@Tongyi-Qianwen', 'Unauthorized'], ['jina-embeddings-v4@Jina', 'Unauthorized'], ['BAAI/bge-m3@SILICONFLOW', 'Unauthorized'],
      ['TEXT-EMBEDDING-3-SMALL@OpenAI', 'Unauthorized'], // names compare case-insensitively (MySQL)
      ['BAAI/bge-m3@Builtin', 'Unauthorized'], // RAGFlow's built-in list; ragloom runs only its own
      ['text-embedding-3-small@openai', 'Unsupported'], // not a factory RAGFlow knows: the whole id is the name
      ['text-embedding-3-small@Jina', 'Unsupported'], ['gpt-4o@OpenAI', 'Unsupported'], ['nope@Builtin', 'Unsupported'],
      ['BAAI/bge-large-zh-v1.5@BAAI', 'Unsupported'],
    ]) {
      e = await apiError(client.createDataset({ name: 'a', embedding_model: id }));
      expect([e.code, e.message], id).toEqual([102, `${verdict} model: <${id}>`]);
    }
    e = await apiError(client.createDataset({ name: 'é'.repeat(100) }));
    expect(e.code).toBe(102);
    expect(e.message).toContain('Dataset name length is 200');
    expect(await client.listDatasets()).toHaveLength(0);
  });

  test('a registered embedding model is accepted', async ({ client }) => {
    client.registerModel({ type: 'embedding', name: 'text-embedding-3-small', factory: 'OpenAI', base_url: 'http://127.0.0.1:1/v1' });
    const ds = await client.createDataset({ name: 'a', embedding_model: 'text-embedding-3-small@OpenAI' });
    expect(ds.embedding_model).toBe('text-embedding-3-small@OpenAI');
  });
});

describe('Client#listDatasets()', () => {
  test('paging, ordering and filters', async ({ client }) => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await client.createDataset({ name: `ds${i}` }));
    expect((await client.listDatasets()).map((d) => d.name)).toEqual(['ds4', 'ds3', 'ds2', 'ds1', 'ds0']);
    expect((await client.listDatasets({ desc: false, page: 2, page_size: 2 })).map((d) => d.name)).toEqual(['ds2', 'ds3']);
    expect((await client.listDatasets({ name: 'DS1' })).map((d) => d.id)).toEqual([made[1]!.id]);
    expect((await client.listDatasets({ id: made[2]!.id })).map((d) => d.name)).toEqual(['ds2']);
    expect(await client.listDatasets({ name: '' })).toHaveLength(5);
    await made[0]!.update({ description: 'touched' });
    expect((await client.listDatasets({ orderby: 'update_time' }))[0]!.name).toBe('ds0');
  });

  test('include_parsing_status adds per-run counts', async ({ client }) => {
    const ds = await client.createDataset({ name: 'a' });
    await ds.uploadDocuments([{ display_name: 'a.txt', blob: new TextEncoder().encode('x') }]);
    const [d] = await client.listDatasets({ include_parsing_status: true });
    expect(d).toMatchObject({ unstart_count: 1, running_count: 0, cancel_count: 0, done_count: 0, fail_count: 0 });
    const [plain] = await client.listDatasets();
    expect(plain).not.toHaveProperty('unstart_count');
  });

  test.for([
    [{ page: 0 }, 'Input should be greater than or equal to 1', 101],
    [{ page_size: 0 }, 'Input should be greater than or equal to 1', 101],
    [{ orderby: 'name' }, "Input should be 'create_time' or 'update_time'", 101],
    [{ id: 'abc' }, 'Invalid UUID1 format', 101],
    [{ id: '' }, 'Invalid UUID1 format', 101],
    [{ id: '6f1d5b2e-8c3a-4d2e-9f1a-2b3c4d5e6f70' }, 'Invalid UUID1 format', 101],
  ])('rejects %j', async (row, { client }) => {
    const [q, msg, code] = row as unknown as [Record<string, unknown>, string, number];
    const e = await apiError(client.listDatasets(q as never));
    expect(e.code).toBe(code);
    expect(e.message).toContain(msg);
  });

  test('unknown id or name → 102 lacks permission', async ({ client }) => {
    const e = await apiError(client.listDatasets({ name: 'ghost' }));
    expect(e.code).toBe(102);
    expect(e.message).toMatch(/^User '[0-9a-f]{32}' lacks permission for dataset 'ghost'$/);
  });

  test('id and name: each must exist on its own (the error names the missing one); two different datasets list nothing', async ({ client }) => {
    const a = await client.createDataset({ name: 'alpha' });
    const b = await client.createDataset({ name: 'beta' });
    expect(await client.listDatasets({ id: a.id, name: 'beta' })).toEqual([]);
    expect((await client.listDatasets({ id: b.id, name: 'BETA' })).map((d) => d.id)).toEqual([b.id]);
    const ghostName = await apiError(client.listDatasets({ id: a.id, name: 'ghost' }));
    expect([ghostName.code, ghostName.message]).toEqual([102, `User '${a.tenant_id}' lacks permission for dataset 'ghost'`]);
    const ghostId = (a.id[0] === 'f' ? 'e' : 'f') + a.id.slice(1); // a UUID1 no dataset has
    const missingId = await apiError(client.listDatasets({ id: ghostId, name: 'beta' }));
    expect(missingId.message).toBe(`User '${a.tenant_id}' lacks permission for dataset '${ghostId}'`);
  });
});

describe('DataSet#update()', () => {
  test('renames, merges parser_config, switches method defaults, sets pagerank', async ({ client }) => {
    const ds = await client.createDataset({ name: 'a' });
    await ds.update({ name: 'b', pagerank: 50, parser_config: { chunk_token_num: 256 } });
    expect(ds.name).toBe('b');
    expect(ds.pagerank).toBe(50);
    const cfg = ds.parser_config as Record<string, any>;
    expect(cfg.chunk_token_num).toBe(256);
    expect(cfg.raptor.use_raptor).toBe(true); // merged into existing, not reset
    await ds.update({ chunk_method: 'qa' });
    expect(ds.parser_config).toEqual({ raptor: { use_raptor: false }, graphrag: { use_graphrag: false }, image_context_size: 0, table_context_size: 0 });
    await ds.update({ embedding_model: null });
    expect(ds.embedding_model).toBe('ragloom-static-en-256@Builtin');
    await ds.update({ name: 'B' }); // same name, other case: allowed
    expect(ds.name).toBe('B');
  });

  test.for([
    [{}, 'No properties were modified', 102],
    [{ name: null }, 'Input should be a valid string', 101],
    [{ name: '' }, 'String should have at least 1 character', 101],
    [{ name: 'emoji 😀' }, 'Basic Multilingual Plane', 101],
    [{ permission: null }, "Input should be 'me' or 'team'", 101],
    [{ chunk_method: null }, "Input should be 'naive'", 101],
    [{ chunk_method: [] }, "Input should be 'naive'", 101],
    [{ pagerank: null }, 'Input should be a valid integer', 101],
    [{ pagerank: 101 }, 'Input should be less than or equal to 100', 101],
    [{ pagerank: -1 }, 'Input should be greater than or equal to 0', 101],
    [{ document_count: 3 }, 'Extra inputs are not permitted', 101],
    [{ chunk_count: 3 }, 'Extra inputs are not permitted', 101],
    [{ id: 'x' }, 'Extra inputs are not permitted', 101],
    [{ create_time: 1 }, 'Extra inputs are not permitted', 101],
    [{ embedding_model: 'bad' }, 'Embedding model identifier must follow', 101],
    [{ embedding_model: 'nope@X' }, 'Unsupported model: <nope@X>', 102],
  ])('rejects %j and changes nothing', async (row, { client }) => {
    const [msg0, msg, code] = row as unknown as [Record<string, unknown>, string, number];
    const ds = await client.createDataset({ name: 'a' });
    const before = (await client.listDatasets())[0]!.toJSON();
    const e = await apiError(ds.update(msg0));
    expect(e.code).toBe(code);
    expect(e.message).toContain(msg);
    expect((await client.listDatasets())[0]!.toJSON()).toEqual(before);
  });

  test('renaming onto another dataset fails without auto-rename', async ({ client }) => {
    await client.createDataset({ name: 'taken' });
    const ds = await client.createDataset({ name: 'mine' });
    const e = await apiError(ds.update({ name: 'TAKEN' }));
    expect([e.code, e.message]).toEqual([102, "Dataset name 'TAKEN' already exists"]);
  });

  test('embedding_model may change with chunks too (RAGFlow 0.25.6), to an available model only', async ({ client }) => {
    client.registerModel({ type: 'embedding', name: 'e2', factory: 'OpenAI-API-Compatible', base_url: 'http://127.0.0.1:1/v1' });
    const ds = await client.createDataset({ name: 'a' });
    await ds.update({ embedding_model: 'e2@OpenAI-API-Compatible' });
    expect(ds.embedding_model).toBe('e2@OpenAI-API-Compatible');
    await ds.update({ embedding_model: 'ragloom-static-en-256@Builtin' });
    const [doc] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: new TextEncoder().encode('x') }]);
    await doc!.addChunk({ content: 'some text' });
    await ds.update({ embedding_model: 'e2@OpenAI-API-Compatible' });
    expect(ds.embedding_model).toBe('e2@OpenAI-API-Compatible');
    expect(ds.chunk_count).toBe(1);
    const e = await apiError(ds.update({ embedding_model: 'nope@OpenAI-API-Compatible' }));
    expect(e.code).toBe(102);
    expect(e.message).toMatch(/^Unsupported model: <?nope@OpenAI-API-Compatible>?$/);
    // null keeps the model.
    await ds.update({ embedding_model: null as never, name: 'a2' });
    expect(ds.embedding_model).toBe('e2@OpenAI-API-Compatible');
  });
});

describe('Client#deleteDatasets()', () => {
  test('null or empty ids delete nothing; delete_all deletes all', async ({ client }) => {
    await client.createDataset({ name: 'a' });
    await client.createDataset({ name: 'b' });
    await client.deleteDatasets({ ids: null });
    await client.deleteDatasets({ ids: [] });
    expect(await client.listDatasets()).toHaveLength(2);
    await client.deleteDatasets({ delete_all: true });
    expect(await client.listDatasets()).toHaveLength(0);
  });

  test('deletes the named ones, their documents and blobs', async ({ client }) => {
    const a = await client.createDataset({ name: 'a' });
    const b = await client.createDataset({ name: 'b' });
    await a.uploadDocuments([{ display_name: 'x.txt', blob: new TextEncoder().encode('hello') }]);
    await client.deleteDatasets({ ids: [a.id] });
    expect((await client.listDatasets()).map((d) => d.id)).toEqual([b.id]);
  });

  test('all-or-nothing: one foreign id deletes nothing', async ({ client }) => {
    const a = await client.createDataset({ name: 'a' });
    const ghost = 'a'.repeat(12) + '1' + 'b'.repeat(3) + '8' + 'c'.repeat(15);
    const e = await apiError(client.deleteDatasets({ ids: [a.id, ghost] }));
    expect(e.code).toBe(102);
    expect(e.message).toContain(`lacks permission for datasets: '${ghost}'`);
    expect(await client.listDatasets()).toHaveLength(1);
  });

  test('invalid and duplicate ids → 101', async ({ client }) => {
    const a = await client.createDataset({ name: 'a' });
    let e = await apiError(client.deleteDatasets({ ids: ['nope'] }));
    expect([e.code, e.message.includes('Invalid UUID1 format')]).toEqual([101, true]);
    e = await apiError(client.deleteDatasets({ ids: [a.id, a.id] }));
    expect(e.code).toBe(101);
    expect(e.message).toContain(`Duplicate ids: '${a.id}'`);
    expect(await client.listDatasets()).toHaveLength(1);
  });
});

describe('the tenant default embedding model', () => {
  test('is the client option default_embedding_model when set, and survives reopening with another', async ({ dir }) => {
    const { Client } = await import('../../src/index.js');
    const { join } = await import('node:path');
    const path = join(dir, 't.db');
    let c = new Client({ path, default_embedding_model: 'ragloom-static-en-128@Builtin' });
    expect((await c.createDataset({ name: 'a' })).embedding_model).toBe('ragloom-static-en-128@Builtin');
    await c.close();
    c = new Client({ path });
    expect((await c.createDataset({ name: 'b' })).embedding_model).toBe('ragloom-static-en-256@Builtin');
    expect((await c.listDatasets({ name: 'a' }))[0]!.embedding_model).toBe('ragloom-static-en-128@Builtin');
    await c.close();
    c = new Client({ path, default_embedding_model: 'nope@Nowhere' });
    const e = await apiError(c.createDataset({ name: 'c' }));
    expect([e.code, e.message]).toEqual([102, 'Unsupported model: <nope@Nowhere>']);
    await c.close();
  });
});

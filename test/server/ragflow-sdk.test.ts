/**
 * RAGFlow's official Python SDK (ragflow_sdk 0.25.6, ../shared/clients/ragflow-sdk-0.25.6) against
 * `ragloom serve`: one server in-process over a temporary database, five Python scripts
 * (test/server/sdk/*.py, run with /usr/bin/python3) that drive the SDK and print what every call
 * returned or raised as one JSON line; the tests below assert on it. Expected values and error
 * messages are RAGFlow's (../shared/reference/ragflow-behaviour.md §1-§11, RAGFlow v0.25.6).
 *
 * Scripts and tenants: datasets.py (user "dana") and memories.py (user "mia") run in tenants of
 * their own, so their lists are exact; documents.py then chats.py run as the admin (chats.py asks
 * questions about the documents documents.py parsed); agents.py runs as "ada", with "tess" a member
 * of ada's tenant; "bob" is the foreign tenant of every script. The four independent scripts run
 * concurrently.
 *
 * Skipped (with a warning) when ../shared, /usr/bin/python3 or Python's `requests` is missing
 * (Debian: `apt-get install python3-requests`; .ci/run installs it).
 *
 * Where ragloom differs from RAGFlow, the assertion is kept as RAGFlow behaves, in the skipped
 * block "known deviations (see docs/server.md)" at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type RunningServer } from '../../src/server/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');
const SHARED = resolve(REPO, '../shared');
const SDK_DIR = join(SHARED, 'clients', 'ragflow-sdk-0.25.6');
const SCRIPTS = join(HERE, 'sdk');
const PYTHON = '/usr/bin/python3';
const RESULT_MARK = 'RAGLOOM_SDK_RESULT ';

/** The environment every Python process gets (no proxy for the loopback server, no .pyc files). */
function pyEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PYTHONPATH: [join(SDK_DIR, 'vendor'), SDK_DIR].join(':'),
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONIOENCODING: 'utf-8',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    ...extra,
  };
}

/** Why the suite cannot run here, or undefined. */
function missingPrerequisite(): string | undefined {
  if (!existsSync(join(SDK_DIR, 'ragflow_sdk', '__init__.py'))) return `the RAGFlow SDK is not at ${SDK_DIR} (../shared missing)`;
  if (!existsSync(PYTHON)) return `${PYTHON} not found`;
  const r = spawnSync(PYTHON, ['-c', 'import requests'], { env: pyEnv(), encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return `${PYTHON} cannot import requests (apt-get install python3-requests): ${(r.stderr || String(r.error ?? '')).trim().split('\n').pop()}`;
  return undefined;
}

const SKIP = missingPrerequisite();
if (SKIP) console.warn(`[ragflow-sdk.test] skipped: ${SKIP}`);
const suite = SKIP ? describe.skip : describe;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
/** One recorded SDK call: its value, or the exception it raised. */
interface Rec {
  ok?: Json;
  error?: string;
  message?: string;
  code?: number;
}
type Results = Record<string, Rec>;

/** Runs test/server/sdk/<name> and returns its record. */
function runScript(name: string, env: Record<string, string>): Promise<Results> {
  return new Promise((done, fail) => {
    execFile(PYTHON, [join(SCRIPTS, name)], { env: pyEnv(env), cwd: SCRIPTS, maxBuffer: 256 * 1024 * 1024, timeout: 55_000 }, (err, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARK));
      if (err || !line) {
        fail(new Error(`${name} failed (${err?.message ?? 'no result line'})\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout.slice(-4000)}`));
        return;
      }
      done(JSON.parse(line.slice(RESULT_MARK.length)) as Results);
    });
  });
}

/** The value a call returned (fails the test, showing the exception, if it raised). */
function ok(r: Rec | undefined): Json {
  if (!r) throw new Error('call not recorded (the script stopped early?)');
  if (!('ok' in r)) throw new Error(`expected success, the SDK raised ${r.error}: ${r.message}`);
  return r.ok;
}

/** Asserts the call raised `type` with exactly `message` (and `code`, for ChunkUpdateError). */
function raised(r: Rec | undefined, message: string | RegExp, type = 'Exception', code?: number): void {
  if (!r) throw new Error('call not recorded (the script stopped early?)');
  if ('ok' in r) throw new Error(`expected ${type}(${String(message)}), the call returned ${JSON.stringify(r.ok)?.slice(0, 400)}`);
  expect(r.error).toBe(type);
  if (typeof message === 'string') expect(r.message).toBe(message);
  else expect(r.message).toMatch(message);
  if (code !== undefined) expect(r.code).toBe(code);
}

const HEX32 = /^[0-9a-f]{32}$/;
const CHUNK_METHODS_MSG = "Input should be 'naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag' or 'resume'";
const RAPTOR_PROMPT =
  'Please summarize the following paragraphs. Be careful with the numbers, do not make things up. Paragraphs as following:\n      {cluster_content}\nThe above is the content you need to summarize.';
const ENTITY_TYPES = ['organization', 'person', 'geo', 'event', 'category'];
/** The keys each SDK class keeps (it drops the others, §1). */
const DATASET_KEYS = ['avatar', 'chunk_count', 'chunk_method', 'description', 'document_count', 'embedding_model', 'id', 'name', 'pagerank', 'parser_config', 'permission', 'tenant_id'];
const DOCUMENT_KEYS = [
  'chunk_count', 'chunk_method', 'created_by', 'dataset_id', 'id', 'meta_fields', 'name', 'parser_config', 'process_begin_at', 'process_duration', 'progress',
  'progress_msg', 'run', 'size', 'source_type', 'status', 'thumbnail', 'token_count', 'type',
];
const CHUNK_KEYS = [
  'available', 'content', 'create_time', 'create_timestamp', 'dataset_id', 'doc_type', 'document_id', 'document_keyword', 'document_name', 'id',
  'important_keywords', 'positions', 'questions', 'similarity', 'tag_kwd', 'term_similarity', 'vector_similarity',
];
const MEMORY_KEYS = [
  'avatar', 'description', 'embd_id', 'forgetting_policy', 'id', 'llm_id', 'memory_size', 'memory_type', 'name', 'owner_name', 'permissions',
  'storage_type', 'system_prompt', 'temperature', 'tenant_id', 'user_prompt',
];
const PROLOGUE = "Hi! I'm your assistant. What can I do for you?";

const b64 = (s: string) => Buffer.from(s, 'base64');

suite('RAGFlow Python SDK 0.25.6 against ragloom serve', () => {
  let dir = '';
  let srv: RunningServer | undefined;
  const users: Record<string, { key: string; tenantId: string; userId: string }> = {};
  const runs: Record<'datasets' | 'documents' | 'chats' | 'memories' | 'agents', Promise<Results>> = {} as never;

  async function newUser(nickname: string): Promise<{ key: string; tenantId: string; userId: string }> {
    const res = await fetch(`${srv!.url}/api/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv!.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `${nickname}@example.com`, nickname }),
    });
    const body = (await res.json()) as Json;
    if (body.code !== 0) throw new Error(`POST /users: ${JSON.stringify(body)}`);
    return { key: body.data.api_key, tenantId: body.data.tenant_id, userId: body.data.id };
  }

  /** Adds `member` to `owner`'s tenant (as `owner`). */
  async function addMember(owner: { key: string; tenantId: string }, member: { userId: string }): Promise<void> {
    const res = await fetch(`${srv!.url}/api/v1/tenants/${owner.tenantId}/members`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: member.userId, role: 'normal' }),
    });
    const body = (await res.json()) as Json;
    if (body.code !== 0) throw new Error(`POST /tenants/${owner.tenantId}/members: ${JSON.stringify(body)}`);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ragloom-sdk-'));
    srv = await startServer({ path: join(dir, 'kb.db'), port: 0 });
    for (const n of ['bob', 'dana', 'mia', 'ada', 'tess']) users[n] = await newUser(n);
    await addMember(users.ada!, users.tess!);
    const base = { RAGLOOM_URL: srv.url, RAGLOOM_KEY2: users.bob!.key };
    const quiet = (p: Promise<Results>) => (p.catch(() => undefined), p); // awaited (and reported) by each describe
    runs.datasets = quiet(runScript('datasets.py', { ...base, RAGLOOM_KEY: users.dana!.key }));
    runs.memories = quiet(runScript('memories.py', { ...base, RAGLOOM_KEY: users.mia!.key }));
    runs.documents = quiet(runScript('documents.py', { ...base, RAGLOOM_KEY: srv.apiKey }));
    runs.agents = quiet(runScript('agents.py', { ...base, RAGLOOM_KEY: users.ada!.key, RAGLOOM_KEY3: users.tess!.key }));
    runs.chats = quiet(runs.documents.then((d) => runScript('chats.py', { ...base, RAGLOOM_KEY: srv!.apiKey, RAGLOOM_IN: JSON.stringify({ dataset: ok(d.ids).dataset }) })));
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(Object.values(runs));
    await srv?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  // ==================================================================== datasets
  describe('datasets', () => {
    let D: Results;
    let kb: Json;
    let tenant = '';
    beforeAll(async () => {
      D = await runs.datasets;
      kb = ok(D.create_default);
      tenant = kb.tenant_id;
    }, 60_000);

    it('create_dataset: the SDK object with its defaults', () => {
      expect(Object.keys(kb).sort()).toEqual(DATASET_KEYS);
      expect(kb).toMatchObject({
        name: 'kb', avatar: null, description: null, permission: 'me', chunk_method: 'naive', document_count: 0, chunk_count: 0, pagerank: 0,
      });
      expect(kb.id).toMatch(HEX32);
      expect(tenant).toBe(users.dana!.tenantId);
      expect(kb.embedding_model).toMatch(/^[^@\s]+@[^@\s]+$/);
      expect(kb.parser_config).toMatchObject({
        layout_recognize: 'DeepDOC', chunk_token_num: 512, delimiter: '\n', auto_keywords: 0, auto_questions: 0, html4excel: false, topn_tags: 3,
        table_context_size: 0, image_context_size: 0, children_delimiter: '',
        raptor: { use_raptor: true, prompt: RAPTOR_PROMPT, max_token: 256, threshold: 0.1, max_cluster: 64, random_seed: 0 },
        graphrag: { use_graphrag: true, entity_types: ENTITY_TYPES, method: 'light', batch_chunk_token_size: 4096 },
        parent_child: { use_parent_child: false, children_delimiter: '\n' },
      });
      expect(kb.parser_config).toHaveProperty('llm_id');
      // the default embedding model may be named explicitly
      expect(ok(D.create_with_default_embedding).embedding_model).toBe(kb.embedding_model);
    });

    it('create_dataset: duplicate names (case-insensitive) become name(1), name(2)', () => {
      expect(ok(D.create_dup_case).name).toBe('KB(1)');
      expect(ok(D.create_dup_again).name).toBe('kb(2)');
    });

    it('create_dataset: given fields, method defaults, a partial parser_config', () => {
      const notes = ok(D.create_full);
      expect(notes).toMatchObject({ name: 'notes', description: 'field notes', permission: 'team', chunk_method: 'qa' });
      expect(notes.parser_config).toMatchObject({ raptor: { use_raptor: false }, graphrag: { use_graphrag: false }, table_context_size: 0, image_context_size: 0 });
      expect(notes.parser_config).not.toHaveProperty('chunk_token_num');
      // a partial config gets Pydantic's defaults: raptor and graphrag off, delimiter a literal \n, topn_tags 1
      expect(ok(D.create_partial_config).parser_config).toMatchObject({
        chunk_token_num: 1024, delimiter: '\\n', topn_tags: 1, raptor: { use_raptor: false }, graphrag: { use_graphrag: false },
      });
    });

    it('create_dataset: validation errors', () => {
      raised(D.create_bad_chunk_method, `Field: <chunk_method> - Message: <${CHUNK_METHODS_MSG}> - Value: <bogus>`);
      raised(D.create_empty_chunk_method, `Field: <chunk_method> - Message: <${CHUNK_METHODS_MSG}> - Value: <>`);
      raised(D.create_embedding_no_at, 'Field: <embedding_model> - Message: <Embedding model identifier must follow <model_name>@<provider> format> - Value: <nope>');
      raised(D.create_embedding_empty_side, 'Field: <embedding_model> - Message: <Both model_name and provider must be non-empty strings> - Value: <@Builtin>');
      raised(D.create_embedding_unknown, 'Unsupported model: <no-such-model@NoSuchFactory>');
      raised(D.create_embedding_unauthorized, 'Unauthorized model: <text-embedding-v3@Tongyi-Qianwen>');
      raised(D.create_empty_name, 'Field: <name> - Message: <String should have at least 1 character> - Value: <>');
      raised(D.create_long_name, `Field: <name> - Message: <String should have at most 128 characters> - Value: <${'n'.repeat(125)}...>`);
      raised(D.create_bad_permission, "Field: <permission> - Message: <Input should be 'me' or 'team'> - Value: <ME>");
      raised(D.create_bad_avatar, 'Field: <avatar> - Message: <Missing MIME prefix. Expected format: data:<mime>;base64,<data>> - Value: <abc>');
    });

    it('list_datasets: order, paging, filters', () => {
      expect(ok(D.list_default)).toEqual(['explicit-embedding', 'partial', 'notes', 'kb(2)', 'KB(1)', 'kb']);
      expect(ok(D.list_page2)).toEqual(['notes', 'kb(2)']);
      expect(ok(D.list_page_beyond)).toEqual([]);
      expect(ok(D.list_update_time_asc)).toEqual(['kb', 'KB(1)', 'kb(2)', 'notes', 'partial', 'explicit-embedding']);
      expect(ok(D.list_by_id)).toEqual(['kb']);
      expect(ok(D.list_by_name)).toEqual(['notes']);
      expect(ok(D.list_by_name_case)).toEqual(['notes']);
    });

    it('list_datasets / get_dataset: errors', () => {
      raised(D.list_bad_orderby, "Field: <orderby> - Message: <Input should be 'create_time' or 'update_time'> - Value: <name>");
      raised(D.list_bad_id, 'Field: <id> - Message: <Invalid UUID1 format> - Value: <abc>');
      raised(D.list_uuid4_id, 'Field: <id> - Message: <Invalid UUID1 format> - Value: <9ffcb270745d4c2f9b5c49d6e070b339>');
      raised(D.list_unknown_id, `User '${tenant}' lacks permission for dataset '${ok(D.unknown_uuid1)}'`);
      raised(D.list_unknown_name, `User '${tenant}' lacks permission for dataset 'nothere'`);
      raised(D.list_page_size_0, 'Field: <page_size> - Message: <Input should be greater than or equal to 1> - Value: <0>');
      expect(ok(D.get_dataset)).toBe(kb.id);
      // get_dataset lists by name first, so the list's error is what the SDK raises
      raised(D.get_dataset_missing, `User '${tenant}' lacks permission for dataset 'nothere'`);
    });

    it('DataSet.update: returns the refreshed object; chunk_method switches the config', () => {
      expect(ok(D.update)).toMatchObject({ id: kb.id, name: 'kb-renamed', description: 'renamed', pagerank: 10 });
      expect(ok(D.update_list_after)).toMatchObject({ id: kb.id, name: 'kb-renamed', description: 'renamed', pagerank: 10 });
      expect(ok(D.update_chunk_method)).toEqual({ raptor: { use_raptor: false }, graphrag: { use_graphrag: false }, image_context_size: 0, table_context_size: 0 });
    });

    it('DataSet.update: errors', () => {
      raised(D.update_empty, 'No properties were modified');
      raised(D.update_name_clash, "Dataset name 'NOTES' already exists");
      raised(D.update_bad_chunk_method, `Field: <chunk_method> - Message: <${CHUNK_METHODS_MSG}> - Value: <bogus>`);
      raised(D.update_read_only, 'Field: <chunk_count> - Message: <Extra inputs are not permitted> - Value: <3>');
      raised(D.update_pagerank_high, 'Field: <pagerank> - Message: <Input should be less than or equal to 100> - Value: <101>');
      raised(D.update_permission_none, "Field: <permission> - Message: <Input should be 'me' or 'team'> - Value: <None>");
    });

    it('another tenant neither sees nor changes the datasets', () => {
      const theirs = ok(D.theirs);
      expect(theirs.tenant_id).toBe(users.bob!.tenantId);
      raised(D.foreign_list_by_id, `User '${theirs.tenant_id}' lacks permission for dataset '${kb.id}'`);
      raised(D.foreign_update, `User '${theirs.tenant_id}' lacks permission for dataset '${kb.id}'`);
      expect(ok(D.foreign_sees)).toEqual(['theirs']);
    });

    it('delete_datasets: ids, errors (nothing deleted), delete_all', () => {
      const notes = ok(D.create_full);
      const theirs = ok(D.theirs);
      raised(D.delete_bad_id, "Field: <ids> - Message: <Invalid UUID1 format> - Value: <['abc']>");
      raised(D.delete_duplicate_ids, `Field: <ids> - Message: <Duplicate ids: '${notes.id}'> - Value: <['${notes.id}', '${notes.id}']>`);
      raised(D.delete_foreign, `User '${tenant}' lacks permission for datasets: '${theirs.id}'`);
      raised(D.delete_mixed, `User '${tenant}' lacks permission for datasets: '${theirs.id}'`);
      expect(ok(D.list_after_mixed)).toEqual(['notes']);
      expect(ok(D.delete_no_ids)).toBeNull();
      expect(ok(D.count_after_no_ids)).toBe(6);
      expect(ok(D.delete_one)).toBeNull();
      raised(D.delete_one_again, `User '${tenant}' lacks permission for datasets: '${notes.id}'`);
      expect(ok(D.list_after_delete)).toEqual(['explicit-embedding', 'partial', 'kb(2)', 'KB(1)', 'kb-renamed']);
      expect(ok(D.delete_all)).toBeNull();
      expect(ok(D.list_after_delete_all)).toEqual([]);
      expect(ok(D.foreign_after_delete_all)).toEqual(['theirs']);
    });
  });

  // ==================================================================== documents, parsing, chunks, retrieval
  describe('documents, parsing, chunks, retrieval', () => {
    let R: Results;
    let ds = '';
    let tenant = '';
    const doc: Record<string, Json> = {};
    beforeAll(async () => {
      R = await runs.documents;
      ({ id: ds, tenant_id: tenant } = ok(R.dataset));
      for (const d of ok(R.upload) as Json[]) doc[d.name] = d;
    }, 60_000);

    it('upload_documents: several files, same-name renaming, the Document objects', () => {
      expect(Object.keys(doc)).toEqual(['tides.md', 'bread.md', 'notes.txt', 'crème.txt', 'empty.txt', 'notes(1).txt']);
      for (const d of Object.values(doc)) {
        expect(Object.keys(d).sort()).toEqual(DOCUMENT_KEYS);
        expect(d).toMatchObject({
          dataset_id: ds, chunk_method: 'naive', run: 'UNSTART', progress: 0, chunk_count: 0, token_count: 0, source_type: 'local', status: '1', type: 'doc', meta_fields: {},
        });
        expect(d.id).toMatch(HEX32);
      }
      expect(doc['empty.txt'].size).toBe(0);
      expect(doc['crème.txt'].size).toBe(b64(ok(R.creme_original)).length);
      raised(R.upload_unsupported, 'tool.exe: This type of file has not been supported yet!');
      raised(R.upload_nothing, 'No file part!');
    });

    it('list_documents: order, keywords, paging, id, name', () => {
      expect(ok(R.list_default)).toEqual(['notes(1).txt', 'empty.txt', 'crème.txt', 'notes.txt', 'bread.md', 'tides.md']);
      expect(ok(R.list_asc)).toEqual(['tides.md', 'bread.md', 'notes.txt', 'crème.txt', 'empty.txt', 'notes(1).txt']);
      expect(ok(R.list_keywords)).toEqual(['notes(1).txt', 'notes.txt']);
      expect(ok(R.list_keywords_paged)).toEqual(['notes.txt']);
      expect(ok(R.list_page2)).toEqual(['notes.txt', 'bread.md', 'tides.md']);
      expect(ok(R.list_by_id).map((d: Json) => d.name)).toEqual(['tides.md']);
      expect(ok(R.list_by_name)).toEqual(['bread.md']);
    });

    it('list_documents: errors (and the SDK\'s own checks)', () => {
      raised(R.list_unknown_id, "You don't own the document nope.");
      raised(R.list_unknown_name, "You don't own the document nope.txt.");
      raised(R.list_id_and_ids, "Cannot use both 'id' and 'ids' parameters at the same time.", 'ValueError');
      // SDK 0.25.6 bug (§2): any `ids` crashes before a request is sent
      raised(R.list_ids, "'dict' object has no attribute 'append'", 'AttributeError');
      raised(R.foreign_list, `User '${users.bob!.tenantId}' lacks permission for dataset 'library'`);
      raised(R.foreign_list_documents, `You don't own the dataset ${ds}. `);
    });

    it('Document.update: rename, chunk_method, meta_fields', () => {
      expect(ok(R.update_rename)).toBe('draft.txt');
      expect(ok(R.update_rename_listed)).toEqual(['draft.txt']);
      // the final same-name check is case-sensitive: NOTES.txt next to notes.txt is allowed
      expect(ok(R.update_case_only_clash)).toBe('NOTES.txt');
      expect(ok(R.update_chunk_method)).toBe('one');
      expect(ok(R.update_meta)).toEqual({ author: 'ann', year: 2024, tags: ['a', 'b'] });
      expect(ok(R.update_meta_listed)).toEqual({ author: 'ann', year: 2024, tags: ['a', 'b'] });
    });

    it('Document.update: errors', () => {
      raised(R.update_extension, "The extension of file can't be changed");
      raised(R.update_duplicate, 'Duplicated document name in the same dataset.');
      raised(R.update_bad_chunk_method, "Field: <chunk_method> - Message: <`chunk_method` other_chunk_method doesn't exist> - Value: <other_chunk_method>");
      // UpdateDocumentReq lets "" through; validate_document_update_fields refuses it, unformatted.
      raised(R.update_empty_chunk_method, '`chunk_method` (empty string) is not valid');
      raised(R.update_chunk_count, "Can't change `chunk_count`.");
      raised(R.update_progress, 'Field: <progress> - Message: <Input should be less than or equal to 1> - Value: <1.5>');
      raised(R.update_meta_not_dict, 'meta_fields must be a dictionary'); // the SDK's own check
    });

    it('Document.download: the uploaded bytes; an empty file raises', () => {
      expect(b64(ok(R.download_creme))).toEqual(b64(ok(R.creme_original)));
      expect(b64(ok(R.download_tides))).toEqual(b64(ok(R.tides_original)));
      raised(R.download_empty, 'This file is empty.');
    });

    it('delete_documents: errors delete nothing; ids delete', () => {
      const empty = doc['empty.txt'].id;
      raised(R.delete_none, `should either provide doc ids or set delete_all(true), dataset: ${ds}. `);
      raised(R.delete_unknown, `These documents do not belong to dataset ${ds} or Document not found: nope`);
      raised(R.delete_both, `should not provide both doc ids and delete_all(true), dataset: ${ds}. `);
      raised(R.delete_duplicate_ids, `Field: <ids> - Message: <Duplicate ids: '${empty}'> - Value: <['${empty}', '${empty}']>`);
      raised(R.delete_partly_unknown, `These documents do not belong to dataset ${ds} or Document not found: nope`);
      expect(ok(R.delete_ok)).toBeNull();
      expect(ok(R.list_after_delete)).toEqual(['notes.txt', 'bread.md', 'tides.md']);
    });

    it('parse_documents: statuses and chunk counts; the documents and the dataset after', () => {
      const parsed = ok(R.parse) as [string, string, number, number][];
      const wanted = ['tides.md', 'bread.md', 'notes.txt'].map((n) => doc[n].id).sort();
      expect(parsed.map((p) => p[0])).toEqual(wanted);
      for (const [, run, chunks, tokens] of parsed) {
        expect(run).toBe('DONE');
        expect(chunks).toBe(1);
        expect(tokens).toBeGreaterThan(10);
      }
      const docs = ok(R.parsed_docs);
      for (const n of ['tides.md', 'bread.md', 'notes.txt']) {
        const d = docs[n];
        expect(d).toMatchObject({ run: 'DONE', progress: 1, chunk_count: 1 });
        expect(d.progress_msg).toContain('Task done');
        expect(d.process_begin_at).toBeTruthy();
        expect(d.process_duration).toBeGreaterThan(0);
        expect(d.token_count).toBe(parsed.find((p) => p[0] === d.id)![3]);
      }
      expect(ok(R.parsed_dataset)).toMatchObject({ id: ds, document_count: 3, chunk_count: 3 });
    });

    it('async_parse_documents / async_cancel_parse_documents: errors, cancelling a running parse', () => {
      raised(R.async_parse_empty, '`document_ids` is required');
      raised(R.async_parse_unknown, "Documents not found: ['nope']");
      raised(R.cancel_unknown, "You don't own the document nope.");
      raised(R.cancel_not_started, "Can't stop parsing document that has not started or already completed");
      raised(R.cancel_done, "Can't stop parsing document that has not started or already completed");
      // the known ids are still queued
      raised(R.async_parse_partly_unknown, "Documents not found: ['nope']");
      expect(ok(R.reparse_after_partly_unknown)).toEqual([[doc['notes.txt'].id, 'DONE', 1]]);
      expect(ok(R.async_parse_big)).toBeNull();
      raised(R.parse_running, "Can't parse document that is currently being processed");
      expect(ok(R.cancel_running)).toBeNull();
      expect(ok(R.after_cancel)).toMatchObject({ run: 'CANCEL', progress: 0 });
    });

    it('add_chunk / list_chunks', () => {
      const notes = doc['notes.txt'].id;
      const listed = ok(R.list_chunks);
      expect(listed).toHaveLength(1);
      expect(Object.keys(listed[0]).sort()).toEqual(CHUNK_KEYS);
      expect(listed[0]).toMatchObject({ document_id: notes, dataset_id: ds, document_name: 'notes.txt', available: true });
      expect(listed[0].content).toContain('The lighthouse keeper logs the weather every morning.');
      const c = ok(R.add_chunk);
      expect(c).toMatchObject({
        content: 'Neap tides occur at the first and third quarter moons.', important_keywords: ['neap'], questions: ['When are neap tides?'],
        tag_kwd: ['astronomy'], dataset_id: ds, document_id: notes,
      });
      expect(c.id).toMatch(/^[0-9a-f]{16}$/);
      expect(ok(R.chunk_count_after_add)).toBe(2);
      const [first, again] = ok(R.add_chunk_same_content);
      expect(again).toBe(first);
      expect(ok(R.list_chunks_keywords)).toEqual([expect.stringMatching(/<em>neap<\/em> tides occur/i)]);
      expect(ok(R.list_chunks_id)).toEqual([c.id]);
      expect(ok(R.list_chunks_paged)).toEqual([1, 1, 0]);
      raised(R.add_chunk_blank, '`content` is required');
      raised(R.add_chunk_keywords_not_list, /important_keywords='neap' violates type hint list\[str\]/, 'BeartypeCallHintParamViolation');
      raised(R.list_chunks_unknown_id, `Chunk not found: ${ds}/nope`);
    });

    it('Chunk.update; ChunkUpdateError carries the code', () => {
      expect(ok(R.update_chunk)).toBeNull();
      expect(ok(R.update_chunk_listed)).toMatchObject({
        id: ok(R.add_chunk).id, content: 'Neap tides happen at the quarter moons.', important_keywords: ['neap', 'quarter'], questions: ['What are neap tides?'],
      });
      raised(R.update_chunk_blank, '`content` is required', 'ChunkUpdateError', 102);
      raised(R.update_chunk_keywords_not_list, '`important_keywords` should be a list', 'ChunkUpdateError', 102);
      raised(R.update_chunk_keywords_not_str, "TypeError('sequence item 0: expected str instance, int found')", 'ChunkUpdateError', 100);
      raised(R.update_chunk_unknown, "Can't find this chunk nope", 'ChunkUpdateError', 102);
    });

    it('delete_chunks: unknown ids, partial (found ones deleted), ids, delete_all', () => {
      const c = ok(R.add_chunk).id;
      raised(R.delete_chunks_unknown, 'rm_chunk deleted chunks 0, expect 1');
      raised(R.delete_chunks_partly_unknown, 'rm_chunk deleted chunks 1, expect 2');
      expect(ok(R.chunks_after_partial)).toHaveLength(2);
      expect(ok(R.chunks_after_partial)).toContain(c);
      expect(ok(R.delete_chunks_nothing)).toBeNull();
      expect(ok(R.delete_chunks)).toBeNull();
      expect(ok(R.chunks_after_delete)).toEqual([1, 1]);
      expect(ok(R.delete_chunks_all)).toBeNull();
      expect(ok(R.chunks_after_delete_all)).toEqual([0, 0]);
    });

    it('retrieve: chunks with scores; document filter; a blank question finds nothing', () => {
      const hits = ok(R.retrieve);
      expect(hits.length).toBeGreaterThan(0);
      expect(Object.keys(hits[0]).sort()).toEqual(CHUNK_KEYS);
      expect(hits[0]).toMatchObject({ dataset_id: ds, document_id: doc['bread.md'].id, document_name: 'bread.md', document_keyword: 'bread.md' });
      expect(hits[0].content).toContain('Let it rise for one hour');
      for (const k of ['similarity', 'vector_similarity', 'term_similarity']) {
        expect(hits[0][k], k).toBeGreaterThan(0);
        expect(hits[0][k], k).toBeLessThanOrEqual(1.0001);
      }
      expect(hits[0].similarity).toBeGreaterThanOrEqual(0.2);
      const filtered = ok(R.retrieve_doc_filter);
      expect(filtered.length).toBeGreaterThan(0);
      for (const h of filtered) expect(h.document_id).toBe(doc['tides.md'].id);
      for (const h of ok(R.retrieve_doc_filter_other)) expect(h.document_id).toBe(doc['bread.md'].id);
      expect(ok(R.retrieve_blank_question)).toEqual([]);
    });

    it('retrieve: errors (question required, dataset ownership)', () => {
      expect(ok(R.retrieve_no_question)).toEqual({ code: 102, message: '`question` is required.' });
      raised(R.retrieve_no_datasets, '`dataset_ids` is required.');
      raised(R.retrieve_datasets_not_list, '`dataset_ids` should be a list.');
      raised(R.retrieve_unknown_dataset, "You don't own the dataset nope.");
      raised(R.retrieve_unknown_document, "The datasets don't own the document nope");
      raised(R.retrieve_top_k_0, '`top_k` must be greater than 0');
      raised(R.retrieve_foreign, `You don't own the dataset ${ds}.`);
      expect(tenant).toMatch(HEX32);
    });
  });

  // ==================================================================== chats and sessions
  describe('chats, sessions, Session.ask', () => {
    let C: Results;
    let ds = '';
    let chat: Json;
    beforeAll(async () => {
      ds = ok((await runs.documents).ids).dataset;
      C = await runs.chats;
      chat = ok(C.create);
    }, 60_000);

    it('create_chat: defaults', () => {
      expect(chat).toMatchObject({
        name: 'Librarian', icon: '', dataset_ids: [ds], kb_names: ['library'], llm_setting: {}, description: 'A helpful Assistant',
        top_n: 6, top_k: 1024, rerank_id: '', similarity_threshold: 0.1, vector_similarity_weight: 0.3,
        prompt_config: {
          prologue: PROLOGUE, empty_response: 'Sorry! No relevant content was found in the knowledge base!',
          parameters: [{ key: 'knowledge', optional: false }], quote: true, tts: false, refine_multiturn: true,
        },
      });
      expect(chat.id).toMatch(HEX32);
      expect(chat.prompt_config.system).toContain('{knowledge}');
      expect(typeof chat.llm_id).toBe('string');
      expect(chat.llm_id).not.toBe('');
      expect(ok(C.create_no_datasets)).toMatchObject({ name: 'Helper', dataset_ids: [] });
    });

    it('create_chat: errors', () => {
      const { unparsed, theirs } = ok(C.refs);
      raised(C.create_duplicate, 'Duplicated chat name in creating chat.');
      raised(C.create_blank_name, '`name` is required.');
      raised(C.create_unknown_dataset, "You don't own the dataset nope");
      raised(C.create_unparsed_dataset, `The dataset ${unparsed} doesn't own parsed file`);
      raised(C.create_foreign_dataset, `You don't own the dataset ${theirs}`);
      raised(C.create_bad_llm, "`llm_id` no-such-llm@Nowhere doesn't exist");
      raised(C.create_bad_rerank, "`rerank_id` no-such-reranker doesn't exist");
      expect(ok(C.create_bad_prompt_config)).toEqual({ code: 102, message: '`prompt_config` should be an object.' });
    });

    it('list_chats / get_chat', () => {
      expect(ok(C.list_default)).toEqual(['Scratch', 'Helper', 'Librarian']);
      expect(ok(C.list_asc)).toEqual(['Librarian', 'Helper', 'Scratch']);
      expect(ok(C.list_page)).toEqual([['Scratch', 'Helper'], ['Librarian']]);
      expect(ok(C.list_keywords)).toEqual(['Helper']);
      expect(ok(C.list_name)).toEqual(['Librarian']);
      expect(ok(C.list_id)).toEqual(['Librarian']);
      expect(ok(C.get_chat)).toMatchObject({ id: chat.id, name: 'Librarian', dataset_ids: [ds], prompt_config: chat.prompt_config });
      raised(C.get_chat_unknown, 'No authorization.');
      raised(C.get_chat_foreign, 'No authorization.');
    });

    it('Chat.update: PATCH merges prompt_config and llm_setting; returns None', () => {
      expect(ok(C.update)).toBeNull();
      const after = ok(C.update_read_back);
      expect(after.top_n).toBe(4);
      expect(after.llm_setting).toEqual({ temperature: 0.2 });
      expect(after.prompt_config).toEqual({ ...chat.prompt_config, empty_response: 'Nothing found in the library.' });
      expect(ok(C.update_rename)).toBeNull();
      expect(ok(C.update_rename_read_back)).toBe('Helper Two');
      raised(C.update_empty_name, '`name` cannot be empty.');
      raised(C.update_name_clash, 'Duplicated chat name.');
      raised(C.update_not_dict, /update_message='name=x' violates type hint <class 'dict'>/, 'BeartypeCallHintParamViolation');
    });

    it('delete_chats: a partial delete succeeds (the SDK returns None), all-unknown raises', () => {
      expect(ok(C.delete_partial)).toBeNull();
      expect(ok(C.list_after_partial)).toEqual(['Helper Two', 'Librarian']);
      expect(ok(C.delete_partial_envelope)).toEqual({
        code: 0, message: 'Partially deleted 1 chats with 1 errors', data: { success_count: 1, errors: ['Chat(nope) not found.'] },
      });
      raised(C.delete_all_unknown, 'Chat(nope1) not found.; Chat(nope2) not found.');
      expect(ok(C.delete_none)).toBeNull();
      raised(C.get_deleted, 'No authorization.');
      expect(ok(C.count_after_deletes)).toBe(2);
    });

    it('create_session / list_sessions / Session.update', () => {
      const s = ok(C.session_create);
      expect(s).toMatchObject({ name: 'New session', chat_id: chat.id, messages: [{ role: 'assistant', content: PROLOGUE }] });
      expect(s.id).toMatch(HEX32);
      expect(ok(C.session_create_named)).toMatchObject({ name: 'Tides', chat_id: chat.id });
      raised(C.session_create_blank, '`name` can not be empty.');
      raised(C.session_create_deleted_chat, 'No authorization.');
      expect(ok(C.sessions_list)).toEqual(['Doomed', 'Tides', 'New session']);
      expect(ok(C.sessions_list_asc)).toEqual(['New session', 'Tides', 'Doomed']);
      expect(ok(C.sessions_list_name)).toEqual(['Tides']);
      expect(ok(C.sessions_list_id)).toEqual(['New session']);
      expect(ok(C.sessions_list_page)).toEqual([['New session'], []]);
      expect(ok(C.session_update)).toBeNull();
      expect(ok(C.session_update_read_back)).toEqual(['Tides and moon']);
      raised(C.session_update_blank, '`name` can not be empty.');
      raised(C.session_update_messages, '`messages` cannot be changed.');
      raised(C.session_update_reference, '`reference` cannot be changed.');
    });

    it('Session.ask: one Message with [ID:n] citations and the reference chunks', () => {
      const msgs = ok(C.ask);
      expect(msgs).toHaveLength(1);
      const m = msgs[0];
      expect(m.role).toBe('assistant');
      expect(m.content).toContain('Let it rise for one hour in a warm place');
      expect(m.content).toMatch(/\[ID:\d+\]/);
      expect(m.reference.length).toBeGreaterThan(0);
      expect(m.reference[0]).toMatchObject({ document_name: 'bread.md', dataset_id: ds });
      for (const k of ['id', 'content', 'document_id', 'document_name', 'dataset_id', 'image_id', 'positions', 'similarity', 'vector_similarity', 'term_similarity']) {
        expect(m.reference[0]).toHaveProperty(k);
      }
      const cited = Number(/\[ID:(\d+)\]/.exec(m.content)![1]);
      expect(cited).toBeLessThan(m.reference.length);
    });

    it('Session.ask(stream=True): incremental answers, then the final Message with the full answer and its reference', () => {
      const msgs = ok(C.ask_stream) as Json[];
      expect(msgs.length).toBeGreaterThanOrEqual(2);
      const final = msgs[msgs.length - 1];
      const deltas = msgs.slice(0, -1);
      for (const d of deltas) expect(d.reference).toBeNull();
      expect(deltas.map((d) => d.content).join('')).toBe(final.content);
      expect(final.content).toContain('Spring tides happen at new and full moon');
      expect(final.content).toMatch(/\[ID:\d+\]/);
      expect(final.reference.length).toBeGreaterThan(0);
      expect(final.reference[0]).toMatchObject({ document_name: 'tides.md', dataset_id: ds });
    });

    it('Session.ask: nothing retrieved → the empty_response, no reference', () => {
      expect(ok(C.ask_no_match)).toEqual([{ content: 'Nothing found in the library.', role: 'assistant', reference: [] }]);
      const streamed = ok(C.ask_no_match_stream) as Json[];
      expect(streamed[streamed.length - 1]).toEqual({ content: 'Nothing found in the library.', role: 'assistant', reference: [] });
    });

    it('the session keeps the conversation', () => {
      const messages = ok(C.session_messages) as Json[];
      expect(messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant', 'user', 'assistant']);
      expect(messages[1].content).toBe('How long should the dough rise?');
      expect(messages[2].content).toBe(ok(C.ask)[0].content);
      expect(messages[4].content).toBe(ok(C.ask_stream).at(-1).content);
    });

    it('delete_sessions: partial succeeds, unknown raises; asking a deleted session', () => {
      expect(ok(C.sessions_delete_partial)).toBeNull();
      expect(ok(C.sessions_after_partial)).toEqual(['Tides and moon', 'New session']);
      expect(ok(C.sessions_delete_partial_envelope)).toEqual({
        code: 0, message: 'Partially deleted 1 sessions with 1 errors', data: { success_count: 1, errors: ["The chat doesn't own the session nope"] },
      });
      raised(C.sessions_delete_unknown, "The chat doesn't own the session nope");
      expect(ok(C.sessions_delete)).toBeNull();
      expect(ok(C.sessions_after_delete)).toEqual(['New session']);
      // RAGFlow's error envelope has no `data`, so the SDK's ask() fails on json_data["data"]
      expect(ok(C.ask_deleted_session_envelope)).toEqual({ code: 102, message: 'Session not found!' });
      raised(C.ask_deleted_session, "'data'", 'KeyError');
      raised(C.ask_deleted_session_stream, "'data'", 'KeyError');
    });
  });

  // ==================================================================== memories and messages
  describe('memories and messages', () => {
    let M: Results;
    let mem: Json;
    let ids: Record<string, number> = {};
    beforeAll(async () => {
      M = await runs.memories;
      mem = ok(M.create);
      ids = ok(M.message_ids);
    }, 60_000);

    it('create_memory: the SDK object with its defaults', () => {
      const { embd_id, llm_id } = ok(M.models);
      expect(Object.keys(mem).sort()).toEqual(MEMORY_KEYS);
      expect(mem).toMatchObject({
        name: 'Diary', memory_type: ['raw'], storage_type: 'table', permissions: 'me', memory_size: 5242880, forgetting_policy: 'FIFO',
        temperature: 0.5, embd_id, llm_id, tenant_id: users.mia!.tenantId, owner_name: 'mia',
      });
      expect(mem.id).toMatch(HEX32);
      expect(typeof mem.system_prompt).toBe('string');
      expect(ok(M.create_duplicate)).toBe('Diary(1)');
    });

    it('create_memory: errors', () => {
      raised(M.create_blank_name, 'Memory name cannot be empty or whitespace.');
      raised(M.create_long_name, `Memory name '${'m'.repeat(129)}' exceeds limit of 128.`);
      raised(M.create_bad_type, "Memory type '{'something'}' is not supported.");
      raised(M.create_bad_llm, 'Tenant Model with name no-such-llm@Nowhere and type chat not found');
      raised(M.create_bad_embd, /no-such-embedding@Nowhere.*not found/);
      expect(ok(M.create_missing_args)).toEqual({ code: 101, message: 'required argument are missing: memory_type,embd_id,llm_id; ', data: null });
    });

    it('list_memory: the dict, keywords, paging, the listed keys', () => {
      expect(ok(M.list)).toEqual({ code: 0, message: true, total_count: 3, names: ['Scratchpad', 'Diary(1)', 'Diary'] });
      expect(ok(M.list_keywords)).toEqual({ code: 0, message: true, total_count: 2, names: ['Diary(1)', 'Diary'] });
      expect(ok(M.list_page)).toEqual({ code: 0, message: true, total_count: 3, names: ['Diary(1)'] });
      expect(ok(M.list_item_keys)).toEqual(['avatar', 'create_date', 'create_time', 'description', 'id', 'memory_type', 'name', 'owner_name', 'permissions', 'storage_type', 'tenant_id']);
      expect(ok(M.foreign_list)).toBe(0);
    });

    it('Memory.update / get_config', () => {
      expect(ok(M.update)).toMatchObject({ id: mem.id, name: 'Diary', description: 'Daily notes', temperature: 0.25, memory_size: 1048576 });
      expect(ok(M.update_rename_clash)).toBe('Diary(2)');
      expect(ok(M.get_config)).toMatchObject({ id: mem.id, name: 'Diary', description: 'Daily notes', temperature: 0.25, memory_size: 1048576, memory_type: ['raw'] });
      raised(M.update_bad_permission, "Unknown permission 'everyone'.");
      raised(M.update_bad_size, 'Memory size should be in range (0, 10485760] Bytes.');
      raised(M.update_bad_policy, "Forgetting policy 'LRU' is not supported.");
      raised(M.update_bad_temperature, 'Temperature should be in range [0, 1].');
      raised(M.update_foreign, `Memory '${mem.id}' not found.`);
      raised(M.update_unknown, "Memory 'nope' not found.");
      raised(M.get_config_foreign, `Memory '${mem.id}' not found.`);
      raised(M.update_type_not_empty, "Can't update ['memory_type'] when memory isn't empty.");
    });

    it('add_message / list_memory_messages', () => {
      for (const k of ['add_message', 'add_message_2', 'add_message_3']) expect(ok(M[k])).toBe('All add to task.');
      raised(M.add_message_unknown_memory, 'Some messages failed to add. Detail:Memory not found.');
      raised(M.add_message_foreign_memory, 'Some messages failed to add. Detail:Memory not found.');
      const listed = ok(M.list_messages);
      expect(listed.storage_type).toBe('table');
      expect(listed.messages.total_count).toBe(3);
      const list = listed.messages.message_list as Json[];
      expect(list.map((m) => m.session_id)).toEqual(['sess-3', 'sess-2', 'sess-1']);
      expect(list[2]).toMatchObject({
        message_type: 'raw', memory_id: mem.id, agent_id: 'agent-1', session_id: 'sess-1', status: true, forget_at: '-', extract: [],
        content: 'User Input: What is the capital of France?\nAgent Response: Paris is the capital of France.',
      });
      // keywords match the session id
      expect(ok(M.list_messages_keywords).messages.message_list.map((m: Json) => m.session_id)).toEqual(['sess-2']);
      expect(ok(M.list_messages_agent).messages.message_list.map((m: Json) => m.session_id)).toEqual(['sess-3']);
      const paged = ok(M.list_messages_paged).messages;
      expect(paged.total_count).toBe(3);
      expect(paged.message_list.map((m: Json) => m.session_id)).toEqual(['sess-1']);
    });

    it('search_message / get_recent_messages / get_message_content', () => {
      const hits = ok(M.search) as Json[];
      expect(hits.length).toBeGreaterThan(0);
      expect(hits[0]).toMatchObject({ message_id: ids['sess-1'], session_id: 'sess-1' });
      expect(hits[0].similarity).toBeGreaterThan(0);
      expect(ok(M.search_top_n)).toHaveLength(1);
      expect(ok(M.recent).map((m: Json) => m.session_id)).toEqual(['sess-3', 'sess-2', 'sess-1']);
      expect(ok(M.recent_limit).map((m: Json) => m.session_id)).toEqual(['sess-3', 'sess-2']);
      expect(ok(M.recent_session).map((m: Json) => m.session_id)).toEqual(['sess-3']);
      raised(M.recent_no_memory, 'memory_ids is required.');
      const content = ok(M.content);
      expect(content).toMatchObject({ message_id: ids['sess-1'], memory_id: mem.id, content: 'User Input: What is the capital of France?\nAgent Response: Paris is the capital of France.' });
      expect(content.content_embed.length).toBeGreaterThan(0);
      raised(M.content_unknown, `Message '99999' in memory '${mem.id}' not found.`);
    });

    it('update_message_status / forget_message', () => {
      expect(ok(M.status_off)).toBe(true);
      expect(ok(M.search_after_status_off)).not.toContain(ids['sess-1']);
      raised(M.status_not_bool, /status='no' violates type hint <class 'bool'>/, 'BeartypeCallHintParamViolation');
      expect(ok(M.forget)).toBe(true);
      expect(ok(M.recent_after_forget)).toEqual(['sess-3', 'sess-1']);
      expect(ok(M.search_after_forget)).not.toContain(ids['sess-2']);
      const listed = ok(M.list_after_forget);
      expect(listed.total_count).toBe(3);
      const forgotten = listed.message_list.find((m: Json) => m.session_id === 'sess-2');
      expect(forgotten.forget_at).not.toBe('-');
    });

    it('delete_memory', () => {
      const { spare } = ok(M.refs);
      raised(M.delete_foreign, `Memory '${mem.id}' not found.`);
      raised(M.delete_unknown, "Memory 'nope' not found.");
      expect(ok(M.delete)).toBeNull();
      expect(ok(M.list_after_delete)).toEqual({ code: 0, message: true, total_count: 2, names: ['Diary', 'Diary(1)'] });
      raised(M.config_after_delete, `Memory '${spare}' not found.`);
    });
  });

  // ==================================================================== agents and agent sessions
  describe('agents and agent sessions', () => {
    let A: Results;
    let ids: { echo: string; second: string; shared: string };
    let ada = '';
    beforeAll(async () => {
      A = await runs.agents;
      ids = ok(A.ids);
      ada = users.ada!.tenantId;
    }, 60_000);
    const noAccess = 'Make sure you have permission to access the agent.';

    it('create_agent returns None; its errors', () => {
      expect(ok(A.create)).toBeNull();
      expect(ok(A.create_second)).toBeNull();
      raised(A.create_duplicate, 'ECHO already exists.');
      raised(A.create_web_tool, /DuckDuckGo \(web tools: need the internet\)/);
      raised(A.create_dataflow, /^This DSL uses components ragloom cannot run: File \(ingestion-pipeline components/);
      raised(A.create_dsl_not_dict, /parameter dsl='\{\}' violates type hint <class 'dict'>/, 'BeartypeCallHintParamViolation');
      expect(ok(A.create_no_dsl_envelope)).toEqual({ code: 101, message: 'No DSL data in request.', data: false });
      expect(ok(A.create_bad_json_envelope)).toEqual({ code: 101, message: 'Invalid DSL JSON string.', data: false });
      expect(ok(A.create_list_dsl_envelope)).toEqual({ code: 101, message: 'DSL must be a JSON object.', data: false });
      expect(ok(A.create_no_title_envelope)).toEqual({ code: 101, message: 'No title in request.', data: false });
      const raw = ok(A.create_envelope);
      expect(raw).toMatchObject({ code: 0, message: 'success', data: { title: 'Raw', user_id: ada, nickname: 'ada', permission: 'me', canvas_category: 'agent_canvas' } });
      expect(raw.data.id).toMatch(HEX32);
    });

    it('list_agents / get_agent', () => {
      expect(ok(A.list_default)).toEqual(['Raw', 'Shared', 'Second', 'Echo']);
      expect(ok(A.list_asc)).toEqual(['Echo', 'Second', 'Shared', 'Raw']);
      expect(ok(A.list_page)).toEqual([['Raw', 'Shared'], []]);
      const env = ok(A.list_envelope);
      expect(env).toMatchObject({ code: 0, message: 'success', data: { total: 1, canvas: [{ id: ids.echo, title: 'Echo', tenant_id: ada, nickname: 'ada', release_time: null }] } });
      expect(ok(A.list_item)).toMatchObject({ id: ids.echo, title: 'Echo', description: 'repeats you', dsl: null });
      const got = ok(A.get_agent);
      expect(got).toMatchObject({ id: ids.echo, title: 'Echo', description: 'repeats you', user_id: ada, last_publish_time: null });
      expect(got.dsl.components.begin.obj.params.prologue).toBe('Hello from the agent.');
      raised(A.get_agent_unknown, 'canvas not found.');
      raised(A.get_agent_foreign, 'canvas not found.');
      expect(ok(A.foreign_list)).toEqual([]);
    });

    it('update_agent returns None; a version per saved dsl; its errors', () => {
      expect(ok(A.update)).toBeNull();
      const after = ok(A.update_read_back);
      expect(after.title).toBe('Echo 2');
      expect(after.dsl.components.begin.obj.params.prologue).toBe('Updated hello.');
      expect(ok(A.update_description)).toBeNull();
      raised(A.update_duplicate, 'echo 2 already exists.');
      raised(A.update_web_tool, /DuckDuckGo/);
      raised(A.update_unknown, noAccess);
      raised(A.update_foreign, noAccess);
      expect(ok(A.update_foreign_envelope)).toEqual({ code: 103, message: noAccess, data: false });
      expect(ok(A.versions)).toEqual([['ada', 'Echo 2'], ['ada', 'Echo']]);
    });

    it('a team agent: members see, change and use it; only the owner deletes it or its sessions', () => {
      expect(ok(A.share)).toEqual({ code: 0, message: 'success', data: true });
      expect(ok(A.member_list)).toEqual(['Shared']);
      expect(ok(A.member_get)).toBe('Shared');
      raised(A.member_get_private, 'canvas not found.');
      expect(ok(A.member_update)).toBeNull();
      expect(ok(A.member_session)).toEqual([{ role: 'assistant', content: 'Team hello.' }]);
      raised(A.member_delete_sessions, `You don't own the agent ${ids.shared}`);
      raised(A.member_delete, 'Only the owner of the agent is authorized for this operation.');
    });

    it('Agent.create_session: the prologue and a reset canvas; release; the envelope', () => {
      const s = ok(A.session_create);
      expect(s).toMatchObject({ agent_id: ids.echo, name: '', source: 'agent', message: [{ role: 'assistant', content: 'Updated hello.' }], user_id: users.ada!.userId });
      expect(s.id).toMatch(HEX32);
      expect(s.version_title).toMatch(/^ada_Echo 2_\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      expect(s.dsl).toMatchObject({ path: [], history: [], retrieval: [], memory: [] });
      expect(s.dsl.globals).toEqual({ 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [], 'sys.date': '' });
      expect(ok(A.session_create_named)).toMatchObject({ name: 'second', user_id: 'visitor', exp_user_id: 'visitor' });
      raised(A.session_create_release, 'No available published version');
      raised(A.session_create_foreign, noAccess);
      const env = ok(A.session_create_envelope);
      expect(Object.keys(env)).toEqual(['code', 'data']);
      expect(Object.keys(env.data).sort()).toEqual(['agent_id', 'dsl', 'exp_user_id', 'id', 'message', 'name', 'source', 'user_id', 'version_title']);
    });

    it('Agent.list_sessions; the {code, message, data, total} envelope; the stored session', () => {
      const [s1, s2, s3] = ok(A.session_ids) as string[];
      const listed = ok(A.sessions_list) as string[];
      expect(listed).toHaveLength(4); // and the envelope's session, newest
      expect(listed.slice(1)).toEqual([s3, s2, s1]);
      expect(ok(A.sessions_list_asc)).toEqual([...listed].reverse());
      expect(ok(A.sessions_list_page)).toEqual([[s2, s1], []]);
      expect(ok(A.sessions_list_id)).toEqual([s2]);
      expect(ok(A.sessions_list_item)).toMatchObject({ id: s1, agent_id: ids.echo, message: [{ role: 'assistant', content: 'Updated hello.' }], round: 0 });
      const env = ok(A.sessions_list_envelope);
      expect(Object.keys(env)).toEqual(['code', 'message', 'data', 'total']);
      expect(env).toMatchObject({ code: 0, message: 'success', total: 4 });
      expect(env.data).toHaveLength(1);
      expect(env.data[0]).not.toHaveProperty('dsl');
      raised(A.sessions_list_foreign, noAccess);
      expect(ok(A.session_get_envelope)).toMatchObject({ code: 0, message: 'success', data: { id: s1, dialog_id: ids.echo, reference: [] } });
    });

    it('Session.ask on an agent session: one answer, a stream (deltas until message_end), the stored turns, errors', () => {
      expect(ok(A.ask)).toEqual([['assistant', 'You said: hello there']]);
      // The SDK yields each `message` event's text and stops at `message_end`.
      expect(ok(A.ask_stream)).toEqual(['You said: ', 'streamed']);
      expect(ok(A.ask_history)).toEqual([
        ['assistant', 'Updated hello.'], ['user', 'hello there'], ['assistant', 'You said: hello there'], ['user', 'streamed'], ['assistant', 'You said: streamed'],
      ]);
      const env = ok(A.ask_envelope);
      expect(env).toMatchObject({ code: 0, data: { event: 'workflow_finished', data: { content: 'You said: raw', reference: {} } } });
      expect(env.data.session_id).toMatch(HEX32);
      expect(env.data.data.trace.map((t: { component_id: string }) => t.component_id)).toEqual(['begin', 'Message:Reply']);
      const sse = ok(A.ask_sse) as string[];
      expect(sse[sse.length - 1]).toBe('data:[DONE]');
      const events = sse.slice(0, -1).map((l) => JSON.parse(l.slice('data:'.length)).event);
      expect(events).toEqual(['workflow_started', 'node_started', 'node_finished', 'node_started', 'message', 'message', 'message_end', 'node_finished', 'workflow_finished']);
      expect(ok(A.ask_no_agent_envelope)).toEqual({ code: 101, message: '`agent_id` is required.', data: false });
      // RAGFlow's 102 envelope has no `data`: the SDK's `res.json()["data"]` raises KeyError.
      raised(A.ask_unknown_session, /data/, 'KeyError');
      expect(ok(A.ask_foreign)).toEqual({ code: 103, message: noAccess, data: false });
      expect(ok(A.ask_form_pause)).toBe('user_inputs');
      expect(ok(A.ask_form_resume)).toEqual(['Hi Ada']);
    });

    it('Agent.delete_sessions: partial succeeds, unknown raises, the owner only, token_required', () => {
      const [s1, s2, s3] = ok(A.session_ids) as string[];
      expect(ok(A.sessions_delete_partial)).toBeNull();
      expect(ok(A.sessions_after_partial)).not.toContain(s1);
      expect(ok(A.sessions_delete_partial_envelope)).toEqual({ code: 0, data: { success_count: 1, errors: [`Duplicate session ids: ${s2}`] } });
      raised(A.sessions_delete_unknown, "The agent doesn't own the session nope");
      raised(A.sessions_delete_foreign, `You don't own the agent ${ids.echo}`);
      expect(ok(A.sessions_delete_bad_key)).toEqual([401, { code: 109, message: 'Authentication error: API key is invalid!', data: null }]);
      expect(ok(A.sessions_delete)).toBeNull();
      expect(ok(A.sessions_delete_none)).toBeNull();
      expect(ok(A.sessions_after_delete)).not.toContain(s3);
      expect(ok(A.sessions_after_delete)).toHaveLength(1);
      expect(ok(A.sessions_delete_all)).toEqual([]);
    });

    it('delete_agent returns None; the owner only', () => {
      raised(A.delete_foreign, 'Only the owner of the agent is authorized for this operation.');
      expect(ok(A.delete)).toBeNull();
      raised(A.delete_again, 'Only the owner of the agent is authorized for this operation.');
      expect(ok(A.list_after_delete)).toEqual(['Shared', 'Echo 2', 'Raw']);
      raised(A.get_deleted, 'canvas not found.');
    });
  });

  // ==================================================================== known deviations
  /*
   * Where ragloom answered differently from RAGFlow 0.25.6. Each test asserts RAGFlow's behaviour;
   * the case-insensitive name lookups are fixed (they run), the two parser_config defaults are still
   * skipped until ragloom is fixed; the scripts already make these calls, so un-skipping one is
   * enough to check a fix. RAGFlow's database is MySQL with collation utf8mb4_unicode_ci
   * (docker-compose-base.yml), so its `name == x` lookups are case-insensitive (reference §1).
   */
  describe('known deviations (see docs/server.md)', () => {
    // create_dataset(): naive's default graphrag config carries RAGFlow's retry/timeout keys
    // (api/utils/api_utils.py get_parser_config). ragloom: only use_graphrag, entity_types, method,
    // batch_chunk_token_size. Fix: src/api/parser-config.ts methodDefaultConfig('naive').
    it('create_dataset: parser_config.graphrag has the retry and timeout defaults', async () => {
      const D = await runs.datasets;
      // Floats where RAGFlow writes floats, as the SDK reads them.
      expect(ok(D.graphrag_number_types)).toEqual({
        batch_chunk_token_size: 'int', retry_attempts: 'int', retry_backoff_seconds: 'float', retry_backoff_max_seconds: 'float',
        build_subgraph_timeout_per_chunk_seconds: 'int', build_subgraph_min_timeout_seconds: 'int', merge_timeout_seconds: 'int',
        resolution_timeout_seconds: 'int', community_timeout_seconds: 'int', lock_acquire_timeout_seconds: 'int',
      });
      expect(ok(D.create_default).parser_config.graphrag).toEqual({
        use_graphrag: true, entity_types: ENTITY_TYPES, method: 'light', batch_chunk_token_size: 4096,
        retry_attempts: 2, retry_backoff_seconds: 2.0, retry_backoff_max_seconds: 60.0, build_subgraph_timeout_per_chunk_seconds: 300,
        build_subgraph_min_timeout_seconds: 600, merge_timeout_seconds: 180, resolution_timeout_seconds: 1800, community_timeout_seconds: 1800,
        lock_acquire_timeout_seconds: 600,
      });
    });

    // create_dataset(): the stored parser_config's llm_id is the tenant's chat model (§3), the one a
    // new chat assistant gets. ragloom: '' (the tenant row's llm_id is empty when the built-in
    // model is the default). Fix: src/api/datasets.ts (storedParserConfig(..., tenant.llm_id), also
    // in update) should use the effective default, as src/api/chats.ts defaultChatModel() does.
    it("create_dataset: parser_config.llm_id is the tenant's chat model", async () => {
      const D = await runs.datasets;
      expect(ok(D.create_default).parser_config.llm_id).toBe(ok(D.tenant_chat_model));
    });

    // upload_documents(): the same name in another case is a duplicate (duplicate_name over
    // DocumentService.query) → "TIDES(1).md". ragloom keeps "TIDES.md".
    // Fix: src/api/documents.ts upload, `name = ?` → `name = ? COLLATE NOCASE`.
    it('upload_documents: a same-name file in another case is renamed name(1)', async () => {
      const R = await runs.documents;
      expect(ok(R.upload_same_name_case).map((d: Json) => d.name)).toEqual(['TIDES(1).md']);
    });

    // list_documents(name=): matched case-insensitively. ragloom raises
    // "You don't own the document BREAD.MD.". Fix: src/api/documents.ts listDocuments, the name
    // existence check and the `name = @name` filter (COLLATE NOCASE).
    it('list_documents(name=) ignores case', async () => {
      const R = await runs.documents;
      expect(ok(R.list_by_name_case)).toEqual(['bread.md']);
    });

    // Chat.list_sessions(name=): matched case-insensitively (ConversationService.get_list
    // `name == name`). ragloom returns []. Fix: src/api/chats.ts sessions list, `name = ?`.
    it('list_sessions(name=) ignores case', async () => {
      const C = await runs.chats;
      expect(ok(C.sessions_list_name_case)).toEqual(['Tides']);
    });

    // create_memory(): duplicate_name(MemoryService.query, name, tenant_id) is case-insensitive:
    // "JOURNAL" next to "Journal" → "JOURNAL(1)". ragloom keeps "JOURNAL".
    // Fix: src/api/memories.ts uniqueName(), `name = ?` → COLLATE NOCASE.
    it('create_memory: a same-name memory in another case is renamed name(1)', async () => {
      const M = await runs.memories;
      expect(ok(M.create_duplicate_case).name).toBe('JOURNAL(1)');
    });
  });
});

/**
 * API keys and identity: the 401 bodies of each route family (§1), keys stored as hashes only,
 * the admin key across restarts, users and tenant members, and tenants kept apart.
 */
import { describe, expect } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { test, http, parsedDataset, upload } from './fixtures.js';

const LOGIN_401 = { code: 401, message: "<Unauthorized '401: Unauthorized'>", data: null };

describe('authentication failures', () => {
  test('login_required routes: missing, malformed or unknown key → HTTP 401 {code: 401}', async ({ api }) => {
    for (const [method, path] of [['GET', '/datasets'], ['POST', '/chats'], ['GET', '/memories'], ['POST', '/openai/x/chat/completions'], ['GET', '/datasets/x/documents/y']]) {
      for (const key of [null, 'ragflow-not-a-key', 'None']) {
        const r = await api.call(method!, path!, method === 'POST' ? {} : undefined, { key });
        expect(r.status, `${method} ${path} ${key}`).toBe(401);
        expect(r.body).toEqual(LOGIN_401);
      }
    }
    // Without "Bearer", the whole header is the key (RAGFlow's _load_user).
    expect((await api.call('GET', '/datasets', undefined, { key: null, headers: { authorization: api.key } })).body.code).toBe(0);
  });

  test('token_required routes (parse, stop-parse, retrieval): code 0 / 109 bodies with HTTP 401', async ({ api }) => {
    for (const [method, path] of [['POST', '/retrieval'], ['POST', '/datasets/x/chunks'], ['DELETE', '/datasets/x/chunks']]) {
      const none = await api.call(method!, path!, {}, { key: null });
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ code: 0, message: "`Authorization` can't be empty", data: null });
      const bad = await api.call(method!, path!, {}, { key: 'ragflow-nope' });
      expect(bad.status).toBe(401);
      expect(bad.body).toEqual({ code: 109, message: 'Authentication error: API key is invalid!', data: null });
      const format = await api.call(method!, path!, {}, { key: null, headers: { authorization: 'Bearer' } });
      expect(format.status).toBe(401);
      expect(format.body).toEqual({ code: 109, message: 'Please check your authorization format.', data: null });
    }
  });

  test('an unknown route answers 404 before any key check', async ({ api }) => {
    expect((await api.call('GET', '/nope', undefined, { key: null })).status).toBe(404);
  });
});

describe('admin key', () => {
  test('shown once on the first start, stored as a sha256 only; later starts issue a key valid until close()', async ({ dir, serve }) => {
    const first = await serve();
    expect(first.firstStart).toBe(true);
    expect(first.apiKey).toMatch(/^ragflow-[A-Za-z0-9_-]{43}$/);
    expect((await http(first).call('GET', '/datasets')).body.code).toBe(0);
    await first.close();

    // Nothing in the store holds the key in clear.
    const db = new Database(join(dir, 'kb.db'), { readonly: true });
    const rows = db.prepare('SELECT token_sha256, source FROM api_token').all() as { token_sha256: string; source: string }[];
    db.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.source).toBe('admin');
    expect(rows[0]!.token_sha256).toMatch(/^[0-9a-f]{64}$/);
    const files = ['kb.db', 'kb.db-wal'].map((f) => { try { return readFileSync(join(dir, f)).toString('latin1'); } catch { return ''; } }).join('');
    expect(files).not.toContain(first.apiKey.slice(8));

    const second = await serve();
    expect(second.firstStart).toBe(false);
    expect(second.apiKey).not.toBe(first.apiKey);
    const h2 = http(second);
    expect((await h2.call('GET', '/datasets')).body.code).toBe(0);
    // The first key is persisted and still valid.
    expect((await h2.call('GET', '/datasets', undefined, { key: first.apiKey })).body.code).toBe(0);
    await second.close();

    const third = await serve();
    // The second start's key lived only as long as that server.
    expect((await http(third).call('GET', '/datasets', undefined, { key: second.apiKey })).status).toBe(401);
    // --new-key: a new persisted admin key.
    await third.close();
    const fourth = await serve({ newAdminKey: true });
    await fourth.close();
    const fifth = await serve();
    expect((await http(fifth).call('GET', '/datasets', undefined, { key: fourth.apiKey })).body.code).toBe(0);
  });
});

describe('users and tenants', () => {
  test('POST /users (admin only) makes a user in a new tenant with its own key', async ({ api }) => {
    const u = await api.call('POST', '/users', { email: 'ann@example.com', nickname: 'Ann', password: 's3cret' });
    expect(u.body).toEqual({
      code: 0, message: 'Ann, welcome aboard!',
      data: expect.objectContaining({ email: 'ann@example.com', nickname: 'Ann', id: expect.stringMatching(/^[0-9a-f]{32}$/), tenant_id: expect.stringMatching(/^[0-9a-f]{32}$/), api_key: expect.stringMatching(/^ragflow-/) }),
    });
    const ann = u.body.data;
    // Ann works in her own tenant.
    const ds = await api.call('POST', '/datasets', { name: 'hers' }, { key: ann.api_key });
    expect(ds.body.data.tenant_id).toBe(ann.tenant_id);
    expect(ds.body.data.created_by).toBe(ann.id);

    // Only the admin makes users.
    expect((await api.call('POST', '/users', { email: 'bob@example.com', nickname: 'Bob' }, { key: ann.api_key })).body).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect((await api.call('POST', '/users', { email: 'ann@example.com', nickname: 'Ann 2' })).body).toEqual({ code: 103, message: 'Email: ann@example.com has already registered!', data: false });
    expect((await api.call('POST', '/users', { email: 'not-an-email', nickname: 'X' })).body).toEqual({ code: 103, message: 'Invalid email address: not-an-email!', data: false });
    expect((await api.call('POST', '/users', { nickname: 'X' })).body).toEqual({ code: 101, message: 'required argument are missing: email; ', data: null });
  });

  test('cross-tenant: another user cannot see the first one’s `me` dataset, chat or memory', async ({ api }) => {
    const { datasetId, docIds } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'mine', dataset_ids: [datasetId] })).body.data;
    const mem = (await api.call('POST', '/memories', { name: 'mine', memory_type: ['raw'], embd_id: 'ragloom-static-en-256@Builtin', llm_id: 'ragloom-extractive@Builtin' })).body.data;
    const bob = (await api.call('POST', '/users', { email: 'bob@example.com', nickname: 'Bob' })).body.data;
    const as = { key: bob.api_key };

    expect((await api.call('GET', '/datasets', undefined, as)).body).toEqual({ code: 0, data: [], total_datasets: 0 });
    expect((await api.call('GET', `/datasets?id=${datasetId}`, undefined, as)).body).toEqual({ code: 102, message: `User '${bob.tenant_id}' lacks permission for dataset '${datasetId}'` });
    expect((await api.call('PUT', `/datasets/${datasetId}`, { name: 'stolen' }, as)).body).toEqual({ code: 102, message: `User '${bob.tenant_id}' lacks permission for dataset '${datasetId}'` });
    expect((await api.call('DELETE', '/datasets', { ids: [datasetId] }, as)).body).toEqual({ code: 102, message: `User '${bob.tenant_id}' lacks permission for datasets: '${datasetId}'` });
    expect((await api.call('GET', `/datasets/${datasetId}/documents`, undefined, as)).body).toEqual({ code: 102, message: `You don't own the dataset ${datasetId}. ` });
    expect((await api.call('GET', `/datasets/${datasetId}/documents/${docIds[0]}`, undefined, as)).body).toEqual({ code: 102, message: `The dataset not own the document ${docIds[0]}.` });
    expect((await upload(api, datasetId, { 'x.txt': 'x' }, bob.api_key)).body).toEqual({ code: 109, message: 'No authorization.' });
    expect((await api.call('POST', `/datasets/${datasetId}/chunks`, { document_ids: docIds }, as)).body).toEqual({ code: 102, message: `You don't own the dataset ${datasetId}.` });
    expect((await api.call('POST', '/retrieval', { dataset_ids: [datasetId], question: 'moon' }, as)).body.code).toBe(102);

    expect((await api.call('GET', `/chats/${chat.id}`, undefined, as)).body).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect((await api.call('GET', '/chats', undefined, as)).body.data).toEqual({ chats: [], total: 0 });
    expect((await api.call('POST', `/chats/${chat.id}/completions`, { question: 'tides?', stream: false }, as)).body).toEqual({ code: 109, message: 'No authorization.', data: false });
    expect((await api.call('POST', `/openai/${chat.id}/chat/completions`, { model: 'model', messages: [{ role: 'user', content: 'hi' }], stream: false }, as)).body).toEqual({
      code: 102, message: `You don't own the chat ${chat.id}`,
    });

    expect((await api.call('GET', `/memories/${mem.id}/config`, undefined, as)).body).toEqual({ code: 404, message: `Memory '${mem.id}' not found.`, data: null });
    expect((await api.call('GET', '/memories', undefined, as)).body.data).toEqual({ memory_list: [], total_count: 0 });
    expect((await api.call('DELETE', `/memories/${mem.id}`, {}, as)).body.code).toBe(404);

    // The owner still sees everything.
    expect((await api.call('GET', `/chats/${chat.id}`)).body.code).toBe(0);
  });

  test('tenant members: an owner or admin adds users; members see the tenant’s team datasets', async ({ api }) => {
    const a = (await api.call('POST', '/users', { email: 'a@example.com', nickname: 'A' })).body.data;
    const b = (await api.call('POST', '/users', { email: 'b@example.com', nickname: 'B' })).body.data;
    const c = (await api.call('POST', '/users', { email: 'c@example.com', nickname: 'C' })).body.data;
    const team = (await api.call('POST', '/datasets', { name: 'shared', permission: 'team' }, { key: a.api_key })).body.data;
    await api.call('POST', '/datasets', { name: 'private' }, { key: a.api_key });

    // B is not a member of A's tenant: nothing to see, and cannot add members.
    expect((await api.call('GET', '/datasets', undefined, { key: b.api_key })).body.total_datasets).toBe(0);
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: c.id }, { key: b.api_key })).body).toEqual({ code: 109, message: 'No authorization.', data: false });

    const add = await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: b.id, role: 'admin' }, { key: a.api_key });
    expect(add.body).toEqual({ code: 0, message: 'success', data: { tenant_id: a.tenant_id, user_id: b.id, nickname: 'B', email: 'b@example.com', role: 'admin' } });
    const seen = (await api.call('GET', '/datasets', undefined, { key: b.api_key })).body;
    expect(seen.data.map((d: { id: string }) => d.id)).toEqual([team.id]);

    // B is an admin of A's tenant now: may add C.
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: c.id }, { key: b.api_key })).body.data.role).toBe('normal');
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: c.id, role: 'normal' }, { key: a.api_key })).body).toEqual({ code: 102, message: 'c@example.com is already in the team.' });
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: a.id }, { key: a.api_key })).body).toEqual({ code: 102, message: 'a@example.com is the owner of the team.' });
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: 'nobody' }, { key: a.api_key })).body).toEqual({ code: 102, message: 'User not found.' });
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, { user_id: c.id, role: 'owner' }, { key: a.api_key })).body).toEqual({ code: 101, message: "`role` must be 'normal' or 'admin'." });
    expect((await api.call('POST', `/tenants/${a.tenant_id}/members`, {}, { key: a.api_key })).body).toEqual({ code: 101, message: 'required argument are missing: user_id; ', data: null });
  });
});

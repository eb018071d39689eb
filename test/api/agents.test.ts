/**
 * Agents, their versions and their sessions at the operation layer (src/api/agents.ts): RAGFlow
 * v0.25.6's checks, codes and messages (reference §10; agent_api.py, bot_api.py), RAGFlow's agent
 * templates, permissions across tenants, and that a refused request writes nothing.
 */
import { describe, expect, test as base } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, ApiError, type OpName } from '../../src/api/index.js';
import type { Ctx } from '../../src/core/index.js';
import { insertAgentSession, saveAgentTurn, agentSessionMessages, getAgentSession, sessionDslFrom, prologueOf, DEFAULT_AGENT_PROLOGUE } from '../../src/core/agents.js';
import { templateFiles, loadTemplate, repointModels, useSqlite, TEMPLATES_MISSING } from '../agent/support.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Fixtures {
  dir: string;
  api: Api;
  /** Runs an op as `ctx` (default: the local admin). */
  call: (op: OpName, params?: Json, ctx?: Ctx) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The `[code, message]` an op rejects with. */
  fail: (op: OpName, params?: Json, ctx?: Ctx) => Promise<[number, string]>;
}

const test = base.extend<Fixtures>({
  // eslint-disable-next-line no-empty-pattern
  dir: async ({}, use) => {
    const d = await mkdtemp(join(tmpdir(), 'ragloom-agents-'));
    await use(d);
    await rm(d, { recursive: true, force: true });
  },
  api: async ({ dir }, use) => {
    const api = new Api({ path: join(dir, 'kb.db') });
    await use(api);
    await api.close();
  },
  call: async ({ api }, use) => {
    await use((op, params = {}, ctx) => api.call(op, params, ctx));
  },
  fail: async ({ api }, use) => {
    await use(async (op, params = {}, ctx) => {
      try {
        await api.call(op, params, ctx);
      } catch (e) {
        if (e instanceof ApiError) return [e.code, e.message];
        throw e;
      }
      throw new Error(`${op} was expected to fail`);
    });
  },
});

/** A small runnable canvas with state a session must not inherit. */
function dsl(prologue = 'Hello there.'): Json {
  return {
    components: {
      begin: {
        obj: {
          component_name: 'Begin',
          params: {
            mode: 'conversational', prologue,
            inputs: { name: { type: 'line', name: 'Name', optional: true, value: 'stale input' } },
            outputs: { name: { type: 'string', value: 'stale output' } },
          },
        },
        downstream: ['Message:Hi'], upstream: [],
      },
      'Message:Hi': {
        obj: { component_name: 'Message', params: { content: ['Hi {sys.query}'], outputs: { content: { type: 'string', value: 'stale answer' } }, debug_inputs: { x: 1 } } },
        downstream: [], upstream: ['begin'],
      },
    },
    globals: {
      'sys.query': 'old question', 'sys.user_id': 'someone', 'sys.conversation_turns': 3, 'sys.files': ['f'], 'sys.history': ['user: hi'],
      'sys.date': '2025-01-01 00:00:00', 'sys.flag': true, 'sys.meta': { a: 1 }, 'env.greeting': 'stale', 'env.count': 7, 'env.items': ['x'], 'env.gone': 'x', custom: 'kept',
    },
    variables: { greeting: { type: 'string', value: 'hello' }, count: { type: 'number', value: null }, items: { type: 'array<string>' } },
    history: [['user', 'hi'], ['assistant', 'hello']],
    path: ['begin', 'Message:Hi'],
    retrieval: [{ chunks: [], doc_aggs: [] }],
    memory: [['q', 'a']],
    graph: { nodes: [], edges: [] },
  };
}

/** A DSL with one component ragloom does not know. */
const unknownDsl = (): Json => {
  const d = dsl();
  d.components['Message:Hi'].obj.component_name = 'Teleporter';
  return d;
};

/** Rows of the agent tables: what a refused request must leave unchanged. */
function counts(api: Api): Json {
  const n = (t: string) => api.engine.db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get();
  const sum = (t: string) => api.engine.db.prepare(`SELECT COALESCE(SUM(update_time), 0) FROM ${t}`).pluck().get();
  return { agent: n('agent'), agent_u: sum('agent'), version: n('agent_version'), version_u: sum('agent_version'), session: n('agent_session'), session_u: sum('agent_session'), message: n('agent_message') };
}

/** A second user in a tenant of its own (and, with `member`, also a member of the admin's tenant). */
async function newUser(api: Api, nickname: string, member = false): Promise<Ctx> {
  await api.call('auth.bootstrap', {});
  const u = (await api.call('users.create', { email: `${nickname}@example.com`, nickname })) as Json;
  if (member) await api.call('tenants.members.add', { tenant_id: api.engine.local.tenantId, user_id: u.id, role: 'normal' });
  return { tenantId: u.tenant_id, userId: u.id };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('agents.create', () => {
  test('returns the agent; title stripped; defaults; one version titled <nickname>_<title>_<local time>', async ({ api, call }) => {
    const a = await call('agents.create', { title: '  Greeter ', dsl: dsl(), description: 'says hi', canvas_type: 'chatbot' });
    expect(a).toMatchObject({
      title: 'Greeter', description: 'says hi', canvas_type: 'chatbot', canvas_category: 'agent_canvas', permission: 'me', avatar: '',
      release: false, tags: '', user_id: api.engine.local.tenantId, nickname: 'local', tenant_avatar: null, dsl: dsl(),
    });
    expect(a.id).toMatch(/^[0-9a-f]{32}$/);
    expect(a.create_date).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const versions = await call('agents.versions', { agent_id: a.id });
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({ user_canvas_id: a.id, release: false });
    expect(versions[0].title).toMatch(/^local_Greeter_\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(versions[0]).not.toHaveProperty('dsl');
    expect(await call('agents.version', { agent_id: a.id, version_id: versions[0].id })).toMatchObject({ id: versions[0].id, dsl: dsl(), description: null });
    // A null value counts as absent (RAGFlow drops them first); release is Python's bool().
    const b = await call('agents.create', { title: 'B', dsl: dsl(), description: null, release: 'yes' });
    expect(b).toMatchObject({ description: null, release: true });
    expect((await call('agents.versions', { agent_id: b.id }))[0].release).toBe(true);
  });

  test('every validation message, in RAGFlow\'s order; nothing is written', async ({ api, call, fail }) => {
    await call('agents.create', { title: 'Taken', dsl: dsl() });
    const before = counts(api);
    expect(await fail('agents.create', {})).toEqual([101, 'No DSL data in request.']);
    expect(await fail('agents.create', { title: 'x', dsl: null })).toEqual([101, 'No DSL data in request.']);
    expect(await fail('agents.create', { title: 'x', dsl: '{"components": ' })).toEqual([101, 'Invalid DSL JSON string.']);
    expect(await fail('agents.create', { title: 'x', dsl: [dsl()] })).toEqual([101, 'DSL must be a JSON object.']);
    expect(await fail('agents.create', { title: 'x', dsl: '42' })).toEqual([101, 'DSL must be a JSON object.']);
    expect(await fail('agents.create', { title: 'x', dsl: 7 })).toEqual([101, 'DSL must be a JSON object.']);
    // The DSL is checked before the title.
    expect(await fail('agents.create', { dsl: 'nope' })).toEqual([101, 'Invalid DSL JSON string.']);
    expect(await fail('agents.create', { dsl: dsl() })).toEqual([101, 'No title in request.']);
    expect(await fail('agents.create', { dsl: dsl(), title: null })).toEqual([101, 'No title in request.']);
    expect(await fail('agents.create', { dsl: dsl(), title: 5 })).toEqual([100, 'AttributeError("\'int\' object has no attribute \'strip\'")']);
    // Titles are unique per owner and category, case-insensitively, after stripping.
    expect(await fail('agents.create', { dsl: dsl(), title: ' taken ' })).toEqual([102, 'taken already exists.']);
    // The duplicate check comes before the runnability check.
    expect(await fail('agents.create', { dsl: unknownDsl(), title: 'TAKEN' })).toEqual([102, 'TAKEN already exists.']);
    const [code, message] = await fail('agents.create', { dsl: unknownDsl(), title: 'other' });
    expect(code).toBe(101);
    expect(message).toContain('Teleporter');
    expect(await fail('agents.create', { dsl: { components: {} }, title: 'other' })).toEqual([101, 'DSL has no components.']);
    expect(await fail('agents.create', { dsl: dsl(), title: 'other', permission: 'everyone' })).toEqual([101, "`permission` should be 'me' or 'team'."]);
    expect(await fail('agents.create', { dsl: dsl(), title: 'other', description: 3 })).toEqual([101, '`description` should be a string.']);
    expect(counts(api)).toEqual(before);
  });

  test('a DSL given as JSON text is parsed; the same title in another category is allowed', async ({ call }) => {
    const a = await call('agents.create', { title: 'text', dsl: JSON.stringify(dsl()) });
    expect(a.dsl).toEqual(dsl());
    const b = await call('agents.create', { title: 'text', dsl: dsl(), canvas_category: 'dataflow_canvas' });
    expect(b.canvas_category).toBe('dataflow_canvas');
  });
});

describe("RAGFlow's agent templates (v0.25.6)", () => {
  const t = TEMPLATES_MISSING ? test.skip : test;
  if (TEMPLATES_MISSING) console.warn(`[agents.test] template cases skipped: ${TEMPLATES_MISSING}`);

  t('the three runnable templates are accepted once their models (and text2sql\'s database) are re-pointed', async ({ call, fail }) => {
    // text2sql's ExeSQL points at MySQL: ragloom's ExeSQL reads SQLite files only.
    const sql = repointModels(loadTemplate('text2sql_data_expert').dsl);
    const [code, message] = await fail('agents.create', { title: 'sql', dsl: sql });
    expect(code).toBe(101);
    expect(message).toContain('ExeSQL');
    for (const f of ['data_analysis_beginner_assistant', 'reflective_academic_paper_generator', 'text2sql_data_expert']) {
      const tpl = loadTemplate(f);
      const title = typeof tpl.title === 'string' ? tpl.title : tpl.title.en!;
      const a = await call('agents.create', { title, dsl: useSqlite(repointModels(tpl.dsl), 'sales.sqlite'), canvas_type: tpl.canvas_type });
      expect(a.title).toBe(title);
      expect(JSON.stringify(a.dsl)).not.toMatch(/"llm_id":"(?!ragloom-extractive@Builtin)/);
      const s = await call('agentSessions.create', { agent_id: a.id });
      expect(s.message).toEqual([{ role: 'assistant', content: prologueOf(tpl.dsl) }]);
    }
    expect(templateFiles()).toHaveLength(6);
  });

  t('trip_planner and web_search_assistant are refused naming their web tools', async ({ api, fail }) => {
    const before = counts(api);
    const [c1, m1] = await fail('agents.create', { title: 'trip', dsl: repointModels(loadTemplate('trip_planner').dsl) });
    expect(c1).toBe(101);
    for (const tool of ['TavilySearch', 'TavilyExtract']) expect(m1).toContain(tool);
    const [c2, m2] = await fail('agents.create', { title: 'web', dsl: repointModels(loadTemplate('web_search_assistant').dsl) });
    expect(c2).toBe(101);
    for (const tool of ['TavilySearch', 'TavilyExtract', 'Google', 'Bing', 'DuckDuckGo', 'Wikipedia']) expect(m2).toContain(tool);
    expect(counts(api)).toEqual(before);
  });

  t('title_chunker (an ingestion pipeline) is refused naming its components', async ({ api, fail }) => {
    const tpl = loadTemplate('title_chunker');
    const before = counts(api);
    const [code, message] = await fail('agents.create', { title: 'chunker', dsl: repointModels(tpl.dsl), canvas_category: tpl.canvas_category });
    expect(code).toBe(101);
    for (const name of ['File', 'Parser', 'TitleChunker', 'Tokenizer', 'Extractor']) expect(message).toContain(name);
    expect(counts(api)).toEqual(before);
  });
});

describe('agents.get / agents.list', () => {
  test('get: the agent with its dsl and last_publish_time; 102 canvas not found.', async ({ call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const got = await call('agents.get', { agent_id: a.id });
    expect(got).toEqual({ ...a, last_publish_time: null });
    await call('agents.update', { agent_id: a.id, dsl: dsl('Published.'), release: true });
    const published = await call('agents.get', { agent_id: a.id });
    expect(published.last_publish_time).toEqual(expect.any(Number));
    expect(published.dsl).toEqual(dsl('Published.'));
    expect(await fail('agents.get', { agent_id: '0'.repeat(32) })).toEqual([102, 'canvas not found.']);
    expect(await fail('agents.get', {})).toEqual([102, 'canvas not found.']);
  });

  test('list: {canvas, total}; all by default; paging, order, keywords, category, tags', async ({ call }) => {
    const names = ['Alpha helper', 'beta', 'Gamma Helper'];
    const made: Json[] = [];
    for (const [i, title] of names.entries()) {
      made.push(await call('agents.create', { title, dsl: dsl(), tags: i === 0 ? ['ml', 'Ops'] : i === 2 ? 'ml-ops' : '' }));
      await sleep(3);
    }
    await call('agents.create', { title: 'flow', dsl: dsl(), canvas_category: 'dataflow_canvas' });
    const all = await call('agents.list', {});
    expect(all.total).toBe(4);
    expect(all.canvas.map((a: Json) => a.title)).toEqual(['flow', 'Gamma Helper', 'beta', 'Alpha helper']);
    expect(Object.keys(all.canvas[0]).sort()).toEqual([
      'avatar', 'canvas_category', 'canvas_type', 'create_time', 'description', 'id', 'nickname', 'permission', 'release_time', 'tags', 'tenant_avatar', 'tenant_id', 'title', 'update_time',
    ]);
    expect(all.canvas[0]).not.toHaveProperty('dsl');
    expect(made[0]!.tags).toBe('ml,Ops');
    const titles = async (q: Json) => (await call('agents.list', q)).canvas.map((a: Json) => a.title);
    expect(await titles({ desc: false, canvas_category: 'agent_canvas' })).toEqual(names);
    expect(await titles({ page: 2, page_size: 2, desc: false })).toEqual(['Gamma Helper', 'flow']);
    expect((await call('agents.list', { page: 2, page_size: 2 })).total).toBe(4);
    expect(await titles({ keywords: 'HELPER', desc: false })).toEqual(['Alpha helper', 'Gamma Helper']);
    expect(await titles({ orderby: 'title', desc: false, canvas_category: 'agent_canvas' })).toEqual(['Alpha helper', 'beta', 'Gamma Helper']);
    // Tags match whole tags ('ml' is not 'ml-ops'), case-insensitively; several tags = any of them.
    expect(await titles({ tags: 'ml' })).toEqual(['Alpha helper']);
    expect(await titles({ tags: 'OPS,ml-ops' })).toEqual(['Gamma Helper', 'Alpha helper']);
    // A release shows as release_time.
    await call('agents.update', { agent_id: made[1]!.id, dsl: dsl(), release: true });
    expect((await call('agents.list', { keywords: 'beta' })).canvas[0].release_time).toEqual(expect.any(Number));
  });
});

describe('agents.update / versions', () => {
  test('returns true; a version per changed dsl; the same dsl refreshes the newest; a released version is never overwritten', async ({ call }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl('v1') });
    const versions = async () => (await call('agents.versions', { agent_id: a.id })) as Json[];
    expect(await call('agents.update', { agent_id: a.id, title: ' A2 ', description: 'new' })).toBe(true);
    expect(await versions()).toHaveLength(1); // no dsl, no version
    expect(await call('agents.get', { agent_id: a.id })).toMatchObject({ title: 'A2', description: 'new' });

    await sleep(3);
    await call('agents.update', { agent_id: a.id, dsl: dsl('v2') });
    let v = await versions();
    expect(v).toHaveLength(2);
    expect(v[0].title).toMatch(/^local_A2_/);
    expect((await call('agents.version', { agent_id: a.id, version_id: v[0].id })).dsl).toEqual(dsl('v2'));
    expect((await call('agents.get', { agent_id: a.id })).dsl).toEqual(dsl('v2'));

    // Saving the same dsl again updates the newest version (its title kept), here publishing it.
    await call('agents.update', { agent_id: a.id, dsl: JSON.stringify(dsl('v2')), title: 'A3', release: true });
    v = await versions();
    expect(v).toHaveLength(2);
    expect(v[0]).toMatchObject({ release: true });
    expect(v[0].title).toMatch(/^local_A2_/);
    expect((await call('agents.get', { agent_id: a.id })).release).toBe(true);
    // The same dsl saved unreleased must not touch the released version: a new one is written.
    await sleep(3);
    await call('agents.update', { agent_id: a.id, dsl: dsl('v2') });
    v = await versions();
    expect(v.map((x) => x.release)).toEqual([false, true, false]);
    expect((await call('agents.get', { agent_id: a.id })).release).toBe(false);
    // ...and saving it once more now updates that newest unreleased one in place.
    await call('agents.update', { agent_id: a.id, dsl: dsl('v2') });
    expect(await versions()).toHaveLength(3);
  });

  test('at most 20 unreleased versions are kept; released ones always', async ({ call }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl('v0'), release: true });
    for (let i = 1; i <= 23; i++) await call('agents.update', { agent_id: a.id, dsl: dsl(`v${i}`) });
    const v = (await call('agents.versions', { agent_id: a.id })) as Json[];
    expect(v.filter((x) => !x.release)).toHaveLength(20);
    expect(v.filter((x) => x.release)).toHaveLength(1);
    const newest = await call('agents.version', { agent_id: a.id, version_id: v[0].id });
    expect(newest.dsl.components.begin.obj.params.prologue).toBe('v23');
  });

  test('refusals write nothing: no access 103, bad dsl 101, title clash 102', async ({ api, call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    await call('agents.create', { title: 'B', dsl: dsl() });
    const before = counts(api);
    const noAccess = [103, 'Make sure you have permission to access the agent.'];
    expect(await fail('agents.update', { agent_id: '0'.repeat(32), title: 'x' })).toEqual(noAccess);
    expect(await fail('agents.update', { agent_id: a.id, dsl: '{' })).toEqual([101, 'Invalid DSL JSON string.']);
    expect(await fail('agents.update', { agent_id: a.id, dsl: [] })).toEqual([101, 'DSL must be a JSON object.']);
    expect((await fail('agents.update', { agent_id: a.id, dsl: unknownDsl() }))[1]).toContain('Teleporter');
    expect(await fail('agents.update', { agent_id: a.id, title: ' b ' })).toEqual([102, 'b already exists.']);
    expect(await fail('agents.update', { agent_id: a.id, title: 1.5 })).toEqual([100, 'AttributeError("\'float\' object has no attribute \'strip\'")']);
    expect(await fail('agents.update', { agent_id: a.id, permission: 'all' })).toEqual([101, "`permission` should be 'me' or 'team'."]);
    expect(counts(api)).toEqual(before);
    // Its own title, in another case, is not a clash.
    expect(await call('agents.update', { agent_id: a.id, title: 'a' })).toBe(true);
  });

  test('versions: 103 without access; Version not found. for an unknown or another agent\'s version', async ({ call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const b = await call('agents.create', { title: 'B', dsl: dsl() });
    const [vb] = await call('agents.versions', { agent_id: b.id });
    expect(await fail('agents.version', { agent_id: a.id, version_id: vb.id })).toEqual([102, 'Version not found.']);
    expect(await fail('agents.version', { agent_id: a.id, version_id: 'nope' })).toEqual([102, 'Version not found.']);
    expect(await fail('agents.versions', { agent_id: 'nope' })).toEqual([103, 'Make sure you have permission to access the agent.']);
  });
});

describe('agents.delete', () => {
  test('deletes the agent with its versions, sessions and messages', async ({ api, call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const keep = await call('agents.create', { title: 'keep', dsl: dsl() });
    await call('agentSessions.create', { agent_id: a.id });
    await call('agentSessions.create', { agent_id: keep.id });
    expect(await call('agents.delete', { agent_id: a.id })).toBe(true);
    expect(counts(api)).toMatchObject({ agent: 1, version: 1, session: 1, message: 1 });
    expect(await fail('agents.get', { agent_id: a.id })).toEqual([102, 'canvas not found.']);
    expect(await fail('agents.delete', { agent_id: a.id })).toEqual([103, 'Only the owner of the agent is authorized for this operation.']);
  });
});

describe('permissions across tenants', () => {
  test('owner: everything; team member: a team agent but not a me agent, never delete; another tenant: nothing', async ({ api, call, fail }) => {
    const mine = await call('agents.create', { title: 'mine', dsl: dsl() });
    const shared = await call('agents.create', { title: 'shared', dsl: dsl(), permission: 'team' });
    const member = await newUser(api, 'tess', true);
    const stranger = await newUser(api, 'olaf');
    const noAccess = [103, 'Make sure you have permission to access the agent.'];

    // The member sees the team agent only.
    const seen = await call('agents.list', {}, member);
    expect(seen.canvas.map((a: Json) => a.title)).toEqual(['shared']);
    expect(seen.canvas[0]).toMatchObject({ tenant_id: api.engine.local.tenantId, nickname: 'local' });
    expect((await call('agents.get', { agent_id: shared.id }, member)).title).toBe('shared');
    expect(await fail('agents.get', { agent_id: mine.id }, member)).toEqual([102, 'canvas not found.']);
    expect(await fail('agents.update', { agent_id: mine.id, title: 'x' }, member)).toEqual(noAccess);
    expect(await fail('agentSessions.create', { agent_id: mine.id }, member)).toEqual(noAccess);
    // ...may change it and open sessions, but not delete it nor its sessions.
    expect(await call('agents.update', { agent_id: shared.id, dsl: dsl('by tess') }, member)).toBe(true);
    const v = await call('agents.versions', { agent_id: shared.id }, member);
    expect(v[0].title).toMatch(/^tess_shared_/);
    const s = await call('agentSessions.create', { agent_id: shared.id }, member);
    expect(s).toMatchObject({ user_id: member.userId, message: [{ role: 'assistant', content: 'by tess' }] });
    expect(await fail('agents.delete', { agent_id: shared.id }, member)).toEqual([103, 'Only the owner of the agent is authorized for this operation.']);
    expect(await fail('agentSessions.delete', { agent_id: shared.id, ids: [s.id] }, member)).toEqual([102, `You don't own the agent ${shared.id}`]);
    // Its own agents: a title may repeat across owners.
    const own = await call('agents.create', { title: 'shared', dsl: dsl() }, member);
    expect((await call('agents.list', {}, member)).total).toBe(2);
    expect((await call('agents.list', { owner_ids: api.engine.local.tenantId }, member)).canvas.map((a: Json) => a.id)).toEqual([shared.id]);
    expect((await call('agents.list', { owner_ids: member.userId }, member)).canvas.map((a: Json) => a.id)).toEqual([own.id]);
    // The admin does not see the member's `me` agent.
    expect((await call('agents.list', {})).canvas.map((a: Json) => a.title)).toEqual(['shared', 'mine']);

    // A stranger sees nothing and may not ask for other owners.
    expect(await call('agents.list', {}, stranger)).toEqual({ canvas: [], total: 0 });
    expect(await fail('agents.list', { owner_ids: api.engine.local.tenantId }, stranger)).toEqual([103, 'Only authorized owner_ids can be queried.']);
    expect(await fail('agents.get', { agent_id: shared.id }, stranger)).toEqual([102, 'canvas not found.']);
    expect(await fail('agents.update', { agent_id: shared.id, title: 'x' }, stranger)).toEqual(noAccess);
    expect(await fail('agents.versions', { agent_id: shared.id }, stranger)).toEqual(noAccess);
    expect(await fail('agentSessions.list', { agent_id: shared.id }, stranger)).toEqual(noAccess);
    expect(await fail('agentSessions.get', { agent_id: shared.id, session_id: s.id }, stranger)).toEqual(noAccess);
    expect(await fail('agents.delete', { agent_id: shared.id }, stranger)).toEqual([103, 'Only the owner of the agent is authorized for this operation.']);

    // Back to `me`: the member loses it.
    await call('agents.update', { agent_id: shared.id, permission: 'me' });
    expect(await fail('agents.get', { agent_id: shared.id }, member)).toEqual([102, 'canvas not found.']);
  });
});

describe('agent sessions', () => {
  test('create: the prologue, a reset canvas, version_title; user_id; release picks the published version', async ({ api, call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl('Draft hello.') });
    const s = await call('agentSessions.create', { agent_id: a.id, name: 'first' });
    expect(Object.keys(s).sort()).toEqual(['agent_id', 'dsl', 'exp_user_id', 'id', 'message', 'name', 'source', 'user_id', 'version_title']);
    expect(s).toMatchObject({
      agent_id: a.id, name: 'first', source: 'agent', user_id: api.engine.local.userId, exp_user_id: api.engine.local.userId,
      message: [{ role: 'assistant', content: 'Draft hello.' }],
    });
    expect(s.version_title).toMatch(/^local_A_/);
    expect(s.dsl).toEqual(sessionDslFrom(dsl('Draft hello.')));
    expect((await call('agentSessions.create', { agent_id: a.id, user_id: 'visitor-7' })).user_id).toBe('visitor-7');

    const before = counts(api);
    expect(await fail('agentSessions.create', { agent_id: a.id, release: true })).toEqual([102, 'No available published version']);
    expect(counts(api)).toEqual(before);
    await call('agents.update', { agent_id: a.id, dsl: dsl('Published hello.'), release: true });
    await sleep(3);
    await call('agents.update', { agent_id: a.id, dsl: dsl('Newer draft.') });
    const pub = await call('agentSessions.create', { agent_id: a.id, release: true });
    expect(pub.message[0].content).toBe('Published hello.');
    const versions = await call('agents.versions', { agent_id: a.id });
    expect(pub.version_title).toBe(versions.find((v: Json) => v.release).title);
    expect((await call('agentSessions.create', { agent_id: a.id })).message[0].content).toBe('Newer draft.');
    // No prologue in the DSL: RAGFlow's default one.
    const bare = dsl();
    delete bare.components.begin.obj.params.prologue;
    const b = await call('agents.create', { title: 'bare', dsl: bare });
    expect((await call('agentSessions.create', { agent_id: b.id })).message[0].content).toBe(DEFAULT_AGENT_PROLOGUE);
  });

  test('the session canvas is RAGFlow\'s canvas.reset(): state emptied, env from variables, params kept', () => {
    const out = sessionDslFrom(dsl());
    expect(out).toMatchObject({ path: [], history: [], retrieval: [], memory: [], variables: dsl().variables, graph: { nodes: [], edges: [] } });
    expect(out.globals).toEqual({
      'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [], 'sys.date': '', 'sys.flag': 0, 'sys.meta': {},
      'env.greeting': 'hello', 'env.count': 0, 'env.items': [], 'env.gone': '', custom: 'kept',
    });
    const begin = (out.components as Json).begin.obj.params;
    expect(begin.inputs.name).toEqual({ type: 'line', name: 'Name', optional: true, value: null });
    expect(begin.outputs.name.value).toBeNull();
    expect(begin.prologue).toBe('Hello there.');
    expect((out.components as Json)['Message:Hi'].obj.params).toEqual({ content: ['Hi {sys.query}'], outputs: { content: { type: 'string', value: null } }, debug_inputs: {} });
    // A DSL without globals gets RAGFlow's default ones; the input is never changed.
    const input = dsl();
    delete input.globals;
    const frozen = JSON.stringify(input);
    expect(sessionDslFrom(input).globals).toEqual({ 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [], 'sys.date': '' });
    expect(JSON.stringify(input)).toBe(frozen);
    // `variables` as a list (one of RAGFlow's templates): env values become ''.
    expect(sessionDslFrom({ ...dsl(), variables: [] }).globals).toMatchObject({ 'env.greeting': '', 'env.count': '' });
  });

  test('list: {data, total}; paging, order, id, user_id, keywords, dsl flag, exp_user_id', async ({ api, call }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const ids: string[] = [];
    for (const u of ['u1', 'u2', 'u1']) {
      ids.push((await call('agentSessions.create', { agent_id: a.id, user_id: u, name: `s-${u}` })).id);
      await sleep(3);
    }
    // A turn with an answer and its reference.
    expect(await saveAgentTurn(api.engine, ids[0]!, {
      append: [
        { role: 'user', content: 'What about Tides?', id: 'm1', files: [] },
        { role: 'assistant', content: 'Tides follow the moon.', id: 'm1', created_at: 1.5, prompt: 'secret', reference: { chunks: [{ chunk_id: 'c1', content_with_weight: 'moon', doc_id: 'd1', docnm_kwd: 'tides.md', kb_id: 'k1', positions: [] }], doc_aggs: [] } },
      ],
      dsl: { changed: true }, durationSec: 1.25,
    })).toBe(true);
    const list = await call('agentSessions.list', { agent_id: a.id });
    expect(list.total).toBe(3);
    // update_time, newest first (the turn made the first session the newest).
    expect(list.data.map((s: Json) => s.id)).toEqual([ids[0], ids[2], ids[1]]);
    const first = list.data[0];
    expect(first).toMatchObject({ agent_id: a.id, round: 1, duration: 1.25, dsl: { changed: true }, source: 'agent', tokens: 0, thumb_up: 0, errors: null });
    expect(first.message).toEqual([
      { role: 'assistant', content: 'Hello there.' },
      { role: 'user', content: 'What about Tides?', id: 'm1', files: [] },
      {
        role: 'assistant', content: 'Tides follow the moon.', id: 'm1', created_at: 1.5,
        reference: [{ id: 'c1', content: 'moon', document_id: 'd1', document_name: 'tides.md', dataset_id: 'k1', image_id: undefined, positions: [] }],
      },
    ]);
    const idsOf = async (q: Json) => (await call('agentSessions.list', { agent_id: a.id, ...q })).data.map((s: Json) => s.id);
    expect(await idsOf({ orderby: 'create_time', desc: false })).toEqual(ids);
    expect(await idsOf({ orderby: 'create_time', desc: 'False' })).toEqual(ids);
    expect(await idsOf({ orderby: 'create_time', page: 2, page_size: 2 })).toEqual([ids[0]]);
    expect(await idsOf({ user_id: 'u1', orderby: 'create_time' })).toEqual([ids[2], ids[0]]);
    expect(await idsOf({ id: ids[1] })).toEqual([ids[1]]);
    expect(await idsOf({ keywords: 'TIDES' })).toEqual([ids[0]]);
    expect(await idsOf({ page_size: 0 })).toEqual([]);
    expect((await call('agentSessions.list', { agent_id: a.id, dsl: false })).data[0]).not.toHaveProperty('dsl');
    const names = await call('agentSessions.list', { agent_id: a.id, exp_user_id: 'u1' });
    expect(names).toEqual({ data: [{ id: ids[2], name: 's-u1' }, { id: ids[0], name: 's-u1' }], total: 2 });
  });

  test('get: the stored record; Session not found! (also for another agent\'s session)', async ({ call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const b = await call('agents.create', { title: 'B', dsl: dsl() });
    const s = await call('agentSessions.create', { agent_id: a.id });
    const sb = await call('agentSessions.create', { agent_id: b.id });
    const got = await call('agentSessions.get', { agent_id: a.id, session_id: s.id });
    expect(got).toMatchObject({ id: s.id, dialog_id: a.id, agent_id: a.id, message: s.message, reference: [], dsl: s.dsl, round: 0 });
    expect(await fail('agentSessions.get', { agent_id: a.id, session_id: sb.id })).toEqual([102, 'Session not found!']);
    expect(await fail('agentSessions.get', { agent_id: a.id, session_id: 'nope' })).toEqual([102, 'Session not found!']);
  });

  test('delete: ids, partial (found ones deleted), duplicates, wrong agent, delete_all, nothing', async ({ api, call, fail }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const b = await call('agents.create', { title: 'B', dsl: dsl() });
    const mk = async (agent: Json) => (await call('agentSessions.create', { agent_id: agent.id })).id as string;
    const [s1, s2, s3, s4] = [await mk(a), await mk(a), await mk(a), await mk(a)];
    const other = await mk(b);
    const left = async () => (await call('agentSessions.list', { agent_id: a.id })).total;

    expect(await call('agentSessions.delete', { agent_id: a.id })).toBeUndefined(); // no body: nothing
    expect(await call('agentSessions.delete', { agent_id: a.id, ids: [] })).toBeUndefined();
    expect(await call('agentSessions.delete', { agent_id: a.id, ids: [s1] })).toBeUndefined();
    expect(await left()).toBe(3);
    // Partial: the found ones go, the answer lists the others.
    expect(await call('agentSessions.delete', { agent_id: a.id, ids: [s2, other, 'nope'] })).toEqual({
      success_count: 1, errors: [`The agent doesn't own the session ${other}`, "The agent doesn't own the session nope"],
    });
    expect(await left()).toBe(2);
    // Only unknown ones: 102, nothing deleted (another agent's session stays).
    const before = counts(api);
    expect(await fail('agentSessions.delete', { agent_id: a.id, ids: [other, 'nope'] })).toEqual([102, `The agent doesn't own the session ${other}; The agent doesn't own the session nope`]);
    expect(counts(api)).toEqual(before);
    // Duplicates: deleted once, reported.
    expect(await call('agentSessions.delete', { agent_id: a.id, ids: [s3, s3] })).toEqual({ success_count: 1, errors: [`Duplicate session ids: ${s3}`] });
    expect(await fail('agentSessions.delete', { agent_id: a.id, ids: [s3, s3] })).toEqual([102, `The agent doesn't own the session ${s3}`]);
    expect(await fail('agentSessions.delete', { agent_id: 'nope', ids: [s4] })).toEqual([102, "You don't own the agent nope"]);
    expect(await call('agentSessions.delete', { agent_id: a.id, delete_all: true })).toBeUndefined();
    expect(await left()).toBe(0);
    expect((await call('agentSessions.list', { agent_id: b.id })).total).toBe(1);
  });
});

describe('core storage helpers (used by the agent completion)', () => {
  test('insertAgentSession / saveAgentTurn / agentSessionMessages', async ({ api, call }) => {
    const a = await call('agents.create', { title: 'A', dsl: dsl() });
    const e = api.engine;
    await insertAgentSession(e, { id: 'f'.repeat(32), agent_id: a.id, user_id: 'u', dsl: { x: 1 }, messages: [], version_title: null });
    const s = (await getAgentSession(e, 'f'.repeat(32)))!;
    expect(s).toMatchObject({ agent_id: a.id, user_id: 'u', exp_user_id: 'u', source: 'agent', name: '', round: 0, duration: 0, version_title: null });
    expect(await saveAgentTurn(e, s.id, { append: [{ role: 'user', content: 'q1', id: 'm' }, { role: 'assistant', content: 'a1', id: 'm', reference: { chunks: {} } }], dsl: { x: 2 }, durationSec: 0.5 })).toBe(true);
    expect(await saveAgentTurn(e, s.id, { append: [{ role: 'user', content: 'q2' }, { role: 'assistant', content: 'a2' }], dsl: { x: 3 }, errors: 'boom', durationSec: 0.25 })).toBe(true);
    expect(await agentSessionMessages(e, s.id)).toEqual([
      { role: 'user', content: 'q1', id: 'm' }, { role: 'assistant', content: 'a1', id: 'm', reference: { chunks: {} } },
      { role: 'user', content: 'q2' }, { role: 'assistant', content: 'a2' },
    ]);
    expect(await getAgentSession(e, s.id)).toMatchObject({ round: 2, duration: 0.75, errors: 'boom', dsl: '{"x":3}' });
    await call('agentSessions.delete', { agent_id: a.id, ids: [s.id] });
    expect(await saveAgentTurn(e, s.id, { append: [{ role: 'user', content: 'late' }], dsl: {} })).toBe(false);
    expect(await agentSessionMessages(e, s.id)).toEqual([]);
  });
});

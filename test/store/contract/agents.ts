import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import { UNRELEASED_VERSIONS_KEPT, type AgentRow, type VersionSave } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore } from './harness.js';
import { seedOtherTenant, seedTenant } from './seed.js';

function agent(tenant: string, title: string, t = 1, extra: Partial<AgentRow> = {}): AgentRow {
  return {
    id: newId(), tenant_id: tenant, title, avatar: '', description: null, permission: 'me', release: 0, canvas_type: '', canvas_category: 'agent_canvas',
    tags: '', dsl: '{"v":0}', create_time: t, update_time: t, ...extra,
  };
}

const save = (v: number, time: number, extra: Partial<VersionSave> = {}): VersionSave => ({ dsl: { v }, title: `t${v}`, time, newId: newId(), ...extra });

export function agentsContract(f: StoreFactory): void {
  describe('AgentStore', () => {
    const { s } = freshStore(f);

    test('create with its first version, refusing a title of the owner in the category; get, titleTaken, update, delete', async () => {
      const who = await seedTenant(s());
      const a = agent(who.tenantId, 'Bot', 1);
      expect(await s().agents.create(a, save(0, 1))).toBe(true);
      expect(await s().agents.create(agent(who.tenantId, 'bot', 2), save(0, 2))).toBe(false);
      expect(await s().agents.create(agent(who.tenantId, 'bot', 2, { canvas_category: 'dataflow_canvas' }), save(0, 2))).toBe(true);
      expect(await s().agents.get(a.id)).toEqual(a);
      expect(await s().agents.get('')).toBeUndefined();
      expect(await s().agents.titleTaken(who.tenantId, 'BOT', 'agent_canvas')).toBe(true);
      expect(await s().agents.titleTaken(who.tenantId, 'bot', 'agent_canvas', a.id)).toBe(false);
      expect((await s().agents.versions(a.id)).map((v) => v.title)).toEqual(['t0']);
      const b = agent(who.tenantId, 'Other', 3);
      await s().agents.create(b, save(0, 3));
      expect(await s().agents.update(b.id, { title: 'bot', update_time: 4 }, null, { title: 'bot', category: 'agent_canvas' })).toBe(false);
      expect(await s().agents.update(b.id, { title: 'Renamed', release: 1, update_time: 4 }, null, { title: 'Renamed', category: 'agent_canvas' })).toBe(true);
      expect(await s().agents.get(b.id)).toMatchObject({ title: 'Renamed', release: 1, update_time: 4 });
      await s().agents.delete(b.id);
      expect(await s().agents.get(b.id)).toBeUndefined();
      expect(await s().agents.versions(b.id)).toEqual([]);
    });

    test('versions: the same dsl updates the newest in place (not a released one by an unreleased save), another dsl adds one; old unreleased ones pruned', async () => {
      const who = await seedTenant(s());
      const a = agent(who.tenantId, 'a', 1);
      await s().agents.create(a, save(0, 1));
      await s().agents.update(a.id, { update_time: 2 }, save(0, 2, { description: 'same dsl' }), null);
      let vs = await s().agents.versions(a.id);
      expect(vs).toHaveLength(1);
      expect(vs[0]).toMatchObject({ title: 't0', description: 'same dsl', update_time: 2, release: 0 });
      await s().agents.update(a.id, { update_time: 3 }, save(0, 3, { release: true }), null);
      expect((await s().agents.latestVersion(a.id, true))!.update_time).toBe(3);
      await s().agents.update(a.id, { update_time: 4 }, save(0, 4, { release: false }), null);
      vs = await s().agents.versions(a.id);
      expect(vs.map((v) => v.release)).toEqual([0, 1]);
      expect(await s().agents.lastPublished(a.id)).toBe(3);
      expect(await s().agents.releaseTimes([a.id, 'nope'])).toEqual(new Map([[a.id, vs[1]!.create_time]]));
      for (let i = 1; i <= UNRELEASED_VERSIONS_KEPT + 3; i++) await s().agents.update(a.id, { update_time: 10 + i }, save(i, 10 + i), null);
      vs = await s().agents.versions(a.id);
      expect(vs.filter((v) => v.release === 0)).toHaveLength(UNRELEASED_VERSIONS_KEPT);
      expect(vs.filter((v) => v.release === 1)).toHaveLength(1);
      const newest = (await s().agents.latestVersion(a.id, false))!;
      expect(newest.title).toBe(`t${UNRELEASED_VERSIONS_KEPT + 3}`);
      expect(await s().agents.getVersion(newest.id)).toEqual(newest);
      expect(await s().agents.getVersion('')).toBeUndefined();
    });

    test('list: own and team agents of the given owners, keywords, category, tags, order and page', async () => {
      const who = await seedTenant(s());
      const mine = [agent(who.tenantId, 'Alpha', 1, { tags: 'ml,nlp' }), agent(who.tenantId, 'Beta', 2, { tags: 'ml-ops' }), agent(who.tenantId, 'Gamma', 3, { canvas_category: 'dataflow_canvas' })];
      for (const a of mine) await s().agents.create(a, save(0, 1));
      const other = await seedOtherTenant(s());
      await s().agents.create(agent(other.tenantId, 'Shared', 4, { permission: 'team' }), save(0, 4));
      await s().agents.create(agent(other.tenantId, 'Private', 5), save(0, 5));
      const titles = async (q: object) => (await s().agents.list({ tenantIds: [who.tenantId, other.tenantId], ownTenantId: who.tenantId, orderby: 'create_time', desc: false, ...q })).rows.map((a) => a.title);
      expect(await titles({})).toEqual(['Alpha', 'Beta', 'Gamma', 'Shared']);
      expect(await titles({ keywords: 'amm' })).toEqual(['Gamma']);
      expect(await titles({ category: 'dataflow_canvas' })).toEqual(['Gamma']);
      expect(await titles({ tags: ['ml'] })).toEqual(['Alpha']);
      expect(await titles({ tags: ['nlp', 'ml-ops'] })).toEqual(['Alpha', 'Beta']);
      expect(await titles({ orderby: 'title', desc: true, page: { limit: 2, offset: 1 } })).toEqual(['Gamma', 'Beta']);
      expect((await s().agents.list({ tenantIds: [who.tenantId], ownTenantId: who.tenantId, orderby: 'title', desc: false, page: { limit: 1, offset: 0 } })).total).toBe(3);
    });

    test('sessions: create with messages, list with filters, names, saveTurn, messages with references, delete', async () => {
      const who = await seedTenant(s());
      const a = agent(who.tenantId, 'a');
      await s().agents.create(a, save(0, 1));
      const s1 = newId();
      const s2 = newId();
      await s().agents.createSession({ id: s1, agent_id: a.id, user_id: 'u1', name: 'first', dsl: { x: 1 }, messages: [{ role: 'assistant', content: 'Hello' }], version_title: 'v' }, 100);
      await s().agents.createSession({ id: s2, agent_id: a.id, user_id: 'u2', dsl: {}, messages: [], version_title: null, source: 'agent' }, 200);
      expect(await s().agents.getSession(s1)).toMatchObject({ agent_id: a.id, name: 'first', user_id: 'u1', exp_user_id: 'u1', dsl: '{"x":1}', version_title: 'v', round: 0, create_time: 100 });
      expect(await s().agents.saveTurn(s1, { append: [{ role: 'user', content: 'Q' }, { role: 'assistant', content: 'A', reference: { chunks: {} } }], dsl: { x: 2 }, errors: 'boom', durationSec: 0.5 }, 300)).toBe(true);
      expect(await s().agents.saveTurn(s1, { append: [{ role: 'user', content: 'Q2' }], dsl: { x: 3 }, durationSec: 0.25 }, 301)).toBe(true);
      expect(await s().agents.getSession(s1)).toMatchObject({ round: 2, duration: 0.75, errors: 'boom', dsl: '{"x":3}', update_time: 301 });
      const msgs = await s().agents.messages([s1, s2]);
      expect(msgs.get(s1)).toEqual([{ role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Q' }, { role: 'assistant', content: 'A', reference: { chunks: {} } }, { role: 'user', content: 'Q2' }]);
      expect(msgs.get(s2)).toEqual([]);
      const ids = async (q: object) => (await s().agents.listSessions({ agentId: a.id, dateColumn: 'update_time', orderby: 'update_time', desc: true, ...q })).rows.map((r) => r.id);
      expect(await ids({})).toEqual([s1, s2]);
      expect(await ids({ userId: 'u2' })).toEqual([s2]);
      expect(await ids({ keywords: 'q2' })).toEqual([s1]);
      expect(await ids({ from: 250 })).toEqual([s1]);
      expect(await ids({ to: 250 })).toEqual([s2]);
      expect(await ids({ desc: false, page: { limit: 1, offset: 0 } })).toEqual([s2]);
      expect(await s().agents.listSessions({ agentId: a.id, dateColumn: 'create_time', orderby: 'create_time', desc: true, page: { limit: 0, offset: 0 } })).toEqual({ total: 2, rows: [] });
      expect(await s().agents.sessionNames(a.id, 'u1')).toEqual([{ id: s1, name: 'first' }]);
      expect((await s().agents.sessionIds(a.id)).sort()).toEqual([s1, s2].sort());
      expect(await s().agents.deleteSessions(a.id, [s2, 'nope', s2])).toEqual([true, false, false]);
      expect(await s().agents.saveTurn(s2, { append: [], dsl: {} }, 400)).toBe(false);
      expect(await s().agents.deleteSessions('another agent', [s1])).toEqual([false]);
    });

    test('tagLists: tags of the agents a list would show (own, others\' team ones), by category; sessionFigures of the tenant\'s agents in a window', async () => {
      const who = await seedTenant(s());
      const other = await seedOtherTenant(s());
      const mine = agent(who.tenantId, 'mine', 1, { tags: 'a,b' });
      await s().agents.create(mine, save(0, 1));
      await s().agents.create(agent(who.tenantId, 'untagged', 1), save(0, 1));
      await s().agents.create(agent(who.tenantId, 'dataflow', 1, { tags: 'c', canvas_category: 'dataflow_canvas' }), save(0, 1));
      await s().agents.create(agent(other.tenantId, 'shared', 1, { tags: 'b', permission: 'team' }), save(0, 1));
      await s().agents.create(agent(other.tenantId, 'private', 1, { tags: 'z' }), save(0, 1));
      expect((await s().agents.tagLists({ tenantIds: [who.tenantId, other.tenantId], ownTenantId: who.tenantId })).sort()).toEqual(['a,b', 'b', 'c']);
      expect(await s().agents.tagLists({ tenantIds: [who.tenantId], ownTenantId: who.tenantId, category: 'dataflow_canvas' })).toEqual(['c']);
      await s().agents.createSession({ id: newId(), agent_id: mine.id, user_id: 'u1', dsl: {}, messages: [], version_title: null }, 100);
      await s().agents.createSession({ id: newId(), agent_id: mine.id, user_id: 'u2', dsl: {}, messages: [], version_title: null }, 200);
      const [x] = await s().agents.sessionFigures(who.tenantId, 150, 250);
      expect(x).toEqual({ t: 200, user_id: 'u2', tokens: 0, duration: 0, round: 0, thumb_up: 0 });
      expect((await s().agents.sessionFigures(who.tenantId, 0, 1000)).map((r) => r.t)).toEqual([100, 200]);
      expect(await s().agents.sessionFigures(other.tenantId, 0, 1000)).toEqual([]);
    });
  });
}

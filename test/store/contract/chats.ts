import { describe, expect, test } from 'vitest';
import { newId } from '../../../src/util/index.js';
import type { ChatRow, SessionRow } from '../../../src/store/index.js';
import type { StoreFactory } from './factory.js';
import { freshStore } from './harness.js';
import { seedOtherTenant, seedTenant } from './seed.js';

function chat(tenant: string, name: string, t = 1): ChatRow {
  return {
    id: newId(), tenant_id: tenant, name, description: 'd', icon: '', language: 'English', dataset_ids: '[]', llm_id: 'm@F', llm_setting: '{}',
    prompt_config: '{}', meta_data_filter: '{}', similarity_threshold: 0.1, vector_similarity_weight: 0.3, top_n: 6, top_k: 1024, rerank_id: '',
    status: '1', created_by: 'u', create_time: t, update_time: t,
  };
}

const session = (chatId: string, name: string, t: number, user = 'u'): SessionRow => ({ id: newId(), chat_id: chatId, name, user_id: user, create_time: t, update_time: t });

export function chatsContract(f: StoreFactory): void {
  describe('ChatStore', () => {
    const { s } = freshStore(f);

    test('create refuses a live name of the tenant (case-insensitively) in its transaction; getOwned, nameTaken, update, list, softDelete', async () => {
      const who = await seedTenant(s());
      const other = await seedOtherTenant(s());
      const a = chat(who.tenantId, 'Helper', 1);
      expect(await s().chats.create(a)).toBe(true);
      expect(await s().chats.create(chat(who.tenantId, 'helper', 2))).toBe(false);
      expect(await s().chats.create(chat(other.tenantId, 'helper', 2))).toBe(true);
      expect(await s().chats.getOwned(a.id, who.tenantId)).toEqual(a);
      expect(await s().chats.getOwned(a.id, other.tenantId)).toBeUndefined();
      expect(await s().chats.nameTaken(who.tenantId, 'HELPER')).toBe(true);
      expect(await s().chats.nameTaken(who.tenantId, 'helper', a.id)).toBe(false);
      const b = chat(who.tenantId, 'Second', 3);
      await s().chats.create(b);
      expect(await s().chats.update(b.id, who.tenantId, { name: 'helper', update_time: 9 }, true)).toBe(false);
      expect((await s().chats.getOwned(b.id, who.tenantId))!.name).toBe('Second');
      expect(await s().chats.update(b.id, who.tenantId, { name: 'Third', top_n: 3, update_time: 9 }, true)).toBe(true);
      expect(await s().chats.getOwned(b.id, who.tenantId)).toMatchObject({ name: 'Third', top_n: 3, update_time: 9 });
      const names = async (q: object) => (await s().chats.list({ tenantIds: [who.tenantId], orderby: 'create_time', desc: false, ...q })).rows.map((r) => r.name);
      expect(await names({})).toEqual(['Helper', 'Third']);
      expect(await names({ desc: true, page: { limit: 1, offset: 0 } })).toEqual(['Third']);
      expect(await names({ name: 'THIRD' })).toEqual(['Third']);
      expect(await names({ keywords: 'elp' })).toEqual(['Helper']);
      expect(await names({ id: a.id })).toEqual(['Helper']);
      expect((await s().chats.list({ tenantIds: [who.tenantId], orderby: 'name', desc: false, page: { limit: 1, offset: 0 } })).total).toBe(2);
      expect((await s().chats.liveIds(who.tenantId)).sort()).toEqual([a.id, b.id].sort());
      expect(await s().chats.softDelete(who.tenantId, [a.id, 'nope', ''], 50)).toEqual([true, false, false]);
      expect(await s().chats.getOwned(a.id, who.tenantId)).toBeUndefined();
      expect(await s().chats.liveIds(who.tenantId)).toEqual([b.id]);
      expect(await s().chats.create(chat(who.tenantId, 'helper', 60))).toBe(true); // the name is free once deleted
    });

    test('sessions: create with first messages, list, rename, transcripts, saveTurn, delete', async () => {
      const who = await seedTenant(s());
      const c = chat(who.tenantId, 'c');
      await s().chats.create(c);
      const s1 = session(c.id, 'first', 10);
      const s2 = session(c.id, 'second', 20, 'other');
      await s().chats.createSession(s1, [{ role: 'assistant', content: 'Hi!' }]);
      await s().chats.createSession(s2, []);
      expect(await s().chats.getSession(s1.id)).toEqual(s1);
      expect(await s().chats.getSession('')).toBeUndefined();
      const names = async (q: object) => (await s().chats.listSessions({ chatId: c.id, orderby: 'create_time', desc: true, ...q })).map((r) => r.name);
      expect(await names({})).toEqual(['second', 'first']);
      expect(await names({ userId: 'other' })).toEqual(['second']);
      expect(await names({ name: 'FIRST' })).toEqual(['first']);
      expect(await names({ desc: false, page: { limit: 1, offset: 1 } })).toEqual(['second']);
      expect((await s().chats.sessionIds(c.id)).sort()).toEqual([s1.id, s2.id].sort());
      await s().chats.renameSession(s2.id, 'renamed', 30);
      expect(await s().chats.getSession(s2.id)).toMatchObject({ name: 'renamed', update_time: 30 });
      expect(await s().chats.saveTurn(s1.id, { replace: false, append: [{ role: 'user', content: 'q', id: 'm1' }, { role: 'assistant', content: 'a', id: 'm1', reference: { chunks: [1] } }], time: 40 })).toBe(true);
      let t = (await s().chats.transcripts([s1.id, s2.id, 'nope'])).get(s1.id)!;
      expect(t.messages).toEqual([{ role: 'assistant', content: 'Hi!' }, { role: 'user', content: 'q', id: 'm1' }, { role: 'assistant', content: 'a', id: 'm1' }]);
      expect(t.references).toEqual([{ chunks: [1] }]);
      expect((await s().chats.getSession(s1.id))!.update_time).toBe(40);
      expect(await s().chats.saveTurn(s1.id, { replace: true, append: [{ role: 'user', content: 'only' }], time: 41 })).toBe(true);
      t = (await s().chats.transcripts([s1.id])).get(s1.id)!;
      expect(t).toEqual({ messages: [{ role: 'user', content: 'only' }], references: [] });
      expect((await s().chats.transcripts(['nope'])).get('nope')).toEqual({ messages: [], references: [] });
      expect(await s().chats.deleteSessions(c.id, [s2.id, 'nope', s2.id])).toEqual([true, false, false]);
      expect(await s().chats.saveTurn(s2.id, { replace: false, append: [{ role: 'user', content: 'late' }], time: 50 })).toBe(false);
      expect(await s().chats.deleteSessions('another chat', [s1.id])).toEqual([false]);
      expect(await s().chats.getSession(s1.id)).toBeDefined();
    });

    test('deleteExchange: a question and its answer go together (with the reference); absent, unanswered and mismatched change nothing; rateAnswer', async () => {
      const who = await seedTenant(s());
      const c = chat(who.tenantId, 'c');
      await s().chats.create(c);
      const s1 = session(c.id, 'first', 10);
      await s().chats.createSession(s1, [{ role: 'assistant', content: 'Hi!' }]);
      await s().chats.saveTurn(s1.id, { replace: false, append: [
        { role: 'user', content: 'q1', id: 'm1' }, { role: 'assistant', content: 'a1', id: 'm1', reference: { chunks: [1] } },
        { role: 'user', content: 'q2', id: 'm2' }, { role: 'assistant', content: 'a2', id: 'other' }, { role: 'user', content: 'q3', id: 'm3' },
      ], time: 20 });
      const before = (await s().chats.transcripts([s1.id])).get(s1.id);
      expect(await s().chats.deleteExchange(s1.id, 'nope', 30)).toBe('absent');
      expect(await s().chats.deleteExchange(s1.id, 'm2', 30)).toBe('mismatched');
      expect(await s().chats.deleteExchange(s1.id, 'm3', 30)).toBe('unanswered');
      expect((await s().chats.transcripts([s1.id])).get(s1.id)).toEqual(before);
      expect((await s().chats.getSession(s1.id))!.update_time).toBe(20);
      await s().chats.rateAnswer(s1.id, 'other', false, 'too short');
      await s().chats.rateAnswer(s1.id, 'm2', true, 'ignored: a question'); // no answer has that id
      expect(await s().chats.deleteExchange(s1.id, 'm1', 31)).toBe('deleted');
      const t = (await s().chats.transcripts([s1.id])).get(s1.id)!;
      expect(t.messages.map((m) => m.content)).toEqual(['Hi!', 'q2', 'a2', 'q3']);
      expect(t.references).toEqual([]);
      expect(t.messages[2]).toMatchObject({ id: 'other', thumbup: false, feedback: 'too short' });
      expect(t.messages[1]).not.toHaveProperty('thumbup');
      expect((await s().chats.getSession(s1.id))!.update_time).toBe(31);
      await s().chats.rateAnswer(s1.id, 'other', true, 'dropped');
      const liked = (await s().chats.transcripts([s1.id])).get(s1.id)!.messages[2]!;
      expect(liked).toMatchObject({ thumbup: true });
      expect(liked).not.toHaveProperty('feedback');
    });
  });
}

/**
 * Memories and their messages in both modes. Raw messages only (no extraction model), so every
 * write is visible at once in both modes.
 */
import { describe, expect } from 'vitest';
import type { Client } from '../../src/index.js';
import { MODES, acceptance, failure, portable, EMBD, LLM, NOT_AN_ID, inProcess } from './modes.js';

/** The same memory steps on any client; results without ids and times. */
async function memorySteps(c: Client) {
  const m = await c.createMemory({ name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
  const turns = [
    ['s1', 'What pulls the tides?', 'The moon pulls the ocean tides.'],
    ['s1', 'And bread?', 'Let the dough rise for one hour.'],
    ['s2', 'Longest river?', 'The Nile is the longest river in Africa.'],
  ] as const;
  for (const [session_id, user_input, agent_response] of turns) {
    expect(await c.addMessage({ memory_id: [m.id], agent_id: 'agent-1', session_id, user_input, agent_response })).toBe('All add to task.');
  }
  const search = await c.searchMessage({ query: 'moon tides', memory_id: [m.id] });
  const tuned = await c.searchMessage({ query: 'river', memory_id: m.id, similarity_threshold: 0.05, keywords_similarity_weight: 0.3, top_n: 2, agent_id: 'agent-1', session_id: 's2' });
  const recent = await c.getRecentMessages({ memory_id: [m.id], limit: 2 });
  const bySession = await c.getRecentMessages({ memory_id: [m.id], session_id: 's1', agent_id: 'agent-1' });
  return { search: portable(search), tuned: portable(tuned), recent: portable(recent), bySession: portable(bySession) };
}

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('Client#createMemory() / listMemory() / Memory#update() / getConfig() / deleteMemory()', () => {
    test('CRUD', async ({ client }) => {
      const m = await client.createMemory({ name: ' notes ', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
      expect(m).toMatchObject({ name: 'notes', memory_type: ['raw'], storage_type: 'table', permissions: 'me', memory_size: 5242880, forgetting_policy: 'FIFO', embd_id: EMBD, llm_id: LLM });
      expect((await client.createMemory({ name: 'notes', memory_type: ['raw', 'episodic'], embd_id: EMBD, llm_id: LLM })).name).toBe('notes(1)');
      const list = await client.listMemory();
      expect([list.total_count, list.memory_list.map((x) => x.name)]).toEqual([2, ['notes(1)', 'notes']]);
      expect((await client.listMemory({ memory_type: 'episodic' })).memory_list.map((x) => x.name)).toEqual(['notes(1)']);
      expect((await client.listMemory({ keywords: 'NOTES(1' })).memory_list.map((x) => x.name)).toEqual(['notes(1)']);
      expect((await client.listMemory({ page: 2, page_size: 1 })).memory_list.map((x) => x.name)).toEqual(['notes']);

      expect(await m.update({ description: 'kept', temperature: 0.2, memory_size: 1024 })).toBe(m);
      expect(m).toMatchObject({ description: 'kept', temperature: 0.2, memory_size: 1024 });
      expect((await m.getConfig()).toJSON()).toMatchObject({ id: m.id, description: 'kept', temperature: 0.2, memory_size: 1024 });

      await client.deleteMemory(m.id);
      expect((await client.listMemory()).total_count).toBe(1);
    });

    test('errors', async ({ client }) => {
      expect(await failure(client.createMemory({ name: ' ', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM }))).toEqual([101, 'Memory name cannot be empty or whitespace.']);
      expect(await failure(client.createMemory({ name: 'x' } as never))).toEqual([101, 'required argument are missing: memory_type,embd_id,llm_id; ']);
      expect(await failure(client.createMemory({ name: 'x', memory_type: 'raw' as never, embd_id: EMBD, llm_id: LLM }))).toEqual([101, 'Memory type must be a list.']);
      expect(await failure(client.createMemory({ name: 'x', memory_type: ['raw'], embd_id: EMBD, llm_id: 'gpt-x@OpenAI' }))).toEqual([101, 'Tenant Model with name gpt-x@OpenAI and type chat not found']);
      const m = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
      expect(await failure(m.update({ memory_size: 0 }))).toEqual([101, 'Memory size should be in range (0, 10485760] Bytes.']);
      expect(await failure(m.update({ forgetting_policy: 'LRU' as never }))).toEqual([101, "Forgetting policy 'LRU' is not supported."]);
      await client.deleteMemory(m.id);
      expect(await failure(m.getConfig())).toEqual([404, `Memory '${m.id}' not found.`]);
      expect(await failure(client.deleteMemory(m.id))).toEqual([404, `Memory '${m.id}' not found.`]);
    });
  });

  describe('Client#addMessage() / searchMessage() / getRecentMessages() / Memory#listMemoryMessages() / forgetMessage() / updateMessageStatus() / getMessageContent()', () => {
    test('messages', async ({ client }) => {
      const m = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
      expect(await client.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: 's', user_input: 'What pulls the tides?', agent_response: 'The moon.' })).toBe('All add to task.');
      expect(await client.addMessage({ memory_id: m.id, agent_id: 'b', session_id: 't', user_input: 'Bake time?', agent_response: 'Thirty minutes.', user_id: 'u1' })).toBe('All add to task.');

      const listed = await m.listMemoryMessages();
      expect(listed.storage_type).toBe('table');
      expect(listed.messages.total_count).toBe(2);
      const [second, first] = listed.messages.message_list;
      expect(first).toMatchObject({ message_type: 'raw', agent_id: 'a', session_id: 's', status: true });
      expect(second).toMatchObject({ agent_id: 'b', user_id: 'u1' });
      expect((await m.listMemoryMessages({ agent_id: 'b' })).messages.message_list.map((x) => x.message_id)).toEqual([second!.message_id]);
      expect((await m.listMemoryMessages({ agent_id: ['a', 'b'], page: 2, page_size: 1 })).messages.message_list.map((x) => x.message_id)).toEqual([first!.message_id]);
      expect((await m.listMemoryMessages({ keywords: 't' })).messages.total_count).toBe(1);

      const hits = await client.searchMessage({ query: 'moon tides', memory_id: [m.id] });
      expect(hits[0]).toMatchObject({ message_id: first!.message_id, similarity: expect.any(Number) });
      expect((await client.getRecentMessages({ memory_id: [m.id] })).map((x) => x.message_id)).toEqual([second!.message_id, first!.message_id]);

      const content = await m.getMessageContent(first!.message_id);
      expect(content).toMatchObject({ message_id: first!.message_id, content: expect.stringContaining('The moon.') });
      expect(content.content_embed!.length).toBe(256);

      expect(await m.updateMessageStatus(first!.message_id, false)).toBe(true);
      const status = async () => (await m.listMemoryMessages()).messages.message_list.find((x) => x.message_id === first!.message_id)!.status;
      expect(await status()).toBe(false);
      expect(await m.updateMessageStatus(first!.message_id, true)).toBe(true);
      expect(await status()).toBe(true);
      expect(await m.forgetMessage(first!.message_id)).toBe(true);
      expect((await client.searchMessage({ query: 'moon tides', memory_id: [m.id] })).map((x) => x.message_id)).not.toContain(first!.message_id);
      expect((await m.listMemoryMessages()).messages.message_list.find((x) => x.message_id === first!.message_id)!.forget_at).not.toBe('');

      // Extraction runs in the background of whoever holds the database: a remote Client cannot
      // wait for it (the assertion is local only; remotely it says so with a TypeError).
      if (inProcess(mode)) await expect(client.waitForMemoryTasks()).resolves.toBeUndefined();
      else await expect(client.waitForMemoryTasks()).rejects.toThrow(/not available in remote mode/);
    });

    test('search and recent messages agree with the embedded engine', async ({ client, reference }) => {
      const got = await memorySteps(client);
      expect((got.search as unknown[]).length).toBeGreaterThan(0);
      expect(got).toEqual(await memorySteps(reference));
    });

    test('errors', async ({ client }) => {
      const m = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
      expect(await failure(client.addMessage({ memory_id: [NOT_AN_ID], agent_id: 'a', session_id: 's', user_input: 'q', agent_response: 'r' }))).toEqual([500, 'Some messages failed to add. Detail:Memory not found.']);
      expect(await failure(client.addMessage({ memory_id: [m.id] } as never))).toEqual([101, 'required argument are missing: agent_id,session_id,user_input,agent_response; ']);
      expect(await failure(client.getRecentMessages({ memory_id: [] }))).toEqual([101, 'memory_ids is required.']);
      expect(await failure(m.forgetMessage(99999))).toEqual([404, `Message '99999' in memory '${m.id}' not found.`]);
      expect(await failure(m.getMessageContent(99999))).toEqual([404, `Message '99999' in memory '${m.id}' not found.`]);
      expect(await failure(m.updateMessageStatus(99999, false))).toEqual([404, `Message '99999' in memory '${m.id}' not found.`]);
      expect(await failure(m.updateMessageStatus(1, 'x' as never))).toEqual([101, 'Status must be a boolean.']);
    });
  });
});

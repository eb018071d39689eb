/**
 * Chat assistants, sessions, `session.ask` and the OpenAI-compatible completion in both modes.
 * Answers come from the built-in extractive model (the same text in both modes), or from a
 * loopback stand-in of an OpenAI-compatible model server where a test needs a model that fails
 * or is slow.
 */
import { describe, expect, beforeAll, afterAll } from 'vitest';
import type { Client, Message } from '../../src/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { MODES, acceptance, failure, caught, parsedDataset, portable, NOT_AN_ID, LLM, inProcess } from './modes.js';

let model: ChatServer;
beforeAll(async () => {
  model = await startChatServer();
});
afterAll(() => model.close());

const MOCK = 'mock@OpenAI-API-Compatible';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const m of it) out.push(m);
  return out;
}

const messages = (q: string) => [{ role: 'user', content: q }];

/** The same conversation on any client: answers without ids and times. */
async function conversation(c: Client) {
  const { ds } = await parsedDataset(c);
  const chat = await c.createChat({ name: 'helper', dataset_ids: [ds.id] });
  const s = await chat.createSession({ name: 'first' });
  const plain = await s.ask('How long should the dough rise?');
  const streamed = await collect(s.ask('What causes spring tides?', { stream: true }));
  const completion = await c.chatCompletion(chat.id, { model: 'model', messages: messages('Which river is the longest in Africa?') });
  const chunks = await collect(await c.chatCompletion(chat.id, { model: 'model', messages: messages('Which river is the longest in Africa?'), stream: true, extra_body: { reference: true } }));
  const [stored] = await chat.listSessions({ id: s.id });
  return {
    plain: { content: plain.content, reference: portable(plain.reference), citations_removed: plain.citations_removed },
    streamed: streamed.map((m) => ({ content: m.content, final: m.final, reference: portable(m.reference) })),
    completion: portable({ ...completion, created: undefined }),
    chunks: chunks.map((x) => portable({ ...x, created: undefined })),
    history: stored!.messages.map((m) => [m.role, m.content]),
  };
}

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);
  // The stand-in model, registered as the engine's (the Client's locally, the server's remotely).
  const withModel = test.extend({
    // eslint-disable-next-line no-empty-pattern
    models: async ({}, use) => {
      model.reset();
      await use({ models: [{ type: 'chat', name: 'mock', factory: 'OpenAI-API-Compatible', base_url: model.url }] });
    },
  });

  describe('Client#createChat() / listChats() / getChat() / Chat#update() / deleteChats()', () => {
    test('CRUD', async ({ client }) => {
      const { ds } = await parsedDataset(client);
      const a = await client.createChat({ name: 'a' });
      expect(a).toMatchObject({ name: 'a', dataset_ids: [], llm_id: LLM });
      const b = await client.createChat({ name: 'b', dataset_ids: [ds.id], description: 'about science', top_n: 4, similarity_threshold: 0.1, prompt_config: { prologue: 'Hi!', empty_response: 'Nothing.' } });
      expect(b).toMatchObject({ name: 'b', dataset_ids: [ds.id], kb_names: ['science'], description: 'about science', top_n: 4, similarity_threshold: 0.1 });
      expect(b.prompt_config).toMatchObject({ prologue: 'Hi!', empty_response: 'Nothing.' });

      expect((await client.listChats()).map((c) => c.name)).toEqual(['b', 'a']);
      expect((await client.listChats({ desc: false, page: 1, page_size: 1 })).map((c) => c.name)).toEqual(['a']);
      expect((await client.listChats({ name: 'b' })).map((c) => c.id)).toEqual([b.id]);
      expect((await client.listChats({ keywords: 'a' })).map((c) => c.id)).toEqual([a.id]);
      expect((await client.getChat(b.id)).toJSON()).toEqual(b.toJSON());

      await b.update({ name: 'b2', prompt_config: { prologue: 'Hello!' } });
      expect(b.name).toBe('b2');
      expect(b.prompt_config).toMatchObject({ prologue: 'Hello!', empty_response: 'Nothing.' });
      expect((await client.getChat(b.id)).name).toBe('b2');

      await client.deleteChats({ ids: [a.id] });
      expect((await client.listChats()).map((c) => c.id)).toEqual([b.id]);
      await client.deleteChats({ delete_all: true });
      expect(await client.listChats()).toEqual([]);
    });

    test('errors', async ({ client }) => {
      const ds = await client.createDataset({ name: 'kb' });
      const chat = await client.createChat({ name: 'c' });
      expect(await failure(client.createChat({ name: '' }))).toEqual([102, '`name` is required.']);
      expect(await failure(client.createChat({ name: 'c' }))).toEqual([102, 'Duplicated chat name in creating chat.']);
      expect(await failure(client.createChat({ name: 'x', dataset_ids: [NOT_AN_ID] }))).toEqual([102, `You don't own the dataset ${NOT_AN_ID}`]);
      expect(await failure(client.createChat({ name: 'x', dataset_ids: [ds.id] }))).toEqual([102, `The dataset ${ds.id} doesn't own parsed file`]);
      expect(await failure(client.getChat(NOT_AN_ID))).toEqual([109, 'No authorization.']);
      expect(await failure(chat.update({ name: '' }))).toEqual([102, '`name` cannot be empty.']);
      expect(await failure(chat.update({ llm_id: 'nope@X' }))).toEqual([102, "`llm_id` nope@X doesn't exist"]);
      expect(await failure(client.deleteChats({ ids: [NOT_AN_ID] }))).toEqual([102, `Chat(${NOT_AN_ID}) not found.`]);
      expect((await client.listChats()).map((c) => c.name)).toEqual(['c']);
    });
  });

  describe('Chat#createSession() / listSessions() / Session#update() / deleteSessions()', () => {
    test('CRUD and errors', async ({ client }) => {
      const chat = await client.createChat({ name: 'c', prompt_config: { prologue: 'Ask me.' } });
      const s1 = await chat.createSession();
      const s2 = await chat.createSession({ name: 'second', user_id: 'u1' });
      expect(s1).toMatchObject({ name: 'New session', chat_id: chat.id, messages: [{ role: 'assistant', content: 'Ask me.' }] });
      expect(s2).toMatchObject({ name: 'second', user_id: 'u1' });
      expect((await chat.listSessions()).map((s) => s.name)).toEqual(['second', 'New session']);
      expect((await chat.listSessions({ user_id: 'u1' })).map((s) => s.id)).toEqual([s2.id]);
      expect((await chat.listSessions({ page: 2, page_size: 1 })).map((s) => s.id)).toEqual([s1.id]);
      await s1.update({ name: 'renamed' });
      expect(s1.name).toBe('renamed');
      expect((await chat.listSessions({ id: s1.id }))[0]!.name).toBe('renamed');
      expect(await failure(s1.update({ name: '' }))).toEqual([102, '`name` can not be empty.']);
      expect(await failure(chat.deleteSessions({ ids: [NOT_AN_ID] }))).toEqual([102, `The chat doesn't own the session ${NOT_AN_ID}`]);
      await chat.deleteSessions({ ids: [s1.id] });
      expect((await chat.listSessions()).map((s) => s.id)).toEqual([s2.id]);
      await chat.deleteSessions({ delete_all: true });
      expect(await chat.listSessions()).toEqual([]);
    });
  });

  describe('Session#ask() / Client#chatCompletion()', () => {
    test('the built-in model gives the same answers, streamed and not, as the embedded engine', async ({ client, reference }) => {
      const got = await conversation(client);
      expect(got.plain.content).toMatch(/rise for one hour/);
      expect(got.streamed.length).toBeGreaterThan(1);
      // Cumulative content; only the last message is final and carries the references.
      for (let i = 1; i < got.streamed.length - 1; i++) expect(got.streamed[i]!.content.startsWith(got.streamed[i - 1]!.content)).toBe(true);
      expect(got.streamed.map((m) => m.final)).toEqual([...got.streamed.slice(1).map(() => false), true]);
      expect(got.streamed.at(-1)!.content).toMatch(/moon/);
      expect((got.completion as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toMatch(/Nile/);
      // The streamed completion: content pieces that add up to the answer, then one `stop` chunk with usage; no [DONE] object.
      const last = got.chunks.at(-1) as { choices: Array<{ finish_reason: string; delta: { final_content: string; reference: unknown[] } }>; usage: unknown };
      expect(last.choices[0]!.finish_reason).toBe('stop');
      expect(last.usage).toEqual(expect.objectContaining({ total_tokens: expect.any(Number) }));
      expect(last.choices[0]!.delta.reference.length).toBeGreaterThan(0);
      const text = got.chunks.map((x) => (x as { choices: Array<{ delta: { content: string | null } }> }).choices[0]!.delta.content ?? '').join('');
      expect(text).toBe(last.choices[0]!.delta.final_content);
      expect(got.history.map(([role]) => role)).toEqual(['assistant', 'user', 'assistant', 'user', 'assistant']);
      expect(got).toEqual(await conversation(reference));
    });

    test('errors before the answer are ApiErrors of the call, streamed or not', async ({ client }) => {
      const chat = await client.createChat({ name: 'c' });
      const s = await chat.createSession();
      expect(await failure(s.ask('q', { llm_id: 'nope@X' }))).toEqual([102, 'Cannot use specified model nope@X.']);
      expect(await failure(collect(s.ask('q', { stream: true, llm_id: 'nope@X' })))).toEqual([102, 'Cannot use specified model nope@X.']);
      expect(await failure(client.chatCompletion(chat.id, { model: 'nope@X', messages: messages('q') }))).toEqual([101, "`llm_id` nope@X doesn't exist"]);
      expect(await failure(client.chatCompletion(chat.id, { model: 'nope@X', messages: messages('q'), stream: true }))).toEqual([101, "`llm_id` nope@X doesn't exist"]);
      expect(await failure(client.chatCompletion(chat.id, { model: 'model', messages: [] }))).toEqual([102, 'You have to provide messages.']);
      expect(await failure(client.chatCompletion(chat.id, { model: 'model' } as never))).toEqual([101, 'required argument are missing: messages; ']);
      expect(await failure(client.chatCompletion(NOT_AN_ID, { model: 'model', messages: messages('q') }))).toEqual([102, `You don't own the chat ${NOT_AN_ID}`]);
      expect(await failure(client.chatCompletion(chat.id, { model: 'model', messages: [{ role: 'assistant', content: 'q' }] }))).toEqual([102, 'The last content of this conversation is not from user.']);
      // Nothing was stored by the failed asks.
      expect((await chat.listSessions({ id: s.id }))[0]!.messages).toHaveLength(1);
    });

    withModel('a model failing mid-stream: the stream throws an ApiError with the model\'s message', async ({ client, mode }) => {
      const chat = await client.createChat({ name: 'c', llm_id: MOCK });
      const s = await chat.createSession();
      model.script({ deltas: ['One ', 'two ', 'three ', 'four'], dropAfter: 2 });
      const seen: Message[] = [];
      const e = await caught(async () => {
        for await (const m of s.ask('count', { stream: true })) seen.push(m);
      });
      expect(seen.length).toBeGreaterThan(0);
      for (const m of seen) expect('One two three four'.startsWith(m.content)).toBe(true);
      expect(e.message).toMatch(/^Chat model mock@OpenAI-API-Compatible: /);
      // The code differs: the local op's own (100, RAGFlow's unhandled exception), the wire's 500
      // remotely (RAGFlow's stream carries `{"code":500,...}` whatever the cause).
      expect(e.code).toBe(inProcess(mode) ? 100 : 500);

      model.script({ deltas: ['One ', 'two ', 'three ', 'four'], dropAfter: 2 });
      const chunks: unknown[] = [];
      const e2 = await caught(async () => {
        for await (const c of await client.chatCompletion(chat.id, { model: 'model', messages: messages('count'), stream: true })) chunks.push(c);
      });
      expect(chunks.length).toBeGreaterThan(0);
      expect(e2.message).toBe(e.message);
      expect(e2.code).toBe(inProcess(mode) ? 100 : 500);
    });

    withModel('breaking out of a stream stops the model', async ({ client }) => {
      const chat = await client.createChat({ name: 'c', llm_id: MOCK });
      const s = await chat.createSession();
      model.script({ deltas: Array.from({ length: 40 }, (_, i) => `w${i} `), delayMs: 25 });
      let n = 0;
      for await (const m of s.ask('talk', { stream: true })) {
        expect(m.final).toBe(false);
        if (++n === 2) break;
      }
      await model.requests[0]!.closed;
      expect(model.requests[0]!.clientClosed).toBe(true);

      model.script({ deltas: Array.from({ length: 40 }, (_, i) => `w${i} `), delayMs: 25 });
      for await (const c of await client.chatCompletion(chat.id, { model: 'model', messages: messages('talk'), stream: true })) {
        expect(c).toMatchObject({ object: 'chat.completion.chunk' });
        break;
      }
      await model.requests[1]!.closed;
      expect(model.requests[1]!.clientClosed).toBe(true);
      // The session is still usable.
      model.script({ text: 'Done.' });
      expect((await s.ask('again')).content).toBe('Done.');
    });

    withModel('an AbortSignal stops the answer with an ApiError (code 100)', async ({ client, mode }) => {
      const chat = await client.createChat({ name: 'c', llm_id: MOCK });
      const s = await chat.createSession();
      model.script({ deltas: Array.from({ length: 40 }, (_, i) => `w${i} `), delayMs: 25 });
      const ac = new AbortController();
      const seen: string[] = [];
      const e = await caught(async () => {
        for await (const m of s.ask('talk', { stream: true, signal: ac.signal })) {
          seen.push(m.content);
          ac.abort();
        }
      });
      expect(seen).toHaveLength(1);
      expect(e.code).toBe(100);
      // The message differs: locally the model reports the abort, remotely the request does.
      expect(e.message).toMatch(inProcess(mode) ? /^Chat model mock@OpenAI-API-Compatible: .*aborted/ : /^The request was aborted: POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/chats\/[0-9a-f]{32}\/completions$/);
      await model.requests[0]!.closed;
      expect(model.requests[0]!.clientClosed).toBe(true);
    });
  });
});

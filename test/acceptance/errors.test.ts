/**
 * Bad inputs: each must fail with the same `ApiError` code and message in both modes (the
 * operation layer decides, whichever way the call came in). Then the few inputs where the modes
 * legitimately differ, pinned so that a change on either side is noticed.
 */
import { describe, expect, test, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Chat, Client, DataSet, Document, Memory, Session } from '../../src/index.js';
import { MODES, openClient, failure, enc, NOT_AN_ID, EMBD, LLM, type Opened, inProcess } from './modes.js';

interface World {
  client: Client;
  ds: DataSet;
  doc: Document;
  empty: Document;
  chat: Chat;
  session: Session;
  memory: Memory;
}

async function world(client: Client): Promise<World> {
  const ds = await client.createDataset({ name: 'kb' });
  const [doc, empty] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('The moon pulls the tides.') }, { display_name: 'e.txt', blob: new Uint8Array(0) }]);
  const chat = await client.createChat({ name: 'c' });
  const session = await chat.createSession();
  const memory = await client.createMemory({ name: 'm', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
  return { client, ds, doc: doc!, empty: empty!, chat, session, memory };
}

/** Another well-formed id (UUID1) that names nothing. */
const other = (id: string) => (id[0] === 'f' ? 'e' : 'f') + id.slice(1);

type Case = [label: string, call: (w: World) => Promise<unknown>, code: number, message: string | ((w: World) => string)];

const CASES: Case[] = [
  // datasets
  ['createDataset: empty name', (w) => w.client.createDataset({ name: '' }), 101, 'Field: <name> - Message: <String should have at least 1 character> - Value: <>'],
  ['createDataset: unknown chunk_method', (w) => w.client.createDataset({ name: 'x', chunk_method: 'bogus' as never }), 101, "Field: <chunk_method> - Message: <Input should be 'naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag' or 'resume'> - Value: <bogus>"],
  ['createDataset: unknown embedding model', (w) => w.client.createDataset({ name: 'x', embedding_model: 'nope@X' }), 102, 'Unsupported model: <nope@X>'],
  ['listDatasets: bad orderby', (w) => w.client.listDatasets({ orderby: 'bogus' as never }), 101, "Field: <orderby> - Message: <Input should be 'create_time' or 'update_time'> - Value: <bogus>"],
  ['listDatasets: extra key', (w) => w.client.listDatasets({ foo: 1 } as never), 101, 'Field: <foo> - Message: <Extra inputs are not permitted> - Value: <1>'],
  ['DataSet#update: empty name', (w) => w.ds.update({ name: '' }), 101, 'Field: <name> - Message: <String should have at least 1 character> - Value: <>'],
  ['deleteDatasets: duplicate ids', (w) => w.client.deleteDatasets({ ids: [other(w.ds.id), other(w.ds.id)] }), 101, (w) => `Field: <ids> - Message: <Duplicate ids: '${other(w.ds.id)}'> - Value: <['${other(w.ds.id)}', '${other(w.ds.id)}']>`],
  ['deleteDatasets: an unknown id', (w) => w.client.deleteDatasets({ ids: [other(w.ds.id)] }), 102, (w) => `User '${w.ds.tenant_id}' lacks permission for datasets: '${other(w.ds.id)}'`],
  // documents
  ['uploadDocuments: a name that is not a string', (w) => w.ds.uploadDocuments([{ display_name: 5 as never, blob: enc('x') }]), 101, 'No file selected!'],
  ['Document#update: empty chunk_method', (w) => w.doc.update({ chunk_method: '' as never }), 102, '`chunk_method` (empty string) is not valid'],
  ['Document#update: meta_fields not a dict', (w) => w.doc.update({ meta_fields: 'x' as never }), 102, 'Field: <meta_fields> - Message: <Input should be a valid dictionary> - Value: <x>'],
  // The op reads a page as RAGFlow's int() does, so the local call and the server's cast agree.
  ['DataSet#listDocuments: page not a number', (w) => w.ds.listDocuments({ page: 'x' as never }), 100, 'ValueError("invalid literal for int() with base 10: \'x\'")'],
  ['Document#download: empty file', (w) => w.empty.download(), 102, 'This file is empty.'],
  ['deleteDocuments: neither ids nor delete_all', (w) => w.ds.deleteDocuments({}), 102, (w) => `should either provide doc ids or set delete_all(true), dataset: ${w.ds.id}. `],
  // parsing and chunks
  ['asyncParseDocuments: unknown id', (w) => w.ds.asyncParseDocuments(['nope']), 102, "Documents not found: ['nope']"],
  ['asyncParseDocuments: ids printed as Python repr', (w) => w.ds.asyncParseDocuments(["it's", 'a\nb', 'q"uo\'te']), 102, `Documents not found: ["it's", 'a\\nb', 'q"uo\\'te']`],
  ['addChunk: questions not a list', (w) => w.doc.addChunk({ content: 'x', questions: 'q' as never }), 102, '`questions` is required to be a list'],
  // retrieval
  ['retrieve: another tenant\'s dataset', (w) => w.client.retrieve({ question: 'q', dataset_ids: [NOT_AN_ID] }), 102, `You don't own the dataset ${NOT_AN_ID}.`],
  ['retrieve: weight out of range', (w) => w.client.retrieve({ question: 'q', dataset_ids: [w.ds.id], vector_similarity_weight: -1 }), 101, '`vector_similarity_weight` should be in [0, 1]'],
  ['retrieve: threshold above 1', (w) => w.client.retrieve({ question: 'q', dataset_ids: [w.ds.id], similarity_threshold: 3 }), 101, '`similarity_threshold` should be in [0, 1]'],
  ['retrieve: threshold below 0', (w) => w.client.retrieveWithTotals({ question: 'q', dataset_ids: [w.ds.id], similarity_threshold: -0.1 }), 101, '`similarity_threshold` should be in [0, 1]'],
  // chats, sessions, answers
  ['createChat: unknown llm_id', (w) => w.client.createChat({ name: 'x', llm_id: 'nope@X' }), 102, "`llm_id` nope@X doesn't exist"],
  ['Chat#update: not a dict', (w) => w.chat.update('x' as never), -1, '`update_message` must be a dict'],
  ['Session#ask: unknown llm_id', (w) => w.session.ask('q', { llm_id: 'nope@X' }), 102, 'Cannot use specified model nope@X.'],
  ['chatCompletion: bad extra_body', (w) => w.client.chatCompletion(w.chat.id, { model: 'model', messages: [{ role: 'user', content: 'q' }], extra_body: 'x' as never }), 102, 'extra_body must be an object.'],
  // memories
  ['createMemory: unknown type', (w) => w.client.createMemory({ name: 'x', memory_type: ['raw', 'something' as never], embd_id: EMBD, llm_id: LLM }), 101, "Memory type '{'something'}' is not supported."],
  ['createMemory: unknown embedding model', (w) => w.client.createMemory({ name: 'x', memory_type: ['raw'], embd_id: 'nope@X', llm_id: LLM }), 101, 'Tenant Model with name nope@X and type embedding not found'],
  ['Memory#update: temperature out of range', (w) => w.memory.update({ temperature: 1.5 }), 101, 'Temperature should be in range [0, 1].'],
  ['Memory#update: unknown permission', (w) => w.memory.update({ permissions: 'all' as never }), 101, "Unknown permission 'all'."],
  ['addMessage: unknown memory', (w) => w.client.addMessage({ memory_id: [NOT_AN_ID], agent_id: 'a', session_id: 's', user_input: 'q', agent_response: 'r' }), 500, 'Some messages failed to add. Detail:Memory not found.'],
  ['getRecentMessages: no memory', (w) => w.client.getRecentMessages({ memory_id: [] }), 101, 'memory_ids is required.'],
  ['searchMessage: threshold above 1', (w) => w.client.searchMessage({ query: 'q', memory_id: [w.memory.id], similarity_threshold: 1.5 }), 101, '`similarity_threshold` should be in [0, 1]'],
  ['getMessageContent: unknown message', (w) => w.memory.getMessageContent(424242), 404, (w) => `Message '424242' in memory '${w.memory.id}' not found.`],
];

describe.each(MODES)('%s mode', (mode) => {
  let dir: string;
  let opened: Opened;
  let w: World;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `ragloom-acc-err-${mode}-`));
    opened = await openClient(mode, join(dir, 'kb.db'));
    w = await world(opened.client);
  });
  afterAll(async () => {
    await opened?.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('bad inputs: the same ApiError in both modes', () => {
    test.for(CASES)('%s', async ([, call, code, message]) => {
      if (code === -1) {
        // Checked by the resource object before any call (a TypeError, as in the RAGFlow SDK).
        await expect(call(w)).rejects.toThrow(new TypeError(message as string));
        return;
      }
      expect(await failure(call(w))).toEqual([code, typeof message === 'function' ? message(w) : message]);
    });

    test('nothing was written by the failures', async () => {
      expect((await w.client.listDatasets()).map((d) => d.name)).toEqual(['kb']);
      expect((await w.ds.listDocuments()).length).toBe(2);
      expect((await w.client.listChats()).map((c) => c.name)).toEqual(['c']);
      expect((await w.client.listMemory()).total_count).toBe(1);
    });
  });

  describe('where the modes legitimately differ', () => {

    test('an empty id that a URL path must carry: the remote Client refuses it before sending', async () => {
      // A path cannot hold an empty segment; locally the op answers for the empty id itself.
      expect(await failure(w.client.getChat(''))).toEqual(inProcess(mode) ? [109, 'No authorization.'] : [101, '`chat_id` is required.']);
      expect(await failure(w.client.deleteMemory(''))).toEqual(inProcess(mode) ? [404, "Memory '' not found."] : [101, '`memory_id` is required.']);
    });

    test('Memory#usage() is a ragloom addition (GET /memories/{id}/usage)', async () => {
      expect(await w.memory.usage()).toEqual({ used: 0, budget: 5242880, messages: 0 });
    });
  });
});

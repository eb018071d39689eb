/**
 * Fuzzed inputs (issue 17 item 3): every `Api` operation, called with random and hostile values.
 *
 * For each operation a valid request is the starting point; one to three of its fields (or the
 * whole request) are replaced by hostile values — wrong types, '' and 1–10 MB strings, NaN,
 * ±Infinity, -0, 1e308, negative numbers and floats, BigInt, Dates, Maps, functions, arrays and
 * objects nested 1,000–5,000 deep, unicode edge cases (lone surrogates, NUL, RTL overrides,
 * combining marks, ZWJ emoji), own `__proto__` / `constructor` / `prototype` keys, path traversal
 * (`../../x`, `/etc/passwd`, `C:\x`, names with NUL) in upload names, ids of the right shape that
 * name nothing or name another kind of record, duplicate ids and unknown keys — or by values
 * fast-check makes up. Some cases run as a second user (another tenant) to go through the
 * permission paths.
 *
 * The property, per case:
 *  - the call succeeds, or rejects with an `ApiError` whose `code` is one of RAGFlow's (RetCode,
 *    not 0) and whose message is non-empty and shows no internals (SQLite errors, JS engine
 *    messages such as "Cannot read properties", "is not a function", `undefined`, stack frames)
 *    and did not come from an exception nobody guarded (the Api's catch-all wrapping a native
 *    TypeError / RangeError / SqliteError…);
 *  - after a rejected call the database file is byte-for-byte what it was (below);
 *  - `Object.prototype` / `Array.prototype` gain no keys and `({}).polluted` stays undefined;
 *  - nothing is written outside the database's directory (uploads keep their bytes in the
 *    database; the database lives two levels below the test's root, which is also the process's
 *    working directory's grandparent, so `../../x` would land in the root and be seen);
 *  - no call hangs (a per-call time limit) and the process does not crash;
 *  - what a call accepted can be used: after a success, the operation that reads it back (a chat's
 *    settings in an answer, a chunk or a document's metadata in retrieval, a canvas in a run, a
 *    memory in an add) succeeds or fails with a well-formed ApiError too.
 *
 * "Byte-for-byte unchanged". The database is in WAL mode, so the main file alone is not the
 * database while a connection is open: committed pages may sit in `-wal`. Each case therefore
 * starts from a pristine file (copied from a fixture that was closed, i.e. fully checkpointed), and
 * after a rejected call the test runs `PRAGMA wal_checkpoint(TRUNCATE)` on the Api's own connection
 * — what closing does, minus the close — which moves every committed page into the main file and
 * empties the WAL; then the main file's bytes must equal the pristine bytes exactly. (Opening an
 * Api rewrites the tenant row with the same values; the checkpoint writes those pages back
 * unchanged, so an idle open is byte-identical — the test asserts that first.) After a successful
 * call the copy is discarded (success may write), as it is after a rejection the reference says
 * writes first (below). Reopening costs an embedding-model load, so a case that changed nothing
 * keeps the open Api for the next case.
 *
 * Rejections RAGFlow's reference defines as writing first (and which are therefore not required to
 * leave the file unchanged): `documents.parse` with some unknown ids (§4: the valid ones are queued,
 * then 102 `Documents not found: [...]`), and `chunks.delete` with some unknown ids (§5: the found
 * ones are deleted, then 102 `rm_chunk deleted chunks n, expect m`, n > 0).
 *
 * RAGLOOM_FUZZ_SEED (default 1717) and RAGLOOM_FUZZ_RUNS (runs per operation, default 40) change
 * the seed and the size; the number of fuzz cases run is printed at the end. RAGLOOM_FUZZ_TRACE=1
 * prints each case before its call (to find a call that blocks the event loop).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Api, ApiError, RetCode, type OpName } from '../../src/api/index.js';
import { ROUTES } from '../../src/api/routes.js';
import type { Ctx } from '../../src/core/index.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SEED = Number(process.env.RAGLOOM_FUZZ_SEED ?? 1717);
/** RAGLOOM_FUZZ_TRACE=1: each case to stderr before its call (finds a call that blocks the event loop). */
const TRACE = !!process.env.RAGLOOM_FUZZ_TRACE;
const RUNS = Number(process.env.RAGLOOM_FUZZ_RUNS ?? 40);
/** One call's limit: a 10 MB string through tokenising and embedding takes a few seconds. */
const CALL_LIMIT_MS = 30_000;

const EMBD = 'ragloom-static-en-256@Builtin';
const LLM = 'ragloom-extractive@Builtin';
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

// ---------------------------------------------------------------- fixture

/** Ids of the fixture's records (the valid requests name them). */
interface Fixture {
  ds: string; ds2: string; doc: string; doc2: string; chunk: string; chunk2: string;
  chat: string; chat2: string; session: string; session2: string;
  mem: string; mem2: string; msg: number; msg2: number;
  agent: string; agent2: string; agentSession: string; agentSession2: string; version: string;
  tenant: string; user: string; other: Ctx; otherKey: string; otherEmail: string;
  log: string; search: string;
}

/** A small runnable canvas: Begin → Message (no model needed). */
function agentDsl(prologue = 'Hello there.'): Json {
  return {
    components: {
      begin: {
        obj: { component_name: 'Begin', params: { mode: 'conversational', prologue, inputs: { name: { type: 'line', name: 'Name', optional: true } } } },
        downstream: ['Message:Hi'], upstream: [],
      },
      'Message:Hi': { obj: { component_name: 'Message', params: { content: ['Hi {sys.query}'] } }, downstream: [], upstream: ['begin'] },
    },
    globals: { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [] },
    history: [], path: [], retrieval: [], memory: [], graph: { nodes: [], edges: [] },
  };
}

async function buildFixture(path: string): Promise<Fixture> {
  const api = new Api({ path });
  const c = (op: OpName, p: Json = {}, ctx?: Ctx) => api.call(op, p, ctx) as Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    const ds = await c('datasets.create', { name: 'kb' });
    const ds2 = await c('datasets.create', { name: 'spare' });
    const docs = await c('documents.upload', {
      dataset_id: ds.id,
      files: [
        { display_name: 'tides.md', blob: enc('# Tides\n\nThe gravitational pull of the moon raises the ocean tides twice a day. Spring tides happen at new and full moon.') },
        { display_name: 'bread.txt', blob: enc('Knead the dough for ten minutes, then let it rise for an hour in a warm place.') },
      ],
    });
    const docIds = docs.map((d: Json) => d.id as string);
    await c('documents.parse', { dataset_id: ds.id, document_ids: docIds });
    for (let i = 0; ; i++) {
      const l = await c('documents.list', { dataset_id: ds.id });
      if (l.docs.every((d: Json) => d.run === 'DONE')) break;
      if (i > 400 || l.docs.some((d: Json) => d.run === 'FAIL')) throw new Error(`fixture parse: ${JSON.stringify(l.docs.map((d: Json) => [d.run, d.progress_msg]))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const chunk = (await c('chunks.list', { dataset_id: ds.id, document_id: docIds[0] })).chunks[0].id as string;
    // With an image (GET /documents/images/{ds}-{chunk}) and a tag (the tag routes).
    const chunk2 = (await c('chunks.add', {
      dataset_id: ds.id, document_id: docIds[0], content: 'A spare chunk about harbours.', tag_kwd: ['sea'],
      image_base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    })).id as string;
    const chat = await c('chats.create', { name: 'helper', dataset_ids: [ds.id] });
    const chat2 = await c('chats.create', { name: 'spare chat' });
    const session = await c('sessions.create', { chat_id: chat.id, name: 'first' });
    const session2 = await c('sessions.create', { chat_id: chat.id, name: 'second' });
    const mem = await c('memories.create', { name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    const mem2 = await c('memories.create', { name: 'spare notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    await c('messages.add', { memory_id: [mem.id], agent_id: 'a1', session_id: 's1', user_input: 'When are spring tides?', agent_response: 'At new and full moon.' });
    await c('messages.add', { memory_id: [mem.id], agent_id: 'a1', session_id: 's2', user_input: 'How long to knead?', agent_response: 'Ten minutes.' });
    const msgs = (await c('memories.messages', { memory_id: mem.id })).messages.message_list as Json[];
    const agent = await c('agents.create', { title: 'Greeter', dsl: agentDsl(), description: 'says hi' });
    const agent2 = await c('agents.create', { title: 'Spare', dsl: agentDsl('Spare.') });
    const agentSession = await c('agentSessions.create', { agent_id: agent.id });
    const agentSession2 = await c('agentSessions.create', { agent_id: agent.id, name: 'two' });
    const version = (await c('agents.versions', { agent_id: agent.id }))[0].id as string;
    const log = (await c('datasets.ingestionLogs', { dataset_id: ds.id, log_type: 'file' })).logs[0].id as string;
    const search = (await c('searches.create', { name: 'finder', search_config: { kb_ids: [ds.id] } })).search_id as string;
    await c('documents.updateMetadata', { dataset_id: ds.id, selector: { document_ids: [docIds[0]] }, updates: [{ key: 'author', value: 'x' }] });
    await c('auth.bootstrap', {});
    const u = await c('users.create', { email: 'other@example.com', nickname: 'other' });
    return {
      ds: ds.id, ds2: ds2.id, doc: docIds[0], doc2: docIds[1], chunk, chunk2,
      chat: chat.id, chat2: chat2.id, session: session.id, session2: session2.id,
      mem: mem.id, mem2: mem2.id, msg: msgs[0]!.message_id, msg2: msgs[1]!.message_id,
      agent: agent.id, agent2: agent2.id, agentSession: agentSession.id, agentSession2: agentSession2.id, version,
      tenant: api.engine.local.tenantId, user: api.engine.local.userId,
      other: { tenantId: u.tenant_id, userId: u.id }, otherKey: u.api_key, otherEmail: 'other@example.com', log, search,
    };
  } finally {
    await api.close();
  }
}

// ---------------------------------------------------------------- valid requests

/** A valid request per operation; the mutations start from it. TypeScript keeps it complete. */
const VALID: { readonly [K in OpName]: (f: Fixture) => Json } = {
  'datasets.create': () => ({ name: 'fresh', description: 'd', permission: 'me', chunk_method: 'naive', parser_config: { chunk_token_num: 256, raptor: { use_raptor: false } } }),
  'datasets.list': (f) => ({ page: 1, page_size: 10, orderby: 'create_time', desc: true, id: f.ds, name: 'kb' }),
  'datasets.update': (f) => ({ dataset_id: f.ds, name: 'kb renamed', description: 'x', pagerank: 5, parser_config: { chunk_token_num: 128 } }),
  'datasets.delete': (f) => ({ ids: [f.ds2] }),
  'documents.upload': (f) => ({ dataset_id: f.ds, files: [{ display_name: 'new.txt', blob: enc('hello world') }, { display_name: 'two.md', blob: enc('# two') }] }),
  'documents.list': (f) => ({ dataset_id: f.ds, page: 1, page_size: 10, orderby: 'create_time', desc: true, keywords: 'tid', run: ['DONE'], suffix: ['md'] }),
  'documents.update': (f) => ({ dataset_id: f.ds, document_id: f.doc, name: 'tides2.md', meta_fields: { author: 'x', year: 2024 }, enabled: 1 }),
  'documents.delete': (f) => ({ dataset_id: f.ds, ids: [f.doc2] }),
  'documents.download': (f) => ({ dataset_id: f.ds, document_id: f.doc }),
  'documents.replaceContent': (f) => ({ dataset_id: f.ds, document_id: f.doc2, blob: enc('Knead the dough for twelve minutes, then let it rest.') }),
  'documents.parse': (f) => ({ dataset_id: f.ds, document_ids: [f.doc2] }),
  'documents.stopParse': (f) => ({ dataset_id: f.ds, document_ids: [f.doc] }),
  'chunks.add': (f) => ({ dataset_id: f.ds, document_id: f.doc, content: 'Neap tides come at the quarter moons.', important_keywords: ['neap'], questions: ['When are neap tides?'], tag_kwd: ['sea'] }),
  'chunks.list': (f) => ({ dataset_id: f.ds, document_id: f.doc, page: 1, page_size: 10, keywords: 'moon' }),
  'chunks.update': (f) => ({ dataset_id: f.ds, document_id: f.doc, chunk_id: f.chunk, content: 'Tides follow the moon.', important_keywords: ['moon'], questions: ['Why tides?'], available: true }),
  'chunks.delete': (f) => ({ dataset_id: f.ds, document_id: f.doc, chunk_ids: [f.chunk2] }),
  'retrieval': (f) => ({
    dataset_ids: [f.ds], document_ids: [f.doc], question: 'moon tides', page: 1, page_size: 5, similarity_threshold: 0.1,
    vector_similarity_weight: 0.3, top_k: 64, highlight: true, keyword: false,
    metadata_condition: { logic: 'and', conditions: [{ name: 'author', comparison_operator: 'is', value: 'x' }] },
  }),
  'chats.create': (f) => ({ name: 'new chat', dataset_ids: [f.ds], llm_id: LLM, similarity_threshold: 0.2, top_n: 4, prompt_config: { prologue: 'Hi.', quote: false }, llm_setting: { temperature: 0.1 } }),
  'chats.list': (f) => ({ page: 1, page_size: 10, orderby: 'create_time', desc: true, name: 'helper', id: f.chat, keywords: 'hel' }),
  'chats.get': (f) => ({ chat_id: f.chat }),
  'chats.update': (f) => ({ chat_id: f.chat, name: 'helper two', prompt_config: { prologue: 'Hello.' }, llm_setting: { top_p: 0.5 }, top_n: 3 }),
  'chats.replace': (f) => ({ chat_id: f.chat, name: 'helper three', dataset_ids: [f.ds], prompt_config: { prologue: 'Hey.' } }),
  'chats.delete': (f) => ({ ids: [f.chat2] }),
  'sessions.create': (f) => ({ chat_id: f.chat, name: 'third', user_id: 'u1' }),
  'sessions.list': (f) => ({ chat_id: f.chat, page: 1, page_size: 10, orderby: 'create_time', desc: true, name: 'first' }),
  'sessions.get': (f) => ({ chat_id: f.chat, session_id: f.session }),
  'sessions.update': (f) => ({ chat_id: f.chat, session_id: f.session, name: 'renamed' }),
  'sessions.delete': (f) => ({ chat_id: f.chat, ids: [f.session2] }),
  'chats.completion': (f) => ({ chat_id: f.chat, session_id: f.session, question: 'When are spring tides?', stream: false }),
  'openai.completion': (f) => ({ chat_id: f.chat, model: 'model', messages: [{ role: 'user', content: 'When are spring tides?' }], stream: false, extra_body: { reference: true } }),
  'agents.completion': (f) => ({ agent_id: f.agent, session_id: f.agentSession, query: 'there', stream: false, inputs: { name: { value: 'x' } } }),
  'memories.create': () => ({ name: 'new notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM }),
  'memories.update': (f) => ({ memory_id: f.mem, name: 'notes two', permissions: 'team', memory_size: 1_000_000, temperature: 0.3, description: 'd' }),
  'memories.list': () => ({ page: 1, page_size: 10, keywords: 'not', memory_type: ['raw'] }),
  'memories.config': (f) => ({ memory_id: f.mem }),
  'memories.delete': (f) => ({ memory_id: f.mem2 }),
  'memories.usage': (f) => ({ memory_id: f.mem }),
  'memories.messages': (f) => ({ memory_id: f.mem, page: 1, page_size: 10, agent_id: 'a1', keywords: 's' }),
  'messages.add': (f) => ({ memory_id: [f.mem], agent_id: 'a1', session_id: 's3', user_input: 'What raises tides?', agent_response: 'The moon.', user_id: 'u1' }),
  'messages.forget': (f) => ({ memory_id: f.mem, message_id: f.msg }),
  'messages.status': (f) => ({ memory_id: f.mem, message_id: f.msg, status: false }),
  'messages.content': (f) => ({ memory_id: f.mem, message_id: f.msg }),
  'messages.recent': (f) => ({ memory_id: [f.mem], agent_id: 'a1', session_id: 's1', limit: 5 }),
  'messages.search': (f) => ({ memory_id: [f.mem], query: 'spring tides', similarity_threshold: 0.1, keywords_similarity_weight: 0.5, top_n: 3, agent_id: 'a1' }),
  'agents.create': () => ({ title: 'Fresh', dsl: agentDsl('Fresh.'), description: 'new', canvas_type: 'chatbot', tags: ['a', 'b'] }),
  'agents.list': () => ({ page: 1, page_size: 10, orderby: 'update_time', desc: true, keywords: 'gre', tags: 'a' }),
  'agents.get': (f) => ({ agent_id: f.agent }),
  'agents.update': (f) => ({ agent_id: f.agent, title: 'Greeter two', dsl: agentDsl('Changed.'), description: 'x', permission: 'team' }),
  'agents.delete': (f) => ({ agent_id: f.agent2 }),
  'agents.versions': (f) => ({ agent_id: f.agent }),
  'agents.version': (f) => ({ agent_id: f.agent, version_id: f.version }),
  'agentSessions.create': (f) => ({ agent_id: f.agent, name: 'three', user_id: 'u1', inputs: { name: { value: 'n' } } }),
  'agentSessions.list': (f) => ({ agent_id: f.agent, page: 1, page_size: 10, orderby: 'update_time', desc: true, id: f.agentSession, from_date: '2020-01-01' }),
  'agentSessions.get': (f) => ({ agent_id: f.agent, session_id: f.agentSession }),
  'agentSessions.delete': (f) => ({ agent_id: f.agent, ids: [f.agentSession2] }),
  'datasets.get': (f) => ({ dataset_id: f.ds }),
  'datasets.aggregateTags': (f) => ({ dataset_ids: `${f.ds},${f.ds2}` }),
  'datasets.flattenedMetadata': (f) => ({ dataset_ids: f.ds }),
  'datasets.search': (f) => ({ dataset_ids: [f.ds], question: ASK, page: 1, size: 5, top_k: 64, similarity_threshold: 0.1, doc_ids: [f.doc], meta_data_filter: { method: 'manual', manual: [{ key: 'author', op: '=', value: 'x' }] } }),
  'datasets.ingestionSummary': (f) => ({ dataset_id: f.ds }),
  'datasets.ingestionLogs': (f) => ({ dataset_id: f.ds, log_type: 'file', page: 1, page_size: 5, orderby: 'create_time', desc: true, keywords: 'tid', operation_status: ['3'] }),
  'datasets.ingestionLog': (f) => ({ dataset_id: f.ds, log_id: f.log }),
  'datasets.tags': (f) => ({ dataset_id: f.ds }),
  'datasets.deleteTags': (f) => ({ dataset_id: f.ds, tags: ['sea'] }),
  'datasets.renameTag': (f) => ({ dataset_id: f.ds, from_tag: 'sea', to_tag: 'ocean' }),
  'datasets.graph': (f) => ({ dataset_id: f.ds }),
  'datasets.runIndex': (f) => ({ dataset_id: f.ds, type: 'graph' }),
  'datasets.traceIndex': (f) => ({ dataset_id: f.ds, type: 'raptor' }),
  'datasets.deleteIndex': (f) => ({ dataset_id: f.ds, index_type: 'mindmap' }),
  'datasets.runEmbedding': (f) => ({ dataset_id: f.ds }),
  'datasets.checkEmbedding': (f) => ({ dataset_id: f.ds, embd_id: EMBD, check_num: 2 }),
  'datasets.getAutoMetadata': (f) => ({ dataset_id: f.ds }),
  'datasets.updateAutoMetadata': (f) => ({ dataset_id: f.ds, metadata: [{ key: 'author', type: 'string', description: 'who', enum: null }], built_in_metadata: [] }),
  'documents.startParsing': (f) => ({ dataset_id: f.ds, document_ids: [f.doc2] }),
  'documents.stopParsing': (f) => ({ dataset_id: f.ds, document_ids: [f.doc] }),
  'documents.updateMetadata': (f) => ({ dataset_id: f.ds, selector: { document_ids: [f.doc], metadata_condition: { conditions: [{ name: 'author', comparison_operator: 'is', value: 'x' }] } }, updates: [{ key: 'year', value: 2024 }], deletes: [{ key: 'author' }] }),
  'documents.metadataSummary': (f) => ({ dataset_id: f.ds, doc_ids: `${f.doc},${f.doc2}` }),
  'documents.updateMetadataConfig': (f) => ({ dataset_id: f.ds, document_id: f.doc, metadata: { author: { type: 'string' } } }),
  'documents.batchUpdateStatus': (f) => ({ dataset_id: f.ds, doc_ids: [f.doc], status: '0' }),
  'documents.ingest': (f) => ({ doc_ids: [f.doc2], run: '1' }),
  'documents.thumbnails': (f) => ({ doc_ids: [f.doc, f.doc2] }),
  'documents.image': (f) => ({ image_id: `${f.ds}-${f.chunk2}` }),
  'documents.artifact': () => ({ filename: 'plot.png' }),
  'documents.preview': (f) => ({ document_id: f.doc }),
  'documents.downloadById': (f) => ({ document_id: f.doc }),
  'chunks.get': (f) => ({ dataset_id: f.ds, document_id: f.doc, chunk_id: f.chunk }),
  'chunks.switch': (f) => ({ dataset_id: f.ds, document_id: f.doc, chunk_ids: [f.chunk], available_int: 0 }),
  'dify.retrieval': (f) => ({ knowledge_id: f.ds, query: ASK, retrieval_setting: { top_k: 5, score_threshold: 0.1 }, metadata_condition: { conditions: [{ name: 'author', comparison_operator: 'is', value: 'x' }] } }),
  'chats.deleteOne': (f) => ({ chat_id: f.chat2 }),
  'sessions.deleteMessage': (f) => ({ chat_id: f.chat, session_id: f.session, message_id: 'no-such-message' }),
  'sessions.feedback': (f) => ({ chat_id: f.chat, session_id: f.session, message_id: 'no-such-message', thumbup: false, feedback: 'meh' }),
  'chats.recommendation': () => ({ question: ASK }),
  'searches.create': (f) => ({ name: 'another', description: 'd', search_config: { kb_ids: [f.ds], similarity_threshold: 0.1 } }),
  'searches.list': () => ({ page: 1, page_size: 5, keywords: 'fin', orderby: 'create_time', desc: true }),
  'searches.get': (f) => ({ search_id: f.search }),
  'searches.update': (f) => ({ search_id: f.search, name: 'finder two', search_config: { top_k: 64 } }),
  'searches.delete': (f) => ({ search_id: f.search }),
  'searches.completion': (f) => ({ search_id: f.search, question: ASK }),
  'searches.ask': (f) => ({ question: ASK, kb_ids: [f.ds] }),
  'searches.retrievalTest': (f) => ({ kb_id: f.ds, question: ASK, page: 1, size: 5, top_k: 64 }),
  'system.ping': () => ({}),
  'system.version': () => ({}),
  'system.status': () => ({}),
  'system.config': () => ({}),
  'system.healthz': () => ({}),
  'system.tokens': () => ({}),
  'system.newToken': () => ({ name: 'x' }),
  'system.deleteToken': (f) => ({ token: f.otherKey }),
  'system.stats': () => ({ from_date: '2020-01-01', to_date: '2099-01-01' }),
  'tasks.cancel': (f) => ({ task_id: f.log, action: 'stop' }),
  'agentSessions.deleteOne': (f) => ({ agent_id: f.agent, session_id: f.agentSession2 }),
  'agents.tags': () => ({ canvas_category: 'agent_canvas' }),
  'agents.updateTags': (f) => ({ agent_id: f.agent, tags: ['x', 'y'] }),
  'agents.logs': (f) => ({ agent_id: f.agent, message_id: 'm1' }),
  'agents.reset': (f) => ({ agent_id: f.agent }),
  'agents.rerun': (f) => ({ id: f.log, dsl: {}, component_id: 'File' }),
  'agents.webhookLogs': (f) => ({ agent_id: f.agent, since_ts: '1700000000' }),
  'plugins.tools': () => ({}),
  'langfuse.get': () => ({}),
  'langfuse.delete': () => ({}),
  'users.me': () => ({}),
  'users.create': () => ({ email: 'new@example.com', nickname: 'newbie', password: 'secret' }),
  'tenants.members.add': (f) => ({ tenant_id: f.tenant, user_id: f.other.userId, role: 'normal' }),
  'auth.verify': (f) => ({ api_key: f.otherKey }),
  'auth.bootstrap': () => ({ new_admin_key: false }),
};

/**
 * Nested places worth hitting besides the top-level keys (dotted paths; a number is an index).
 * Top-level keys of the valid request are always candidates.
 */
const NESTED: Partial<Record<OpName, string[]>> = {
  'datasets.create': ['parser_config.chunk_token_num', 'parser_config.raptor', 'parser_config.raptor.use_raptor', 'parser_config.ext', 'parser_config.pages', 'parser_config.__proto__', 'avatar', 'embedding_model', 'parse_type', 'pipeline_id'],
  'datasets.update': ['parser_config.chunk_token_num', 'parser_config.ext', 'parser_config.graphrag', 'parser_config.table_column_roles', 'embedding_model', 'chunk_method', 'language'],
  'datasets.delete': ['ids.0', 'ids.1', 'delete_all'],
  'documents.upload': ['files.0', 'files.0.display_name', 'files.0.blob', 'files.1.display_name', 'files.2'],
  'documents.list': ['id', 'ids', 'name', 'create_time_from', 'create_time_to', 'types', 'run.0', 'suffix.0'],
  'documents.update': ['meta_fields.author', 'meta_fields.__proto__', 'chunk_method', 'parser_config', 'parser_config.ext', 'progress', 'chunk_count', 'token_count', 'display_name'],
  'documents.delete': ['ids.0', 'ids.1', 'delete_all'],
  'documents.replaceContent': ['blob'],
  'documents.parse': ['document_ids.0', 'document_ids.1'],
  'documents.stopParse': ['document_ids.0', 'document_ids.1'],
  'chunks.add': ['important_keywords.0', 'questions.0', 'tag_kwd.0', 'image_base64'],
  'chunks.list': ['id'],
  'chunks.update': ['important_keywords.0', 'questions.0', 'positions', 'positions.0', 'tag_kwd'],
  'chunks.delete': ['chunk_ids.0', 'chunk_ids.1', 'delete_all'],
  'retrieval': ['dataset_ids.0', 'dataset_ids.1', 'document_ids.0', 'metadata_condition.conditions', 'metadata_condition.conditions.0', 'metadata_condition.conditions.0.name', 'metadata_condition.conditions.0.comparison_operator', 'metadata_condition.conditions.0.value', 'metadata_condition.logic', 'rerank_id', 'cross_languages', 'use_kg', 'toc_enhance'],
  'chats.create': ['dataset_ids.0', 'prompt_config.parameters', 'prompt_config.system', 'prompt_config.__proto__', 'rerank_id', 'vector_similarity_weight', 'top_k', 'icon', 'meta_data_filter', 'tenant_id'],
  'chats.update': ['prompt_config.parameters', 'prompt_config.empty_response', 'llm_setting.__proto__', 'dataset_ids', 'llm_id', 'rerank_id', 'meta_data_filter', 'similarity_threshold'],
  'chats.replace': ['dataset_ids.0', 'prompt_config.parameters', 'llm_setting', 'top_k'],
  'chats.delete': ['ids.0', 'ids.1', 'delete_all'],
  'sessions.list': ['id', 'user_id', 'page', 'page_size'],
  'sessions.update': ['messages', 'reference'],
  'sessions.delete': ['ids.0', 'ids.1', 'delete_all'],
  'chats.completion': ['messages', 'messages.0', 'messages.0.content', 'messages.0.role', 'llm_id', 'doc_ids', 'reference_metadata', 'temperature', 'quote', 'pass_all_history_messages', 'conversation_id', 'knowledge'],
  'openai.completion': ['messages.0', 'messages.0.content', 'messages.0.role', 'messages.1', 'extra_body.reference_metadata', 'extra_body.reference_metadata.fields', 'extra_body.metadata_condition', 'extra_body.metadata_condition.conditions'],
  'agents.completion': ['question', 'inputs.name', 'user_id', 'return_trace', 'release', 'openai-compatible', 'files'],
  'memories.create': ['memory_type.0', 'memory_type.1'],
  'memories.update': ['memory_type', 'embd_id', 'llm_id', 'forgetting_policy', 'system_prompt', 'user_prompt', 'avatar', 'tenant_llm_id'],
  'memories.list': ['tenant_id', 'owner_ids', 'storage_type', 'memory_type.0'],
  'messages.add': ['memory_id.0', 'memory_id.1'],
  'messages.recent': ['memory_id.0'],
  'messages.search': ['memory_id.0', 'session_id', 'user_id'],
  'agents.create': ['dsl.components', 'dsl.components.begin', 'dsl.components.begin.obj.params', 'dsl.components.Message:Hi.obj.params.content', 'dsl.components.Message:Hi.downstream', 'dsl.globals', 'dsl.__proto__', 'permission', 'canvas_category', 'release', 'avatar'],
  'agents.list': ['owner_ids', 'canvas_category'],
  'agents.update': ['dsl.components', 'dsl.components.begin.obj.params.inputs', 'tags', 'canvas_category', 'release', 'avatar', 'canvas_type'],
  'agentSessions.create': ['inputs.name', 'release', 'name'],
  'agentSessions.list': ['to_date', 'user_id', 'keywords', 'exp_user_id', 'dsl'],
  'agentSessions.delete': ['ids.0', 'ids.1', 'delete_all'],
  'users.create': ['email', 'nickname', 'password'],
  'tenants.members.add': ['role'],
  'auth.bootstrap': ['new_admin_key'],
};

/** Keys no operation knows, including the prototype-polluting ones (always set as own properties). */
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'unknown_key', '', 'dataset_id ', 'ÄØ😀'];

// ---------------------------------------------------------------- hostile values

const cache = new Map<string, unknown>();
const once = <T>(k: string, make: () => T): T => (cache.has(k) ? (cache.get(k) as T) : (cache.set(k, make()), cache.get(k) as T));

function deep(depth: number, kind: 'obj' | 'arr'): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = kind === 'obj' ? { a: v } : [v];
  return v;
}

/** Hostile values by name: the counterexamples fast-check prints stay short. */
const HOSTILE: Record<string, (f: Fixture, root: string) => unknown> = {
  // wrong types and numbers
  undefined: () => undefined,
  null: () => null,
  true: () => true,
  false: () => false,
  zero: () => 0,
  negZero: () => -0,
  nan: () => NaN,
  inf: () => Infinity,
  negInf: () => -Infinity,
  e308: () => 1e308,
  negE308: () => -1e308,
  neg1: () => -1,
  float: () => 1.5,
  tinyFloat: () => 5e-324,
  beyondSafe: () => 2 ** 53 + 2,
  int32Plus: () => 2 ** 31,
  bigint: () => 10n,
  date: () => new Date(0),
  badDate: () => new Date(NaN),
  map: () => new Map([['a', 1]]),
  set: () => new Set(['a']),
  bytes: () => new Uint8Array([0, 255, 1]),
  fn: () => () => 'called',
  symbol: () => Symbol('fuzz'),
  // strings
  empty: () => '',
  spaces: () => '   \t ',
  huge1m: () => once('huge1m', () => 'a'.repeat(1 << 20)),
  hugeWords: () => once('hugeWords', () => 'moon tide harbour '.repeat(70_000)),
  huge10m: () => once('huge10m', () => 'x'.repeat(10 << 20)),
  hugeEmoji: () => once('hugeEmoji', () => '😀'.repeat(300_000)),
  loneHigh: () => '\uD800',
  loneLow: () => 'tail\uDC00',
  nul: () => 'a\u0000b',
  rtl: () => '\u202Egnp.exe\u202C',
  combining: () => 'e\u0301\u0302\u0303\u0304\u0305',
  zwj: () => '👩‍👩‍👧‍👦',
  bom: () => '\uFEFFname',
  newlines: () => 'a\nb\r\nc',
  sql: () => "x'); DROP TABLE chunk; --",
  like: () => '%_\\',
  fts: () => 'NEAR("a" "b") OR * ^ AND -',
  percentS: () => '%s %d {0} ${x}',
  jsonish: () => '{"__proto__": {"polluted": "yes"}}',
  numericStr: () => '12',
  negStr: () => '-5',
  floatStr: () => '1e3',
  trueStr: () => 'true',
  // names and paths
  traversal: () => '../../x',
  traversalFile: () => '../../escape.txt',
  traversalMid: () => 'a/../../b.txt',
  absolute: () => '/etc/passwd',
  absoluteInRoot: (_f, root) => join(root, 'abs-escape.txt'),
  windows: () => 'C:\\x\\evil.txt',
  unc: () => '\\\\server\\share\\evil.txt',
  nulName: () => 'evil\u0000.txt',
  dotdot: () => '..',
  dotTxt: () => '.txt',
  exe: () => 'tool.exe',
  longName: () => `${'n'.repeat(300)}.txt`,
  // arrays and objects
  emptyArr: () => [],
  dupArr: () => ['a', 'a'],
  mixedArr: () => [1, 'a', null, {}, [], true],
  sparseArr: () => [, 'a', ,], // eslint-disable-line no-sparse-arrays
  bigArr: () => once('bigArr', () => Array.from({ length: 100_000 }, (_, i) => `id${i}`)),
  emptyObj: () => ({}),
  deepObj: () => once('deepObj', () => deep(1000, 'obj')),
  deepArr: () => once('deepArr', () => deep(1000, 'arr')),
  deeperObj: () => once('deeperObj', () => deep(5000, 'obj')),
  protoObj: () => JSON.parse('{"__proto__": {"polluted": "yes"}, "a": 1}'),
  ctorObj: () => JSON.parse('{"constructor": {"prototype": {"polluted": "yes"}}}'),
  protoArr: () => JSON.parse('[{"__proto__": {"polluted": "yes"}}]'),
  nullProto: () => Object.assign(Object.create(null), { a: 1, role: 'user', content: 'hi' }),
  noToString: () => JSON.parse('{"toString": 1, "valueOf": 2}'),
  cycle: () => {
    const o: Json = { a: 1, list: [] };
    o.self = o;
    o.list.push(o);
    return o;
  },
  // ids: the right shape, the wrong record
  unknownId: () => '0123456789ab11f0a000000000000000',
  unknownDashed: () => '01234567-89ab-11f0-a000-000000000000',
  notHex: () => 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz',
  dsId: (f) => f.ds,
  ds2Id: (f) => f.ds2,
  docId: (f) => f.doc,
  chunkId: (f) => f.chunk,
  chatId: (f) => f.chat,
  sessionId: (f) => f.session,
  memId: (f) => f.mem,
  agentId: (f) => f.agent,
  agentSessionId: (f) => f.agentSession,
  upperDsId: (f) => f.ds.toUpperCase(),
  paddedDocId: (f) => ` ${f.doc} `,
  msgIdStr: (f) => String(f.msg),
  otherUserId: (f) => f.other.userId,
  otherTenantId: (f) => f.other.tenantId,
  dupIds: (f) => [f.doc, f.doc],
  idList: (f) => [f.ds, f.doc, f.chunk, f.chat, f.mem],
};
const HOSTILE_NAMES = Object.keys(HOSTILE);
const HUGE = new Set(['huge1m', 'hugeWords', 'huge10m', 'hugeEmoji', 'bigArr', 'deeperObj']);

/** A value: a named hostile one, or one fast-check makes up (small). */
type ValueRecipe = { h: string } | { v: unknown };

const valueArb: fc.Arbitrary<ValueRecipe> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...HOSTILE_NAMES.filter((n) => !HUGE.has(n))).map((h) => ({ h })) },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE).map((h) => ({ h })) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((v) => ({ v })) },
  {
    weight: 3,
    arbitrary: fc.anything({ maxDepth: 3, withBigInt: true, withDate: true, withNullPrototype: true, withSparseArray: true, withTypedArray: true, withMap: true, withSet: true, withBoxedValues: true }).map((v) => ({ v })),
  },
);

interface Edit {
  key: string;
  /** Remove the field instead of setting it. */
  drop: boolean;
  value: ValueRecipe;
}

interface Case {
  /** Replace the whole request (rare) instead of editing fields. */
  whole: ValueRecipe | null;
  edits: Edit[];
  /** Run as the other user (another tenant). */
  asOther: boolean;
}

function caseArb(op: OpName, f: Fixture): fc.Arbitrary<Case> {
  const keys = [...new Set([...Object.keys(VALID[op](f)), ...(NESTED[op] ?? [])])];
  // An op that takes no params is fuzzed with unknown keys only.
  const keyArb = keys.length
    ? fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.constantFrom(...EXTRA_KEYS) })
    : fc.constantFrom(...EXTRA_KEYS);
  return fc.record({
    whole: fc.oneof({ weight: 15, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: valueArb }),
    edits: fc.array(fc.record({ key: keyArb, drop: fc.integer({ min: 0, max: 7 }).map((n) => n === 0), value: valueArb }), { minLength: 1, maxLength: 3 }),
    asOther: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  });
}

const materialize = (r: ValueRecipe, f: Fixture, root: string): unknown => ('h' in r ? HOSTILE[r.h]!(f, root) : r.v);

/** Sets `path` in `obj` as own properties (so `__proto__` is a key, never the prototype). */
function setPath(obj: unknown, path: string, value: unknown, drop: boolean): void {
  const parts = path.split('.');
  let cur = obj as Record<string, unknown>;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = Object.prototype.hasOwnProperty.call(cur, parts[i]!) ? cur[parts[i]!] : undefined;
    if (!next || typeof next !== 'object') return; // an earlier edit replaced it
    cur = next as Record<string, unknown>;
  }
  const last = parts[parts.length - 1]!;
  try {
    if (drop) delete cur[last];
    else Object.defineProperty(cur, last, { value, enumerable: true, writable: true, configurable: true });
  } catch {
    // a typed array's index, a boxed string's character: the edit does not apply
  }
}

function buildParams(op: OpName, c: Case, f: Fixture, root: string): unknown {
  if (c.whole) return materialize(c.whole, f, root);
  const p = VALID[op](f);
  for (const e of c.edits) setPath(p, e.key, materialize(e.value, f, root), e.drop);
  return p;
}

// ---------------------------------------------------------------- checks

const CODES = new Set<number>(Object.values(RetCode).filter((c) => c !== 0));
/** Messages that show the implementation instead of the problem. */
const INTERNALS = [
  // (RAGFlow's own Python errors are kept: `TypeError("'int' object is not iterable")` names a Python type.)
  /SqliteError/, /SQLITE_/, /no such (table|column)/, /Cannot read propert/, /Cannot set propert/, /is not a function/, /(?<!' object )is not iterable/,
  /is not defined/, /\bundefined\b/, /Cannot convert/, /Maximum call stack/, /Invalid string length/, /Invalid array length/,
  /\n\s+at .+:\d+:\d+/, /\[object \w+\]/, /node:internal/, /\bERR_[A-Z_]{4,}\b/, /Do not know how to serialize/,
];
const NATIVE = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError', 'SqliteError', 'URIError', 'EvalError']);

/** What is wrong with a rejection, or null. */
function badRejection(e: unknown): string | null {
  if (!(e instanceof ApiError)) return `rejected with ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}, not an ApiError`;
  if (!CODES.has(e.code)) return `code ${e.code} is not one of RAGFlow's`;
  if (typeof e.message !== 'string' || !e.message.trim()) return 'empty message';
  const head = e.message.slice(0, 2000);
  for (const re of INTERNALS) if (re.test(head)) return `message shows internals (${re}): ${head.slice(0, 300)}`;
  // The Api's catch-all (errors.ts exceptionError) wrapping a native exception nobody guarded.
  const cause = e.cause as Error | undefined;
  if (cause instanceof Error && NATIVE.has(cause.name) && e.message === `${cause.name}('${cause.message}')`) {
    return `unguarded ${cause.name}: ${cause.message.slice(0, 300)}`;
  }
  return null;
}

/**
 * After a success: the operation that uses what was stored (a chat's settings in an answer, a
 * chunk in retrieval, a canvas in a run, a memory's settings in an add and a search).
 */
const ASK = 'When are spring tides?';
const FOLLOW_UP: Partial<Record<OpName, (f: Fixture, out: any) => [OpName, Json] | undefined>> = { // eslint-disable-line @typescript-eslint/no-explicit-any
  'datasets.create': (_f, out) => ['retrieval', { dataset_ids: [out?.id], question: ASK }],
  'datasets.update': (f) => ['retrieval', { dataset_ids: [f.ds], question: ASK, highlight: true }],
  'documents.replaceContent': (f) => ['documents.download', { dataset_id: f.ds, document_id: f.doc2 }],
  'documents.update': (f) => ['retrieval', { dataset_ids: [f.ds], question: ASK, metadata_condition: { conditions: [{ name: 'author', comparison_operator: 'contains', value: 'x' }] } }],
  'chunks.add': (f) => ['retrieval', { dataset_ids: [f.ds], question: ASK, highlight: true }],
  'chunks.update': (f) => ['retrieval', { dataset_ids: [f.ds], question: ASK, highlight: true }],
  'chats.create': (_f, out) => ['chats.completion', { chat_id: out?.id, question: ASK, stream: false }],
  'chats.update': (f) => ['chats.completion', { chat_id: f.chat, question: ASK, stream: false }],
  'chats.replace': (f) => ['openai.completion', { chat_id: f.chat, model: 'model', messages: [{ role: 'user', content: ASK }], stream: false }],
  'sessions.create': (f, out) => ['chats.completion', { chat_id: f.chat, session_id: out?.id, question: ASK, stream: false }],
  'sessions.update': (f) => ['chats.completion', { chat_id: f.chat, session_id: f.session, question: ASK, stream: true }],
  'memories.create': (_f, out) => ['messages.add', { memory_id: [out?.id], agent_id: 'a', session_id: 's', user_input: ASK, agent_response: 'At new moon.' }],
  'memories.update': (f) => ['messages.add', { memory_id: [f.mem], agent_id: 'a', session_id: 's', user_input: ASK, agent_response: 'At new moon.' }],
  'messages.add': (f) => ['messages.search', { memory_id: [f.mem], query: ASK }],
  'agents.create': (_f, out) => ['agents.completion', { agent_id: out?.id, query: 'hi', stream: false }],
  'agents.update': (f) => ['agents.completion', { agent_id: f.agent, query: 'hi', stream: false }],
  'agentSessions.create': (f, out) => ['agents.completion', { agent_id: f.agent, session_id: out?.id, query: 'hi', stream: false }],
};
let followUps = 0;

/** Operations whose success leaves work running that writes later (a parse, memory extraction). */
const BACKGROUND = new Set<OpName>(['documents.parse', 'documents.startParsing', 'documents.ingest', 'datasets.runEmbedding', 'agents.rerun', 'messages.add']);

/** Rejections the reference defines as writing first. */
function writesFirst(op: OpName, e: ApiError): boolean {
  if (op === 'documents.parse' || op === 'documents.startParsing') return e.code === RetCode.DATA_ERROR && e.message.startsWith('Documents not found: ');
  // The documents found are switched, then the others reported (document_api.batch_update_document_status).
  if (op === 'documents.batchUpdateStatus') return e.code === RetCode.SERVER_ERROR && e.message === 'Partial failure';
  if (op === 'chunks.delete') return e.code === RetCode.DATA_ERROR && /^rm_chunk deleted chunks [1-9]\d*, expect \d+$/.test(e.message);
  return false;
}

const protoKeys = () => [Object.getOwnPropertyNames(Object.prototype).sort().join(','), Object.getOwnPropertyNames(Array.prototype).sort().join(',')];

function listTree(dir: string, base = dir, out: string[] = []): string[] {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    out.push(relative(base, p));
    if (d.isDirectory()) listTree(p, base, out);
  }
  return out;
}

async function drain(it: AsyncIterable<unknown>): Promise<void> {
  let n = 0;
  for await (const _ of it) if (++n > 100_000) throw new Error('stream does not end');
}

function withLimit<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${what} did not settle in ${CALL_LIMIT_MS} ms`)), CALL_LIMIT_MS);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- harness

/** The live copy of the database and its Api; reset to the pristine bytes when a case wrote. */
class Harness {
  api!: Api;
  dirty = true;
  calls = 0;
  rejected = 0;
  constructor(
    readonly root: string,
    readonly live: string,
    readonly pristinePath: string,
    readonly pristine: Buffer,
    readonly allowed: Set<string>,
  ) {}

  async fresh(): Promise<void> {
    if (!this.dirty) return;
    if (this.api) await this.api.close();
    for (const s of ['', '-wal', '-shm']) rmSync(this.live + s, { force: true });
    copyFileSync(this.pristinePath, this.live);
    this.api = new Api({ path: this.live });
    this.dirty = false;
  }

  /** Checkpoints the WAL into the main file (as close does) and compares its bytes. */
  unchanged(): boolean {
    const [r] = this.api.engine.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    if (r!.busy !== 0) throw new Error(`checkpoint busy: ${JSON.stringify(r)}`);
    return readFileSync(this.live).equals(this.pristine);
  }

  /** Which tables differ from the pristine file (for the failure message). */
  describeChange(): string {
    const dump = (db: Database.Database): Map<string, string[]> => {
      const out = new Map<string, string[]>();
      out.set('user_version', [String(db.pragma('user_version', { simple: true }))]);
      const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string; sql: string }>;
      for (const t of tables) {
        if (/^CREATE VIRTUAL/i.test(t.sql ?? '')) continue;
        const rows = db.prepare(`SELECT * FROM "${t.name.replace(/"/g, '""')}"`).raw().all() as unknown[][];
        out.set(t.name, rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v?.type === 'Buffer' ? `<${v.data.length} bytes>` : v))).sort());
      }
      return out;
    };
    const before = new Database(this.pristinePath, { readonly: true });
    try {
      const a = dump(before);
      const b = dump(this.api.engine.db);
      const diffs: string[] = [];
      for (const k of new Set([...a.keys(), ...b.keys()])) {
        const x = a.get(k) ?? [];
        const y = new Set(b.get(k) ?? []);
        const xs = new Set(x);
        const gone = x.filter((r) => !y.has(r));
        const added = [...y].filter((r) => !xs.has(r));
        if (gone.length || added.length) diffs.push(`${k}: -${gone.length} +${added.length} ${gone.slice(0, 2).map((r) => `- ${r.slice(0, 300)}`).join(' ')} ${added.slice(0, 2).map((r) => `+ ${r.slice(0, 300)}`).join(' ')}`);
      }
      return diffs.join('\n') || 'no row differs (only the file layout)';
    } finally {
      before.close();
    }
  }

  strayFiles(): string[] {
    return listTree(this.root).filter((p) => !this.allowed.has(p));
  }
}

// ---------------------------------------------------------------- the test

const HERE = fileURLToPath(new URL('.', import.meta.url));
let tmp: string;
let f: Fixture;
let h: Harness;
let cwd: string;
let passwdMtime = 0;
const perOp = new Map<string, { calls: number; rejected: number; ok: number; ms: number }>();

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ragloom-fuzz-'));
  const root = join(tmp, 'root');
  const dbDir = join(root, 'a', 'b');
  mkdirSync(dbDir, { recursive: true });
  mkdirSync(join(tmp, 'pristine'));
  const pristinePath = join(tmp, 'pristine', 'kb.db');
  f = await buildFixture(pristinePath);
  // One idle open/close first: afterwards an open that changes nothing is byte-identical.
  await new Api({ path: pristinePath }).close();
  expect(existsSync(`${pristinePath}-wal`)).toBe(false);
  const pristine = readFileSync(pristinePath);
  const allowed = new Set(['a', join('a', 'b'), ...['', '-wal', '-shm'].map((s) => join('a', 'b', `kb.db${s}`))]);
  h = new Harness(root, join(dbDir, 'kb.db'), pristinePath, pristine, allowed);
  await h.fresh();
  expect(h.unchanged(), 'an idle open leaves the file as it was').toBe(true);
  // Relative traversal (`../../x`) from the working directory lands in `root`, where it is seen.
  cwd = process.cwd();
  try {
    process.chdir(dbDir);
  } catch {
    /* a worker thread cannot chdir; absolute targets are still checked */
  }
  passwdMtime = existsSync('/etc/passwd') ? statSync('/etc/passwd').mtimeMs : 0;
}, 120_000);

afterAll(async () => {
  try {
    process.chdir(cwd);
  } catch {
    /* see beforeAll */
  }
  await h?.api?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  if (h) {
    const rows = [...perOp].map(([op, s]) => `  ${op.padEnd(22)} ${String(s.calls).padStart(5)} calls  ${String(s.rejected).padStart(5)} rejected  ${String(s.ok).padStart(5)} ok  ${String(Math.round(s.ms)).padStart(6)} ms in calls`);
    console.log(`fuzz-api: ${h.calls} fuzz cases (${h.rejected} rejected, ${followUps} follow-up calls on accepted values) over ${perOp.size} operations, seed ${SEED}, ${RUNS} runs per operation\n${rows.join('\n')}`);
  }
});

/** Operations named in src/api/index.ts's OPS table (read from the source: new ones must be fuzzed). */
function opsInSource(): string[] {
  const src = readFileSync(join(HERE, '..', '..', 'src', 'api', 'index.ts'), 'utf8');
  const table = src.slice(src.indexOf('const OPS = {'), src.indexOf('} as const;', src.indexOf('const OPS = {')));
  return [...table.matchAll(/^\s*'([^']+)':\s*\(/gm)].map((m) => m[1]!);
}

const OPS = Object.keys(VALID) as OpName[];

describe('fuzzed inputs: every Api operation', () => {
  it('covers every operation: the OPS table, the REST routes and the ops no route serves', () => {
    const inSource = opsInSource();
    expect(inSource.length).toBeGreaterThan(50);
    expect(OPS.slice().sort()).toEqual([...new Set(inSource)].sort());
    for (const r of ROUTES) expect(OPS).toContain(r.op);
    const routed = new Set(ROUTES.map((r) => r.op));
    expect(OPS.filter((op) => !routed.has(op)).sort()).toEqual(['auth.bootstrap', 'auth.verify', 'documents.replaceContent']);
  });

  /** The valid requests that are refused all the same, and how. */
  const VALID_REFUSED: Partial<Record<OpName, Record<string, unknown>>> = {
    // Stopping needs a running parse; the fixture's documents are parsed.
    'documents.stopParse': { code: 102, message: "Can't stop parsing document that has not started or already completed" },
    // Building a knowledge graph is not supported: after its checks, the 501 answer.
    'datasets.runIndex': { code: 501, data: { error_code: 'NOT_SUPPORTED_BY_RAGLOOM' } },
    // ragloom's agents write no artifacts.
    'documents.artifact': { code: 102, message: 'Artifact not found.' },
    // Related questions need a model that writes text; the fixture has the built-in extractive one.
    'chats.recommendation': { code: 102, message: expect.stringMatching(/^Related questions needs a chat model that writes text/) },
  };

  it('starts from valid requests: each one succeeds on the fixture', async () => {
    for (const op of OPS) {
      await h.fresh();
      h.dirty = true;
      const run = async () => {
        const out = await h.api.call(op, VALID[op](f));
        if (out && typeof out === 'object' && Symbol.asyncIterator in out) await drain(out as AsyncIterable<unknown>);
      };
      const refused = VALID_REFUSED[op];
      if (refused) await expect(run(), op).rejects.toMatchObject(refused);
      else await expect(run(), op).resolves.toBeUndefined();
    }
  });

  it('uploads under traversal names keep their bytes in the database and write no file', async () => {
    await h.fresh();
    h.dirty = true;
    const names = ['../../x.txt', '../../../../../../tmp/ragloom-fuzz-escape.txt', 'a/../../b.txt', '/etc/passwd.txt', join(h.root, 'abs-escape.txt'),
      'C:\\x\\evil.txt', '\\\\server\\share\\evil.txt', 'evil\u0000.txt', '..\\..\\win.txt', '\u202Egnp.txt'];
    const files = names.map((display_name, i) => ({ display_name, blob: enc(`file ${i}: the moon and the tides`) }));
    const docs = (await h.api.call('documents.upload', { dataset_id: f.ds, files })) as Json[];
    expect(docs.map((d) => d.name)).toEqual(names);
    for (const [i, d] of docs.entries()) {
      const bytes = (await h.api.call('documents.download', { dataset_id: f.ds, document_id: d.id })) as Uint8Array;
      expect(Buffer.from(bytes).toString()).toBe(`file ${i}: the moon and the tides`);
    }
    expect(h.strayFiles()).toEqual([]);
    expect(existsSync('/tmp/ragloom-fuzz-escape.txt')).toBe(false);
  });

  OPS.forEach((op, i) => {
    it(`${op}`, async () => {
      const stats = perOp.get(op) ?? { calls: 0, rejected: 0, ok: 0, ms: 0 };
      perOp.set(op, stats);
      await fc.assert(
        fc.asyncProperty(caseArb(op, f), async (c) => {
          await h.fresh();
          const params = buildParams(op, c, f, h.root);
          const ctx = c.asOther ? f.other : undefined;
          const before = protoKeys();
          if (TRACE) writeSync(2, `${op} ${JSON.stringify(c, (_k, v) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'symbol' ? String(v) : v)).slice(0, 400)}\n`);
          h.calls++;
          stats.calls++;
          // Until shown otherwise, this case may have written (a failing case throws before the check).
          h.dirty = true;
          let failure: unknown = undefined;
          let ok = false;
          let output: unknown;
          const t0 = performance.now();
          try {
            await withLimit((async () => {
              const out = await h.api.call(op, params as Json, ctx);
              output = out;
              if (out && typeof out === 'object' && Symbol.asyncIterator in out) await drain(out as AsyncIterable<unknown>);
            })(), op);
            ok = true;
          } catch (e) {
            failure = e;
          }
          stats.ms += performance.now() - t0;
          if (failure instanceof Error && failure.message.startsWith('HANG:')) throw failure;
          expect(protoKeys(), 'no prototype gains keys').toEqual(before);
          expect(({} as Json).polluted, 'Object.prototype is not polluted').toBeUndefined();
          expect(h.strayFiles(), 'nothing written outside the database directory').toEqual([]);
          if (passwdMtime) expect(statSync('/etc/passwd').mtimeMs).toBe(passwdMtime);
          if (ok) {
            stats.ok++;
            // Success may write; a success that wrote nothing (and left no work running) keeps the Api.
            if (!BACKGROUND.has(op)) h.dirty = !h.unchanged();
            // What was accepted must be usable: the operation that reads it back fails, if at all, cleanly.
            const next = FOLLOW_UP[op]?.(f, output);
            if (next) {
              h.dirty = true;
              followUps++;
              try {
                await withLimit((async () => {
                  const out = await h.api.call(next[0], next[1]);
                  if (out && typeof out === 'object' && Symbol.asyncIterator in out) await drain(out as AsyncIterable<unknown>);
                })(), `${op} → ${next[0]}`);
              } catch (e) {
                if (e instanceof Error && e.message.startsWith('HANG:')) throw e;
                const why = badRejection(e);
                if (why) throw new Error(`${op} accepted a value that ${next[0]} then fails on: ${why}`);
              }
            }
            return;
          }
          h.rejected++;
          stats.rejected++;
          const why = badRejection(failure);
          if (why) throw new Error(`${op}: ${why}`);
          if (h.unchanged()) h.dirty = false;
          else if (!writesFirst(op, failure as ApiError)) {
            throw new Error(`${op}: rejected (${(failure as ApiError).code} ${(failure as ApiError).message.slice(0, 200)}) but the database changed:\n${h.describeChange()}`);
          }
        }),
        { numRuns: RUNS, seed: SEED + i, endOnFailure: true },
      );
    });
  });
});

/**
 * The crash matrix's operations and kill points, shared by the SQLite matrix
 * (crash-matrix.test.ts) and the PostgreSQL one (test/store/postgres/crash-matrix.test.ts): a point
 * added here is driven on both stores unless it names the one it is driven on: `['sqlite']` for
 * steps only SQLite's code has (its FTS5 and vec0 rows, its allocator's steps), `['postgres']` for
 * PostgreSQL's own steps and for steps both have that SQLite's matrix leaves to its finer points
 * (the counters and commits after them: its run time is kept as it was). The PostgreSQL matrix
 * checks that every named point of the PostgreSQL write paths is listed here or in its
 * building-block crash test (test/store/postgres/crash.test.ts). Also the baselines the
 * operations run on.
 */
import type { Api } from '../../src/api/index.js';
import type { ChatServer } from '../support/chat-server.js';

type P = Record<string, unknown>;

export type BaseName = 'common' | 'extract' | 'v3' | 'workspace';
export type StoreKind = 'sqlite' | 'postgres';

export interface Op {
  /** RAGLOOM_OP of the child. */
  id: string;
  /** The matrix row. */
  label: string;
  base: BaseName;
  /**
   * [kill point, where the operation stands when it dies there, the stores whose code has it
   * (both when omitted)].
   */
  points: Array<[string, string, StoreKind[]?]>;
  /** The stores the operation runs on (both when omitted). */
  stores?: StoreKind[];
}

export const ALL_OPS: Op[] = [
  { id: 'upload', label: 'upload (2 files, one a duplicate)', base: 'common', points: [
    ['upload:blob-written', "in the transaction: the first file's blob row written, its document row not"],
    ['upload:row-written', 'in the transaction: one document row written, the second file not'],
    ['upload:counted', "in the transaction: documents written, the dataset's counters moved", ['postgres']],
    ['upload:committed', 'after the commit'],
  ] },
  { id: 'replace', label: 'replace a document\'s file (ingest re-run of a changed file)', base: 'common', points: [
    ['replace:blob-written', 'in the transaction: the new blob row written, the document still on the old one'],
    ['replace:row-written', 'in the transaction: the document on the new blob, the old blob not yet pruned'],
    ['replace:committed', 'after the commit'],
  ] },
  { id: 'parse', label: 'parse (re-parse: swap of the chunks)', base: 'common', points: [
    ['parse:reset', 'document marked RUNNING (committed), not yet queued'],
    ['parse:owned', 'parse_owner row of this pid committed, parse not started'],
    ['parse:embedded', 'parsed and embedded, before the swap transaction'],
    ['parse:old-removed', 'swap transaction: old chunks, FTS and vector rows deleted, new ones not written'],
    ['chunks.upsert:rows-written', 'swap transaction: new chunk rows written, their FTS and vector rows not'],
    ['parse:chunks-written', 'swap transaction: new chunks written with their vectors, DONE not set', ['postgres']],
    ['parse:done-set', 'swap transaction: everything written and DONE set, not committed'],
    ['parse:swapped', 'after the commit (its parse_owner row released in it)'],
  ] },
  { id: 'parse.batch', label: 'parse of 3 small documents (one batch: one worker job, one swap transaction)', base: 'common', points: [
    ['parse:owned', 'parse_owner rows committed, parse not started'],
    ['parse:embedded', 'all three parsed and embedded, before the swap transaction'],
    ['parse:old-removed', "swap transaction: the three documents' old chunks deleted, new ones not written"],
    ['chunks.upsert:fts-written', 'swap transaction: new chunk and FTS rows written, vectors not', ['sqlite']],
    ['parse:chunks-written', 'swap transaction: new chunks written with their vectors, DONE not set', ['postgres']],
    ['parse:done-set', 'swap transaction: all three DONE, counters moved, not committed'],
    ['parse:swapped', 'after the commit'],
  ] },
  { id: 'chunk.add', label: 'chunk add', base: 'common', points: [
    ['chunks.upsert:rows-written', 'chunk row written, no FTS or vector row'],
    ['chunks.upsert:fts-written', 'chunk and FTS rows written, no vector row', ['sqlite']],
    ['chunks.add:counted', "chunk row written, the document's and dataset's counters moved, not committed", ['postgres']],
    ['chunks.add:committed', 'after the commit'],
  ] },
  { id: 'chunk.update', label: 'chunk update', base: 'common', points: [
    ['chunks.rewrite:row-updated', 'row rewritten, old FTS and vector rows still there'],
    ['chunks.rewrite:fts-written', 'row and new FTS row written, old vector still there', ['sqlite']],
    ['chunks.rewrite:vector-deleted', 'old vector deleted, new one not written', ['sqlite']],
    ['chunks.update:counted', 'row rewritten with its vector, counters moved, not committed', ['postgres']],
    ['chunks.update:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'chunk.delete', label: 'chunk delete (2 chunks)', base: 'common', points: [
    ['chunks.remove:vector-deleted', "first chunk's vector deleted, its FTS row and row not", ['sqlite']],
    ['chunks.remove:fts-deleted', "first chunk's vector and FTS row deleted, its row not", ['sqlite']],
    ['chunks.delete:counted', 'both rows deleted, counters moved, not committed', ['postgres']],
    ['chunks.delete:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'document.delete', label: 'document delete (2 documents, blob pruning)', base: 'common', points: [
    ['documents.delete:chunks-removed', 'their chunks deleted, document rows not'],
    ['documents.delete:rows-deleted', 'document rows deleted, blobs not pruned'],
    ['documents.delete:blobs-pruned', 'unreferenced blob pruned, counts not refreshed'],
    ['documents.delete:committed', 'after the commit'],
  ] },
  { id: 'dataset.delete', label: 'dataset delete (2 datasets, blob pruning)', base: 'common', points: [
    ['datasets.delete:chunks-removed', "first dataset: its chunks deleted, its documents not", ['postgres']],
    ['datasets.delete:documents-deleted', 'first dataset: chunks and documents deleted, blobs not pruned'],
    ['datasets.delete:blobs-pruned', 'first dataset: blobs pruned, dataset row still there'],
    ['datasets.delete:dataset-deleted', 'first dataset gone, the second untouched'],
    ['datasets.delete:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'session.create', label: 'chat session create', base: 'common', points: [
    ['sessions.create:session-inserted', 'session row written, its prologue message not'],
    ['sessions.create:committed', 'after the commit'],
  ] },
  { id: 'chat.completion', label: 'chat completion (messages appended)', base: 'common', points: [
    ['completion:messages-appended', "question and answer rows written, the session's update_time not"],
    ['completion:saved', 'after the commit'],
  ] },
  { id: 'chat.completion.history', label: 'chat completion passing the whole history (stored messages replaced)', base: 'common', stores: ['postgres'], points: [
    ['completion:history-cleared', "the session's stored messages deleted, the request's not written"],
    ['completion:messages-appended', "the request's messages and the answer written, the session's update_time not"],
    ['completion:saved', 'after the commit'],
  ] },
  { id: 'sessions.delete', label: 'chat session delete (2 sessions)', base: 'common', points: [
    ['sessions.delete:one-deleted', 'first session (and its messages) deleted, the second not'],
    ['sessions.delete:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'chats.delete', label: 'chat delete (2 chats)', base: 'common', points: [
    ['chats.delete:one-deleted', 'first chat deleted, the second not'],
    ['chats.delete:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'memory.add', label: 'memory add to 2 memories, with eviction', base: 'common', points: [
    ['memory.evict:row-deleted', "first memory: its oldest message deleted, that message's FTS row and the totals not", ['sqlite']],
    ['memory.evict:fts-deleted', "first memory: oldest message and its FTS row deleted, the totals not", ['sqlite']],
    ['memory.insert:evicted', 'first memory: two messages evicted, the new one not written', ['sqlite']],
    ['memory.insert:rows-written', 'first memory: new message and FTS row written, the totals not', ['sqlite']],
    ['pg-memory:evicted', 'first memory: two messages evicted and the totals moved, the new one not written', ['postgres']],
    ['pg-memory:rows-written', 'first memory: new message written and charged, not committed', ['postgres']],
    ['memory.add:stored', 'first memory: stored and charged, the second memory not'],
    ['memory.add:committed', 'after the commit'],
  ] },
  { id: 'memory.extract', label: 'memory extraction task (items stored with eviction)', base: 'extract', points: [
    ['memory.extract:claimed', 'task claimed (lease committed), model not asked'],
    ['memory.extract:answered', 'model answered, nothing stored'],
    ['memory.evict:row-deleted', 'items transaction: an older message deleted, its FTS row and the totals not', ['sqlite']],
    ['memory.insert:rows-written', 'items transaction: item rows written, the totals not', ['sqlite']],
    ['pg-memory:evicted', 'items transaction: older messages evicted and the totals moved, the items not written', ['postgres']],
    ['pg-memory:rows-written', 'items transaction: item rows written and charged, the task not done', ['postgres']],
    ['memory.extract:stored', 'items stored and charged, task not marked done'],
    ['memory.extract:committed', 'after the commit'],
  ] },
  { id: 'agent.create', label: 'agent create (agent + first version)', base: 'common', points: [
    ['agents.create:agent-inserted', 'agent row written, no version'],
    ['agents.version:written', 'version row written, not committed'],
    ['agents.create:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'agent.update', label: 'agent save (new version, oldest pruned)', base: 'common', points: [
    ['agents.update:agent-updated', "agent's dsl updated, no version"],
    ['agents.version:written', 'new version written, the oldest unreleased not pruned'],
    ['agents.version:pruned', 'oldest unreleased version pruned, not committed'],
    ['agents.update:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'agent.session', label: 'agent session create', base: 'common', points: [
    ['agents.session:inserted', 'session row written, its prologue message not'],
    ['agents.session:committed', 'after the commit', ['postgres']],
  ] },
  { id: 'agent.completion', label: 'agent run (saveAgentTurn)', base: 'common', points: [
    ['agents.turn:messages-appended', 'messages written, canvas state and round not'],
    ['agents.turn:saved', 'after the commit'],
  ] },
  { id: 'workspace.save', label: 'workspace save (src/workspace)', base: 'workspace', stores: ['sqlite'], points: [
    ['workspace:tmp-written', 'new snapshot written to the .tmp file'],
    ['workspace:flag-removed', 'bak updated, success flag removed'],
    ['workspace:newest-renamed', 'tmp renamed to newest, no flag'],
    ['workspace:flag-created', 'flag created (the commit point)'],
    ['workspace:records-written', 'info.pb files written, old folders not removed'],
  ] },
  // PostgreSQL's schema steps are killed by test/store/postgres/crash.test.ts (pg-migrate:*).
  { id: 'migrate', label: 'schema migration (version 3 → latest)', base: 'v3', stores: ['sqlite'], points: [
    ['migrate:fts-cleared', 'step 4: every FTS row deleted, none rebuilt'],
    ['migrate:4:applied', 'step 4 applied, user_version not bumped'],
    ['migrate:9:renamed', 'step 9: api_token column renamed, keys not yet hashed'],
    ['migrate:9:committed', 'step 9 committed'],
    ['migrate:11:applied', 'last step applied, user_version not bumped'],
  ] },
];

/** The points of `op` that `store`'s code reaches. */
export function pointsOn(op: Op, store: StoreKind): Array<[string, string]> {
  return op.points.filter(([, , on]) => !on || on.includes(store)).map(([p, what]) => [p, what]);
}

/**
 * The kill points a default run drives: each point once, at the first operation that has it (a
 * point several operations reach runs the same code there; a new process per kill is the
 * matrices' cost), leaving out those `skip` names. RAGLOOM_CRASH_FULL=1 drives them all.
 */
export function eachPointOnce(ops: Op[], skip: (point: string) => boolean = () => false): Op[] {
  const seen = new Set<string>();
  return ops.map((o) => ({ ...o, points: o.points.filter(([p]) => !skip(p) && !seen.has(p) && !!seen.add(p)) }));
}

// ---------------------------------------------------------------- baselines

export const EMBD = 'ragloom-static-en-256@Builtin';
const enc = (s: string) => Buffer.from(s);
export const DSL = (prologue: string) => ({
  components: {
    begin: { obj: { component_name: 'Begin', params: { prologue } }, downstream: ['Message:Echo'], upstream: [] },
    'Message:Echo': { obj: { component_name: 'Message', params: { content: ['You said: {sys.query}'] } }, downstream: [], upstream: ['begin'] },
  },
  history: [], path: [], retrieval: [],
  globals: { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [] },
});
const HARBOUR = Array.from({ length: 40 }, (_, i) =>
  `Paragraph ${i + 1}. The harbour at the mouth of the river was built in stone; ships wait for the tide before they pass the lighthouse, and storm number ${i} closed it for ${i % 7} days.`).join('\n\n');


/** Fills an empty store with the 'common' baseline (datasets, documents, chunks, chats, memories, agents) and closes it; returns the ids the operations work on. */
export async function fillCommon(api: Api): Promise<P> {
  const call = (op: Parameters<Api['call']>[0], p: P) => api.call(op, p) as Promise<P>;
  const [A, B, C] = [await call('datasets.create', { name: 'A' }), await call('datasets.create', { name: 'B' }), await call('datasets.create', { name: 'C' })];
  const up = async (ds: P, files: Array<[string, string]>) =>
    (await api.call('documents.upload', { dataset_id: ds.id, files: files.map(([display_name, text]) => ({ display_name, blob: enc(text) })) })) as P[];
  const [parsed] = await up(A, [['harbour.txt', HARBOUR]]);
  await call('documents.parse', { dataset_id: A.id, document_ids: [parsed!.id] });
  for (;;) {
    const { docs } = (await call('documents.list', { dataset_id: A.id, id: parsed!.id })) as { docs: P[] };
    if (docs[0]!.run === 'DONE') break;
    if (docs[0]!.run !== 'RUNNING') throw new Error(`baseline parse ended ${String(docs[0]!.run)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const shared = 'Shared bytes: two documents upload the same file.';
  const [d1, d2, , d4] = await up(A, [['d1.txt', shared], ['d2.txt', shared], ['d3.txt', 'Bytes shared with dataset C.'], ['d4.txt', 'Bytes only d4 has.']]);
  const chunk = async (ds: P, doc: P, content: string) => (await call('chunks.add', { dataset_id: ds.id, document_id: doc.id, content })).id as string;
  const chunks = [
    await chunk(A, d1!, 'The first chunk: a lighthouse stands on the rocks.'),
    await chunk(A, d1!, 'The second chunk: fishing boats leave before dawn.'),
    await chunk(A, d1!, 'The third chunk: the harbour master keeps the tide tables.'),
  ];
  await chunk(A, d2!, 'd2 says the quay is two hundred metres long.');
  await chunk(A, d4!, 'd4 says the ferry leaves at noon.');
  const [b1] = await up(B, [['b.txt', 'Bytes only dataset B has.']]);
  await chunk(B, b1!, 'b: a chunk of dataset B.');
  await chunk(B, b1!, 'b: another chunk of dataset B.');
  const [c1] = await up(C, [['c.txt', 'Bytes shared with dataset C.']]);
  await chunk(C, c1!, 'c: a chunk of dataset C.');

  const harbour = await call('chats.create', { name: 'harbour', dataset_ids: [A.id] });
  const sessions = [];
  for (const name of ['a', 'b', 'c']) sessions.push((await call('sessions.create', { chat_id: harbour.id, name })).id as string);
  await call('chats.completion', { chat_id: harbour.id, session_id: sessions[0], stream: false, messages: [{ role: 'user', content: 'Where is the lighthouse?' }] });
  const old = [(await call('chats.create', { name: 'old 1' })).id, (await call('chats.create', { name: 'old 2' })).id];

  const memory = await call('memories.create', { name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
  const journal = await call('memories.create', { name: 'journal', memory_type: ['raw'], embd_id: EMBD, llm_id: 'ragloom-extractive@Builtin' });
  await call('memories.update', { memory_id: memory.id, memory_size: 3400 });
  for (let i = 0; i < 3; i++) {
    await call('messages.add', { memory_id: [memory.id], agent_id: 'agent', session_id: `s${i}`, user_id: '', user_input: `question ${i} about the quay`, agent_response: `answer ${i}` });
  }

  const agent = await call('agents.create', { title: 'echo', dsl: DSL('Hi v0') });
  for (let i = 1; i <= 20; i++) await call('agents.update', { agent_id: agent.id, dsl: DSL(`Hi v${i}`) });
  const agentSession = await call('agentSessions.create', { agent_id: agent.id, name: 's1' });
  await call('agents.completion', { agent_id: agent.id, session_id: agentSession.id, query: 'first question', stream: false });
  await api.close();
  return {
    datasetA: A.id, datasetB: B.id, datasetC: C.id, parsed: parsed!.id, d1: d1!.id, d2: d2!.id, d4: d4!.id, chunks, sharedText: shared,
    chat: harbour.id, session: sessions[0], sessionsToDelete: sessions.slice(1), chatsToDelete: old,
    memory: memory.id, journal: journal.id, agent: agent.id, agentSession: agentSession.id, dsl: DSL('Hi, saved by the crash test'),
  };
}


/**
 * Fills an empty store (its Api made with the `extractor` model at `chat`) with a memory of raw +
 * semantic messages whose newest message's extraction is pending, near its budget, and closes it.
 */
export async function fillExtract(api: Api, chat: ChatServer): Promise<P> {
  const m = (await api.call('memories.create', { name: 'facts', memory_type: ['raw', 'semantic'], embd_id: EMBD, llm_id: 'extractor@OpenAI-API-Compatible' })) as P;
  await api.call('memories.update', { memory_id: m.id, memory_size: 3400 });
  const add = (i: number) => api.call('messages.add', { memory_id: [m.id], agent_id: 'agent', session_id: `s${i}`, user_id: '', user_input: `question ${i} about the quay`, agent_response: `answer ${i}` });
  for (let i = 0; i < 2; i++) {
    chat.script({ text: '{"semantic": []}' });
    await add(i);
    await api.memoryTasks.idle();
  }
  chat.script({ hang: true });
  await add(2);
  await new Promise((r) => setTimeout(r, 100));
  await api.close(); // the task in flight stays pending, due at once
  // From now on the model never answers in this process: reopening the file (which runs the due
  // task) leaves it pending as the child left it (Client.close() aborts the request).
  chat.script(...Array.from({ length: 200 }, () => ({ hang: true })));
  return { items: ['The quay is two hundred metres long and built of granite.', 'Ferries to the island leave the quay at noon every day.'] };
}


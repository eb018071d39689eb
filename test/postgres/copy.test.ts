/**
 * `ragloom migrate copy` between SQLite and PostgreSQL (issue 30): a store copied into
 * PostgreSQL and back again holds the same rows (verified table by table), ranks every search
 * the same without parsing or embedding again, and a second run writes nothing.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { copyStore, verifyCopy } from '../../src/store/copy.js';
import { createDatabase, dropDatabase, pgServer, pgSkipReason } from '../support/postgres.js';
import { EMBD, LLM, parsedDataset, portable } from '../acceptance/modes.js';
import { runJson } from '../cli/run.js';

const server = await pgServer();
const reason = await pgSkipReason();
const urls: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'ragloom-copy-'));
afterAll(async () => {
  for (const u of urls) await dropDatabase(server!, u).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** What a store answers, without ids and times: searches, chats' sessions, memories, agents. */
async function answers(c: Client) {
  const [ds] = await c.listDatasets();
  const docs = await ds!.listDocuments();
  const retrieved = [];
  for (const question of ['spring tides and the moon', 'how long to bake bread', 'longest river in Africa']) {
    retrieved.push(portable(await c.retrieveWithTotals({ question, dataset_ids: [ds!.id], similarity_threshold: 0, highlight: true })));
  }
  const [m] = (await c.listMemory()).memory_list;
  const [chat] = await c.listChats();
  const sessions = await chat!.listSessions();
  const [agent] = await c.listAgents();
  return {
    docs: portable(docs.map((d) => d.toJSON())),
    retrieved,
    memory: portable(await c.searchMessage({ query: 'moon tides', memory_id: [m!.id] })),
    recent: portable(await c.getRecentMessages({ memory_id: [m!.id], limit: 5 })),
    sessions: portable(sessions.map((s) => s.toJSON())),
    agent: agent!.title,
  };
}

describe.skipIf(!server)(`migrate copy between SQLite and PostgreSQL${reason ? ` (${reason})` : ''}`, () => {
  test('SQLite → PostgreSQL → SQLite: the same rows, the same answers, no re-parse; resumable; verify says so', async () => {
    const first = join(dir, 'first.db');
    const c = new Client({ path: first });
    await parsedDataset(c);
    const m = await c.createMemory({ name: 'notes', memory_type: ['raw'], embd_id: EMBD, llm_id: LLM });
    for (const [s, u, a] of [['s1', 'What pulls the tides?', 'The moon pulls the ocean tides.'], ['s2', 'Longest river?', 'The Nile.']]) {
      await c.addMessage({ memory_id: [m.id], agent_id: 'a', session_id: s!, user_input: u!, agent_response: a! });
    }
    await c.waitForMemoryTasks();
    const chat = await c.createChat({ name: 'helper', dataset_ids: [(await c.listDatasets())[0]!.id] });
    await (await chat.createSession({ name: 'one' })).ask('what pulls the tides?');
    await c.createAgent({ title: 'flow', dsl: {
      components: {
        begin: { obj: { component_name: 'Begin', params: { mode: 'conversational', prologue: 'Hi.' } }, downstream: ['Message:Reply'], upstream: [] },
        'Message:Reply': { obj: { component_name: 'Message', params: { content: ['You said: {sys.query}'] } }, downstream: [], upstream: ['begin'] },
      },
      globals: { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [] }, history: [], path: ['begin'], retrieval: [], graph: { nodes: [], edges: [] },
    } });
    const before = await answers(c);
    await c.close();

    const url = await createDatabase(server!, 'copy');
    urls.push(url);
    const one = await copyStore({ path: first }, { postgres: url });
    expect(one.tables.find((t) => t.table === 'chunk')!.written).toBeGreaterThan(0);
    expect((await verifyCopy({ path: first }, { postgres: url })).ok).toBe(true);
    // Run again (an interrupted copy is resumed this way): nothing more is written.
    const again = await copyStore({ path: first }, { postgres: url });
    expect(again.tables.every((t) => t.written === 0)).toBe(true);

    const p = new Client({ postgres: url });
    expect(await answers(p)).toEqual(before);
    // The copy goes on living: a new chunk gets a new row id.
    const [ds] = await p.listDatasets();
    const [doc] = await ds!.listDocuments();
    await doc!.addChunk({ content: 'added after the copy' });
    await p.close();

    const back = join(dir, 'back.db');
    const r = await runJson<{ tables: Array<{ table: string; written: number }> }>(['migrate', 'copy', '--from', url, '--to', back]);
    expect(r.code).toBe(0);
    const v = await runJson<{ ok: boolean }>(['migrate', 'copy', '--from', url, '--to', back, '--verify']);
    expect(v.json.ok).toBe(true);
    const s = new Client({ path: back });
    const after = await answers(s);
    expect(after.retrieved).toEqual((await answers(new Client({ postgres: url }))).retrieved);
    expect(after.memory).toEqual(before.memory);
    await s.close();
    // A store that differs is reported.
    const bad = await verifyCopy({ path: first }, { path: back });
    expect(bad.ok).toBe(false);
    expect(bad.tables.find((t) => t.table === 'chunk')).toMatchObject({ same: false });
  }, 180_000);
});

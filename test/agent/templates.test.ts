/**
 * RAGFlow's own v0.25.6 templates (../shared/reference/agent-templates), loaded as a user would
 * (`client.createAgent({ title, dsl })`, then a session and `ask`), and ragloom's shipped templates
 * (templates/*.json) run offline. Models named inside are re-pointed to a registered model (the
 * loopback OpenAI-compatible server, which scripts the tool calls) or to the built-in one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ApiError, Client } from '../../src/index.js';
import { pythonAvailable } from '../../src/agent/sandbox/index.js';
import { configureDsl, loadTemplate, listTemplates } from '../../src/cli/agent.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SHARED = resolve(HERE, '../../../shared/reference/agent-templates');
const HAVE_SHARED = existsSync(SHARED);
if (!HAVE_SHARED) console.warn(`[templates.test] ${SHARED} is absent: RAGFlow's templates are skipped (CI has ../shared).`);

const MODEL = 'mock@OpenAI-API-Compatible';
let dir: string;
let chat: ChatServer;
let client: Client;
let datasetId: string;
let sqlFile: string;

type Json = Record<string, unknown>;

/** Every `llm_id` in the DSL (components and tools) → `id`. */
function repoint(dsl: Json, id: string): Json {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'llm_id' ? id : walk(x)]));
    return v;
  };
  return walk(dsl) as Json;
}

async function ragflowTemplate(file: string): Promise<{ title: string; dsl: Json }> {
  const t = JSON.parse(await readFile(join(SHARED, file), 'utf8')) as Json;
  const title = typeof t.title === 'string' ? t.title : String((t.title as Json).en);
  return { title, dsl: t.dsl as Json };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-templates-'));
  chat = await startChatServer();
  sqlFile = join(dir, 'shop.sqlite');
  const db = new Database(sqlFile);
  db.exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL);
    INSERT INTO orders (customer, total) VALUES ('ada', 120.5), ('bob', 80), ('ada', 42);`);
  db.close();
  client = new Client({
    path: join(dir, 'kb.db'),
    models: [{ type: 'chat', name: 'mock', factory: 'OpenAI-API-Compatible', base_url: chat.url, api_key: 'x' }],
    agents: { sql_dirs: [dir], code_timeout_ms: 5000 },
  });
  const ds = await client.createDataset({ name: 'papers' });
  datasetId = ds.id;
  const docs = await ds.uploadDocuments([{
    display_name: 'attention.txt',
    blob: new TextEncoder().encode('The Transformer relies entirely on self-attention to compute representations of its input and output.\n\nSelf-attention relates different positions of a single sequence in order to compute a representation of the sequence.\n\nThe SQL schema: table orders(id, customer, total) holds one row per order.'),
  }]);
  await ds.parseDocuments(docs.map((d) => d.id));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await chat?.close();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_SHARED)("RAGFlow's v0.25.6 templates", () => {
  it('trip_planner is refused at create time, naming its web tools', async () => {
    const { title, dsl } = await ragflowTemplate('trip_planner.json');
    const err = await client.createAgent({ title, dsl }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toMatch(/TavilySearch/);
    expect((err as ApiError).message).toMatch(/TavilyExtract/);
    expect((err as ApiError).message).toMatch(/internet/);
    expect(await client.listAgents()).toHaveLength(0);
  });

  it('web_search_assistant is refused at create time, naming every web tool', async () => {
    const { title, dsl } = await ragflowTemplate('web_search_assistant.json');
    const err = (await client.createAgent({ title, dsl }).catch((e: unknown) => e)) as ApiError;
    for (const t of ['Bing', 'DuckDuckGo', 'Google', 'TavilyExtract', 'TavilySearch', 'Wikipedia']) expect(err.message).toContain(t);
  });

  it('title_chunker is refused: an ingestion pipeline, its components named', async () => {
    const { title, dsl } = await ragflowTemplate('title_chunker.json');
    const err = (await client.createAgent({ title, dsl }).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    for (const t of ['File', 'Parser', 'TitleChunker', 'Tokenizer', 'Extractor']) expect(err.message).toContain(t);
    expect(err.message).toMatch(/ingestion-pipeline/);
  });

  it('reflective_academic_paper_generator runs offline: its Retrieval tool searches the dataset, the answer quotes it', async () => {
    const { title, dsl } = await ragflowTemplate('reflective_academic_paper_generator.json');
    const agent = await client.createAgent({ title, dsl: configureDsl(repoint(dsl, 'ragloom-extractive@Builtin'), { datasetIds: [datasetId] }) });
    const session = await agent.createSession();
    const answer = await session.ask('What does the Transformer rely on to compute representations?', { return_trace: true });
    expect(answer.event).toBe('workflow_finished');
    expect(answer.content).toMatch(/self-attention/i);
    expect(answer.reference?.[0]?.document_name).toBe('attention.txt');
    expect(answer.trace?.map((t) => t.component_id)).toEqual(expect.arrayContaining(['begin', 'Message:OrangeYearsShine']));
  });

  it('data_analysis_beginner_assistant runs: the model calls CodeExec, the sandbox runs it', async () => {
    const { title, dsl } = await ragflowTemplate('data_analysis_beginner_assistant.json');
    const agent = await client.createAgent({ title, dsl: repoint(dsl, MODEL) });
    const lang = pythonAvailable() ? 'python' : 'javascript';
    const script = lang === 'python'
      ? 'def main():\n    data = [3, 5, 7, 9]\n    return {"mean": sum(data) / len(data)}\n'
      : 'function main() { const d = [3, 5, 7, 9]; return { mean: d.reduce((a, b) => a + b) / d.length }; }';
    chat.reset();
    chat.script(
      { text: '', toolCalls: [{ id: 't1', name: 'execute_code_0', arguments: JSON.stringify({ lang, script }) }] },
      (body) => ({ text: `Result: ${String(body.messages.find((m) => m.role === 'tool')?.content)}` }),
    );
    const session = await agent.createSession();
    const answer = await session.ask('What is the mean of 3, 5, 7 and 9?');
    expect(answer.content).toMatch(/Result: .*6/);
    expect(chat.requests).toHaveLength(2);
  });

  it('text2sql_data_expert runs against a configured SQLite file', async () => {
    const { title, dsl } = await ragflowTemplate('text2sql_data_expert.json');
    // As shipped it names a MySQL database: refused at create, with how to fix it.
    const err = (await client.createAgent({ title, dsl: repoint(dsl, MODEL) }).catch((e: unknown) => e)) as ApiError;
    expect(err.message).toMatch(/ExeSQL \(db_type 'mysql'\)/);
    const configured = configureDsl(repoint(dsl, MODEL), { datasetIds: [datasetId] });
    const exe = (configured.components as Record<string, { obj: { component_name: string; params: Json } }>);
    for (const c of Object.values(exe)) if (c.obj.component_name === 'ExeSQL') Object.assign(c.obj.params, { db_type: 'sqlite', database: sqlFile });
    const agent = await client.createAgent({ title, dsl: configured });
    chat.reset();
    chat.script({ text: '```sql\nSELECT customer, SUM(total) AS spent FROM orders GROUP BY customer ORDER BY customer;\n```' });
    const session = await agent.createSession();
    const answer = await session.ask('How much did each customer spend?');
    expect(answer.content).toContain('| customer');
    expect(answer.content).toContain('162.5');
    // The model saw the retrieved schema (three Retrieval components ran before it).
    expect(String(chat.requests[0]!.body.messages.map((m) => m.content).join('\n'))).toMatch(/table orders/);
    // Read-only: a statement that writes is refused and the file is unchanged.
    chat.script({ text: 'DELETE FROM orders;' });
    const refused = await session.ask('delete everything');
    expect(refused.event).not.toBe('workflow_finished');
    const db = new Database(sqlFile, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM orders').get()).toEqual({ n: 3 });
    db.close();
  });
});

describe("ragloom's shipped templates run offline", () => {
  it('lists them', async () => {
    expect((await listTemplates()).map((t) => t.name)).toEqual(['categorising_dispatcher', 'dataset_chatbot', 'user_interaction_form']);
  });

  it('dataset_chatbot answers from the dataset with sources', async () => {
    const t = await loadTemplate('dataset_chatbot');
    const agent = await client.createAgent({ title: t.title, dsl: configureDsl(t.dsl, { datasetIds: [datasetId] }) });
    const session = await agent.createSession();
    expect(session.message[0]!.content).toBe('Hi! Ask me anything about your documents.');
    const a = await session.ask('What does self-attention relate?');
    expect(a.content).toMatch(/different positions of a single sequence/);
    expect(a.reference?.length).toBeGreaterThan(0);
  });

  it('categorising_dispatcher routes by category offline', async () => {
    const t = await loadTemplate('categorising_dispatcher');
    const agent = await client.createAgent({ title: t.title, dsl: configureDsl(t.dsl, { datasetIds: [datasetId] }) });
    const session = await agent.createSession();
    expect((await session.ask('I was charged twice for my order, I want a refund')).content).toMatch(/order or billing question \(order_and_billing\)/);
    expect((await session.ask('This is unacceptable, your support never answers and I am very disappointed')).content).toMatch(/sorry about your experience/);
    expect((await session.ask('What does the Transformer rely on?')).content).toMatch(/self-attention/i);
  });

  it('user_interaction_form pauses for the form and resumes with inputs', async () => {
    const t = await loadTemplate('user_interaction_form');
    const agent = await client.createAgent({ title: t.title, dsl: configureDsl(t.dsl, { datasetIds: [datasetId] }) });
    const session = await agent.createSession();
    const paused = await session.ask('a question about attention');
    expect(paused.event).toBe('user_inputs');
    expect(Object.keys(paused.inputs ?? {})).toEqual(['name', 'email', 'topic']);
    expect(paused.tips).toContain('a question about attention');
    const done = await session.ask('', { inputs: { name: { value: 'Ada' }, email: { value: 'ada@example.org' }, topic: { value: 'What does self-attention relate?' } } });
    expect(done.event).toBe('workflow_finished');
    expect(done.content).toMatch(/^Thanks Ada! We will reply to ada@example.org\./);
    expect(done.content).toMatch(/different positions/);
    // The session kept every turn, across close and reopen.
    await client.close();
    client = new Client({
      path: join(dir, 'kb.db'),
      models: [{ type: 'chat', name: 'mock', factory: 'OpenAI-API-Compatible', base_url: chat.url, api_key: 'x' }],
      agents: { sql_dirs: [dir], code_timeout_ms: 5000 },
    });
    const again = (await (await client.getAgent(agent.id)).listSessions({ id: session.id }))[0]!;
    expect(again.message.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(again.message[4]!.content).toMatch(/^Thanks Ada!/);
  });
});

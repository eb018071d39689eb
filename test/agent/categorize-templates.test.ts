/**
 * Every RAGFlow v0.25.6 template with a Categorize (test/agent/fixtures/ragflow-0.25.6), run as a
 * user runs it, once per category, with a model (the loopback OpenAI-compatible stand-in) that
 * answers the bare category name — as a model does: no trailing space, its own capitals. The run
 * must take that category's branch. customer_feedback_dispatcher names one category
 * `"Negative review "` (with a trailing space): a model answering `Negative review` matched
 * nothing there and every complaint went down the positive branch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { categoryInAnswer } from '../../src/agent/components/categorize.js';
import { startChatServer, type ChatRequestBody, type ChatServer } from '../support/chat-server.js';

type Json = Record<string, unknown>;
interface Component { obj: { component_name: string; params: Json }; downstream: string[] }

const FIXTURES = join(import.meta.dirname, 'fixtures', 'ragflow-0.25.6');
const MODEL = 'mock@OpenAI-API-Compatible';
const MIRROR = '/work/.mirror/infiniflow+ragflow/repo';

const templates = readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).map((file) => {
  const t = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as { title: Json | string; dsl: { components: Record<string, Component> } };
  return { file, title: typeof t.title === 'string' ? t.title : String(t.title.en), dsl: t.dsl };
});

const categorizers = (dsl: { components: Record<string, Component> }) =>
  Object.entries(dsl.components).filter(([, c]) => c.obj.component_name === 'Categorize');

/** The DSL with every model re-pointed to the stand-in and every Retrieval to the test's dataset. */
function configured(dsl: Json, datasetId: string): Json {
  const copy = structuredClone(dsl) as { components: Record<string, Component> };
  for (const c of Object.values(copy.components)) {
    const p = c.obj.params;
    if ('llm_id' in p) p.llm_id = MODEL;
    if (c.obj.component_name === 'Retrieval') p.kb_ids = [datasetId];
  }
  return copy as unknown as Json;
}

const isClassification = (b: ChatRequestBody) =>
  b.messages.some((m) => m.role === 'system' && String(m.content).includes('classification system'));

let dir: string;
let chat: ChatServer;
let client: Client;
let datasetId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-categorize-'));
  chat = await startChatServer();
  client = new Client({ path: join(dir, 'kb.db'), models: [{ type: 'chat', name: 'mock', factory: 'OpenAI-API-Compatible', base_url: chat.url, api_key: 'x' }] });
  const ds = await client.createDataset({ name: 'products' });
  const docs = await ds.uploadDocuments([{ display_name: 'manual.txt', blob: new TextEncoder().encode('To clean the X100, unplug it and wipe it with a dry cloth. Installation appointments can be booked online.') }]);
  await ds.parseDocuments(docs.map((d) => d.id));
  datasetId = ds.id;
}, 60_000);

afterAll(async () => {
  await client?.close();
  await chat?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('categoryInAnswer()', () => {
  it('trims and case-folds the names: "Negative review " is named by "negative Review"', () => {
    expect(categoryInAnswer('Negative review', ['Negative review ', 'Positive review'])).toBe('Negative review ');
    expect(categoryInAnswer('  NEGATIVE REVIEW.\n', ['Negative review ', 'Positive review'])).toBe('Negative review ');
  });
  it('counts an occurrence for the longest name that contains it', () => {
    expect(categoryInAnswer('Refund request', ['Refund', 'Refund request'])).toBe('Refund request');
    expect(categoryInAnswer('Refund request', ['Refund request', 'Refund'])).toBe('Refund request');
    expect(categoryInAnswer('Refund, not a refund request', ['Refund', 'Refund request'])).toBe('Refund');
  });
  it('the most mentioned wins, the first on a tie; none named: undefined', () => {
    expect(categoryInAnswer('billing? no: technical, technical', ['billing', 'technical'])).toBe('technical');
    expect(categoryInAnswer('billing or technical', ['billing', 'technical'])).toBe('billing');
    expect(categoryInAnswer('Other', ['billing', 'technical'])).toBeUndefined();
    expect(categoryInAnswer('anything', ['  ', 'billing'])).toBeUndefined();
  });
});

describe('the fixtures are every v0.25.6 template with a Categorize', () => {
  const mirrored = existsSync(MIRROR);
  if (!mirrored) console.warn(`[categorize-templates] ${MIRROR} is absent: the fixtures are not compared with RAGFlow's tree`);
  it.skipIf(!mirrored)('the same files, byte for byte', () => {
    const git = (...a: string[]) => spawnSync('git', ['-C', MIRROR, ...a], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
    const all = git('ls-tree', '--name-only', 'v0.25.6', 'agent/templates/').trim().split('\n').filter((f) => f.endsWith('.json'));
    const withCategorize = all.filter((f) => git('show', `v0.25.6:${f}`).includes('"component_name": "Categorize"'));
    expect(withCategorize.map((f) => f.split('/').pop()).sort()).toEqual(templates.map((t) => t.file).sort());
    for (const t of templates) expect(git('show', `v0.25.6:agent/templates/${t.file}`), t.file).toBe(readFileSync(join(FIXTURES, t.file), 'utf8'));
  });
  it('each has at least one Categorize', () => {
    for (const t of templates) expect(categorizers(t.dsl).length, t.file).toBeGreaterThan(0);
  });
});

describe.each(templates)('$file', ({ title, dsl }) => {
  // Every path through the template's Categorize components: one answer per Categorize met.
  const [firstId, first] = categorizers(dsl).find(([id]) => !categorizers(dsl).some(([, c]) => c.downstream.includes(id)))!;
  const paths: Array<{ name: string; answers: string[]; expect: string[] }> = [];
  const walk = (id: string, c: Component, answers: string[], visits: string[]) => {
    for (const [name, v] of Object.entries(c.obj.params.category_description as Record<string, { to: string[] }>)) {
      const next = v.to.map((to) => [to, dsl.components[to]!] as const);
      const nested = next.find(([, n]) => n.obj.component_name === 'Categorize');
      const bare = name.trim();
      if (nested) walk(nested[0], nested[1], [...answers, bare], [...visits, ...v.to]);
      else paths.push({ name: [...answers, bare].join(' → '), answers: [...answers, bare], expect: [...visits, ...v.to] });
    }
  };
  walk(firstId, first, [], []);

  it.each(paths)('a model answering "$name" takes that branch', async ({ answers, expect: reached }) => {
    const agent = await client.createAgent({ title: `${title} ${answers.join(' / ')}`, dsl: configured(dsl as unknown as Json, datasetId) });
    const queue = [...answers];
    chat.reset();
    chat.script(...Array.from({ length: 20 }, () => (body: ChatRequestBody) => (isClassification(body) ? { text: queue.shift() ?? 'none' } : {})));
    const session = await agent.createSession();
    const m = await session.ask('The product broke after two days and I want a new one.', {
      return_trace: true, inputs: { customer_review: { value: 'The product broke after two days and I want a new one.' } },
    });
    expect(queue, 'every Categorize asked the model').toEqual([]);
    const ran = (m.trace ?? []).map((t) => t.component_id);
    for (const id of reached) expect(ran, `${id} ran`).toContain(id);
    // No other branch of the Categorize components ran.
    const branches = categorizers(dsl).flatMap(([, c]) => Object.values(c.obj.params.category_description as Record<string, { to: string[] }>).flatMap((v) => v.to));
    for (const id of branches.filter((b) => !reached.includes(b))) expect(ran, `${id} did not run`).not.toContain(id);
    // The template's answer: a Message ran after the branch and said something.
    expect(ran.some((id) => id.startsWith('Message:')), 'a Message ran').toBe(true);
    expect(m.content).not.toBe('');
  }, 60_000);
});

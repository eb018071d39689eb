/**
 * LLM and Agent components (RAGFlow `agent/component/llm.py`, `agent_with_tools.py`).
 *
 * Both render their prompts from references, call a model through `ChatModel`, and write
 * `content` (or `structured` when an output schema is set). When a Message follows, `content` is
 * a lazy text the Message streams. An Agent with tools runs the function-calling loop (at most
 * `max_rounds` rounds of tool calls) with Retrieval, CodeExec, ExeSQL, Invoke and sub-Agents as
 * tools.
 *
 * With a model that cannot write (the built-in extractive one), the components stay useful
 * offline: the answer is quoted from the run's retrieved chunks and from the component's inputs
 * (the upstream outputs its prompt refers to), and an Agent runs its Retrieval tools itself with
 * the question instead of waiting for tool calls it will never get.
 */
import type { ChatMessage, ChatModel, ChatOptions, KnowledgeItem, ToolCall, ToolSpec } from '../../llm/index.js';
import type { Canvas } from '../canvas.js';
import { asText, lazyText, materialize } from '../canvas.js';
import { Node, type ComponentImpl, type InputElement, type Params } from '../node.js';
import { isPlainObject } from '../../util/index.js';
import { TOOL_COMPONENTS, toolSpec } from './tools.js';

const CITATION_PROMPT = `

# Citations
- Cite the knowledge you used with its ID, as [ID:n], at the end of the sentence it supports.
- Cite only IDs that appear in the knowledge; do not cite when nothing supports the sentence.`;

/** True for a model that quotes instead of writing (no tools, no rewriting). */
export function isExtractive(m: ChatModel): boolean {
  const c = m.capabilities;
  return !!c && c.tools === false && c.rewrite === false;
}

function num(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

/** Sampling settings, only those the DSL switched on (RAGFlow `gen_conf`). */
export function genConf(p: Params): ChatOptions {
  const conf: ChatOptions = {};
  if (num(p.max_tokens) > 0 && p.maxTokensEnabled) conf.max_tokens = Math.floor(num(p.max_tokens));
  if (num(p.temperature) > 0 && p.temperatureEnabled) conf.temperature = num(p.temperature);
  if (num(p.top_p) > 0 && p.topPEnabled) conf.top_p = num(p.top_p);
  if (num(p.presence_penalty) > 0 && p.presencePenaltyEnabled) conf.presence_penalty = num(p.presence_penalty);
  if (num(p.frequency_penalty) > 0 && p.frequencyPenaltyEnabled) conf.frequency_penalty = num(p.frequency_penalty);
  return conf;
}

function prompts(n: Node): Array<{ role: string; content: string }> {
  const p = n.params.prompts;
  if (typeof p === 'string') return [{ role: 'user', content: p }];
  if (Array.isArray(p) && p.length) return p.filter(isPlainObject).map((x) => ({ role: String(x.role ?? 'user'), content: String(x.content ?? '') }));
  return [{ role: 'user', content: '{sys.query}' }];
}

function llmInputElements(n: Node, c: Canvas): Record<string, InputElement> {
  const res = c.inputElementsFromText(n, String(n.param('sys_prompt') ?? ''));
  for (const p of prompts(n)) Object.assign(res, c.inputElementsFromText(n, p.content));
  return res;
}

function replaceRefs(text: string, args: Record<string, string>): string {
  let out = text;
  for (const [k, v] of Object.entries(args)) out = out.split(`{${k}}`).join(v);
  return out;
}

/** An output schema with properties (`outputs.structured`), if any. */
function outputSchema(n: Node): Record<string, unknown> | undefined {
  const s = n.params.outputs?.structured as unknown;
  if (!isPlainObject(s)) return undefined;
  if (isPlainObject(s.properties) && Object.keys(s.properties).length) return s;
  for (const k of ['schema', 'structured']) {
    const inner = s[k];
    if (isPlainObject(inner) && isPlainObject(inner.properties) && Object.keys(inner.properties).length) return inner;
  }
  return undefined;
}

/** The JSON object in a model's answer (fences, `<think>` and prose around it tolerated). */
export function parseJsonAnswer(ans: string): unknown {
  let s = ans.replace(/^[\s\S]*<\/think>/, '').trim();
  const fence = /```(?:json)?\s*([\s\S]*?)```/.exec(s);
  if (fence) s = fence[1]!.trim();
  try {
    return JSON.parse(s);
  } catch {
    const a = s.indexOf('{');
    const b = s.lastIndexOf('}');
    if (a >= 0 && b > a) return JSON.parse(s.slice(a, b + 1));
    throw new Error("The answer can't be parsed as JSON");
  }
}

interface Prepared {
  system: string;
  messages: ChatMessage[];
  /** Inputs by reference, as text (for the offline answer). */
  args: Record<string, string>;
  elements: Record<string, InputElement>;
}

async function prepare(n: Node, c: Canvas): Promise<Prepared> {
  const elements = llmInputElements(n, c);
  const args: Record<string, string> = {};
  for (const [k, el] of Object.entries(elements)) {
    args[k] = asText(await materialize(el.value));
    n.setInput(k, args[k]);
  }
  const window = Math.max(0, Math.floor(num(n.param('message_history_window_size') ?? 13)));
  const msgs = c.getHistory(window).slice(0, -1) as ChatMessage[];
  for (const p of prompts(n)) {
    if (msgs.length && msgs[msgs.length - 1]!.role === p.role) continue;
    msgs.push({ role: p.role as ChatMessage['role'], content: replaceRefs(p.content, args) });
  }
  let system = replaceRefs(String(n.param('sys_prompt') ?? ''), args);
  // RAGFlow's prompt sections for its own planner; not instructions to the model.
  system = system.replace(/<(TASK_ANALYSIS|PLAN_GENERATION|REFLECTION|CONTEXT_SUMMARY|CONTEXT_RANKING|CITATION_GUIDELINES)>[\s\S]*?<\/\1>/gi, '');
  if (n.param('cite') !== false && Object.keys(c.getReference().chunks).length) system += CITATION_PROMPT;
  n.shownInputs = { ...args };
  return { system, messages: msgs, args, elements };
}

/** The run's retrieved chunks, numbered as the reference holds them. */
function referenceKnowledge(c: Canvas): KnowledgeItem[] {
  return Object.values(c.getReference().chunks).map((ck, i) => {
    const item: KnowledgeItem = { id: i, title: String(ck.document_name ?? ''), content: String(ck.content ?? '') };
    // What retrieval knows of the chunk weighs its sentences, as in a chat.
    for (const k of ['similarity', 'term_similarity', 'vector_similarity'] as const) if (typeof ck[k] === 'number' && Number.isFinite(ck[k])) item[k] = ck[k];
    return item;
  });
}

/**
 * What the extractive model may quote: the run's chunks, then each input that is not the
 * question itself and did not come from a Retrieval (whose chunks are already there).
 */
function offlineKnowledge(c: Canvas, prep: Prepared): KnowledgeItem[] {
  const items = referenceKnowledge(c);
  const query = asText(c.globals['sys.query']).trim();
  for (const [k, el] of Object.entries(prep.elements)) {
    const text = prep.args[k]?.trim() ?? '';
    if (!text || text === query || k.startsWith('sys.')) continue;
    if (el.cpnId && c.nodes.get(el.cpnId)?.kind === 'retrieval') continue;
    items.push({ id: items.length, title: el.name, content: text });
  }
  return items;
}

/**
 * The question an offline answer is about: the component's user prompt with its short inputs
 * filled in and long ones (retrieved text, documents) left out — they are the knowledge, not the
 * question; else the user's query.
 */
function offlineQuestion(n: Node, c: Canvas, prep: Prepared, override?: string): string {
  if (override) return override;
  const template = prompts(n).filter((p) => p.role === 'user').map((p) => p.content).pop() ?? '';
  const short: Record<string, string> = {};
  for (const [k, v] of Object.entries(prep.args)) short[k] = v.length <= 300 ? v : '';
  const q = replaceRefs(template, short).replace(/^#+\s.*$/gm, '').trim();
  return /[\p{L}\p{N}]/u.test(q) ? q : asText(c.globals['sys.query']).trim();
}

function offlineMessages(question: string): ChatMessage[] {
  return [{ role: 'system', content: '' }, { role: 'user', content: question }];
}

function hasMessageDownstream(n: Node, c: Canvas): boolean {
  const goto = n.param('exception_method') && n.param('exception_goto');
  return !goto && n.downstream.some((d) => c.nodes.get(d)?.kind === 'message');
}

/** Streams a model's answer, `<think>` sections marked as RAGFlow's LLM does. */
async function* streamAnswer(model: ChatModel, messages: ChatMessage[], opts: ChatOptions): AsyncGenerator<string> {
  let thinking = false;
  for await (const d of model.stream(messages, opts)) {
    if (d.reasoning) {
      if (!thinking) {
        thinking = true;
        yield '<think>';
      }
      yield d.reasoning;
      continue;
    }
    if (d.content) {
      if (thinking) {
        thinking = false;
        yield '</think>';
      }
      yield d.content;
    }
  }
  if (thinking) yield '</think>';
}

async function structuredAnswer(n: Node, c: Canvas, model: ChatModel, prep: Prepared, schema: Record<string, unknown>): Promise<void> {
  const system = `${prep.system}\n\nAnswer with a JSON object only, no prose, following this JSON schema:\n${JSON.stringify(schema, null, 2)}`;
  const msgs: ChatMessage[] = [{ role: 'system', content: system }, ...prep.messages];
  let error = '';
  const tries = Math.max(1, Math.floor(num(n.param('max_retries'))) + 1);
  for (let i = 0; i < tries; i++) {
    const r = await model.chat(msgs, { ...genConf(n.params), json: true, signal: c.signal });
    try {
      n.setOutput('structured', parseJsonAnswer(r.content));
      return;
    } catch (e) {
      error = (e as Error).message;
      msgs.push({ role: 'assistant', content: r.content }, { role: 'user', content: "The answer can't be parsed as JSON" });
    }
  }
  throw new Error(error);
}

async function answer(n: Node, c: Canvas, model: ChatModel, prep: Prepared, question?: string): Promise<void> {
  const schema = outputSchema(n);
  if (isExtractive(model)) {
    const knowledge = offlineKnowledge(c, prep);
    const q = offlineQuestion(n, c, prep, question);
    const unknown = c.unknownTerms();
    // A question naming what no retrieved dataset mentions is declined, as in a chat.
    const opts: ChatOptions = { knowledge, signal: c.signal, empty_response: '', ...(unknown?.length ? { unknown_terms: unknown } : {}) };
    if (schema) {
      // Offline, a schema is filled with the quoted answer in its first string property.
      const r = await model.chat(offlineMessages(q), opts);
      const first = Object.entries(schema.properties as Record<string, { type?: string }>).find(([, v]) => !v?.type || v.type === 'string')?.[0];
      n.setOutput('structured', first ? { [first]: r.content } : {});
      return;
    }
    if (hasMessageDownstream(n, c)) {
      n.setOutput('content', lazyText(() => streamAnswer(model, offlineMessages(q), opts), (t) => n.setOutput('content', t)));
      return;
    }
    n.setOutput('content', (await model.chat(offlineMessages(q), opts)).content);
    return;
  }
  if (schema) return structuredAnswer(n, c, model, prep, schema);
  const messages: ChatMessage[] = [{ role: 'system', content: prep.system }, ...prep.messages];
  const opts: ChatOptions = { ...genConf(n.params), signal: c.signal };
  if (hasMessageDownstream(n, c)) {
    n.setOutput('content', lazyText(() => streamAnswer(model, messages, opts), (t) => n.setOutput('content', t.replace(/<\/?think>/g, ''))));
    return;
  }
  n.setOutput('content', (await model.chat(messages, opts)).content);
}

export const LLM: ComponentImpl = {
  inputElements: llmInputElements,
  async invoke(n, c) {
    const model = c.deps.chatModel(String(n.param('llm_id') ?? ''));
    const prep = await prepare(n, c);
    await answer(n, c, model, prep);
  },
};

// ------------------------------------------------------------------ Agent

interface BoundTool {
  name: string;
  node: Node;
  spec: ToolSpec;
}

/** The Agent's tools as nodes of their own (`{agent_id}-->{name}`), with OpenAI function specs. */
function bindTools(n: Node, c: Canvas): BoundTool[] {
  const tools = Array.isArray(n.params.tools) ? n.params.tools : [];
  return tools.filter(isPlainObject).map((t, i) => {
    const type = String(t.component_name);
    const impl = type === 'Agent' ? AGENT : TOOL_COMPONENTS[type];
    if (!impl) throw new Error(`${type} is not a tool ragloom can run.`);
    const params = (isPlainObject(t.params) ? JSON.parse(JSON.stringify(t.params)) : {}) as Params;
    const id = `${n.id}-->${String(t.name ?? type).replace(/ /g, '_')}`;
    const node = new Node(id, type, params, [], [], undefined, impl);
    const spec = toolSpec(type, params, `${type === 'Agent' ? String(t.name ?? 'agent').replace(/\W+/g, '_') : defaultToolName(type)}_${i}`);
    return { name: spec.function.name, node, spec };
  });
}

function defaultToolName(type: string): string {
  return ({ Retrieval: 'search_my_dateset', CodeExec: 'execute_code', ExeSQL: 'execute_sql', Invoke: 'invoke_http' } as Record<string, string>)[type] ?? type.toLowerCase();
}

/** Calls one tool and gives the model its result as text. */
async function callTool(c: Canvas, agent: Node, tool: BoundTool, call: ToolCall): Promise<string> {
  const t0 = performance.now();
  let args: Record<string, unknown> = {};
  let result: string;
  try {
    const parsed = call.function.arguments ? JSON.parse(call.function.arguments) : {};
    if (!isPlainObject(parsed)) throw new Error(`Tool arguments for ${tool.name} must be an object`);
    args = parsed;
    tool.node.reset(true);
    await c.invoke(tool.node, args);
    const err = tool.node.error();
    if (err) result = `Error: ${err}`;
    else {
      const out = tool.node.outputs();
      const main = out.formalized_content ?? out.content ?? out.result ?? Object.fromEntries(Object.entries(out).filter(([k]) => !k.startsWith('_')));
      result = asText(await materialize(main));
    }
  } catch (e) {
    result = `Error: ${(e as Error).message}`;
  }
  recordToolCall(c, agent, tool.name, args, result, (performance.now() - t0) / 1000);
  return result;
}

function recordToolCall(c: Canvas, agent: Node, name: string, args: unknown, result: unknown, elapsed: number): void {
  const root = agent.id.split('-->')[0]!;
  let entry = c.toolTrace.find((t) => t.component_id === root);
  if (!entry) c.toolTrace.push((entry = { component_id: root, trace: [] }));
  const path = [c.componentName(root) || root, ...agent.id.split('-->').slice(1)].join('-->');
  entry.trace.push({ path, tool_name: name, arguments: args, result, elapsed_time: elapsed });
  const calls = (agent.output('_tool_calls') as unknown[]) || [];
  agent.setOutput('_tool_calls', [...(Array.isArray(calls) ? calls : []), { tool_name: name, arguments: args, result, elapsed_time: elapsed }]);
}

/** The function-calling loop; yields the final answer's text as it streams. */
async function* toolLoop(n: Node, c: Canvas, model: ChatModel, tools: BoundTool[], prep: Prepared): AsyncGenerator<string> {
  const rounds = Math.max(1, Math.floor(num(n.param('max_rounds') ?? 5)) || 5);
  const messages: ChatMessage[] = [{ role: 'system', content: prep.system }, ...prep.messages];
  const conf = genConf(n.params);
  for (let round = 0; round <= rounds; round++) {
    const offer = round < rounds ? tools.map((t) => t.spec) : undefined;
    let text = '';
    let calls: ToolCall[] = [];
    for await (const d of model.stream(messages, { ...conf, tools: offer, signal: c.signal })) {
      if (d.tool_calls?.length) calls = d.tool_calls;
      if (d.content) {
        text += d.content;
        if (!calls.length) yield d.content;
      }
    }
    if (!calls.length) return;
    messages.push({ role: 'assistant', content: text, tool_calls: calls });
    const results = await Promise.all(calls.map((call) => {
      const tool = tools.find((t) => t.name === call.function.name);
      if (!tool) return Promise.resolve(`Error: there is no tool named ${call.function.name}`);
      return callTool(c, n, tool, call);
    }));
    calls.forEach((call, i) => messages.push({ role: 'tool', content: results[i]!, tool_call_id: call.id, name: call.function.name }));
  }
}

/** Offline: run each Retrieval tool with the question, so its chunks can be quoted. */
async function offlineTools(n: Node, c: Canvas, tools: BoundTool[], question: string): Promise<void> {
  for (const t of tools) {
    if (t.node.kind !== 'retrieval') continue;
    await callTool(c, n, t, { id: `offline-${t.name}`, type: 'function', function: { name: t.name, arguments: JSON.stringify({ query: question }) } });
  }
}

const AGENT: ComponentImpl = {
  inputElements: llmInputElements,
  async invoke(n, c, kwargs) {
    if (kwargs.user_prompt) {
      // Called as a tool by a supervising Agent.
      let p = '';
      if (kwargs.reasoning) p += `\nREASONING:\n${asText(kwargs.reasoning)}\n`;
      if (kwargs.context) p += `\nCONTEXT:\n${asText(kwargs.context)}\n`;
      p = p ? `${p}\nQUERY:\n${asText(kwargs.user_prompt)}\n` : asText(kwargs.user_prompt);
      n.params.prompts = [{ role: 'user', content: p }];
    }
    const model = c.deps.chatModel(String(n.param('llm_id') ?? ''));
    const tools = bindTools(n, c);
    const prep = await prepare(n, c);
    const question = kwargs.user_prompt ? asText(kwargs.user_prompt) : undefined;
    if (!tools.length) return answer(n, c, model, prep, question);
    if (isExtractive(model) || model.capabilities?.tools === false) {
      await offlineTools(n, c, tools, offlineQuestion(n, c, prep, question));
      return answer(n, c, model, prep, question);
    }
    const schema = outputSchema(n);
    if (hasMessageDownstream(n, c) && !schema) {
      n.setOutput('content', lazyText(() => toolLoop(n, c, model, tools, prep), (t) => n.setOutput('content', t)));
      return;
    }
    let text = '';
    for await (const piece of toolLoop(n, c, model, tools, prep)) text += piece;
    if (schema) {
      try {
        n.setOutput('structured', parseJsonAnswer(text));
      } catch {
        await structuredAnswer(n, c, model, { ...prep, messages: [...prep.messages, { role: 'assistant', content: text }, { role: 'user', content: 'Give the answer above as JSON.' }] }, schema);
      }
      return;
    }
    n.setOutput('content', text);
  },
};

export { AGENT as Agent };

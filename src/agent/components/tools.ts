/**
 * Components that are also tools an Agent can call: Retrieval (hybrid search over the tenant's
 * datasets), CodeExec (the sandbox), ExeSQL (read-only SQLite files) and Invoke (HTTP to an
 * allowed endpoint). As canvas nodes they read their parameters; as tools, the model's arguments.
 */
import type { ToolSpec } from '../../llm/index.js';
import type { Canvas } from '../canvas.js';
import { asText, materialize } from '../canvas.js';
import type { ComponentImpl, Node } from '../node.js';
import type { CanvasChunk } from '../types.js';
import { isPlainObject } from '../../util/index.js';
import { execSql, invokeHttp, type InvokeVariable } from '../ops/index.js';
import { resolver } from './resolve.js';

function num(v: unknown, dflt: number): number {
  const n = Number(v);
  return v === undefined || v === null || v === '' || !Number.isFinite(n) ? dflt : n;
}

/** A parameter that may be a reference (`sys.query`, `Cpn:X@out`) or a text with references. */
async function paramValue(n: Node, c: Canvas, v: unknown): Promise<unknown> {
  if (typeof v !== 'string') return v;
  if (v && c.isRef(v)) return materialize(c.getVariableValue(v));
  return c.render(n, v);
}

/** RAGFlow's `kb_prompt`: numbered passages with their document. */
export function formalize(chunks: CanvasChunk[]): string {
  return chunks
    .map((ck, i) => `\nID: ${i}\n├── Title: ${String(ck.document_name ?? '').replace(/\n+/g, ' ')}\n└── Content:\n${ck.content}`)
    .join('\n');
}

/**
 * RAGFlow's RetrievalParam.check: the threshold and the keyword weight are numbers in [0, 1], top_n
 * a positive number (absent: the defaults below), in RAGFlow's words.
 */
export function checkRetrievalParams(params: Record<string, unknown>): void {
  const shown = (v: unknown) => (v === true ? 'True' : v === false ? 'False' : v === null ? 'None' : String(v));
  const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const fraction = (k: string, what: string) => {
    const v = params[k];
    if (v !== undefined && (!isNum(v) || v < 0 || v > 1)) throw new Error(`[Retrieval] ${what} ${shown(v)} not supported, should be a float number in range [0, 1]`);
  };
  fraction('similarity_threshold', 'Similarity threshold');
  fraction('keywords_similarity_weight', 'Keyword similarity weight');
  const topN = params.top_n;
  if (topN !== undefined && (!isNum(topN) || topN <= 0)) throw new Error(`[Retrieval] Top N ${shown(topN)} not supported, should be positive numeric`);
}

const RETRIEVAL: ComponentImpl = {
  async invoke(n, c, kwargs) {
    checkRetrievalParams(n.params);
    const q = kwargs.query !== undefined ? kwargs.query : await paramValue(n, c, n.param('query') ?? 'sys.query');
    const query = asText(q).trim();
    n.setInput('query', query);
    const raw = (n.param<unknown[]>('dataset_ids')?.length ? n.param<unknown[]>('dataset_ids') : n.param<unknown[]>('kb_ids')) ?? [];
    const ids: string[] = [];
    for (const id of Array.isArray(raw) ? raw : [raw]) {
      const v = typeof id === 'string' && c.isRef(id) ? c.getVariableValue(id) : id;
      for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string' && x) ids.push(x);
    }
    const empty = String(n.param('empty_response') ?? '');
    if (!query || !ids.length) {
      n.setOutput('formalized_content', empty);
      n.setOutput('json', []);
      return;
    }
    const kw = num(n.param('keywords_similarity_weight'), 0.5);
    const { chunks, doc_aggs, unknown } = await c.deps.retrieve({
      dataset_ids: ids,
      question: query,
      similarity_threshold: num(n.param('similarity_threshold'), 0.2),
      vector_similarity_weight: 1 - kw,
      top_n: Math.max(1, Math.floor(num(n.param('top_n'), 8))),
      top_k: Math.max(1, Math.floor(num(n.param('top_k'), 1024))),
      rerank_id: String(n.param('rerank_id') ?? '') || undefined,
      signal: c.signal,
    });
    n.setOutput('json', chunks);
    if (!chunks.length) {
      n.setOutput('formalized_content', empty);
      return;
    }
    c.addReference(chunks, doc_aggs, unknown);
    n.setOutput('formalized_content', formalize(chunks));
  },
};

/** Outputs CodeExec itself writes; the others are the script's (its returned object's keys). */
const CODE_SYSTEM_OUTPUTS = new Set(['content', 'attachments', 'raw_result', 'actual_type']);

const CODE_EXEC: ComponentImpl = {
  async invoke(n, c, kwargs) {
    const lang = String(kwargs.lang ?? n.param('lang') ?? 'python');
    const script = String(kwargs.script ?? n.param('script') ?? '');
    if (!script.trim()) throw new Error('Script does not support empty value.');
    const args: Record<string, unknown> = {};
    const declared = isPlainObject(n.params.arguments) ? n.params.arguments : {};
    for (const [k, v] of Object.entries(declared)) {
      if (kwargs[k]) args[k] = kwargs[k];
      else args[k] = typeof v === 'string' && v ? await materialize(c.isRef(v) ? c.getVariableValue(v) : await c.render(n, v)) : null;
    }
    n.shownInputs = { lang, script, arguments: args };
    const r = await c.deps.runCode({
      lang: lang === 'nodejs' ? 'javascript' : lang === 'python3' ? 'python' : (lang as 'python' | 'javascript'),
      code: script, args, signal: c.signal, timeoutMs: c.deps.codeTimeoutMs, memoryMb: c.deps.codeMemoryMb,
    });
    if (!r.ok) throw new Error(r.error || r.stderr || 'Code execution failed.');
    const result = r.result;
    n.setOutput('raw_result', result ?? null);
    const business = Object.keys(n.params.outputs ?? {}).filter((k) => !k.startsWith('_') && !CODE_SYSTEM_OUTPUTS.has(k));
    if (isPlainObject(result) && business.some((k) => k in result)) {
      for (const k of business) if (k in result) n.setOutput(k, result[k]);
    } else if (business.length) n.setOutput(business[0]!, result ?? null);
    else n.setOutput('result', result ?? null);
    n.setOutput('content', [typeof result === 'string' ? result : asText(result), r.stdout.trim()].filter(Boolean).join('\n\n'));
    n.setOutput('attachments', []);
  },
};

const EXE_SQL: ComponentImpl = {
  async invoke(n, c, kwargs) {
    const sql = asText(kwargs.sql !== undefined ? kwargs.sql : await paramValue(n, c, n.param('sql') ?? ''));
    n.setInput('sql', sql);
    if (!c.deps.sqlDirs.length) {
      throw new Error('ExeSQL is not enabled: give the agent runtime the directories of the SQLite files it may read (agent_sql_dirs).');
    }
    const r = await execSql({
      database: String(n.param('database') ?? ''),
      db_type: String(n.param('db_type') ?? 'sqlite'),
      sql,
      max_records: Math.max(1, Math.floor(num(n.param('max_records'), 1024))),
      readonly: true,
      allowedDirs: [...c.deps.sqlDirs],
    });
    n.setOutput('formalized_content', r.formalized_content);
    n.setOutput('json', r.json);
  },
};

const INVOKE: ComponentImpl = {
  async invoke(n, c, kwargs) {
    const resolve = await resolver(n, c);
    const r = await invokeHttp({
      url: String(n.param('url') ?? ''),
      method: String(n.param('method') ?? 'get'),
      headers: n.param('headers') as Record<string, unknown> | string | undefined,
      variables: (Array.isArray(n.params.variables) ? n.params.variables : []) as InvokeVariable[],
      timeout: num(n.param('timeout'), 60),
      clean_html: !!n.param('clean_html'),
      datatype: String(n.param('datatype') ?? 'json'),
    }, { allow: [...c.deps.invokeAllow], signal: c.signal, resolve, inputs: kwargs });
    n.setOutput('result', r.result);
  },
};

export const TOOL_COMPONENTS: Record<string, ComponentImpl> = {
  Retrieval: RETRIEVAL,
  CodeExec: CODE_EXEC,
  ExeSQL: EXE_SQL,
  Invoke: INVOKE,
};

/** The OpenAI function a tool is offered as (RAGFlow's tool `meta`). */
export function toolSpec(type: string, params: Record<string, unknown>, name: string): ToolSpec {
  const desc = typeof params.description === 'string' && params.description ? params.description : undefined;
  const fn = (description: string, properties: Record<string, unknown>, required: string[]): ToolSpec => ({
    type: 'function',
    function: { name, description: desc ?? description, parameters: { type: 'object', properties, required } },
  });
  switch (type) {
    case 'Retrieval':
      return fn('This tool can be utilized for relevant content searching in the datasets.', {
        query: { type: 'string', description: 'The keywords to search the dataset. The keywords should be the most important words/terms(includes synonyms) from the original request.' },
      }, ['query']);
    case 'CodeExec':
      return fn("This tool has a sandbox that can execute code written in 'Python'/'Javascript'. It receives a piece of code and returns the value its `main` function returns, as JSON. A `main` function MUST be defined; `main` receives the declared arguments.", {
        lang: { type: 'string', description: 'The programming language of this piece of code.', enum: ['python', 'javascript'] },
        script: { type: 'string', description: 'A piece of code in right format. There MUST be main function.' },
      }, ['lang', 'script']);
    case 'ExeSQL':
      return fn('This is a tool that can execute SQL (SQLite) and return the result as a table.', {
        sql: { type: 'string', description: 'The SQL needs to be executed.' },
      }, ['sql']);
    case 'Agent':
      return fn('This is an agent for a specific task.', {
        user_prompt: { type: 'string', description: 'This is the order you need to send to the agent.' },
        reasoning: { type: 'string', description: "Supervisor's reasoning for choosing this agent." },
        context: { type: 'string', description: 'All relevant background information needed by the agent to solve the current query.' },
      }, ['user_prompt', 'reasoning', 'context']);
    default:
      return fn('Calls a configured HTTP endpoint.', {}, []);
  }
}

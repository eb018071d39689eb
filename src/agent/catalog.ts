/**
 * Which RAGFlow canvas components and tools ragloom runs, and which it refuses — checked when an
 * agent is created or updated, so a DSL that cannot run here is refused up front with the names of
 * what is missing, never a crash half-way through a run.
 */
import { isPlainObject } from '../util/index.js';
import { exeSqlRefusal } from './ops/exesql.js';

/** Components the runtime executes (src/agent/components). */
export const SUPPORTED_COMPONENTS = [
  'Begin', 'LLM', 'Agent', 'Message', 'Categorize', 'Switch', 'Iteration', 'IterationItem', 'Loop', 'LoopItem', 'ExitLoop',
  'UserFillUp', 'VariableAssigner', 'VariableAggregator', 'StringTransform', 'Retrieval', 'Invoke', 'CodeExec', 'ExeSQL',
] as const;

/** Tools an Agent component may call (the same classes run as tools). */
export const SUPPORTED_TOOLS = ['Retrieval', 'CodeExec', 'ExeSQL', 'Invoke'] as const;

/** RAGFlow tools that reach a third-party web service; ragloom runs offline. */
export const WEB_TOOLS = [
  'AkShare', 'ArXiv', 'Bing', 'Crawler', 'DeepL', 'DuckDuckGo', 'Email', 'GitHub', 'Google', 'GoogleScholar', 'Jin10', 'PubMed',
  'QWeather', 'SearXNG', 'TavilyExtract', 'TavilySearch', 'TuShare', 'WenCai', 'Wikipedia', 'YahooFinance', 'Browser',
] as const;

/** RAGFlow's ingestion-pipeline (dataflow) components: a pipeline, not an agent. */
export const DATAFLOW_COMPONENTS = ['File', 'Parser', 'TokenChunker', 'Splitter', 'TitleChunker', 'HierarchicalMerger', 'Tokenizer', 'Extractor'] as const;

/** RAGFlow 0.17.2's component names; that DSL is not compatible with v0.20+. */
export const LEGACY_COMPONENTS = ['Answer', 'Generate', 'Relevant', 'Rewrite', 'KeyWord', 'Concentrator', 'Template', 'Baidu', 'BaiduFanyi', 'Jin10'] as const;

const SUPPORTED = new Set<string>(SUPPORTED_COMPONENTS);
const TOOLS = new Set<string>(SUPPORTED_TOOLS);
const WEB = new Set<string>(WEB_TOOLS);
const DATAFLOW = new Set<string>(DATAFLOW_COMPONENTS);
const LEGACY = new Set<string>(LEGACY_COMPONENTS);

/** `{cpn_id@output.path}`, `{sys.x}`, `{env.x}` (RAGFlow's variable_ref_patt). */
export const VARIABLE_REF = /\{* *\{([a-zA-Z:0-9]+@[A-Za-z0-9_.-]+|sys\.[A-Za-z0-9_.]+|env\.[A-Za-z0-9_.]+)\} *\}*/g;

/** Exactly `{ref}`, for splitting a template: the text around a reference (spaces too) is kept. */
export const EXACT_REF = /\{([a-zA-Z:0-9]+@[A-Za-z0-9_.-]+|sys\.[A-Za-z0-9_.]+|env\.[A-Za-z0-9_.]+)\}/g;

export interface DslComponent {
  obj: { component_name: string; params: Record<string, unknown> };
  downstream: string[];
  upstream: string[];
  parent_id?: string;
}

export interface Dsl {
  components: Record<string, DslComponent>;
  [key: string]: unknown;
}

/** Why a component name cannot run here, or undefined when it can. */
function refusal(name: string, asTool: boolean): string | undefined {
  if (WEB.has(name)) return 'web tools: need the internet';
  if (DATAFLOW.has(name)) return 'is ingestion-pipeline components, not an agent';
  if (LEGACY.has(name)) return 'is RAGFlow 0.17 components; that DSL is not compatible with v0.20+';
  if (asTool ? !TOOLS.has(name) && name !== 'Agent' : !SUPPORTED.has(name)) return 'is unknown components';
  return undefined;
}

/** Every `{cpn@var}` reference in a value (strings, nested lists and objects). */
function collectRefs(v: unknown, out: Set<string>, depth = 0, key = ''): void {
  if (depth > 20) return;
  if (typeof v === 'string') {
    for (const m of v.matchAll(VARIABLE_REF)) out.add(m[1]!);
    // A bare reference (e.g. `query: "sys.query"`, `items_ref: "Cpn:X@out"`); model ids
    // (`name@factory`) look the same and are not references.
    if (!MODEL_KEYS.test(key) && /^[a-zA-Z:0-9]+@[A-Za-z0-9_.-]+$/.test(v)) out.add(v);
  } else if (Array.isArray(v)) for (const x of v) collectRefs(x, out, depth + 1, key);
  else if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) collectRefs(x, out, depth + 1, k);
}

const MODEL_KEYS = /(^|_)(llm_id|rerank_id|embd_id|tts_id|model|model_id)$/;

/** A reference as a message shows it: a string as it is, any other (JSON) value as JSON. */
const shown = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)));

/**
 * Checks a v0.20+ canvas DSL before it is saved. Returns an error message naming every component,
 * tool and reference that cannot run, or undefined when the DSL is runnable.
 */
export function validateDsl(dsl: unknown): string | undefined {
  if (!isPlainObject(dsl)) return 'DSL must be a JSON object.';
  const components = dsl.components;
  if (!isPlainObject(components) || Object.keys(components).length === 0) return 'DSL has no components.';
  const problems = new Map<string, string[]>(); // reason → names
  const add = (reason: string, what: string) => {
    const list = problems.get(reason) ?? [];
    if (!list.includes(what)) list.push(what);
    problems.set(reason, list);
  };
  const structural: string[] = [];
  const ids = new Set(Object.keys(components));
  for (const [id, raw] of Object.entries(components)) {
    if (!isPlainObject(raw) || !isPlainObject(raw.obj) || typeof raw.obj.component_name !== 'string') {
      structural.push(`component '${id}' has no obj.component_name`);
      continue;
    }
    const name = raw.obj.component_name;
    const why = refusal(name, false);
    if (why) add(why, name);
    const params = isPlainObject(raw.obj.params) ? raw.obj.params : {};
    const sqlCheck = (p: Record<string, unknown>) => {
      // Only the database kind is fixed at save time; the file is checked when the query runs.
      if (exeSqlRefusal({ db_type: p.db_type, database: 'database.sqlite' })) add('ExeSQL runs on SQLite files only; set db_type to sqlite and database to the file', `ExeSQL (db_type '${shown(p.db_type)}')`);
    };
    if (name === 'ExeSQL') sqlCheck(params);
    for (const key of ['downstream', 'upstream'] as const) {
      const list = raw[key] ?? [];
      if (!Array.isArray(list)) structural.push(`'${id}'.${key} must be a list`);
      else for (const t of list) if (typeof t !== 'string' || !ids.has(t)) structural.push(`'${id}'.${key} names '${shown(t)}', which is not a component`);
    }
    if (raw.parent_id !== undefined && raw.parent_id !== null && raw.parent_id !== '' && !ids.has(shown(raw.parent_id))) {
      structural.push(`'${id}'.parent_id names '${shown(raw.parent_id)}', which is not a component`);
    }
    const tools = Array.isArray(params.tools) ? params.tools : [];
    for (const t of tools) {
      const tn = isPlainObject(t) && typeof t.component_name === 'string' ? t.component_name : shown(t);
      const tw = refusal(tn, true);
      if (tw) add(tw, tn);
      if (tn === 'ExeSQL' && isPlainObject(t) && isPlainObject(t.params)) sqlCheck(t.params);
    }
    if (Array.isArray(params.mcp) && params.mcp.length) add('MCP servers: not available in ragloom', `${name} '${id}' MCP tools`);
    const refs = new Set<string>();
    collectRefs(params, refs);
    for (const r of refs) {
      if (!r.includes('@')) continue;
      const cpn = r.slice(0, r.indexOf('@'));
      if (!ids.has(cpn)) structural.push(`'${id}' refers to {${r}}, but there is no component '${cpn}'`);
    }
  }
  if (!structural.length && !problems.size && !ids.has('begin')) structural.push("there is no entry component 'begin'");
  const parts: string[] = [];
  for (const [reason, names] of problems) {
    parts.push(`${names.join(', ')} (${reason.replace(/^is /, '')})`);
  }
  if (parts.length) {
    return `This DSL uses components ragloom cannot run: ${parts.join('; ')}. ${problems.has('web tools: need the internet') ? 'ragloom runs offline; remove the web tools or replace them with Retrieval / Invoke. ' : ''}`
      + `Supported: ${SUPPORTED_COMPONENTS.join(', ')}; tools: ${SUPPORTED_TOOLS.join(', ')}.`;
  }
  if (structural.length) return `Invalid DSL: ${structural.slice(0, 5).join('; ')}${structural.length > 5 ? ` (and ${structural.length - 5} more)` : ''}.`;
  return undefined;
}

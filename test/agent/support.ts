/**
 * RAGFlow's agent templates (../shared/reference/agent-templates, v0.25.6) as a user loads them,
 * and `repointModels`, which points every model a DSL names at one the test engine has.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED = resolve(REPO, '../shared');
export const TEMPLATES_DIR = join(SHARED, 'reference', 'agent-templates');

/** Why the templates cannot be read here (../shared absent), or undefined. */
export const TEMPLATES_MISSING: string | undefined = existsSync(TEMPLATES_DIR) ? undefined : `the RAGFlow agent templates are not at ${TEMPLATES_DIR} (../shared missing)`;

/** The built-in chat model every engine has. */
export const BUILTIN_LLM = 'ragloom-extractive@Builtin';

export interface Template {
  id: number | string;
  title: Record<string, string> | string;
  description: unknown;
  canvas_type?: string;
  canvas_category?: string;
  dsl: Record<string, unknown>;
}

/** Template file names (`trip_planner.json` …); [] when ../shared is absent. */
export function templateFiles(): string[] {
  return TEMPLATES_MISSING ? [] : readdirSync(TEMPLATES_DIR).filter((f) => f.endsWith('.json')).sort();
}

/** One template file, parsed. */
export function loadTemplate(file: string): Template {
  return JSON.parse(readFileSync(join(TEMPLATES_DIR, file.endsWith('.json') ? file : `${file}.json`), 'utf8')) as Template;
}

/** A deep copy of `dsl` with every `llm_id` (at any depth: components, Agent tools) set to `model`. */
export function repointModels<T>(dsl: T, model = BUILTIN_LLM): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, k === 'llm_id' && typeof x === 'string' ? model : walk(x)]));
    }
    return v;
  };
  return walk(dsl) as T;
}

/**
 * A deep copy of `dsl` whose ExeSQL components and tools query a SQLite file (`db_type: 'sqlite'`,
 * `database`), as a user adapts RAGFlow's MySQL-pointed template: ragloom's ExeSQL reads SQLite only.
 */
export function useSqlite<T>(dsl: T, database = 'data.sqlite'): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const o = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
      if (o.component_name === 'ExeSQL' && o.params && typeof o.params === 'object') o.params = { ...(o.params as object), db_type: 'sqlite', database };
      return o;
    }
    return v;
  };
  return walk(dsl) as T;
}

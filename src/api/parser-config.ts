import { Issues, checkBool, checkFloat, checkInt, checkStr, checkStrList, checkExtra, literalMessage } from './validate.js';
import { deepMerge, isPlainObject } from '../util/index.js';

/** Chunk methods a dataset may be created / updated with (reference §3; knowledge_graph excluded). */
export const DATASET_CHUNK_METHODS = [
  'naive', 'book', 'email', 'laws', 'manual', 'one', 'paper', 'picture', 'presentation', 'qa', 'table', 'tag', 'resume',
] as const;

/** Chunk methods a document may be switched to (reference §4; no resume, knowledge_graph allowed). */
export const DOCUMENT_CHUNK_METHODS = [
  'naive', 'manual', 'qa', 'table', 'paper', 'book', 'laws', 'presentation', 'picture', 'one', 'knowledge_graph', 'email', 'tag',
] as const;

const RAPTOR_PROMPT =
  'Please summarize the following paragraphs. Be careful with the numbers, do not make things up. Paragraphs as following:\n      {cluster_content}\nThe above is the content you need to summarize.';
const ENTITY_TYPES = ['organization', 'person', 'geo', 'event', 'category'];

/** Pydantic defaults of ParserConfig, applied when a caller gives any parser_config. */
export function parserConfigDefaults(): Record<string, unknown> {
  return {
    auto_keywords: 0,
    auto_questions: 0,
    chunk_token_num: 512,
    delimiter: '\\n',
    graphrag: { use_graphrag: false, entity_types: [...ENTITY_TYPES], method: 'light', community: false, resolution: false, batch_chunk_token_size: 4096 },
    html4excel: false,
    layout_recognize: 'DeepDOC',
    raptor: { use_raptor: false, prompt: RAPTOR_PROMPT, max_token: 256, threshold: 0.1, max_cluster: 64, random_seed: 0 },
    tag_kb_ids: [],
    topn_tags: 1,
    filename_embd_weight: 0.1,
    task_page_size: null,
    pages: null,
    parent_child: { use_parent_child: false, children_delimiter: '\n' },
  };
}

/** The per-method default stored when a dataset is created or switched without a parser_config. */
export function methodDefaultConfig(method: string): Record<string, unknown> {
  const off = { raptor: { use_raptor: false }, graphrag: { use_graphrag: false } };
  switch (method) {
    case 'naive':
      return {
        layout_recognize: 'DeepDOC',
        chunk_token_num: 512,
        delimiter: '\n',
        auto_keywords: 0,
        auto_questions: 0,
        html4excel: false,
        topn_tags: 3,
        raptor: { use_raptor: true, prompt: RAPTOR_PROMPT, max_token: 256, threshold: 0.1, max_cluster: 64, random_seed: 0 },
        // RAGFlow's get_parser_config: the naive default carries the graph builder's retry and timeout settings.
        graphrag: {
          use_graphrag: true, entity_types: [...ENTITY_TYPES], method: 'light', batch_chunk_token_size: 4096,
          retry_attempts: 2, retry_backoff_seconds: 2.0, retry_backoff_max_seconds: 60.0, build_subgraph_timeout_per_chunk_seconds: 300,
          build_subgraph_min_timeout_seconds: 600, merge_timeout_seconds: 180, resolution_timeout_seconds: 1800, community_timeout_seconds: 1800,
          lock_acquire_timeout_seconds: 600,
        },
        parent_child: { use_parent_child: false, children_delimiter: '\n' },
      };
    case 'qa': case 'manual': case 'paper': case 'book': case 'laws': case 'presentation':
      return off;
    case 'knowledge_graph':
      return {
        chunk_token_num: 8192,
        delimiter: '\\n',
        entity_types: ['organization', 'person', 'location', 'event', 'time'],
        ...off,
      };
    default:
      return {};
  }
}

/**
 * The stored form: base context sizes, the method default, the given config on top;
 * parent_child flattened into `children_delimiter`; the tenant's chat model as `llm_id`.
 */
export function storedParserConfig(method: string, given: Record<string, unknown> | null, llmId: string): Record<string, unknown> {
  let cfg: Record<string, unknown> = deepMerge({ table_context_size: 0, image_context_size: 0 }, methodDefaultConfig(method));
  if (given) cfg = deepMerge(cfg, given);
  return flattenParentChild({ ...cfg, llm_id: llmId });
}

export function flattenParentChild(cfg: Record<string, unknown>): Record<string, unknown> {
  const pc = cfg.parent_child;
  const out = { ...cfg };
  if (isPlainObject(pc)) {
    out.children_delimiter = pc.use_parent_child ? String(pc.children_delimiter ?? '\n') : '';
  } else if (out.children_delimiter === undefined) {
    out.children_delimiter = '';
  }
  return out;
}

const TOP_KEYS = [
  'auto_keywords', 'auto_questions', 'chunk_token_num', 'delimiter', 'graphrag', 'html4excel', 'layout_recognize', 'raptor',
  'tag_kb_ids', 'topn_tags', 'filename_embd_weight', 'task_page_size', 'pages', 'parent_child', 'children_delimiter',
  'table_column_mode', 'table_column_roles', 'ext', 'overlapped_percent', 'table_context_size', 'image_context_size', 'llm_id',
  'entity_types',
] as const;

/**
 * Validates a parser_config strictly (unknown keys rejected, floats are not ints) and adds its
 * issues to `is`. Returns the given keys (not defaults); `ext` is merged into the top level.
 */
export function validateParserConfig(is: Issues, cfg: Record<string, unknown>, loc = 'parser_config'): Record<string, unknown> {
  const at = (k: string) => `${loc}.${k}`;
  checkExtra(is, cfg, TOP_KEYS, `${loc}.`);
  const v = cfg;
  if ('auto_keywords' in v) checkInt(is, at('auto_keywords'), v.auto_keywords, 0, 32);
  if ('auto_questions' in v) checkInt(is, at('auto_questions'), v.auto_questions, 0, 10);
  if ('chunk_token_num' in v) checkInt(is, at('chunk_token_num'), v.chunk_token_num, 1, 2048);
  if ('delimiter' in v) checkStr(is, at('delimiter'), v.delimiter, { min: 1 });
  if ('html4excel' in v) checkBool(is, at('html4excel'), v.html4excel);
  if ('layout_recognize' in v) checkStr(is, at('layout_recognize'), v.layout_recognize);
  if ('tag_kb_ids' in v) checkStrList(is, at('tag_kb_ids'), v.tag_kb_ids);
  if ('topn_tags' in v) checkInt(is, at('topn_tags'), v.topn_tags, 1, 10);
  if ('filename_embd_weight' in v && v.filename_embd_weight !== null) checkFloat(is, at('filename_embd_weight'), v.filename_embd_weight, 0, 1);
  if ('task_page_size' in v && v.task_page_size !== null) checkInt(is, at('task_page_size'), v.task_page_size, 1);
  if ('overlapped_percent' in v) checkFloat(is, at('overlapped_percent'), v.overlapped_percent, 0, 90);
  for (const k of ['table_context_size', 'image_context_size'] as const) if (k in v) checkInt(is, at(k), v[k], 0);
  if ('pages' in v && v.pages !== null) {
    if (!Array.isArray(v.pages)) is.add(at('pages'), 'Input should be a valid list', v.pages);
    else v.pages.forEach((r, i) => {
      if (!Array.isArray(r)) is.add(`${at('pages')}.${i}`, 'Input should be a valid list', r);
      else r.forEach((n, j) => { if (!Number.isInteger(n)) is.add(`${at('pages')}.${i}.${j}`, 'Input should be a valid integer', n); });
    });
  }
  if ('raptor' in v) {
    const r = v.raptor;
    if (!isPlainObject(r)) is.add(at('raptor'), 'Input should be a valid dictionary or instance of RaptorConfig', r);
    else {
      const rl = (k: string) => `${loc}.raptor.${k}`;
      checkExtra(is, r, ['use_raptor', 'prompt', 'max_token', 'threshold', 'max_cluster', 'random_seed', 'scope', 'clustering_method', 'tree_builder'], `${loc}.raptor.`);
      if ('use_raptor' in r) checkBool(is, rl('use_raptor'), r.use_raptor);
      if ('prompt' in r && checkStr(is, rl('prompt'), r.prompt) && !r.prompt.trim()) is.add(rl('prompt'), 'String should have at least 1 character', r.prompt);
      if ('max_token' in r) checkInt(is, rl('max_token'), r.max_token, 1, 2048);
      if ('threshold' in r) checkFloat(is, rl('threshold'), r.threshold, 0, 1);
      if ('max_cluster' in r) checkInt(is, rl('max_cluster'), r.max_cluster, 1, 1024);
      if ('random_seed' in r) checkInt(is, rl('random_seed'), r.random_seed, 0);
      if ('scope' in r && !['file', 'dataset'].includes(r.scope as string)) is.add(rl('scope'), literalMessage(['file', 'dataset']), r.scope);
      if ('clustering_method' in r && !['gmm', 'ahc'].includes(r.clustering_method as string)) is.add(rl('clustering_method'), literalMessage(['gmm', 'ahc']), r.clustering_method);
      if ('tree_builder' in r && !['raptor', 'psi'].includes(r.tree_builder as string)) is.add(rl('tree_builder'), literalMessage(['raptor', 'psi']), r.tree_builder);
    }
  }
  if ('graphrag' in v) {
    const g = v.graphrag;
    if (!isPlainObject(g)) is.add(at('graphrag'), 'Input should be a valid dictionary or instance of GraphragConfig', g);
    else {
      const gl = (k: string) => `${loc}.graphrag.${k}`;
      checkExtra(is, g, ['use_graphrag', 'entity_types', 'method', 'community', 'resolution', 'batch_chunk_token_size',
        'max_retries', 'retries', 'timeout', 'entity_extraction_timeout', 'community_timeout'], `${loc}.graphrag.`);
      if ('use_graphrag' in g) checkBool(is, gl('use_graphrag'), g.use_graphrag);
      if ('entity_types' in g) checkStrList(is, gl('entity_types'), g.entity_types);
      if ('method' in g && !['light', 'general', 'ner'].includes(g.method as string)) is.add(gl('method'), literalMessage(['light', 'general', 'ner']), g.method);
      if ('community' in g) checkBool(is, gl('community'), g.community);
      if ('resolution' in g) checkBool(is, gl('resolution'), g.resolution);
      if ('batch_chunk_token_size' in g) checkInt(is, gl('batch_chunk_token_size'), g.batch_chunk_token_size, 512, 8196);
      for (const k of ['max_retries', 'retries', 'timeout', 'entity_extraction_timeout', 'community_timeout']) if (k in g) checkInt(is, gl(k), g[k], 0);
    }
  }
  if ('parent_child' in v) {
    const p = v.parent_child;
    if (!isPlainObject(p)) is.add(at('parent_child'), 'Input should be a valid dictionary or instance of ParentChildConfig', p);
    else {
      checkExtra(is, p, ['use_parent_child', 'children_delimiter'], `${loc}.parent_child.`);
      if ('use_parent_child' in p) checkBool(is, `${loc}.parent_child.use_parent_child`, p.use_parent_child);
      // ParentChildConfig.children_delimiter: min_length=1, so an empty delimiter is refused.
      if ('children_delimiter' in p) checkStr(is, `${loc}.parent_child.children_delimiter`, p.children_delimiter, { min: 1 });
    }
  }
  if ('children_delimiter' in v) checkStr(is, at('children_delimiter'), v.children_delimiter);
  if ('table_column_mode' in v && !['auto', 'manual'].includes(v.table_column_mode as string)) is.add(at('table_column_mode'), literalMessage(['auto', 'manual']), v.table_column_mode);
  if ('table_column_roles' in v) {
    const t = v.table_column_roles;
    if (!isPlainObject(t)) is.add(at('table_column_roles'), 'Input should be a valid dictionary', t);
    else for (const [col, role] of Object.entries(t)) {
      if (!['indexing', 'metadata', 'both'].includes(role as string)) is.add(`${loc}.table_column_roles.${col}`, literalMessage(['indexing', 'metadata', 'both']), role);
    }
  }
  if ('entity_types' in v) checkStrList(is, at('entity_types'), v.entity_types);
  if ('llm_id' in v) checkStr(is, at('llm_id'), v.llm_id);
  let out: Record<string, unknown> = { ...v };
  if ('ext' in v) {
    if (!isPlainObject(v.ext)) is.add(at('ext'), 'Input should be a valid dictionary', v.ext);
    else {
      const { ext, ...rest } = out;
      out = { ...rest, ...(ext as Record<string, unknown>) };
    }
  }
  return out;
}

/** Create-time: validate, apply Pydantic defaults, enforce the JSON size limit. */
export function parserConfigForCreate(is: Issues, cfg: Record<string, unknown>): Record<string, unknown> {
  const given = validateParserConfig(is, cfg);
  const full = deepMerge(parserConfigDefaults(), given);
  const size = JSON.stringify(full).length;
  if (size > 65535) is.add('parser_config', `Parser config exceeds size limit (max 65,535 characters). Current size: ${size}`, cfg);
  return full;
}

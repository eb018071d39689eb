/**
 * Search apps (RAGFlow's search_api.py and the `/searchbots` widget routes of bot_api.py): a
 * named `search_config` over datasets — which datasets, the retrieval settings, the chat model
 * that summarises — that answers a question with the passages found and a summary citing them.
 * Also the dataset search (`/datasets/search`, dataset_api.search_datasets) and the related
 * questions / recommendations (`/chat/recommendation`), which a search app's settings may steer.
 */
import type { Engine, Ctx } from '../core/index.js';
import { ask, chatModel, visibleDataset, chatModelExists, type ChatRow } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { Issues, checkFloat, checkInt, checkStr, checkBool, checkStrList } from './validate.js';
import { intArg, orderColumn, paginate } from './listing.js';
import { retrieve } from './retrieval.js';
import { defaultChatModel } from './chats.js';
import { resolveReranker } from './retrieval.js';
import { truthy } from './metadata.js';
import { formatDateTime, isPlainObject, newId, nowMs, utf8Length } from '../util/index.js';
import type { NativeAnswer } from './completions.js';
import type { SearchAppChanges, SearchAppListQuery, SearchAppRow } from '../store/index.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
const noAuthorization = (): never => {
  throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
};

/** RAGFlow's default `search_config` (the Search model's column default). */
const DEFAULT_CONFIG = Object.freeze({
  kb_ids: [], doc_ids: [], similarity_threshold: 0.2, vector_similarity_weight: 0.3, use_kg: false, rerank_id: '', top_k: 1024, summary: false,
  chat_id: '', llm_setting: {}, chat_settingcross_languages: [], highlight: false, keyword: false, web_search: false, related_search: false,
  query_mindmap: false,
});

type SearchRow = SearchAppRow;

function toWire(r: SearchRow): P {
  return {
    id: r.id, avatar: r.avatar || null, tenant_id: r.tenant_id, name: r.name, description: r.description, created_by: r.created_by,
    search_config: JSON.parse(r.search_config), status: r.status, create_time: r.create_time, create_date: formatDateTime(r.create_time),
    update_time: r.update_time, update_date: formatDateTime(r.update_time),
  };
}

/** The nickname of each tenant's owner ('' when none). */
const nicknamesOf = async (e: Engine, tenantIds: string[]): Promise<(tenantId: string) => string> => {
  const m = await e.store.accounts.ownerNicknames(tenantIds);
  return (t) => m.get(t) ?? '';
};

/** The tenants whose search apps the caller sees: its own and those it joined. */
const joined = (e: Engine, ctx: Ctx): Promise<string[]> => e.store.accounts.joinedTenants(ctx);

function getRow(e: Engine, id: unknown): Promise<SearchRow | undefined> {
  return e.store.searchApps.get(pyStr(id));
}

/** RAGFlow's `accessible4deletion`: the caller created it. */
const ownSearch = async (e: Engine, ctx: Ctx, id: unknown): Promise<SearchRow | undefined> => {
  const r = await getRow(e, id);
  return r && r.created_by === ctx.userId ? r : undefined;
};

/** `get_detail` (a search app of any tenant the caller belongs to; else 103 / 102). */
async function detail(e: Engine, ctx: Ctx, id: unknown): Promise<P> {
  const r = await getRow(e, id);
  if (!r || !(await joined(e, ctx)).includes(r.tenant_id)) throw new ApiError(RetCode.OPERATING_ERROR, 'Has no permission for this operation.');
  const w = toWire(r);
  return {
    id: w.id, avatar: w.avatar, tenant_id: w.tenant_id, name: w.name, description: w.description, created_by: w.created_by,
    search_config: w.search_config, update_time: w.update_time, update_date: w.update_date, nickname: (await nicknamesOf(e, [r.tenant_id]))(r.tenant_id), tenant_avatar: null,
  };
}

function checkName(v: unknown, limit: number): string {
  if (typeof v !== 'string') dataError('Search name must be string.');
  const name = v as string;
  if (!name.trim()) dataError("Search name can't be empty.");
  if (utf8Length(name) > limit) dataError(`Search name length is ${[...name].length} which is large than ${limit}${limit === 255 ? '.' : ''}`);
  return name.trim();
}

/** `POST /searches {name, description?, avatar?, search_config?}` → `{search_id}`; a taken name gets ` (1)`, as datasets' do. */
export async function createSearch(e: Engine, ctx: Ctx, req: P): Promise<{ search_id: string }> {
  const name = checkName(req.name, 255);
  if (req.search_config !== undefined && !isPlainObject(req.search_config)) dataError('search_config must be a JSON object');
  const id = newId();
  const t = nowMs();
  // The store makes the name free (duplicateName) in the inserting transaction.
  await e.store.searchApps.create({
    id, tenant_id: ctx.tenantId, name, description: typeof req.description === 'string' ? req.description : '',
    avatar: typeof req.avatar === 'string' ? req.avatar : '', search_config: JSON.stringify(isPlainObject(req.search_config) ? req.search_config : DEFAULT_CONFIG),
    created_by: ctx.userId, create_time: t, update_time: t,
  });
  return { search_id: id };
}

/**
 * `GET /searches?keywords&page&page_size&orderby&desc&owner_ids` → `{search_apps, total}`: the
 * apps of the caller's tenants (page / page_size 0 = all); 103 `Only authorized owner_ids can be queried.`.
 */
export async function listSearches(e: Engine, ctx: Ctx, q: P): Promise<{ search_apps: P[]; total: number }> {
  const page = intArg(q.page, 0);
  const size = intArg(q.page_size, 0);
  const desc = q.desc === undefined ? true : q.desc !== false && pyStr(q.desc).toLowerCase() !== 'false';
  const mine = await joined(e, ctx);
  const asked = Array.isArray(q.owner_ids) ? q.owner_ids.map((x) => pyStr(x)) : [];
  if (asked.some((o) => !mine.includes(o) && o !== ctx.userId)) throw new ApiError(RetCode.OPERATING_ERROR, 'Only authorized owner_ids can be queried.');
  const owners = asked.length ? asked.map((o) => (o === ctx.userId ? ctx.tenantId : o)) : mine;
  const orderby = orderColumn('Search', q.orderby, 'create_time');
  const { total, rows } = await e.store.searchApps.list({
    tenantIds: owners, orderby: orderby as SearchAppListQuery['orderby'], desc,
    ...(typeof q.keywords === 'string' && q.keywords ? { keywords: q.keywords.toLowerCase() } : {}),
    ...(page && size ? { page: paginate(page, size) } : {}),
  });
  const nick = await nicknamesOf(e, rows.map((r) => r.tenant_id));
  return {
    search_apps: rows.map((r) => ({
      id: r.id, avatar: r.avatar || null, tenant_id: r.tenant_id, name: r.name, description: r.description, created_by: r.created_by,
      status: r.status, update_time: r.update_time, create_time: r.create_time, nickname: nick(r.tenant_id), tenant_avatar: null,
    })),
    total,
  };
}

/** `GET /searches/{id}` (and `/searchbots/detail?search_id`): the app with its config; 103 / 102 `Can't find this Search App!`. */
export function getSearch(e: Engine, ctx: Ctx, p: P): Promise<P> {
  return detail(e, ctx, p.search_id);
}

/**
 * `PUT /searches/{id} {name, search_config, …}`: `search_config` merged over the stored one; the
 * app as stored. 109 `No authorization.` (not its creator), 102 `Duplicated search name.`.
 */
export async function updateSearch(e: Engine, ctx: Ctx, searchId: string, req: P): Promise<P> {
  const name = checkName(req.name, 128);
  const cur = (await ownSearch(e, ctx, searchId)) ?? noAuthorization();
  if (name.toLowerCase() !== cur!.name.toLowerCase() && (await e.store.searchApps.nameTaken(ctx.tenantId, name))) {
    dataError('Duplicated search name.');
  }
  if (!isPlainObject(req.search_config)) dataError('search_config must be a JSON object');
  const config = { ...(JSON.parse(cur!.search_config) as P), ...(req.search_config as P) };
  const sets: SearchAppChanges = { name, search_config: JSON.stringify(config), update_time: nowMs() };
  if (typeof req.description === 'string') sets.description = req.description;
  if (typeof req.avatar === 'string') sets.avatar = req.avatar;
  await e.store.searchApps.update(cur!.id, sets);
  return toWire((await getRow(e, cur!.id))!);
}

/** `DELETE /searches/{id}`: its creator only (109); `true`. */
export async function deleteSearch(e: Engine, ctx: Ctx, searchId: string): Promise<true> {
  const cur = (await ownSearch(e, ctx, searchId)) ?? noAuthorization();
  await e.store.searchApps.delete(cur!.id);
  return true;
}

// ---------------------------------------------------------------- answering

const SUMMARY_PROMPT = `You answer the user's question from the passages of the knowledge base below.
- Use only what the passages say; never make things up, numbers least of all.
- If the passages do not answer the question, say that no relevant information was found.
- Answer in the language of the question, in Markdown.

## Passages

{knowledge}`;

/** A search app's settings as the chat assistant ask() runs: its datasets, retrieval settings and model. */
function searchChat(ctx: Ctx, kbIds: string[], cfg: P, llmId: string): ChatRow {
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
  return {
    id: '', tenant_id: ctx.tenantId, name: '', description: '', icon: '', language: 'English', dataset_ids: JSON.stringify(kbIds), llm_id: llmId,
    llm_setting: JSON.stringify({ temperature: 0.1 }), prompt_config: JSON.stringify({
      system: SUMMARY_PROMPT, prologue: '', parameters: [{ key: 'knowledge', optional: false }], empty_response: '', quote: true, refine_multiturn: false,
    }), meta_data_filter: '{}', similarity_threshold: num(cfg.similarity_threshold, 0.1), vector_similarity_weight: num(cfg.vector_similarity_weight, 0.3),
    top_n: 12, top_k: num(cfg.top_k, 1024), rerank_id: typeof cfg.rerank_id === 'string' ? cfg.rerank_id : '', status: '1', created_by: ctx.userId,
    create_time: 0, update_time: 0,
  };
}

/**
 * RAGFlow's `async_ask`: the question's passages (12, with the app's threshold, weight, top_k and
 * rerank model) and a summary by the app's chat model (`chat_id`, else the tenant's), streamed as
 * deltas and one final event carrying the cited answer and the reference.
 */
async function* askSearch(e: Engine, ctx: Ctx, question: string, kbIds: string[], cfg: P, signal?: AbortSignal): AsyncGenerator<Partial<NativeAnswer>> {
  const visible = await e.store.datasets.getVisibleMany(kbIds, ctx);
  const kbs = kbIds.map((id) => visible.get(id));
  if (kbs.some((k) => !k)) dataError(`You don't own the dataset ${kbIds[kbs.findIndex((k) => !k)]}.`);
  const llmId = typeof cfg.chat_id === 'string' && cfg.chat_id ? cfg.chat_id : await defaultChatModel(e, ctx);
  if (!chatModelExists(e, llmId)) dataError(`\`llm_id\` ${llmId} doesn't exist`);
  const model = chatModel(e, llmId, kbs[0]?.embd_id)!;
  const chat = searchChat(ctx, kbIds, cfg, llmId);
  const docIds = Array.isArray(cfg.doc_ids) && cfg.doc_ids.length ? cfg.doc_ids.map((x) => pyStr(x)) : undefined;
  const events = ask(e, {
    chat, model, messages: [{ role: 'user', content: question }], stream: true, signal, documentIds: docIds,
    reranker: chat.rerank_id ? resolveReranker(e, chat.rerank_id) : undefined,
  });
  for await (const ev of events) {
    if (ev.type === 'delta') {
      if (ev.text) yield { answer: ev.text, reference: {}, final: false };
    } else yield { answer: ev.answer, reference: ev.reference, final: true };
  }
}

/**
 * `POST /searches/{id}/completion(s) {question, kb_ids?}`: the app's answer, as server-sent
 * events. 109 (not its creator), 102 `` `kb_ids` is required. `` when neither the app nor the
 * request names datasets.
 */
export async function searchCompletion(e: Engine, ctx: Ctx, p: P): Promise<AsyncIterable<Partial<NativeAnswer>>> {
  const row = (await ownSearch(e, ctx, p.search_id)) ?? noAuthorization();
  const cfg = JSON.parse(row!.search_config) as P;
  const kbIds = (truthy(cfg.kb_ids) ? cfg.kb_ids : truthy(p.kb_ids) ? p.kb_ids : []) as unknown[];
  if (!Array.isArray(kbIds) || !kbIds.length) dataError('`kb_ids` is required.');
  return askSearch(e, ctx, pyStr(p.question), kbIds.map((x) => pyStr(x)), cfg, p.signal instanceof AbortSignal ? p.signal : undefined);
}

/** `POST /searchbots/ask {question, kb_ids, search_id?}`: the same answer for the widget. */
export async function searchbotAsk(e: Engine, ctx: Ctx, p: P): Promise<AsyncIterable<Partial<NativeAnswer>>> {
  const app = p.search_id ? await getRow(e, p.search_id) : undefined;
  const cfg = p.search_id ? ((app && JSON.parse(app.search_config)) as P | undefined) ?? {} : {};
  const kbIds = (truthy(cfg.kb_ids) ? cfg.kb_ids : p.kb_ids) as unknown;
  if (!Array.isArray(kbIds) || !kbIds.length) dataError('`kb_ids` is required.');
  return askSearch(e, ctx, pyStr(p.question), (kbIds as unknown[]).map((x) => pyStr(x)), cfg, p.signal instanceof AbortSignal ? p.signal : undefined);
}

// ---------------------------------------------------------------- dataset search

/** `SearchDatasetReq` / `SearchDatasetsReq` (Pydantic, lax, extra keys ignored). */
function checkSearchRequest(req: P, single: boolean): P {
  const is = new Issues();
  if (!single) {
    if (!('dataset_ids' in req)) is.add('dataset_ids', 'Field required', req);
    else if (checkStrList(is, 'dataset_ids', req.dataset_ids) && !(req.dataset_ids as unknown[]).length) {
      is.add('dataset_ids', 'List should have at least 1 item after validation, not 0', req.dataset_ids);
    }
  }
  if (!('question' in req)) is.add('question', 'Field required', req);
  else if (checkStr(is, 'question', req.question) && !(req.question as string).trim()) is.add('question', 'String should have at least 1 character', req.question);
  if ('doc_ids' in req) checkStrList(is, 'doc_ids', req.doc_ids);
  for (const [k, min] of [['page', 1], ['size', 1], ['top_k', 1]] as const) if (k in req) checkInt(is, k, req[k], min);
  for (const k of ['similarity_threshold', 'vector_similarity_weight']) if (k in req) checkFloat(is, k, req[k], 0, 1);
  for (const k of ['use_kg', 'keyword']) if (k in req) checkBool(is, k, req[k]);
  if ('cross_languages' in req) checkStrList(is, 'cross_languages', req.cross_languages);
  for (const k of ['search_id', 'rerank_id']) if (k in req && req[k] !== null) checkStr(is, k, req[k]);
  if ('meta_data_filter' in req && req.meta_data_filter !== null && !isPlainObject(req.meta_data_filter)) is.add('meta_data_filter', 'Input should be a valid dictionary', req.meta_data_filter);
  is.throwIfAny();
  return req; // other keys are ignored
}

/**
 * `POST /datasets/search {dataset_ids, question, …}` and `POST /datasets/{id}/search {question, …}`:
 * a retrieval test — `{chunks, total, doc_aggs, labels}`. Defaults: page 1, size 30,
 * similarity_threshold 0, vector_similarity_weight 0.3, top_k 1024 (at most 2048); `search_id`
 * takes the settings of a search app; `meta_data_filter` `{method: "manual", manual: [conditions]}`.
 */
export async function searchDatasets(e: Engine, ctx: Ctx, p: P): Promise<P> {
  const single = typeof p.dataset_id === 'string';
  const req = checkSearchRequest(Object.fromEntries(Object.entries(p).filter(([k]) => k !== 'dataset_id' && k !== 'signal')), single);
  const ids = single ? [p.dataset_id as string] : (req.dataset_ids as string[]);
  const visible = await e.store.datasets.getVisibleMany(ids, ctx);
  for (const id of ids) if (!visible.has(id)) dataError(`Only owner of dataset ${id} authorized for this operation.`);
  let cfg: P = {};
  if (req.search_id) {
    const row = await getRow(e, req.search_id);
    if (!row) dataError('Invalid search_id');
    cfg = JSON.parse(row!.search_config) as P;
  }
  const pick = <T>(k: string, d: T): T => (k in cfg ? (cfg[k] as T) : k in req ? (req[k] as T) : d);
  const filter = (cfg.meta_data_filter ?? req.meta_data_filter) as P | undefined;
  if (isPlainObject(filter) && (filter.method === 'auto' || filter.method === 'semi_auto')) {
    throw new ApiError(RetCode.DATA_ERROR, 'meta_data_filter methods "auto" and "semi_auto" (a chat model choosing the filter) are not supported by ragloom; use "manual".');
  }
  const manual = isPlainObject(filter) && filter.method === 'manual' && Array.isArray(filter.manual) && filter.manual.length
    ? manualConditions(filter.manual) : null;
  const r = await retrieve(e, ctx, {
    dataset_ids: ids, question: req.question, document_ids: Array.isArray(req.doc_ids) ? req.doc_ids : [], page: req.page ?? 1, page_size: req.size ?? 30,
    similarity_threshold: pick('similarity_threshold', 0), vector_similarity_weight: pick('vector_similarity_weight', 0.3),
    top_k: Math.max(1, Math.min(Number(pick('top_k', 1024)), 2048)), rerank_id: pick('rerank_id', undefined), keyword: pick('keyword', false),
    cross_languages: pick('cross_languages', undefined), metadata_condition: manual && filter ? { logic: filter.logic ?? 'and', conditions: manual } : undefined,
  });
  // This route sends the retriever's chunks as they are, with the index's field names.
  return { total: r.total, chunks: r.chunks.map(rawChunk), doc_aggs: r.doc_aggs, labels: [] };
}

/** The operators RAGFlow's meta_filter knows, spelt as it compares them (manual conditions are not aliased). */
const META_FILTER_OPS = new Set(['=', '≠', '>', '<', '≥', '≤', 'contains', 'not contains', 'in', 'not in', 'start with', 'end with', 'empty', 'not empty']);

/**
 * `meta_data_filter.manual`: RAGFlow's own conditions `{key, op, value}`, handed to meta_filter as
 * they are — so an alias (`is`) matches nothing, and a condition without `key` or `op` (or not a
 * dict) raises there, which the search handler answers with its 102 'Internal server error'. As
 * the `metadata_condition` that retrieval reads.
 */
function manualConditions(items: unknown[]): P[] {
  return items.map((item) => {
    if (!isPlainObject(item) || !('key' in item) || !('op' in item)) return dataError('Internal server error');
    const c = item as P;
    const op = typeof c.op === 'string' && META_FILTER_OPS.has(c.op) ? c.op : 'unknown operator';
    return { name: c.key, comparison_operator: op, value: c.value ?? null };
  });
}

/**
 * `POST /searchbots/retrieval_test {kb_id, question, page, size, top_k, similarity_threshold,
 * vector_similarity_weight, doc_ids, rerank_id, keyword, highlight, search_id}`: the widget's
 * retrieval test, as the dataset search answers it.
 */
export async function searchbotRetrievalTest(e: Engine, ctx: Ctx, p: P): Promise<P> {
  const ids = typeof p.kb_id === 'string' ? [p.kb_id] : Array.isArray(p.kb_id) ? p.kb_id.map((x) => pyStr(x)) : [];
  if (!ids.length || !ids.every(Boolean)) throw new ApiError(RetCode.DATA_ERROR, 'Please specify dataset firstly.', { data: false });
  const top = intArg(p.top_k, 1024);
  if (top <= 0) dataError('`top_k` must be greater than 0');
  const visible = await e.store.datasets.getVisibleMany(ids, ctx);
  for (const id of ids) {
    if (!visible.has(id)) throw new ApiError(RetCode.OPERATING_ERROR, 'Only owner of dataset authorized for this operation.', { data: false });
  }
  const app = p.search_id ? await getRow(e, p.search_id) : undefined;
  const cfg = app ? (JSON.parse(app.search_config) as P) : {};
  const r = await retrieve(e, ctx, {
    dataset_ids: ids, question: p.question, document_ids: Array.isArray(p.doc_ids) ? p.doc_ids : [], page: intArg(p.page, 1), page_size: intArg(p.size, 30),
    similarity_threshold: p.similarity_threshold || (cfg.similarity_threshold ?? 0), vector_similarity_weight: p.vector_similarity_weight || (cfg.vector_similarity_weight ?? 0.3),
    top_k: p.top_k ? top : intArg(cfg.top_k, top), rerank_id: p.rerank_id || cfg.rerank_id || undefined, keyword: p.keyword === true, highlight: p.highlight === true,
  });
  return { total: r.total, chunks: r.chunks.map(rawChunk), doc_aggs: r.doc_aggs, labels: [] };
}

/** The /retrieval route's renames (chunk_api.retrieval_test), undone. */
const RAW_KEYS: Record<string, string> = {
  id: 'chunk_id', content: 'content_with_weight', document_id: 'doc_id', important_keywords: 'important_kwd', questions: 'question_kwd',
  document_keyword: 'docnm_kwd', dataset_id: 'kb_id',
};

/** A retrieved chunk with the index's field names (RAW_KEYS). */
function rawChunk(c: object): P {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [RAW_KEYS[k] ?? k, v]));
}

// ---------------------------------------------------------------- related questions

const RELATED_PROMPT = `You suggest search terms related to the user's keywords: 5 to 10 short queries someone looking for the same information might also type.
Write them in the language of the keywords, one per line, numbered "1. ", "2. ", … Output only the list.`;

/**
 * `POST /chat/recommendation {question, search_id?}` (also `/sessions/related_questions` and the
 * widget's `/searchbots/related_questions`): related search terms by the search app's chat model
 * (`chat_id`, else the tenant's default), the numbered lines of its answer. The built-in
 * extractive model writes nothing of its own: 102, naming the model to configure.
 */
export async function recommendation(e: Engine, ctx: Ctx, p: P): Promise<string[]> {
  const row = p.search_id ? await getRow(e, p.search_id) : undefined;
  const cfg = row ? (JSON.parse(row.search_config) as P) : {};
  const llmId = typeof cfg.chat_id === 'string' && cfg.chat_id ? cfg.chat_id : await defaultChatModel(e, ctx);
  const model = chatModelExists(e, llmId) ? chatModel(e, llmId) : undefined;
  if (!model) return dataError(`\`llm_id\` ${llmId} doesn't exist`);
  if (model.capabilities?.rewrite === false) fail('NEEDS_GENERATIVE_MODEL', 'Related questions', llmId);
  const setting: P = isPlainObject(cfg.llm_setting) ? { ...cfg.llm_setting } : { temperature: 0.9 };
  delete setting.parameter;
  const r = await model.chat([
    { role: 'system', content: RELATED_PROMPT },
    { role: 'user', content: `\nKeywords: ${pyStr(p.question)}\nRelated search terms:\n    ` },
  ], { temperature: typeof setting.temperature === 'number' ? setting.temperature : 0.9, signal: p.signal instanceof AbortSignal ? p.signal : undefined });
  return r.content.split('\n').filter((a) => /^[0-9]\. /.test(a)).map((a) => a.replace(/^[0-9]\. /, ''));
}

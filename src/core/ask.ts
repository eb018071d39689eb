/**
 * One answer of a chat assistant (RAGFlow's `async_chat`, reference §8): refine the question,
 * retrieve with the chat's settings, fit the knowledge block and history to the model's context,
 * call the model, verify its citations, and build the reference. Yields deltas as the model
 * streams, then one final event. It writes nothing: the caller stores the exchange.
 */
import type { Engine } from './engine.js';
import type { ChatRow, PromptConfig } from './chats.js';
import { chatPromptConfig, chatDatasetIds } from './chats.js';
import { CitationFilter, verifyCitations, splitSentences } from './citations.js';
import { embedCached } from './embedding.js';
import { questionRelated } from './related.js';
import { hybridSearch, type Reranker, type MetadataFilter, type DocAgg } from '../search/index.js';
import { analyze, countTokens, truncateTokens } from '../text/index.js';
import type { ChatModel, ChatMessage, ChatOptions, KnowledgeItem, Usage } from '../llm/index.js';

export interface AskRequest {
  chat: ChatRow;
  model: ChatModel;
  /** The conversation, oldest first, ending with the user's question (system messages are ignored). */
  messages: Array<{ role: string; content: string }>;
  /** Values for the prompt's `{parameters}`. */
  vars?: Record<string, unknown>;
  /** Cite sources (RAGFlow: prompt_config.quote and the request's `quote`). @default prompt_config.quote */
  quote?: boolean;
  reranker?: Reranker;
  documentIds?: string[];
  metadata?: MetadataFilter | null;
  /** Sampling settings over the chat's llm_setting. */
  llmSetting?: Record<string, unknown>;
  /** Add each document's meta_fields to the reference chunks (all fields, or these). */
  documentMetadata?: { fields?: string[] } | null;
  stream: boolean;
  signal?: AbortSignal;
}

export interface Reference {
  total: number;
  chunks: Record<string, unknown>[];
  doc_aggs: DocAgg[];
}

export interface AskTimings {
  /** Question refinement by the model (multi-turn), ms. */
  refine: number;
  retrieval: number;
  /** Knowledge block, system prompt, history fitting, ms. */
  prompt: number;
  /** The model's answer, ms (first byte to last for streams). */
  model: number;
  /** Citation checks and the reference, ms. */
  decorate: number;
}

export type AskEvent =
  | { type: 'delta'; text: string; reasoning?: string }
  | {
      type: 'final';
      answer: string;
      reference: Reference;
      prompt: string;
      /** `[ID:n]` markers removed because they named no passage sent to the model. */
      citations_removed: number;
      usage: Usage;
      timings: AskTimings;
      /** False when the model was not called (empty_response). */
      model_called: boolean;
    };

/** Errors of the pipeline the api maps to RAGFlow's codes. */
export class AskError extends Error {
  override name = 'AskError';
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

const CITATION_PROMPT = `

# Citations
- Cite the passages of the knowledge base you used with markers of the form [ID:i], where i is the passage's ID; several passages: [ID:i][ID:j].
- Put a citation at the end of the sentence it supports, before the punctuation; at most 4 per sentence.
- Cite only IDs that appear in the knowledge base above; never invent one. Do not cite common knowledge or your own transitions.`;

const REFINE_PROMPT = (conversation: string, today: string) => `## Task
Rewrite the user's latest question so that it can be understood without the conversation: resolve pronouns and references, and turn relative dates into absolute ones (today is ${today}).
If the latest question is already complete, return it unchanged. Output only the question, in the language of the user's question.

## Conversation
${conversation}`;

const KEYWORD_PROMPT = (content: string) => `## Task
Extract the 3 most important keywords or phrases of the text below, in the text's language, separated by commas. Output the keywords only.

## Text
${content}`;

/** RAGFlow's `keyword_extraction`: the model's keywords for `question` ('' when it fails). */
export async function keywordExtraction(model: ChatModel, question: string, signal?: AbortSignal): Promise<string> {
  try {
    const r = await model.chat([{ role: 'system', content: KEYWORD_PROMPT(question) }, { role: 'user', content: 'Output: ' }], { temperature: 0.2, signal });
    return r.content.replace(/^[\s\S]*<\/think>/, '').trim();
  } catch (err) {
    if (signal?.aborted) throw err;
    return '';
  }
}

const CROSS_LANGUAGES_PROMPT = (query: string, languages: string[]) => `## Task
Translate the query below into each of these languages, in this order: ${languages.join(', ')}.
Keep names, numbers and technical terms as they are. Output only the translations, separated by a line holding only ===.

## Query
${query}`;

/** RAGFlow's `cross_languages`: the query in each language, one per line (the query itself when the model fails). */
export async function crossLanguages(model: ChatModel, query: string, languages: string[], signal?: AbortSignal): Promise<string> {
  try {
    const r = await model.chat([{ role: 'system', content: CROSS_LANGUAGES_PROMPT(query, languages) }, { role: 'user', content: 'Output: ' }], { temperature: 0.2, signal });
    const text = r.content.replace(/^[\s\S]*<\/think>/, '').replace(/^Output:/, '');
    const parts = text.split(/\n?===+\n?/).map((x) => x.replace(/\n+/g, ' ').trim()).filter(Boolean);
    return parts.length ? parts.join('\n') : query;
  } catch (err) {
    if (signal?.aborted) throw err;
    return query;
  }
}

/**
 * The turns a model is asked about (RAGFlow's rule): system messages dropped, and assistant
 * messages before the first kept turn (the prologue) too.
 */
export function conversationTurns<M extends { role: string }>(msgs: M[]): M[] {
  const out: M[] = [];
  for (const m of msgs) {
    if (m.role === 'system' || (m.role === 'assistant' && !out.length)) continue;
    out.push(m);
  }
  return out;
}

/** Python's str.format for the names given; other braces stay as they are. */
export function formatPrompt(template: string, vars: Record<string, unknown>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, key: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    return key !== undefined && key in vars ? String(vars[key]) : m;
  });
}

/** RAGFlow's `kb_prompt`: the passages that fit 97% of the context, numbered from 0. */
export function knowledgeBlock(chunks: Record<string, unknown>[], maxTokens: number): { items: KnowledgeItem[]; texts: string[] } {
  let used = 0;
  let n = 0;
  for (const c of chunks) {
    const content = String(c.content ?? '');
    if (!content) {
      n++;
      continue;
    }
    used += countTokens(content);
    if (maxTokens * 0.97 < used) break;
    n++;
  }
  const node = (k: string, v: unknown) => (v === undefined || v === null || v === '' ? '' : `\n├── ${k}: ${String(v).replace(/\n+/g, ' ')}`);
  const items: KnowledgeItem[] = [];
  const texts: string[] = [];
  chunks.slice(0, n).forEach((c, i) => {
    const title = String(c.document_keyword ?? c.document_name ?? '');
    let t = `\nID: ${i}${node('Title', title)}${node('URL', c.url)}`;
    for (const [k, v] of Object.entries((c.document_metadata as Record<string, unknown> | null) ?? {})) t += node(k, v);
    t += `\n└── Content:\n${String(c.content ?? '')}`;
    texts.push(t);
    const item: KnowledgeItem = { id: i, title, content: String(c.content ?? '') };
    for (const k of ['similarity', 'term_similarity', 'vector_similarity'] as const) {
      const v = c[k];
      if (typeof v === 'number' && Number.isFinite(v)) item[k] = v;
    }
    items.push(item);
  });
  return { items, texts };
}

/** RAGFlow's `message_fit_in`: drop the middle of the history, then trim, to fit `max` tokens. */
export function fitMessages(msgs: ChatMessage[], max: number): { messages: ChatMessage[]; tokens: number } {
  const count = (ms: ChatMessage[]) => ms.reduce((s, m) => s + countTokens(m.content), 0);
  let c = count(msgs);
  if (c < max) return { messages: msgs, tokens: c };
  let ms = [...msgs.filter((m) => m.role === 'system'), ...(msgs.length > 1 ? [msgs[msgs.length - 1]!] : [])].map((m) => ({ ...m }));
  c = count(ms);
  if (c < max) return { messages: ms, tokens: c };
  if (ms.length === 1) {
    ms[0]!.content = truncateTokens(ms[0]!.content, max);
    return { messages: ms, tokens: count(ms) };
  }
  const ll = countTokens(ms[0]!.content);
  const ll2 = countTokens(ms[ms.length - 1]!.content);
  if (ll / (ll + ll2) > 0.8) {
    const keepLast = Math.min(ll2, max);
    ms[ms.length - 1]!.content = truncateTokens(ms[ms.length - 1]!.content, keepLast);
    ms[0]!.content = truncateTokens(ms[0]!.content, Math.max(0, max - keepLast));
  } else {
    const keepSys = Math.min(ll, max);
    ms[0]!.content = truncateTokens(ms[0]!.content, keepSys);
    ms[ms.length - 1]!.content = truncateTokens(ms[ms.length - 1]!.content, Math.max(0, max - keepSys));
  }
  ms = ms.filter((m) => m.role === 'system' || m.content);
  return { messages: ms, tokens: count(ms) };
}

/** RAGFlow's reference chunk (`chunks_format`). */
export function referenceChunk(c: Record<string, unknown>): Record<string, unknown> {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    id: c.id,
    content: c.content,
    document_id: c.document_id,
    document_name: c.document_keyword ?? c.document_name,
    dataset_id: c.dataset_id,
    image_id: c.image_id ?? '',
    positions: c.positions ?? [],
    url: c.url ?? null,
    similarity: num(c.similarity),
    vector_similarity: num(c.vector_similarity),
    term_similarity: num(c.term_similarity),
    row_id: c.row_id ?? null,
    doc_type: c.doc_type_kwd ?? c.doc_type ?? '',
    document_metadata: c.document_metadata ?? null,
  };
}

const SAMPLING_KEYS = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'max_tokens', 'stop'] as const;

function samplingOptions(s: Record<string, unknown>): ChatOptions {
  const o: Record<string, unknown> = {};
  for (const k of SAMPLING_KEYS) if (s[k] !== undefined && s[k] !== null && s[k] !== '') o[k] = s[k];
  return o as ChatOptions;
}

const now = () => performance.now();

export async function* ask(e: Engine, r: AskRequest): AsyncGenerator<AskEvent> {
  const t0 = now();
  const timings: AskTimings = { refine: 0, retrieval: 0, prompt: 0, model: 0, decorate: 0 };
  const pc: PromptConfig = chatPromptConfig(r.chat);
  const vars = { ...(r.vars ?? {}) };
  const setting = { ...(JSON.parse(r.chat.llm_setting) as Record<string, unknown>), ...(r.llmSetting ?? {}) };
  const caps = r.model.capabilities ?? { rewrite: true, keywords: true, tools: true };
  const history = conversationTurns(r.messages);
  if (!history.length || history[history.length - 1]!.role !== 'user') {
    throw new AskError(102, 'The last content of this conversation is not from user.');
  }
  const datasets = await e.store.datasets.live(chatDatasetIds(r.chat));

  // No datasets: the model answers alone, with the system prompt as written (RAGFlow's chat_solo).
  if (!datasets.length) {
    const msgs: ChatMessage[] = [...(pc.system ? [{ role: 'system' as const, content: pc.system }] : []), ...history.map(toMessage)];
    yield* callModel(r, msgs, { ...samplingOptions(setting), empty_response: pc.empty_response }, 0, false, timings, t0, pc.system ?? '', null);
    return;
  }

  const paramKeys = (pc.parameters ?? []).map((p) => p.key);
  let system = pc.system ?? '';
  if (!paramKeys.includes('knowledge') && system.includes('{knowledge}')) paramKeys.push('knowledge');
  for (const p of pc.parameters ?? []) {
    if (p.key === 'knowledge') continue;
    if (!(p.key in vars) && !p.optional) throw new AskError(100, `KeyError('Miss parameter: ${p.key}')`);
    if (!(p.key in vars)) system = system.split(`{${p.key}}`).join(' ');
  }

  // The question: the last user turn, or (multi-turn) one rewritten by the model.
  const userTurns = history.filter((m) => m.role === 'user').map((m) => m.content).slice(-3);
  let question = userTurns[userTurns.length - 1]!;
  const tr = now();
  if (userTurns.length > 1 && pc.refine_multiturn && caps.rewrite !== false) {
    const conversation = history.map((m) => `${m.role.toUpperCase()}: ${m.content}`).join('\n');
    try {
      const res = await r.model.chat(
        [{ role: 'system', content: REFINE_PROMPT(conversation, new Date().toISOString().slice(0, 10)) }, { role: 'user', content: 'Output: ' }],
        { temperature: 0.2, signal: r.signal },
      );
      const refined = res.content.replace(/^[\s\S]*<\/think>/, '').trim();
      if (refined) question = refined;
    } catch (err) {
      if (r.signal?.aborted) throw err;
      // As RAGFlow: a failed rewrite falls back to the question as asked.
    }
  }
  if (pc.keyword && caps.keywords !== false) {
    try {
      const kw = await r.model.chat([{ role: 'system', content: KEYWORD_PROMPT(question) }, { role: 'user', content: 'Output: ' }], { temperature: 0.2, signal: r.signal });
      const words = kw.content.replace(/^[\s\S]*<\/think>/, '').trim();
      if (words) question = `${question},${words}`;
    } catch (err) {
      if (r.signal?.aborted) throw err;
    }
  }
  timings.refine = now() - tr;

  let reference: Reference = { total: 0, chunks: [], doc_aggs: [] };
  let unknownTerms: string[] | undefined;
  let items: KnowledgeItem[] = [];
  let texts: string[] = [];
  const embdId = datasets[0]!.embd_id;
  if (paramKeys.includes('knowledge')) {
    const ts = now();
    const embedder = e.models.embedder(embdId);
    const res = await hybridSearch(e.store.search, {
      datasets: datasets.map((d) => ({ id: d.id, pagerank: d.pagerank ?? 0, language: d.language })),
      question,
      embedQuestion: async (q) => (await embedder.embed([q], { signal: r.signal }))[0]!,
      documentIds: r.documentIds,
      metadata: r.metadata ?? null,
      page: 1,
      pageSize: r.chat.top_n,
      threshold: r.chat.similarity_threshold,
      weight: r.chat.vector_similarity_weight,
      topK: r.chat.top_k,
      highlight: false,
      reranker: r.reranker,
      options: e.retrievalOptions,
      related: questionRelated(question, e.retrievalOptions),
    });
    reference = { total: res.total, chunks: res.chunks, doc_aggs: Array.isArray(res.doc_aggs) ? res.doc_aggs : [] };
    unknownTerms = res.unknown;
    if (r.documentMetadata) await addDocumentMetadata(e, reference.chunks, r.documentMetadata.fields);
    timings.retrieval = now() - ts;
  }
  const tp = now();
  ({ items, texts } = knowledgeBlock(reference.chunks, r.model.maxTokens));
  if (!texts.length && pc.empty_response) {
    timings.prompt = now() - tp;
    yield {
      type: 'final',
      answer: pc.empty_response,
      reference: formatReference(reference, null),
      prompt: `\n\n### Query:\n${question}`,
      citations_removed: 0,
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      timings,
      model_called: false,
    };
    return;
  }
  vars.knowledge = `\n------\n${texts.join('\n\n------\n\n')}`;
  const quote = (r.quote ?? true) && pc.quote !== false && texts.length > 0;
  const systemText = formatPrompt(system, vars);
  const fitted = fitMessages([{ role: 'system', content: systemText }, ...history.map(toMessage)], Math.floor(r.model.maxTokens * 0.95));
  const msgs = fitted.messages;
  if (quote) msgs[0] = { ...msgs[0]!, content: msgs[0]!.content + CITATION_PROMPT };
  const options: ChatOptions = { ...samplingOptions(setting), knowledge: items, empty_response: pc.empty_response, signal: r.signal, ...(unknownTerms ? { unknown_terms: unknownTerms } : {}) };
  if (typeof options.max_tokens === 'number') options.max_tokens = Math.max(1, Math.min(options.max_tokens, r.model.maxTokens - fitted.tokens));
  timings.prompt = now() - tp;

  const decorate = { e, embdId, weight: r.chat.vector_similarity_weight, reference, items };
  yield* callModel(r, msgs, options, items.length, quote, timings, t0, `${systemText}\n\n### Query:\n${question}`, decorate);
}

function toMessage(m: { role: string; content: string }): ChatMessage {
  return { role: m.role === 'assistant' ? 'assistant' : 'user', content: m.content.replace(/##\d+\$\$/g, '') };
}

interface Decorate {
  e: Engine;
  embdId: string;
  weight: number;
  reference: Reference;
  items: KnowledgeItem[];
}

async function* callModel(
  r: AskRequest,
  msgs: ChatMessage[],
  options: ChatOptions,
  sent: number,
  quote: boolean,
  timings: AskTimings,
  t0: number,
  prompt: string,
  d: Decorate | null,
): AsyncGenerator<AskEvent> {
  options = { ...options, signal: r.signal };
  const tm = now();
  let answer = '';
  let usage: Usage | undefined;
  let removed = 0;
  if (r.stream) {
    // Markers are checked as they stream; with quoting off every marker is foreign.
    const filter = new CitationFilter(quote ? sent : 0);
    for await (const delta of r.model.stream(msgs, options)) {
      if (delta.usage) usage = delta.usage;
      if (delta.reasoning) yield { type: 'delta', text: '', reasoning: delta.reasoning };
      if (!delta.content) continue;
      const text = filter.push(delta.content);
      if (text) {
        answer += text;
        yield { type: 'delta', text };
      }
    }
    const rest = filter.end();
    if (rest) {
      answer += rest;
      yield { type: 'delta', text: rest };
    }
    removed = filter.removed;
  } else {
    const res = await r.model.chat(msgs, options);
    usage = res.usage;
    const v = verifyCitations(res.content, quote ? sent : 0);
    answer = v.text;
    removed = v.removed;
  }
  timings.model = now() - tm;
  const td = now();
  let reference: Reference = { total: 0, chunks: [], doc_aggs: [] };
  // A decline (the chat's empty_response) cites nothing and carries no references: it found nothing.
  const declined = isDecline(answer, options.empty_response);
  if (declined) answer = options.empty_response!;
  if (d && !declined) {
    let cited = verifyCitations(answer, sent).cited;
    if (quote && cited.length === 0 && answer.trim()) {
      const ins = await insertCitations(d, answer, r.signal);
      answer = ins.answer;
      cited = ins.cited;
    }
    reference = formatReference(d.reference, quote ? cited : null);
  }
  timings.decorate = now() - td;
  const completion = countTokens(answer);
  // As RAGFlow does, the prompt shown to the user ends with where the time went.
  const total = now() - t0;
  const ms = (x: number) => `${x.toFixed(1)}ms`;
  prompt +=
    `\n\n## Time elapsed:\n  - Total: ${ms(total)}\n  - Query refinement(LLM): ${ms(timings.refine)}\n  - Retrieval: ${ms(timings.retrieval)}\n` +
    `  - Prompt: ${ms(timings.prompt)}\n  - Generate answer: ${ms(timings.model)}\n  - Citations: ${ms(timings.decorate)}\n\n` +
    `## Token usage:\n  - Generated tokens(approximately): ${completion}`;
  const promptTokens = usage?.prompt_tokens ?? msgs.reduce((s, m) => s + countTokens(m.content), 0);
  yield {
    type: 'final',
    answer,
    reference,
    prompt,
    citations_removed: removed,
    usage: usage ?? { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion },
    timings,
    model_called: true,
  };
}

/** Whether an answer is the chat's empty_response, citation markers aside. */
function isDecline(answer: string, empty: string | undefined): boolean {
  const strip = (x: string) => x.replace(/\s*\[ID:\d+\]/g, '').replace(/\s+/g, ' ').trim();
  return !!empty?.trim() && strip(answer) === strip(empty);
}

/** doc_aggs narrowed to the cited documents (all of them when nothing was cited), chunks in wire form. */
function formatReference(ref: Reference, cited: number[] | null): Reference {
  let aggs = ref.doc_aggs;
  if (cited && cited.length) {
    const docs = new Set(cited.map((i) => ref.chunks[i]?.document_id).filter(Boolean));
    const narrowed = aggs.filter((a) => docs.has(a.doc_id));
    if (narrowed.length) aggs = narrowed;
  }
  return { total: ref.total, chunks: ref.chunks.map(referenceChunk), doc_aggs: aggs };
}

async function addDocumentMetadata(e: Engine, chunks: Record<string, unknown>[], fields?: string[]): Promise<void> {
  const stored = await e.store.documents.metaFields(chunks.map((c) => String(c.document_id)));
  for (const c of chunks) {
    const row = stored.get(String(c.document_id));
    let meta: Record<string, unknown> = {};
    try {
      meta = row !== undefined ? (JSON.parse(row) as Record<string, unknown>) : {};
    } catch {
      meta = {};
    }
    if (fields) meta = Object.fromEntries(Object.entries(meta).filter(([k]) => fields.includes(k)));
    c.document_metadata = meta;
  }
}

/**
 * RAGFlow's `insert_citations`, for models that cited nothing: each sentence (≥ 5 chars) gets the
 * passages most similar to it (term overlap and cosine, weighted like the chat's retrieval), with
 * a threshold that starts at 0.63 and drops by 0.8× while nothing reaches it (down to 0.3).
 */
async function insertCitations(d: Decorate, answer: string, signal?: AbortSignal): Promise<{ answer: string; cited: number[] }> {
  const n = d.items.length;
  if (!n) return { answer, cited: [] };
  const sentences = splitSentences(answer);
  const idx = sentences.map((s, i) => (s.trim().length >= 5 ? i : -1)).filter((i) => i >= 0);
  if (!idx.length) return { answer, cited: [] };
  const vecs = await embedCached(d.e, d.embdId, [...d.items.map((k) => k.content), ...idx.map((i) => sentences[i]!.trim())], signal);
  const chunkVecs = vecs.slice(0, n);
  const chunkTerms = d.items.map((k) => new Set(analyze(k.content)));
  const sims = idx.map((si, j) => {
    const sv = vecs[n + j]!;
    const terms = analyze(sentences[si]!);
    return chunkVecs.map((cv, ci) => {
      let dot = 0;
      for (let k = 0; k < sv.length; k++) dot += sv[k]! * cv[k]!;
      const tk = terms.length ? terms.filter((t) => chunkTerms[ci]!.has(t)).length / terms.length : 0;
      return d.weight * Math.max(0, dot) + (1 - d.weight) * tk;
    });
  });
  let thr = 0.63;
  let picks: number[][] = [];
  while (thr > 0.3) {
    picks = sims.map((row) => {
      return row.map((s, ci) => [s, ci] as const).filter(([s]) => s >= thr).sort((a, b) => b[0] - a[0]).slice(0, 4).map(([, ci]) => ci);
    });
    if (picks.some((p) => p.length)) break;
    thr *= 0.8;
  }
  const cited: number[] = [];
  const out = [...sentences];
  idx.forEach((si, j) => {
    const ids = picks[j] ?? [];
    if (!ids.length) return;
    for (const id of ids) if (!cited.includes(id)) cited.push(id);
    const s = out[si]!;
    const m = /([.!?。！？\n]*)$/.exec(s)!;
    out[si] = `${s.slice(0, s.length - m[1]!.length).trimEnd()} ${ids.map((i) => `[ID:${i}]`).join('')}${m[1]}`;
  });
  return { answer: out.join(''), cited };
}

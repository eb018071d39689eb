/**
 * Chat assistants and their sessions as stored (tables `chat`, `chat_session`), and their wire
 * shapes (RAGFlow's dialog / conversation dicts as its REST interface returns them).
 */
import type { Engine, Ctx } from './engine.js';
import { formatDateTime } from '../util/index.js';
import { cachedStatement } from '../store/index.js';

export interface ChatRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  icon: string;
  language: string;
  dataset_ids: string;
  llm_id: string;
  llm_setting: string;
  prompt_config: string;
  meta_data_filter: string;
  similarity_threshold: number;
  vector_similarity_weight: number;
  top_n: number;
  top_k: number;
  rerank_id: string;
  status: string;
  created_by: string;
  create_time: number;
  update_time: number;
}

export interface SessionRow {
  id: string;
  chat_id: string;
  name: string;
  user_id: string;
  create_time: number;
  update_time: number;
}

/** One stored message of a session (RAGFlow's conversation.message entries). */
export interface SessionMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
  id?: string;
  created_at?: number;
  /** Citations removed from this answer because they named no chunk sent to the model. */
  citations_removed?: number;
  [k: string]: unknown;
}

/** The prompt settings of a chat, with RAGFlow's defaults filled in. */
export interface PromptConfig {
  system: string;
  prologue: string;
  parameters: Array<{ key: string; optional: boolean }>;
  empty_response: string;
  quote: boolean;
  tts: boolean;
  refine_multiturn: boolean;
  keyword?: boolean;
  reference_metadata?: { include?: boolean; fields?: string[] };
  [k: string]: unknown;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You are an intelligent assistant. Please summarize the content of the dataset to answer the question. ' +
  'Please list the data in the dataset and answer in detail. When all dataset content is irrelevant to the ' +
  'question, your answer must include the sentence "The answer you are looking for is not found in the dataset!" ' +
  'Answers need to consider chat history.\n' +
  '      Here is the knowledge base:\n' +
  '      {knowledge}\n' +
  '      The above is the knowledge base.';

/** RAGFlow's prompt_config defaults (chat_api.py `_DEFAULT_PROMPT_CONFIG`). */
export const DEFAULT_PROMPT_CONFIG: Readonly<PromptConfig> = Object.freeze({
  system: DEFAULT_SYSTEM_PROMPT,
  prologue: "Hi! I'm your assistant. What can I do for you?",
  parameters: [{ key: 'knowledge', optional: false }],
  empty_response: 'Sorry! No relevant content was found in the knowledge base!',
  quote: true,
  tts: false,
  refine_multiturn: true,
});

export const CHAT_DEFAULTS = Object.freeze({
  description: 'A helpful Assistant',
  icon: '',
  top_n: 6 /* chunks in the prompt */,
  top_k: 1024 /* candidates per side */,
  similarity_threshold: 0.1,
  vector_similarity_weight: 0.3,
  rerank_id: '',
});

const parse = <T>(s: string, dflt: T): T => {
  try {
    return JSON.parse(s) as T;
  } catch {
    return dflt;
  }
};

export function chatPromptConfig(row: ChatRow): PromptConfig {
  return parse<PromptConfig>(row.prompt_config, { ...DEFAULT_PROMPT_CONFIG });
}

export function chatDatasetIds(row: ChatRow): string[] {
  return parse<string[]>(row.dataset_ids, []);
}

/** The chat as RAGFlow's REST interface returns it: `kb_ids` become `dataset_ids` (live datasets only) + `kb_names`. */
export function chatToWire(e: Engine, row: ChatRow): Record<string, unknown> {
  const ids: string[] = [];
  const names: string[] = [];
  const get = e.db.prepare("SELECT name FROM dataset WHERE id = ? AND status = '1'");
  for (const id of chatDatasetIds(row)) {
    const d = get.get(id) as { name: string } | undefined;
    if (!d) continue;
    ids.push(id);
    names.push(d.name);
  }
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    description: row.description,
    icon: row.icon,
    language: row.language,
    llm_id: row.llm_id,
    llm_setting: parse(row.llm_setting, {}),
    prompt_type: 'simple',
    prompt_config: chatPromptConfig(row),
    meta_data_filter: parse(row.meta_data_filter, {}),
    similarity_threshold: row.similarity_threshold,
    vector_similarity_weight: row.vector_similarity_weight,
    top_n: row.top_n,
    top_k: row.top_k,
    do_refer: '1',
    rerank_id: row.rerank_id,
    status: row.status,
    dataset_ids: ids,
    kb_names: names,
    create_time: row.create_time,
    create_date: formatDateTime(row.create_time),
    update_time: row.update_time,
    update_date: formatDateTime(row.update_time),
  };
}

/** A live chat of the caller's tenant, or undefined (RAGFlow's `_ensure_owned_chat`). */
export function ownedChat(e: Engine, ctx: Ctx, id: unknown): ChatRow | undefined {
  if (typeof id !== 'string' || !id) return undefined;
  // Prepared once per connection: deleting 100,000 ids would otherwise prepare (and hold) 100,000 statements.
  return cachedStatement(e.db, "SELECT * FROM chat WHERE id = ? AND tenant_id = ? AND status = '1'").get(id, ctx.tenantId) as ChatRow | undefined;
}

export function chatNameTaken(e: Engine, tenantId: string, name: string, exceptId = ''): boolean {
  return !!e.db.prepare("SELECT 1 FROM chat WHERE tenant_id = ? AND name = ? COLLATE NOCASE AND status = '1' AND id != ?").get(tenantId, name, exceptId);
}

/** A session's messages, oldest first (RAGFlow's `conversation.message`). */
export function sessionMessages(e: Engine, sessionId: string): SessionMessage[] {
  const rows = e.db.prepare('SELECT role, content, extra FROM chat_message WHERE session_id = ? ORDER BY seq').raw().all(sessionId) as Array<[string, string, string]>;
  return rows.map(([role, content, extra]) => ({ role: role as SessionMessage['role'], content, ...parse<Record<string, unknown>>(extra, {}) }));
}

/** The references of a session's answers, in order (RAGFlow's `conversation.reference`). */
export function sessionReferences(e: Engine, sessionId: string): unknown[] {
  const rows = e.db.prepare('SELECT reference FROM chat_message WHERE session_id = ? AND reference IS NOT NULL ORDER BY seq').pluck().all(sessionId) as string[];
  return rows.map((r) => parse<unknown>(r, {}));
}

/** Appends messages (an answer with its reference) to a session; the caller holds the transaction. */
export function appendMessages(e: Engine, sessionId: string, msgs: Array<SessionMessage & { reference?: unknown }>): void {
  const ins = e.db.prepare('INSERT INTO chat_message (session_id, role, content, extra, reference) VALUES (?, ?, ?, ?, ?)');
  for (const { role, content, reference, ...extra } of msgs) {
    ins.run(sessionId, role, content, JSON.stringify(extra), reference === undefined ? null : JSON.stringify(reference));
  }
}

export function sessionToWire(e: Engine, row: SessionRow): Record<string, unknown> {
  return {
    id: row.id,
    chat_id: row.chat_id,
    name: row.name,
    messages: sessionMessages(e, row.id),
    reference: sessionReferences(e, row.id),
    user_id: row.user_id,
    create_time: row.create_time,
    create_date: formatDateTime(row.create_time),
    update_time: row.update_time,
    update_date: formatDateTime(row.update_time),
  };
}

export function getSession(e: Engine, id: unknown): SessionRow | undefined {
  if (typeof id !== 'string' || !id) return undefined;
  return cachedStatement(e.db, 'SELECT * FROM chat_session WHERE id = ?').get(id) as SessionRow | undefined;
}

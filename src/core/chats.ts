/**
 * Chat assistants and their sessions (src/store ChatStore), and their wire shapes (RAGFlow's
 * dialog / conversation dicts as its REST interface returns them).
 */
import type { Engine, Ctx } from './engine.js';
import { formatDateTime } from '../util/index.js';
import type { ChatRow, SessionRow, Transcript } from '../store/index.js';

export type { ChatRow, SessionRow };

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

/**
 * The chats as RAGFlow's REST interface returns them: `kb_ids` become `dataset_ids` (live
 * datasets only) + `kb_names`; every chat's datasets read in one batch.
 */
export async function chatsToWire(e: Engine, rows: ChatRow[]): Promise<Record<string, unknown>[]> {
  const live = new Map((await e.store.datasets.live([...new Set(rows.flatMap((r) => chatDatasetIds(r)))])).map((d) => [d.id, d.name]));
  return rows.map((row) => {
    const ids: string[] = [];
    const names: string[] = [];
    for (const id of chatDatasetIds(row)) {
      const name = live.get(id);
      if (name === undefined) continue;
      ids.push(id);
      names.push(name);
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
  });
}

/** One chat's wire shape (chatsToWire). */
export async function chatToWire(e: Engine, row: ChatRow): Promise<Record<string, unknown>> {
  return (await chatsToWire(e, [row]))[0]!;
}

/** A live chat of the caller's tenant, or undefined (RAGFlow's `_ensure_owned_chat`). */
export async function ownedChat(e: Engine, ctx: Ctx, id: unknown): Promise<ChatRow | undefined> {
  if (typeof id !== 'string' || !id) return undefined;
  return e.store.chats.getOwned(id, ctx.tenantId);
}

export function chatNameTaken(e: Engine, tenantId: string, name: string, exceptId = ''): Promise<boolean> {
  return e.store.chats.nameTaken(tenantId, name, exceptId);
}

/** A session's messages, oldest first (RAGFlow's `conversation.message`). */
export async function sessionMessages(e: Engine, sessionId: string): Promise<SessionMessage[]> {
  return (await e.store.chats.transcripts([sessionId])).get(sessionId)!.messages as SessionMessage[];
}

/** The sessions as RAGFlow's REST interface returns them (their transcripts read in one batch). */
export async function sessionsToWire(e: Engine, rows: SessionRow[]): Promise<Record<string, unknown>[]> {
  const transcripts = await e.store.chats.transcripts(rows.map((r) => r.id));
  return rows.map((row) => sessionWire(row, transcripts.get(row.id)!));
}

export async function sessionToWire(e: Engine, row: SessionRow): Promise<Record<string, unknown>> {
  return (await sessionsToWire(e, [row]))[0]!;
}

function sessionWire(row: SessionRow, t: Transcript): Record<string, unknown> {
  return {
    id: row.id,
    chat_id: row.chat_id,
    name: row.name,
    messages: t.messages,
    reference: t.references,
    user_id: row.user_id,
    create_time: row.create_time,
    create_date: formatDateTime(row.create_time),
    update_time: row.update_time,
    update_date: formatDateTime(row.update_time),
  };
}

export async function getSession(e: Engine, id: unknown): Promise<SessionRow | undefined> {
  if (typeof id !== 'string' || !id) return undefined;
  return e.store.chats.getSession(id);
}

/**
 * Chat assistants (RAGFlow's dialog; table chat), their sessions (conversation; chat_session) and
 * the sessions' messages (chat_message, one row each).
 */

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

/**
 * A message as stored: its role and content, its reference (an answer's, stored apart) and any
 * other keys (kept as JSON).
 */
export interface StoredMessage {
  role: string;
  content: string;
  reference?: unknown;
  [k: string]: unknown;
}

/** A session's messages (oldest first, without their references) and its answers' references in order. */
export interface Transcript {
  messages: Array<{ role: string; content: string; [k: string]: unknown }>;
  references: unknown[];
}

export interface ChatListQuery {
  tenantIds: readonly string[];
  id?: string;
  /** compared case-insensitively */
  name?: string;
  /** a substring of the name, lower case */
  keywords?: string;
  /** a column of the chat (RAGFlow orders by any field of its Dialog) */
  orderby: keyof ChatRow;
  desc: boolean;
  /** SQL's LIMIT and OFFSET; absent: every row. */
  page?: { limit: number; offset: number };
}

export interface SessionListQuery {
  chatId: string;
  id?: string;
  /** compared case-insensitively */
  name?: string;
  userId?: string;
  /** a column of the session (RAGFlow orders by any field of its Conversation) */
  orderby: keyof SessionRow;
  desc: boolean;
  /** SQL's LIMIT and OFFSET; absent: every row. */
  page?: { limit: number; offset: number };
}

export type ChatChanges = Partial<Omit<ChatRow, 'id' | 'tenant_id' | 'status' | 'created_by' | 'create_time'>>;

export interface ChatStore {
  /** A live chat of the tenant. */
  getOwned(id: string, tenantId: string): Promise<ChatRow | undefined>;
  /** Another live chat of the tenant has this name (case-insensitively). */
  nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean>;
  /** Inserts the chat unless a live chat of its tenant has its name; check and insert are one transaction. */
  create(row: ChatRow): Promise<boolean>;
  /**
   * Updates a chat; with `checkName`, unless another live chat of the tenant has its new name
   * (false, nothing written): check and update are one transaction.
   */
  update(id: string, tenantId: string, changes: ChatChanges, checkName: boolean): Promise<boolean>;
  list(q: ChatListQuery): Promise<{ total: number; rows: ChatRow[] }>;
  /** Ids of the tenant's live chats. */
  liveIds(tenantId: string): Promise<string[]>;
  /** Soft-deletes (status '0') the tenant's live chats among `ids`, one transaction; per id whether it was. */
  softDelete(tenantId: string, ids: readonly string[], time: number): Promise<boolean[]>;

  getSession(id: string): Promise<SessionRow | undefined>;
  /**
   * A new session with its first messages, one transaction. `points` name the crash-test points
   * (src/util/fault.ts) between the two and after the commit, when the caller has them.
   */
  createSession(row: SessionRow, messages: readonly StoredMessage[], points?: { inserted?: string; committed?: string }): Promise<void>;
  listSessions(q: SessionListQuery): Promise<SessionRow[]>;
  sessionIds(chatId: string): Promise<string[]>;
  renameSession(id: string, name: string, time: number): Promise<void>;
  /** Deletes the chat's sessions among `ids` (with their messages), one transaction; per id whether it was. */
  deleteSessions(chatId: string, ids: readonly string[]): Promise<boolean[]>;
  /** Each session's transcript (absent sessions get an empty one). */
  transcripts(sessionIds: readonly string[]): Promise<Map<string, Transcript>>;
  /**
   * Saves a turn, one transaction, unless the session is gone (false): `replace` first deletes the
   * stored messages; then `append` is appended and update_time set.
   */
  saveTurn(sessionId: string, turn: { replace: boolean; append: readonly StoredMessage[]; time: number }): Promise<boolean>;
  /**
   * Deletes a question and its answer (the two messages of id `messageId`; the answer's reference
   * goes with it) and sets the session's update_time, one transaction. 'absent': no message has
   * that id (nothing changes); 'unanswered': the question is the last message, 'mismatched': the
   * next message has another id (nothing changes either).
   */
  deleteExchange(sessionId: string, messageId: string, time: number): Promise<'deleted' | 'absent' | 'unanswered' | 'mismatched'>;
  /**
   * Marks the session's answer of id `messageId` liked (`thumbup`, feedback dropped) or not
   * (`feedback` kept when given and truthy), one transaction; no such answer: nothing changes.
   */
  rateAnswer(sessionId: string, messageId: string, thumbup: boolean, feedback: unknown): Promise<void>;
}

/**
 * The assistant message `messageId` among a session's stored rows, with its `extra` as rated
 * (a thumb up drops an earlier feedback): both stores write back what this returns.
 */
export function ratedAnswer(
  rows: ReadonlyArray<{ seq: number; extra: string }>, messageId: string, thumbup: boolean, feedback: unknown,
): { seq: number; extra: string } | undefined {
  const row = rows.find((r) => (JSON.parse(r.extra) as { id?: unknown }).id === messageId);
  if (!row) return undefined;
  const extra = JSON.parse(row.extra) as Record<string, unknown>;
  extra.thumbup = thumbup;
  if (thumbup) delete extra.feedback;
  else if (feedback) extra.feedback = feedback;
  return { seq: row.seq, extra: JSON.stringify(extra) };
}

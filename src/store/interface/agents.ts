/**
 * Agents (RAGFlow's user_canvas; table agent), their saved versions (agent_version) and their
 * sessions (agent_session) with the sessions' messages (agent_message, numbered per session).
 */

export interface AgentRow {
  id: string;
  /** The owner (RAGFlow's `user_id`: the owner's own tenant). */
  tenant_id: string;
  title: string;
  avatar: string;
  description: string | null;
  permission: string;
  release: number;
  canvas_type: string;
  canvas_category: string;
  tags: string;
  /** The draft canvas, JSON. */
  dsl: string;
  create_time: number;
  update_time: number;
}

export interface AgentVersionRow {
  id: string;
  agent_id: string;
  title: string | null;
  description: string | null;
  release: number;
  dsl: string;
  create_time: number;
  update_time: number;
}

export interface AgentSessionRow {
  id: string;
  agent_id: string;
  name: string;
  user_id: string;
  exp_user_id: string | null;
  source: string;
  /** The session's own canvas state (RAGFlow's `str(canvas)`), JSON. */
  dsl: string;
  version_title: string | null;
  tokens: number;
  duration: number;
  round: number;
  thumb_up: number;
  errors: string | null;
  create_time: number;
  update_time: number;
}

/** One message of an agent session as the runtime writes it (its reference stored apart). */
export interface AgentTurnMessage {
  role: string;
  content: string;
  id?: string;
  created_at?: number;
  reference?: unknown;
  [k: string]: unknown;
}

/** A version to save (RAGFlow's `save_or_replace_latest`, see AgentStore.create). */
export interface VersionSave {
  dsl: Record<string, unknown>;
  title?: string | null;
  description?: string | null;
  release?: boolean;
  /** The time of the save (ms). */
  time: number;
  /** A new version's id, when one is written. */
  newId: string;
}

/** RAGFlow keeps at most this many unreleased versions per agent (`delete_all_versions`). */
export const UNRELEASED_VERSIONS_KEPT = 20;

export interface AgentListQuery {
  /** the owners whose agents are listed */
  tenantIds: readonly string[];
  /** another owner's agents only when `team` */
  ownTenantId: string;
  /** a substring of the title, lower case */
  keywords?: string;
  category?: string;
  /** any of these tags (lower case), each a whole item of the comma-separated list */
  tags?: readonly string[];
  /** a column of the agent (RAGFlow orders by any field of its UserCanvas) */
  orderby: keyof AgentRow;
  desc: boolean;
  /** SQL's LIMIT and OFFSET; absent: every row. */
  page?: { limit: number; offset: number };
}

export interface AgentSessionListQuery {
  agentId: string;
  id?: string;
  userId?: string;
  /** a substring of a message's content, lower case */
  keywords?: string;
  /** bounds of create_time or update_time (ms, inclusive) */
  dateColumn: 'create_time' | 'update_time';
  from?: number;
  to?: number;
  /** a column of the session (RAGFlow orders by any field of its API4Conversation) */
  orderby: keyof AgentSessionRow;
  desc: boolean;
  /** SQL's LIMIT and OFFSET; absent: every row. */
  page?: { limit: number; offset: number };
}

export type AgentChanges = Partial<Omit<AgentRow, 'id' | 'tenant_id' | 'create_time'>>;

export interface NewAgentSession {
  id: string;
  agent_id: string;
  user_id: string;
  name?: string;
  dsl: object;
  messages: AgentTurnMessage[];
  version_title: string | null;
  source?: string;
}

export interface AgentStore {
  get(id: string): Promise<AgentRow | undefined>;
  /** Another agent of the owner has this title in this category (case-insensitively). */
  titleTaken(tenantId: string, title: string, category: string, exceptId?: string): Promise<boolean>;
  /**
   * Inserts the agent and saves its first version, one transaction, unless another agent of the
   * owner has its title in its category (false, nothing written). A save: the same dsl as the
   * newest version updates that version in place (unless the newest is released and this save is
   * not), another dsl writes a new version; then unreleased versions beyond the newest
   * UNRELEASED_VERSIONS_KEPT are pruned.
   */
  create(row: AgentRow, version: VersionSave): Promise<boolean>;
  /**
   * Updates the agent and, with `version`, saves one (as create does), one transaction; with a
   * title or category change, unless another agent of the owner has the title there (false).
   */
  update(id: string, changes: AgentChanges, version: VersionSave | null, checkTitle: { title: string; category: string } | null): Promise<boolean>;
  /** The agent, its versions, sessions and their messages. */
  delete(id: string): Promise<void>;
  list(q: AgentListQuery): Promise<{ total: number; rows: AgentRow[] }>;
  /**
   * The figures of the sessions of the tenant's agents created in [from, to] (ms), by creation:
   * `t` its create_time, and its user, tokens, duration, rounds and thumb_up.
   */
  sessionFigures(tenantId: string, from: number, to: number): Promise<Array<{ t: number; user_id: string; tokens: number; duration: number; round: number; thumb_up: number }>>;
  /** The `tags` (comma-separated) of every agent `list` would show for these owners (and category), those with tags only. */
  tagLists(q: Pick<AgentListQuery, 'tenantIds' | 'ownTenantId' | 'category'>): Promise<string[]>;
  /** Per agent, the create_time of its newest released version (agents without one absent). */
  releaseTimes(agentIds: readonly string[]): Promise<Map<string, number>>;
  /** The update_time of the agent's newest released version, or null. */
  lastPublished(agentId: string): Promise<number | null>;
  /** Versions, newest first (by update_time). */
  versions(agentId: string): Promise<AgentVersionRow[]>;
  getVersion(id: string): Promise<AgentVersionRow | undefined>;
  /** The newest version (by create_time), or the newest released one. */
  latestVersion(agentId: string, onlyReleased: boolean): Promise<AgentVersionRow | undefined>;

  getSession(id: string): Promise<AgentSessionRow | undefined>;
  /** A session with its first messages, one transaction. */
  createSession(s: NewAgentSession, time: number): Promise<void>;
  listSessions(q: AgentSessionListQuery): Promise<{ total: number; rows: AgentSessionRow[] }>;
  /** (id, name) of a user's sessions (exp_user_id), newest first. */
  sessionNames(agentId: string, expUserId: string): Promise<Array<{ id: string; name: string }>>;
  sessionIds(agentId: string): Promise<string[]>;
  /** Deletes the agent's sessions among `ids`, one transaction; per id whether it was. */
  deleteSessions(agentId: string, ids: readonly string[]): Promise<boolean[]>;
  /** Each session's messages, oldest first, with their references. */
  messages(sessionIds: readonly string[]): Promise<Map<string, AgentTurnMessage[]>>;
  /**
   * Saves one run of a session, one transaction: appends the messages, replaces the canvas state,
   * adds one round and the duration, sets `errors` when given. False (nothing written) when the
   * session is gone.
   */
  saveTurn(sessionId: string, turn: { append: AgentTurnMessage[]; dsl: object; errors?: string; durationSec?: number }, time: number): Promise<boolean>;
}

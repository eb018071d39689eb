/**
 * Agents as users hold them (RAGFlow SDK's `Agent`): a canvas DSL with its sessions. Every key of
 * the server's answer is kept, as the SDK's Agent does.
 */
import { Resource } from './resources.js';
import { AgentSession } from './agent-session.js';

export class Agent extends Resource {
  declare readonly id: string;
  declare title: string;
  declare description: string | null;
  declare avatar: string;
  /** The draft canvas (`getAgent` / `createAgent`; the list leaves it out, as RAGFlow's does). */
  declare dsl?: Record<string, unknown>;
  declare canvas_type: string;
  declare canvas_category: string;
  declare permission: 'me' | 'team';
  declare tags: string;

  /**
   * A new session over the agent's draft canvas, or with `release: true` its newest published
   * version. Its first message is the Begin component's prologue.
   */
  async createSession(p: { name?: string; user_id?: string; release?: boolean; [k: string]: unknown } = {}): Promise<AgentSession> {
    return new AgentSession(this.t, await this.t.call<Record<string, unknown>>('agentSessions.create', { ...p, agent_id: this.id }));
  }

  /** The agent's sessions (SDK defaults: page 1, 30 per page, newest created first); `dsl: false` leaves each canvas out. */
  async listSessions(p: {
    page?: number; page_size?: number; orderby?: 'create_time' | 'update_time' | string; desc?: boolean; id?: string; user_id?: string;
    keywords?: string; dsl?: boolean;
  } = {}): Promise<AgentSession[]> {
    const r = await this.t.call<{ data: Record<string, unknown>[] }>('agentSessions.list', { page: 1, page_size: 30, orderby: 'create_time', desc: true, ...p, agent_id: this.id });
    return r.data.map((s) => new AgentSession(this.t, s));
  }

  /**
   * Deletes sessions: `{ ids }`, or `{ delete_all: true }` (the agent's owner only). Some unknown ids
   * among known ones: the known ones are deleted and the call resolves; only unknown ones: 102.
   */
  async deleteSessions(p: { ids?: string[] | null; delete_all?: boolean } = {}): Promise<void> {
    await this.t.call('agentSessions.delete', { ids: p.ids ?? null, ...(p.delete_all ? { delete_all: true } : {}), agent_id: this.id });
  }

  /** Deletes one session (`DELETE /agents/{id}/sessions/{session_id}`); resolves to whether it existed. */
  async deleteSession(session_id: string): Promise<boolean> {
    return (await this.t.call<number>('agentSessions.deleteOne', { agent_id: this.id, session_id })) > 0;
  }
}

/**
 * Memories as users hold them (RAGFlow SDK's Memory): an agent's conversation memory, sized by a
 * FIFO byte budget (docs/memory.md).
 */
import { Resource } from './resources.js';
import type { MemoryType, UpdateMemoryParams } from './params.js';

export interface MemoryMessage {
  message_id: number;
  message_type: 'raw' | 'semantic' | 'episodic' | 'procedural';
  source_id: number;
  memory_id: string;
  user_id: string;
  agent_id: string;
  session_id: string;
  content: string;
  valid_at: string;
  invalid_at: string;
  forget_at: string;
  status: boolean;
  /** Search results: the fused score and its two sides. */
  similarity?: number;
  vector_similarity?: number;
  term_similarity?: number;
  extract?: MemoryMessage[];
  task?: { status?: string; attempts?: number; progress_msg?: string };
  content_embed?: number[];
}

export class Memory extends Resource {
  declare readonly id: string;
  declare name: string;
  declare avatar: string;
  declare tenant_id: string;
  declare owner_name: string | null;
  declare memory_type: MemoryType[];
  declare storage_type: string;
  declare embd_id: string;
  declare llm_id: string;
  declare permissions: 'me' | 'team';
  declare description: string;
  declare memory_size: number;
  declare forgetting_policy: 'FIFO';
  declare temperature: number;
  declare system_prompt: string;
  declare user_prompt: string;

  /** Changes settings; a smaller `memory_size` evicts at once. Returns this memory, refreshed. */
  async update(msg: UpdateMemoryParams): Promise<this> {
    this.assign(await this.t.call<Record<string, unknown>>('memories.update', { ...msg, memory_id: this.id }));
    return this;
  }

  /** The full configuration, fresh from the store. */
  async getConfig(): Promise<Memory> {
    return new Memory(this.t, await this.t.call<Record<string, unknown>>('memories.config', { memory_id: this.id }));
  }

  /** Bytes charged (UTF-8 content + 4 × vector dimensions per message) against `memory_size`. */
  usage(): Promise<{ used: number; budget: number; messages: number }> {
    return this.t.call('memories.usage', { memory_id: this.id });
  }

  /** Raw messages, newest first, each with the items extracted from it; `keywords` matches session ids. */
  listMemoryMessages(p: { agent_id?: string | string[]; keywords?: string; page?: number; page_size?: number } = {}): Promise<{ messages: { message_list: MemoryMessage[]; total_count: number }; storage_type: string }> {
    return this.t.call('memories.messages', { page: 1, page_size: 50, ...p, memory_id: this.id });
  }

  /** Hides a message from search and recent messages; it is evicted first when room is needed. */
  forgetMessage(message_id: number): Promise<true> {
    return this.t.call('messages.forget', { memory_id: this.id, message_id });
  }

  updateMessageStatus(message_id: number, status: boolean): Promise<true> {
    return this.t.call('messages.status', { memory_id: this.id, message_id, status });
  }

  /** A message with its embedding (`content_embed`). */
  getMessageContent(message_id: number): Promise<MemoryMessage> {
    return this.t.call('messages.content', { memory_id: this.id, message_id });
  }
}

/**
 * Chat assistants, sessions and answers as users hold them (RAGFlow SDK's Chat, Session, Message).
 */
import type { Transport } from './transport.js';
import { Resource } from './resources.js';
import type { UpdateChatParams, UpdateSessionParams, LlmSetting, PromptConfig } from './params.js';

/** A chunk an answer drew on (RAGFlow's reference chunk). */
export interface ReferenceChunk {
  id: string;
  content: string;
  document_id: string;
  document_name: string;
  dataset_id: string;
  image_id: string;
  positions: unknown[];
  url: string | null;
  similarity: number | null;
  vector_similarity: number | null;
  term_similarity: number | null;
  row_id: unknown;
  doc_type: string;
  document_metadata: Record<string, unknown> | null;
}

/** One answer (or, streamed, the answer so far). */
export class Message {
  content = '';
  /** The chunks sent to the model, each citable as `[ID:i]` by its index; on the last message of a stream. */
  reference: ReferenceChunk[] | null = null;
  role = 'assistant';
  prompt: string | null = null;
  id: string | null = null;
  session_id?: string;
  /** `[ID:n]` markers removed from the answer because they named no chunk sent to the model. */
  citations_removed = 0;
  /** True on the last message of a stream (and on a non-streamed answer). */
  final = true;
  constructor(data: Partial<Message>) {
    Object.assign(this, data);
  }
}

export interface AskOptions {
  stream?: boolean;
  /** Sampling overrides for this answer. */
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** Stop the answer (the model request is aborted). */
  signal?: AbortSignal;
  /** Values for the chat's custom prompt `parameters`. */
  [variable: string]: unknown;
}

type Answer = { answer: string; reference?: { chunks?: ReferenceChunk[] } | Record<string, never>; prompt?: string; id?: string; session_id?: string; final?: boolean; citations_removed?: number };

export class Session extends Resource {
  declare readonly id: string;
  declare chat_id: string;
  declare name: string;
  declare messages: Array<{ role: string; content: string; id?: string }>;
  declare reference: unknown[];
  declare user_id: string;

  /** Renames the session (messages and references cannot be changed). */
  async update(msg: UpdateSessionParams): Promise<void> {
    const d = await this.t.call<Record<string, unknown>>('sessions.update', { ...msg, chat_id: this.chat_id, session_id: this.id });
    this.assign(d);
  }

  /** Removes a question and its answer (they share `message_id`: a Message's `id`) from the session. */
  async deleteMessage(message_id: string): Promise<void> {
    this.assign(await this.t.call<Record<string, unknown>>('sessions.deleteMessage', { chat_id: this.chat_id, session_id: this.id, message_id }));
  }

  /** Marks an answer liked or not; a dislike keeps `feedback`. */
  async feedback(message_id: string, p: { thumbup: boolean; feedback?: string }): Promise<void> {
    this.assign(await this.t.call<Record<string, unknown>>('sessions.feedback', { ...p, chat_id: this.chat_id, session_id: this.id, message_id }));
  }

  /**
   * Asks the chat in this session. Resolves to the answer; with `{ stream: true }` an
   * AsyncIterable of Messages whose `content` grows cumulatively, the last one carrying the
   * references. The exchange is stored in the session once the answer is complete.
   */
  ask(question: string, opts?: AskOptions & { stream?: false }): Promise<Message>;
  ask(question: string, opts: AskOptions & { stream: true }): AsyncIterable<Message>;
  ask(question: string, opts: AskOptions = {}): Promise<Message> | AsyncIterable<Message> {
    const { stream = false, ...rest } = opts;
    const params = { ...rest, chat_id: this.chat_id, session_id: this.id, question, stream };
    if (!stream) {
      return this.t.call<Answer>('chats.completion', params).then((a) => {
        this.remember(question, a);
        return toMessage(a, a.answer);
      });
    }
    return this.streamAnswer(params, question);
  }

  private async *streamAnswer(params: Record<string, unknown>, question: string): AsyncGenerator<Message> {
    const abort = new AbortController();
    const outer = params.signal as AbortSignal | undefined;
    if (outer?.aborted) abort.abort(outer.reason);
    else outer?.addEventListener('abort', () => abort.abort(outer.reason), { once: true });
    const it = await this.t.call<AsyncIterable<Answer>>('chats.completion', { ...params, signal: abort.signal });
    let content = '';
    try {
      for await (const a of it) {
        if (a.final) {
          this.remember(question, a);
          yield toMessage(a, a.answer);
          return;
        }
        content += a.answer;
        yield toMessage({ ...a, reference: {} }, content, false);
      }
    } finally {
      abort.abort(); // the caller broke out: stop the model
    }
  }

  /** Keeps the local copy of the history in step with what the engine stored. */
  private remember(question: string, a: Answer): void {
    this.messages?.push({ role: 'user', content: question, id: a.id }, { role: 'assistant', content: a.answer, id: a.id });
  }
}

function toMessage(a: Answer, content: string, final = true): Message {
  const ref = a.reference && 'chunks' in a.reference ? (a.reference.chunks ?? null) : null;
  return new Message({ content, reference: ref, prompt: a.prompt ?? null, id: a.id ?? null, session_id: a.session_id, citations_removed: a.citations_removed ?? 0, final });
}

export class Chat extends Resource {
  declare readonly id: string;
  declare name: string;
  declare icon: string;
  declare description: string;
  declare dataset_ids: string[];
  declare kb_names: string[];
  declare llm_id: string;
  declare llm_setting: LlmSetting & Record<string, unknown>;
  declare prompt_config: PromptConfig & Record<string, unknown>;
  declare similarity_threshold: number;
  declare vector_similarity_weight: number;
  declare top_n: number;
  declare top_k: number;
  declare rerank_id: string;

  /** PATCH semantics: `prompt_config` and `llm_setting` are merged into the stored ones. */
  async update(msg: UpdateChatParams): Promise<void> {
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) throw new TypeError('`update_message` must be a dict');
    const d = await this.t.call<Record<string, unknown>>('chats.update', { ...msg, chat_id: this.id });
    this.assign(d);
  }

  async createSession(p: { name?: string; user_id?: string } = {}): Promise<Session> {
    return new Session(this.t, await this.t.call<Record<string, unknown>>('sessions.create', { ...p, chat_id: this.id }));
  }

  async listSessions(p: { page?: number; page_size?: number; orderby?: string; desc?: boolean; id?: string; name?: string; user_id?: string } = {}): Promise<Session[]> {
    const rows = await this.t.call<Record<string, unknown>[]>('sessions.list', { ...p, chat_id: this.id });
    return rows.map((r) => new Session(this.t, r));
  }

  async deleteSessions(p: { ids?: string[] | null; delete_all?: boolean } = {}): Promise<void> {
    await this.t.call('sessions.delete', { ids: p.ids ?? null, delete_all: p.delete_all ?? false, chat_id: this.id });
  }

  /** Deletes this chat assistant (`DELETE /chats/{id}`; its sessions stay, as in RAGFlow). */
  async delete(): Promise<void> {
    await this.t.call('chats.deleteOne', { chat_id: this.id });
  }
}

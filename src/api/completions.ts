/**
 * Answers: RAGFlow's native completion (`POST /chats/{id}/completions`, what `Session.ask` calls)
 * and the OpenAI-compatible one (`POST /openai/{chat_id}/chat/completions`), reference §8–9.
 * Both validate everything before the first byte, so a bad request is an ApiError, never a
 * half-written stream; a stream is an AsyncIterable the server writes as SSE unchanged.
 */
import type { Engine, Ctx } from '../core/index.js';
import {
  ask, AskError, chatModel, ownedChat, getSession, sessionMessages, chatDatasetIds, chatPromptConfig, conversationTurns,
  type AskEvent, type ChatRow, type SessionMessage, type Reference, type SessionRow,
} from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { pyStr } from './pyfmt.js';
import { parseMetadataCondition, resolveReranker } from './retrieval.js';
import { defaultChatModel } from './chats.js';
import { chatModelExists } from './models.js';
import { newId, nowMs, isPlainObject, faultPoint } from '../util/index.js';
import { countTokens } from '../text/index.js';
import { ChatModelError } from '../llm/index.js';
import type { Reranker } from '../search/index.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
const argError = (message: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, message);
};

/** Keys of the native request that are not prompt parameters. */
const RESERVED = new Set(['chat_id', 'question', 'messages', 'stream', 'session_id', 'conversation_id', 'llm_id', 'quote',
  'temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'max_tokens', 'pass_all_history_messages', 'pass_all_history',
  'doc_ids', 'files', 'user_id', 'reference_metadata', 'signal']);

/** OpenAI content may be a string or an array of parts (`[{type: 'text', text}]`): the text parts, joined. */
export function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c.map((p) => (typeof p === 'string' ? p : isPlainObject(p) && typeof p.text === 'string' ? p.text : '')).filter(Boolean).join('\n');
  }
  if (c === null || c === undefined) return '';
  return pyStr(c);
}

async function modelFor(e: Engine, ctx: Ctx, chat: ChatRow, llmId?: string) {
  const id = llmId || chat.llm_id || (await defaultChatModel(e, ctx));
  const embd = (await e.store.datasets.live(chatDatasetIds(chat)))[0]?.embd_id;
  const m = chatModelExists(e, id) ? chatModel(e, id, embd) : undefined;
  if (!m) dataError(`\`llm_id\` ${id} doesn't exist`);
  return m!;
}

function rerankerFor(e: Engine, chat: ChatRow): Reranker | undefined {
  return chat.rerank_id ? resolveReranker(e, chat.rerank_id) : undefined;
}

/** Errors from the model and the pipeline, as ApiErrors. */
function mapError(err: unknown): unknown {
  if (err instanceof AskError) return new ApiError(err.code, err.message, { cause: err });
  if (err instanceof ChatModelError) return new ApiError(RetCode.EXCEPTION_ERROR, err.message, { cause: err });
  return err;
}

async function* mapped<T>(it: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* it;
  } catch (err) {
    throw mapError(err);
  }
}

// ---------------------------------------------------------------- native completion

export interface NativeAnswer {
  answer: string;
  reference: Reference | Record<string, never>;
  audio_binary: null;
  prompt: string;
  created_at: number;
  id: string;
  session_id: string;
  /** Absent when answered without a chat. */
  chat_id?: string;
  final?: boolean;
  citations_removed?: number;
}

/**
 * `chats.completion`: `{chat_id, question | messages, stream = true, session_id, …prompt parameters}`.
 * Without a session one is created; the question and the answer are stored in it when the answer
 * is complete (one transaction: an interrupted answer leaves the session as it was).
 */
export async function chatCompletion(e: Engine, ctx: Ctx, req: P): Promise<NativeAnswer | AsyncIterable<NativeAnswer>> {
  let messages = req.messages as unknown;
  if (messages === undefined || messages === null) {
    if (req.question === undefined || req.question === null) argError('required argument are missing: messages');
    messages = [{ role: 'user', content: req.question }];
  }
  if (!Array.isArray(messages) || messages.length === 0) argError('`messages` must be a non-empty list.');
  for (const m of messages as unknown[]) {
    if (!isPlainObject(m)) argError('Every item in `messages` must be an object.');
    if (!('role' in (m as P)) || !('content' in (m as P))) argError('Every item in `messages` must include `role` and `content`.');
  }
  const given = (messages as P[]).map((m): P & { role: string; content: string } => ({ ...m, role: pyStr(m.role), content: contentText(m.content) }));
  const msg = conversationTurns(given);
  if (!msg.length) argError('`messages` must contain a user message.');
  if (msg[msg.length - 1]!.role !== 'user') argError('The last message must be from user.');
  const messageId = typeof msg[msg.length - 1]!.id === 'string' && msg[msg.length - 1]!.id ? String(msg[msg.length - 1]!.id) : newId();
  const chatId = typeof req.chat_id === 'string' ? req.chat_id : '';
  let sessionId = pyStr(req.session_id ?? req.conversation_id ?? '');
  if (sessionId && !chatId) dataError('`chat_id` is required when `session_id` is provided.');
  // Without a chat, RAGFlow answers with the tenant's default chat model as a plain dialog: no
  // datasets, no prompt, nothing stored (its `_build_default_completion_dialog`).
  const direct = !chatId;
  const chat = (direct ? directChat(ctx) : await ownedChat(e, ctx, chatId)) ?? (() => {
    throw new ApiError(RetCode.AUTHENTICATION_ERROR, 'No authorization.');
  })();
  let session: SessionRow | undefined;
  if (sessionId) {
    session = (await getSession(e, sessionId)) ?? dataError('Session not found!');
    if (session!.chat_id !== chat.id) dataError('Session does not belong to this chat!');
  }
  const llmId = typeof req.llm_id === 'string' ? req.llm_id : '';
  if (llmId && !chatModelExists(e, llmId)) dataError(`Cannot use specified model ${llmId}.`);
  const model = await modelFor(e, ctx, chat, llmId);
  const reranker = rerankerFor(e, chat);
  const llmSetting: P = {};
  for (const k of ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'max_tokens']) if (req[k]) llmSetting[k] = req[k];
  const vars: P = Object.fromEntries(Object.entries(req).filter(([k]) => !RESERVED.has(k)));
  const passAll = req.pass_all_history_messages === true || req.pass_all_history === true;
  const pc = chatPromptConfig(chat);
  const prologue: SessionMessage = { role: 'assistant', content: String(pc.prologue ?? '') };
  const stored = session ? await sessionMessages(e, session.id) : [prologue];
  const question: SessionMessage = { role: 'user', content: msg[msg.length - 1]!.content, id: messageId };
  const history = passAll || direct ? msg : [...stored, question];
  const stream = req.stream === undefined ? true : req.stream !== false && req.stream !== 'false';
  const refMeta = isPlainObject(req.reference_metadata) ? req.reference_metadata : isPlainObject(pc.reference_metadata) ? pc.reference_metadata : null;
  const docIds = typeof req.doc_ids === 'string' ? req.doc_ids.split(',').filter(Boolean) : undefined;

  // The session is created only once the request is known to be valid.
  if (!session && !direct) {
    const t = nowMs();
    sessionId = newId();
    await e.store.chats.createSession({
      id: sessionId, chat_id: chat.id, name: 'New session', user_id: typeof req.user_id === 'string' && req.user_id ? req.user_id : ctx.userId, create_time: t, update_time: t,
    }, [prologue], { committed: 'completion:session-created' });
  }
  const base = direct ? { id: messageId, session_id: '' } : { id: messageId, session_id: sessionId, chat_id: chat.id };
  const signal = req.signal instanceof AbortSignal ? req.signal : undefined;
  const events = ask(e, {
    chat, model, messages: history, vars, reranker, stream, signal, llmSetting,
    quote: req.quote === undefined ? undefined : req.quote !== false,
    documentIds: docIds,
    documentMetadata: refMeta && (refMeta as P).include ? { fields: Array.isArray((refMeta as P).fields) ? ((refMeta as P).fields as string[]) : undefined } : null,
  });

  // The question and its answer are appended in one transaction once the answer is complete
  // (nothing when the session was deleted while answering).
  const save = async (final: Extract<AskEvent, { type: 'final' }>) => {
    faultPoint('completion:answered');
    if (direct) return;
    const answer: SessionMessage & { reference: unknown } = { role: 'assistant', content: final.answer, created_at: nowMs() / 1000, id: messageId, reference: final.reference };
    if (final.citations_removed) answer.citations_removed = final.citations_removed;
    // RAGFlow's pass_all_history_messages: the request's history replaces the stored one.
    const append = passAll
      ? [...(history as SessionMessage[]).map(({ role, content, id }) => ({ role, content, ...(id ? { id } : {}) }) as SessionMessage), answer]
      : [question, answer];
    await e.store.chats.saveTurn(sessionId, { replace: passAll, append, time: nowMs() });
  };
  const finalAnswer = (f: Extract<AskEvent, { type: 'final' }>): NativeAnswer => ({
    answer: f.answer, reference: f.reference, audio_binary: null, prompt: f.prompt, created_at: nowMs() / 1000, ...base,
    ...(f.citations_removed ? { citations_removed: f.citations_removed } : {}),
  });

  if (!stream) {
    try {
      for await (const ev of events) {
        if (ev.type === 'final') {
          await save(ev);
          return finalAnswer(ev);
        }
      }
    } catch (err) {
      throw mapError(err);
    }
    throw new ApiError(RetCode.EXCEPTION_ERROR, 'The model returned no answer.');
  }
  return mapped(
    (async function* () {
      for await (const ev of events) {
        if (ev.type === 'delta') {
          if (!ev.text) continue;
          yield { answer: ev.text, reference: {}, audio_binary: null, prompt: '', created_at: nowMs() / 1000, final: false, ...base } as NativeAnswer;
        } else {
          await save(ev);
          yield { ...finalAnswer(ev), final: true };
        }
      }
    })(),
  );
}

/**
 * The dialog RAGFlow answers a completion without `chat_id` with: the tenant's default chat model
 * (`llm_id` may name another), no datasets, an empty prompt, no citations.
 */
function directChat(ctx: Ctx): ChatRow {
  return {
    id: '', tenant_id: ctx.tenantId, name: '', description: '', icon: '', language: 'English', dataset_ids: '[]', llm_id: '', llm_setting: '{}',
    prompt_config: JSON.stringify({ system: '', prologue: '', parameters: [], empty_response: '', quote: false, tts: false, refine_multiturn: true }),
    meta_data_filter: '{}', similarity_threshold: 0.1, vector_similarity_weight: 0.3, top_n: 6, top_k: 1024, rerank_id: '', status: '1',
    created_by: ctx.userId, create_time: 0, update_time: 0,
  };
}

// ---------------------------------------------------------------- OpenAI-compatible

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: Record<string, number>;
}

/**
 * `openai.completion`: `{chat_id, model, messages, stream = true, extra_body: {reference, reference_metadata, metadata_condition}}`.
 * Nothing is stored (RAGFlow's endpoint keeps no session either).
 */
export async function openaiCompletion(e: Engine, ctx: Ctx, req: P): Promise<Record<string, unknown> | AsyncIterable<Record<string, unknown>>> {
  const missing = ['model', 'messages'].filter((k) => req[k] === undefined || req[k] === null);
  if (missing.length) argError(`required argument are missing: ${missing.join(',')}; `);
  const extra = req.extra_body ?? {};
  if (extra && !isPlainObject(extra)) dataError('extra_body must be an object.');
  const ex = (extra || {}) as P;
  const needReference = !!ex.reference;
  const refMeta = ex.reference_metadata ?? {};
  if (refMeta && !isPlainObject(refMeta)) dataError('reference_metadata must be an object.');
  const include = !!(refMeta as P).include;
  const fields = (refMeta as P).fields;
  if (fields !== undefined && fields !== null && !Array.isArray(fields)) dataError('reference_metadata.fields must be an array.');
  const messages = req.messages;
  if (!Array.isArray(messages) || messages.length < 1) dataError('You have to provide messages.');
  for (const m of messages as unknown[]) {
    if (!isPlainObject(m) || typeof m.role !== 'string') dataError('Every message must be an object with a `role`.');
  }
  const all = (messages as P[]).map((m) => ({ role: String(m.role), content: contentText(m.content) }));
  if (all[all.length - 1]!.role !== 'user') dataError('The last content of this conversation is not from user.');
  const chatId = pyStr(req.chat_id ?? '');
  const chat = (await ownedChat(e, ctx, chatId)) ?? dataError(`You don't own the chat ${chatId}`);
  let requested = pyStr(req.model ?? '');
  let llmId = chat!.llm_id;
  if (requested === 'model') requested = chat!.llm_id || (await defaultChatModel(e, ctx));
  else {
    if (!chatModelExists(e, requested)) argError(`\`llm_id\` ${requested} doesn't exist`);
    llmId = requested;
  }
  const condition = ex.metadata_condition ?? {};
  if (condition && !isPlainObject(condition)) dataError('metadata_condition must be an object.');
  const metadata = condition && Object.keys(condition as P).length ? parseMetadataCondition(condition) : null;
  const model = await modelFor(e, ctx, chat!, llmId);
  const reranker = rerankerFor(e, chat!);
  const msg = conversationTurns(all);
  const stream = req.stream === undefined ? true : req.stream !== false;
  const prompt = all[all.length - 1]!.content;
  const promptTokens = countTokens(prompt);
  const contextTokens = all.reduce((s, m) => s + countTokens(m.content), 0);
  const id = `chatcmpl-${chatId}`;
  const created = Math.floor(Date.now() / 1000);
  const refChunks = (ref: Reference) =>
    ref.chunks.map((c) => {
      if (!include) return { ...c, document_metadata: c.document_metadata ?? null };
      return c;
    });
  const signal = req.signal instanceof AbortSignal ? req.signal : undefined;
  const events = ask(e, {
    chat: chat!, model, messages: msg, reranker, stream, signal, metadata,
    quote: needReference,
    documentMetadata: include ? { fields: Array.isArray(fields) ? (fields as string[]) : undefined } : null,
  });

  if (!stream) {
    let final: Extract<AskEvent, { type: 'final' }> | undefined;
    try {
      for await (const ev of events) if (ev.type === 'final') final = ev;
    } catch (err) {
      throw mapError(err);
    }
    const content = final?.answer ?? '';
    const completion = countTokens(content);
    const message: P = { role: 'assistant', content };
    if (needReference && final) message.reference = refChunks(final.reference);
    if (final?.citations_removed) message.citations_removed = final.citations_removed;
    return {
      id, object: 'chat.completion', created, model: requested,
      usage: {
        prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion,
        completion_tokens_details: { reasoning_tokens: contextTokens, accepted_prediction_tokens: completion, rejected_prediction_tokens: 0 },
      },
      choices: [{ message, logprobs: null, finish_reason: 'stop', index: 0 }],
    };
  }

  const chunk = (delta: P, finish: string | null, usage: CompletionUsage | null = null) => ({
    id, object: 'chat.completion.chunk', created, model: requested, system_fingerprint: '',
    choices: [{ delta: { role: 'assistant', function_call: null, tool_calls: null, ...delta }, finish_reason: finish, index: 0, logprobs: null }],
    usage,
  });
  return mapped(
    (async function* () {
      let completion = 0;
      let full = '';
      let final: Extract<AskEvent, { type: 'final' }> | undefined;
      for await (const ev of events) {
        if (ev.type === 'delta') {
          if (ev.reasoning) yield chunk({ content: null, reasoning_content: ev.reasoning }, null);
          if (!ev.text) continue;
          completion += countTokens(ev.text);
          full += ev.text;
          yield chunk({ content: ev.text, reasoning_content: null }, null);
        } else {
          final = ev;
          // An answer that never streamed (empty_response, citations added afterwards) is sent
          // as the missing tail, once: never the whole answer again (a RAGFlow defect).
          if (ev.answer.startsWith(full) && ev.answer.length > full.length && !ev.model_called) {
            const tail = ev.answer.slice(full.length);
            completion += countTokens(tail);
            full = ev.answer;
            yield chunk({ content: tail, reasoning_content: null }, null);
          }
        }
      }
      const delta: P = { content: null, reasoning_content: null };
      if (needReference) {
        delta.reference = final ? refChunks(final.reference) : [];
        delta.final_content = final?.answer ?? full;
      }
      if (final?.citations_removed) delta.citations_removed = final.citations_removed;
      yield chunk(delta, 'stop', { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion });
    })(),
  );
}

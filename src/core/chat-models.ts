/**
 * Chat models by id (`name@factory`): the built-in extractive model, or a model the tenant
 * registered (`type: 'chat'` or `'image2text'`), reached over the OpenAI chat-completions protocol
 * at its `base_url` whatever its factory name (OpenAI, Ollama, vLLM, LocalAI, DeepSeek, …).
 */
import type { Engine } from './engine.js';
import { OpenAIChatModel, ExtractiveChatModel, wordnetRelatedTerms, type ChatModel } from '../llm/index.js';
import { analyze, countTokens, splitSentences } from '../text/index.js';
import { parseModelId, type ModelConfig } from '../embed/index.js';

export const BUILTIN_CHAT_MODELS = ['ragloom-extractive@Builtin'] as const;
export const DEFAULT_CHAT_MODEL = BUILTIN_CHAT_MODELS[0];

/**
 * The full id (`name@factory`) a chat model id names: itself when it has a factory, or a bare name
 * (`glm-4`) looked up among the tenant's chat models by name, the first registered of that name,
 * as RAGFlow looks a name without a factory up in the tenant's models. Undefined when none.
 */
export function resolveChatModelId(e: Engine, id: string): string | undefined {
  if ((BUILTIN_CHAT_MODELS as readonly string[]).includes(id) || e.models.get('chat', id) || e.models.get('image2text', id)) return id;
  if (id.includes('@')) return undefined;
  const builtin = BUILTIN_CHAT_MODELS.find((b) => b.slice(0, b.lastIndexOf('@')) === id);
  if (builtin) return builtin;
  const m = [...e.models.list('chat'), ...e.models.list('image2text')].find((x) => x.name === id);
  return m ? `${m.name}@${m.factory}` : undefined;
}

/** The registered config of a chat model id (a bare name too), or undefined (built-in models have none). */
export function chatModelConfig(e: Engine, id: string): ModelConfig | undefined {
  const full = resolveChatModelId(e, id) ?? id;
  return e.models.get('chat', full) ?? e.models.get('image2text', full);
}

export function chatModelExists(e: Engine, id: string): boolean {
  return resolveChatModelId(e, id) !== undefined;
}

const live = new WeakMap<Engine, Map<string, ChatModel>>();

/**
 * The live model for `id`. The extractive model scores sentences with the embedding model of the
 * datasets it answers from (`embdId`), so it is kept per embedding model.
 */
export function chatModel(e: Engine, name: string, embdId?: string): ChatModel | undefined {
  const id = resolveChatModelId(e, name) ?? name;
  let m = live.get(e);
  if (!m) {
    live.set(e, (m = new Map()));
    e.onClose(async () => {
      const all = [...m!.values()];
      m!.clear();
      await Promise.all(all.map((x) => x.close?.()));
    });
  }
  if ((BUILTIN_CHAT_MODELS as readonly string[]).includes(id)) {
    const key = `${id}|${embdId ?? ''}`;
    let x = m.get(key);
    if (!x) {
      const embedder = embdId ? e.models.embedder(embdId) : undefined;
      // WordNet's and GloVe's related words (models/ragloom-related-en) bridge paraphrases; absent from a trimmed install.
      x = new ExtractiveChatModel({ analyze, splitSentences, countTokens, embed: embedder ? (texts: string[]) => embedder.embed(texts) : undefined, related: wordnetRelatedTerms() });
      m.set(key, x);
    }
    return x;
  }
  const cfg = chatModelConfig(e, id);
  if (!cfg) return undefined;
  const key = `${id}|${cfg.base_url ?? ''}|${cfg.api_key ?? ''}|${cfg.max_tokens ?? ''}`;
  let x = m.get(key);
  if (!x) {
    if (!cfg.base_url) throw new Error(`Chat model ${id} needs a base_url (an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1)`);
    x = new OpenAIChatModel({ id, model: parseModelId(id)?.name ?? cfg.name, baseUrl: cfg.base_url, apiKey: cfg.api_key, maxTokens: cfg.max_tokens });
    m.set(key, x);
  }
  return x;
}

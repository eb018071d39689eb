export type {
  ChatRole,
  ChatMessage,
  ChatOptions,
  ChatResult,
  ChatDelta,
  ChatModel,
  ToolCall,
  ToolSpec,
  KnowledgeItem,
  PassageSentence,
  Usage,
} from './types.js';
export { ChatModelError } from './errors.js';
export type { ChatModelErrorKind, ChatModelErrorInit } from './errors.js';
export { OpenAIChatModel, OPENAI_CHAT_DEFAULTS } from './openai.js';
export type { OpenAIChatModelOptions } from './openai.js';
export { ExtractiveChatModel, EXTRACTIVE_MODEL_ID, parseKnowledge } from './extractive.js';
export type { ExtractiveChatModelOptions } from './extractive.js';
export { wordnetRelatedTerms, DEFAULT_RELATION_WEIGHTS } from './related-terms.js';
export type { RelatedTerms, RelationWeights, Relation } from './related-terms.js';

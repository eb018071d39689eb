export type { Embedder } from './types.js';
export { ModelRegistry, BUILTIN_EMBEDDINGS, BUILTIN_FACTORY, DEFAULT_EMBEDDING_MODEL } from './registry.js';
export type { ModelConfig, ModelType, ModelStatus } from './registry.js';
export { parseModelId, formatModelId } from './model-id.js';
export type { ModelId } from './model-id.js';
export { UseLiteEmbedder, normalize } from './use.js';

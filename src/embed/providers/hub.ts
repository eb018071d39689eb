/**
 * `ragloom models pull <hub id>`: downloads a transformers.js-format model (tokenizer, config,
 * fp32 `onnx/model.onnx`) from the Hugging Face hub into a cache folder once, so that
 * `TransformersEmbedder({ hubId, cacheDir })` then loads it offline.
 */
import { resolve } from 'node:path';
import { importOptional } from '../../util/index.js';

export interface PullProgress {
  /** `initiate` | `download` | `progress` | `done` | `ready` (transformers.js' events). */
  status: string;
  /** The file being fetched, e.g. `onnx/model.onnx`. */
  file?: string;
  /** Percent of the file, when known. */
  progress?: number;
  loaded?: number;
  total?: number;
}

export interface PullOptions {
  /** Called on each download event. */
  onProgress?: (p: PullProgress) => void;
  /** Hub (or mirror) address. @default process.env.HF_ENDPOINT ?? 'https://huggingface.co/' */
  remoteHost?: string;
  /** Revision (branch, tag or commit). @default 'main' */
  revision?: string;
  /** How long to wait for the hub to answer the first request. @default 15_000 (ms) */
  connectTimeoutMs?: number;
}

export interface PullResult {
  hubId: string;
  cacheDir: string;
  /** The model's `hidden_size` from config.json, when it has one. */
  dim?: number;
}

const HUB_ID = /^[\w.-]+(\/[\w.-]+)?$/;

/**
 * Downloads `hubId` into `cacheDir`. Fails with a plain Error that says what to do when the hub
 * cannot be reached, the model does not exist, or it has no ONNX export.
 */
export async function pullModel(hubId: string, cacheDir: string, opts: PullOptions = {}): Promise<PullResult> {
  if (!HUB_ID.test(hubId) || hubId.includes('..')) throw new TypeError(`Invalid Hugging Face model id "${hubId}" (expected "owner/name")`);
  const host = (opts.remoteHost ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co/').replace(/\/*$/, '/');
  const revision = opts.revision ?? 'main';
  const dir = resolve(cacheDir);

  // Probe first: a clear message beats a stack of fetch errors when the machine is offline.
  const probeUrl = `${host}${hubId}/resolve/${encodeURIComponent(revision)}/config.json`;
  let res: Response;
  try {
    res = await fetch(probeUrl, { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(opts.connectTimeoutMs ?? 15_000) });
  } catch (err) {
    const why = (err as Error).name === 'TimeoutError' ? 'timed out' : ((err as { cause?: Error }).cause?.message ?? (err as Error).message);
    throw new Error(
      `Cannot reach the model hub at ${host} (${why}). \`ragloom models pull\` needs network access; on an offline machine, ` +
        `copy a pulled cache folder or use a local model folder instead.`,
      { cause: err },
    );
  }
  if (res.status === 401 || res.status === 403 || res.status === 404) {
    throw new Error(`Model "${hubId}" was not found on ${host} (HTTP ${res.status}); gated models need HF_TOKEN.`);
  }
  if (!res.ok) throw new Error(`The model hub at ${host} answered HTTP ${res.status} for ${probeUrl}`);

  const m = await importOptional('@huggingface/transformers', '`ragloom models pull`', () => import('@huggingface/transformers'));
  const prev = { allowRemoteModels: m.env.allowRemoteModels, remoteHost: m.env.remoteHost };
  const progress_callback = opts.onProgress
    ? (p: object) => {
        const x = p as PullProgress & { name?: string };
        opts.onProgress!({ status: x.status, file: x.file, progress: x.progress, loaded: x.loaded, total: x.total });
      }
    : undefined;
  m.env.allowRemoteModels = true;
  m.env.remoteHost = host;
  try {
    const common = { cache_dir: dir, revision, progress_callback };
    await m.AutoTokenizer.from_pretrained(hubId, common);
    const model = await m.AutoModel.from_pretrained(hubId, { ...common, dtype: 'fp32', device: 'cpu' });
    const hidden = (model as unknown as { config?: { hidden_size?: unknown } }).config?.hidden_size;
    await model.dispose();
    return { hubId, cacheDir: dir, ...(typeof hidden === 'number' ? { dim: hidden } : {}) };
  } catch (err) {
    throw new Error(
      `Pulling "${hubId}" from ${host} failed: ${(err as Error).message}. ` +
        'The model must be in the transformers.js layout (tokenizer.json, config.json, onnx/model.onnx).',
      { cause: err },
    );
  } finally {
    m.env.allowRemoteModels = prev.allowRemoteModels;
    m.env.remoteHost = prev.remoteHost;
  }
}

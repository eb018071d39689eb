/** Worker-thread body of `WorkerPoolEmbedder`: one embedder, one job at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import type { TransformersEmbedderOptions } from '../providers/transformers.js';
import type { Embedder } from '../types.js';
import type { WorkerProvider } from './pool.js';

const data = workerData as { provider: WorkerProvider; model: TransformersEmbedderOptions };
// Each provider is imported only when used: a static-model worker never loads onnxruntime.
const embedder: Promise<Embedder> =
  data.provider === 'static'
    ? import('../providers/static.js').then(
        ({ StaticEmbedder }) => new StaticEmbedder({ id: data.model.id, path: data.model.path ?? '', dim: data.model.dim, batchSize: data.model.batchSize }),
      )
    : import('../providers/transformers.js').then(({ TransformersEmbedder }) => new TransformersEmbedder(data.model));

parentPort!.on('message', async (msg: { texts: string[] }) => {
  try {
    const e = await embedder;
    const vectors = await e.embed(msg.texts);
    parentPort!.postMessage({ vectors, dim: e.dim }, vectors.map((v) => v.buffer as ArrayBuffer));
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message });
  }
});

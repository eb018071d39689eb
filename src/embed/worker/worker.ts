/** Worker-thread body of `WorkerPoolEmbedder`: one `TransformersEmbedder`, one job at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { TransformersEmbedder, type TransformersEmbedderOptions } from '../providers/transformers.js';

const embedder = new TransformersEmbedder((workerData as { model: TransformersEmbedderOptions }).model);

parentPort!.on('message', async (msg: { texts: string[] }) => {
  try {
    const vectors = await embedder.embed(msg.texts);
    parentPort!.postMessage({ vectors, dim: embedder.dim }, vectors.map((v) => v.buffer as ArrayBuffer));
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message });
  }
});

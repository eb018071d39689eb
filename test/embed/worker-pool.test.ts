import { describe, expect, it } from 'vitest';
import { resolveBuiltinModelPath } from '../../src/embed/builtin-models.js';
import { TransformersEmbedder } from '../../src/embed/providers/transformers.js';
import { WorkerPoolEmbedder } from '../../src/embed/worker/pool.js';

const path = resolveBuiltinModelPath('ragloom-static-en-128');

describe('WorkerPoolEmbedder#embed()', () => {
  it('spreads jobs over worker threads and returns the same vectors in order', async () => {
    const texts = Array.from({ length: 50 }, (_, i) => (i % 7 === 0 ? '' : `chunk ${i} on the stability of thin shells under axial load`));
    const pool = new WorkerPoolEmbedder({ model: { id: 'ragloom-static-en-128@Builtin', path }, workers: 2, jobSize: 8 });
    const direct = new TransformersEmbedder({ id: 'ragloom-static-en-128@Builtin', path });
    try {
      const [a, b] = await Promise.all([pool.embed(texts), direct.embed(texts)]);
      expect(a).toHaveLength(texts.length);
      expect(pool.dim).toBe(128);
      a.forEach((v, i) => v.forEach((x, k) => expect(x).toBeCloseTo(b[i]![k]!, 5)));
    } finally {
      await pool.close();
      await direct.close();
    }
    await expect(pool.embed(['x'])).rejects.toThrow(/closed/);
  });

  it('reports a model that cannot load', async () => {
    const pool = new WorkerPoolEmbedder({ model: { id: 'missing@Local', path: '/nonexistent/model' }, workers: 1 });
    await expect(pool.embed(['x'])).rejects.toThrow(/Cannot load embedding model missing@Local/);
    await pool.close();
  });
});

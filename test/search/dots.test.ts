import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { dotAt, dotsBackend, jsDots, VectorStore } from '../../src/search/dots.js';
import { hammingBackend } from '../../src/search/hamming.js';

/** Seeded values in [-1, 1) with float32 precision, as stored vectors have. */
function rows(count: number, dim: number, seed: number): Float32Array {
  let s = seed;
  const v = new Float32Array(count * dim);
  for (let i = 0; i < v.length; i++) v[i] = ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1;
  return v;
}

describe('VectorStore: the rows of a vector index and their dot products', () => {
  test('the WebAssembly kernel is in use on this runtime (Node 20 has SIMD)', () => {
    expect(dotsBackend()).toBe('wasm');
    expect(hammingBackend()).toBe('wasm');
    expect(new VectorStore(256).backend).toBe('wasm');
    // A dimension not a multiple of 4 has no kernel: the fallback serves it.
    expect(new VectorStore(10).backend).toBe('js');
  });

  test.each([4, 8, 12, 256, 384, 1024, 4100, 10, 3])('dim %i: bit-identical to dotAt, for any slots, in any order, across growth', (dim) => {
    const n = 700;
    const data = rows(n, dim, dim * 7 + 1);
    const store = new VectorStore(dim);
    // Grown in steps (each may move the memory): the rows written before stay.
    let filled = 0;
    for (const cap of [10, 100, 701]) {
      store.reserve(cap, filled);
      const upTo = Math.min(cap, n);
      store.vecs.set(data.subarray(filled * dim, upTo * dim), filled * dim);
      filled = upTo;
    }
    expect(Array.from(store.vecs.subarray(0, n * dim))).toEqual(Array.from(data));
    const q = rows(1, dim, 99);
    for (const slots of [
      Array.from({ length: n }, (_, i) => i),
      Array.from({ length: 333 }, (_, i) => (i * 389) % n),
      Uint32Array.from([699, 0, 5, 5, 1, 698]),
      Int32Array.from({ length: 40 }, (_, i) => (i * 17) % n),
      [3],
      [],
    ]) {
      const count = slots.length;
      const got = new Float64Array(count);
      store.dots(q, slots, count, got);
      const want = Array.from(slots, (s) => dotAt(q, data, s * dim, dim));
      // Object.is: the same double, bit for bit (toEqual alone would pass -0 for 0).
      expect(Array.from(got).every((x, i) => Object.is(x, want[i]))).toBe(true);
      const js = new Float64Array(count);
      jsDots(q, data, dim, slots, count, js);
      expect(Array.from(js)).toEqual(want);
    }
  });

  test('a slot array longer than the count: only the first `count` are scored', () => {
    const dim = 16;
    const store = new VectorStore(dim);
    store.reserve(64, 0);
    store.vecs.set(rows(64, dim, 5));
    const q = rows(1, dim, 6);
    const slots = Int32Array.from({ length: 64 }, (_, i) => 63 - i);
    const out = new Float64Array(64).fill(-9);
    store.dots(q, slots, 10, out);
    for (let k = 0; k < 10; k++) expect(out[k]).toBe(dotAt(q, store.vecs, slots[k]! * dim, dim));
    expect(out[10]).toBe(-9);
  });

  test('RAGLOOM_NO_WASM=1: both kernels\' TypeScript fallbacks (src/search/wasm.ts), with the same numbers', () => {
    const code = `
      import { VectorStore, dotsBackend, dotAt } from ${JSON.stringify(new URL('../../src/search/dots.ts', import.meta.url).pathname)};
      import { hammingBackend } from ${JSON.stringify(new URL('../../src/search/hamming.ts', import.meta.url).pathname)};
      const s = new VectorStore(8); s.reserve(4, 0);
      s.vecs.set(Float32Array.from({ length: 32 }, (_, i) => Math.fround(Math.sin(i))));
      const q = Float32Array.from({ length: 8 }, (_, i) => Math.fround(Math.cos(i)));
      const out = new Float64Array(4); s.dots(q, [3, 2, 1, 0], 4, out);
      console.log(JSON.stringify({ b: dotsBackend(), h: hammingBackend(), sb: s.backend, ok: [3, 2, 1, 0].every((r, k) => out[k] === dotAt(q, s.vecs, r * 8, 8)) }));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { env: { ...process.env, RAGLOOM_NO_WASM: '1' }, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Error/);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ b: 'js', h: 'js', sb: 'js', ok: true });
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_MODELS, DEFAULT_BUILTIN_MODEL, resolveBuiltinModelPath } from '../../src/embed/builtin-models.js';
import { TransformersEmbedder } from '../../src/embed/providers/transformers.js';
import { StaticReference } from '../../scripts/distill/reference.js';

const path = resolveBuiltinModelPath(DEFAULT_BUILTIN_MODEL);
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));

describe('builtin-models', () => {
  it('lists every shipped model with an absolute path and its dimension', () => {
    expect(BUILTIN_MODELS.map((m) => m.name)).toContain(DEFAULT_BUILTIN_MODEL);
    for (const m of BUILTIN_MODELS) {
      const config = JSON.parse(readFileSync(join(m.path, 'config.json'), 'utf8')) as { hidden_size: number };
      expect(config.hidden_size).toBe(m.dim);
      expect(readFileSync(join(m.path, 'onnx', 'model.onnx')).length).toBeGreaterThan(1_000_000);
    }
  });

  it('rejects an unknown name', () => {
    expect(() => resolveBuiltinModelPath('nope')).toThrow(/Unknown built-in embedding model "nope"/);
  });
});

describe('TransformersEmbedder#embed() with the shipped model', () => {
  let e: TransformersEmbedder;
  beforeAll(() => {
    e = new TransformersEmbedder({ id: `${DEFAULT_BUILTIN_MODEL}@Builtin`, path });
  });
  afterAll(async () => {
    await e.close();
  });

  it('returns unit vectors of the model dimension, deterministically', async () => {
    const texts = ['The wing was tested in a wind tunnel.', 'Hello world'];
    const a = await e.embed(texts);
    const b = await e.embed(texts);
    expect(e.dim).toBe(BUILTIN_MODELS.find((m) => m.name === DEFAULT_BUILTIN_MODEL)!.dim);
    for (const v of a) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(e.dim);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(Array.from(b[0]!)).toEqual(Array.from(a[0]!));
  });

  it('puts similar sentences closer than unrelated ones', async () => {
    const [cat, kitten, stocks] = await e.embed([
      'The cat sat on the mat and purred.',
      'A kitten was sleeping on the rug.',
      'Quarterly earnings rose as the stock market rallied.',
    ]);
    expect(dot(cat!, kitten!)).toBeGreaterThan(dot(cat!, stocks!) + 0.05);
    const [q, rel, irr] = await e.embed([
      'supersonic flow over a swept wing',
      'shock waves and lift on delta wings at high mach numbers',
      'a recipe for chocolate cake with strawberries',
    ]);
    expect(dot(q!, rel!)).toBeGreaterThan(dot(q!, irr!) + 0.05);
  });

  it('gives empty strings zero vectors and keeps positions', async () => {
    const out = await e.embed(['', 'aircraft', '   ', 'boundary layer']);
    expect(out).toHaveLength(4);
    expect(norm(out[0]!)).toBe(0);
    expect(norm(out[2]!)).toBe(0);
    expect(out[0]!.length).toBe(e.dim);
    expect(norm(out[1]!)).toBeCloseTo(1, 5);
    expect(await e.embed([])).toEqual([]);
  });

  it('does not depend on the batch split or on padding', async () => {
    const texts = Array.from({ length: 9 }, (_, i) => `text number ${i} ` + 'about turbulent heat transfer '.repeat(i));
    const small = new TransformersEmbedder({ id: 'x@Builtin', path, batchSize: 2 });
    const a = await small.embed(texts);
    const b = await e.embed(texts);
    a.forEach((v, i) => v.forEach((x, k) => expect(x).toBeCloseTo(b[i]![k]!, 5)));
    await small.close();
  });

  it('matches a plain-JS reference of tokenise → lookup → mean → normalise', async () => {
    const ref = new StaticReference(path);
    const texts = ['Experimental investigation of the aerodynamics of a wing in a slipstream.', 'Naïve café-owners (2024) — résumé!'];
    const out = await e.embed(texts);
    texts.forEach((t, i) => {
      const r = ref.embed(t);
      expect(dot(r, out[i]!)).toBeGreaterThan(0.9999);
    });
  });

  it('agrees with the transformers.js feature-extraction pipeline (mean pooling + normalize)', async () => {
    const { pipeline } = await import('@huggingface/transformers');
    const p = await pipeline('feature-extraction', path, { dtype: 'fp32', local_files_only: true });
    const texts = ['heat transfer in laminar boundary layers', 'short'];
    const t = await p(texts, { pooling: 'mean', normalize: true });
    const out = await e.embed(texts);
    const d = e.dim!;
    texts.forEach((_, i) => {
      const v = (t.data as Float32Array).slice(i * d, (i + 1) * d);
      expect(dot(v, out[i]!)).toBeGreaterThan(0.9999);
    });
    await p.dispose();
  });

  it('supports cls pooling through the generic path', async () => {
    const cls = new TransformersEmbedder({ id: 'x@Builtin', path, pooling: 'cls' });
    const ref = new StaticReference(path);
    const [v] = await cls.embed(['aircraft wing']);
    const [first] = [ref.embed(ref.tokenize('aircraft wing')[0]!)];
    expect(dot(v!, first!)).toBeGreaterThan(0.9999);
    await cls.close();
  });

  it('stops between batches when the signal aborts', async () => {
    const small = new TransformersEmbedder({ id: 'x@Builtin', path, batchSize: 1 });
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(small.embed(['a', 'b'], { signal: ac.signal })).rejects.toThrow('stop');
    await small.close();
  });
});

describe('TransformersEmbedder options', () => {
  it('requires a path or a hub id, and names a misspelled option', () => {
    expect(() => new TransformersEmbedder({ id: 'x@y' })).toThrow(/"path" or "hubId" is required/);
    expect(() => new TransformersEmbedder({ id: 'x@y', localPath: '/m' } as never)).toThrow(/did you mean "path"/);
    expect(() => new TransformersEmbedder({ id: 'x@y', path: '/m', batchSize: 0 })).toThrow(/batchSize/);
  });

  it('fails clearly for a missing folder', async () => {
    const e = new TransformersEmbedder({ id: 'missing@Local', path: join(tmpdir(), 'ragloom-no-such-model') });
    await expect(e.embed(['x'])).rejects.toThrow(/Cannot load embedding model missing@Local from folder .*ragloom-no-such-model/);
  });

  it('never downloads: an uncached hub model fails offline and says how to pull it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ragloom-hub-'));
    try {
      const e = new TransformersEmbedder({ id: 'x@HuggingFace', hubId: 'nobody/not-cached', cacheDir: dir });
      await expect(e.embed(['x'])).rejects.toThrow(/ragloom models pull nobody\/not-cached/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

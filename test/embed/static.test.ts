/**
 * StaticEmbedder (plain TypeScript) against the onnxruntime path it replaces for the built-in
 * models: the same token ids as transformers.js' tokenizer, the same vectors as
 * TransformersEmbedder, and a refusal of anything that is not a static embedding graph.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_MODELS, DEFAULT_BUILTIN_MODEL, resolveBuiltinModelPath } from '../../src/embed/builtin-models.js';
import { ModelRegistry } from '../../src/embed/registry.js';
import { readStaticGraph, StaticEmbedder } from '../../src/embed/providers/static.js';
import { TransformersEmbedder } from '../../src/embed/providers/transformers.js';
import { WordPieceTokenizer } from '../../src/embed/providers/wordpiece.js';
import { WorkerPoolEmbedder } from '../../src/embed/worker/pool.js';
import { DType, encodeModel, int64Bytes, readInitializers, type ModelSpec } from '../../scripts/distill/onnx-writer.js';
import { staticOnnx, staticOnnxSpec } from '../../scripts/distill/static-onnx.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const CORPUS = resolve(repo, '..', 'shared', 'docs-corpus');
const hasCorpus = existsSync(CORPUS);
const defaultPath = resolveBuiltinModelPath(DEFAULT_BUILTIN_MODEL);

// ---------------------------------------------------------------------------------------------
// Texts: every file of the shared docs corpus that decodes as UTF-8 (whole, by paragraph, by
// line, in windows), plus generated edge cases.

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else yield p;
  }
}

function corpusTexts(): { texts: string[]; files: string[]; skipped: string[] } {
  const texts: string[] = [];
  const files: string[] = [];
  const skipped: string[] = [];
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for (const file of walk(CORPUS)) {
    let text: string;
    try {
      text = utf8.decode(readFileSync(file));
    } catch {
      skipped.push(relative(CORPUS, file));
      continue;
    }
    files.push(relative(CORPUS, file));
    texts.push(text);
    for (const p of text.split(/\n\s*\n/)) if (p.trim()) texts.push(p);
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i += 7) texts.push(lines.slice(i, i + 3).join('\n'));
    for (const size of [400, 2_500]) for (let i = 0; i < text.length; i += size * 3) texts.push(text.slice(i, i + size));
  }
  return { texts, files, skipped };
}

/** A seeded generator of odd texts: random code points from many scripts and classes. */
function generatedTexts(count: number, seed = 7): string[] {
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const ranges: [number, number][] = [
    [0x20, 0x7e], [0x20, 0x7e], [0x20, 0x7e], [0x61, 0x7a], [0x61, 0x7a], [0x61, 0x7a], // ASCII, mostly letters
    [0x00, 0x1f], [0x7f, 0x9f], // control characters
    [0xa0, 0xff], [0x100, 0x24f], // Latin-1, Latin Extended
    [0x300, 0x36f], [0x900, 0x97f], [0xe00, 0xe7f], // combining marks, Devanagari (Mn + Mc), Thai
    [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x5ff], [0x600, 0x6ff], // Greek, Cyrillic, Hebrew, Arabic
    [0x2000, 0x206f], [0x3000, 0x303f], [0xff00, 0xffef], // general punctuation & spaces, CJK punctuation, fullwidth
    [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0x3040, 0x30ff], // CJK, Hangul, kana
    [0x1f300, 0x1faff], [0x1d400, 0x1d7ff], [0xfb00, 0xfb4f], // emoji, math alphanumerics, ligatures
    [0xd800, 0xdfff], // lone surrogates
  ];
  const words = ['the', 'café', 'naïve', 'über', 'straße', 'İstanbul', 'don\'t', 'e-mail', '3.14', 'ﬁle', 'Ǆ', 'ΣΊΣΥΦΟΣ', '[UNK]', '[PAD]', '日本', '👍🏽', '👨‍👩‍👧', '🇫🇷'];
  return Array.from({ length: count }, () => {
    const parts: string[] = [];
    const n = 1 + Math.floor(rnd() ** 2 * 60);
    for (let i = 0; i < n; i++) {
      const r = rnd();
      if (r < 0.3) parts.push(pick(words));
      else if (r < 0.4) parts.push(pick([' ', '  ', '\n', '\t', '\u00a0', '\u3000', '\u200b', '']));
      else {
        const [lo, hi] = pick(ranges);
        let w = '';
        const len = 1 + Math.floor(rnd() * (rnd() < 0.05 ? 130 : 8));
        for (let j = 0; j < len; j++) w += String.fromCodePoint(lo + Math.floor(rnd() * (hi - lo + 1)));
        parts.push(w);
      }
      if (rnd() < 0.6) parts.push(' ');
    }
    return parts.join('');
  });
}

const EDGE_CASES: string[] = [
  '', ' ', '   ', '\n\t \r\n', '\u00a0', '\u3000\u2003', '\ufeff', '\u200b', '\u0000', '\u0301', '\u0301\u0302 \u0308',
  'Café', 'Cafe\u0301', 'naïve résumé', 'Ångström Dvořák Łódź', 'ÀÉÎÕÜ àéîõü ÇçÑñ', 'Straße', 'İstanbul ıi', 'ǅemal Ǆ ǆ', 'ﬁne ﬂow', 'ＡＢＣ ｄｅｆ １２３',
  '日本語のテキスト', '中文分词测试，标点符号。', '한국어 텍스트', 'カタカナ ひらがな', '𠀀𠀁 𪜀',
  'emoji 😀👍🏽 text', '👨‍👩‍👧‍👦', '🇫🇷🇩🇪', '❤️ ✔️ ☃', '🙂🙂🙂🙂🙂🙂🙂🙂',
  '...!!!???', '---___===', '“quoted” ‘single’ «guillemets» ¿qué? ¡sí!', '—–‐‑‒', '()[]{}<>', '@#$%^&*~`|\\/', '・。、「」', '‰‱′″‴',
  'a'.repeat(99), 'a'.repeat(100), 'a'.repeat(101), 'é'.repeat(100), 'é'.repeat(101), 'e\u0301'.repeat(60), 'supercalifragilistic'.repeat(6),
  `${'x'.repeat(200)} normal words after`, 'pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism',
  'word '.repeat(9_000), 'heat transfer in the boundary layer. '.repeat(1_500), Array.from({ length: 10_000 }, (_, i) => `w${i}`).join(' '),
  '\u0000\u0001\u0002 ctrl', 'bell\u0007 esc\u001b[31mred\u001b[0m', 'zero\u200bwidth\u200djoiner\u200cnon', 'bom\ufeffinside', 'repl\ufffdacement', 'lone \ud800 high', 'lone \udc00 low', 'x\ud83d',
  'Привет мир hello 世界', 'مرحبا بالعالم', 'שלום עולם', 'हिन्दी भाषा', 'ภาษาไทย', 'Ελληνικά Σίσυφος', 'ქართული', 'Հայերեն', 'አማርኛ', '𝐀𝐁𝐂 𝑥𝑦𝑧',
  '[UNK]', '[PAD]', 'x[PAD]y', '[UNK][UNK]', '[unk] [pad]', '[ UNK ]', '[PAD ]', '[[PAD]]',
  '3.14159 1,000,000 -42 +7 1e-9 0x1F', 'https://example.com/a/b?c=d&e=f#g', 'someone@example.org', 'C++ / C# / F#', 'const x = (a) => a?.b ?? c;',
  "don't won't it's rock'n'roll", 'U.S.A. e.g. i.e. etc.', 'tab\tseparated\tvalues', 'line\nbreaks\r\nand\rreturns',
];

// ---------------------------------------------------------------------------------------------

describe('WordPieceTokenizer', () => {
  let texts: string[] = [];
  beforeAll(() => {
    if (!hasCorpus) console.warn(`static.test: ${CORPUS} is absent; the corpus part of the comparison is skipped (generated texts only)`);
    const corpus = hasCorpus ? corpusTexts() : { texts: [], files: [], skipped: [] };
    if (hasCorpus) console.log(`static.test: corpus files read as text: ${corpus.files.join(', ')}; not UTF-8, skipped: ${corpus.skipped.join(', ')}`);
    texts = [...corpus.texts, ...EDGE_CASES, ...generatedTexts(2_000)];
  });

  it('gives the token ids of transformers.js for ≥ 2,000 varied texts, both models', async () => {
    const { AutoTokenizer } = await import('@huggingface/transformers');
    expect(texts.length).toBeGreaterThanOrEqual(2_000);
    // Both libraries read only the model folder's tokenizer files: a model whose files are
    // byte-identical to one compared already gives the same ids on both sides, so it is compared
    // once (the shipped models share theirs); any model with files of its own is compared.
    const compared = new Map<string, string>();
    for (const m of BUILTIN_MODELS) {
      const files = ['tokenizer.json', 'tokenizer_config.json'].map((f) => readFileSync(join(m.path, f)).toString('base64')).join('\n');
      if (compared.has(files)) {
        console.log(`static.test: ${m.name}: the tokenizer files of ${compared.get(files)}, compared above`);
        continue;
      }
      compared.set(files, m.name);
      const ref = (await AutoTokenizer.from_pretrained(m.path, { local_files_only: true })) as unknown as (
        t: string[],
        o: { padding: boolean; truncation: boolean },
      ) => { input_ids: { data: BigInt64Array } };
      const mine = await WordPieceTokenizer.load(m.path);
      let tokens = 0;
      let truncated = 0;
      const bad: string[] = [];
      for (const t of texts) {
        const want = Array.from(ref([t], { padding: true, truncation: true }).input_ids.data, Number);
        const got = mine.encode(t);
        tokens += got.length;
        if (got.length === 8192) truncated++;
        if (want.length !== got.length || want.some((x, i) => x !== got[i])) bad.push(JSON.stringify(t.slice(0, 80)));
      }
      console.log(`static.test: ${m.name}: ${texts.length} texts, ${tokens} tokens, ${truncated} truncated to 8192, ${bad.length} differ`);
      expect(bad).toEqual([]);
      expect(truncated).toBeGreaterThan(0);
    }
  }, 300_000);

  it('refuses tokenizer.json parts it does not implement', () => {
    const json = JSON.parse(readFileSync(join(defaultPath, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
    const variant = (patch: Record<string, unknown>) => () => new WordPieceTokenizer({ ...json, ...patch } as never, {}, 'tok.json');
    expect(variant({ normalizer: { type: 'BertNormalizer', lowercase: true } })).toThrow(/tok\.json: normalizer "BertNormalizer" is not supported/);
    expect(variant({ normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Replace' }] } })).toThrow(/normalizer "Replace"/);
    expect(variant({ pre_tokenizer: { type: 'Whitespace' } })).toThrow(/pre-tokenizer "Whitespace" is not supported/);
    expect(variant({ pre_tokenizer: null })).toThrow(/pre-tokenizer "none"/);
    expect(variant({ model: { ...(json.model as object), type: 'BPE' } })).toThrow(/tokenizer model "BPE" is not supported/);
    expect(variant({ post_processor: { type: 'BertProcessing' } })).toThrow(/post-processor "BertProcessing"/);
    expect(variant({ model: { ...(json.model as object), unk_token: '<nope>' } })).toThrow(/unknown token "<nope>" is not in the vocabulary/);
    // What the shipped models use is accepted.
    expect(variant({})).not.toThrow();
  });
});

describe('StaticEmbedder vs TransformersEmbedder (onnxruntime)', () => {
  let texts: string[] = [];
  beforeAll(() => {
    texts = [...(hasCorpus ? corpusTexts().texts : []), ...EDGE_CASES, ...generatedTexts(2_000)];
  });

  for (const m of BUILTIN_MODELS) {
    it(`gives the same vectors for ≥ 2,000 texts: ${m.name}`, async () => {
      const ort = new TransformersEmbedder({ id: `${m.name}@Builtin`, path: m.path, dim: m.dim });
      const mine = new StaticEmbedder({ id: `${m.name}@Builtin`, path: m.path, dim: m.dim });
      try {
        // onnxruntime pads a batch to its longest text: in length order, its batches hold texts of
        // about one length (every text is still compared, each with its own vector).
        const byLength = texts.map((_, i) => i).sort((x, y) => texts[x]!.length - texts[y]!.length);
        const sorted = await ort.embed(byLength.map((i) => texts[i]!));
        const a: Float32Array[] = new Array(texts.length);
        byLength.forEach((i, j) => (a[i] = sorted[j]!));
        const b = await mine.embed(texts);
        let maxDiff = 0;
        let minCos = 1;
        let identical = 0;
        for (let i = 0; i < texts.length; i++) {
          const [x, y] = [a[i]!, b[i]!];
          expect(y.length).toBe(m.dim);
          let same = true;
          let dot = 0;
          let nx = 0;
          let ny = 0;
          for (let k = 0; k < x.length; k++) {
            const d = Math.abs(x[k]! - y[k]!);
            if (d > maxDiff) maxDiff = d;
            if (d !== 0) same = false;
            dot += x[k]! * y[k]!;
            nx += x[k]! * x[k]!;
            ny += y[k]! * y[k]!;
          }
          if (same) identical++;
          if (nx > 0 || ny > 0) minCos = Math.min(minCos, dot / Math.sqrt(nx * ny));
        }
        console.log(`static.test: ${m.name}: ${texts.length} texts, max |Δ| ${maxDiff}, min cosine ${minCos}, bit-identical ${identical}/${texts.length}`);
        expect(maxDiff).toBeLessThanOrEqual(1e-5);
        expect(minCos).toBeGreaterThanOrEqual(0.99999);

        // One text per call: onnxruntime sums a batch of one in another order (StaticEmbedder does not).
        const singles = texts.filter((t, i) => t.trim() !== '' && (i % 40 === 0 || t.length > 20_000));
        let maxSingle = 0;
        for (const t of singles) {
          const [[x], [y]] = [await ort.embed([t]), await mine.embed([t])];
          for (let k = 0; k < x!.length; k++) maxSingle = Math.max(maxSingle, Math.abs(x![k]! - y![k]!));
        }
        console.log(`static.test: ${m.name}: ${singles.length} texts one per call, max |Δ| ${maxSingle}`);
        // float32 rounding of two summation orders over up to 8,192 rows (the module's doc).
        expect(maxSingle).toBeLessThanOrEqual(5e-5);
      } finally {
        await ort.close();
        await mine.close();
      }
    }, 300_000);
  }

  it("gives a text the same vector, bit for bit, alone or in any batch (onnxruntime's within rounding)", async () => {
    const sample = texts.filter((t, i) => i % 9 === 0 && t.trim() !== '');
    const ort = new TransformersEmbedder({ id: 'x@Builtin', path: defaultPath, batchSize: 5 });
    const in64 = new StaticEmbedder({ id: 'x@Builtin', path: defaultPath });
    const in5 = new StaticEmbedder({ id: 'x@Builtin', path: defaultPath, batchSize: 5 });
    try {
      const [a, b, c] = [await ort.embed(sample), await in64.embed(sample), await in5.embed(sample)];
      // Shuffled into other batches, and one at a time: the same bits.
      const order = sample.map((_, i) => i).sort((x, y) => ((x * 7919) % 101) - ((y * 7919) % 101));
      const shuffled = await in5.embed(order.map((i) => sample[i]!));
      const bits = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
      sample.forEach((_, i) => expect(bits(c[i]!)).toBe(bits(b[i]!)));
      order.forEach((i, j) => expect(bits(shuffled[j]!)).toBe(bits(b[i]!)));
      for (let i = 0; i < sample.length; i += 7) expect(bits((await in64.embed([sample[i]!]))[0]!)).toBe(bits(b[i]!));
      let maxDiff = 0;
      let identical = 0;
      a.forEach((v, i) => {
        if (bits(v) === bits(b[i]!)) identical++;
        v.forEach((x, k) => (maxDiff = Math.max(maxDiff, Math.abs(x - b[i]![k]!))));
      });
      console.log(`static.test: batches of 5, onnxruntime vs static: bit-identical ${identical}/${sample.length}, max |Δ| ${maxDiff}`);
      expect(maxDiff).toBeLessThanOrEqual(1e-5);
      expect(identical).toBeGreaterThan(sample.length / 2);
    } finally {
      await ort.close();
      await in64.close();
      await in5.close();
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Graphs.

/** A model folder with the default model's tokenizer and `model` as onnx/model.onnx. */
function modelFolder(root: string, name: string, model: Uint8Array, hidden: number): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(defaultPath, f), join(dir, f));
  const config = JSON.parse(readFileSync(join(defaultPath, 'config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, hidden_size: hidden }));
  writeFileSync(join(dir, 'onnx', 'model.onnx'), model);
  return dir;
}

const V = 79_435; // the shipped vocabulary
/** The inputs and outputs of the distiller's graphs, for graphs that are not one of them. */
const io = (dims: number): Pick<ModelSpec, 'inputs' | 'outputs'> => {
  const { inputs, outputs } = staticOnnxSpec({ table: new Float32Array(dims), rows: 1, dims, quant: 'fp16', graphName: '', docString: '', metadata: {} });
  return { inputs, outputs };
};
/** The distiller's float16 graph (scripts/distill/static-onnx.ts) over a small random table. */
function fp16Static(dims: number): ModelSpec {
  let s = 11;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const table = Float32Array.from({ length: V * dims }, () => (rnd() - 0.5) * 0.2);
  return staticOnnxSpec({ table, rows: V, dims, quant: 'fp16', graphName: 'fp16-static', docString: '', metadata: {} });
}

describe('StaticEmbedder: graphs', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ragloom-static-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('accepts the shipped int8 graphs', () => {
    for (const m of BUILTIN_MODELS) {
      const t = readStaticGraph(readFileSync(join(m.path, 'onnx', 'model.onnx')));
      expect(t).toMatchObject({ kind: 'int8', rows: V, dim: m.dim });
    }
  });

  it("reads back what the distiller's writer (scripts/distill/static-onnx.ts) writes, int8 and float16", () => {
    const rows = 5;
    const dims = 4;
    const table = Float32Array.from({ length: rows * dims }, (_, i) => (i % 7) * 0.13 - 0.4 + (i === 3 ? 0 : i * 1e-3));
    table.fill(0, 0, dims); // a zero row ([PAD]) has scale 0
    const meta = { graphName: 'g', docString: 'd', metadata: { method: 'test' } };
    const q = readStaticGraph(staticOnnx({ table, rows, dims, quant: 'int8', ...meta }));
    expect(q).toMatchObject({ kind: 'int8', rows, dim: dims });
    if (q.kind !== 'int8') return;
    expect(q.scale[0]).toBe(0);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < dims; c++) expect(Math.abs(q.q[r * dims + c]! * q.scale[r]! - table[r * dims + c]!)).toBeLessThanOrEqual(q.scale[r]! / 2 + 1e-7);
    }
    expect(readStaticGraph(staticOnnx({ table, rows, dims, quant: 'fp16', ...meta }))).toMatchObject({ kind: 'fp16', rows, dim: dims });
  });

  it('refuses a graph that is not a static embedding, naming what it found', async () => {
    // A tiny "transformer-like" graph: lookup then a dense projection.
    const dims = 4;
    const model = encodeModel({
      graphName: 'projection',
      ...io(dims),
      initializers: [
        { name: 'embeddings', dataType: DType.FLOAT, dims: [V, dims], raw: new Uint8Array(V * dims * 4) },
        { name: 'proj', dataType: DType.FLOAT, dims: [dims, dims], raw: new Uint8Array(dims * dims * 4) },
      ],
      nodes: [
        { op: 'Gather', inputs: ['embeddings', 'input_ids'], outputs: ['tok'], attrs: { axis: 0 } },
        { op: 'MatMul', inputs: ['tok', 'proj'], outputs: ['last_hidden_state'] },
        { op: 'ReduceMean', inputs: ['last_hidden_state'], outputs: ['sentence_embedding'], attrs: { axes: [1], keepdims: 0 } },
      ],
    });
    const dir = modelFolder(root, 'projection', model, dims);
    const e = new StaticEmbedder({ id: 'proj@Local', path: dir });
    await expect(e.embed(['hello'])).rejects.toThrow(
      /Cannot load embedding model proj@Local from folder .*projection: .*model\.onnx is not a static embedding graph .*: .*found ops \[Gather, MatMul, ReduceMean\]/,
    );
    // Not cached: a second call reports it again.
    await expect(e.embed(['hello'])).rejects.toThrow(/not a static embedding graph/);
  });

  it('refuses near misses: an extra node, a changed constant, a wrong table type, other bytes', () => {
    const good = fp16Static(2);
    const check = (spec: ModelSpec) => () => readStaticGraph(encodeModel(spec), 'x.onnx');
    expect(check(good)).not.toThrow();
    expect(check({ ...good, nodes: [...good.nodes, { op: 'Relu', inputs: ['sentence_embedding'], outputs: ['r'] }] })).toThrow(/x\.onnx is not a static embedding graph.*10 nodes, expected 9.*Relu/);
    expect(check({ ...good, nodes: good.nodes.map((n) => (n.op === 'Max' ? { ...n, op: 'Min' } : n)) })).toThrow(/node 7 is Min\(count, one\) → count1, expected Max/);
    expect(check({ ...good, nodes: good.nodes.map((n, i) => (i === 0 ? { ...n, attrs: { axis: 1 } } : n)) })).toThrow(/node 0 \(Gather\) has attribute axis=1, expected 0/);
    expect(check({ ...good, initializers: good.initializers.map((t) => (t.name === 'axis_seq' ? { ...t, raw: int64Bytes([2]) } : t)) })).toThrow(/initializer axis_seq must be int64 \[1\] = 1/);
    expect(check({ ...good, initializers: good.initializers.map((t) => (t.name === 'embeddings' ? { ...t, dataType: DType.FLOAT, raw: new Uint8Array(V * 2 * 4) } : t)) })).toThrow(
      /embeddings is float \[79435, 2\], expected float16/,
    );
    expect(check({ ...good, inputs: [...good.inputs].reverse() })).toThrow(/inputs must be exactly input_ids, attention_mask/);
    expect(check({ ...good, opset: 11 })).toThrow(/opset 11/);
    expect(() => readStaticGraph(new Uint8Array([0x0a, 0xff, 0xff, 0xff]), 'junk.onnx')).toThrow(/junk\.onnx is not a readable ONNX model/);
    expect(() => readStaticGraph(new TextEncoder().encode('not onnx at all'), 'text.onnx')).toThrow(/text\.onnx/);
  });

  it('runs the float16 graph as onnxruntime does', async () => {
    const dir = modelFolder(root, 'fp16', encodeModel(fp16Static(8)), 8);
    expect(readInitializers(readFileSync(join(dir, 'onnx', 'model.onnx'))).get('embeddings')!.dataType).toBe(DType.FLOAT16);
    const texts = [...EDGE_CASES, ...generatedTexts(300, 3)];
    const ort = new TransformersEmbedder({ id: 'fp16@Local', path: dir });
    const mine = new StaticEmbedder({ id: 'fp16@Local', path: dir });
    try {
      const [a, b] = [await ort.embed(texts), await mine.embed(texts)];
      expect(mine.dim).toBe(8);
      let maxDiff = 0;
      a.forEach((v, i) => v.forEach((x, k) => (maxDiff = Math.max(maxDiff, Math.abs(x - b[i]![k]!)))));
      expect(maxDiff).toBeLessThanOrEqual(1e-6);
    } finally {
      await ort.close();
      await mine.close();
    }
  }, 120_000);

  it('checks the dimension it was promised and a missing folder', async () => {
    const wrong = new StaticEmbedder({ id: 'x@Builtin', path: defaultPath, dim: 300 });
    await expect(wrong.embed(['x'])).rejects.toThrow(/has vectors of dimension 256, expected 300/);
    const missing = new StaticEmbedder({ id: 'missing@Local', path: join(tmpdir(), 'ragloom-no-such-model') });
    await expect(missing.embed(['x'])).rejects.toThrow(/Cannot load embedding model missing@Local from folder .*ragloom-no-such-model/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('StaticEmbedder', () => {
  const path = defaultPath;
  const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

  it('knows its dimension up front, and gives unit vectors', async () => {
    const e = new StaticEmbedder({ id: 'x@Builtin', path, dim: 256 });
    expect(e.dim).toBe(256);
    const [v] = await e.embed(['The wing was tested in a wind tunnel.']);
    expect(norm(v!)).toBeCloseTo(1, 6);
    const lazy = new StaticEmbedder({ id: 'x@Builtin', path });
    expect(lazy.dim).toBeUndefined();
    expect((await lazy.embed(['']))[0]!.length).toBe(256);
    expect(lazy.dim).toBe(256);
    await e.close();
    await lazy.close();
  });

  it('gives empty and white-space texts zero vectors and keeps positions', async () => {
    const e = new StaticEmbedder({ id: 'x@Builtin', path, dim: 256 });
    const out = await e.embed(['', 'aircraft', '   ', '\n\t', 'boundary layer', '\u0301']);
    expect(out).toHaveLength(6);
    for (const i of [0, 2, 3, 5]) {
      expect(out[i]!.length).toBe(256);
      expect(out[i]!.every((x) => x === 0)).toBe(true);
    }
    expect(norm(out[1]!)).toBeCloseTo(1, 6);
    expect(await e.embed([])).toEqual([]);
    expect((await e.embed(['', ' '])).every((v) => v.length === 256 && norm(v) === 0)).toBe(true);
    await e.close();
  });

  it('honours the abort signal, before and between batches', async () => {
    const e = new StaticEmbedder({ id: 'x@Builtin', path, dim: 256, batchSize: 4 });
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(e.embed(['a', 'b'], { signal: ac.signal })).rejects.toThrow('stop');
    await e.load();
    const mid = new AbortController();
    const texts = Array.from({ length: 400 }, (_, i) => `text ${i} about supersonic flow`);
    const p = e.embed(texts, { signal: mid.signal });
    setImmediate(() => mid.abort());
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect((await e.embed(['still works']))[0]!.length).toBe(256);
    await e.close();
  });

  it('shares one loaded model per folder; closing one embedder leaves the others working', async () => {
    const a = new StaticEmbedder({ id: 'a@Builtin', path });
    const b = new StaticEmbedder({ id: 'b@Builtin', path: path + '/' });
    const [[va], [vb]] = await Promise.all([a.embed(['shared table']), b.embed(['shared table'])]);
    expect(Array.from(va!)).toEqual(Array.from(vb!));
    await a.close();
    expect(Array.from((await b.embed(['shared table']))[0]!)).toEqual(Array.from(vb!));
    expect(Array.from((await a.embed(['shared table']))[0]!)).toEqual(Array.from(vb!)); // reloads after close
    await a.close();
    await b.close();
  });

  it('validates its options', () => {
    expect(() => new StaticEmbedder({ id: 'x' } as never)).toThrow(/"path" is required/);
    expect(() => new StaticEmbedder({ id: 'x', localPath: '/m' } as never)).toThrow(/did you mean "path"/);
    expect(() => new StaticEmbedder({ id: 'x', path: '/m', batchSize: 0 })).toThrow(/batchSize/);
  });
});

describe('built-in models are wired to StaticEmbedder', () => {
  it('in the registry', async () => {
    const r = new ModelRegistry();
    for (const m of BUILTIN_MODELS) {
      const e = r.embedder(`${m.name}@Builtin`);
      expect(e).toBeInstanceOf(StaticEmbedder);
      expect(e.dim).toBe(m.dim);
    }
    await r.close();
  });

  it('in worker pools: same vectors as in the calling thread', async () => {
    const m = BUILTIN_MODELS.find((x) => x.name === 'ragloom-static-en-128')!;
    const texts = Array.from({ length: 40 }, (_, i) => (i % 7 === 0 ? '' : `chunk ${i} on the stability of thin shells under axial load`));
    const pool = new WorkerPoolEmbedder({ model: { id: `${m.name}@Builtin`, path: m.path, dim: m.dim }, workers: 2, jobSize: 8 });
    const direct = new StaticEmbedder({ id: `${m.name}@Builtin`, path: m.path, dim: m.dim, batchSize: 8 });
    try {
      const [a, b] = await Promise.all([pool.embed(texts), direct.embed(texts)]);
      expect(a).toHaveLength(texts.length);
      // Same texts, batched differently (jobs of 8 over two threads): the same bits.
      a.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(b[i]!)));
      expect(pool.dim).toBe(m.dim);
    } finally {
      await pool.close();
      await direct.close();
    }
  });

  it('without @huggingface/transformers or onnxruntime-node (a process where importing them fails)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragloom-noort-'));
    try {
      const hooks = join(dir, 'block-hooks.mjs');
      writeFileSync(
        hooks,
        `export async function resolve(specifier, context, next) {
  if (/^(@huggingface\\/transformers|onnxruntime-node|onnxruntime-common|onnxruntime-web)(\\/|$)/.test(specifier)) throw new Error('blocked import ' + specifier);
  return next(specifier, context);
}\n`,
      );
      const script = join(dir, 'child.mjs');
      writeFileSync(
        script,
        `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const tsx = await import(${JSON.stringify(pathToFileURL(join(repo, 'node_modules', 'tsx', 'dist', 'esm', 'api', 'index.mjs')).href)});
tsx.register();
const blocked = await import('@huggingface/transformers').then(() => 'loaded', (e) => e.message);
const { ModelRegistry } = await import(${JSON.stringify(pathToFileURL(join(repo, 'src', 'embed', 'index.ts')).href)});
const r = new ModelRegistry();
const out = [];
for (const id of ['ragloom-static-en-256@Builtin', 'ragloom-static-en-128@Builtin']) {
  const [v] = await r.embedder(id).embed(['embedded without onnxruntime']);
  out.push([id, v.length, Math.hypot(...v)]);
}
console.log(JSON.stringify({ blocked, out }));
`,
      );
      const res = JSON.parse(execFileSync(process.execPath, [script], { cwd: repo, encoding: 'utf8' }).trim().split('\n').pop()!) as {
        blocked: string;
        out: [string, number, number][];
      };
      expect(res.blocked).toMatch(/blocked import @huggingface\/transformers/);
      expect(res.out.map(([id, n]) => [id, n])).toEqual([
        ['ragloom-static-en-256@Builtin', 256],
        ['ragloom-static-en-128@Builtin', 128],
      ]);
      for (const [, , len] of res.out) expect(len).toBeCloseTo(1, 5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});


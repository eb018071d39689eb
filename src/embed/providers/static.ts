/**
 * Static embedding models (the shipped `ragloom-static-en-*@Builtin` models and any folder
 * with the same layout), computed in plain TypeScript: no onnxruntime, no transformers.js.
 *
 * The folder holds `tokenizer.json` (+ `tokenizer_config.json`, `config.json`) and
 * `onnx/model.onnx`. The graph must be exactly one of the two graphs `scripts/distill/distill.ts`
 * writes (anything else is refused):
 *
 * - int8: `Gather(embeddings_q int8 [V, D])` × `Gather(embeddings_scale float [V, 1])` × mask;
 * - fp16: `Cast(Gather(embeddings float16 [V, D]))` × mask;
 *
 * then `ReduceSum` over the sequence ÷ `max(Σ mask, 1)` → `sentence_embedding`, L2-normalised.
 *
 * A text's vector is the same, bit for bit, whatever texts it is embedded with (alone, or in any
 * batch): every text is summed in one fixed order (`pool`). That is what lets processes that batch
 * differently (nodes of a shared store, each claiming its own share of a folder) store the same
 * vectors as one process would. onnxruntime (`TransformersEmbedder`) sums in an order that depends
 * on the batch; the fixed order is the one it uses for most texts of a batch, so the two agree bit
 * for bit on most texts and within float32 rounding on the rest (≤ ~3e-5 per component for an
 * 8,192-token text, ~1e-7 for a chunk of a few hundred tokens).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Embedder } from '../types.js';
import { WordPieceTokenizer } from './wordpiece.js';

export interface StaticEmbedderOptions {
  /** The model id, `name@factory`. */
  id: string;
  /** The model folder (`tokenizer.json`, `onnx/model.onnx`, …). */
  path: string;
  /** The vector dimension, when known before loading; checked against the model. */
  dim?: number;
  /**
   * Texts per batch: the event loop gets a turn and the abort signal is checked between batches
   * (the vectors are the same for any value). @default 64
   */
  batchSize?: number;
}

export const STATIC_DEFAULTS: Readonly<{ batchSize: number }> = Object.freeze({ batchSize: 64 /* texts per batch */ });

// ---------------------------------------------------------------------------------------------
// A minimal protobuf reader for the parts of onnx.proto the check needs.

interface Field {
  no: number;
  /** Varint value (wire type 0). */
  int?: bigint;
  /** Bytes of a length-delimited (2) or fixed (1, 5) field. */
  bytes?: Uint8Array;
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated protobuf varint');
      const b = buf[pos++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
      if (shift > 63n) throw new Error('protobuf varint too long');
    }
  };
  const take = (n: number): Uint8Array => {
    if (n < 0 || pos + n > buf.length) throw new Error('truncated protobuf field');
    const b = buf.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  while (pos < buf.length) {
    const key = varint();
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) out.push({ no, int: varint() });
    else if (wire === 1) out.push({ no, bytes: take(8) });
    else if (wire === 2) out.push({ no, bytes: take(Number(varint())) });
    else if (wire === 5) out.push({ no, bytes: take(4) });
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

const utf8 = new TextDecoder('utf-8');
const str = (f: Field) => (f.bytes ? utf8.decode(f.bytes) : '');
const int = (f: Field) => Number(BigInt.asIntN(64, f.int ?? 0n));
/** A repeated int64, packed or not. */
function ints(fs: Field[], no: number): number[] {
  const out: number[] = [];
  for (const f of fs) {
    if (f.no !== no) continue;
    if (f.int !== undefined) out.push(int(f));
    else if (f.bytes) {
      let pos = 0;
      const b = f.bytes;
      while (pos < b.length) {
        let v = 0n;
        let shift = 0n;
        for (;;) {
          const x = b[pos++]!;
          v |= BigInt(x & 0x7f) << shift;
          shift += 7n;
          if (x < 0x80 || pos >= b.length) break;
        }
        out.push(Number(BigInt.asIntN(64, v)));
      }
    }
  }
  return out;
}
const first = (fs: Field[], no: number) => fs.find((f) => f.no === no);
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);

/** ONNX TensorProto.DataType values. */
const DT = { FLOAT: 1, INT8: 3, INT64: 7, FLOAT16: 10 } as const;
const DT_NAME: Record<number, string> = { 1: 'float', 2: 'uint8', 3: 'int8', 6: 'int32', 7: 'int64', 10: 'float16', 11: 'double' };
const dtName = (t: number) => DT_NAME[t] ?? `type ${t}`;

interface OnnxTensor { name: string; dataType: number; dims: number[]; raw?: Uint8Array; otherData: boolean }
interface OnnxAttr { name: string; value: number | number[] | string }
interface OnnxNode { op: string; domain: string; inputs: string[]; outputs: string[]; attrs: OnnxAttr[] }
interface OnnxValue { name: string; elemType: number; rank: number; dims: (number | string)[] }
interface OnnxGraph { nodes: OnnxNode[]; initializers: OnnxTensor[]; inputs: OnnxValue[]; outputs: OnnxValue[]; opset: number; sparse: boolean }

function decodeTensor(b: Uint8Array): OnnxTensor {
  const fs = fields(b);
  const raw = first(fs, 9)?.bytes;
  const location = first(fs, 14);
  return {
    name: str(first(fs, 8) ?? { no: 8 }),
    dataType: int(first(fs, 2) ?? { no: 2 }),
    dims: ints(fs, 1),
    raw,
    // float_data, int32_data, string_data, int64_data, external_data, data_location=EXTERNAL, double_data, uint64_data
    otherData: fs.some((f) => [4, 5, 6, 7, 10, 11, 13].includes(f.no)) || (location !== undefined && int(location) !== 0),
  };
}

function decodeValue(b: Uint8Array): OnnxValue {
  const fs = fields(b);
  const v: OnnxValue = { name: str(first(fs, 1) ?? { no: 1 }), elemType: 0, rank: -1, dims: [] };
  const type = first(fs, 2)?.bytes;
  const tensor = type ? first(fields(type), 1)?.bytes : undefined;
  if (!tensor) return v;
  const tf = fields(tensor);
  v.elemType = int(first(tf, 1) ?? { no: 1 });
  const shape = first(tf, 2)?.bytes;
  if (shape) {
    v.dims = all(fields(shape), 1).map((d) => {
      const df = fields(d.bytes!);
      const value = first(df, 1);
      return value ? int(value) : str(first(df, 2) ?? { no: 2 });
    });
    v.rank = v.dims.length;
  }
  return v;
}

function decodeAttr(b: Uint8Array): OnnxAttr {
  const fs = fields(b);
  const name = str(first(fs, 1) ?? { no: 1 });
  const f = first(fs, 2);
  const i = first(fs, 3);
  const s = first(fs, 4);
  // proto3 leaves out default values (0, ""), so the declared type says which field is meant.
  const type = int(first(fs, 20) ?? { no: 20 });
  if (type === 2 || (type === 0 && i)) return { name, value: i ? int(i) : 0 };
  if (type === 1 || (type === 0 && f)) return { name, value: f?.bytes ? new DataView(f.bytes.buffer, f.bytes.byteOffset, 4).getFloat32(0, true) : 0 };
  if (type === 3 || (type === 0 && s)) return { name, value: s ? str(s) : '' };
  if (type === 7) return { name, value: ints(fs, 8) };
  return { name, value: `<attribute of type ${type}>` };
}

function decodeGraph(model: Uint8Array): OnnxGraph {
  const mf = fields(model);
  const g = first(mf, 7)?.bytes;
  if (!g) throw new Error('no graph in the ONNX model');
  let opset = 0;
  for (const o of all(mf, 8)) {
    const of = fields(o.bytes!);
    const domain = str(first(of, 1) ?? { no: 1 });
    if (domain === '' || domain === 'ai.onnx') opset = int(first(of, 2) ?? { no: 2 });
  }
  const gf = fields(g);
  return {
    nodes: all(gf, 1).map((n) => {
      const nf = fields(n.bytes!);
      return {
        op: str(first(nf, 4) ?? { no: 4 }),
        domain: str(first(nf, 7) ?? { no: 7 }),
        inputs: all(nf, 1).map(str),
        outputs: all(nf, 2).map(str),
        attrs: all(nf, 5).map((a) => decodeAttr(a.bytes!)),
      };
    }),
    initializers: all(gf, 5).map((t) => decodeTensor(t.bytes!)),
    inputs: all(gf, 11).map((v) => decodeValue(v.bytes!)),
    outputs: all(gf, 12).map((v) => decodeValue(v.bytes!)),
    opset,
    sparse: gf.some((f) => f.no === 15),
  };
}

// ---------------------------------------------------------------------------------------------
// The two graphs the distiller writes.

export type Spec = { op: string; inputs: string[]; outputs: string[]; attrs?: Record<string, number> };
const MASK: Spec[] = [
  { op: 'Cast', inputs: ['attention_mask'], outputs: ['mask'], attrs: { to: DT.FLOAT } },
  { op: 'Unsqueeze', inputs: ['mask', 'axis_last'], outputs: ['mask3'] },
];
const POOL: Spec[] = [
  { op: 'ReduceSum', inputs: ['last_hidden_state', 'axis_seq'], outputs: ['summed'], attrs: { keepdims: 0 } },
  { op: 'ReduceSum', inputs: ['mask', 'axis_seq'], outputs: ['count'], attrs: { keepdims: 1 } },
  { op: 'Max', inputs: ['count', 'one'], outputs: ['count1'] },
  { op: 'Div', inputs: ['summed', 'count1'], outputs: ['sentence_embedding'] },
];
/**
 * The two graphs, node by node, as scripts/distill/static-onnx.ts writes them (it builds its
 * nodes from these, so writer and reader cannot drift apart).
 */
export const STATIC_GRAPHS: Readonly<Record<'int8' | 'fp16', { nodes: readonly Spec[]; table: string; tableType: number; scale?: string }>> = {
  int8: {
    table: 'embeddings_q',
    tableType: DT.INT8,
    scale: 'embeddings_scale',
    nodes: [
      { op: 'Gather', inputs: ['embeddings_q', 'input_ids'], outputs: ['tok8'], attrs: { axis: 0 } },
      { op: 'Cast', inputs: ['tok8'], outputs: ['tokq'], attrs: { to: DT.FLOAT } },
      { op: 'Gather', inputs: ['embeddings_scale', 'input_ids'], outputs: ['tokscale'], attrs: { axis: 0 } },
      ...MASK,
      { op: 'Mul', inputs: ['tokscale', 'mask3'], outputs: ['w'] },
      { op: 'Mul', inputs: ['tokq', 'w'], outputs: ['last_hidden_state'] },
      ...POOL,
    ],
  },
  fp16: {
    table: 'embeddings',
    tableType: DT.FLOAT16,
    nodes: [
      { op: 'Gather', inputs: ['embeddings', 'input_ids'], outputs: ['tok16'], attrs: { axis: 0 } },
      { op: 'Cast', inputs: ['tok16'], outputs: ['tok'], attrs: { to: DT.FLOAT } },
      ...MASK,
      { op: 'Mul', inputs: ['tok', 'mask3'], outputs: ['last_hidden_state'] },
      ...POOL,
    ],
  },
};

const showNode = (n: { op: string; inputs: string[]; outputs: string[] }) => `${n.op}(${n.inputs.join(', ')}) → ${n.outputs.join(', ')}`;
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function matchNodes(nodes: OnnxNode[], spec: readonly Spec[]): string | null {
  if (nodes.length !== spec.length) return `${nodes.length} nodes, expected ${spec.length}`;
  for (let i = 0; i < spec.length; i++) {
    const n = nodes[i]!;
    const s = spec[i]!;
    if (n.domain !== '' && n.domain !== 'ai.onnx') return `node ${i} is in domain "${n.domain}"`;
    if (n.op !== s.op || !sameList(n.inputs, s.inputs) || !sameList(n.outputs, s.outputs)) {
      return `node ${i} is ${showNode(n)}, expected ${showNode(s)}`;
    }
    const want = s.attrs ?? {};
    const got = Object.fromEntries(n.attrs.map((a) => [a.name, a.value]));
    const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
    for (const k of keys) {
      if (got[k] !== want[k]) return `node ${i} (${n.op}) has attribute ${k}=${JSON.stringify(got[k])}, expected ${JSON.stringify(want[k])}`;
    }
  }
  return null;
}

/** An embedding table, checked: int8 rows with a float scale, or float16 rows. */
export type StaticTable =
  | { kind: 'int8'; rows: number; dim: number; q: Int8Array; scale: Float32Array }
  | { kind: 'fp16'; rows: number; dim: number; h: Uint16Array };

const le = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/**
 * Reads a static-embedding ONNX model (bytes of `model.onnx`); throws, naming what it found, for
 * any graph that is not exactly one of the graphs `scripts/distill/distill.ts` writes.
 */
export function readStaticGraph(bytes: Uint8Array, where = 'model.onnx'): StaticTable {
  let g: OnnxGraph;
  try {
    g = decodeGraph(bytes);
  } catch (e) {
    throw new Error(`${where} is not a readable ONNX model: ${(e as Error).message}`, { cause: e });
  }
  const refuse = (why: string): never => {
    throw new Error(
      `${where} is not a static embedding graph (token table lookup + masked mean pooling, as scripts/distill writes): ${why}; ` +
        `found ops [${g.nodes.map((n) => n.op).join(', ')}], inputs [${g.inputs.map((v) => v.name).join(', ')}], ` +
        `outputs [${g.outputs.map((v) => v.name).join(', ')}], initializers [${g.initializers.map((t) => `${t.name}:${dtName(t.dataType)}`).join(', ')}]`,
    );
  };
  if (g.sparse) refuse('it has sparse initializers');
  const kind = g.initializers.some((t) => t.name === 'embeddings_q') ? 'int8' : g.initializers.some((t) => t.name === 'embeddings') ? 'fp16' : undefined;
  if (!kind) refuse('no "embeddings_q" or "embeddings" initializer');
  const spec = STATIC_GRAPHS[kind!];
  const bad = matchNodes(g.nodes, spec.nodes);
  if (bad) refuse(bad);
  if (g.opset < 13) refuse(`opset ${g.opset} (ReduceSum / Unsqueeze with axes inputs need ≥ 13)`);

  // Inputs and outputs.
  if (g.inputs.length !== 2 || g.inputs[0]!.name !== 'input_ids' || g.inputs[1]!.name !== 'attention_mask') refuse('inputs must be exactly input_ids, attention_mask');
  for (const v of g.inputs) if (v.elemType !== DT.INT64 || v.rank !== 2) refuse(`input ${v.name} is ${dtName(v.elemType)} of rank ${v.rank}, expected int64 of rank 2`);
  const outNames = g.outputs.map((v) => v.name).sort();
  if (!sameList(outNames, ['last_hidden_state', 'sentence_embedding'])) refuse('outputs must be exactly last_hidden_state, sentence_embedding');
  const sent = g.outputs.find((v) => v.name === 'sentence_embedding')!;
  if (sent.elemType !== DT.FLOAT || sent.rank !== 2) refuse(`sentence_embedding is ${dtName(sent.elemType)} of rank ${sent.rank}, expected float of rank 2`);

  // Initializers: exactly the table (+ scale) and the three constants, with their values.
  const want = [spec.table, ...(spec.scale ? [spec.scale] : []), 'axis_last', 'axis_seq', 'one'].sort();
  const names = g.initializers.map((t) => t.name).sort();
  if (!sameList(names, want)) refuse(`initializers must be exactly ${want.join(', ')}`);
  const init = new Map(g.initializers.map((t) => [t.name, t]));
  for (const t of g.initializers) if (t.otherData || !t.raw) refuse(`initializer ${t.name} does not keep its data in raw_data`);
  const size = (t: OnnxTensor) => t.dims.reduce((a, b) => a * b, 1);
  const constant = (name: string, type: number, dims: number[], value: number, read: (d: DataView) => number) => {
    const t = init.get(name)!;
    if (t.dataType !== type || !sameList(t.dims.map(String), dims.map(String)) || t.raw!.length !== (type === DT.INT64 ? 8 : 4) || read(le(t.raw!)) !== value) {
      refuse(`initializer ${name} must be ${dtName(type)} [${dims.join(', ')}] = ${value}`);
    }
  };
  constant('axis_last', DT.INT64, [1], -1, (d) => Number(d.getBigInt64(0, true)));
  constant('axis_seq', DT.INT64, [1], 1, (d) => Number(d.getBigInt64(0, true)));
  constant('one', DT.FLOAT, [], 1, (d) => d.getFloat32(0, true));

  const table = init.get(spec.table)!;
  if (table.dataType !== spec.tableType || table.dims.length !== 2) refuse(`${spec.table} is ${dtName(table.dataType)} [${table.dims.join(', ')}], expected ${dtName(spec.tableType)} [V, D]`);
  const [rows, dim] = table.dims as [number, number];
  if (!(rows > 0 && dim > 0)) refuse(`${spec.table} has shape [${rows}, ${dim}]`);
  const bytesPer = spec.tableType === DT.INT8 ? 1 : 2;
  if (table.raw!.length !== size(table) * bytesPer) refuse(`${spec.table} holds ${table.raw!.length} bytes for shape [${rows}, ${dim}]`);
  const declared = sent.dims[1];
  if (typeof declared === 'number' && declared !== dim) refuse(`sentence_embedding has dimension ${declared} but ${spec.table} has ${dim}`);

  if (kind === 'int8') {
    const s = init.get(spec.scale!)!;
    if (s.dataType !== DT.FLOAT || !sameList(s.dims.map(String), [String(rows), '1']) || s.raw!.length !== rows * 4) {
      refuse(`${spec.scale} is ${dtName(s.dataType)} [${s.dims.join(', ')}], expected float [${rows}, 1]`);
    }
    const scale = new Float32Array(rows);
    const dv = le(s.raw!);
    for (let i = 0; i < rows; i++) scale[i] = dv.getFloat32(i * 4, true);
    const r = table.raw!;
    return { kind, rows, dim, q: new Int8Array(r.buffer, r.byteOffset, r.length), scale };
  }
  const r = table.raw!;
  const h = new Uint16Array(rows * dim);
  const dv = le(r);
  for (let i = 0; i < h.length; i++) h[i] = dv.getUint16(i * 2, true);
  return { kind: 'fp16', rows, dim, h };
}

/** float16 bits → float32, for every bit pattern (exact). */
let halfTable: Float32Array | undefined;
function halfToFloat(): Float32Array {
  if (halfTable) return halfTable;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >>> 10) & 0x1f;
    const m = h & 0x3ff;
    t[h] = e === 0 ? s * m * 2 ** -24 : e === 0x1f ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return (halfTable = t);
}

// ---------------------------------------------------------------------------------------------
// Loading, shared per model folder.

interface LoadedModel {
  tokenizer: WordPieceTokenizer;
  table: StaticTable;
  dim: number;
}
const cache = new Map<string, { model: Promise<LoadedModel>; refs: number }>();

async function loadModel(dir: string): Promise<LoadedModel> {
  const [tokenizer, bytes, config] = await Promise.all([
    WordPieceTokenizer.load(dir),
    readFile(join(dir, 'onnx', 'model.onnx')),
    readFile(join(dir, 'config.json'), 'utf8').then(
      (s) => JSON.parse(s) as { hidden_size?: number },
      (e: NodeJS.ErrnoException): { hidden_size?: number } => {
        if (e.code === 'ENOENT') return {};
        throw e;
      },
    ),
  ]);
  const table = readStaticGraph(bytes, join(dir, 'onnx', 'model.onnx'));
  if (tokenizer.maxId >= table.rows) throw new Error(`the tokenizer has token ids up to ${tokenizer.maxId} but the embedding table has ${table.rows} rows`);
  if (typeof config.hidden_size === 'number' && config.hidden_size !== table.dim) {
    throw new Error(`config.json says hidden_size ${config.hidden_size} but the embedding table has ${table.dim} columns`);
  }
  return { tokenizer, table, dim: table.dim };
}

/**
 * The mean of the rows of `ids` into `out` (zeroed, length D), then L2-normalised.
 *
 * The sum runs in one order for every text, whatever it is batched with: rows four at a time,
 * `((r0 + r1) + r2) + r3`, each group then added to the total; the last 3 rows as one group, 2 as
 * a pair, 1 alone. It is the order of onnxruntime's M=1 SGEMM kernel (MLAS) for a text of a batch
 * with a longer one, which is most texts of a batch (onnxruntime differs for a batch of one, summed
 * row by row, and for a batch's longest text when its length is 3 past a multiple of four: a pair
 * then a row). Products are float32 (`fround(q · scale)`), sums float32 (a Float32Array store
 * rounds each addition exactly as float32 arithmetic), the division float32.
 */
function pool(table: StaticTable, ids: number[], out: Float32Array, acc: Float32Array): void {
  const d = table.dim;
  const n = ids.length;
  const int8 = table.kind === 'int8';
  const q = int8 ? table.q : undefined;
  const scale = int8 ? table.scale : undefined;
  const h = int8 ? undefined : table.h;
  const f = int8 ? undefined : halfToFloat();
  /** acc = row t (as float32). */
  const row = (t: number, into: Float32Array) => {
    const id = ids[t]!;
    const o = id * d;
    if (q) {
      const sc = scale![id]!;
      for (let k = 0; k < d; k++) into[k] = q[o + k]! * sc;
    } else for (let k = 0; k < d; k++) into[k] = f![h![o + k]!]!;
  };
  /** acc += row t. */
  const addRow = (t: number, into: Float32Array) => {
    const id = ids[t]!;
    const o = id * d;
    if (q) {
      const sc = scale![id]!;
      for (let k = 0; k < d; k++) into[k] += Math.fround(q[o + k]! * sc);
    } else for (let k = 0; k < d; k++) into[k] += f![h![o + k]!]!;
  };
  const addAcc = () => {
    for (let k = 0; k < d; k++) out[k] += acc[k]!;
  };
  let t = 0;
  if (q) {
    // The hot loop (int8 tables, groups of four), written out.
    const sc = scale!;
    for (; t + 4 <= n; t += 4) {
      const i0 = ids[t]!, i1 = ids[t + 1]!, i2 = ids[t + 2]!, i3 = ids[t + 3]!;
      const s0 = sc[i0]!, s1 = sc[i1]!, s2 = sc[i2]!, s3 = sc[i3]!;
      const o0 = i0 * d, o1 = i1 * d, o2 = i2 * d, o3 = i3 * d;
      for (let k = 0; k < d; k++) {
        const a = Math.fround(Math.fround(q[o0 + k]! * s0) + Math.fround(q[o1 + k]! * s1));
        const b = Math.fround(a + Math.fround(q[o2 + k]! * s2));
        out[k] += Math.fround(b + Math.fround(q[o3 + k]! * s3));
      }
    }
  } else {
    for (; t + 4 <= n; t += 4) {
      row(t, acc);
      addRow(t + 1, acc);
      addRow(t + 2, acc);
      addRow(t + 3, acc);
      addAcc();
    }
  }
  const rest = n - t;
  if (rest === 3) {
    row(t, acc);
    addRow(t + 1, acc);
    addRow(t + 2, acc);
    addAcc();
  } else if (rest === 2) {
    row(t, acc);
    addRow(t + 1, acc);
    addAcc();
  } else if (rest === 1) addRow(t, out);
  const count = n > 1 ? n : 1;
  for (let k = 0; k < d; k++) out[k] = out[k]! / count;
  // As TransformersEmbedder: the sum of squares in double, then a multiplication by 1 / norm.
  let ss = 0;
  for (let k = 0; k < d; k++) ss += out[k]! * out[k]!;
  if (ss > 0) {
    const inv = 1 / Math.sqrt(ss);
    for (let k = 0; k < d; k++) out[k]! *= inv;
  }
}

const nextTick = () => new Promise<void>((r) => setImmediate(r));

type CacheEntry = { model: Promise<LoadedModel>; refs: number };

export class StaticEmbedder implements Embedder {
  readonly id: string;
  dim?: number;
  private readonly dir: string;
  private readonly batchSize: number;
  private model?: Promise<LoadedModel>;
  private entry?: CacheEntry;

  constructor(opts: StaticEmbedderOptions) {
    if (!opts || typeof opts !== 'object') throw new TypeError('StaticEmbedder: options are required');
    if ('localPath' in opts) throw new TypeError('Unknown option "localPath"; did you mean "path"?');
    if (typeof opts.path !== 'string' || !opts.path) throw new TypeError('StaticEmbedder: "path" is required');
    const batchSize = opts.batchSize ?? STATIC_DEFAULTS.batchSize;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new TypeError('StaticEmbedder: "batchSize" must be a positive integer');
    this.id = opts.id;
    this.dim = opts.dim;
    this.dir = resolve(opts.path);
    this.batchSize = batchSize;
  }

  /** Loads the tokenizer and the table (once per folder and thread: embedders share them). */
  load(): Promise<void> {
    return this.loaded().then(() => undefined);
  }

  private loaded(): Promise<LoadedModel> {
    if (this.model) return this.model;
    let entry = cache.get(this.dir);
    if (!entry) {
      const model = loadModel(this.dir);
      const e: CacheEntry = (entry = { model, refs: 0 });
      cache.set(this.dir, e);
      // A failed load may be retried (e.g. once the files are fixed).
      model.catch(() => cache.get(this.dir) === e && cache.delete(this.dir));
    }
    entry.refs++;
    this.entry = entry;
    const mine = entry.model.then(
      (m) => {
        if (this.dim !== undefined && this.dim !== 0 && this.dim !== m.dim) {
          throw new Error(`Embedding model ${this.id} has vectors of dimension ${m.dim}, expected ${this.dim}`);
        }
        this.dim = m.dim;
        return m;
      },
      (err: unknown) => {
        throw new Error(`Cannot load embedding model ${this.id} from folder ${this.dir}: ${(err as Error).message}`, { cause: err });
      },
    );
    this.model = mine;
    mine.catch(() => {
      if (this.model === mine) this.release();
    });
    return mine;
  }

  /** Drops this embedder's hold on the shared model; the last one out frees it. */
  private release(): void {
    const e = this.entry;
    this.model = undefined;
    this.entry = undefined;
    if (e && --e.refs <= 0 && cache.get(this.dir) === e) cache.delete(this.dir);
  }

  /** Token ids of a text, as the model sees them (for tests and tools). */
  async tokenize(text: string): Promise<number[]> {
    return (await this.loaded()).tokenizer.encode(text);
  }

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const { signal } = opts;
    signal?.throwIfAborted();
    const todo: number[] = [];
    texts.forEach((t, i) => (t.trim() === '' ? undefined : todo.push(i)));
    const m = todo.length > 0 || this.dim === undefined ? await this.loaded() : undefined;
    const dim = this.dim ?? 0;
    const out: Float32Array[] = texts.map(() => new Float32Array(dim));
    if (!m) return out;
    const acc = new Float32Array(dim);
    // Batches of non-empty texts: only for turns of the event loop (a text's sum is the same in any batch).
    for (let s = 0; s < todo.length; s += this.batchSize) {
      if (s > 0) await nextTick(); // the work is synchronous: let other work (and an abort) in
      signal?.throwIfAborted();
      const idx = todo.slice(s, s + this.batchSize);
      for (const i of idx) pool(m.table, m.tokenizer.encode(texts[i]!), out[i]!, acc);
    }
    return out;
  }

  /** Releases the model (freed when no other embedder of this folder holds it); a later embed() loads it again. */
  async close(): Promise<void> {
    const m = this.model;
    if (!m) return;
    await m.then(
      () => this.model === m && this.release(),
      () => undefined,
    );
  }
}

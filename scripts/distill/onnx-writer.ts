/**
 * A minimal ONNX writer: the subset of onnx.proto (ONNX IR v8) needed to emit a static
 * embedding graph, encoded with protobufjs. Field numbers follow onnx/onnx.proto3.
 */
import protobuf from 'protobufjs';

const ONNX_PROTO = `
syntax = "proto3";
package onnx;
message AttributeProto {
  string name = 1; float f = 2; int64 i = 3; bytes s = 4; TensorProto t = 5;
  repeated float floats = 7; repeated int64 ints = 8; int32 type = 20;
}
message ValueInfoProto { string name = 1; TypeProto type = 2; string doc_string = 3; }
message NodeProto {
  repeated string input = 1; repeated string output = 2; string name = 3; string op_type = 4;
  repeated AttributeProto attribute = 5; string doc_string = 6; string domain = 7;
}
message StringStringEntryProto { string key = 1; string value = 2; }
message ModelProto {
  int64 ir_version = 1; string producer_name = 2; string producer_version = 3; string domain = 4;
  int64 model_version = 5; string doc_string = 6; GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8; repeated StringStringEntryProto metadata_props = 14;
}
message GraphProto {
  repeated NodeProto node = 1; string name = 2; repeated TensorProto initializer = 5; string doc_string = 10;
  repeated ValueInfoProto input = 11; repeated ValueInfoProto output = 12; repeated ValueInfoProto value_info = 13;
}
message TensorProto {
  repeated int64 dims = 1; int32 data_type = 2; repeated float float_data = 4 [packed = true];
  repeated int64 int64_data = 7 [packed = true]; string name = 8; bytes raw_data = 9; string doc_string = 12;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { int32 elem_type = 1; TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
`;

/** ONNX TensorProto.DataType values used here. */
export const DType = { FLOAT: 1, INT8: 3, INT64: 7, FLOAT16: 10 } as const;
/** AttributeProto.AttributeType values used here. */
const AttrType = { FLOAT: 1, INT: 2, INTS: 7 } as const;

export type Dim = number | string;
export interface ValueInfo { name: string; elemType: number; shape: Dim[] }
export interface Tensor { name: string; dataType: number; dims: number[]; raw: Uint8Array }
export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  attrs?: Record<string, number | number[]>;
  intAttrs?: string[]; // attribute names whose numeric value is an int (default: ints)
}

export interface ModelSpec {
  graphName: string;
  docString?: string;
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  initializers: Tensor[];
  nodes: Node[];
  opset?: number;
  irVersion?: number;
  metadata?: Record<string, string>;
}

function valueInfo(v: ValueInfo) {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: v.elemType,
        shape: { dim: v.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

/** Encodes a model as ONNX protobuf bytes. */
export function encodeModel(spec: ModelSpec): Uint8Array {
  const root = protobuf.parse(ONNX_PROTO, { keepCase: false }).root;
  const Model = root.lookupType('onnx.ModelProto');
  const msg = {
    irVersion: spec.irVersion ?? 8,
    producerName: 'ragloom-distill',
    producerVersion: '1',
    docString: spec.docString ?? '',
    opsetImport: [{ domain: '', version: spec.opset ?? 17 }],
    metadataProps: Object.entries(spec.metadata ?? {}).map(([key, value]) => ({ key, value })),
    graph: {
      name: spec.graphName,
      input: spec.inputs.map(valueInfo),
      output: spec.outputs.map(valueInfo),
      initializer: spec.initializers.map((t) => ({ name: t.name, dataType: t.dataType, dims: t.dims, rawData: t.raw })),
      node: spec.nodes.map((n, i) => ({
        name: n.name ?? `${n.op.toLowerCase()}_${i}`,
        opType: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attrs ?? {}).map(([name, v]) =>
          Array.isArray(v)
            ? { name, ints: v, type: AttrType.INTS }
            : Number.isInteger(v) && !(n.intAttrs && !n.intAttrs.includes(name))
              ? { name, i: v, type: AttrType.INT }
              : { name, f: v, type: AttrType.FLOAT },
        ),
      })),
    },
  };
  const err = Model.verify(msg);
  if (err) throw new Error(`invalid ONNX model: ${err}`);
  return Model.encode(Model.fromObject(msg)).finish();
}

/** Little-endian bytes of an int64 tensor. */
export function int64Bytes(values: number[]): Uint8Array {
  const b = new BigInt64Array(values.map((v) => BigInt(v)));
  return new Uint8Array(b.buffer);
}

/** IEEE 754 half-precision bits of a float (round to nearest even). */
export function toHalf(value: number): number {
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

/** Float32 values → float16 little-endian bytes. */
export function float16Bytes(values: Float32Array): Uint8Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toHalf(values[i]!);
  return new Uint8Array(out.buffer);
}

/** Decodes an ONNX model's initializers (name → dims, data type, raw bytes); for tests and tools. */
export function readInitializers(bytes: Uint8Array): Map<string, { dims: number[]; dataType: number; raw: Uint8Array }> {
  const root = protobuf.parse(ONNX_PROTO, { keepCase: false }).root;
  const Model = root.lookupType('onnx.ModelProto');
  const m = Model.toObject(Model.decode(bytes), { longs: Number, bytes: Uint8Array as never }) as {
    graph: { initializer: { name: string; dims: number[]; dataType: number; rawData?: Uint8Array }[] };
  };
  const out = new Map<string, { dims: number[]; dataType: number; raw: Uint8Array }>();
  for (const t of m.graph.initializer) out.set(t.name, { dims: t.dims, dataType: t.dataType, raw: t.rawData ?? new Uint8Array() });
  return out;
}

/** float16 bits → number. */
export function fromHalf(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

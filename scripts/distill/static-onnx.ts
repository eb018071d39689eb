/**
 * The ONNX graph of a static embedding model: a token table lookup and masked mean pooling, the
 * table stored as int8 with a float scale per row (or float16) and dequantised after the lookup.
 * Written by distill.ts and contrastive.ts; read by src/embed/providers/static.ts, whose node
 * lists (STATIC_GRAPHS) these graphs are built from.
 */
import { DType, encodeModel, float16Bytes, int64Bytes, type ModelSpec } from './onnx-writer.js';
import { STATIC_GRAPHS } from '../../src/embed/providers/static.js';

export interface StaticOnnx {
  /** Row-major table, `rows × dims`. */
  table: Float32Array;
  rows: number;
  dims: number;
  quant: 'int8' | 'fp16';
  graphName: string;
  docString: string;
  metadata: Record<string, string>;
}

/** Symmetric per-row int8 quantisation: row ≈ q · scale. */
function quantizeRows(t: Float32Array, rows: number, dims: number): { q: Int8Array; scale: Float32Array } {
  const q = new Int8Array(rows * dims);
  const scale = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let m = 0;
    for (let c = 0; c < dims; c++) m = Math.max(m, Math.abs(t[r * dims + c]!));
    const sc = m / 127;
    scale[r] = sc;
    if (sc > 0) for (let c = 0; c < dims; c++) q[r * dims + c] = Math.round(t[r * dims + c]! / sc);
  }
  return { q, scale };
}

/** The model.onnx bytes of a static embedding table. */
export function staticOnnx(m: StaticOnnx): Uint8Array {
  return encodeModel(staticOnnxSpec(m));
}

/** The graph of {@link staticOnnx}, before encoding (tests alter it to make near misses). */
export function staticOnnxSpec(m: StaticOnnx): ModelSpec {
  const { table, rows: V, dims: DIMS, quant: QUANT } = m;
  const common = {
    graphName: m.graphName,
    docString: m.docString,
    inputs: [
      { name: 'input_ids', elemType: DType.INT64, shape: ['batch_size', 'sequence_length'] },
      { name: 'attention_mask', elemType: DType.INT64, shape: ['batch_size', 'sequence_length'] },
    ],
    outputs: [
      { name: 'last_hidden_state', elemType: DType.FLOAT, shape: ['batch_size', 'sequence_length', DIMS] },
      { name: 'sentence_embedding', elemType: DType.FLOAT, shape: ['batch_size', DIMS] },
    ],
    metadata: { ...m.metadata, storage: QUANT },
  };
  const axes = [
    { name: 'axis_last', dataType: DType.INT64, dims: [1], raw: int64Bytes([-1]) },
    { name: 'axis_seq', dataType: DType.INT64, dims: [1], raw: int64Bytes([1]) },
    { name: 'one', dataType: DType.FLOAT, dims: [], raw: new Uint8Array(new Float32Array([1]).buffer) },
  ];
  // The nodes are the reader's own (Gather → dequantise → mask → masked mean pooling), so the
  // embedder accepts exactly what is written here.
  const { nodes, table: tableName, scale: scaleName } = STATIC_GRAPHS[QUANT];
  const graph = nodes.map((n) => ({ ...n, inputs: [...n.inputs], outputs: [...n.outputs] }));
  if (QUANT === 'fp16') {
    return {
      ...common,
      initializers: [{ name: tableName, dataType: DType.FLOAT16, dims: [V, DIMS], raw: float16Bytes(table) }, ...axes],
      nodes: graph,
    };
  }
  const { q, scale } = quantizeRows(table, V, DIMS);
  return {
    ...common,
    initializers: [
      { name: tableName, dataType: DType.INT8, dims: [V, DIMS], raw: new Uint8Array(q.buffer) },
      { name: scaleName!, dataType: DType.FLOAT, dims: [V, 1], raw: new Uint8Array(scale.buffer) },
      ...axes,
    ],
    nodes: graph,
  };
}

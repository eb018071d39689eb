/**
 * The ONNX graph of a static embedding model: a token table lookup and masked mean pooling, the
 * table stored as int8 with a float scale per row (or float16) and dequantised after the lookup.
 * Written by distill.ts and contrastive.ts; read by src/embed/providers/static.ts, which accepts
 * exactly these two graphs.
 */
import { DType, encodeModel, float16Bytes, int64Bytes, type ModelSpec } from './onnx-writer.js';

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
  // Masked mean pooling: last_hidden_state = tok · mask; sentence_embedding = Σ_seq / max(Σ mask, 1).
  const pool = [
    { op: 'ReduceSum', inputs: ['last_hidden_state', 'axis_seq'], outputs: ['summed'], attrs: { keepdims: 0 } },
    { op: 'ReduceSum', inputs: ['mask', 'axis_seq'], outputs: ['count'], attrs: { keepdims: 1 } },
    { op: 'Max', inputs: ['count', 'one'], outputs: ['count1'] },
    { op: 'Div', inputs: ['summed', 'count1'], outputs: ['sentence_embedding'] },
  ];
  const maskNodes = [
    { op: 'Cast', inputs: ['attention_mask'], outputs: ['mask'], attrs: { to: DType.FLOAT } },
    { op: 'Unsqueeze', inputs: ['mask', 'axis_last'], outputs: ['mask3'] },
  ];
  if (QUANT === 'fp16') {
    return {
      ...common,
      initializers: [{ name: 'embeddings', dataType: DType.FLOAT16, dims: [V, DIMS], raw: float16Bytes(table) }, ...axes],
      nodes: [
        { op: 'Gather', inputs: ['embeddings', 'input_ids'], outputs: ['tok16'], attrs: { axis: 0 } },
        { op: 'Cast', inputs: ['tok16'], outputs: ['tok'], attrs: { to: DType.FLOAT } },
        ...maskNodes,
        { op: 'Mul', inputs: ['tok', 'mask3'], outputs: ['last_hidden_state'] },
        ...pool,
      ],
    };
  } else {
    const { q, scale } = quantizeRows(table, V, DIMS);
    return {
      ...common,
      initializers: [
        { name: 'embeddings_q', dataType: DType.INT8, dims: [V, DIMS], raw: new Uint8Array(q.buffer) },
        { name: 'embeddings_scale', dataType: DType.FLOAT, dims: [V, 1], raw: new Uint8Array(scale.buffer) },
        ...axes,
      ],
      nodes: [
        { op: 'Gather', inputs: ['embeddings_q', 'input_ids'], outputs: ['tok8'], attrs: { axis: 0 } },
        { op: 'Cast', inputs: ['tok8'], outputs: ['tokq'], attrs: { to: DType.FLOAT } },
        { op: 'Gather', inputs: ['embeddings_scale', 'input_ids'], outputs: ['tokscale'], attrs: { axis: 0 } },
        ...maskNodes,
        { op: 'Mul', inputs: ['tokscale', 'mask3'], outputs: ['w'] },
        { op: 'Mul', inputs: ['tokq', 'w'], outputs: ['last_hidden_state'] },
        ...pool,
      ],
    };
  }
}

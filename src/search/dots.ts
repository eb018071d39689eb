/**
 * The rows of an in-memory vector index (vector-index.ts) and their exact dot products with a
 * question. The rows live in a WebAssembly memory, where an 883-byte SIMD kernel (source:
 * dots.wat beside this file, built with `wat2wasm --enable-simd`) computes two lanes of f64 at
 * once, four rows at a time: re-scoring the binary prefilter's ~1,000 scattered rows was the
 * largest single cost of a retrieval (cold caches, 1,400 rows of 256: 0.51 ms → 0.31). Its sums are the TypeScript fallback's, term for term and in the same order, so the
 * scores are bit-identical either way. The fallback (plain Float32Array) serves runtimes without
 * WebAssembly SIMD, RAGLOOM_NO_WASM=1, dimensions not a multiple of 4, and stores past what one
 * WebAssembly memory can address.
 *
 * Layout of the memory, in bytes: [0, Q) the question widened to f64, [Q, Q + cap·dim·4) the
 * rows, then scratch for a call (the slots as u32, the results as f64).
 */
import { compileWasm, instantiateWasm, WASM_PAGE, wasmMemory, type WasmMemory } from './wasm.js';

const WASM_BASE64 =
  'AGFzbQEAAAABGANgA39/fwF8YAJ7ewF8YAZ/f39/f38BfwIMAQNlbnYDbWVtAgABAwQDAAECBwgBBGRvdHMAAgqwBgOiAQIDewF/RAAAAAAAAAAA/RQhA0QAAAAAAAAAAP0UIQQgASACQQJ0aiEGAkADQCABIAZPDQEgAf0ABAAhBSADIAD9AAQAIAX9X/3yAf3wASEDIAQgAP0ABBAgBSAF/Q0ICQoLDA0ODwgJCgsMDQ4P/V/98gH98AEhBCABQRBqIQEgAEEgaiEADAALCyAD/SEAIAP9IQGgIAT9IQCgIAT9IQGgCxkAIAD9IQAgAP0hAaAgAf0hAKAgAf0hAaAL7wQDCH8LewF/IAJBAnQhBwJAA0AgBkEEaiAESw0BIAMgBkECdGohGSABIBkoAgAgB2xqIQogASAZKAIEIAdsaiELIAEgGSgCCCAHbGohDCABIBkoAgwgB2xqIQ1EAAAAAAAAAAD9FCEORAAAAAAAAAAA/RQhD0QAAAAAAAAAAP0UIRBEAAAAAAAAAAD9FCERRAAAAAAAAAAA/RQhEkQAAAAAAAAAAP0UIRNEAAAAAAAAAAD9FCEURAAAAAAAAAAA/RQhFUEAIQggACEJAkADQCAIIAdPDQEgCf0ABAAhFiAJ/QAEECEXIAogCGr9AAQAIRggDiAWIBj9X/3yAf3wASEOIA8gFyAYIBj9DQgJCgsMDQ4PCAkKCwwNDg/9X/3yAf3wASEPIAsgCGr9AAQAIRggECAWIBj9X/3yAf3wASEQIBEgFyAYIBj9DQgJCgsMDQ4PCAkKCwwNDg/9X/3yAf3wASERIAwgCGr9AAQAIRggEiAWIBj9X/3yAf3wASESIBMgFyAYIBj9DQgJCgsMDQ4PCAkKCwwNDg/9X/3yAf3wASETIA0gCGr9AAQAIRggFCAWIBj9X/3yAf3wASEUIBUgFyAYIBj9DQgJCgsMDQ4PCAkKCwwNDg/9X/3yAf3wASEVIAhBEGohCCAJQSBqIQkMAAsLIAUgBkEDdGohGSAZIA4gDxABOQMAIBkgECAREAE5AwggGSASIBMQATkDECAZIBQgFRABOQMYIAZBBGohBgwACwsCQANAIAYgBE8NASAFIAZBA3RqIAAgASADIAZBAnRqKAIAIAdsaiACEAA5AwAgBkEBaiEGDAALC0EACw==';

type DotsFn = (q: number, vecs: number, dim: number, slots: number, count: number, out: number) => number;
const PAGE = WASM_PAGE;
/** What one WebAssembly memory can address (wasm32): past it, the store stays in JS memory. */
const MAX_BYTES = 4 * 1024 ** 3 - PAGE;

/** Whether vector stores use the WebAssembly kernel (false: the TypeScript fallback). */
export function dotsBackend(): 'wasm' | 'js' {
  return compileWasm(WASM_BASE64) ? 'wasm' : 'js';
}

interface Kernel { mem: WasmMemory; dots: DotsFn }

export class VectorStore {
  /** The rows, `dim` floats each, back to back (a view: replaced when the store grows). */
  vecs = new Float32Array(0);
  private cap = 0;
  private k: Kernel | null = null;
  /** byte offset of the rows in the memory */
  private readonly at: number;

  constructor(readonly dim: number) {
    this.at = Math.ceil((dim * 8) / PAGE) * PAGE || PAGE;
    const m = dim % 4 === 0 && dim > 0 ? compileWasm(WASM_BASE64) : null;
    if (m) {
      try {
        const mem = wasmMemory(this.at / PAGE);
        this.k = { mem, dots: instantiateWasm(m, { env: { mem } }).dots as DotsFn };
      } catch {
        this.k = null;
      }
    }
  }

  get backend(): 'wasm' | 'js' {
    return this.k ? 'wasm' : 'js';
  }

  /** Room for `cap` rows; the first `keep` rows stay. */
  reserve(cap: number, keep: number): void {
    if (cap <= this.cap) return;
    if (this.k && !this.ensure(this.at + cap * this.dim * 4)) this.toJs(keep);
    if (this.k) {
      this.vecs = new Float32Array(this.k.mem.buffer, this.at, cap * this.dim);
    } else {
      const v = new Float32Array(cap * this.dim);
      v.set(this.vecs.subarray(0, keep * this.dim));
      this.vecs = v;
    }
    this.cap = cap;
  }

  /** The memory holds `bytes`; false when it cannot grow that far. Renews the rows' view. */
  private ensure(bytes: number): boolean {
    const mem = this.k!.mem;
    if (bytes <= mem.buffer.byteLength) return true;
    if (bytes > MAX_BYTES) return false;
    try {
      mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / PAGE));
    } catch {
      return false;
    }
    // Growing detaches the old buffer: every view is made anew.
    this.vecs = new Float32Array(mem.buffer, this.at, this.cap * this.dim);
    return true;
  }

  /** Moves the rows to JS memory for good (the memory could not grow). */
  private toJs(keep: number): void {
    const v = new Float32Array(this.cap * this.dim);
    v.set(this.vecs.subarray(0, keep * this.dim));
    this.vecs = v;
    this.k = null;
  }

  /** out[k] = the dot product of `q` with row slots[k], for k < count. */
  dots(q: Float32Array, slots: ArrayLike<number>, count: number, out: Float64Array): void {
    const k = this.k;
    const dim = this.dim;
    if (!k) {
      jsDots(q, this.vecs, dim, slots, count, out);
      return;
    }
    const slotsAt = this.at + this.cap * dim * 4;
    const outAt = slotsAt + ((count * 4 + 7) & ~7);
    // Scratch past the rows.
    if (!this.ensure(outAt + count * 8)) {
      this.toJs(this.cap);
      jsDots(q, this.vecs, dim, slots, count, out);
      return;
    }
    const buf = k.mem.buffer;
    new Float64Array(buf, 0, dim).set(q);
    const to = new Uint32Array(buf, slotsAt, count);
    if (ArrayBuffer.isView(slots)) to.set((slots as unknown as Uint32Array).subarray(0, count));
    else for (let i = 0; i < count; i++) to[i] = slots[i]!;
    k.dots(0, this.at, dim, slotsAt, count, outAt);
    out.set(new Float64Array(buf, outAt, count));
  }
}

/**
 * out[k] = dotAt(q, v, slots[k]·dim, dim) for k < count, four rows at a time: the rows are
 * scattered over the whole array, and four streams of loads wait on memory together (two: ~35%
 * faster than one on 100k rows; four: ~5–8% more). Each row's sums are dotAt's, in dotAt's order.
 */
export function jsDots(q: Float32Array, v: Float32Array, dim: number, slots: ArrayLike<number>, count: number, out: Float64Array): void {
  let i = 0;
  if (dim % 4 === 0) {
    for (; i + 3 < count; i += 4) {
      const o1 = slots[i]! * dim;
      const o2 = slots[i + 1]! * dim;
      const o3 = slots[i + 2]! * dim;
      const o4 = slots[i + 3]! * dim;
      let a1 = 0, b1 = 0, c1 = 0, d1 = 0, a2 = 0, b2 = 0, c2 = 0, d2 = 0;
      let a3 = 0, b3 = 0, c3 = 0, d3 = 0, a4 = 0, b4 = 0, c4 = 0, d4 = 0;
      for (let j = 0; j < dim; j += 4) {
        const q0 = q[j]!, q1 = q[j + 1]!, q2 = q[j + 2]!, q3 = q[j + 3]!;
        a1 += q0 * v[o1 + j]!; b1 += q1 * v[o1 + j + 1]!; c1 += q2 * v[o1 + j + 2]!; d1 += q3 * v[o1 + j + 3]!;
        a2 += q0 * v[o2 + j]!; b2 += q1 * v[o2 + j + 1]!; c2 += q2 * v[o2 + j + 2]!; d2 += q3 * v[o2 + j + 3]!;
        a3 += q0 * v[o3 + j]!; b3 += q1 * v[o3 + j + 1]!; c3 += q2 * v[o3 + j + 2]!; d3 += q3 * v[o3 + j + 3]!;
        a4 += q0 * v[o4 + j]!; b4 += q1 * v[o4 + j + 1]!; c4 += q2 * v[o4 + j + 2]!; d4 += q3 * v[o4 + j + 3]!;
      }
      out[i] = a1 + b1 + c1 + d1;
      out[i + 1] = a2 + b2 + c2 + d2;
      out[i + 2] = a3 + b3 + c3 + d3;
      out[i + 3] = a4 + b4 + c4 + d4;
    }
  }
  for (; i < count; i++) out[i] = dotAt(q, v, slots[i]! * dim, dim);
}

/** The dot product of `q` with the `dim` floats of `v` from `o`: four running sums, then their sum. */
export function dotAt(q: Float32Array, v: Float32Array, o: number, dim: number): number {
  let a = 0, b = 0, c = 0, d = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    a += q[i]! * v[o + i]!;
    b += q[i + 1]! * v[o + i + 1]!;
    c += q[i + 2]! * v[o + i + 2]!;
    d += q[i + 3]! * v[o + i + 3]!;
  }
  for (; i < dim; i++) a += q[i]! * v[o + i]!;
  return a + b + c + d;
}

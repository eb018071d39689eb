/**
 * Hamming distances of binary codes: a 164-byte WebAssembly module (source: hamming.wat beside
 * this file, built with `wat2wasm hamming.wat`) using the i64.popcnt instruction, with a plain
 * TypeScript fallback for runtimes without WebAssembly. Codes live in one linear memory:
 *
 *   [0, 4 KiB)        query code
 *   [4 KiB, codesEnd) stored codes, `bytesPerCode` each, slot after slot
 *   [codesEnd, …)     u16 output distances, one per slot
 */
const WASM_BASE64 =
  'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcRAgNtZW0CAAdoYW1taW5nAAAKcwFxAwN/AX4BfyAAIQcgBCEJAkADQCAFIANPDQFCACEIQQAhBgJAA0AgBiACTw0BIAggBykDACABIAZBA3RqKQMAhXt8IQggB0EIaiEHIAZBAWohBgwACwsgCSAIpzsBACAJQQJqIQkgBUEBaiEFDAALCws=';

type HammingFn = (codes: number, q: number, words64: number, n: number, out: number) => void;
interface WasmMemory { readonly buffer: ArrayBuffer; grow(pages: number): number }
// The project's tsconfig has no DOM lib, so WebAssembly is typed here.
const WA = (globalThis as unknown as {
  WebAssembly?: {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
  };
}).WebAssembly;

const QUERY_AT = 0;
const CODES_AT = 4096;
const PAGE = 65536;

let disabled = process.env.RAGLOOM_NO_WASM === '1';

/** Whether the WebAssembly kernel is in use (false: the TypeScript fallback). */
export function hammingBackend(): 'wasm' | 'js' {
  return disabled ? 'js' : 'wasm';
}

function instantiate(): { mem: WasmMemory; fn: HammingFn } | null {
  if (disabled || !WA) return null;
  try {
    const mod = new WA.Module(Buffer.from(WASM_BASE64, 'base64'));
    const inst = new WA.Instance(mod, {});
    return { mem: inst.exports.mem as WasmMemory, fn: inst.exports.hamming as HammingFn };
  } catch {
    disabled = true;
    return null;
  }
}

function popcnt32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Binary codes of `bits`-bit vectors (padded to 64-bit words), growable, with a distance scan. */
export class CodeStore {
  readonly words64: number;
  readonly bytesPerCode: number;
  private cap = 0;
  private wasm: { mem: WasmMemory; fn: HammingFn } | null;
  private buf: ArrayBuffer;
  private u32!: Uint32Array;
  private u16!: Uint16Array;

  constructor(bits: number, opts: { js?: boolean } = {}) {
    this.words64 = Math.ceil(bits / 64);
    this.bytesPerCode = this.words64 * 8;
    this.wasm = opts.js ? null : instantiate();
    this.buf = this.wasm ? this.wasm.mem.buffer : new ArrayBuffer(PAGE);
    this.views();
  }

  private views(): void {
    this.u32 = new Uint32Array(this.buf);
    this.u16 = new Uint16Array(this.buf);
  }

  private get outAt(): number {
    return CODES_AT + this.cap * this.bytesPerCode;
  }

  /** Makes room for `n` slots (codes are kept; the output area moves). */
  reserve(n: number): void {
    if (n <= this.cap) return;
    const cap = Math.max(n, Math.ceil(this.cap * 1.5), 1024);
    const need = CODES_AT + cap * (this.bytesPerCode + 2);
    if (this.wasm) {
      const have = this.wasm.mem.buffer.byteLength;
      if (need > have) this.wasm.mem.grow(Math.ceil((need - have) / PAGE));
      this.buf = this.wasm.mem.buffer;
    } else if (need > this.buf.byteLength) {
      const next = new ArrayBuffer(Math.ceil(need / PAGE) * PAGE);
      new Uint8Array(next).set(new Uint8Array(this.buf, 0, CODES_AT + this.cap * this.bytesPerCode));
      this.buf = next;
    }
    this.cap = cap;
    this.views();
  }

  /** Stores the code of `v − mean` (bit set where the centred value is > 0) at `slot`. */
  set(slot: number, v: Float32Array, off: number, dim: number, mean: Float32Array): void {
    const base = (CODES_AT + slot * this.bytesPerCode) >> 2;
    const words32 = this.words64 * 2;
    for (let w = 0; w < words32; w++) {
      let x = 0;
      const d0 = w * 32;
      const end = Math.min(dim, d0 + 32);
      for (let d = d0; d < end; d++) if (v[off + d]! > mean[d]!) x |= 1 << (d - d0);
      this.u32[base + w] = x;
    }
  }

  /** Distances from the code of `q − mean` to slots [0, n), as a view valid until the next call. */
  distances(q: Float32Array, mean: Float32Array, n: number): Uint16Array {
    const words32 = this.words64 * 2;
    for (let w = 0; w < words32; w++) {
      let x = 0;
      const d0 = w * 32;
      const end = Math.min(q.length, d0 + 32);
      for (let d = d0; d < end; d++) if (q[d]! > mean[d]!) x |= 1 << (d - d0);
      this.u32[(QUERY_AT >> 2) + w] = x;
    }
    const out = this.outAt;
    if (this.wasm) {
      this.wasm.fn(CODES_AT, QUERY_AT, this.words64, n, out);
    } else {
      const u32 = this.u32;
      const q0 = QUERY_AT >> 2;
      let p = CODES_AT >> 2;
      const o = out >> 1;
      for (let i = 0; i < n; i++) {
        let dist = 0;
        for (let w = 0; w < words32; w++) dist += popcnt32(u32[p + w]! ^ u32[q0 + w]!);
        p += words32;
        this.u16[o + i] = dist;
      }
    }
    return new Uint16Array(this.buf, out, n);
  }
}

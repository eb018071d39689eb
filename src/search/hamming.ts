/**
 * Hamming-distance kernels for the binary vector prefilter: a 612-byte WebAssembly module
 * (source: hamming.wat beside this file, built with `wat2wasm --enable-simd hamming.wat`) using
 * i64.popcnt and SIMD compares, with a plain TypeScript fallback for runtimes without
 * WebAssembly SIMD (or RAGLOOM_NO_WASM=1).
 *
 * One linear memory holds, in bytes:
 *   [0, 4 KiB)          query code
 *   [4 KiB, 8 KiB)      histogram of distances (u32 × 512)
 *   [8 KiB, …)          codes, bytesPerCode per slot
 *   then                ok flags (u8 per slot: 1 = searchable)
 *   then                distances (u16 per slot, scratch)
 *   then                selected slots (u32 per slot, scratch)
 */
import { compileWasm, instantiateWasm, WASM_PAGE, type WasmMemory } from './wasm.js';

const WASM_BASE64 = 'AGFzbQEAAAABHQNgB39/f39/f38AYAZ/f39/f38AYAV/f39/fwF/AwQDAAECBQMBAAEHIQQDbWVtAgAEc2NhbgAABXNjYW40AAEIY29sbGVjdDgAAgqMBAOPAQMDfwF+AX8gACEJAkADQCAHIANPDQFCACEKQQAhCAJAA0AgCCACTw0BIAogCSkDACABIAhBA3RqKQMAhXt8IQogCUEIaiEJIAhBAWohCAwACwsgBSAHQQF0aiAKpzsBACAEIAdqLQAABEAgBiAKp0ECdGohCyALIAsoAgBBAWo2AgALIAdBAWohBwwACwsLnAECBH8EfiABKQMAIQogASkDCCELIAEpAxAhDCABKQMYIQ0gACEHAkADQCAGIAJPDQEgBykDACAKhXsgBykDCCALhXt8IAcpAxAgDIV7IAcpAxggDYV7fHynIQggBCAGQQF0aiAIOwEAIAMgBmotAAAEQCAFIAhBAnRqIQkgCSAJKAIAQQFqNgIACyAHQSBqIQcgBkEBaiEGDAALCwvaAQMDfwF7AX8gA/0QIQggAkF4cSEJAkADQCAFIAlPDQEgACAFQQF0av0ABAAgCP00IAEgBWr9XQMA/YkB/QwAAAAAAAAAAAAAAAAAAAAA/S79Tv2EASEHAkADQCAHRQ0BIAQgBkECdGogBSAHaGo2AgAgBkEBaiEGIAcgB0EBa3EhBwwACwsgBUEIaiEFDAALCwJAA0AgBSACTw0BIAAgBUEBdGovAQAgA00gASAFai0AAEEAR3EEQCAEIAZBAnRqIAU2AgAgBkEBaiEGCyAFQQFqIQUMAAsLIAYL';

type ScanFn = (codes: number, q: number, w: number, n: number, ok: number, dist: number, hist: number) => void;
type Scan4Fn = (codes: number, q: number, n: number, ok: number, dist: number, hist: number) => void;
type CollectFn = (dist: number, ok: number, n: number, cut: number, out: number) => number;
interface Kernel { mem: WasmMemory; scan: ScanFn; scan4: Scan4Fn; collect: CollectFn }

const QUERY_AT = 0;
const HIST_AT = 4096;
const HIST_LEN = 512;
const CODES_AT = 8192;
const PAGE = WASM_PAGE;

/** Whether the WebAssembly kernel is in use (false: the TypeScript fallback). */
export function hammingBackend(): 'wasm' | 'js' {
  return compileWasm(WASM_BASE64) ? 'wasm' : 'js';
}

function instantiate(): Kernel | null {
  const m = compileWasm(WASM_BASE64);
  if (!m) return null;
  try {
    const x = instantiateWasm(m);
    return { mem: x.mem as WasmMemory, scan: x.scan as ScanFn, scan4: x.scan4 as Scan4Fn, collect: x.collect8 as CollectFn };
  } catch {
    return null;
  }
}

function popcnt32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

const align8 = (n: number) => (n + 7) & ~7;

/** Binary codes of `bits`-bit vectors (padded to 64-bit words), growable, with a selection scan. */
export class CodeStore {
  readonly words64: number;
  readonly bytesPerCode: number;
  private cap = 0;
  private readonly k: Kernel | null;
  private buf: ArrayBuffer;
  private u8!: Uint8Array;
  private u16!: Uint16Array;
  private u32!: Uint32Array;

  constructor(bits: number, opts: { js?: boolean } = {}) {
    if (bits > HIST_LEN - 1) throw new RangeError(`CodeStore supports up to ${HIST_LEN - 1} bits`);
    this.words64 = Math.ceil(bits / 64);
    this.bytesPerCode = this.words64 * 8;
    this.k = opts.js ? null : instantiate();
    this.buf = this.k ? this.k.mem.buffer : new ArrayBuffer(PAGE);
    this.views();
  }

  private views(): void {
    this.u8 = new Uint8Array(this.buf);
    this.u16 = new Uint16Array(this.buf);
    this.u32 = new Uint32Array(this.buf);
  }

  private okAt(cap = this.cap): number { return CODES_AT + cap * this.bytesPerCode; }
  private distAt(cap = this.cap): number { return align8(this.okAt(cap) + cap); }
  private outAt(cap = this.cap): number { return align8(this.distAt(cap) + cap * 2); }

  /** Makes room for `n` slots (codes and ok flags are kept). */
  reserve(n: number): void {
    if (n <= this.cap) return;
    const cap = Math.max(n, Math.ceil(this.cap * 1.5), 1024);
    const need = this.outAt(cap) + cap * 4;
    const oldOk = this.okAt();
    const oldCap = this.cap;
    if (this.k) {
      const have = this.k.mem.buffer.byteLength;
      if (need > have) this.k.mem.grow(Math.ceil((need - have) / PAGE));
      this.buf = this.k.mem.buffer;
    } else if (need > this.buf.byteLength) {
      const next = new ArrayBuffer(Math.ceil(need / PAGE) * PAGE);
      new Uint8Array(next).set(new Uint8Array(this.buf, 0, oldOk + oldCap));
      this.buf = next;
    }
    this.cap = cap;
    this.views();
    // The ok flags sit after the codes: move them up, clear the new tail.
    this.u8.copyWithin(this.okAt(), oldOk, oldOk + oldCap);
    this.u8.fill(0, this.okAt() + oldCap, this.okAt() + cap);
  }

  /** Stores the code of `v − mean` (bit set where the centred value is > 0) at `slot`. */
  set(slot: number, v: Float32Array, off: number, dim: number, mean: Float32Array): void {
    const base = (CODES_AT + slot * this.bytesPerCode) >> 2;
    this.encode(v, off, dim, mean, base);
  }

  /** Marks a slot searchable (1) or not (0). */
  setOk(slot: number, ok: boolean): void {
    this.u8[this.okAt() + slot] = ok ? 1 : 0;
  }

  private encode(v: Float32Array, off: number, dim: number, mean: Float32Array, base32: number): void {
    const words32 = this.words64 * 2;
    for (let w = 0; w < words32; w++) {
      let x = 0;
      const d0 = w * 32;
      const end = Math.min(dim, d0 + 32);
      // Branch-free (the comparison as 0/1): a branch per dimension mispredicts half the time (5× slower).
      for (let d = d0; d < end; d++) x |= +(v[off + d]! > mean[d]!) << (d - d0);
      this.u32[base32 + w] = x;
    }
  }

  /** Distances of slots [0, n) to the code of `q − mean` (a view, valid until the next call). */
  distances(q: Float32Array, mean: Float32Array, n: number): Uint16Array {
    this.scan(q, mean, n);
    return new Uint16Array(this.buf, this.distAt(), n);
  }

  private scan(q: Float32Array, mean: Float32Array, n: number): void {
    this.encode(q, 0, q.length, mean, QUERY_AT >> 2);
    this.u32.fill(0, HIST_AT >> 2, (HIST_AT >> 2) + HIST_LEN);
    if (this.k) {
      if (this.words64 === 4) this.k.scan4(CODES_AT, QUERY_AT, n, this.okAt(), this.distAt(), HIST_AT);
      else this.k.scan(CODES_AT, QUERY_AT, this.words64, n, this.okAt(), this.distAt(), HIST_AT);
      return;
    }
    const u32 = this.u32, u16 = this.u16, u8 = this.u8;
    const words32 = this.words64 * 2;
    const q0 = QUERY_AT >> 2, h0 = HIST_AT >> 2, o0 = this.distAt() >> 1, ok0 = this.okAt();
    let p = CODES_AT >> 2;
    for (let i = 0; i < n; i++) {
      let dist = 0;
      for (let w = 0; w < words32; w++) dist += popcnt32(u32[p + w]! ^ u32[q0 + w]!);
      p += words32;
      u16[o0 + i] = dist;
      if (u8[ok0 + i]) u32[h0 + dist]!++;
    }
  }

  /**
   * The searchable slots among [0, n) whose codes are nearest to `q − mean`: every slot up to
   * the smallest distance that reaches `want` of them (ties included). A view, valid until the
   * next call.
   */
  select(q: Float32Array, mean: Float32Array, n: number, want: number): Uint32Array {
    this.scan(q, mean, n);
    const h0 = HIST_AT >> 2;
    let cut = 0;
    for (let acc = 0; cut < HIST_LEN - 1 && acc + this.u32[h0 + cut]! < want; cut++) acc += this.u32[h0 + cut]!;
    const out = this.outAt();
    let count: number;
    if (this.k) count = this.k.collect(this.distAt(), this.okAt(), n, cut, out);
    else {
      const u16 = this.u16, u8 = this.u8, u32 = this.u32;
      const d0 = this.distAt() >> 1, ok0 = this.okAt(), o0 = out >> 2;
      count = 0;
      for (let i = 0; i < n; i++) if (u16[d0 + i]! <= cut && u8[ok0 + i]) u32[o0 + count++] = i;
    }
    return new Uint32Array(this.buf, out, count);
  }
}

/**
 * WebAssembly for the search kernels (hamming.ts, dots.ts). The project's tsconfig has no DOM
 * lib, so the few parts used are typed here. Each module is compiled once per process; a
 * kernel's caller uses its TypeScript fallback when `compileWasm` gives null: no WebAssembly,
 * a runtime that cannot compile it (no SIMD), or RAGLOOM_NO_WASM=1.
 */
export interface WasmMemory { readonly buffer: ArrayBuffer; grow(pages: number): number }

/** Bytes in a WebAssembly page. */
export const WASM_PAGE = 65536;

const WA = (globalThis as unknown as {
  WebAssembly?: {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
    Memory: new (d: { initial: number }) => WasmMemory;
  };
}).WebAssembly;

const compiled = new Map<string, object | null>();

/** The module of `base64` (compiled on first use), or null when the fallback must serve. */
export function compileWasm(base64: string): object | null {
  let m = compiled.get(base64);
  if (m === undefined) {
    m = null;
    if (process.env.RAGLOOM_NO_WASM !== '1' && WA) {
      try {
        m = new WA.Module(Buffer.from(base64, 'base64'));
      } catch {
        // Not compilable here (no SIMD): the fallback.
      }
    }
    compiled.set(base64, m);
  }
  return m;
}

/** A new instance's exports (`module` from compileWasm). */
export function instantiateWasm(module: object, imports: object = {}): Record<string, unknown> {
  return new WA!.Instance(module, imports).exports;
}

/** A new memory of `pages` pages, to import into an instance. */
export function wasmMemory(pages: number): WasmMemory {
  return new WA!.Memory({ initial: pages });
}

/**
 * A plain-JavaScript reference implementation of the distilled static models: BERT-style
 * normalisation and pre-tokenisation, greedy WordPiece, table lookup, mean pooling, L2 norm.
 * Used to check the ONNX path (test/embed) and during distillation; not a provider.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromHalf, readInitializers } from './onnx-writer.js';

export class StaticReference {
  readonly dim: number;
  private readonly vocab: Map<string, number>;
  private readonly table: Float32Array;

  constructor(dir: string) {
    const tok = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
    this.vocab = new Map(Object.entries(tok.model.vocab));
    const inits = readInitializers(readFileSync(join(dir, 'onnx', 'model.onnx')));
    const q = inits.get('embeddings_q');
    const bytes = (u: Uint8Array) => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength);
    if (q) {
      const [v, d] = q.dims as [number, number];
      this.dim = d;
      const qs = new Int8Array(bytes(q.raw));
      const sc = new Float32Array(bytes(inits.get('embeddings_scale')!.raw));
      this.table = new Float32Array(v * d);
      for (let i = 0; i < v * d; i++) this.table[i] = qs[i]! * sc[Math.floor(i / d)]!;
    } else {
      const init = inits.get('embeddings')!;
      this.dim = init.dims[1]!;
      const half = new Uint16Array(bytes(init.raw));
      this.table = new Float32Array(half.length);
      for (let i = 0; i < half.length; i++) this.table[i] = fromHalf(half[i]!);
    }
  }

  tokenize(text: string): string[] {
    const norm = text.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();
    const words = norm.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu) ?? [];
    const out: string[] = [];
    for (const w of words) {
      const chars = [...w];
      let start = 0;
      const sub: string[] = [];
      while (start < chars.length) {
        let end = chars.length;
        let cur: string | null = null;
        while (start < end) {
          const s = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
          if (this.vocab.has(s)) { cur = s; break; }
          end--;
        }
        if (cur === null) { sub.length = 0; sub.push('[UNK]'); break; }
        sub.push(cur);
        start = end;
      }
      out.push(...sub);
    }
    return out;
  }

  embed(text: string): Float32Array {
    const v = new Float32Array(this.dim);
    const toks = this.tokenize(text);
    for (const t of toks) {
      const id = this.vocab.get(t)!;
      for (let k = 0; k < this.dim; k++) v[k]! += this.table[id * this.dim + k]!;
    }
    let s = 0;
    for (let k = 0; k < this.dim; k++) s += v[k]! * v[k]!;
    if (s > 0) for (let k = 0; k < this.dim; k++) v[k]! /= Math.sqrt(s);
    return v;
  }
}

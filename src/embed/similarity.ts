/** Cosine similarity of two vectors of one length; 0 when either is (nearly) zero. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na < 1e-24 || nb < 1e-24 ? 0 : dot / Math.sqrt(na * nb);
}

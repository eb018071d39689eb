/** Small dense linear algebra for the distillation: covariance and symmetric eigen-decomposition. */

/** Column means and the covariance matrix (d × d, row-major Float64Array) of n row vectors. */
export function covariance(rows: Float32Array[], d: number): { mean: Float64Array; cov: Float64Array } {
  const n = rows.length;
  const mean = new Float64Array(d);
  for (const r of rows) for (let j = 0; j < d; j++) mean[j]! += r[j]!;
  for (let j = 0; j < d; j++) mean[j]! /= n;
  const cov = new Float64Array(d * d);
  const c = new Float64Array(d);
  for (const r of rows) {
    for (let j = 0; j < d; j++) c[j] = r[j]! - mean[j]!;
    for (let i = 0; i < d; i++) {
      const ci = c[i]!;
      if (ci === 0) continue;
      const off = i * d;
      for (let j = i; j < d; j++) cov[off + j]! += ci * c[j]!;
    }
  }
  for (let i = 0; i < d; i++) {
    for (let j = i; j < d; j++) {
      const v = cov[i * d + j]! / Math.max(1, n - 1);
      cov[i * d + j] = v;
      cov[j * d + i] = v;
    }
  }
  return { mean, cov };
}

/**
 * Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations.
 * Returns eigenvalues in descending order and the matching eigenvectors as rows.
 */
export function symmetricEigen(a0: Float64Array, d: number, maxSweeps = 50): { values: Float64Array; vectors: Float64Array[] } {
  const a = Float64Array.from(a0);
  const v = new Float64Array(d * d);
  for (let i = 0; i < d; i++) v[i * d + i] = 1;
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let off = 0;
    for (let p = 0; p < d; p++) for (let q = p + 1; q < d; q++) off += a[p * d + q]! ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < d; p++) {
      for (let q = p + 1; q < d; q++) {
        const apq = a[p * d + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const app = a[p * d + p]!;
        const aqq = a[q * d + q]!;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < d; k++) {
          const akp = a[k * d + p]!;
          const akq = a[k * d + q]!;
          a[k * d + p] = c * akp - s * akq;
          a[k * d + q] = s * akp + c * akq;
        }
        for (let k = 0; k < d; k++) {
          const apk = a[p * d + k]!;
          const aqk = a[q * d + k]!;
          a[p * d + k] = c * apk - s * aqk;
          a[q * d + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < d; k++) {
          const vkp = v[k * d + p]!;
          const vkq = v[k * d + q]!;
          v[k * d + p] = c * vkp - s * vkq;
          v[k * d + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: d }, (_, i) => i).sort((i, j) => a[j * d + j]! - a[i * d + i]!);
  const values = Float64Array.from(order.map((i) => a[i * d + i]!));
  const vectors = order.map((i) => {
    const e = new Float64Array(d);
    for (let k = 0; k < d; k++) e[k] = v[k * d + i]!;
    return e;
  });
  return { values, vectors };
}

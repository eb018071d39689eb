/**
 * Pairwise logistic regression (RankNet with a linear scorer) for the built-in answer model's
 * sentence scorer: within each question, every sentence that holds the fact should score above
 * every one that does not. Pure and deterministic (Newton's method, fixed order of sums), so that
 * train.ts and the test that checks the shipped weights compute the same numbers.
 *
 * Loss: the mean over questions of each question's mean pairwise log-loss, plus
 * λ/2 · ‖w − w₀‖² on standardised features, w₀ the hand-weighted model (weight 1 on `logHand`):
 * a large λ gives back the hand weights, a small one trusts the data.
 */

/** One question's candidates the model may quote: features (SENTENCE_FEATURES order) and whether each holds the fact. */
export interface TrainingQuestion {
  id: string;
  x: number[][];
  y: boolean[];
}

export interface Fit {
  /** Raw-scale weights (what the model multiplies the features by). */
  weights: number[];
  /** Pairs used, questions with at least one pair. */
  pairs: number;
  questions: number;
  iterations: number;
}

/** Weights rounded as shipped (6 significant digits), so that a re-fit compares equal. */
export const roundWeight = (w: number): number => Number(w.toPrecision(6));

/** Which loss: every (holds, does not) pair of a question (RankNet), or the softmax of the question's candidates (ListNet, top one). */
export type Loss = 'pairwise' | 'softmax';

/**
 * Fits the weights. `prior` is w₀ on the raw scale (e.g. 1 for `logHand`, 0 elsewhere);
 * features are standardised by their standard deviation over the training candidates.
 * `softmax`: each question's loss is the mean over its fact-holding sentences of −log of their
 * softmax share among its candidates (convex; what the top of the ranking needs).
 */
export function fitPairwise(train: TrainingQuestion[], prior: number[], lambda: number, loss: Loss = 'pairwise', maxIter = 50): Fit {
  const d = prior.length;
  // Standard deviation of each feature over every candidate (features that never vary keep scale 1).
  const mean = new Array<number>(d).fill(0);
  const sq = new Array<number>(d).fill(0);
  let n = 0;
  for (const q of train) for (const x of q.x) { n++; for (let i = 0; i < d; i++) mean[i]! += x[i]!; }
  for (let i = 0; i < d; i++) mean[i] = n ? mean[i]! / n : 0;
  for (const q of train) for (const x of q.x) for (let i = 0; i < d; i++) sq[i]! += (x[i]! - mean[i]!) ** 2;
  const sd = sq.map((s) => (n > 1 && s / (n - 1) > 1e-12 ? Math.sqrt(s / (n - 1)) : 1));
  const std = (x: number[]) => Float64Array.from(x, (v, i) => v / sd[i]!);
  const used = train.filter((q) => q.y.some(Boolean) && q.y.some((y) => !y));

  // Pair differences on the standardised scale, each question's pairs weighted 1/(its pairs · questions).
  const diffs: Array<{ v: Float64Array; wt: number }> = [];
  const lists: Array<{ xs: Float64Array[]; pos: boolean[]; wt: number }> = [];
  let pairs = 0;
  for (const q of used) {
    const pos = q.x.filter((_, i) => q.y[i]);
    const neg = q.x.filter((_, i) => !q.y[i]);
    pairs += pos.length * neg.length;
    if (loss === 'softmax') {
      lists.push({ xs: q.x.map(std), pos: [...q.y], wt: 1 / used.length });
      continue;
    }
    const wt = 1 / (pos.length * neg.length * used.length);
    for (const p of pos) for (const m of neg) {
      const v = new Float64Array(d);
      for (let i = 0; i < d; i++) v[i] = (p[i]! - m[i]!) / sd[i]!;
      diffs.push({ v, wt });
    }
  }
  const w0 = prior.map((p, i) => p * sd[i]!);
  const w = [...w0];
  const zOf = (u: number[], v: Float64Array) => {
    let m = 0;
    for (let i = 0; i < d; i++) m += u[i]! * v[i]!;
    return m;
  };
  const objective = (u: number[]): number => {
    let l = 0;
    for (const { v, wt } of diffs) {
      const m = zOf(u, v);
      l += wt * (m > 0 ? Math.log1p(Math.exp(-m)) : -m + Math.log1p(Math.exp(m)));
    }
    for (const { xs, pos, wt } of lists) {
      const z = xs.map((x) => zOf(u, x));
      const top = Math.max(...z);
      const lse = top + Math.log(z.reduce((s, v) => s + Math.exp(v - top), 0));
      let k = 0;
      let sp = 0;
      for (const [j, p] of pos.entries()) if (p) { k++; sp += z[j]!; }
      l += wt * (lse - sp / k);
    }
    let r = 0;
    for (let i = 0; i < d; i++) r += (u[i]! - w0[i]!) ** 2;
    return l + (lambda / 2) * r;
  };
  let it = 0;
  let f = objective(w);
  for (; it < maxIter; it++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    const addOuter = (c: number, v: ArrayLike<number>, u: ArrayLike<number>) => {
      for (let i = 0; i < d; i++) {
        const cv = c * v[i]!;
        const row = h[i]!;
        for (let j = 0; j <= i; j++) row[j]! += cv * u[j]!;
      }
    };
    for (const { v, wt } of diffs) {
      const s = 1 / (1 + Math.exp(zOf(w, v))); // σ(−m)
      for (let i = 0; i < d; i++) g[i]! -= wt * s * v[i]!;
      addOuter(wt * s * (1 - s), v, v);
    }
    for (const { xs, pos, wt } of lists) {
      // Gradient: E_p[x] − mean of the positives' x; Hessian: the covariance of x under p.
      const z = xs.map((x) => zOf(w, x));
      const top = Math.max(...z);
      const e = z.map((v) => Math.exp(v - top));
      const sum = e.reduce((a, b) => a + b, 0);
      const mu = new Float64Array(d);
      const mp = new Float64Array(d);
      const k = pos.filter(Boolean).length;
      for (const [j, x] of xs.entries()) {
        const p = e[j]! / sum;
        for (let i = 0; i < d; i++) {
          mu[i]! += p * x[i]!;
          if (pos[j]) mp[i]! += x[i]! / k;
        }
        addOuter(wt * p, x, x);
      }
      for (let i = 0; i < d; i++) g[i]! += wt * (mu[i]! - mp[i]!);
      addOuter(-wt, mu, mu);
    }
    for (let i = 0; i < d; i++) {
      g[i]! += lambda * (w[i]! - w0[i]!);
      h[i]![i]! += lambda + 1e-9;
      for (let j = 0; j < i; j++) h[j]![i] = h[i]![j]!;
    }
    const step = solve(h, g);
    // Backtracking: Newton's step, halved until the objective falls.
    let t = 1;
    let next = w.map((x, i) => x - t * step[i]!);
    let fn = objective(next);
    while (fn > f && t > 1e-6) {
      t /= 2;
      next = w.map((x, i) => x - t * step[i]!);
      fn = objective(next);
    }
    if (fn > f) break;
    const moved = Math.max(...step.map((s) => Math.abs(s * t)));
    for (let i = 0; i < d; i++) w[i] = next[i]!;
    const done = f - fn < 1e-12 || moved < 1e-9;
    f = fn;
    if (done) { it++; break; }
  }
  return { weights: w.map((x, i) => roundWeight(x / sd[i]!)), pairs, questions: used.length, iterations: it };
}

/** Solves A·x = b for a symmetric positive definite A (Cholesky). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const l = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i]![j]!;
      for (let k = 0; k < j; k++) s -= l[i]![k]! * l[j]![k]!;
      l[i]![j] = i === j ? Math.sqrt(Math.max(s, 1e-15)) : s / l[j]![j]!;
    }
  }
  const y = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[i]![k]! * y[k]!;
    y[i] = s / l[i]![i]!;
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k]![i]! * x[k]!;
    x[i] = s / l[i]![i]!;
  }
  return x;
}

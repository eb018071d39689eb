/**
 * Token counting with OpenAI's cl100k_base, the encoding RAGFlow uses for `chunk_token_num`,
 * `token_count` and every other token budget (`common/token_utils.num_tokens_from_string`).
 *
 * Counting is our own byte-pair merge over js-tiktoken's bundled ranks (nothing downloads):
 * js-tiktoken's `encode` merges with quadratic string joins, which is fine for a sentence but not
 * for a 1 MB document or a long unbroken run. Counts equal `encode(text).length`; the tests check
 * that on mixed English, CJK, code and whitespace.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

interface Ranks {
  /** Token bytes as a latin1 string (one char per byte) → rank. */
  rank: Map<string, number>;
  pattern: RegExp;
  special: RegExp;
}

let ranks: Ranks | undefined;
let encoder: Tiktoken | undefined;

function loadRanks(): Ranks {
  if (ranks) return ranks;
  const rank = new Map<string, number>();
  for (const line of cl100k.bpe_ranks.split('\n')) {
    if (!line) continue;
    const parts = line.split(' ');
    const offset = Number.parseInt(parts[1]!, 10);
    for (let i = 2; i < parts.length; i++) {
      rank.set(Buffer.from(parts[i]!, 'base64').toString('latin1'), offset + i - 2);
    }
  }
  const special = Object.keys(cl100k.special_tokens)
    .map((s) => s.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&'))
    .join('|');
  ranks = { rank, pattern: new RegExp(cl100k.pat_str, 'gu'), special: new RegExp(special) };
  return ranks;
}

/** The cl100k_base encoder (built once, on first use). */
export function cl100kEncoder(): Tiktoken {
  encoder ??= new Tiktoken(cl100k);
  return encoder;
}

// Pieces repeat a lot (words, indentation, punctuation); the cache makes counting a long text
// mostly map lookups. Bounded so a huge unique corpus cannot grow it without limit.
const pieceCache = new Map<string, number>();
const PIECE_CACHE_MAX = 200_000;

/**
 * Number of BPE tokens for one pre-tokenised piece given as latin1 bytes. Merges the
 * lowest-ranked adjacent pair first (leftmost on ties), as tiktoken does, using a heap so a long
 * piece costs O(n log n) rather than O(n²).
 */
function bpeMerge(bytes: string, rank: Map<string, number>): { parts: number; end: Int32Array } {
  const n = bytes.length;
  // Parts are linked by start offset: end[s] is the end of the part starting at s.
  const end = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    end[i] = i + 1;
    prev[i] = i - 1;
    alive[i] = 1;
  }
  // Heap of candidate merges [rank, left start, right start, right end].
  const heap: number[][] = [];
  const less = (a: number[], b: number[]) => a[0]! < b[0]! || (a[0] === b[0] && a[1]! < b[1]!);
  const push = (e: number[]) => {
    heap.push(e);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const pop = (): number[] => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  const consider = (left: number) => {
    const right = end[left]!;
    if (right >= n) return;
    const r = rank.get(bytes.slice(left, end[right]!));
    if (r !== undefined) push([r, left, right, end[right]!]);
  };
  for (let i = 0; i < n - 1; i++) consider(i);
  let parts = n;
  while (heap.length) {
    const [, left, right, rightEnd] = pop() as [number, number, number, number];
    // Stale when either side has merged since the entry was pushed.
    if (!alive[left] || !alive[right] || end[left] !== right || end[right] !== rightEnd) continue;
    end[left] = rightEnd;
    alive[right] = 0;
    if (rightEnd < n) prev[rightEnd] = left;
    parts--;
    if (prev[left]! >= 0) consider(prev[left]!);
    consider(left);
  }
  return { parts, end };
}

function bpeCount(bytes: string, rank: Map<string, number>): number {
  if (bytes.length <= 1) return bytes.length;
  if (rank.has(bytes)) return 1;
  return bpeMerge(bytes, rank).parts;
}

function countPiece(piece: string, r: Ranks): number {
  let c = pieceCache.get(piece);
  if (c !== undefined) return c;
  c = bpeCount(Buffer.from(piece, 'utf8').toString('latin1'), r.rank);
  if (pieceCache.size >= PIECE_CACHE_MAX) pieceCache.clear();
  pieceCache.set(piece, c);
  return c;
}

/**
 * cl100k_base token count of `text`, exactly as RAGFlow's `num_tokens_from_string`: tiktoken's
 * `encode` refuses text holding a special-token string such as `<|endoftext|>`, and RAGFlow
 * catches that and counts **0** — kept here so token budgets and `token_count` agree with it.
 *
 * @example countTokens('hello world') // 2
 */
export function countTokens(text: string): number {
  if (!text) return 0;
  const r = loadRanks();
  if (text.includes('<|') && r.special.test(text)) return 0;
  let total = 0;
  r.pattern.lastIndex = 0;
  for (const m of text.matchAll(r.pattern)) total += countPiece(m[0], r);
  return total;
}

/**
 * The first `n` tokens of `text` decoded back to a string (RAGFlow's `truncate`); a token cut
 * inside a multi-byte character decodes to U+FFFD, as tiktoken's decode does.
 */
export function truncateTokens(text: string, n: number): string {
  if (n <= 0 || !text) return '';
  const r = loadRanks();
  let used = 0;
  r.pattern.lastIndex = 0;
  for (const m of text.matchAll(r.pattern)) {
    const c = countPiece(m[0], r);
    if (used + c <= n) {
      used += c;
      continue;
    }
    // The piece straddles the limit: keep its first (n - used) BPE parts.
    const bytes = Buffer.from(m[0], 'utf8').toString('latin1');
    const { end } = bpeMerge(bytes, r.rank);
    let cut = 0;
    for (let k = 0; k < n - used; k++) cut = end[cut]!;
    const head = Buffer.from(bytes.slice(0, cut), 'latin1').toString('utf8');
    return text.slice(0, m.index) + head;
  }
  return text;
}

/**
 * RAGFlow's text merging, rewritten: TxtParser's delimiter split, `naive_merge` (with overlap and
 * backtick custom delimiters), the Markdown merge and the parent/child split. Each piece's tokens
 * are counted once and added up, as RAGFlow does, so a chunk's running count is a sum of piece
 * counts (which is also what keeps a 1 MB text linear).
 */
import { countTokens } from '../../text/index.js';
import type { Position } from '../types.js';
import { alternation, parseDelimiter } from './config.js';

/** A unit of text handed to a merge, with the layout positions it came from (PDF). */
export interface Section {
  text: string;
  positions?: Position[];
}

export interface MergedChunk {
  text: string;
  positions: Position[];
  /**
   * The heading a chunk's text stands under when the chunk does not start with it (a long section
   * goes on in a second chunk): indexed and embedded with the chunk, not part of its content.
   */
  heading?: string;
}

const posKey = (p: Position) => p.join(',');

/** Code-point slice from `start` to the end (Python slices code points, JS strings UTF-16 units). */
function tailFrom(text: string, fraction: number): string {
  const cps = Array.from(text);
  return cps.slice(Math.floor(cps.length * fraction)).join('');
}

/**
 * RAGFlow's TxtParser: split on every delimiter (backtick strings and each other character, the
 * delimiters kept in the text), then append pieces while the current chunk's summed tokens are
 * ≤ `limit`; once a chunk exceeds it, the next piece starts a new one — chunks overshoot.
 */
export function txtSplit(text: string, limit: number, delimiter: string): string[] {
  const spec = parseDelimiter(delimiter);
  const re = alternation(spec.all);
  const pieces = re ? text.split(new RegExp(`(${re.source})`, 'u')) : [text];
  const cks = [''];
  const tks = [0];
  for (const piece of pieces) {
    const n = countTokens(piece);
    if (tks[tks.length - 1]! > limit) {
      cks.push(piece);
      tks.push(n);
    } else {
      cks[cks.length - 1] += piece;
      tks[tks.length - 1] += n;
    }
  }
  return cks;
}

/**
 * RAGFlow's `naive_merge`. Each section is prefixed with "\n" and appended to the current chunk
 * while that chunk's tokens are ≤ limit·(100−p)/100; past that a new chunk starts, prefixed with
 * the last p% of the previous chunk's characters. Positions join a chunk only from sections of
 * 8 tokens or more, as RAGFlow's position tags do. With backtick custom delimiters every piece
 * between them is its own chunk and `limit` is ignored. Blank chunks are dropped.
 */
export function naiveMerge(sections: Section[], limit: number, delimiter: string, overlap = 0): MergedChunk[] {
  const spec = parseDelimiter(delimiter);
  if (spec.custom.length) return customSplit(sections, spec.custom);

  const cks: { text: string; tokens: number; positions: Position[]; keys: Set<string> }[] = [];
  const threshold = (limit * (100 - overlap)) / 100;
  for (const sec of sections) {
    const t = `\n${sec.text}`;
    const n = countTokens(t);
    const pos = n < 8 ? [] : (sec.positions ?? []);
    const cur = cks[cks.length - 1];
    if (!cur || cur.text === '' || cur.tokens > threshold) {
      const prefix = cur && overlap > 0 ? tailFrom(cur.text, (100 - overlap) / 100) : '';
      cks.push({ text: prefix + t, tokens: n, positions: [], keys: new Set() });
    } else {
      cur.text += t;
      cur.tokens += n;
    }
    const target = cks[cks.length - 1]!;
    for (const p of pos) {
      const k = posKey(p);
      if (!target.keys.has(k)) {
        target.keys.add(k);
        target.positions.push(p);
      }
    }
  }
  return cks.filter((c) => c.text.trim() !== '').map((c) => ({ text: c.text, positions: c.positions }));
}

function customSplit(sections: Section[], custom: string[]): MergedChunk[] {
  const re = new RegExp(`(?:${alternation(custom)!.source})`, 'u');
  const out: MergedChunk[] = [];
  for (const sec of sections) {
    for (const piece of sec.text.split(re)) {
      const text = `\n${piece}`;
      if (!piece.trim()) continue;
      out.push({ text, positions: countTokens(text) < 8 ? [] : [...(sec.positions ?? [])] });
    }
  }
  return out;
}

/**
 * RAGFlow's Markdown merge: sections (joined by "\n") accumulate while the summed tokens stay
 * ≤ limit; the next chunk starts with the last p% of the previous chunk's characters.
 */
export function markdownMerge(sections: Section[], limit: number, overlap = 0): MergedChunk[] {
  const out: MergedChunk[] = [];
  let text = '';
  let tokens = 0;
  let positions: Position[] = [];
  for (const sec of sections) {
    const n = countTokens(sec.text);
    if (text && tokens + n > limit) {
      out.push({ text, positions });
      let tail = '';
      if (overlap > 0) {
        const cps = Array.from(text);
        const len = Math.trunc((cps.length * overlap) / 100);
        if (len > 0) tail = cps.slice(cps.length - len).join('');
      }
      text = tail;
      tokens = countTokens(tail);
      positions = [];
    }
    text = text ? `${text}\n${sec.text}` : sec.text;
    tokens += n;
    positions.push(...(sec.positions ?? []));
  }
  if (text) out.push({ text, positions });
  return out.filter((c) => c.text.trim() !== '');
}

/**
 * Children of a parent chunk (RAGFlow `split_with_pattern`): split on the children delimiters,
 * each child keeping the delimiter that ended it. Whitespace-only children are dropped.
 */
export function splitChildren(text: string, childDelimiter: string): string[] {
  const spec = parseDelimiter(childDelimiter);
  const re = alternation(spec.all);
  if (!re) return [text];
  const parts = text.split(new RegExp(`(${re.source})`, 'u'));
  const out: string[] = [];
  for (let j = 0; j < parts.length; j += 2) {
    let t = parts[j]!;
    if (!t) continue;
    if (j + 1 < parts.length) t += parts[j + 1]!;
    if (t.trim()) out.push(t);
  }
  return out;
}

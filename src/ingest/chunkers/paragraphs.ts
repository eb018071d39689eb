/**
 * Chunks of text as people wrote it (`naive` with the default delimiter): hard-wrapped lines are
 * joined into paragraphs, paragraphs are packed into chunks of at most `chunk_token_num` tokens,
 * and a chunk ends at a paragraph end — or, for a paragraph longer than the budget, at a sentence
 * end. Headings and lines that introduce what follows ("… as follows:") stay with their body, a
 * list item is a unit, and code, grammar and table lines are never cut in half. Paragraphs are
 * separated by a blank line in the chunk, the lines of a list or of a block laid out by hand by a
 * line break. A paragraph that a page or column break cut in two (the first half without closing
 * punctuation, the second starting in lower case) is joined again.
 */
import { countTokens, splitProse, typicalLineWidth, units, type Unit } from '../../text/index.js';
import type { Block, Position } from '../types.js';
import { blockPositions, markdownText } from './common.js';
import type { MergedChunk } from './merge.js';

type AtomKind = Unit['kind'] | 'heading' | 'item';

/** A piece the packer places whole: a paragraph, a heading, a list item, a block of lines, or a part of one. */
interface Atom {
  text: string;
  kind: AtomKind;
  tokens: number;
  /** Atoms of one paragraph or list share a group; a new group starts after a blank line. */
  group: number;
  /** Kept with what follows: a heading, a title line, a line that introduces a list. */
  sticky: boolean;
  /** A piece of a paragraph cut at sentence ends: joins the piece before it with a space. */
  continues?: boolean;
  /** A repeat of the previous chunk's last sentences (overlapped_percent). */
  lap?: boolean;
  positions: Position[];
}

export interface ParagraphOptions {
  /** Token budget of a chunk (chunk_token_num). */
  limit: number;
  /** overlapped_percent: a chunk starts with the previous chunk's last paragraphs or sentences, up to this share of the budget. */
  overlap: number;
  /** Headings and code keep their Markdown markup. */
  markdown: boolean;
  /** Blocks carry layout positions (PDF): a chunk keeps those of its blocks of 8 tokens or more. */
  positions: boolean;
}

const TERMINAL = /[.!?…。！？；;]["'”’»)\]]*(?:\[[^\]\s]{1,12}\])*$/;
/** Whether text ends a sentence (only its end is read: a regex anchored at `$` would scan a long paragraph from the start). */
const endsSentence = (s: string) => TERMINAL.test(s.slice(-48));
/** A line that cannot end a sentence: it ends with a comma or a word that needs another after it. */
const CONTINUES = /(?:,|\b(?:the|of|and|or|to|a|an|in|for|with|by|on|at|from|as|that|which|is|are|was|were|be|its|their|this|than)$)$/i;
/** Characters beyond which a text is not counted whole (cl100k averages about 4 characters a token). */
const LONG = 200_000;
const FENCE = /^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n?\1\s*$/;

/** Separator between two atoms in one chunk. */
function separator(prev: Atom, next: Atom): string {
  if (next.continues) return ' ';
  if (prev.kind === 'heading') return '\n';
  if (prev.group !== next.group) return prev.kind === 'item' && next.kind === 'item' ? '\n' : '\n\n';
  // Prose split at a line that ended a sentence reads on; any other break stays a line break.
  return prev.kind === 'prose' && next.kind === 'prose' && endsSentence(prev.text) ? ' ' : '\n';
}

/** Whether an atom introduces what follows and should not end a chunk. */
function isSticky(kind: AtomKind, text: string): boolean {
  if (kind === 'heading') return true;
  const t = text.trim();
  if (/[:：]$/.test(t) && t.length < 300) return true;
  return kind === 'line' && t.length < 100 && !endsSentence(t) && !/[,;]$/.test(t);
}

/** Cuts `text` into pieces of at most `limit` tokens at spaces (a sentence or line longer than the budget). */
function cutWords(text: string, limit: number): string[] {
  const words = text.split(/(?<=\s)/);
  const out: string[] = [];
  let cur = '';
  for (const w of words) {
    if (cur && countTokens(cur + w) > limit) {
      out.push(cur.trimEnd());
      cur = '';
    }
    cur += w;
  }
  if (cur.trim()) out.push(cur.trimEnd());
  return out;
}

/**
 * Groups consecutive pieces into parts of at most `limit` tokens, joined by `sep`, with their
 * token counts: the sum of the pieces' counts (and one per separator) bounds a part's, so it is
 * counted exactly only near the limit.
 */
function group(pieces: string[], limit: number, sep: string): Array<{ text: string; tokens: number }> {
  const out: Array<{ text: string; tokens: number }> = [];
  let cur = '';
  let tokens = 0;
  for (const piece of pieces) {
    const count = countTokens(piece);
    for (const p of count > limit ? cutWords(piece, limit) : [piece]) {
      const n = p === piece ? count : countTokens(p);
      if (!cur) {
        cur = p;
        tokens = n;
        continue;
      }
      const joined = `${cur}${sep}${p}`;
      const est = tokens + 1 + n;
      const exact = est > limit ? countTokens(joined) : est;
      if (exact > limit) {
        out.push({ text: cur, tokens });
        cur = p;
        tokens = n;
      } else {
        cur = joined;
        tokens = exact;
      }
    }
  }
  if (cur) out.push({ text: cur, tokens });
  return out;
}

/** An atom longer than the budget as parts of at most `limit` tokens: prose at sentence ends, the rest at line ends. */
function splitAtom(a: Atom, limit: number): Atom[] {
  let parts: Array<{ text: string; tokens: number }>;
  if (a.kind === 'prose') parts = group(splitProse(a.text), limit, ' ');
  else {
    const fence = FENCE.exec(a.text);
    if (fence) {
      // Code keeps its fence in every part.
      const wrap = (s: string) => `${fence[1]}\n${s}\n${fence[1]}`;
      parts = [];
      let cur: string[] = [];
      const push = () => {
        const text = wrap(cur.join('\n'));
        parts.push({ text, tokens: countTokens(text) });
      };
      for (const line of fence[2]!.split('\n').flatMap((l) => (countTokens(wrap(l)) > limit ? cutWords(l, Math.max(1, limit - countTokens(wrap('')))) : [l]))) {
        if (cur.length && countTokens(wrap([...cur, line].join('\n'))) > limit) {
          push();
          cur = [];
        }
        cur.push(line);
      }
      if (cur.length) push();
    } else parts = group(a.text.split('\n'), limit, '\n');
  }
  return parts.map((p, i) => ({ ...a, text: p.text, tokens: p.tokens, sticky: false, continues: a.kind === 'prose' && i > 0 }));
}

/** The blocks' text as atoms, in reading order. */
function atomsOf(blocks: Block[], o: ParagraphOptions): Atom[] {
  const atoms: Atom[] = [];
  // A paragraph grows by pieces, joined once at the end: re-reading the end of a string built by
  // `+=` flattens it each time (quadratic on a long paragraph).
  const pieces: string[][] = [];
  const typical = typicalLineWidth(blocks.filter((b) => b.kind === 'text').map((b) => b.text).join('\n'));
  let g = 0;
  const add = (text: string, kind: AtomKind, grp: number, positions: Position[]) => {
    const t = kind === 'pre' || kind === 'heading' ? text.replace(/\s+$/, '') : text.trim();
    if (!t.trim()) return;
    const prev = atoms[atoms.length - 1];
    const parts = pieces[pieces.length - 1];
    const end = parts ? parts[parts.length - 1]!.slice(-48) : '';
    const extend = (sep: string) => {
      parts!.push(sep ? sep + t : t);
      for (const p of positions) if (!prev!.positions.some((q) => q.join() === p.join())) prev!.positions.push(p);
      prev!.sticky = false;
    };
    if (prev && prev.kind === 'prose' && kind === 'prose') {
      // Lines of one paragraph that happen to end at a sentence end: still one paragraph.
      if (prev.group === grp && TERMINAL.test(end)) return extend(' ');
      // A paragraph cut by a page or column break: the first half has no closing punctuation, and the second
      // starts in lower case, or the first ends inside a word ("Soekarno-") or after a word that needs one.
      if (prev.group !== grp && !TERMINAL.test(end) && !/[:：]$/.test(end) &&
        (/^\p{Ll}/u.test(t) || (/^[\p{L}\p{N}]/u.test(t) && (/\p{L}[-–]$/u.test(end) || CONTINUES.test(end))))) {
        return extend(/\p{L}[-–]$/u.test(end) ? '' : ' ');
      }
    }
    atoms.push({ text: '', kind, tokens: 0, group: grp, sticky: isSticky(kind, t), positions: [...positions] });
    pieces.push([t]);
  };
  for (const b of blocks) {
    if (!b.text.trim()) continue;
    const positions = o.positions && countTokens(b.text) >= 8 ? blockPositions(b) : [];
    if (b.kind === 'heading' || b.kind === 'title') add(o.markdown ? markdownText(b) : b.text, 'heading', g++, positions);
    else if (b.kind === 'code') add(o.markdown ? markdownText(b) : b.text, 'pre', g++, positions);
    else if (b.kind === 'list') add(b.text, 'item', g++, positions);
    else {
      let last = -1;
      for (const u of units(b.text, { asWritten: true, typicalWidth: typical })) {
        add(u.text, u.kind, g + u.block, positions);
        last = u.block;
      }
      g += last + 1;
    }
  }
  atoms.forEach((a, i) => {
    a.text = pieces[i]!.join('');
    // A text this long is over any budget it could be packed into: its parts are counted instead.
    a.tokens = a.text.length > LONG ? Infinity : countTokens(a.text);
  });
  return atoms;
}

/** The chunks of the blocks' text (tables and pictures are not handed here). */
export function paragraphChunks(blocks: Block[], o: ParagraphOptions): MergedChunk[] {
  const limit = Math.max(1, o.limit);
  // With overlap, a chunk is the previous chunk's end (at most overlap% of the budget) plus new text (the rest).
  const room = o.overlap > 0 ? Math.floor((limit * o.overlap) / 100) : 0;
  const budget = Math.max(1, limit - room);
  const atoms = atomsOf(blocks, o).flatMap((a) => (a.tokens > budget ? splitAtom(a, budget) : [a]));
  const out: MergedChunk[] = [];
  const cost = (list: Atom[]) => list.reduce((n, a, i) => n + a.tokens + (i > 0 ? 1 : 0), 0);
  // The heading each atom stands under (the last one before it), for chunks that go on under a heading.
  const under = new Map<Atom, string>();
  let heading = '';
  for (const a of atoms) {
    if (a.kind === 'heading') heading = a.text.replace(/^#{1,6}\s+/, '').trim();
    else if (heading) under.set(a, heading);
  }
  const emit = (list: Atom[]) => {
    if (!list.length) return;
    const first = list[0]!;
    // A chunk that starts with the previous chunk's last sentences (overlapped_percent) stands where its new text starts.
    const start = list.find((a) => !a.lap) ?? first;
    const context = start.kind === 'heading' ? '' : under.get(start) ?? '';
    let text = first.text;
    for (let i = 1; i < list.length; i++) text += separator(list[i - 1]!, list[i]!) + list[i]!.text;
    const positions: Position[] = [];
    const seen = new Set<string>();
    for (const p of list.flatMap((a) => a.positions)) {
      if (!seen.has(p.join())) {
        seen.add(p.join());
        positions.push(p);
      }
    }
    out.push(context ? { text, positions, heading: context } : { text, positions });
  };
  /**
   * overlapped_percent: the last sentences of `done` (whole paragraphs where they fit), at most
   * overlap% of its tokens (RAGFlow repeats that share of the previous chunk's characters).
   */
  const lapOf = (done: Atom[]): Atom[] => {
    const lap: Atom[] = [];
    const most = Math.min(room, Math.ceil((cost(done) * o.overlap) / 100));
    for (let i = done.length - 1; i >= 0; i--) {
      const piece = done[i]!;
      const parts = piece.kind === 'prose' ? splitProse(piece.text) : [piece.text];
      let j = parts.length;
      while (j > 0 && cost(lap) + (lap.length ? 1 : 0) + countTokens(parts.slice(j - 1).join(' ')) <= most) j--;
      if (j === parts.length) break;
      const text = parts.slice(j).join(' ');
      lap.unshift({ ...piece, text, tokens: countTokens(text), positions: [], sticky: false, continues: false, lap: true });
      if (j > 0) break;
    }
    return lap;
  };
  let cur: Atom[] = [];
  let fresh = 0; // tokens of the new text in `cur` (the overlap aside)
  let lapped = 0; // atoms of `cur` that repeat the previous chunk
  for (const a of atoms) {
    if (cur.length > lapped && fresh + 1 + a.tokens > budget) {
      // Headings and introductions move on with the text they introduce.
      const carry: Atom[] = [];
      while (cur.length > lapped + 1 && cur[cur.length - 1]!.sticky && cur.slice(lapped).some((x) => !x.sticky)) carry.unshift(cur.pop()!);
      emit(cur);
      const lap = room > 0 && !carry.length ? lapOf(cur) : [];
      cur = [...lap, ...carry];
      lapped = lap.length;
      fresh = cost(carry);
      if (carry.length && fresh + 1 + a.tokens > budget) {
        emit(cur); // a heading too long to share the budget with its first paragraph
        cur = [];
        fresh = 0;
      }
    }
    fresh += (cur.length > lapped ? 1 : 0) + a.tokens;
    cur.push(a);
  }
  if (cur.length > lapped) emit(cur);
  return out;
}

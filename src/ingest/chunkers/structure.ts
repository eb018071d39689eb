/**
 * Heading and numbering structure, after RAGFlow's `rag/nlp/__init__.py`: BULLET_PATTERN,
 * bullets_category, title_frequency, hierarchical_merge, tree_merge (its `Node`) and
 * remove_contents_table. These work on section indices so callers can carry PDF positions along.
 */
import { countTokens } from '../../text/index.js';
import type { ChunkDraft, ParsedDocument, Position } from '../types.js';
import { blockPositions, isRunning, markdownText } from './common.js';

/** A section as the structure helpers see it: text plus a layout label ("title", "heading", "text"…). */
export interface LayoutSection {
  text: string;
  layout: string;
  positions: Position[];
}

const CN = '零一二三四五六七八九十百';
// Python `re.match` anchors at the start only; `{,2}` is `{0,2}`.
const rx = (s: string) => new RegExp(`^(?:${s})`);

/** RAGFlow's numbering families, each listed from the top level down. */
export const BULLET_PATTERN: RegExp[][] = [
  [`第[${CN}0-9]+(分?编|部分)`, `第[${CN}0-9]+章`, `第[${CN}0-9]+节`, `第[${CN}0-9]+条`, `[\\(（][${CN}]+[\\)）]`].map(rx),
  [
    '第[0-9]+章',
    '第[0-9]+节',
    '[0-9]{0,2}[\\. 、]',
    '[0-9]{0,2}\\.[0-9]{0,2}[^a-zA-Z/%~-]',
    '[0-9]{0,2}\\.[0-9]{0,2}\\.[0-9]{0,2}',
    '[0-9]{0,2}\\.[0-9]{0,2}\\.[0-9]{0,2}\\.[0-9]{0,2}',
  ].map(rx),
  [`第[${CN}0-9]+章`, `第[${CN}0-9]+节`, `[${CN}]+[ 、]`, `[\\(（][${CN}]+[\\)）]`, '[\\(（][0-9]{0,2}[\\)）]'].map(rx),
  ['PART (ONE|TWO|THREE|FOUR|FIVE|SIX|SEVEN|EIGHT|NINE|TEN)', 'Chapter (I+V?|VI*|XI|IX|X)', 'Section [0-9]+', 'Article [0-9]+'].map(rx),
  ['#[^#]', '##[^#]', '###.*', '####.*', '#####.*', '######.*'].map(rx),
];

const NOT_BULLET = ['0', '[0-9]+ +[0-9~个只-]', '[0-9]+\\.{2,}', '[0-9]+(\\.[0-9]+){2,}[的中]'].map(rx);

/** Lines that look numbered but are not (a bare 0, "3 个", "1...", "1.2.3的"). */
export const notBullet = (line: string) => NOT_BULLET.some((r) => r.test(line));

/** Text too long or too sentence-like to be a title (an article number always may be one). */
export function notTitle(txt: string): boolean {
  if (new RegExp(`^第[${CN}0-9]+条`).test(txt)) return false;
  const words = txt.split(/\s+/).filter(Boolean);
  if (words.length > 12 || (!txt.includes(' ') && [...txt].length >= 32)) return true;
  return /[,;，。；！!]/.test(txt);
}

const HEADISH = /(title|head)/;

/** Which numbering family the sections use most (index into BULLET_PATTERN), or -1. */
export function bulletsCategory(texts: string[]): number {
  const hits = BULLET_PATTERN.map(() => 0);
  BULLET_PATTERN.forEach((family, i) => {
    for (const raw of texts) {
      const sec = raw.trim();
      for (const p of family) {
        if (p.test(sec) && !notBullet(sec)) {
          hits[i]!++;
          break;
        }
      }
    }
  });
  let best = -1;
  let max = 0;
  hits.forEach((h, i) => {
    if (h > max) {
      best = i;
      max = h;
    }
  });
  return best;
}

/** RAGFlow indexes BULLET_PATTERN[-1] (the Markdown family) when no family was found. */
const family = (bull: number) => BULLET_PATTERN.at(bull)!;

/**
 * Level of every section (numbering pattern index, `size` for a heading-like layout, `size+1`
 * for body) and the most frequent heading level, the pivot papers and manuals split on.
 */
export function titleFrequency(bull: number, sections: LayoutSection[]): { mostLevel: number; levels: number[] } {
  const size = family(bull).length;
  const levels = sections.map(() => size + 1);
  if (!sections.length || bull < 0) return { mostLevel: size + 1, levels };
  sections.forEach((s, i) => {
    const j = family(bull).findIndex((p) => p.test(s.text.trim()));
    if (j >= 0 && !notBullet(s.text)) levels[i] = j;
    else if (HEADISH.test(s.layout) && !notTitle(s.text)) levels[i] = size;
  });
  // Counter order: by count, then first appearance.
  const counts = new Map<number, number>();
  for (const l of levels) counts.set(l, (counts.get(l) ?? 0) + 1);
  let mostLevel = size + 1;
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  for (const [level] of sorted) {
    if (level <= size) {
      mostLevel = level;
      break;
    }
  }
  return { mostLevel, levels };
}

/** Section ids that change at each pivot-or-higher heading (paper/manual grouping). */
export function sectionIds(levels: number[], mostLevel: number): number[] {
  let sid = 0;
  return levels.map((l, i) => {
    if (l <= mostLevel && i > 0 && l !== levels[i - 1]) sid++;
    return sid;
  });
}

const usable = (s: LayoutSection) => {
  const t = s.text.trim();
  return t !== '' && [...t].length > 1 && !/^[0-9]+$/.test(t);
};

/**
 * RAGFlow `hierarchical_merge` (book): each section at the `depth` lowest levels is chunked with
 * the nearest preceding section of every higher level (its heading path); lone sections are
 * then packed together while under 218 tokens. Returns groups of indices into `sections`.
 */
export function hierarchicalMerge(bull: number, sections: LayoutSection[], depth: number): number[][] {
  if (!sections.length || bull < 0) return [];
  const keep = sections.map((s, i) => ({ s, i })).filter(({ s }) => usable(s));
  const size = family(bull).length;
  let levels: number[][] = Array.from({ length: size + 2 }, () => []);
  keep.forEach(({ s }, k) => {
    const j = family(bull).findIndex((p) => p.test(s.text.trim()));
    if (j >= 0) levels[j]!.push(k);
    else if (HEADISH.test(s.layout) && !notTitle(s.text)) levels[size]!.push(k);
    else levels[size + 1]!.push(k);
  });
  // Index of the largest element below target (-1 if none).
  const below = (arr: number[], target: number): number => {
    if (!arr.length || target < arr[0]!) return -1;
    if (target > arr[arr.length - 1]!) return arr.length - 1;
    let s = 0;
    let e = arr.length;
    while (e - s > 1) {
      const m = (e + s) >> 1;
      if (target > arr[m]!) s = m;
      else e = m;
    }
    return s;
  };
  const cks: number[][] = [];
  const read = new Array<boolean>(keep.length).fill(false);
  levels = levels.reverse();
  levels.slice(0, depth).forEach((arr, i) => {
    for (const j of arr) {
      if (read[j]) continue;
      read[j] = true;
      const ck = [j];
      cks.push(ck);
      if (i + 1 === levels.length - 1) continue;
      for (let ii = i + 1; ii < levels.length; ii++) {
        const jj = below(levels[ii]!, j);
        if (jj < 0) continue;
        if (levels[ii]![jj]! > ck[ck.length - 1]!) ck.pop();
        ck.push(levels[ii]![jj]!);
      }
      for (const x of ck) read[x] = true;
    }
  });
  if (!cks.length) return [];
  const res: number[][] = [[]];
  const num = [0];
  for (const ck of cks) {
    const ordered = [...ck].reverse().map((k) => keep[k]!.i);
    if (ordered.length === 1) {
      const n = countTokens(sections[ordered[0]!]!.text);
      if (n + num[num.length - 1]! < 218) {
        res[res.length - 1]!.push(ordered[0]!);
        num[num.length - 1]! += n;
        continue;
      }
      res.push(ordered);
      num.push(n);
      continue;
    }
    res.push(ordered);
    num.push(218);
  }
  return res.filter((g) => g.length);
}

interface TreeNode {
  level: number;
  texts: number[];
  children: TreeNode[];
}

/**
 * RAGFlow's `Node.build_tree` + `get_tree`: headings down to `depth` open nodes; anything deeper
 * is body text of the current node. Each body, and each heading without children, becomes one
 * chunk prefixed by its heading path. `lines` are [level, item] pairs; returns item groups.
 */
export function buildTree(lines: [number, number][], depth: number): number[][] {
  const root: TreeNode = { level: 0, texts: [], children: [] };
  const stack = [root];
  for (const [level, item] of lines) {
    if (depth !== -1 && level > depth) {
      stack[stack.length - 1]!.texts.push(item);
      continue;
    }
    while (stack.length > 1 && level <= stack[stack.length - 1]!.level) stack.pop();
    const node: TreeNode = { level, texts: [item], children: [] };
    stack[stack.length - 1]!.children.push(node);
    stack.push(node);
  }
  const out: number[][] = [];
  const dfs = (node: TreeNode, titles: number[]) => {
    const { level, texts, children } = node;
    if (level === 0 && texts.length) out.push([...titles, ...texts]);
    const path = level >= 1 && level <= depth ? [...titles, ...texts] : titles;
    if (level > depth && texts.length) out.push([...path, ...texts]);
    else if (!children.length && level >= 1 && level <= depth) out.push(path);
    for (const c of children) dfs(c, path);
  };
  dfs(root, []);
  return out.filter((g) => g.length);
}

/**
 * RAGFlow `tree_merge` (laws): numbering level `i+1`, heading-like layout `size+1`, body `size+2`;
 * the tree is cut at the `depth`-th level present. Returns groups of indices into `sections`.
 */
export function treeMerge(bull: number, sections: LayoutSection[], depth: number): number[][] {
  if (!sections.length || bull < 0) return sections.map((_, i) => [i]);
  const size = family(bull).length;
  const lines: [number, number][] = [];
  const levelSet = new Set<number>();
  sections.forEach((s, i) => {
    if (!usable(s)) return;
    const text = s.text.replace(/\u3000/g, ' ').trim();
    if (!text.replace(/^\n+|\n+$/g, '')) return;
    const j = family(bull).findIndex((p) => p.test(text));
    const level = j >= 0 && !notBullet(text) ? j + 1 : HEADISH.test(s.layout) && !notTitle(text) ? size + 1 : size + 2;
    lines.push([level, i]);
    levelSet.add(level);
  });
  if (!lines.length) return [];
  const sorted = [...levelSet].sort((a, b) => a - b);
  let target = depth <= sorted.length ? sorted[depth - 1]! : sorted[sorted.length - 1]!;
  if (target === size + 2) target = sorted.length > 1 ? sorted[sorted.length - 2]! : sorted[0]!;
  return buildTree(lines, target);
}

/** RAGFlow `is_english`: more than 80% of the texts are plain ASCII prose. */
export function isEnglish(texts: string[]): boolean {
  const xs = texts.filter((t) => t.trim());
  if (!xs.length) return false;
  const eng = xs.filter((t) => /^[`a-zA-Z0-9\s.,':;/"?<>!()-]+$/.test(t.trim())).length;
  return eng / xs.length > 0.8;
}

/**
 * RAGFlow `remove_contents_table`: drops a "contents"/"目录" heading and the table of contents
 * after it, up to the line where the first entry's prefix appears again (within 128 lines).
 * The heading test is case-sensitive, as RAGFlow's is.
 */
export function removeContentsTable(sections: LayoutSection[], eng: boolean): LayoutSection[] {
  const secs = [...sections];
  const get = (i: number) => secs[i]!.text.trim();
  const prefixOf = (i: number) => (eng ? get(i).split(/\s+/).filter(Boolean).slice(0, 2).join(' ') : [...get(i)].slice(0, 3).join(''));
  let i = 0;
  while (i < secs.length) {
    if (!/^(contents|目录|目次|table of contents|致谢|acknowledge)$/.test(get(i).replace(/( | |\u3000)+/g, ''))) {
      i++;
      continue;
    }
    secs.splice(i, 1);
    if (i >= secs.length) break;
    let prefix = prefixOf(i);
    while (!prefix) {
      secs.splice(i, 1);
      if (i >= secs.length) break;
      prefix = prefixOf(i);
    }
    secs.splice(i, 1);
    if (i >= secs.length || !prefix) break;
    for (let j = i; j < Math.min(i + 128, secs.length); j++) {
      if (!get(j).startsWith(prefix)) continue;
      secs.splice(i, j - i);
      break;
    }
  }
  return secs;
}

/**
 * A document's content blocks as layout sections (running headers/footers, tables and images
 * excluded). Plain text is read line by line and Markdown headings keep their "#", as RAGFlow
 * reads .txt/.md files for these methods.
 */
export function layoutSections(doc: ParsedDocument): LayoutSection[] {
  const out: LayoutSection[] = [];
  for (const b of doc.blocks) {
    if (isRunning(b) || b.kind === 'table' || b.kind === 'image' || !b.text.trim()) continue;
    const positions = blockPositions(b);
    if (doc.format === 'text') {
      for (const line of b.text.split('\n')) if (line.trim()) out.push({ text: line, layout: b.kind, positions });
    } else {
      out.push({ text: doc.format === 'markdown' ? markdownText(b) : b.text, layout: b.kind, positions });
    }
  }
  return out;
}

/** Drafts from index groups: texts joined by "\n"; PDF chunks keep the union of their positions. */
export function groupDrafts(sections: LayoutSection[], groups: number[][], pdf: boolean): ChunkDraft[] {
  const out: ChunkDraft[] = [];
  for (const g of groups) {
    const content = g.map((i) => sections[i]!.text).join('\n');
    if (!content.trim()) continue;
    const d: ChunkDraft = { content };
    if (pdf) {
      const seen = new Set<string>();
      const positions = g.flatMap((i) => sections[i]!.positions).filter((p) => !seen.has(p.join(',')) && seen.add(p.join(',')));
      if (positions.length) d.positions = positions;
    }
    out.push(d);
  }
  return out;
}

/** Whether a method should read English rules: the dataset language when given, else the text. */
export function englishFor(language: string | undefined, texts: string[]): boolean {
  if (language) return language.trim().toLowerCase() === 'english';
  return isEnglish(texts.slice(0, 200));
}

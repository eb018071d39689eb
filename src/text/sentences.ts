/**
 * Sentences and paragraphs of text as people wrote it. The chunkers use `units` (asWritten) to cut
 * documents at paragraph and sentence ends; the extractive model uses `splitSentences` to turn a
 * passage (a retrieved chunk, in whatever shape the parsers left it) into the units an answer can
 * quote.
 *
 * - Prose: hard-wrapped lines (PDF columns, RFC text) are joined back into paragraphs, then split
 *   after `.`, `!`, `?`, `…` when the next sentence starts with something other than a lower-case
 *   letter, unless the period ends an abbreviation ("e.g.", "Dr.", "U.S.", initials); decimals
 *   ("3.5") never split, as no space follows their period. CJK text splits after `。！？`.
 * - Line-based text stays line by line: list items (markdown bullets, "1.", "a)", "•"), headings,
 *   short title lines followed by a capitalised line, table rows.
 * - Lines aligned by hand (grammars, fixed-width tables: a run of 3+ spaces between words) and
 *   fenced code stay lines, with the lines indented under them; table borders and comment-box
 *   frames are dropped.
 * - Tables: HTML `<table>` and markdown tables become one row per unit; with a header row each
 *   cell is labelled `header: value`. RAGFlow's table chunks (`key：value; key：value; …`) are
 *   kept as records, with their fields, so a long record can be shown by its relevant fields.
 * - Very long sentences are cut (at `;`, then `,`, then a space) into pieces of at most `maxChars`.
 */

export type SentenceKind = 'prose' | 'line' | 'row' | 'record';

export interface Sentence {
  /** The text as it reads (whitespace collapsed). */
  text: string;
  /** How the sentence is laid out: prose sentences run on, the other kinds stand on their own line. */
  kind: SentenceKind;
  /** The paragraph / line it came from (sentences of one unit are consecutive). */
  unit: number;
  /** `key: value` fields of a record or a labelled table row. */
  fields?: string[];
}

export interface SplitOptions {
  /** Longest sentence kept whole, in characters. @default 480 */
  maxChars?: number;
}

/** Words whose trailing period does not end a sentence (lower-cased, without the final dot). */
const ABBREVIATIONS = new Set(
  `mr mrs ms mx dr prof sr jr st mt ft vs etc e.g i.e cf viz al approx ca inc ltd co corp llc plc bros dept est
  no nos fig figs vol vols p pp ch chap sec secs art para ed eds rev repr trans op esp min max misc
  jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
  gen gov sen rep hon col lt sgt capt cmdr adm maj pres supt ave blvd rd ste hwy apt fed bankr stat supp
  u.s u.k u.n e.u a.m p.m ph.d m.d b.a m.a b.sc m.sc d.c n.y l.a u.s.a u.s.c c.f.r`.split(/\s+/),
);

const CLOSERS = `"'”’»)\\]}`;
/** A list item, heading, quote or table line: always starts a new unit. */
const ITEM_START = /^(?:[-*+•▪◦‣·]\s+|o\s{2,}|\d{1,3}[.)]\s+|\d+(?:\.\d+)+\.?\s+|\(?[a-zA-Z][.)]\s+|\([ivxlc\d]+\)\s+|#{1,6}\s|>\s?|\||\p{Lu}[\p{L}\p{N}_/-]*(?: [\p{L}\p{N}_/-]+){0,2}:\s+\S)/u;
/** A line that ends a sentence or introduces what follows; a colon inside quotes ("Resent-Date:") does neither. */
const TERMINAL = new RegExp(`(?:[.!?…。！？][${CLOSERS}]*(?:\\[[^\\]\\s]{1,12}\\])*|[:;：；])$`);
const CONNECTOR_END = /(?:[,(\-–—/&]|\b(?:the|of|and|or|to|a|an|in|for|with|by|on|at|from|as|that|which|is|are|was|were|be|its|their|this)$)$/i;
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const CJK_ALL = new RegExp(CJK.source, 'g');
/** Dotted leaders of a table of contents ("Introduction . . . . 12"). */
export const TOC_LINE = /(?:\.\s?){4,}\s*[\divxlcIVXLC]*\s*$|\.{5,}|…{2,}/;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ndash: '–', mdash: '—', hellip: '…', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const n = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Labelled rows of one table: `header: value; …` when there is a header row, else `a | b | c`. */
function tableRows(rows: Array<{ cells: string[]; header: boolean }>): Array<{ text: string; fields?: string[] }> {
  const out: Array<{ text: string; fields?: string[] }> = [];
  let header: string[] | null = null;
  for (const [i, r] of rows.entries()) {
    const cells = r.cells.map(squash);
    if (!cells.some(Boolean)) continue;
    if (i === 0 && r.header && rows.length > 1) {
      header = cells;
      // A header row is a row too (it may be the only place a value is written).
      out.push({ text: dedupe(cells).join(' | ') });
      continue;
    }
    if (header) {
      const fields: string[] = [];
      for (const [j, c] of cells.entries()) {
        if (!c) continue;
        const h = header[j] ?? '';
        const f = h && h !== c ? `${h}: ${c}` : c;
        if (!fields.includes(f)) fields.push(f);
      }
      if (fields.length) out.push({ text: fields.join('; '), fields });
    } else out.push({ text: dedupe(cells).join(' | ') });
  }
  return out;
}

function dedupe(cells: string[]): string[] {
  const out: string[] = [];
  for (const c of cells) if (c && out[out.length - 1] !== c) out.push(c);
  return out;
}

const TABLE_MARK = '\u0000T';

/** HTML to lines: tables become one marked line per row, block tags become line breaks. */
function fromHtml(text: string, tables: Array<Array<{ text: string; fields?: string[] }>>): string {
  let s = text.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<!--[\s\S]*?-->/g, ' ');
  s = s.replace(/<table\b[\s\S]*?<\/table\s*>/gi, (t) => {
    const rows: Array<{ cells: string[]; header: boolean }> = [];
    for (const tr of t.match(/<tr\b[\s\S]*?(?:<\/tr\s*>|(?=<tr\b)|$)/gi) ?? []) {
      const cells: string[] = [];
      let header = true;
      for (const m of tr.matchAll(/<(t[dh])\b[^>]*>([\s\S]*?)(?=<\/t[dh]\s*>|<t[dh]\b|<\/tr|$)/gi)) {
        if (m[1]!.toLowerCase() === 'td') header = false;
        cells.push(decodeEntities(m[2]!.replace(/<[^>]+>/g, ' ')));
      }
      if (cells.length) rows.push({ cells, header });
    }
    tables.push(tableRows(rows));
    return `\n${TABLE_MARK}${tables.length - 1}\n`;
  });
  s = s.replace(/<br\s*\/?>/gi, '\n').replace(/<\/?(p|div|li|ul|ol|h[1-6]|section|article|header|footer|blockquote|pre|tr|dt|dd)\b[^>]*>/gi, '\n');
  return decodeEntities(s.replace(/<[^>]+>/g, ' '));
}

/** Markdown table lines (`| a | b |`) to rows; a `|---|` line after the first marks a header. */
function markdownTable(lines: string[]): Array<{ text: string; fields?: string[] }> {
  const split = (l: string) => l.trim().replace(/^\|/, '').replace(/\|$/, '').split('|');
  const sep = (l: string) => /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(l);
  const rows: Array<{ cells: string[]; header: boolean }> = [];
  const hasHeader = lines.length > 1 && sep(lines[1]!);
  for (const [i, l] of lines.entries()) {
    if (sep(l)) continue;
    rows.push({ cells: split(l), header: hasHeader && i === 0 });
  }
  return tableRows(rows);
}

/** A RAGFlow table chunk line: `key：value; key：value; …` (one or more records on the line). */
function recordFields(line: string): string[][] | null {
  const parts = line.split(/;\s+|；/).map((p) => p.trim()).filter(Boolean);
  if (parts.length < 3) return null;
  const keyed = parts.filter((p) => /^[^：:]{1,80}[：:]\s?\S/.test(p));
  // Fields with keys, or a keyed first field and plain values after it ("Sheet：a; b; c").
  if (!keyed.length || (keyed.length < parts.length * 0.5 && !/^[^：:]{1,80}[：:]\s?\S/.test(parts[0]!))) return null;
  // Several records on one line: a new record starts where the first key comes back.
  const key = (p: string) => /^([^：:]{1,80})[：:]/.exec(p)?.[1]?.trim() ?? null;
  const first = key(parts[0]!);
  const records: string[][] = [];
  let cur: string[] = [];
  for (const p of parts) {
    if (first && cur.length && key(p) === first) {
      records.push(cur);
      cur = [];
    }
    cur.push(p);
  }
  if (cur.length) records.push(cur);
  return records;
}

/** At least two capitals and no lower-case letter (tested on every line: no copies made). */
function isAllCaps(s: string): boolean {
  return !LOWER.test(s) && TWO_CAPS.test(s);
}
const LOWER = /\p{Ll}/u;
const TWO_CAPS = /\p{Lu}[^]*\p{Lu}/u;

/** A unit of a passage: a paragraph of prose, a line, a table row or record, or a block laid out by hand. */
export interface Unit {
  text: string;
  kind: SentenceKind | 'pre';
  fields?: string[];
  /** The blank-line-delimited block it came from (units of one block are consecutive). */
  block: number;
}

export interface UnitOptions {
  /**
   * Keep the text as written (chunking): tables, tab-separated rows and hand-aligned lines stay as
   * their lines (kind `pre`), records as their line, HTML is not converted. Otherwise (quoting)
   * table rows are labelled by their header and aligned lines are quoted one by one. @default false
   */
  asWritten?: boolean;
  /** Typical line width of the document (short lines before a capitalised one are titles); else this text's. */
  typicalWidth?: number;
}

/** A line aligned by hand: a run of 3+ spaces between words (grammars, fixed-width tables), or a table border. */
const LAID_OUT = /\S {3,}\S/;
const BORDER = /^[+|][-=+|: ]*[-=][-=+|: ]*$/;
/** A line of a comment box ("* text *"): the frame is not text. */
const BOXED = /^\*\s+(.*?)\s+\*$/;

const tableLine = (l: string) => l.trim().startsWith('|') || BORDER.test(l.trim());
const tabbed = (l: string) => l.includes('\t') && l.trim().split(/\t+/).length >= 3;
const aligned = (l: string) => tabbed(l) || LAID_OUT.test(l.trim());

/** The opening of a display formula: `$$`, `\[`, or `\begin{equation}` (align, gather, …). */
const MATH_OPEN = /^(\$\$|\\\[|\\begin\{([a-zA-Z]+\*?)\})/;

/** The line that closes the display formula opened on line `i` (within 60 lines), else -1. */
function formulaEnd(lines: string[], i: number, open: RegExpExecArray): number {
  const close = open[1] === '$$' ? '$$' : open[1] === '\\[' ? '\\]' : `\\end{${open[2]}}`;
  const first = lines[i]!.trim();
  if (first.slice(open[1]!.length).includes(close)) return i;
  for (let j = i + 1; j < Math.min(lines.length, i + 60); j++) if (lines[j]!.includes(close)) return j;
  return -1;
}

/** The typical width of a text's non-empty lines (their 75th percentile). */
export function typicalLineWidth(text: string): number {
  const lens = text.split('\n').map((l) => width(l.trim())).filter((n) => n > 0).sort((a, b) => a - b);
  return lens.length ? lens[Math.floor(lens.length * 0.75)]! : 0;
}

/** Lines to units: hard-wrapped prose joined, items / headings / rows / records / aligned lines on their own. */
export function units(text: string, opts: UnitOptions = {}): Unit[] {
  const asWritten = opts.asWritten === true;
  const tables: Array<Array<{ text: string; fields?: string[] }>> = [];
  let s = text.replace(/\r\n?/g, '\n').replace(/\f/g, '\n\n').replace(/\u00a0/g, ' ');
  if (!asWritten && /<(table|tr|td|p|div|br|li|span|h[1-6])\b[^>]*>/i.test(s)) s = fromHtml(s, tables);
  const lines = s.split('\n').map((l) => {
    const t = l.replace(/\s+$/, '');
    const box = BOXED.exec(t.trim());
    return box ? box[1]! : /^\*\s*\*$/.test(t.trim()) ? '' : t;
  });
  // Typical line length of wrapped prose: short lines before a capitalised line are titles.
  const typical = opts.typicalWidth ?? typicalLineWidth(lines.join('\n'));
  const out: Unit[] = [];
  let block = 0;
  let para = '';
  let paraLast = '';
  let paraKind: SentenceKind = 'prose';
  const flush = () => {
    if (para) out.push({ text: squash(para), kind: paraKind, block });
    para = '';
    paraLast = '';
  };
  /** Consecutive raw lines while `test` holds, from line i on. */
  const run = (i: number, test: (raw: string) => boolean): string[] => {
    const got: string[] = [];
    while (i + got.length < lines.length && lines[i + got.length]!.trim() && test(lines[i + got.length]!)) got.push(lines[i + got.length]!);
    return got;
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const line = raw.trim();
    if (!line) {
      flush();
      if (out.length && out[out.length - 1]!.block === block) block++;
      continue;
    }
    if (/^(`{3,}|~{3,})/.test(line)) {
      // A fenced block of code or a formula: its lines are never joined or cut.
      flush();
      const fence = /^(`{3,}|~{3,})/.exec(line)![1]!;
      let end = i + 1;
      while (end < lines.length && !lines[end]!.trim().startsWith(fence)) end++;
      const body = lines.slice(i + 1, end);
      if (asWritten) out.push({ text: lines.slice(i, Math.min(end + 1, lines.length)).join('\n'), kind: 'pre', block });
      else for (const l of body) if (l.trim()) out.push({ text: squash(l), kind: 'line', block });
      i = end;
      continue;
    }
    const math = MATH_OPEN.exec(line);
    const mathEnd = math ? formulaEnd(lines, i, math) : -1;
    if (mathEnd >= 0) {
      // A display formula ($$ … $$, \[ … \], \begin{equation} … \end{equation}): one unit, not
      // joined with the prose around it nor cut at a "." inside it.
      flush();
      const body = lines.slice(i, mathEnd + 1);
      if (asWritten) out.push({ text: body.map((l) => l.trimEnd()).join('\n'), kind: 'pre', block });
      else out.push({ text: squash(body.join(' ')), kind: 'line', block });
      i = mathEnd;
      continue;
    }
    if (line.startsWith(TABLE_MARK)) {
      flush();
      for (const r of tables[Number(line.slice(TABLE_MARK.length))] ?? []) out.push({ text: r.text, kind: r.fields ? 'record' : 'row', fields: r.fields, block });
      continue;
    }
    if ((line.startsWith('|') && line.indexOf('|', 1) > 0) || (BORDER.test(line) && i + 1 < lines.length && tableLine(lines[i + 1]!))) {
      flush();
      const rows = run(i, tableLine);
      i += rows.length - 1;
      if (asWritten) out.push({ text: rows.map((r) => r.trimEnd()).join('\n'), kind: 'pre', block });
      else for (const r of markdownTable(rows.map((x) => x.trim()).filter((x) => !BORDER.test(x) || /^\|?\s*:?-/.test(x)))) out.push({ text: r.text, kind: r.fields ? 'record' : 'row', fields: r.fields, block });
      continue;
    }
    if (/^(?:[-*_=~]\s*){3,}$/.test(line) || BORDER.test(line)) {
      flush(); // a rule
      continue;
    }
    const recs = line.length > 20 ? recordFields(line) : null;
    if (recs) {
      flush();
      if (asWritten) out.push({ text: line, kind: 'record', block });
      else for (const r of recs) out.push({ text: r.join('; '), kind: 'record', fields: r, block });
      continue;
    }
    if (aligned(raw)) {
      flush();
      // Aligned lines and the lines indented under them (a grammar rule's continuation) stay together.
      const indent = raw.length - raw.trimStart().length;
      const rows = run(i, (l) => aligned(l) || l.length - l.trimStart().length > indent + 1);
      i += rows.length - 1;
      if (asWritten) out.push({ text: rows.join('\n'), kind: 'pre', block });
      else for (const r of rows) out.push({ text: tabbed(r) ? r.trim().split(/\t+/).map(squash).filter(Boolean).join(' | ') : squash(r), kind: tabbed(r) ? 'row' : 'line', block });
      continue;
    }
    // A number at the start of a line that continues a sentence is a reference ("section\n2.2.3."), not an item.
    const item = ITEM_START.test(line) && !(/^\d/.test(line) && /[\p{Ll},]$/u.test(paraLast));
    if (para && (item || breaksAfter(paraLast, line, typical))) flush();
    if (!para) {
      para = line;
      paraKind = item ? 'line' : 'prose';
    } else if (/\p{L}[-–]$/u.test(paraLast) && /^\p{Ll}/u.test(line)) {
      para += line; // a word cut at the line end: "lower-" + "level"
    } else if (CJK.test(paraLast.slice(-1)) && CJK.test(line[0]!)) {
      para += line; // CJK lines join without a space
    } else if (/[-–]$/.test(paraLast) && /^\d/.test(line)) {
      para += line; // "737–" + "9"
    } else {
      para += ` ${line}`;
    }
    paraLast = line;
  }
  flush();
  // A unit of one short line is a title or a list entry: it stands on its own line.
  for (const u of out) if (u.kind === 'prose' && width(u.text) < Math.max(12, typical * 0.6) && !TERMINAL.test(u.text)) u.kind = 'line';
  return out;
}

/** Length with CJK characters counted twice (they carry about a word each). */
function width(s: string): number {
  return s.length + (s.match(CJK_ALL)?.length ?? 0);
}

/** Whether a new unit starts between the last line of the paragraph so far and the next line. */
function breaksAfter(prev: string, next: string, typical: number): boolean {
  if (TERMINAL.test(prev)) return true;
  if (TOC_LINE.test(prev) || TOC_LINE.test(next)) return true;
  const capsPrev = isAllCaps(prev);
  const capsNext = isAllCaps(next);
  // A line in capitals (a heading) after prose, or prose after one; a lone word in capitals ("WSP.") is prose.
  const words = (s: string) => s.split(/\s+/).length;
  if (capsPrev !== capsNext && (capsPrev ? prev.length < 120 && words(prev) > 1 : next.length < 120 && words(next) > 1)) return true;
  // A short line followed by a capitalised one: a title, a name, a list without markers.
  const short = width(prev) < Math.max(12, typical * 0.6);
  return short && /^[\p{Lu}\p{N}"“'‘(\[]/u.test(next) && !CONNECTOR_END.test(prev);
}

/** Sentence boundaries inside one unit of prose. */
export function splitProse(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  const re = new RegExp(`([.!?…]+|[。！？]+)[${CLOSERS}]*(?:\\[[^\\]\\s]{1,12}\\])*(\\s+|(?=[^\\s]))|\\s+[•▪]\\s+`, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const end = m.index + m[0].length;
    if (m[0].trim() === '•' || m[0].trim() === '▪') {
      // An inline bullet: the bullet starts the next piece.
      push(out, text.slice(start, m.index));
      start = m.index + m[0].search(/[•▪]/);
      continue;
    }
    const punct = m[1]!;
    const cjk = /[。！？]/.test(punct);
    if (!cjk && !m[2]) continue; // "3.5", "e.g.x": no space after the period
    if (!cjk) {
      const rest = text.slice(end, end + 8);
      if (!rest) continue;
      const nextCh = rest.replace(/^["'“‘(\[]+/, '')[0] ?? '';
      if (/\p{Ll}/u.test(nextCh)) continue;
      if (punct === '.') {
        // The number or letter of a list item or section ("6. Disclaimer", "b. The …") is not a sentence.
        if (/^(?:\d{1,3}(?:\.\d{1,3})*|[a-zA-Z]|[ivxlcIVXLC]{1,5})$/.test(text.slice(start, m.index).trim())) continue;
        const before = /([\p{L}\p{N}][\p{L}\p{N}.'’-]*)$/u.exec(text.slice(Math.max(0, m.index - 24), m.index))?.[1] ?? '';
        const low = before.toLowerCase();
        if (ABBREVIATIONS.has(low)) continue;
        if (/^\p{Lu}$/u.test(before)) continue; // an initial: "J. Smith"
        if (/^(?:\p{L}\.)+\p{L}$/u.test(before)) continue; // "U.S", "e.g", "i.e"
        if (/^\d{1,2}$/.test(before) && /^\d/.test(nextCh)) continue; // "1. 2. 3." run into one line
      }
    }
    push(out, text.slice(start, end));
    start = end;
  }
  push(out, text.slice(start));
  return out;
}

function push(out: string[], s: string): void {
  const t = s.trim();
  if (!t) return;
  // A piece without two words ("$70,923,698.", "§ 345.") belongs to the sentence before it.
  const words = (t.match(/\p{L}{2,}/gu)?.length ?? 0) + (t.match(CJK_ALL)?.length ?? 0);
  if (out.length && words < 2) out[out.length - 1] += CJK.test(t[0]!) ? t : ` ${t}`;
  else out.push(t);
}

/** Cuts `s` into pieces of at most `max` characters, at `;`, then `,`, then a space. */
export function capLength(s: string, max: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = -1;
    for (const re of [/[;；]\s/g, /[,，、]\s?/g, /\s/g]) {
      let best = -1;
      for (const m of window.matchAll(re)) if (m.index! >= max * 0.4) best = m.index! + 1;
      if (best > 0) {
        cut = best;
        break;
      }
    }
    if (cut <= 0) cut = max;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}

/** The sentences of one passage, in document order. */
export function splitSentences(text: string, opts: SplitOptions = {}): Sentence[] {
  const max = Math.max(40, opts.maxChars ?? 480);
  const out: Sentence[] = [];
  if (!text) return out;
  for (const [u, unit] of units(text).entries()) {
    if (TOC_LINE.test(unit.text)) continue; // a table of contents' entry is never quoted
    if (unit.kind === 'record') {
      // Records stay whole: the model shows a long one by its relevant fields.
      out.push({ text: unit.text, kind: 'record', unit: u, fields: unit.fields });
      continue;
    }
    const kind = unit.kind === 'pre' ? 'line' : unit.kind;
    const pieces = kind === 'prose' || kind === 'line' ? splitProse(unit.text) : [unit.text];
    for (const p of pieces) {
      for (const c of capLength(p, max)) out.push({ text: c, kind, unit: u });
    }
  }
  return out;
}

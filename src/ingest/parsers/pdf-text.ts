/**
 * Text clean-up for PDF lines: spacing accents composed onto their letters, and footnotes taken
 * out of the running text. Internal to `ingest/parsers`.
 */
import type { Line } from './layout.js';

/** Spacing accents (what TeX-made PDFs draw as separate glyphs) → the combining mark they stand for. */
const SPACING: Record<string, string> = {
  '\u02C6': '\u0302', // ˆ circumflex
  '\u02DC': '\u0303', // ˜ tilde
  '\u00B8': '\u0327', // ¸ cedilla
  '\u00B4': '\u0301', // ´ acute
  '\u0060': '\u0300', // ` grave
  '\u00A8': '\u0308', // ¨ diaeresis
  '\u02DA': '\u030A', // ˚ ring
  '\u02C7': '\u030C', // ˇ caron
  '\u02D8': '\u0306', // ˘ breve
  '\u02DD': '\u030B', // ˝ double acute
  '\u02D9': '\u0307', // ˙ dot above
  '\u02DB': '\u0328', // ˛ ogonek
};
const HAS_SPACING = /[\u02C6\u02DC\u00B8\u00B4\u0060\u00A8\u02DA\u02C7\u02D8\u02DD\u02D9\u02DB]/;
/** ´ and ` double as apostrophe and quote marks, so they are composed only in clear cases. */
const AMBIGUOUS = new Set(['\u00B4', '\u0060']);
const CONTRACTION = /^(?:t|s|m|d|ll|re|ve)(?!\p{L})/u;
const LETTER = /^\p{L}$/u;

/** base + mark when that is one precomposed letter; TeX's dotless ı takes accents as i. */
function compose(base: string, mark: string): string | undefined {
  const c = ((base === '\u0131' ? 'i' : base) + mark).normalize('NFC');
  return c.length === 1 ? c : undefined;
}

/**
 * Composes spacing accents with the letter they belong to and NFC-normalises:
 * `Ageˆncia Nacional de Aviac¸a˜o` → `Agência Nacional de Aviação`. pdf.js emits the accent after
 * its base letter (the order the glyphs are drawn); an accent before a letter is taken when the
 * previous character is not a letter. Only pairs with a precomposed letter are joined, so `x^2`-like
 * uses stay; ´ and ` join only a vowel, never before a contraction (`don´t`, `I´m`) or a capital.
 */
export function composeDiacritics(s: string): string {
  if (!HAS_SPACING.test(s)) return /[\u0300-\u036f]/.test(s) ? s.normalize('NFC') : s;
  const chars = [...s];
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const mark = SPACING[ch];
    if (!mark) {
      out += ch;
      continue;
    }
    const prev = [...out].pop() ?? '';
    const next = chars[i + 1] ?? '';
    if (LETTER.test(prev)) {
      // ´ and ` also quote (`code`, ``text´´): not when the word opened with a quote mark.
      const word = out.slice(out.search(/\S*$/));
      const ok = !AMBIGUOUS.has(ch) ||
        (/^[aeiouyAEIOUY]$/.test(prev) && !CONTRACTION.test(chars.slice(i + 1, i + 4).join('')) && !/^\p{Lu}$/u.test(next) &&
          !/[`´'‘]/.test(word));
      const c = ok ? compose(prev, mark) : undefined;
      if (c) {
        out = out.slice(0, out.length - prev.length) + c;
        continue;
      }
    } else if (!AMBIGUOUS.has(ch) && LETTER.test(next)) {
      const c = compose(next, mark);
      if (c) {
        out += c;
        i++;
        continue;
      }
    }
    out += ch;
  }
  return out.normalize('NFC');
}

/** A footnote starts with its mark: a number, a symbol, or a bracketed number. */
const NOTE_MARK = /^(?:\d{1,3}(?=[\s.)]|[A-Z])|[*†‡§¶#]+|\(\d{1,3}\)|\[\d{1,3}\]|[¹²³⁰⁴-⁹]+)/;

const overlaps = (a: Line, b: Line): boolean => Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > 0;

/**
 * Splits a page's lines (stream order) into running text and footnotes. A footnote is set smaller
 * than the body (≥ 5 % smaller), lies below every body-size line of its column, and starts with a
 * note mark; lines right below a footnote, or at the top of the next column's note area, continue
 * it. `bodySize` is the document's body font size.
 */
export function splitFootnotes(lines: Line[], bodySize: number, pageHeight: number): { body: Line[]; notes: Line[] } {
  const small = (l: Line) => !l.rotated && l.size < bodySize * 0.95 && l.segs.length <= 2;
  // Body-size lines in the last few percent of the page are running footers, not text above notes.
  const blockers = lines.filter((l) => !l.rotated && l.size >= bodySize * 0.95 && l.top < pageHeight * 0.95);
  const cands = lines.filter((l) => small(l) && !blockers.some((b) => overlaps(b, l) && b.top > l.top));
  if (cands.length === 0) return { body: lines, notes: [] };
  const notes = new Set<Line>();
  let last: Line | undefined;
  for (const l of cands) {
    let isNote = NOTE_MARK.test(l.text.trim());
    if (!isNote && last && notes.has(last)) {
      const below = overlaps(l, last) && l.top >= last.top && l.top - last.bottom <= 0.8 * l.size;
      const nextColumn = !overlaps(l, last) && l.top < last.top;
      isNote = below || nextColumn;
    }
    if (isNote) notes.add(l);
    last = l;
  }
  if (notes.size === 0) return { body: lines, notes: [] };
  return { body: lines.filter((l) => !notes.has(l)), notes: lines.filter((l) => notes.has(l)) };
}

/** Whether running text ends a sentence (so what follows may start elsewhere). */
export const endsSentence = (t: string): boolean => /[.!?:;]["'”’)\]]*$/.test(t.trim());

/**
 * Footnote lines → one group per note. A note starts at a marked line that follows a finished
 * sentence, is indented, or opens another column; other lines (a note running on into the next
 * column, or a line that happens to start with a number) continue the note before.
 */
export function groupNotes(notes: Line[]): Line[][] {
  const out: Line[][] = [];
  let prev: Line | undefined;
  for (const l of notes) {
    const starts =
      !prev ||
      (NOTE_MARK.test(l.text.trim()) && (endsSentence(prev.text) || l.x0 > prev.x0 + 0.3 * l.size || !overlaps(l, prev)));
    if (starts) out.push([l]);
    else out[out.length - 1]!.push(l);
    prev = l;
  }
  return out;
}

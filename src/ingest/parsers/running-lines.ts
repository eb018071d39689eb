/**
 * Running headers and footers of paginated plain text (pages split at form feeds): the lines at
 * the top or bottom of a page whose text, digits ignored, recurs at that edge on at least 40 % of
 * ≥ 3 pages, and bare page numbers at an edge. The same rule as the PDF layout's
 * `markRunningHeaders`, applied to lines instead of positioned blocks.
 */

/** Lines examined at each edge of a page (a header may be two lines, e.g. title + date). */
const EDGE_LINES = 3;

/** A line's text with digits and spacing ignored, as running headers and footers are compared. */
export const signature = (t: string): string => t.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
const PAGE_NUMBER = /^(page\s*)?\[?\d+\]?(\s*(of|\/)\s*\d+)?$|^-\s*\d+\s*-$/i;

export interface PageEdges {
  /** Lines [0, top) are the running header (blank lines included). */
  top: number;
  /** Lines [bottom, length) are the running footer. */
  bottom: number;
}

/** Indexes of the first / last `n` non-blank lines of a page. */
function edgeIndexes(lines: string[], n: number, fromEnd: boolean): number[] {
  const out: number[] = [];
  for (let k = 0; k < lines.length && out.length < n; k++) {
    const i = fromEnd ? lines.length - 1 - k : k;
    if (lines[i]!.trim() !== '') out.push(i);
  }
  return out;
}

/** Finds each page's running header and footer; pages are arrays of lines. */
export function runningEdges(pages: string[][]): PageEdges[] {
  const counts = { top: new Map<string, Set<number>>(), bottom: new Map<string, Set<number>>() };
  pages.forEach((lines, p) => {
    for (const [edge, fromEnd] of [['top', false], ['bottom', true]] as const) {
      for (const i of edgeIndexes(lines, EDGE_LINES, fromEnd)) {
        const s = signature(lines[i]!);
        if (!counts[edge].has(s)) counts[edge].set(s, new Set());
        counts[edge].get(s)!.add(p);
      }
    }
  });
  const need = Math.max(2, Math.ceil(pages.length * 0.4));
  const running = (edge: 'top' | 'bottom', line: string): boolean =>
    (pages.length >= 2 && PAGE_NUMBER.test(line.trim())) || (pages.length >= 3 && (counts[edge].get(signature(line))?.size ?? 0) >= need);
  return pages.map((lines) => {
    // Strip from each edge inwards while lines are blank or running; stop at the first content line.
    let top = 0;
    let seen = 0;
    while (top < lines.length && seen < EDGE_LINES) {
      const l = lines[top]!;
      if (l.trim() === '') top++;
      else if (running('top', l)) {
        top++;
        seen++;
      } else break;
    }
    let bottom = lines.length;
    seen = 0;
    while (bottom > top && seen < EDGE_LINES) {
      const l = lines[bottom - 1]!;
      if (l.trim() === '') bottom--;
      else if (running('bottom', l)) {
        bottom--;
        seen++;
      } else break;
    }
    // A page left with no content was a template repeated page after page, not running lines.
    if (!lines.slice(top, bottom).some((l) => l.trim())) return { top: 0, bottom: lines.length };
    // Nothing running at an edge: keep its blank lines too.
    if (!lines.slice(0, top).some((l) => l.trim())) top = 0;
    if (!lines.slice(bottom).some((l) => l.trim())) bottom = lines.length;
    return { top, bottom };
  });
}

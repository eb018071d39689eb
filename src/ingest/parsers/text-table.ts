/**
 * Tables without ruling lines, found from how text lines up. Internal to `ingest/parsers`.
 *
 * Generators write table text in any order (row by row, right to left, column by column), so rows
 * are rebuilt from geometry: stream lines sharing a baseline are one row. Columns are the x-ranges
 * the body's cells cover. The rows above the first value row form the header; their labels are
 * merged per column (`Period` over `START` and `END` gives `Period START`, `Period END`), and
 * wrapped cells are joined back into their row.
 */
import { isNumeric } from './common.js';
import type { Line, Seg } from './layout.js';

/** A geometric row: stream lines on one baseline, cells sorted by x. */
interface Row {
  lines: Line[];
  segs: Seg[];
  top: number;
  bottom: number;
  baseline: number;
  size: number;
  /** A line of running prose (never merged with other lines). */
  prose: boolean;
}

export interface TextTable {
  /** First row is the (merged) header when `header` is true. */
  rows: string[][];
  header: boolean;
  /** The stream lines the table was built from. */
  lines: Line[];
}

const words = (s: string): number => s.trim().split(/\s+/).length;
const baselineOf = (l: Line): number => l.baseline ?? l.bottom - 0.2 * l.size;
const YEAR = /^(19|20)\d\d$/;
/** A cell that reads as a value rather than a label (numbers, amounts, dates). */
const valueLike = (s: string): boolean => isNumeric(s) || /^[-+(]?[$€£¥]?\s?\d[\d,.]*\s*%?\)?$/.test(s) || /^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$/.test(s);
/** Dot leaders that fill a cell up to the next column. */
const stripLeader = (s: string): string => s.replace(/(?:\s*\.){2,}\s*$/, '').trim();

/**
 * Lines of running prose: one long cell whose neighbour in the stream is prose starting at the same
 * x (a paragraph). These are never merged into table rows.
 */
function proseLines(lines: Line[]): Set<Line> {
  const longCell = (l: Line) => !l.rotated && l.segs.length === 1 && words(l.text) >= 5;
  const out = new Set<Line>();
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (!longCell(l)) continue;
    for (const j of [i - 1, i + 1]) {
      const m = lines[j];
      if (!m || !longCell(m)) continue;
      const d = Math.abs(baselineOf(m) - baselineOf(l));
      if (Math.abs(m.x0 - l.x0) <= l.size * 1.5 && d > 0.5 * l.size && d <= 2 * l.size) out.add(l);
    }
  }
  return out;
}

/** Clusters lines into geometric rows: same baseline, similar size, no horizontal overlap. */
function buildRows(lines: Line[]): Row[] {
  const prose = proseLines(lines);
  const sorted = lines.filter((l) => !l.rotated).sort((a, b) => baselineOf(a) - baselineOf(b));
  const rows: Row[] = [];
  const open: Row[] = [];
  for (const l of sorted) {
    const b = baselineOf(l);
    while (open.length && b - open[0]!.baseline > 0.3 * Math.max(l.size, open[0]!.size)) open.shift();
    const isProse = prose.has(l);
    const fit = isProse
      ? undefined
      : open.find(
          (r) =>
            !r.prose &&
            Math.abs(r.baseline - b) <= 0.3 * Math.min(r.size, l.size) &&
            Math.min(r.size, l.size) / Math.max(r.size, l.size) >= 0.7 &&
            r.segs.every((s) => Math.min(s.x1, l.x1) - Math.max(s.x0, l.x0) <= 1),
        );
    if (fit) {
      fit.lines.push(l);
      fit.segs.push(...l.segs);
      fit.segs.sort((p, q) => p.x0 - q.x0);
      fit.top = Math.min(fit.top, l.top);
      fit.bottom = Math.max(fit.bottom, l.bottom);
      fit.size = Math.max(fit.size, l.size);
    } else {
      const r: Row = { lines: [l], segs: [...l.segs].sort((p, q) => p.x0 - q.x0), top: l.top, bottom: l.bottom, baseline: b, size: l.size, prose: isProse };
      rows.push(r);
      open.push(r);
    }
  }
  return rows;
}

const rowX0 = (r: Row) => Math.min(...r.segs.map((s) => s.x0));
const rowX1 = (r: Row) => Math.max(...r.segs.map((s) => s.x1));
const tabular = (r: Row): boolean => !r.prose && r.segs.length >= 3 && !r.segs.every((s) => words(s.text) >= 5);

/** Maximal x-ranges (1 pt bins from `minX`) whose coverage passes `min`. */
function intervals(cov: Uint16Array, minX: number, min: number): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  for (let x = 0; x <= cov.length; x++) {
    if (x < cov.length && cov[x]! > min) {
      if (start < 0) start = x;
    } else if (start >= 0) {
      out.push([start + minX, x + minX]);
      start = -1;
    }
  }
  return out;
}

function coverage(segs: Seg[], minX: number, width: number): Uint16Array {
  const cov = new Uint16Array(width);
  for (const s of segs) {
    const a = Math.max(0, Math.floor(s.x0) - minX);
    const b = Math.min(width, Math.max(Math.floor(s.x0) + 1, Math.ceil(s.x1)) - minX);
    for (let x = a; x < b; x++) cov[x]!++;
  }
  return cov;
}

/**
 * Columns: x-ranges covered by the cells of more than a tenth of the rows; then, in the gutters
 * between them, sparse columns (mostly empty, but headed) from the cells that fit there, leaving
 * out a label that bridges two of them (a group label over its sub-columns).
 */
function findColumns(segs: Seg[], rowCount: number, sparse = true): [number, number][] {
  const minX = Math.floor(Math.min(...segs.map((s) => s.x0)));
  const maxX = Math.ceil(Math.max(...segs.map((s) => s.x1)));
  if (maxX - minX > 20000) return [];
  const width = maxX - minX + 1;
  const strong = intervals(coverage(segs, minX, width), minX, Math.max(1, Math.floor(rowCount * 0.1)));
  if (!sparse) return strong;
  const gaps: [number, number][] = [];
  let from = minX;
  for (const [a, b] of strong) {
    gaps.push([from, a]);
    from = b;
  }
  gaps.push([from, maxX + 1]);
  const cols = [...strong];
  for (const [a, b] of gaps) {
    let inside = segs.filter((s) => s.x0 >= a - 0.5 && s.x1 <= b + 0.5);
    if (!inside.length) continue;
    const cov = coverage(inside, minX, width);
    // A cell covering a point no other cell covers, with other cells on both sides, bridges columns.
    const bridging = (s: Seg): boolean => {
      let seen = false;
      let gap = false;
      for (let x = Math.max(0, Math.floor(s.x0) - minX); x < Math.min(width, Math.ceil(s.x1) - minX); x++) {
        if (cov[x]! > 1) {
          if (gap && seen) return true;
          seen = true;
        } else if (seen) gap = true;
      }
      return false;
    };
    inside = inside.filter((s) => !bridging(s));
    cols.push(...intervals(coverage(inside, minX, width), minX, 0).filter(([x, y]) => x >= a - 1 && y <= b + 1));
  }
  return cols.sort((p, q) => p[0] - q[0]);
}

/** The column a piece of text belongs to: the most overlap, else the nearest. */
function bestColumn(cols: [number, number][], x0: number, x1: number): number {
  let at = 0;
  let score = Number.NEGATIVE_INFINITY;
  cols.forEach(([a, b], i) => {
    const o = Math.min(b, x1) - Math.max(a, x0);
    if (o > score) {
      score = o;
      at = i;
    }
  });
  return at;
}

/** A row's cells placed in columns; a cell straddling columns is split back into its text items. */
function place(cols: [number, number][], r: Row): { col: number; seg: Seg }[] {
  const out: { col: number; seg: Seg }[] = [];
  for (const s of r.segs) {
    const spans = cols.filter(([a, b]) => Math.min(b, s.x1) - Math.max(a, s.x0) > 0).length;
    const pieces = spans > 1 && s.parts && s.parts.length > 1 ? s.parts : [s];
    for (const q of pieces) if (q.text.trim()) out.push({ col: bestColumn(cols, q.x0, q.x1), seg: q });
  }
  return out;
}

const joinCell = (a: string, b: string): string => {
  if (!a) return b;
  if (!b) return a;
  return /[a-z]-$/.test(a) && /^[a-z]/.test(b) ? a.slice(0, -1) + b : `${a} ${b}`;
};

/** Number of header rows at the top: labels, not values; lower rows leave the first column empty unless all above did. */
function headerDepth(placed: { col: number; seg: Seg }[][], rows: Row[]): number {
  const labels = (p: { seg: Seg }[]) => p.every(({ seg }) => !valueLike(seg.text.trim()) || YEAR.test(seg.text.trim()));
  if (!placed.length || !labels(placed[0]!)) return 0;
  let k = 1;
  let firstEmpty = !placed[0]!.some((c) => c.col === 0);
  while (k < placed.length - 1 && k < 4) {
    const p = placed[k]!;
    const gap = rows[k]!.top - rows[k - 1]!.bottom;
    const hasFirst = p.some((c) => c.col === 0);
    if (!labels(p) || gap > 1.5 * rows[k]!.size || (hasFirst && !firstEmpty)) break;
    firstEmpty &&= !hasFirst;
    k++;
  }
  return k;
}

/**
 * Header cells per column. A label spans the columns of the labels below it that lie within its
 * reach (half-way to the next label on its row), when there are two or more; otherwise it heads
 * the column it overlaps.
 */
function mergeHeader(cols: [number, number][], placed: { col: number; seg: Seg }[][]): string[] {
  const centers = cols.map(([a, b]) => (a + b) / 2);
  const pitches = centers.slice(1).map((c, i) => c - centers[i]!).sort((a, b) => a - b);
  const pitch = pitches.length ? pitches[pitches.length >> 1]! : 0;
  const mid = (q: Seg) => (q.x0 + q.x1) / 2;
  const cells = cols.map(() => '');
  placed.forEach((row, t) => {
    const below = placed.slice(t + 1).flat();
    const labels = [...row].sort((a, b) => a.seg.x0 - b.seg.x0);
    labels.forEach(({ col, seg }, i) => {
      const c = mid(seg);
      const dl = i > 0 ? c - mid(labels[i - 1]!.seg) : Infinity;
      const dr = i + 1 < labels.length ? mid(labels[i + 1]!.seg) - c : Infinity;
      const near = Math.min(dl, dr);
      const reach = Math.max((seg.x1 - seg.x0) / 2, Number.isFinite(near) ? near / 2 : 0.75 * pitch);
      const under = [...new Set(below.filter((b) => Math.abs(mid(b.seg) - c) <= reach).map((b) => b.col))];
      const targets = under.length >= 2 ? under : [col];
      for (const j of targets) cells[j] = joinCell(cells[j]!, seg.text.trim());
    });
  });
  return cells.map((s) => stripLeader(s));
}

/** Builds the grid of a run of rows, or undefined when it does not read as a table. */
function buildTable(all: Row[]): TextTable | undefined {
  const segs = all.flatMap((r) => r.segs);
  const meanLen = segs.reduce((a, s) => a + s.text.length, 0) / segs.length;
  const numeric = segs.filter((s) => valueLike(stripLeader(s.text))).length / segs.length;
  const maxSegs = Math.max(...all.map((r) => r.segs.length));
  if (meanLen > 40 || (numeric < 0.2 && maxSegs < 4)) return undefined;
  const rough = findColumns(segs, all.length);
  if (rough.length < 3) return undefined;
  const depth = headerDepth(all.map((r) => place(rough, r)), all);
  let cols = rough;
  let rows = all;
  if (depth > 0 && all.length - depth >= 2) {
    // Columns come from the body rows shared by many; a header label heads the column under it (a
    // label set off-centre over right-aligned numbers is not a column of its own) unless no such
    // column is near. Text beyond the outermost columns (a chart's labels beside the table) stays out.
    cols = findColumns(all.slice(depth).flatMap((r) => r.segs), all.length - depth, false);
    if (!cols.length) return undefined;
    const lo = cols[0]![0];
    const hi = cols[cols.length - 1]![1];
    const labels = all.slice(0, depth).flatMap((r, t) =>
      r.segs.filter((s) => !all.slice(t + 1, depth).some((u) => u.segs.some((q) => Math.min(q.x1, s.x1) - Math.max(q.x0, s.x0) > 0))),
    );
    for (const s of labels) {
      const dist = Math.min(...cols.map(([a, b]) => Math.max(a - s.x1, s.x0 - b)));
      if (dist > all[0]!.size && s.x0 >= lo && s.x1 <= hi) cols.push([s.x0, s.x1]);
    }
    cols.sort((p, q) => p[0] - q[0]);
    const pad = Math.max(...all.map((r) => r.size));
    const inside = (q: Seg) => q.x1 >= lo - pad && q.x0 <= hi + pad;
    rows = all
      .map((r) => ({ ...r, lines: r.lines.filter((l) => l.segs.some(inside)), segs: r.segs.filter(inside) }))
      .filter((r) => r.segs.length > 0);
    if (rows.length !== all.length && headerDepth(rows.map((r) => place(cols, r)), rows) !== depth) return undefined;
  }
  if (cols.length < 3) return undefined;
  const placed = rows.map((r) => place(cols, r));
  const out: string[][] = [];
  if (depth > 0) out.push(mergeHeader(cols, placed.slice(0, depth)));
  const size = Math.max(...rows.map((r) => r.size));
  const colLeft = Math.min(...placed.slice(depth).flatMap((p) => p.filter((c) => c.col === 0).map((c) => c.seg.x0)));
  let prev: { cells: string[]; filled: Set<number> } | undefined;
  for (let i = depth; i < rows.length; i++) {
    const p = placed[i]!;
    const filled = new Set(p.map((c) => c.col));
    const first = p.find((c) => c.col === 0);
    const indented = first !== undefined && first.seg.x0 > colLeft + 0.5 * size;
    // A wrapped cell: fills only some of the previous row's columns and not the first (or an
    // indented first), close below it.
    const wrapped =
      prev !== undefined &&
      (!first || indented) &&
      [...filled].every((c) => prev!.filled.has(c)) &&
      filled.size < prev.filled.size &&
      filled.size <= cols.length / 2 &&
      rows[i]!.top - rows[i - 1]!.bottom <= 0.8 * size;
    const target = wrapped ? prev!.cells : cols.map(() => '');
    for (const { col, seg } of p) target[col] = joinCell(target[col]!, seg.text.trim());
    if (!wrapped) {
      prev = { cells: target, filled };
      out.push(target);
    }
  }
  const grid = out.map((r) => r.map(stripLeader));
  if (grid.length - (depth > 0 ? 1 : 0) < 2) return undefined;
  return { rows: grid, header: depth > 0, lines: rows.flatMap((r) => r.lines) };
}

/**
 * Finds text-aligned tables among a page's lines (in stream order). Runs of rows with ≥ 3 cells
 * make a table; a few sparse rows in between or just above (sub-headers, wrapped cells) belong to it.
 */
export function findTextTables(lines: Line[]): TextTable[] {
  const rows = buildRows(lines);
  const out: TextTable[] = [];
  let i = 0;
  while (i < rows.length) {
    if (!tabular(rows[i]!)) {
      i++;
      continue;
    }
    let x0 = rowX0(rows[i]!);
    let x1 = rowX1(rows[i]!);
    const members: Row[] = [rows[i]!];
    let j = i + 1;
    let lastTabular = i;
    while (j < rows.length) {
      const r = rows[j]!;
      const prev = members[members.length - 1]!;
      const inside = rowX0(r) >= x0 - r.size && rowX1(r) <= x1 + r.size;
      if (!inside && !tabular(r)) {
        if (r.prose && (rowX1(r) < x0 || rowX0(r) > x1)) {
          j++; // prose beside the table, in another column
          continue;
        }
        break;
      }
      if (r.top - prev.bottom > 2 * Math.max(r.size, prev.size)) break;
      if (tabular(r)) lastTabular = j;
      else if (j - lastTabular > 3) break;
      members.push(r);
      x0 = Math.min(x0, rowX0(r));
      x1 = Math.max(x1, rowX1(r));
      j++;
    }
    // Sparse rows after the last full row belong only as its wrapped cells: close below, each piece
    // under a single cell of that row (not notes running under the table).
    const lastFull = members.findLastIndex(tabular);
    const ref = members[lastFull]!;
    let keep = lastFull + 1;
    while (keep < members.length) {
      const r = members[keep]!;
      const fits = r.segs.every((s) => ref.segs.filter((q) => Math.min(q.x1, s.x1) - Math.max(q.x0, s.x0) > 0).length <= 1);
      if (!fits || r.top - members[keep - 1]!.bottom > 0.8 * r.size) break;
      keep++;
    }
    members.length = keep;
    // A sparse header row just above (labels in the table's span, same type size).
    const above = rows[i - 1];
    const headRow = members[0]!;
    if (
      above && !above.prose && !tabular(above) &&
      headRow.top - above.bottom <= headRow.size &&
      Math.abs(above.size - headRow.size) <= 0.1 * headRow.size &&
      rowX0(above) >= x0 && rowX1(above) <= x1 &&
      above.segs.every((s) => words(s.text) <= 4 && !valueLike(s.text))
    ) {
      members.unshift(above);
    }
    const t = members.length >= 3 ? buildTable(members) : undefined;
    if (t) {
      out.push(t);
      i = j;
    } else i++;
  }
  return out;
}

/** Helpers that write benchmark results into docs/benchmarks.md and an SVG plot. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Replaces the `## {heading}` section of a Markdown file (up to the next `## `), or appends it;
 * other sections (other engineers' ingestion and embedding results) stay as they are.
 */
export function upsertSection(path: string, heading: string, body: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const start = text.indexOf(`\n## ${heading}\n`);
  const block = `\n## ${heading}\n\n${body.trim()}\n`;
  if (start < 0) {
    writeFileSync(path, `${text.trimEnd()}\n${block}`);
    return;
  }
  const next = text.indexOf('\n## ', start + 4);
  writeFileSync(path, text.slice(0, start) + block + (next < 0 ? '' : text.slice(next)));
}

interface Res { engine: string; size: number; queries: Record<string, { p50: number }> }

/** Grouped bar chart (log scale) of the hybrid p50 of each engine configuration, per size. */
export function svgBars(results: Res[]): string {
  const sizes = [...new Set(results.map((r) => r.size))].sort((a, b) => a - b);
  const series = new Map<string, Map<number, number>>();
  for (const r of results) {
    for (const [q, l] of Object.entries(r.queries)) {
      if (!q.startsWith('hybrid')) continue;
      const key = `${r.engine}: ${q}`;
      if (!series.has(key)) series.set(key, new Map());
      series.get(key)!.set(r.size, l.p50);
    }
  }
  const names = [...series.keys()];
  const colors = ['#1f77b4', '#aec7e8', '#17becf', '#ff7f0e', '#ffbb78', '#2ca02c', '#98df8a', '#d62728', '#9467bd', '#8c564b'];
  const W = 1040, H = 420, left = 60, bottom = 60, top = 30, legend = 360;
  const plotH = H - bottom - top;
  const max = Math.max(...results.flatMap((r) => Object.values(r.queries).map((l) => l.p50)), 1);
  const lo = 0.1, hi = 10 ** Math.ceil(Math.log10(max));
  const y = (v: number) => top + plotH - (Math.log10(Math.max(lo, v) / lo) / Math.log10(hi / lo)) * plotH;
  const groupW = (W - left - legend - 10) / sizes.length;
  const barW = Math.max(4, (groupW - 20) / Math.max(1, names.length));
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="${left}" y="18" font-size="13">Hybrid top-10 p50 latency (ms, log scale; lower is better)</text>`];
  for (let v = lo; v <= hi * 1.001; v *= 10) {
    out.push(`<line x1="${left}" x2="${W - legend - 10}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v.toFixed(0) : v}</text>`);
  }
  sizes.forEach((n, gi) => {
    const gx = left + gi * groupW + 10;
    names.forEach((name, si) => {
      const v = series.get(name)!.get(n);
      if (v === undefined) return;
      const x = gx + si * barW;
      out.push(`<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(top + plotH - y(v)).toFixed(1)}" fill="${colors[si % colors.length]}"><title>${name} @ ${n}: ${v.toFixed(2)} ms</title></rect>`);
    });
    out.push(`<text x="${gx + (names.length * barW) / 2}" y="${H - bottom + 18}" text-anchor="middle">${n.toLocaleString('en')} chunks</text>`);
  });
  names.forEach((name, si) => {
    out.push(`<rect x="${W - legend}" y="${top + si * 18}" width="12" height="12" fill="${colors[si % colors.length]}"/><text x="${W - legend + 18}" y="${top + si * 18 + 10}">${name}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

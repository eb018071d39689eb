/** Display width: East Asian wide characters take two columns. */
const width = (s: string): number => {
  let w = 0;
  for (const ch of s) w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u.test(ch) ? 2 : 1;
  return w;
};
export const padEnd = (s: string, n: number): string => s + ' '.repeat(Math.max(0, n - width(s)));

/** A plain text table: header, dashes, rows; columns two spaces apart. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => padEnd(c, widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

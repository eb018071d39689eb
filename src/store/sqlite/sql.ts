/** Small SQL helpers of the SQLite store. */

/** `n` parameter placeholders: `?,?,?`. */
export const marks = (n: number): string => Array.from({ length: n }, () => '?').join(',');

/** `a = @a, b = @b` for an UPDATE of these columns (named parameters of the same names). */
export const setList = (cols: readonly string[]): string => cols.map((c) => `${c} = @${c}`).join(', ');

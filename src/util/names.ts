/**
 * RAGFlow's duplicate_name(): `n` → `n(1)` → `n(2)`; an existing `(k)` suffix is incremented; for
 * files the counter goes before the extension (`a.txt` → `a(1).txt`).
 */
export function duplicateName(name: string, exists: (candidate: string) => boolean, isFile = false): string {
  let cur = name;
  for (let guard = 0; exists(cur) && guard < 10_000; guard++) cur = nextName(cur, isFile);
  return cur;
}

function nextName(name: string, isFile: boolean): string {
  let stem = name;
  let ext = '';
  if (isFile) {
    const dot = name.lastIndexOf('.');
    if (dot > 0) {
      stem = name.slice(0, dot);
      ext = name.slice(dot);
    }
  }
  const m = /^(.*)\((\d+)\)$/.exec(stem);
  return m ? `${m[1]}(${Number(m[2]) + 1})${ext}` : `${stem}(1)${ext}`;
}

/** The lowercase extension without the dot ("" when none). */
export function fileSuffix(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot >= 0 ? name.slice(dot + 1).toLowerCase() : '';
}

export const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

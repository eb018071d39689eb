/** Epoch milliseconds, RAGFlow's `*_time`. */
export const nowMs = (): number => Date.now();

/** `YYYY-MM-DD HH:MM:SS` local time, RAGFlow's `*_date` / chunk `create_time`. */
export function formatDateTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}


/** `s` cut to `n` characters with an ellipsis. */
export function clip(s: string, n = 200): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/**
 * The error message in an HTTP error body: OpenAI-style `{error: {message}}`, TEI / Ollama
 * `{error}`, `{message}` or FastAPI's `{detail}`; else the body itself, clipped.
 */
export function serverErrorMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const e = j.error;
    if (e && typeof e === 'object' && 'message' in e && typeof e.message === 'string') return e.message;
    if (typeof e === 'string') return e;
    if (typeof j.message === 'string') return j.message;
    if (typeof j.detail === 'string') return j.detail;
    if (j.detail !== undefined) return clip(JSON.stringify(j.detail), 500);
  } catch {
    /* not JSON */
  }
  return clip(body.replace(/\s+/g, ' ').trim(), 500) || '(empty body)';
}

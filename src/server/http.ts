/** Small HTTP helpers: a Python-like exception repr and `Content-Disposition`. */

function pyStrRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
}

/** `Name('message')`, as RAGFlow's `server_error_response` prints `repr(e)`; never a stack trace. */
export function pyExceptionRepr(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  return `${err.name || 'Error'}(${pyStrRepr(err.message)})`;
}

// RFC 7230 token characters: a filename made only of these needs no quotes (as Werkzeug writes it).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `attachment; filename=…` for a download. A non-ASCII name gets an ASCII fallback plus the
 * RFC 5987 `filename*=UTF-8''…` form (what Quart's `send_file` sends).
 */
export function contentDisposition(name: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x20-\x7e]*$/.test(name)) {
    return `attachment; filename=${TOKEN.test(name) ? name : `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`}`;
  }
  const ascii = name.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

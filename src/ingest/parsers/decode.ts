/**
 * Bytes → string for every text-based format: BOMs, UTF-16 without BOM, strict UTF-8, and
 * chardet + iconv-lite for legacy single-byte and CJK encodings.
 */
import chardet from 'chardet';
import iconv from 'iconv-lite';

export interface Decoded {
  text: string;
  /** The encoding used, e.g. "utf-8", "utf-16le", "windows-1252". */
  encoding: string;
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes `data`, honouring a declared charset when the bytes are not valid UTF-8
 * (HTML `<meta charset>`, an email part's charset). Line endings are normalised to "\n".
 */
export function decodeText(data: Uint8Array, declared?: string): Decoded {
  const d = decodeRaw(data, declared);
  return { text: d.text.replace(/\r\n?/g, '\n'), encoding: d.encoding };
}

function decodeRaw(data: Uint8Array, declared?: string): Decoded {
  const b = data;
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(b.subarray(3)), encoding: 'utf-8' };
  }
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(b.subarray(2)), encoding: 'utf-16le' };
  }
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(b.subarray(2)), encoding: 'utf-16be' };
  }
  const u16 = sniffUtf16(b);
  if (u16) return { text: new TextDecoder(u16).decode(b), encoding: u16 };
  try {
    return { text: utf8Strict.decode(b), encoding: 'utf-8' };
  } catch {
    // not UTF-8: fall through to the declared or detected legacy encoding
  }
  const declaredOk = declared && iconv.encodingExists(declared) && !/^utf-?8$/i.test(declared) ? declared : undefined;
  // Sample the head only: chardet is quadratic-ish on some inputs and the head decides the charset.
  const guess = declaredOk ?? chardet.detect(b.subarray(0, 64 * 1024)) ?? 'windows-1252';
  // ISO-8859-1 proper has no printable 0x80–0x9F; files labelled so are nearly always Windows-1252.
  const enc = /^(iso-8859-1|latin1|ascii|us-ascii)$/i.test(guess) ? 'windows-1252' : guess;
  if (iconv.encodingExists(enc) && !/^utf-?8$/i.test(enc)) {
    return { text: iconv.decode(b, enc), encoding: enc.toLowerCase() };
  }
  // chardet said UTF-8 but strict decoding failed: keep going with replacement characters.
  return { text: new TextDecoder('utf-8').decode(b), encoding: 'utf-8' };
}

/**
 * UTF-16 without a BOM: ASCII-heavy UTF-16 has a NUL in every other byte. Looks at the first
 * 4 KiB; needs NULs at ≥ 40 % of one parity and < 5 % of the other.
 */
function sniffUtf16(b: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = Math.min(b.length, 4096) & ~1;
  if (n < 4) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (b[i] === 0) even++;
    if (b[i + 1] === 0) odd++;
  }
  const pairs = n / 2;
  if (odd / pairs >= 0.4 && even / pairs < 0.05) return 'utf-16le';
  if (even / pairs >= 0.4 && odd / pairs < 0.05) return 'utf-16be';
  return undefined;
}

/** True when the bytes look like binary (NULs or many control bytes) rather than text. */
export function looksBinary(b: Uint8Array): boolean {
  const n = Math.min(b.length, 8192);
  if (n === 0) return false;
  if (sniffUtf16(b)) return false;
  if (b.length >= 2 && ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff))) return false;
  let ctrl = 0;
  for (let i = 0; i < n; i++) {
    const c = b[i]!;
    if (c === 0) return true;
    if (c < 9 || (c > 13 && c < 32)) ctrl++;
  }
  return ctrl / n > 0.1;
}

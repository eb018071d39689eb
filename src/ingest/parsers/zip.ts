/**
 * Reads a ZIP central directory without inflating anything: entry names for sniffing
 * (docx / xlsx / pptx) and the total uncompressed size for the zip-bomb guard; then inflates
 * each entry into a counter (nothing kept) to check that it does not grow past what the
 * directory announced, so a bomb that lies about its sizes is caught before any parser inflates
 * it into memory.
 */
import { createInflateRaw, inflateRawSync } from 'node:zlib';
import { fail } from './common.js';

export interface ZipEntry {
  name: string;
  compressed: number;
  uncompressed: number;
  /** Compression method: 0 stored, 8 deflate. */
  method: number;
  /** Offset of the entry's local header. */
  offset: number;
}

export const isZip = (b: Uint8Array): boolean => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;

/** OLE compound file: legacy .doc/.xls/.ppt, or an encrypted OOXML package. */
export const isOle = (b: Uint8Array): boolean =>
  b.length >= 8 && b[0] === 0xd0 && b[1] === 0xcf && b[2] === 0x11 && b[3] === 0xe0 && b[4] === 0xa1 && b[5] === 0xb1;

/** Lists entries, or returns undefined when there is no readable central directory. */
export function listZip(b: Uint8Array): ZipEntry[] | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // The end-of-central-directory record sits in the last 22 + 65535 (comment) bytes.
  let eocd = -1;
  for (let i = b.length - 22; i >= Math.max(0, b.length - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const count = dv.getUint16(eocd + 10, true);
  let p = dv.getUint32(eocd + 16, true);
  const out: ZipEntry[] = [];
  const dec = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (p + 46 > b.length || dv.getUint32(p, true) !== 0x02014b50) return undefined;
    const compressed = dv.getUint32(p + 20, true);
    const uncompressed = dv.getUint32(p + 24, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    const method = dv.getUint16(p + 10, true);
    const offset = dv.getUint32(p + 42, true);
    const name = dec.decode(b.subarray(p + 46, p + 46 + nameLen));
    out.push({ name, compressed, uncompressed, method, offset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/**
 * Rejects non-ZIP input and packages that would inflate beyond `limit` bytes, by what the central
 * directory announces and then by what each entry really inflates to (streamed into a counter,
 * stopping one chunk past the announced size). `what` names the format in messages ("DOCX").
 */
export async function guardZip(b: Uint8Array, what: string, limit: number): Promise<ZipEntry[]> {
  if (isOle(b)) fail(`${what} is encrypted (password required) or is a legacy binary Office file`);
  if (!isZip(b)) fail(`Invalid ${what}: not a ZIP package`);
  const entries = listZip(b);
  if (!entries) fail(`Invalid ${what}: damaged ZIP package (no central directory)`);
  let total = 0;
  for (const e of entries) {
    // 0xFFFFFFFF means the real size is in a ZIP64 extra field: far beyond any sane document.
    total += e.uncompressed === 0xffffffff ? Number.POSITIVE_INFINITY : e.uncompressed;
  }
  if (total > limit) {
    fail(`${what} expands to more than ${Math.round(limit / 1048576)} MiB when unzipped; refusing to parse it`);
  }
  for (const e of entries) {
    const start = e.method === 8 ? dataStart(b, e) : undefined;
    if (start === undefined) continue; // stored, or damaged: the parser reports damage
    const real = await inflatedSize(b.subarray(start, Math.min(b.length, start + e.compressed)), e.uncompressed);
    if (real > e.uncompressed) {
      fail(`${what} is a zip bomb: ${e.name} inflates to more than the ${e.uncompressed} bytes its header announces; refusing to parse it`);
    }
  }
  return entries;
}

/** Where an entry's data starts, past its local header; undefined when there is no local header. */
function dataStart(b: Uint8Array, e: ZipEntry): number | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (e.offset + 30 > b.length || dv.getUint32(e.offset, true) !== 0x04034b50) return undefined;
  return e.offset + 30 + dv.getUint16(e.offset + 26, true) + dv.getUint16(e.offset + 28, true);
}

/** Entries announcing at most this are inflated in one synchronous call (cheap per entry). */
const SMALL_ENTRY = 4 * 1024 * 1024;

/** Bytes `deflated` inflates to, counted without keeping them; stops once past `limit`. */
function inflatedSize(deflated: Uint8Array, limit: number): Promise<number> {
  if (limit <= SMALL_ENTRY) {
    // At most limit + 1 bytes are ever allocated: zlib stops at maxOutputLength.
    try {
      return Promise.resolve(inflateRawSync(deflated, { maxOutputLength: limit + 1 }).length);
    } catch (e) {
      return Promise.resolve((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? limit + 1 : 0);
    }
  }
  return new Promise((resolve) => {
    const z = createInflateRaw({ chunkSize: 256 * 1024 });
    let n = 0;
    z.on('data', (c: Buffer) => {
      n += c.length;
      if (n > limit) {
        z.destroy();
        resolve(n);
      }
    });
    z.on('end', () => resolve(n));
    z.on('error', () => resolve(n)); // damaged data: the parser's own inflater reports it
    z.end(deflated);
  });
}

/**
 * The bytes of one entry (stored or deflated), inflated with Node's zlib. Throws a plain Error
 * whose message names the damage ("damaged ZIP entry …") when the entry cannot be read.
 */
export function readZipEntry(b: Uint8Array, e: ZipEntry): Uint8Array {
  const start = dataStart(b, e);
  if (start === undefined) throw new Error(`damaged ZIP entry ${e.name}: no local header`);
  if (start + e.compressed > b.length) throw new Error(`damaged ZIP entry ${e.name}: truncated`);
  const raw = b.subarray(start, start + e.compressed);
  if (e.method === 0) return raw;
  if (e.method !== 8) throw new Error(`damaged ZIP entry ${e.name}: unsupported compression method ${e.method}`);
  try {
    // The guard already checked that no entry inflates past its announced size.
    const out = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.uncompressed) });
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch (err) {
    throw new Error(`damaged ZIP entry ${e.name}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Reads a ZIP central directory without inflating anything: entry names for sniffing
 * (docx / xlsx / pptx) and the total uncompressed size for the zip-bomb guard.
 */
import { fail } from './common.js';

export interface ZipEntry {
  name: string;
  compressed: number;
  uncompressed: number;
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
    const name = dec.decode(b.subarray(p + 46, p + 46 + nameLen));
    out.push({ name, compressed, uncompressed });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/**
 * Rejects non-ZIP input and packages that would inflate beyond `limit` bytes. `what` names the
 * format in messages ("DOCX").
 */
export function guardZip(b: Uint8Array, what: string, limit: number): ZipEntry[] {
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
  return entries;
}

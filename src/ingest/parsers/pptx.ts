/**
 * PPTX by reading the package with jszip and the slide XML with cheerio (XML mode). Slides come in
 * presentation order; on each, the title placeholder first, then shapes top-to-bottom,
 * left-to-right (document order when a shape inherits its position from the layout); tables as
 * table blocks; speaker notes last. `page` = slide number.
 */
import { load } from 'cheerio';
import JSZip from 'jszip';
import type { Block, ParsedDocument } from '../types.js';
import { checkAbort, fail, pageWanted, tableText, detectHeader, tidy, cellText } from './common.js';
import type { Ctx } from './common.js';
import type { DomNode } from './html-blocks.js';
import { guardZip } from './zip.js';

const xmlRoot = (xml: string): DomNode => load(xml, { xml: true }).root()[0] as unknown as DomNode;

const kids = (n: DomNode | undefined, name?: string): DomNode[] =>
  (n?.children ?? []).filter((c) => c.type === 'tag' && (name === undefined || c.name === name));
const kid = (n: DomNode | undefined, name: string): DomNode | undefined => kids(n, name)[0];

function descendants(n: DomNode, name: string, out: DomNode[] = []): DomNode[] {
  for (const c of n.children ?? []) {
    if (c.type !== 'tag') continue;
    if (c.name === name) out.push(c);
    else descendants(c, name, out);
  }
  return out;
}

function textOf(n: DomNode): string {
  let s = '';
  for (const c of n.children ?? []) {
    if (c.type === 'text') s += c.data ?? '';
    else s += textOf(c);
  }
  return s;
}

/** Text of a txBody: runs and fields joined, `a:br` as newline, one line per `a:p`. */
function bodyText(body: DomNode): string {
  const lines: string[] = [];
  for (const p of kids(body, 'a:p')) {
    let line = '';
    for (const r of kids(p)) {
      if (r.name === 'a:r' || r.name === 'a:fld') line += textOf(kid(r, 'a:t') ?? { type: 'tag' });
      else if (r.name === 'a:br') line += '\n';
    }
    lines.push(line);
  }
  return tidy(lines.join('\n'));
}

function tableRows(tbl: DomNode): string[][] {
  return kids(tbl, 'a:tr').map((tr) =>
    kids(tr, 'a:tc').map((tc) => {
      const body = kid(tc, 'a:txBody');
      return body ? cellText(bodyText(body)) : '';
    }),
  );
}

interface Shape {
  order: number;
  x?: number;
  y?: number;
  isTitle: boolean;
  blocks: Block[];
}

function offset(spPr: DomNode | undefined): { x?: number; y?: number } {
  const off = kid(kid(spPr, 'a:xfrm') ?? kid(spPr, 'p:xfrm'), 'a:off');
  if (!off?.attribs) return {};
  return { x: Number(off.attribs['x']), y: Number(off.attribs['y']) };
}

/** Collects shapes of a shape tree (groups flattened, in document order). */
function collectShapes(tree: DomNode, out: Shape[]): void {
  for (const n of kids(tree)) {
    if (n.name === 'p:grpSp') {
      collectShapes(n, out);
      continue;
    }
    const order = out.length;
    if (n.name === 'p:sp') {
      const ph = kid(kid(kid(n, 'p:nvSpPr'), 'p:nvPr'), 'p:ph');
      const type = ph?.attribs?.['type'] ?? '';
      const isTitle = type === 'title' || type === 'ctrTitle';
      // Slide numbers, dates and footers repeat on every slide and carry no content.
      if (type === 'sldNum' || type === 'dt' || type === 'ftr') continue;
      const body = kid(n, 'p:txBody');
      const text = body ? bodyText(body) : '';
      if (!text) continue;
      const blocks: Block[] = [isTitle ? { kind: 'heading', text: text.replace(/\n+/g, ' '), level: 1 } : { kind: 'text', text }];
      out.push({ order, isTitle, blocks, ...offset(kid(n, 'p:spPr')) });
    } else if (n.name === 'p:graphicFrame') {
      const tbl = descendants(n, 'a:tbl')[0];
      if (!tbl) continue;
      const rows = tableRows(tbl).filter((r) => r.some((c) => c !== ''));
      if (!rows.length) continue;
      const block: Block = { kind: 'table', text: tableText(rows), rows, header: detectHeader(rows) };
      out.push({ order, isTitle: false, blocks: [block], ...offset(n) });
    } else if (n.name === 'p:pic') {
      const descr = kid(kid(n, 'p:nvPicPr'), 'p:cNvPr')?.attribs?.['descr']?.trim();
      if (descr) out.push({ order, isTitle: false, blocks: [{ kind: 'image', text: descr }], ...offset(kid(n, 'p:spPr')) });
    }
  }
}

function readingOrder(shapes: Shape[]): Shape[] {
  const positioned = shapes.every((s) => s.x !== undefined && s.y !== undefined && !Number.isNaN(s.x) && !Number.isNaN(s.y));
  const rest = shapes.filter((s) => !s.isTitle);
  if (positioned) {
    // Rows of shapes: tops within ~0.25 in (228600 EMU) count as one row, then left to right.
    rest.sort((a, b) => (Math.abs(a.y! - b.y!) > 228600 ? a.y! - b.y! : a.x! - b.x!));
  }
  return [...shapes.filter((s) => s.isTitle), ...rest];
}

function resolve(base: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = base.split('/').slice(0, -1);
  for (const seg of target.split('/')) {
    if (seg === '..') parts.pop();
    else if (seg !== '.') parts.push(seg);
  }
  return parts.join('/');
}

async function rels(zip: JSZip, partPath: string): Promise<Map<string, { target: string; type: string }>> {
  const dir = partPath.split('/').slice(0, -1).join('/');
  const file = zip.file(`${dir}/_rels/${partPath.split('/').pop()}.rels`);
  const out = new Map<string, { target: string; type: string }>();
  if (!file) return out;
  for (const r of descendants(xmlRoot(await file.async('string')), 'Relationship')) {
    const a = r.attribs ?? {};
    if (a['Id'] && a['Target']) out.set(a['Id'], { target: resolve(partPath, a['Target']), type: a['Type'] ?? '' });
  }
  return out;
}

export async function parsePptx(data: Uint8Array, ctx: Ctx): Promise<ParsedDocument> {
  await guardZip(data, 'PPTX', ctx.opts.maxUnzippedBytes);
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(data);
  } catch (e) {
    fail('Invalid PPTX: damaged ZIP package', e);
  }
  const pres = zip.file('ppt/presentation.xml');
  if (!pres) fail('Invalid PPTX: no ppt/presentation.xml (is this a PowerPoint file?)');
  const presRels = await rels(zip, 'ppt/presentation.xml');
  let slidePaths = descendants(xmlRoot(await pres.async('string')), 'p:sldId')
    .map((s) => presRels.get(s.attribs?.['r:id'] ?? '')?.target)
    .filter((p): p is string => !!p && !!zip.file(p));
  if (slidePaths.length === 0) {
    // No usable slide list: fall back to the slide parts in numeric order.
    slidePaths = Object.keys(zip.files)
      .filter((f) => /^ppt\/slides\/slide\d+\.xml$/.test(f))
      .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
  }
  const blocks: Block[] = [];
  for (const [i, path] of slidePaths.entries()) {
    const page = i + 1;
    if (!pageWanted(page, ctx.opts.pages)) continue;
    checkAbort(ctx.signal);
    const root = xmlRoot(await zip.file(path)!.async('string'));
    const tree = descendants(root, 'p:spTree')[0];
    const shapes: Shape[] = [];
    if (tree) collectShapes(tree, shapes);
    for (const s of readingOrder(shapes)) for (const b of s.blocks) blocks.push({ ...b, page });
    const notesRel = [...(await rels(zip, path)).values()].find((r) => r.type.endsWith('/notesSlide'));
    const notesFile = notesRel && zip.file(notesRel.target);
    if (notesFile) {
      const notes = descendants(xmlRoot(await notesFile.async('string')), 'p:sp')
        .filter((sp) => kid(kid(kid(sp, 'p:nvSpPr'), 'p:nvPr'), 'p:ph')?.attribs?.['type'] === 'body')
        .map((sp) => {
          const body = kid(sp, 'p:txBody');
          return body ? bodyText(body) : '';
        })
        .filter(Boolean)
        .join('\n');
      if (notes) blocks.push({ kind: 'text', text: `Speaker notes: ${notes}`, page });
    }
  }
  const doc: ParsedDocument = { format: 'pptx', blocks, pages: slidePaths.length };
  const core = zip.file('docProps/core.xml');
  const title = core ? tidy(textOf(descendants(xmlRoot(await core.async('string')), 'dc:title')[0] ?? { type: 'tag' })) : '';
  const first = blocks.find((b) => b.kind === 'heading');
  if (title || first) doc.title = title || first!.text;
  return doc;
}

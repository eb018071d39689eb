/**
 * Parser defects found on real files (issue 19 item 6), each checked on a file generated here and,
 * when the shared docs corpus is present, on the real file that showed it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { PDFParse } from 'pdf-parse';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunkers/index.js';
import { parseFile } from '../../src/ingest/parsers/index.js';
import { mendSpaces } from '../../src/ingest/parsers/ocr.js';
import type { Block, ParsedDocument } from '../../src/ingest/types.js';
import { highlight } from '../../src/search/highlight.js';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';
import { join } from 'node:path';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/docs-corpus');
const HAVE = existsSync(CORPUS);
if (!HAVE) console.warn(`skipping the docs-corpus cases of parser-defects: ${CORPUS} is absent (shared material, not part of the repo)`);
const corpus = (f: string) => new Uint8Array(readFileSync(path.join(CORPUS, f)));
const enc = (s: string) => new TextEncoder().encode(s);
const chunks = (method: string, d: ParsedDocument, name: string, pc: Record<string, unknown> = {}) =>
  chunkDocument(method, d, { filename: name, parserConfig: pc }).chunks.map((c) => c.content);

/** A report-style workbook: a title line, then sections each under a label and a repeated header. */
async function reportWorkbook(): Promise<Uint8Array> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Results');
  ws.getCell('A1').value = 'Acme Corp quarterly results (EUR m)';
  ws.mergeCells('A1:C1');
  const bold = (r: number) => (ws.getRow(r).font = { bold: true });
  ws.addRow(['Segment', 'Revenue', 'Margin']);
  bold(2);
  ws.addRow(['Retail', 120, 0.12]);
  ws.addRow(['Wholesale', 80, 0.08]);
  ws.addRow([]);
  ws.addRow(['Europe']);
  ws.addRow(['Segment', 'Revenue', 'Margin']);
  bold(7);
  ws.addRow(['Online', 45, 0.2]);
  ws.addRow(['Segment', 'Revenue', 'Margin']); // a header repeated inside the section
  ws.addRow(['Stores', 60, 0.1]);
  return new Uint8Array(await wb.xlsx.writeBuffer());
}

describe('XLSX title lines, section labels and repeated headers', () => {
  it('takes the real header row under a title line, not the title', async () => {
    const d = await parseFile(await reportWorkbook(), 'report.xlsx');
    const tables = d.blocks.filter((b) => b.kind === 'table');
    expect(tables[0]).toMatchObject({ header: true, rows: [['Segment', 'Revenue', 'Margin'], ['Retail', '120', '0.12'], ['Wholesale', '80', '0.08']] });
    expect(d.blocks[0]).toMatchObject({ kind: 'heading', text: 'Acme Corp quarterly results (EUR m)', sheet: 'Results' });
    const naive = chunks('naive', d, 'report.xlsx').join('\n');
    expect(naive).toContain('Segment：Retail; Revenue：120; Margin：0.12');
    expect(naive).not.toMatch(/Acme Corp quarterly results \(EUR m\)：/);
  });

  it('does not prefix a section label to rows, and a repeated header is not a data row', async () => {
    const d = await parseFile(await reportWorkbook(), 'report.xlsx');
    const rows = d.blocks.filter((b) => b.kind === 'table').flatMap((t) => t.rows!.slice(1));
    expect(rows).not.toContainEqual(['Segment', 'Revenue', 'Margin']);
    expect(rows).toContainEqual(['Stores', '60', '0.1']);
    const lines = chunks('naive', d, 'report.xlsx').join('\n').split('\n').filter(Boolean);
    expect(lines.some((l) => /Europe：|Segment：Segment/.test(l))).toBe(false);
    // The label stays in place: after the first section's rows, before its own.
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    expect(at('Wholesale')).toBeLessThan(at('Europe'));
    expect(at('Europe')).toBeLessThan(at('Online'));
    const perRow = chunks('table', d, 'report.xlsx');
    expect(perRow).toContain('- Segment: Stores\n- Revenue: 60\n- Margin: 0.1');
    expect(perRow.some((c) => c.includes('- Segment: Segment'))).toBe(false);
  });

  it.skipIf(!HAVE)('reads the Vodafone index as three labelled tables under Topic / Period / Page', async () => {
    const d = await parseFile(corpus('vodafone-kpis.xlsx'), 'vodafone-kpis.xlsx');
    expect(d.blocks.filter((b) => b.kind === 'heading').map((b) => b.text)).toEqual(['Financial performance', 'Operational metrics', 'Other']);
    for (const t of d.blocks.filter((b) => b.kind === 'table')) {
      expect(t.header).toBe(true);
      expect(t.rows![0]!.filter(Boolean)).toEqual(['Topic', 'Period', 'Page']);
      expect(t.rows!.slice(1).some((r) => r[0] === 'Topic')).toBe(false);
    }
    const text = chunks('naive', d, 'vodafone-kpis.xlsx').join('\n');
    expect(text).toContain('Topic：Mobile customers; Period：Nine quarters to 30 June 2023; Page：6');
    expect(text).not.toContain('Financial performance：');
  });
});

/** Renders lines of Helvetica through pdf.js to a PNG, with tight word gaps after punctuation as in justified scans. */
async function textImage(lines: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([612, 60 + lines.length * 30]);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const size = 16;
  lines.forEach((l, i) => {
    let x = 40;
    for (const w of l.split(' ')) {
      page.drawText(w, { x, y: 30 + (lines.length - i - 1) * 30, size, font });
      x += font.widthOfTextAtSize(w, size) + (/[,.;]$/.test(w) ? 0.1 : 0.3) * size;
    }
  });
  const p = new PDFParse({ data: await pdf.save() });
  try {
    const shot = await p.getScreenshot({ scale: 2, imageDataUrl: false, imageBuffer: true });
    return shot.pages[0]!.data;
  } finally {
    await p.destroy();
  }
}

describe('OCR keeps the spaces between words', () => {
  it('after punctuation set tight, as in justified scans', async () => {
    const png = await textImage(['He listened; then he came down. Well, it was minutes.', 'Seemed like I would die. If you are with the quality, or at a funeral,']);
    const d = await parseFile(png, 'scan.png');
    const t = d.blocks.map((b) => b.text).join(' ').replace(/\s+/g, ' ');
    expect(t).toContain('down. Well, it was');
    expect(t).toContain('die. If you');
    expect(t).toContain('quality, or at');
    expect(t).not.toMatch(/[a-z][,.;][A-Za-z]/);
  }, 60_000);

  it('mends only what prose always spaces', () => {
    expect(mendSpaces('him.He got up;we saw Jim,was')).toBe('him. He got up; we saw Jim, was');
    expect(mendSpaces('August 6,2020 and 62697,December')).toBe('August 6, 2020 and 62697, December');
    expect(mendSpaces('3,000 at 10:30 in the U.S.A, e.g. Ph.D and http://a.b/c?id=3')).toBe('3,000 at 10:30 in the U.S.A, e.g. Ph.D and http://a.b/c?id=3');
    expect(mendSpaces('Who dah?He listened')).toBe('Who dah? He listened');
  });

  it.skipIf(!HAVE)('on the scanned Huckleberry Finn page', async () => {
    const d = await parseFile(corpus('huckfinn-c02-22-scanned.pdf'), 'huckfinn-c02-22-scanned.pdf');
    const t = d.blocks.map((b) => b.text).join(' ');
    for (const s of ['Jim, was', 'him. He', 'us; we', 'nearly. Well', 'quality, or']) expect(t).toContain(s);
  }, 60_000);
});

describe('highlight() and closing quotes and brackets', () => {
  it('never takes the closing quote or bracket into the match', () => {
    expect(highlight("He said 'retrieval' twice.", 'retrieval')).toBe("He said '<em>retrieval</em>' twice.");
    expect(highlight('The ‘retrieval’ engine’s job.', 'retrieval engine')).toBe('The ‘<em>retrieval</em>’ <em>engine’s</em> job.');
    expect(highlight("The dogs' bowls.", 'dogs')).toBe("The <em>dogs</em>' bowls.");
  });

  it('keeps a sentence’s closing quote or bracket with it, and numbers whole', () => {
    expect(highlight('He said "use retrieval." Then he left. (See retrieval.) Done.', 'retrieval')).toBe(
      'He said "use <em>retrieval</em>."...(See <em>retrieval</em>.)',
    );
    expect(highlight('Version 3.14 of retrieval.', 'retrieval')).toBe('Version 3.14 of <em>retrieval</em>.');
  });
});

describe('images that are not text', () => {
  const svg =
    '<?xml version="1.0"?>\n<!-- a chart -->\n<svg xmlns="http://www.w3.org/2000/svg" width="420" height="80"><rect width="420" height="80" fill="#fff"/>' +
    '<text x="10" y="50" font-size="28" font-family="sans-serif">Quarterly revenue grew</text></svg>';

  it('routes .svg to the picture parser, never indexing its markup', async () => {
    const d = await parseFile(enc(svg), 'chart.svg', { ocr: false });
    expect(d.format).toBe('image');
    expect(d.meta).toMatchObject({ type: 'svg', width: '420', height: '80' });
    expect(d.blocks).toEqual([]);
    // Without an extension the content says SVG too.
    expect((await parseFile(enc(svg), 'chart', { ocr: false })).format).toBe('image');
  });

  it('OCRs the drawing, whatever its nominal size', async () => {
    const d = await parseFile(enc(svg), 'chart.svg');
    const t = d.blocks.map((b) => b.text).join(' ');
    expect(t).toMatch(/Quarterly revenue/);
    expect(t).not.toMatch(/<|svg|xmlns/);
    const huge = await parseFile(enc(svg.replace('width="420" height="80"', 'width="100000" height="20000" viewBox="0 0 420 80"')), 'big.svg');
    expect(huge.warnings ?? []).toEqual([]);
    // Drawn smaller, not refused nor drawn blank: the text is still read.
    expect(huge.blocks.map((b) => b.text).join(' ')).toMatch(/Quarterly/);
  }, 60_000);

  it.each([
    ['figure.eps', '%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n', 'Unsupported image format: .eps'],
    ['icon.bmp', 'BM not really a bitmap', 'Unsupported image format: .bmp'],
    ['playlist.asx', '<asx version="3.0"><entry/></asx>', 'Unsupported file type: .asx (video and sound are not parsed)'],
  ])('refuses %s with a clear reason instead of reading it as text', async (name, body, msg) => {
    await expect(parseFile(enc(body), name)).rejects.toThrow(msg);
  });
});

describe('running headers and footers of form-feed pages', () => {
  const page = (n: number, body: string) =>
    `Draft 12        Widget Protocol        May 2024\n\n${body}\n\nSmith              Informational              [Page ${n}]\n`;
  const bodies = [
    'Widgets exchange messages over a reliable stream.\nEach message starts with a length.',
    'Section 3 explains part 3: framing and the escape byte.',
    'Receivers acknowledge every frame within one second.\nSenders retry twice.',
    'Security considerations: frames are not encrypted.',
  ];
  const txt = bodies.map((b, i) => page(i + 1, b)).join('\f');

  it('marks them header / footer, so no chunk carries them', async () => {
    const d = await parseFile(enc(txt), 'draft.txt');
    expect(d.blocks.filter((b) => b.kind === 'header').map((b) => b.page)).toEqual([1, 2, 3, 4]);
    expect(d.blocks.filter((b) => b.kind === 'footer').map((b) => b.text)).toContain('Smith Informational [Page 3]');
    const all = chunks('naive', d, 'draft.txt', { chunk_token_num: 16 }).join('\n');
    expect(all).toContain('Section 3 explains part 3');
    expect(all).not.toMatch(/\[Page \d\]|Widget Protocol {2,}|May 2024/);
  });

  it('leaves text without form feeds alone, even a first line that is a number', async () => {
    const d = await parseFile(enc('2024\n\nAnnual notes.\n'), 'notes.txt');
    expect(d.blocks.map((b) => b.kind)).toEqual(['text', 'text']);
  });

  it.skipIf(!HAVE)('on RFC 5322: every page’s `Resnick … [Page n]` and `RFC 5322 … October 2008` lines are gone from the chunks', async () => {
    const d = await parseFile(corpus('rfc5322.txt'), 'rfc5322.txt');
    expect(d.blocks.filter((b) => b.kind === 'footer')).toHaveLength(57);
    expect(d.blocks.filter((b) => b.kind === 'header')).toHaveLength(56);
    const all = chunks('naive', d, 'rfc5322.txt').join('\n');
    expect(all).not.toMatch(/Resnick\s+Standards Track\s+\[Page \d+\]/);
    expect(all).not.toMatch(/RFC 5322\s+Internet Message Format\s+October 2008/);
    expect(all).toContain('Internet Message Format');
  });
});

describe('HTML tables', () => {
  const html = `<html><body><h1>Report</h1><p>Intro paragraph before the table.</p>
    <table><thead><tr><th rowspan="2">Region</th><th colspan="2">Revenue</th></tr><tr><th>2022</th><th>2023</th></tr></thead>
    <tbody><tr><td>North</td><td>10</td><td>12</td></tr><tr><td colspan="3">Total for all regions follows</td></tr></tbody></table>
    <p>Closing paragraph after the table.</p></body></html>`;

  it('keeps a merged cell once, with its span in the HTML copy', async () => {
    const d = await parseFile(enc(html), 'r.html');
    const t = d.blocks.find((b) => b.kind === 'table')!;
    expect(t.rows).toEqual([
      ['Region', 'Revenue', ''],
      ['', '2022', '2023'],
      ['North', '10', '12'],
      ['Total for all regions follows', '', ''],
    ]);
    expect(t.html).toContain('<th rowspan="2">Region</th><th colspan="2">Revenue</th>');
    expect(t.html).toContain('<td colspan="3">Total for all regions follows</td>');
    expect(t.html!.match(/Total for all regions/g)).toHaveLength(1);
  });

  it('chunks the table where it stands in the page', async () => {
    const d = await parseFile(enc(html), 'r.html');
    const c = chunks('naive', d, 'r.html');
    const at = (s: string) => c.findIndex((x) => x.includes(s));
    expect(at('Intro paragraph')).toBeLessThan(at('<table>'));
    expect(at('<table>')).toBeLessThan(at('Closing paragraph'));
  });

  it.skipIf(!HAVE)('on the 10-K: no cell text repeated across its span, tables among the text', async () => {
    const d = await parseFile(corpus('sec-10k-excerpt.html'), 'sec-10k-excerpt.html');
    const rows = d.blocks.filter((b: Block) => b.kind === 'table').flatMap((b) => b.rows!);
    expect(rows.some((r) => r.filter((c) => c === 'PART I').length > 1)).toBe(false);
    expect(rows.some((r) => r[0]?.startsWith('6480 Cameron Street') && r[1] === r[0])).toBe(false);
    const c = chunks('naive', d, 'sec-10k-excerpt.html');
    const firstTable = c.findIndex((x) => x.startsWith('<table>'));
    const lastText = c.length - 1 - [...c].reverse().findIndex((x) => !x.startsWith('<table>'));
    expect(firstTable).toBeLessThan(lastText);
  });
});

describe('Document#listChunks() order', () => {
  test('lists by position, as RAGFlow sorts page_num_int / top_int, and pages stably', async ({ dir }) => {
    const client = new Client({ path: join(dir, 'kb.db') });
    try {
      const ds = await client.createDataset({ name: 'order' });
      const [doc] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('x') }]);
      const made = [];
      for (const t of ['first', 'second', 'third', 'fourth']) made.push(await doc!.addChunk({ content: t }));
      // Positions set later: page 2 for "first", page 1 for "fourth", "second" near the top of page 1.
      await made[0]!.update({ positions: [[2, 0, 10, 5, 9]] });
      await made[3]!.update({ positions: [[1, 0, 10, 300, 320]] });
      await made[1]!.update({ positions: [[1, 0, 10, 20, 30]] });
      const order = (await doc!.listChunks()).map((c) => c.content);
      expect(order).toEqual(['second', 'fourth', 'first', 'third']);
      const paged = [];
      for (let p = 1; p <= 4; p++) paged.push(...(await doc!.listChunks({ page: p, page_size: 1 })).map((c) => c.content));
      expect(paged).toEqual(order);
    } finally {
      await client.close();
    }
  });
});

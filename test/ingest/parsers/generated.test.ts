/** Per-format tests on fixtures generated in setup (no binary fixtures in the repo). */
import { AlignmentType, Document, HeadingLevel, Packer, PageBreak, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { createRequire } from 'node:module';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseFile } from '../../../src/ingest/parsers/index.js';
import { ParseError } from '../../../src/ingest/types.js';
import type { ParsedDocument } from '../../../src/ingest/types.js';

const enc = (s: string) => new TextEncoder().encode(s);
const text = (d: ParsedDocument) => d.blocks.map((b) => b.text).join('\n');

async function makePdf(pages: string[][]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle('Generated fixture');
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  for (const lines of pages) {
    const page = pdf.addPage([612, 792]);
    page.drawText(lines[0]!, { x: 72, y: 700, size: 20, font: bold });
    lines.slice(1).forEach((l, i) => page.drawText(l, { x: 72, y: 660 - i * 14, size: 11, font }));
  }
  return pdf.save();
}

describe('parseFile() PDF', () => {
  let doc: ParsedDocument;
  beforeAll(async () => {
    const bytes = await makePdf([
      ['First Heading', 'Alpha line one of the first paragraph', 'alpha line two continues it'],
      ['Second Heading', 'Beta text on the second page'],
    ]);
    doc = await parseFile(bytes, 'two-pages.pdf');
  });

  it('keeps page numbers and top-left positions in points', () => {
    expect(doc.pages).toBe(2);
    const alpha = doc.blocks.find((b) => b.text.startsWith('Alpha'))!;
    expect(alpha.page).toBe(1);
    expect(alpha.text).toBe('Alpha line one of the first paragraph\nalpha line two continues it');
    const [page, x0, x1, top, bottom] = alpha.positions![0]!;
    expect(page).toBe(1);
    expect(x0).toBeCloseTo(72, 0);
    expect(x1).toBeGreaterThan(200);
    // Baseline at y = 660 from the bottom → 132 from the top; the box spans ascent to descent.
    expect(top).toBeGreaterThan(118);
    expect(top).toBeLessThan(132);
    expect(bottom).toBeGreaterThan(146);
    expect(bottom).toBeLessThan(152);
    const beta = doc.blocks.find((b) => b.text.startsWith('Beta'))!;
    expect(beta.page).toBe(2);
    expect(beta.positions![0]![0]).toBe(2);
  });

  it('marks larger type as headings and takes the title from the info dictionary', () => {
    expect(doc.blocks.filter((b) => b.kind === 'heading').map((b) => b.text)).toEqual(['First Heading', 'Second Heading']);
    expect(doc.title).toBe('Generated fixture');
  });

  it('honours page ranges', async () => {
    const bytes = await makePdf([['One'], ['Two'], ['Three']]);
    const d = await parseFile(bytes, 'x.pdf', { pages: [[2, 3]] });
    expect(d.blocks.map((b) => b.text)).toEqual(['Two', 'Three']);
    expect(d.pages).toBe(3);
  });

  it('rejects a truncated PDF with a clear message', async () => {
    const bytes = await makePdf([['Hello']]);
    await expect(parseFile(bytes.subarray(0, 200), 'cut.pdf')).rejects.toThrow(/^Invalid PDF structure/);
  });

  it('times out on a long parse and says so', async () => {
    const bytes = await makePdf(Array.from({ length: 150 }, (_, i) => [`Page ${i}`, 'some text '.repeat(8)]));
    await expect(parseFile(bytes, 'long.pdf', { timeoutMs: 30 })).rejects.toThrow('Parsing timed out after 30 ms');
  });

  it('stops when the caller aborts', async () => {
    const bytes = await makePdf([['Hello']]);
    await expect(parseFile(bytes, 'a.pdf', { signal: AbortSignal.abort() })).rejects.toThrow('Parsing was cancelled');
  });
});

describe('parseFile() DOCX', () => {
  it('reads headings with levels, paragraphs, tables and page breaks', async () => {
    const cell = (t: string) => new TableCell({ children: [new Paragraph(t)] });
    const d = new Document({
      sections: [
        {
          children: [
            new Paragraph({ text: 'Annual Report', heading: HeadingLevel.HEADING_1 }),
            new Paragraph({ children: [new TextRun('Revenue grew '), new TextRun({ text: 'strongly', bold: true }), new TextRun('.')] }),
            new Paragraph({ text: 'Figures', heading: HeadingLevel.HEADING_2, alignment: AlignmentType.LEFT }),
            new Table({
              rows: [
                new TableRow({ children: [cell('Year'), cell('Revenue')] }),
                new TableRow({ children: [cell('2023'), cell('1,200')] }),
                new TableRow({ children: [cell('2024'), cell('1,500')] }),
              ],
            }),
            new Paragraph({ children: [new PageBreak()] }),
            new Paragraph('After the break.'),
          ],
        },
      ],
    });
    const bytes = new Uint8Array(await Packer.toBuffer(d));
    const doc = await parseFile(bytes, 'report.docx');
    expect(doc.format).toBe('docx');
    expect(doc.title).toBe('Annual Report');
    expect(doc.blocks.filter((b) => b.kind === 'heading').map((b) => [b.text, b.level])).toEqual([
      ['Annual Report', 1],
      ['Figures', 2],
    ]);
    expect(doc.blocks.find((b) => b.kind === 'text')!.text).toBe('Revenue grew strongly.');
    const table = doc.blocks.find((b) => b.kind === 'table')!;
    expect(table.rows).toEqual([
      ['Year', 'Revenue'],
      ['2023', '1,200'],
      ['2024', '1,500'],
    ]);
    expect(table.header).toBe(true);
    expect(table.html).toContain('<th>Year</th>');
    expect(doc.blocks.find((b) => b.text === 'After the break.')!.page).toBe(2);
    expect(doc.blocks.find((b) => b.text === 'Annual Report')!.page).toBe(1);
  });

  it('rejects a ZIP that is not a Word document', async () => {
    const zip = new JSZip();
    zip.file('hello.txt', 'hi');
    const bytes = await zip.generateAsync({ type: 'uint8array' });
    await expect(parseFile(bytes, 'fake.docx')).rejects.toThrow(/^Invalid DOCX/);
  });

  it('rejects a zip bomb before inflating it', async () => {
    const zip = new JSZip();
    zip.file('word/document.xml', 'a'.repeat(4 * 1024 * 1024));
    const bytes = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
    await expect(parseFile(bytes, 'bomb.docx', { maxUnzippedBytes: 1024 * 1024 })).rejects.toThrow(/expands to more than 1 MiB/);
  });

  it('converts from the bytes when mammoth does not take an opened package ({ file })', async () => {
    // The parser hands mammoth its own package reader as `{ file }` (an undocumented input of
    // mammoth's lib/unzip.js) and, when mammoth answers "Could not find file in options" as it does
    // for an input it does not know, converts again from `{ buffer }`. The installed mammoth takes
    // `{ file }`, so its openZip is narrowed here to what a mammoth without that input does; the
    // conversion itself stays mammoth's own. (Same module instance as the parser's: no exports map.)
    const unzip = createRequire(import.meta.url)('mammoth/lib/unzip.js') as { openZip: (o: Record<string, unknown>) => Promise<unknown> };
    const openZip = unzip.openZip;
    const inputs: string[] = [];
    const d = new Document({
      sections: [{
        children: [
          new Paragraph({ text: 'Field Notes', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('The kestrel hovers over the verge.'),
          new Table({ rows: [new TableRow({ children: ['Bird', 'Count'].map((t) => new TableCell({ children: [new Paragraph(t)] })) }),
            new TableRow({ children: ['kestrel', '3'].map((t) => new TableCell({ children: [new Paragraph(t)] })) })] }),
          new Paragraph({ children: [new PageBreak()] }),
          new Paragraph('Second page text.'),
        ],
      }],
    });
    const bytes = new Uint8Array(await Packer.toBuffer(d));
    try {
      unzip.openZip = (o) => {
        inputs.push(Object.keys(o).filter((k) => ['path', 'buffer', 'file'].includes(k)).join('+'));
        return openZip(o);
      };
      const direct = await parseFile(bytes, 'notes.docx');
      expect(inputs).toEqual(['file']); // normally the opened package, and only it

      inputs.length = 0;
      unzip.openZip = (o) => {
        inputs.push(Object.keys(o).filter((k) => ['path', 'buffer', 'file'].includes(k)).join('+'));
        return o.path || o.buffer ? openZip(o) : Promise.reject(new Error('Could not find file in options'));
      };
      const fallback = await parseFile(bytes, 'notes.docx');
      expect(inputs).toEqual(['file', 'buffer']); // refused, then converted from the bytes
      expect(fallback.title).toBe('Field Notes');
      expect(text(fallback)).toContain('The kestrel hovers over the verge.');
      expect(fallback.blocks.find((b) => b.kind === 'table')!.rows).toEqual([['Bird', 'Count'], ['kestrel', '3']]);
      expect(fallback.blocks.find((b) => b.text === 'Second page text.')!.page).toBe(2);
      expect(fallback).toEqual(direct); // the same document either way
    } finally {
      unzip.openZip = openZip;
    }
  });
});

describe('parseFile() XLSX and CSV', () => {
  it('reads sheets with names, merged headers, numbers, and drops empty rows', async () => {
    const wb = new ExcelJS.Workbook();
    const a = wb.addWorksheet('Sales');
    a.addRow(['Region', 'Q1', 'Q2']);
    a.addRow(['North', 10, { formula: 'B2*2', result: 20 }]);
    a.addRow([]);
    a.addRow(['South', 5.5, 7]);
    const b = wb.addWorksheet('Notes');
    b.getCell('A1').value = 'Merged title';
    b.mergeCells('A1:C1');
    b.getCell('A2').value = 'x';
    b.getCell('B2').value = 'y';
    b.getCell('C2').value = 'z';
    const bytes = new Uint8Array(await wb.xlsx.writeBuffer());
    const doc = await parseFile(bytes, 'book.xlsx');
    expect(doc.pages).toBe(2);
    const [sales, notes] = doc.blocks;
    expect(sales).toMatchObject({ kind: 'table', sheet: 'Sales', page: 1, header: true });
    expect(sales!.rows).toEqual([
      ['Region', 'Q1', 'Q2'],
      ['North', '10', '20'],
      ['South', '5.5', '7'],
    ]);
    // A merged title line above the table is its label, not its header row.
    expect(notes).toMatchObject({ kind: 'heading', text: 'Merged title', sheet: 'Notes', page: 2 });
    expect(doc.blocks[2]).toMatchObject({ kind: 'table', sheet: 'Notes', page: 2, rows: [['x', 'y', 'z']] });
  });

  it('reads quoted commas, newlines in quotes and non-ASCII in CSV', async () => {
    const csv = 'name,city,note\n"Doe, Jane",Zürich,"line one\nline two"\nЁлка,東京,""\n';
    const doc = await parseFile(enc(csv), 'people.csv');
    expect(doc.blocks[0]!.rows).toEqual([
      ['name', 'city', 'note'],
      ['Doe, Jane', 'Zürich', 'line one\nline two'],
      ['Ёлка', '東京', ''],
    ]);
    expect(doc.blocks[0]!.header).toBe(true);
  });

  it('reads a Latin-1 TSV', async () => {
    const bytes = Uint8Array.from([...'a\tb\n'].map((c) => c.charCodeAt(0)).concat([0x63, 0x61, 0x66, 0xe9, 0x09, 0x31, 0x0a]));
    const doc = await parseFile(bytes, 'x.tsv');
    expect(doc.blocks[0]!.rows).toEqual([
      ['a', 'b'],
      ['café', '1'],
    ]);
  });
});

describe('parseFile() PPTX', () => {
  const slide = (shapes: string) => `<?xml version="1.0" encoding="UTF-8"?>
<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:cSld><p:spTree>${shapes}</p:spTree></p:cSld></p:sld>`;
  const sp = (text: string, y: number, ph = '') =>
    `<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>${ph ? `<p:ph type="${ph}"/>` : ''}</p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="457200" y="${y}"/><a:ext cx="8000000" cy="500000"/></a:xfrm></p:spPr><p:txBody><a:bodyPr/>${text
      .split('\n')
      .map((l) => `<a:p><a:r><a:t>${l}</a:t></a:r></a:p>`)
      .join('')}</p:txBody></p:sp>`;

  it('reads slides in order, title first, shapes top to bottom, tables and notes', async () => {
    const zip = new JSZip();
    zip.file('ppt/presentation.xml', `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst><p:sldId id="256" r:id="rId3"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst></p:presentation>`);
    zip.file('ppt/_rels/presentation.xml.rels', `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide2.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/></Relationships>`);
    // Tree order: bottom shape, then title, then top shape; reading order must fix it.
    zip.file('ppt/slides/slide1.xml', slide(sp('Bottom text', 4000000) + sp('Welcome &amp; hello', 300000, 'title') + sp('Top text\nsecond line', 1500000) + sp('7', 6000000, 'sldNum')));
    const tbl = `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="5" name="t"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="2000000"/><a:ext cx="1" cy="1"/></p:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tr h="1"><a:tc><a:txBody><a:p><a:r><a:t>Metric</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Value</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr h="1"><a:tc><a:txBody><a:p><a:r><a:t>Users</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>42</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>`;
    zip.file('ppt/slides/slide2.xml', slide(sp('Numbers', 300000, 'title') + tbl));
    zip.file('ppt/slides/_rels/slide2.xml.rels', `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" Target="../notesSlides/notesSlide1.xml"/></Relationships>`);
    zip.file('ppt/notesSlides/notesSlide1.xml', slide(sp('Mention the growth.', 0, 'body')));
    const doc = await parseFile(await zip.generateAsync({ type: 'uint8array' }), 'deck.pptx');
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe('Welcome & hello');
    expect(doc.blocks.map((b) => [b.page, b.kind, b.text])).toEqual([
      [1, 'heading', 'Welcome & hello'],
      [1, 'text', 'Top text\nsecond line'],
      [1, 'text', 'Bottom text'],
      [2, 'heading', 'Numbers'],
      [2, 'table', 'Metric | Value\nUsers | 42'],
      [2, 'text', 'Speaker notes: Mention the growth.'],
    ]);
  });
});

describe('parseFile() text encodings', () => {
  it('reads UTF-16LE with a BOM and normalises CRLF', async () => {
    const s = 'Grüße\r\naus Köln\r\n\r\nzweiter Absatz';
    const body = new Uint8Array(s.length * 2);
    for (let i = 0; i < s.length; i++) body[i * 2] = s.charCodeAt(i);
    const doc = await parseFile(Uint8Array.from([0xff, 0xfe, ...body]), 'utf16.txt');
    expect(doc.blocks.map((b) => b.text)).toEqual(['Grüße\naus Köln', 'zweiter Absatz']);
    expect(doc.meta?.['encoding']).toBe('utf-16le');
  });

  it('reads UTF-16BE without a BOM by its NUL pattern', async () => {
    const s = 'plain ASCII text in big-endian UTF-16';
    const b = new Uint8Array(s.length * 2);
    for (let i = 0; i < s.length; i++) b[i * 2 + 1] = s.charCodeAt(i);
    const doc = await parseFile(b, 'be.txt');
    expect(text(doc)).toBe(s);
  });

  it('reads Latin-1 / Windows-1252 bytes', async () => {
    const s = 'Le café était très animé. Déjà vu à Noël — “quotes”.';
    const bytes = Uint8Array.from([...s].map((c) => ({ '—': 0x97, '“': 0x93, '”': 0x94 })[c] ?? c.charCodeAt(0)));
    const doc = await parseFile(bytes, 'latin1.txt');
    expect(text(doc)).toBe(s);
  });

  it('splits pages at form feeds', async () => {
    const doc = await parseFile(enc('page one\fpage two\n\nmore\f'), 'p.txt');
    expect(doc.pages).toBe(2);
    expect(doc.blocks.map((b) => [b.page, b.text])).toEqual([
      [1, 'page one'],
      [2, 'page two'],
      [2, 'more'],
    ]);
  });
});

describe('parseFile() EML', () => {
  const inner = ['From: Carol <carol@example.org>', 'To: dave@example.org', 'Subject: Inner note', 'Content-Type: text/plain; charset=utf-8', '', 'The inner body.'].join('\r\n');
  const outer = [
    'From: Alice <alice@example.com>',
    'To: Bob <bob@example.com>',
    'Cc: ops@example.com',
    'Subject: =?UTF-8?B?UXVhcnRlcmx5IHLDqXN1bcOp?=',
    'Date: Tue, 02 Jan 2024 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="XX"',
    '',
    '--XX',
    'Content-Type: text/plain; charset=iso-8859-1',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Hello Bob,',
    '',
    'the r=E9sum=E9 is attached.',
    '--XX',
    'Content-Type: text/plain; name="notes.txt"',
    'Content-Disposition: attachment; filename="notes.txt"',
    '',
    'Attached notes line.',
    '--XX',
    'Content-Type: message/rfc822',
    'Content-Disposition: attachment; filename="forwarded.eml"',
    '',
    inner,
    '--XX',
    'Content-Type: application/x-unknown-thing',
    'Content-Disposition: attachment; filename="blob.xyz"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from([0, 1, 2, 3, 255, 0, 7]).toString('base64'),
    '--XX--',
    '',
  ].join('\r\n');

  it('reads headers, body and attachments recursively; unsupported ones get an error', async () => {
    const doc = await parseFile(enc(outer), 'mail.eml');
    expect(doc.meta).toMatchObject({
      subject: 'Quarterly résumé',
      from: '"Alice" <alice@example.com>',
      to: '"Bob" <bob@example.com>',
      cc: 'ops@example.com',
      date: '2024-01-02T10:00:00.000Z',
    });
    expect(doc.title).toBe('Quarterly résumé');
    expect(text(doc)).toContain('the résumé is attached.');
    const [notes, fwd, blob] = doc.attachments!;
    expect(notes).toMatchObject({ filename: 'notes.txt', contentType: 'text/plain' });
    expect(notes!.parsed!.blocks[0]!.text).toBe('Attached notes line.');
    expect(fwd!.filename).toBe('forwarded.eml');
    expect(fwd!.parsed!.meta).toMatchObject({ subject: 'Inner note', from: '"Carol" <carol@example.org>' });
    expect(text(fwd!.parsed!)).toContain('The inner body.');
    expect(blob).toMatchObject({ filename: 'blob.xyz', size: 7, error: 'Unsupported file type: .xyz' });
    expect(blob!.parsed).toBeUndefined();
  });

  it('stops recursing at the depth limit', async () => {
    const doc = await parseFile(enc(outer), 'mail.eml', { maxAttachmentDepth: 0 });
    expect(doc.attachments!.every((a) => /nested deeper/.test(a.error ?? ''))).toBe(true);
  });
});

describe('parseFile() HTML, Markdown, JSON', () => {
  it('takes the title, drops scripts and navigation, keeps tables', async () => {
    const html = `<!doctype html><html><head><title>Plan</title><style>p{}</style><script>var x = 1;</script></head><body>
      <nav><a href="/">Home</a> <a href="/about">About us</a></nav>
      <h1>Plan</h1><p>First&nbsp;paragraph with <b>bold</b> text.</p>
      <table><thead><tr><th>Item</th><th>Cost</th></tr></thead><tbody><tr><td>Tea</td><td>3</td></tr></tbody></table>
      <pre>  code  kept</pre><footer>© footer</footer></body></html>`;
    const doc = await parseFile(enc(html), 'p.html');
    expect(doc.title).toBe('Plan');
    expect(doc.blocks.map((b) => b.kind)).toEqual(['title', 'text', 'table', 'code']);
    expect(doc.blocks[1]!.text).toBe('First paragraph with bold text.');
    expect(doc.blocks[2]).toMatchObject({ rows: [['Item', 'Cost'], ['Tea', '3']], header: true });
    expect(doc.blocks[3]!.text).toBe('  code  kept');
    expect(text(doc)).not.toMatch(/About us|var x|footer/);
  });

  it('leaves out navigation written as text: texinfo Next/Previous/Up lines, skip links, breadcrumbs', async () => {
    // A page as texinfo's makeinfo writes it (no <nav>), plus a skip link and a breadcrumb trail.
    const html = `<!doctype html><html><head><title>Invoking gzip</title></head><body>
      <a class="skip" href="#main">Skip to main content</a>
      <div class="header"><p>Next: <a href="Advanced.html">Advanced usage</a>, Previous: <a href="Sample.html">Sample</a>, Up: <a href="index.html">Top</a> &nbsp; [<a href="Index.html">Index</a>]</p></div>
      <p>Manuals » GNU gzip » Invoking gzip</p>
      <ol class="crumbs"><li>Home › Docs › Guide</li></ol>
      <h2>4 Invoking gzip</h2><p>The format for running the gzip program is: gzip option … file …</p>
      <p>Options: fast / best / keep are all accepted.</p>
      <div class="header"><p>Next: <a href="Advanced.html">Advanced usage</a>, Previous: <a href="Sample.html">Sample</a>, Up: <a href="index.html">Top</a></p></div>
      </body></html>`;
    const doc = await parseFile(enc(html), 'gzip.html');
    expect(text(doc)).not.toMatch(/Next:|Previous:|Skip to|Manuals »|Home ›/);
    expect(doc.blocks.filter((b) => b.kind === 'text').map((b) => b.text)).toEqual([
      'The format for running the gzip program is: gzip option … file …',
      'Options: fast / best / keep are all accepted.',
    ]);
  });

  it('decodes a page by its meta charset', async () => {
    const head = enc('<html><head><meta charset="windows-1251"><title>t</title></head><body><p>');
    const cyr = Uint8Array.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]); // "Привет" in cp1251
    const doc = await parseFile(Uint8Array.from([...head, ...cyr, ...enc('</p></body></html>')]), 'ru.html');
    expect(text(doc)).toContain('Привет');
  });

  it('reads Markdown headings, tables, code, lists and leading HTML', async () => {
    const md = [
      '<p align="center"><img src="x.png" alt="logo"></p>',
      '',
      'Project Title',
      '=============',
      '',
      'Intro with a [link](https://e.org).',
      '',
      '## Usage',
      '',
      '```ts',
      'const a = 1;',
      '',
      'const b = 2;',
      '```',
      '',
      '| Name | Value |',
      '| ---- | ----: |',
      '| a \\| b | `x|y` |',
      '',
      '- one',
      '  - nested',
      '1. first',
    ].join('\n');
    const doc = await parseFile(enc(md), 'readme.md');
    expect(doc.title).toBe('Project Title');
    expect(doc.blocks.map((b) => [b.kind, b.text, b.level])).toEqual([
      ['heading', 'Project Title', 1],
      ['text', 'Intro with a [link](https://e.org).', undefined],
      ['heading', 'Usage', 2],
      ['code', 'const a = 1;\n\nconst b = 2;', undefined],
      ['table', 'Name | Value\na | b | `x|y`', undefined],
      ['list', 'one', undefined],
      ['list', 'nested', 2],
      ['list', 'first', undefined],
    ]);
    expect(doc.blocks[4]!.rows).toEqual([
      ['Name', 'Value'],
      ['a | b', '`x|y`'],
    ]);
  });

  it('splits JSON into one block per top-level item and rejects invalid JSON', async () => {
    const doc = await parseFile(enc('{"a": 1, "b": {"c": [1, 2]}}'), 'x.json');
    expect(doc.blocks.map((b) => JSON.parse(b.text))).toEqual([{ a: 1 }, { b: { c: [1, 2] } }]);
    const arr = await parseFile(enc('[{"id": 1}, {"id": 2}]'), 'x.json');
    expect(arr.blocks).toHaveLength(2);
    const lines = await parseFile(enc('{"id": 1}\n\n{"id": 2}\n'), 'x.jsonl');
    expect(lines.blocks).toHaveLength(2);
    await expect(parseFile(enc('{"a": }'), 'bad.json')).rejects.toThrow(/^Invalid JSON/);
    await expect(parseFile(enc('{"a": 1}\nnope'), 'bad.jsonl')).rejects.toThrow(/^Invalid JSON on line 2/);
  });
});

describe('parseFile() dispatch and limits', () => {
  it('reads an empty text or Markdown file as no text, and rejects empty, oversized and unsupported input', async () => {
    // RAGFlow's readers find no text in an empty .txt / .md (the document is done with no chunk);
    // formats with a structure (PDF, DOCX, JSON …) cannot be empty.
    expect(await parseFile(new Uint8Array(0), 'a.txt')).toEqual({ format: 'text', blocks: [] });
    expect(await parseFile(new Uint8Array(0), 'notes.md')).toEqual({ format: 'markdown', blocks: [] });
    for (const name of ['a.pdf', 'a.docx', 'a.json', 'a.csv', 'a.html', 'a.xlsx']) {
      await expect(parseFile(new Uint8Array(0), name)).rejects.toThrow(new ParseError('File is empty'));
    }
    await expect(parseFile(enc('hello'), 'a.txt', { maxBytes: 3 })).rejects.toThrow(/^File is too large to parse/);
    await expect(parseFile(Uint8Array.from([0, 1, 2, 3, 4, 0, 9]), 'a.bin')).rejects.toThrow('Unsupported file type: .bin');
    await expect(parseFile(enc('x'), 'a.txt', { timeoutMs: -1 })).rejects.toThrow(TypeError);
  });

  it('sniffs content when the extension is unknown or a binary type lies', async () => {
    const pdf = await makePdf([['Sniffed PDF']]);
    expect((await parseFile(pdf, 'upload')).format).toBe('pdf');
    expect((await parseFile(pdf, 'really-a-pdf.docx')).format).toBe('pdf');
    expect((await parseFile(enc('<!DOCTYPE html><title>T</title><p>x</p>'), 'page')).format).toBe('html');
    expect((await parseFile(enc('{"a":1}'), 'data')).format).toBe('json');
    expect((await parseFile(enc('From: a@b.c\nSubject: s\n\nbody'), 'message')).format).toBe('eml');
    // Extension wins for supported text types: HTML inside a .md stays Markdown.
    expect((await parseFile(enc('<div>hi</div>\n\n# Title'), 'x.md')).format).toBe('markdown');
  });

  it('returns an image document with a warning when OCR is off', async () => {
    const png = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));
    const doc = await parseFile(png, 'dot.png', { ocr: false });
    expect(doc).toMatchObject({ format: 'image', blocks: [], meta: { width: '1', height: '1', type: 'png' } });
    expect(doc.warnings).toEqual(['OCR is disabled: no text extracted from the image']);
    await expect(parseFile(enc('not an image'), 'x.png')).rejects.toThrow(/^Invalid image/);
  });
});

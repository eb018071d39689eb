/**
 * DOCX text is emitted once per occurrence in the document body: the constructs that could be read
 * twice (a text box's mc:AlternateContent Choice + Fallback, a table's cells, headers / footers,
 * revision-save ids stripped before mammoth parses the XML) each give their text once, and a body
 * that really repeats itself keeps its repeats (RAGFlow's python-docx reading does the same).
 * Fixtures are written as raw WordprocessingML so each construct is exactly as Word saves it.
 */
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunkers/index.js';
import { parseFile } from '../../src/ingest/parsers/index.js';
import type { ParsedDocument } from '../../src/ingest/types.js';

const NS =
  'xmlns:wpc="http://schemas.microsoft.com/office/word/2010/wordprocessingCanvas" ' +
  'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" ' +
  'xmlns:o="urn:schemas-microsoft-com:office:office" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
  'xmlns:v="urn:schemas-microsoft-com:vml" ' +
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" ' +
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
  'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml" ' +
  'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" ' +
  'mc:Ignorable="w14"';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** A paragraph with Word's revision-save ids, as Word writes them. */
const p = (t: string, id = '1A2B3C4D') =>
  `<w:p w:rsidR="00AB12CD" w:rsidRDefault="00AB12CD" w:rsidP="00EF3456" w14:paraId="${id}" w14:textId="77777777">` +
  `<w:r w:rsidRPr="00AB12CD"><w:t xml:space="preserve">${esc(t)}</w:t></w:r></w:p>`;

/** A text box anchored in a paragraph: DrawingML in mc:Choice and the same text in VML mc:Fallback. */
const textBox = (t: string) =>
  `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="1" name="Text Box 1"/>` +
  `<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:txbx>` +
  `<w:txbxContent>${p(t)}</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>` +
  `<mc:Fallback><w:pict><v:shape id="Text Box 1"><v:textbox><w:txbxContent>${p(t)}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>` +
  `</mc:AlternateContent></w:r></w:p>`;

const cell = (t: string) => `<w:tc><w:tcPr><w:tcW w:w="2000" w:type="dxa"/></w:tcPr>${p(t)}</w:tc>`;
const table = (rows: string[][]) =>
  `<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr>${rows.map((r) => `<w:tr w:rsidR="00AB12CD">${r.map(cell).join('')}</w:tr>`).join('')}</w:tbl>`;

async function makeDocx(body: string, parts: { header?: string; footer?: string } = {}): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>' +
      '<Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/></Types>',
  );
  zip.file(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
  );
  zip.file(
    'word/_rels/document.xml.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId8" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/>' +
      '<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/></Relationships>',
  );
  const hf = (tag: string, t: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:${tag} ${NS}>${p(t)}</w:${tag}>`;
  zip.file('word/header1.xml', hf('hdr', parts.header ?? 'Running header'));
  zip.file('word/footer1.xml', hf('ftr', parts.footer ?? 'Running footer'));
  const sect =
    '<w:sectPr w:rsidR="00AB12CD"><w:headerReference w:type="default" r:id="rId8"/><w:footerReference w:type="default" r:id="rId9"/>' +
    '<w:pgSz w:w="12240" w:h="15840"/></w:sectPr>';
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${NS}><w:body>${body}${sect}</w:body></w:document>`);
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

/** Occurrences of `needle` in all block text (table cells counted through the table's rows). */
const occurrences = (doc: ParsedDocument, needle: string): number =>
  doc.blocks.reduce((n, b) => n + (b.text.split(needle).length - 1), 0);

const chunkOccurrences = (doc: ParsedDocument, needle: string): number =>
  chunkDocument('naive', doc, { filename: 'x.docx', parserConfig: {} }).chunks.reduce((n, c) => n + (c.content.split(needle).length - 1), 0);

describe('DOCX: each piece of text once', () => {
  const SENTENCES = ['Alpha paragraph before the box.', 'Boxed text inside a text box.', 'Omega paragraph after the table.'];
  const CELLS = [
    ['Fee schedule', 'Percent'],
    ['Trustee fee', '10'],
  ];

  it('text boxes (AlternateContent), tables, headers and footers do not duplicate text', async () => {
    const body = p(SENTENCES[0]!) + textBox(SENTENCES[1]!) + table(CELLS) + p(SENTENCES[2]!);
    const doc = await parseFile(await makeDocx(body), 'once.docx');
    for (const s of SENTENCES) expect(occurrences(doc, s), s).toBe(1);
    // Table cells stand only in the table block, never also as text blocks.
    const tables = doc.blocks.filter((b) => b.kind === 'table');
    expect(tables).toHaveLength(1);
    expect(tables[0]!.rows).toEqual(CELLS);
    for (const c of CELLS.flat()) expect(doc.blocks.filter((b) => b.kind !== 'table' && b.text.includes(c)), c).toEqual([]);
    // Headers and footers are not body text (RAGFlow's DOCX path reads the body only).
    expect(occurrences(doc, 'Running header')).toBe(0);
    expect(occurrences(doc, 'Running footer')).toBe(0);
    // Reading order: paragraph, text box, table, paragraph.
    const order = doc.blocks.map((b) => (b.kind === 'table' ? 'TABLE' : b.text));
    expect(order).toEqual([SENTENCES[0], SENTENCES[1], 'TABLE', SENTENCES[2]]);
    // And the naive chunker keeps each sentence once; the table is its own chunk.
    for (const s of SENTENCES) expect(chunkOccurrences(doc, s), s).toBe(1);
  });

  it('keeps repeats that the document body really holds', async () => {
    const once = p('Boilerplate notice repeated on each part.');
    const body = [1, 2, 3].map((i) => once + p(`Part ${i} body text.`)).join('');
    const doc = await parseFile(await makeDocx(body), 'repeats.docx');
    expect(occurrences(doc, 'Boilerplate notice repeated on each part.')).toBe(3);
    for (const i of [1, 2, 3]) expect(occurrences(doc, `Part ${i} body text.`)).toBe(1);
  });

  it('drops revision-save ids only inside tags, never from text', async () => {
    // Text that looks like an rsid attribute (a document about WordprocessingML) stays intact.
    const literal = 'Set w:rsidR="00AB12CD" and w14:paraId="1A2B3C4D" on the paragraph.';
    // A table-of-contents line: paragraph tab stops (dropped before mammoth) and a run's tab (kept).
    const toc =
      '<w:p w:rsidR="00AB12CD"><w:pPr><w:tabs><w:tab w:val="right" w:leader="dot" w:pos="9350"/></w:tabs><w:rPr><w:rtl w:val="0"/></w:rPr></w:pPr>' +
      '<w:r><w:rPr><w:rtl w:val="0"/></w:rPr><w:t>A. PURPOSE</w:t></w:r><w:r><w:tab/></w:r><w:r><w:t>1-1</w:t></w:r></w:p>';
    const doc = await parseFile(await makeDocx(p('Plain.') + p(literal) + toc + p('<w:tabs> in text &amp; more')), 'literal.docx');
    expect(doc.blocks.map((b) => b.text)).toEqual(['Plain.', literal, 'A. PURPOSE 1-1', '<w:tabs> in text &amp; more']);
  });

  it('reports a damaged package entry as an invalid DOCX', async () => {
    const bytes = await makeDocx(p('Some text that will be damaged in the deflate stream.'.repeat(20)));
    // Corrupt the start of word/document.xml's deflate data.
    const name = new TextEncoder().encode('word/document.xml');
    let at = -1;
    for (let i = 0; i < bytes.length - 4 && at < 0; i++) {
      if (bytes[i] === 0x50 && bytes[i + 1] === 0x4b && bytes[i + 2] === 0x03 && bytes[i + 3] === 0x04 && name.every((c, k) => bytes[i + 30 + k] === c)) at = i;
    }
    expect(at).toBeGreaterThanOrEqual(0);
    const start = at + 30 + name.length + (bytes[at + 28]! | (bytes[at + 29]! << 8));
    const broken = bytes.slice();
    broken.fill(0xff, start, start + 8);
    await expect(parseFile(broken, 'broken.docx')).rejects.toThrow(/^Invalid DOCX/);
  });
});

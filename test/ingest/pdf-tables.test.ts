/**
 * Tables without ruling lines in PDFs: columns kept in order under merged two-line headers, rows
 * rebuilt whatever order the generator wrote them in, and a table continued on the next page (its
 * header repeated) read as one table. Generated PDFs run everywhere; the shared corpus's real
 * government PDFs run when ../shared is present.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { PDFFont, PDFPage } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunkers/index.js';
import { parseFile } from '../../src/ingest/parsers/index.js';
import type { Block, ParsedDocument } from '../../src/ingest/types.js';

const tables = (d: ParsedDocument): Block[] => d.blocks.filter((b) => b.kind === 'table');

/** Column x positions (left edges) and cell widths are those of a typical report table. */
const COLS = { name: 72, type: 190, start: 280, end: 350, amount: 470 };
const HEADER = ['Name', 'Type', 'Period START', 'Period END', 'Amount'];
const DATA = Array.from({ length: 30 }, (_, i) => [
  `Contractor ${String.fromCharCode(65 + (i % 26))}${i + 1}`,
  i % 3 === 0 ? 'Grant' : 'Contract',
  `2021-${String((i % 12) + 1).padStart(2, '0')}-01`,
  `2022-${String((i % 12) + 1).padStart(2, '0')}-28`,
  `${(1250 + i * 317).toLocaleString('en-US')}.00`,
]);

type Order = 'rows' | 'right-to-left' | 'columns';

/**
 * A borderless table: header row (Name, Type, Period, Amount) with `START` / `END` under Period,
 * 12 rows a page over three pages, the header repeated on pages 2 and 3 under a "continued"
 * caption. `order` is the order the cells are written in each page's content stream.
 */
async function makeTablePdf(order: Order[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const put = (page: PDFPage, s: string, x: number, y: number, f: PDFFont = font, size = 9) => page.drawText(s, { x, y, size, font: f });
  const chunks = [DATA.slice(0, 12), DATA.slice(12, 24), DATA.slice(24)];
  chunks.forEach((rows, p) => {
    const page = pdf.addPage([612, 792]);
    let y = 720;
    if (p === 0) {
      put(page, 'Schedule of obligations for the year', 72, y, bold, 14);
      y -= 24;
      put(page, 'The table below lists every obligation recorded during the reporting period.', 72, y, font, 11);
    } else {
      put(page, 'Schedule of obligations (continued)', 72, y, bold, 11);
    }
    y -= 30;
    put(page, 'Name', COLS.name, y, bold);
    put(page, 'Type', COLS.type, y, bold);
    put(page, 'Period', COLS.start + 40, y, bold);
    put(page, 'Amount', COLS.amount + 20, y, bold);
    y -= 11;
    put(page, 'START', COLS.start, y, bold);
    put(page, 'END', COLS.end + 6, y, bold);
    y -= 16;
    const cell = (r: string[], c: number, yy: number) => {
      const xs = [COLS.name, COLS.type, COLS.start, COLS.end, COLS.amount + 50 - font.widthOfTextAtSize(r[4]!, 9)];
      put(page, r[c]!, xs[c]!, yy);
    };
    const ys = rows.map((_, i) => y - i * 13);
    if (order[p] === 'columns') {
      for (let c = 0; c < 5; c++) rows.forEach((r, i) => cell(r, c, ys[i]!));
    } else {
      rows.forEach((r, i) => {
        for (let k = 0; k < 5; k++) cell(r, order[p] === 'right-to-left' ? 4 - k : k, ys[i]!);
      });
    }
    put(page, `Page ${p + 1}`, 300, 40, font, 8);
  });
  return pdf.save();
}

describe('generated borderless two-line-header tables', () => {
  for (const order of [['rows', 'rows', 'rows'], ['right-to-left', 'columns', 'rows']] as Order[][]) {
    describe(`cells written ${order.join(' / ')}`, () => {
      let doc: ParsedDocument;
      beforeAll(async () => {
        doc = await parseFile(await makeTablePdf(order), 'schedule.pdf');
      });

      it('reads one table across the page breaks, header merged, repeated headers dropped', () => {
        const ts = tables(doc);
        expect(ts).toHaveLength(1);
        const t = ts[0]!;
        expect(t.header).toBe(true);
        expect(t.rows![0]).toEqual(HEADER);
        expect(t.rows!.slice(1)).toEqual(DATA);
        expect(t.positions!.map((p) => p[0])).toEqual([1, 2, 3]);
        // The "(continued)" caption went with the repeated header; the page-1 text stays.
        const texts = doc.blocks.filter((b) => b.kind !== 'table').map((b) => b.text).join('\n');
        expect(texts).toContain('The table below lists every obligation');
        expect(texts).not.toMatch(/continued/i);
        expect(texts).not.toContain('Contractor');
      });

      it('chunks as header: value sentences (naive) and - header: value rows (table)', () => {
        const naive = chunkDocument('naive', doc, { filename: 'schedule.pdf', parserConfig: {} });
        const tableChunks = naive.chunks.filter((c) => c.doc_type === 'table');
        expect(tableChunks.length).toBeGreaterThan(0);
        const all = tableChunks.map((c) => c.content).join('\n');
        expect(all).toContain('Name: Contractor A1; Type: Grant; Period START: 2021-01-01; Period END: 2022-01-28; Amount: 1,250.00');
        expect(all).not.toContain('Name: Name');
        const byRow = chunkDocument('table', doc, { filename: 'schedule.pdf', parserConfig: {} });
        expect(byRow.chunks).toHaveLength(DATA.length);
        expect(byRow.chunks[13]!.content).toBe(
          ['- Name: Contractor N14', '- Type: Contract', '- Period START: 2021-02-01 00:00:00', '- Period END: 2022-02-28 00:00:00', '- Amount: 5,371.00'].join('\n'),
        );
      });
    });
  }
});

const corpus = path.resolve(import.meta.dirname, '../../../shared/docs-corpus');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping real-PDF table tests: ${corpus} is absent (shared material, not part of the repo)`);

describe.skipIf(!haveCorpus)('real borderless tables (shared docs corpus)', () => {
  const parse = (f: string) => parseFile(new Uint8Array(readFileSync(path.join(corpus, f))), f);

  it('Federal Register: ESTIMATED COSTS (dot leaders, wrapped cells, two-line header) is one table across pages 5-6', async () => {
    const d = await parse('federal-register-2020-17221.pdf');
    const ts = tables(d);
    expect(ts).toHaveLength(1);
    const t = ts[0]!;
    expect(t.positions!.map((p) => p[0])).toEqual([5, 6]);
    expect(t.rows![0]).toEqual(['Action', 'Labor cost', 'Parts cost', 'Cost per product', 'Cost on U.S. operators']);
    expect(t.rows!.slice(1)).toEqual([
      ['FCC OPS installation and verification', '1 work-hour × $85 per hour = $85', '$0', '$85', '$6,205.'],
      ['AFM revisions', '1 work-hour × $85 per hour = $85', '$0', '$85', '$6,205.'],
      ['MDS installation and verification, INOP marker removal.', '1 work-hour × $85 per hour = $85', '$0', '$85', '$6,205.'],
      ['Stabilizer wiring change', 'Up to 79 work-hours × $85 per hour = Up to $6,715.', 'Up to $3,790', 'Up to $10,505', 'Up to $766,865.'],
      ['AOA sensor system test', '40 work-hours × $85 per hour = $3,400.', '$0', '$3,400', '$248,200.'],
    ]);
    // No cell text leaks into the running text, and no "Continued" caption is left.
    const body = d.blocks.filter((b) => b.kind === 'text').map((b) => b.text).join('\n');
    expect(body).not.toContain('work-hour ×');
    expect(body).not.toMatch(/ESTIMATED COSTS—Continued/);
  }, 60_000);

  it('NICS: group labels over their sub-columns, every column in order', async () => {
    const d = await parse('nics-background-checks-2015-11.pdf');
    const [t] = tables(d);
    const header = t!.rows![0]!;
    expect(header).toHaveLength(25);
    expect(header.slice(0, 7)).toEqual(['State / Territory', 'Permit', 'Handgun', 'Long Gun', '*Other', '**Multiple', 'Admin']);
    for (const [group, subs] of [
      ['Pre-Pawn', ['Handgun', 'Long Gun', '*Other']],
      ['Redemption', ['Handgun', 'Long Gun', '*Other']],
      ['Returned/Disposition', ['Handgun', 'Long Gun', '*Other']],
      ['Rentals', ['Handgun', 'Long Gun']],
      ['Private Sale', ['Handgun', 'Long Gun', '*Other']],
      ['Return to Seller - Private Sale', ['Handgun', 'Long Gun', '*Other']],
    ] as const) {
      const at = header.indexOf(`${group} ${subs[0]}`);
      expect(at, group).toBeGreaterThan(0);
      expect(header.slice(at, at + subs.length)).toEqual(subs.map((s) => `${group} ${s}`));
    }
    expect(header[24]).toBe('Totals');
    const totals = t!.rows!.find((r) => r[0] === 'Totals')!;
    expect(totals).toHaveLength(25);
    expect(totals[header.indexOf('Returned/Disposition *Other')]).toBe('44');
    expect(totals[header.indexOf('Private Sale Handgun')]).toBe('1,067');
    expect(totals[24]).toBe('2,236,457');
    // The notes under the table are text, not table rows.
    expect(t!.rows!.some((r) => r.join(' ').includes('Refers to frames'))).toBe(false);
  }, 60_000);
});

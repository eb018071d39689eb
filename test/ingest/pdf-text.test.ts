/**
 * PDF running text: spacing accents composed to NFC, and footnotes moved out of sentences they
 * would cut. Generated PDFs run everywhere; the shared corpus's Federal Register when ../shared is
 * present.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunkers/index.js';
import { parseFile } from '../../src/ingest/parsers/index.js';
import { composeDiacritics } from '../../src/ingest/parsers/pdf-text.js';
import type { Block, ParsedDocument } from '../../src/ingest/types.js';

const running = (d: ParsedDocument): Block[] => d.blocks.filter((b) => b.kind !== 'header' && b.kind !== 'footer');
const at = (d: ParsedDocument, s: string): number => running(d).findIndex((b) => b.text.includes(s));

describe('composeDiacritics()', () => {
  it.each([
    ['Ageˆncia Nacional de Aviac¸a˜o Civil', 'Agência Nacional de Aviação Civil'],
    ['Jose´ Mu¨ller, Sa˜o Paulo, c¸a', 'José Müller, São Paulo, ça'],
    ['naı¨ve resume´', 'naïve resumé'],
    ['ˆetre', 'être'], // accent before its letter, at a word start
    ['Pr\u030Ci\u0301klad', 'P\u0159\u00EDklad'], // combining marks: NFC
  ])('%s → %s', (input, out) => {
    expect(composeDiacritics(input)).toBe(out);
  });

  it.each([
    'don´t, I´m, it´s', // ´ as an apostrophe
    'O´Brien',
    '``quoted´´ and `code`',
    'x ˆ 2 and 5˜10',
    'plain ASCII text',
  ])('leaves %s alone', (s) => {
    expect(composeDiacritics(s)).toBe(s);
  });
});

/** Body 11 pt; footnotes 8 pt at the page foot (written first in the stream on page 2, as TeX does). */
async function makeNotesPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const body = (page: ReturnType<typeof pdf.addPage>, lines: string[], y: number) =>
    lines.forEach((l, i) => page.drawText(l, { x: 72, y: y - i * 14, size: 11, font }));
  const note = (page: ReturnType<typeof pdf.addPage>, lines: string[], y: number) =>
    lines.forEach((l, i) => page.drawText(l, { x: 72, y: y - i * 10, size: 8, font }));
  const p1 = pdf.addPage([612, 792]);
  body(p1, ['The Agência Nacional de Aviação Civil reviewed the', 'proposal with the other authorities.'], 700);
  body(p1, Array.from({ length: 30 }, (_, i) => (i < 29 ? `Line ${i + 1} of the long discussion that runs down the page and` : 'the committee then decided to')), 650);
  note(p1, ['1 The committee met twice; the minutes are in the docket.', 'They were published later.'], 110);
  const p2 = pdf.addPage([612, 792]);
  note(p2, ['2 A second note at the foot of page two.'], 100);
  body(p2, ['continue the review in the spring, after the comment period.', 'A new paragraph starts here and ends here.'], 700);
  body(p2, ['1. The first step of the plan is at the foot of the page.', '2. The second step follows it.'], 160);
  // Spacing accents as TeX fonts draw them: the accent after its letter.
  p2.drawText('Ageˆncia Nacional de Aviac¸a˜o Civil', { x: 72, y: 600, size: 11, font });
  return pdf.save();
}

describe('generated PDF with footnotes and spacing accents', () => {
  it('keeps a sentence whole across the page break; notes follow it', async () => {
    const d = await parseFile(await makeNotesPdf(), 'notes.pdf');
    const end = at(d, 'the committee then decided to');
    const cont = at(d, 'continue the review in the spring');
    const n1 = at(d, '1 The committee met twice');
    const n2 = at(d, '2 A second note');
    expect(end).toBeGreaterThanOrEqual(0);
    expect(cont).toBe(end + 1);
    expect(n1).toBeGreaterThan(cont);
    expect(running(d)[n1]!.text).toBe('1 The committee met twice; the minutes are in the docket.\nThey were published later.');
    // Page 2's note follows page 2's text; body-size numbered lines stay where they are.
    const step = at(d, '1. The first step');
    expect(step).toBeGreaterThan(cont);
    expect(n2).toBeGreaterThan(step);
    expect(d.blocks.map((b) => b.text).join('\n')).toContain('Agência Nacional de Aviação Civil');
    // Chunked: the sentence's halves meet, with no note between them.
    const { chunks } = chunkDocument('naive', d, { filename: 'notes.pdf', parserConfig: { chunk_token_num: 2048 } });
    expect(chunks.some((c) => /decided to\s+continue the review/.test(c.content))).toBe(true);
  });
});

const corpus = path.resolve(import.meta.dirname, '../../../shared/docs-corpus');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping real-PDF text tests: ${corpus} is absent (shared material, not part of the repo)`);

describe.skipIf(!haveCorpus)('Federal Register 2020-17221 (shared docs corpus)', () => {
  let doc: ParsedDocument;
  const load = async () => (doc ??= await parseFile(new Uint8Array(readFileSync(path.join(corpus, 'federal-register-2020-17221.pdf'))), 'fr.pdf'));

  it('composes TeX-style accents', async () => {
    const d = await load();
    const all = d.blocks.map((b) => b.text).join('\n');
    expect(all).toContain('Agência Nacional de\nAviação Civil (ANAC) Brazil');
    expect(all).not.toMatch(/[\u02C6\u02DC\u00B8]/);
  }, 60_000);

  it('moves footnotes out of sentences that cross a page or column', async () => {
    const d = await load();
    // Page 1 ends "…takeoff from Soekarno-"; page 2's stream starts with footnotes 1-9.
    const p1End = at(d, 'accident after takeoff from Soekarno-');
    expect(at(d, 'Hatta International Airport in Jakarta')).toBe(p1End + 1);
    const notes = ['1 Preliminary KNKT', '2 The flight control system for 737 MAX', '4 The angle of attack (or AOA)', '9 An AOA disagree alert'];
    for (const n of notes) {
      const i = at(d, n);
      expect(i, n).toBeGreaterThan(p1End);
      expect(d.blocks.find((b) => b.text.startsWith(n))!.page, n).toBe(2);
    }
    // Page 2 ends mid-sentence ("…also proposes to"); page 3 goes on "require operators to…", and
    // the notes wait until that sentence ends.
    const p2End = at(d, 'the FAA also proposes to');
    expect(at(d, 'require operators to conduct an AOA')).toBe(p2End + 1);
    expect(at(d, '1 Preliminary KNKT')).toBeGreaterThan(p2End + 1);
    // A note continued in the next column is one note; the next note is its own block.
    expect(at(d, 'altitude and airspeed, and would be limited')).toBe(at(d, '12 The magnitude of the command varies'));
    expect(at(d, '9 An AOA disagree alert')).toBe(at(d, '8 MCAS is a function') + 1);
  }, 60_000);
});

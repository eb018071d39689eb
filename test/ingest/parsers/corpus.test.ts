/**
 * Every file of the shared robustness corpus either parses with sensible content or fails with a
 * specific ParseError. All files are parsed concurrently in one batch, so a crash, hang or leak in
 * one would show up in the others.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseFile } from '../../../src/ingest/parsers/index.js';
import { ParseError } from '../../../src/ingest/types.js';
import type { Block, ParsedDocument } from '../../../src/ingest/types.js';

const dir = path.resolve(import.meta.dirname, '../../../../shared/docs-corpus');
const have = existsSync(dir);
if (!have) console.warn(`skipping corpus tests: ${dir} is absent (it is shared material, not part of the repo)`);

const text = (d: ParsedDocument) => d.blocks.map((b) => b.text).join('\n');
const ofKind = (d: ParsedDocument, k: Block['kind']) => d.blocks.filter((b) => b.kind === k);

describe.skipIf(!have)('parseFile() on the shared corpus', () => {
  const results = new Map<string, PromiseSettledResult<ParsedDocument>>();

  beforeAll(async () => {
    const files = readdirSync(dir).filter((f) => f !== 'MANIFEST.md');
    const settled = await Promise.allSettled(files.map((f) => parseFile(new Uint8Array(readFileSync(path.join(dir, f))), f)));
    files.forEach((f, i) => results.set(f, settled[i]!));
  }, 120_000);

  const ok = (f: string): ParsedDocument => {
    const r = results.get(f);
    if (!r) throw new Error(`${f} was not parsed`);
    if (r.status === 'rejected') throw new Error(`${f} failed: ${(r.reason as Error).message}`);
    return r.value;
  };
  const failure = (f: string): unknown => {
    const r = results.get(f);
    if (r?.status !== 'rejected') throw new Error(`${f} was expected to fail`);
    return r.reason;
  };

  it('settles every file, each as a document or a ParseError', () => {
    expect(results.size).toBe(15);
    for (const [f, r] of results) {
      if (r.status === 'rejected') expect(r.reason, f).toBeInstanceOf(ParseError);
    }
  });

  it('survives truncated and mislabelled copies: a document or a ParseError, never another error', async () => {
    const files = readdirSync(dir).filter((f) => f !== 'MANIFEST.md');
    const cases = files.flatMap((f) => {
      const b = new Uint8Array(readFileSync(path.join(dir, f)));
      return [
        [b.subarray(0, b.length >> 1), f],
        [b.subarray(b.length >> 1), f],
        [b, 'mislabelled.pdf'],
        [b, 'mislabelled.xlsx'],
        [b, 'mislabelled.eml'],
      ] as const;
    });
    const settled = await Promise.allSettled(cases.map(([b, name]) => parseFile(b, name, { ocr: false, timeoutMs: 30_000 })));
    settled.forEach((r, i) => {
      if (r.status === 'rejected') expect(r.reason, `${cases[i]![1]} #${i}`).toBeInstanceOf(ParseError);
    });
    expect(settled.filter((r) => r.status === 'rejected').length).toBeGreaterThan(10);
  }, 90_000);

  it.each([
    ['empty.pdf', 'File is empty'],
    ['invalid-header-eof-only.pdf', 'Invalid PDF structure'],
    ['libreoffice-writer-password.pdf', 'PDF is encrypted (password required)'],
  ])('fails %s with "%s"', (f, msg) => {
    const e = failure(f);
    expect(e).toBeInstanceOf(ParseError);
    expect((e as Error).message).toBe(msg);
  });

  it('reads the federal register: 15 pages, positions, running headers apart from text', () => {
    const d = ok('federal-register-2020-17221.pdf');
    expect(d.format).toBe('pdf');
    expect(d.pages).toBe(15);
    const body = ofKind(d, 'text');
    expect(body.map((b) => b.text).join(' ')).toContain('The FAA proposes to');
    expect(text(d).length).toBeGreaterThan(50_000);
    expect(new Set(d.blocks.map((b) => b.page))).toEqual(new Set(Array.from({ length: 15 }, (_, i) => i + 1)));
    for (const b of d.blocks) {
      const [p, x0, x1, top, bottom] = b.positions![0]!;
      expect(p).toBe(b.page);
      expect(x1).toBeGreaterThanOrEqual(x0);
      expect(bottom).toBeGreaterThan(top);
      expect(bottom).toBeLessThanOrEqual(792 + 1);
    }
    const headers = ofKind(d, 'header').map((b) => b.text);
    expect(headers.some((h) => h.includes('Federal Register / Vol. 85, No. 152'))).toBe(true);
    expect(body.some((b) => b.text.includes('Federal Register / Vol. 85, No. 152 / Thursday'))).toBe(false);
  });

  it('reads the NICS table as a grid of numbers', () => {
    const d = ok('nics-background-checks-2015-11.pdf');
    const [table] = ofKind(d, 'table');
    expect(table).toBeDefined();
    const rows = table!.rows!;
    expect(rows.length).toBeGreaterThan(50);
    expect(rows[0]!.length).toBeGreaterThanOrEqual(20);
    const alabama = rows.find((r) => r[0] === 'Alabama')!;
    expect(alabama.slice(1, 4)).toEqual(['18,870', '23,022', '22,650']);
    expect(alabama[alabama.length - 1]).toBe('71,137');
    // Thousands separated by a space stay one cell.
    expect(rows.find((r) => r[0] === 'California')![1]).toBe('98 452');
    const numeric = rows.flat().filter((c) => /^\d[\d, ]*$/.test(c)).length;
    expect(numeric).toBeGreaterThan(1000);
    expect(table!.header).toBe(true);
  });

  it('OCRs the scanned Huckleberry Finn page', () => {
    const d = ok('huckfinn-c02-22-scanned.pdf');
    const t = text(d).toLowerCase();
    for (const w of ['chapter', 'tip-toeing', 'kitchen', 'scratch']) expect(t).toContain(w);
    expect(d.warnings?.join(' ')).toMatch(/OCR/);
    expect(d.blocks.every((b) => b.positions?.[0]?.[0] === 1)).toBe(true);
  });

  it('reads the 872-page handbook: headings, tables, page breaks', () => {
    const d = ok('us-trustee-handbook-872p.docx');
    const headings = ofKind(d, 'heading');
    expect(headings.length).toBeGreaterThan(200);
    expect(headings.some((h) => /INTRODUCTION/.test(h.text))).toBe(true);
    expect(ofKind(d, 'table').length).toBe(2);
    expect(ofKind(d, 'table').every((t) => t.rows!.length > 1)).toBe(true);
    expect(Math.max(...d.blocks.map((b) => b.page ?? 0))).toBeGreaterThan(40);
    expect(text(d).length).toBeGreaterThan(500_000);
  });

  it('reads the Mozilla article without Wikipedia chrome', () => {
    const d = ok('wikipedia-mozilla.html');
    expect(d.title).toBe('Mozilla - Wikipedia');
    const t = text(d);
    expect(t).toContain('Mozilla is a free-software community, created in 1998 by members of Netscape');
    expect(ofKind(d, 'heading').map((h) => h.text)).toContain('History');
    for (const chrome of ['Navigation menu', 'Personal tools', 'Jump to:', 'Main page', 'Random article', 'What links here']) {
      expect(t).not.toContain(chrome);
    }
    expect(ofKind(d, 'table').some((b) => b.text.includes('Open-source software'))).toBe(true);
  });

  it('reads the inline-XBRL 10-K without its hidden facts', () => {
    const d = ok('sec-10k-excerpt.html');
    const t = text(d);
    expect(t).toContain('Galaxy Gaming, Inc.');
    expect(t).toContain('TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d)');
    expect(t).toContain('☐');
    expect(t).not.toContain('dei:');
  });

  it('reads the README as Markdown although it starts with HTML', () => {
    const d = ok('awesome-readme.md');
    expect(d.format).toBe('markdown');
    expect(ofKind(d, 'list').length).toBeGreaterThan(600);
    expect(ofKind(d, 'heading').map((h) => h.text)).toEqual(expect.arrayContaining(['Contents', 'Platforms', 'Programming Languages']));
    expect(text(d)).not.toMatch(/<div|<img/);
  });

  it('reads country-codes.csv: 250 rows (header + 249) × 56 columns, scripts intact', () => {
    const d = ok('country-codes.csv');
    const [t] = ofKind(d, 'table');
    expect(t!.rows!.length).toBe(250);
    expect(t!.header).toBe(true);
    expect(new Set(t!.rows!.map((r) => r.length))).toEqual(new Set([56]));
    const flat = t!.rows!.flat();
    expect(flat).toContain('أفغانستان');
    expect(flat).toContain('阿富汗伊斯兰共和国');
    expect(flat).toContain('Исламская Республика Афганистан');
    expect(flat.some((c) => c.includes(', ') && c.length > 0)).toBe(true);
  });

  it('reads the Vodafone workbook: sheet name, merged-range text, no empty rows', () => {
    const d = ok('vodafone-kpis.xlsx');
    const tables = ofKind(d, 'table');
    expect(tables.every((t) => t.sheet === 'Index')).toBe(true);
    expect(tables.every((t) => t.rows!.every((r) => r.some((c) => c !== '')))).toBe(true);
    // Section labels are headings above their tables, not table rows.
    expect(ofKind(d, 'heading')[0]).toMatchObject({ text: 'Financial performance', sheet: 'Index' });
    expect(tables.map((t) => t.text).join('\n')).toContain('Mobile customers');
  });

  it('reads RFC 5322 with form feeds as pages (57 feeds, the last one closing page 57)', () => {
    const d = ok('rfc5322.txt');
    expect(d.pages).toBe(57);
    expect(text(d)).toContain('Internet Message Format');
    expect(Math.max(...d.blocks.map((b) => b.page!))).toBe(57);
    expect(d.blocks.find((b) => b.text.includes('[Page 2]'))!.page).toBe(2);
  });

  it('reads the AWS newsletter headers and plain body', () => {
    const d = ok('aws-newsletter.eml');
    expect(d.meta?.['subject']).toBe('AWS Online Conference | Last chance to register for Innovate - Every Application Edition');
    expect(d.meta?.['from']).toContain('email@domain.com');
    expect(d.meta?.['date']).toBe('2022-10-03T06:59:28.000Z');
    expect(text(d)).toContain('Learn how the cloud is accelerating innovation');
  });

  it('reads the Outlook reply and lists its inline image', () => {
    const d = ok('reply-with-inline-image.eml');
    expect(d.meta?.['subject']).toBe('RE: Random Expo Expo 2023');
    expect(d.meta?.['from']).toContain('Someone Real');
    expect(text(d)).toContain('Did you get a chance to review my previous email?');
    const img = d.attachments?.find((a) => a.filename === 'image001.jpg');
    expect(img).toMatchObject({ contentType: 'image/jpeg', size: 4944 });
    // The logo is OCR'd like any image attachment.
    expect(img!.parsed?.format).toBe('image');
  });
});

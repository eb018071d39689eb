import { describe, expect, it } from 'vitest';
import { capLength, splitSentences, units } from '../../src/text/index.js';

const texts = (s: string) => splitSentences(s).map((x) => x.text);

describe('splitSentences()', () => {
  it('splits prose after . ! ? but not after abbreviations, initials or inside decimals', () => {
    expect(texts('Dr. Smith arrived at 3.5 p.m. on Monday. He said e.g. apples are fine. The U.S. Army agreed! Was it J. R. Smith? No, it was not.')).toEqual([
      'Dr. Smith arrived at 3.5 p.m. on Monday.',
      'He said e.g. apples are fine.',
      'The U.S. Army agreed!',
      'Was it J. R. Smith?',
      'No, it was not.',
    ]);
    // Version numbers, prices and lower-case continuations stay inside their sentence.
    expect(texts('Version 1.0 used the engine of Firefox 3.6. It cost $1.5 million, i.e. a lot. All done.')).toEqual([
      'Version 1.0 used the engine of Firefox 3.6.',
      'It cost $1.5 million, i.e. a lot.',
      'All done.',
    ]);
  });

  it('keeps reference marks and closing quotes with their sentence; a lone figure joins the sentence before', () => {
    expect(texts('Firefox has 10% of usage.[43][44] "It is fast." She said so. The value was $70,923,698.')).toEqual([
      'Firefox has 10% of usage.[43][44]',
      '"It is fast."',
      'She said so.',
      'The value was $70,923,698.',
    ]);
    expect(texts('State the aggregate market value. $70,923,698.')).toEqual(['State the aggregate market value. $70,923,698.']);
  });

  it('splits CJK text after 。！？ and keeps CJK lines joined without spaces', () => {
    expect(texts('今天天气很好。我们去公园吧！你去吗？好的')).toEqual(['今天天气很好。', '我们去公园吧！', '你去吗？', '好的']);
    expect(texts('本法适用于\n全国。第二条')).toEqual(['本法适用于全国。', '第二条']);
  });

  it('joins hard-wrapped lines (PDF columns, RFC text) and repairs words cut at the line end', () => {
    expect(texts('This line is hard\nwrapped across several\nlines of a column. And a second\nsentence with lower-\nlevel words.')).toEqual([
      'This line is hard wrapped across several lines of a column.',
      'And a second sentence with lower-level words.',
    ]);
  });

  it('keeps list items, headings and titles on their own', () => {
    const s = splitSentences('# Title\n\n- first item\n- second item that is\n  continued here\n* third\n\n1. one\n2) two\nValues\nAccording to the manifesto, it is good.');
    expect(s.map((x) => x.text)).toEqual([
      '# Title',
      '- first item',
      '- second item that is continued here',
      '* third',
      '1. one',
      '2) two',
      'Values',
      'According to the manifesto, it is good.',
    ]);
    expect(s.slice(0, 7).every((x) => x.kind === 'line')).toBe(true);
    expect(s[7]!.kind).toBe('prose');
  });

  it('turns markdown and HTML tables into rows labelled by their header', () => {
    expect(texts('| Name | Age |\n|---|---|\n| Ann | 31 |\n| Bob | 42 |')).toEqual(['Name | Age', 'Name: Ann; Age: 31', 'Name: Bob; Age: 42']);
    const html = '<table><tr><th>Title</th><th>Symbol</th></tr><tr><td>Common stock</td><td>GLXZ</td></tr></table><p>After the table. Another&nbsp;one &amp; more.</p>';
    expect(texts(html)).toEqual(['Title | Symbol', 'Title: Common stock; Symbol: GLXZ', 'After the table.', 'Another one & more.']);
  });

  it("keeps RAGFlow table records whole, one per record, with their fields", () => {
    const s = splitSentences('State: Guam; Permit: 0; Totals: 171; State: Hawaii; Permit: 1,248; Totals: 1,252');
    expect(s.map((x) => x.text)).toEqual(['State: Guam; Permit: 0; Totals: 171', 'State: Hawaii; Permit: 1,248; Totals: 1,252']);
    expect(s[1]).toMatchObject({ kind: 'record', fields: ['State: Hawaii', 'Permit: 1,248', 'Totals: 1,252'] });
    expect(splitSentences('FIFA：KEN; Dial：254; Capital：Nairobi; Continent：AF')[0]).toMatchObject({ kind: 'record' });
  });

  it('cuts very long sentences at ; then , then a space', () => {
    const long = `Start ${'word, '.repeat(150)}end.`;
    const pieces = splitSentences(long, { maxChars: 200 });
    expect(pieces.length).toBeGreaterThan(3);
    for (const p of pieces) expect(p.text.length).toBeLessThanOrEqual(200);
    expect(pieces.map((p) => p.text).join(' ').replace(/\s+/g, ' ')).toBe(long.replace(/\s+/g, ' ').trim());
    expect(capLength('a; b c d e f g h', 6)).toEqual(['a; b', 'c d e', 'f g h']);
    expect(capLength('alpha; beta gamma', 12)).toEqual(['alpha;', 'beta gamma']);
  });

  it('is empty for empty text', () => {
    expect(splitSentences('')).toEqual([]);
    expect(splitSentences('  \n\n ')).toEqual([]);
  });
});


describe('units()', () => {
  it('keeps a display formula as one unit: not joined with the prose, not split at a "." inside it', () => {
    const t = 'The energy is:\n$$\nE = m c^2 . x_1 + x_2\n$$\nwhere m is the mass. \\[ a . b \\] ends it.';
    expect(texts(t)).toEqual(['The energy is:', '$$ E = m c^2 . x_1 + x_2 $$', 'where m is the mass.', '\\[ a . b \\] ends it.']);
    expect(units(t, { asWritten: true }).map((u) => [u.kind, u.text])).toEqual([
      ['prose', 'The energy is:'], ['pre', '$$\nE = m c^2 . x_1 + x_2\n$$'], ['prose', 'where m is the mass. \\[ a . b \\] ends it.'],
    ]);
    // An opening without its close within 60 lines is text.
    expect(units('$$ 5 is the price.\nCheap at that.', { asWritten: true }).map((u) => u.kind)).not.toContain('pre');
  });

  it('keeps text as written for chunking: aligned grammar lines with their continuation, tables, records', () => {
    const rfc = [
      '   The rule is:',
      '',
      '   addr-spec       =   local-part "@" domain',
      '   ctext           =   %d33-39 /          ; Printable US-ASCII',
      '                       %d42-91 /          ;  characters not including',
      '',
      '   | Field | Min |',
      '   +-------+-----+',
      '   | from  | 1   |',
    ].join('\n');
    expect(units(rfc, { asWritten: true })).toEqual([
      { text: 'The rule is:', kind: 'prose', block: 0 },
      { text: '   addr-spec       =   local-part "@" domain\n   ctext           =   %d33-39 /          ; Printable US-ASCII\n                       %d42-91 /          ;  characters not including', kind: 'pre', block: 1 },
      { text: '   | Field | Min |\n   +-------+-----+\n   | from  | 1   |', kind: 'pre', block: 2 },
    ]);
    // For quoting, aligned lines are quoted one by one and table borders dropped.
    expect(splitSentences(rfc).map((s) => s.text)).toEqual([
      'The rule is:',
      'addr-spec = local-part "@" domain',
      'ctext = %d33-39 / ; Printable US-ASCII',
      '%d42-91 / ; characters not including',
      'Field | Min',
      'from | 1',
    ]);
  });

  it('drops the frame of a comment box and joins a lone capitalised word with its sentence', () => {
    const box = [
      '* 6. Disclaimer of Warranty *',
      '* Covered Software is provided under this License on an "as is" *',
      '* basis, without warranty of any kind, either expressed or implied. *',
    ].join('\n');
    expect(splitSentences(box).map((s) => s.text)).toEqual([
      '6. Disclaimer of Warranty',
      'Covered Software is provided under this License on an "as is" basis, without warranty of any kind, either expressed or implied.',
    ]);
    expect(splitSentences('a CRLF may be inserted before any\nWSP. Each field follows.').map((s) => s.text)).toEqual([
      'a CRLF may be inserted before any WSP.',
      'Each field follows.',
    ]);
  });

  it('never quotes the entries of a table of contents', () => {
    expect(splitSentences('1. Introduction . . . . . . . . 4\n1.1. Scope . . . . . . . . 4\n\nThis document specifies a format.').map((s) => s.text)).toEqual([
      'This document specifies a format.',
    ]);
  });
});

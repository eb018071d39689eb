import { describe, expect, it } from 'vitest';
import { chunkDocument, effectiveParserConfig } from '../../../src/ingest/chunkers/index.js';
import { countTokens } from '../../../src/text/index.js';
import { ctx, doc, heading, tableBlock, text, txt } from './helpers.js';

const contents = (r: { chunks: { content: string }[] }) => r.chunks.map((c) => c.content);
const naive = (d: Parameters<typeof chunkDocument>[1], pc: Record<string, unknown>) => chunkDocument('naive', d, ctx(pc));

// Any delimiter but the default "\n" asks for RAGFlow's own splitting: TxtParser for plain text,
// naive_merge for blocks. '\n!?' splits these texts exactly as "\n" does in RAGFlow.
const RAGFLOW = '\n!?';

describe("naive — RAGFlow's TxtParser (a delimiter other than the default)", () => {
  it('appends pieces while tokens ≤ chunk_token_num and starts a new chunk once exceeded', () => {
    // TxtParser: "a"(1) "\n"(2) "b"(3>2 after) → "a\nb"; then "\n" opens "\nc\n"; then "d".
    expect(contents(naive(txt('a\nb\nc\nd'), { chunk_token_num: 2, delimiter: RAGFLOW }))).toEqual(['\na\nb', '\n\nc\n', '\nd']);
  });

  it('overshoots: the piece that crosses the limit stays in the chunk', () => {
    // "one\ntwo" is 3 tokens (≤ 3), so the following "\n" still joins: 4 tokens.
    const r = naive(txt('one\ntwo\nthree\nfour'), { chunk_token_num: 3, delimiter: RAGFLOW });
    expect(contents(r)).toEqual(['\none\ntwo\n', '\nthree\nfour']);
    expect(countTokens(r.chunks[0]!.content)).toBeGreaterThan(3);
  });

  it('keeps one piece longer than chunk_token_num whole', () => {
    const line = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    // The long line is over the limit on its own, so even the "\n" after it opens the next chunk.
    expect(contents(naive(txt(`${line}\nshort`), { chunk_token_num: 10, delimiter: RAGFLOW }))).toEqual([`\n${line}`, '\n\nshort']);
  });

  it('reads the literal backslash-n delimiter as a newline', () => {
    const a = contents(naive(txt('a\nb\nc\nd'), { chunk_token_num: 2, delimiter: '\\n!?' }));
    expect(a).toEqual(['\na\nb', '\n\nc\n', '\nd']);
  });

  it('splits on each character of the delimiter', () => {
    expect(contents(naive(txt('a;b!c'), { chunk_token_num: 1, delimiter: ';!' }))).toEqual(['\na;', '\nb!', '\nc']);
  });

  it('with backtick delimiters makes one chunk per piece, ignoring chunk_token_num', () => {
    expect(contents(naive(txt('one##two##three'), { chunk_token_num: 512, delimiter: '`##`' }))).toEqual(['\none', '\ntwo', '\nthree']);
    // Other delimiter characters no longer split: only the custom one does.
    expect(contents(naive(txt('x##y\nz'), { chunk_token_num: 512, delimiter: '\n`##`' }))).toEqual(['\nx', '\ny\nz']);
  });

  it('splits Chinese text on full-width delimiters', () => {
    // "第一句话" is 5 tokens: at limit 5 its "。" still joins it.
    expect(countTokens('第一句话')).toBe(5);
    const r = naive(txt('第一句话。第二句话。第三句话。'), { chunk_token_num: 5, delimiter: '。' });
    expect(contents(r)).toEqual(['\n第一句话。', '\n第二句话。', '\n第三句话。']);
    // At 4 the sentence alone exceeds the limit, so each "。" opens the next chunk.
    const r4 = naive(txt('第一句话。第二句话。第三句话。'), { chunk_token_num: 4, delimiter: '。' });
    expect(contents(r4)).toEqual(['\n第一句话', '\n。第二句话', '\n。第三句话', '\n。']);
  });

  it('gives an empty document zero chunks', () => {
    expect(naive(doc('text', []), {}).chunks).toEqual([]);
    expect(naive(txt('\n\n   \n'), { chunk_token_num: 8 }).chunks).toEqual([]);
  });

});

describe('naive — text as people wrote it (the default delimiter)', () => {
  const wrapped = 'The first paragraph is hard\nwrapped at a narrow width and\nreads on. It has two sentences.\n\nThe second paragraph follows after\na blank line.';

  it('defaults to 512 tokens: hard-wrapped lines joined, paragraphs kept apart by a blank line', () => {
    expect(contents(naive(txt(wrapped), {}))).toEqual([
      'The first paragraph is hard wrapped at a narrow width and reads on. It has two sentences.\n\nThe second paragraph follows after a blank line.',
    ]);
    // Short lines without punctuation read as one wrapped line; a capitalised short line after one starts a new line.
    expect(contents(naive(txt('a\nb\nc'), {}))).toEqual(['a b c']);
    expect(contents(naive(txt('Apples\nBananas\nCherries'), {}))).toEqual(['Apples\nBananas\nCherries']);
  });

  it('ends every chunk at a paragraph or sentence end within chunk_token_num', () => {
    const para = (i: number) => `Paragraph ${i} opens here. It goes on for a while, as paragraphs do.\nIts last sentence ends it.`;
    const d = txt(Array.from({ length: 12 }, (_, i) => para(i)).join('\n\n'));
    for (const limit of [16, 40, 64]) {
      const r = naive(d, { chunk_token_num: limit });
      expect(r.chunks.length).toBeGreaterThan(1);
      for (const c of r.chunks) {
        expect(countTokens(c.content)).toBeLessThanOrEqual(limit);
        expect(c.content).toMatch(/\.$/);
        expect(c.content).toMatch(/^(?:Paragraph \d+|It|Its)/);
      }
      // Nothing lost, nothing repeated.
      expect(contents(r).join(' ').split(/\s+/)).toEqual(d.blocks[0]!.text.split(/\s+/));
    }
    // A paragraph shorter than the budget is never cut.
    expect(contents(naive(d, { chunk_token_num: 40 })).every((c) => c.split('\n\n').every((p) => /^Paragraph \d+ opens.*ends it\.$/.test(p)))).toBe(true);
  });

  it('keeps a heading, and a line that introduces a list, with what follows', () => {
    const d = doc('markdown', [heading('Intro', 1), text('one two three'), heading('Next', 2), text('four five six')]);
    expect(contents(naive(d, { chunk_token_num: 8 }))).toEqual(['# Intro\none two three', '## Next\nfour five six']);
    const list = doc('markdown', [text('Alpha beta gamma delta.'), text('The options are:'), { kind: 'list', text: 'first option' }, { kind: 'list', text: 'second option' }]);
    // 6 + 1 + 4 tokens fit 11, but the introduction would end the chunk: it moves on with its list.
    expect(contents(naive(list, { chunk_token_num: 11 }))).toEqual(['Alpha beta gamma delta.', 'The options are:\n\nfirst option\nsecond option']);
  });

  it('indexes and embeds a chunk that goes on under a heading with that heading, its content as written', () => {
    const para = (i: number) => text(`Paragraph ${i} of the section says a few more words about tilde ranges.`);
    const d = doc('markdown', [heading('Tilde Ranges', 2), para(1), para(2), para(3), heading('Caret Ranges', 2), para(4)]);
    const r = naive(d, { chunk_token_num: 24 });
    expect(contents(r)).toEqual([
      '## Tilde Ranges\nParagraph 1 of the section says a few more words about tilde ranges.',
      'Paragraph 2 of the section says a few more words about tilde ranges.',
      'Paragraph 3 of the section says a few more words about tilde ranges.',
      '## Caret Ranges\nParagraph 4 of the section says a few more words about tilde ranges.',
    ]);
    // The second and third chunks do not hold their heading: search finds them, and their vectors are made, with it.
    for (const c of r.chunks.slice(1, 3)) expect(c).toMatchObject({ indexText: `Tilde Ranges\n${c.content}`, embedText: `Tilde Ranges\n${c.content}` });
    // A chunk that starts with its heading, or text under no heading, is indexed as it reads.
    expect(r.chunks[0]!.indexText).toBeUndefined();
    expect(r.chunks[3]!.indexText).toBeUndefined();
    expect(naive(doc('markdown', [para(1), para(2)]), { chunk_token_num: 20 }).chunks.every((c) => c.indexText === undefined)).toBe(true);
    // With overlapped_percent a chunk starts with the last sentence of the one before: it stands under the same heading.
    const short = (i: number) => text(`Paragraph ${i} of the section says a few more words about tilde ranges. It ends here.`);
    const lapped = naive(doc('markdown', [heading('Tilde Ranges', 2), short(1), short(2), short(3)]), { chunk_token_num: 30, overlapped_percent: 30 }).chunks;
    const goesOn = lapped.filter((c) => c.content.startsWith('It ends here.\n\nParagraph'));
    expect(goesOn.length).toBe(2);
    for (const c of goesOn) expect(c.indexText).toBe(`Tilde Ranges\n${c.content}`);
  });

  it('keeps list items whole and never cuts a code or grammar line', () => {
    const items = Array.from({ length: 6 }, (_, i) => ({ kind: 'list' as const, text: `item ${i} has a few words in it` }));
    const r = naive(doc('markdown', items), { chunk_token_num: 20 });
    expect(r.chunks.length).toBeGreaterThan(1);
    expect(contents(r).flatMap((c) => c.split('\n'))).toEqual(items.map((i) => i.text));
    const code = Array.from({ length: 8 }, (_, i) => `const value${i} = compute(${i}, "x");`).join('\n');
    const rc = naive(doc('markdown', [{ kind: 'code', text: code }]), { chunk_token_num: 30 });
    expect(rc.chunks.length).toBeGreaterThan(1);
    for (const c of contents(rc)) {
      expect(c).toMatch(/^```\n[\s\S]*\n```$/);
      expect(countTokens(c)).toBeLessThanOrEqual(30);
    }
    expect(contents(rc).flatMap((c) => c.split('\n').filter((l) => l !== '```'))).toEqual(code.split('\n'));
    // Lines aligned by hand (an RFC grammar) stay lines, with their continuation.
    const abnf = 'The rule is:\n\n   addr-spec       =   local-part "@" domain\n   local-part      =   dot-atom / quoted-string /\n                       obs-local-part\n\nIt ends here.';
    expect(contents(naive(txt(abnf), {}))).toEqual([
      'The rule is:\n\n   addr-spec       =   local-part "@" domain\n   local-part      =   dot-atom / quoted-string /\n                       obs-local-part\n\nIt ends here.',
    ]);
  });

  it('keeps a display formula whole, with its lines, apart from the prose around it', () => {
    const formula = '$$\nE = m c^2 + \\frac{1}{2} m v^2 . x_1 + x_2 + x_3 + x_4 + x_5\n$$';
    const equation = '\\begin{equation}\n  a^2 + b^2 = c^2 . \\quad n > 2\n\\end{equation}';
    const d = txt(`The energy is given by the formula below. It is well known.\n\n${formula}\n\nThe second paragraph says more. It ends here.\nThe theorem states:\n${equation}\nfor every right triangle.`);
    // (The formulas count 42 and 32 tokens.)
    for (const limit of [48, 64]) {
      const chunks = contents(naive(d, { chunk_token_num: limit }));
      // Each formula is in one chunk, as written (its lines and markup), never cut at its " . ".
      expect(chunks.filter((c) => c.includes(formula))).toHaveLength(1);
      expect(chunks.filter((c) => c.includes(equation))).toHaveLength(1);
      for (const c of chunks) expect(countTokens(c)).toBeLessThanOrEqual(limit);
    }
    // A formula longer than the budget is cut only at its line ends.
    const long = `$$\n${Array.from({ length: 6 }, (_, i) => `x_${i} = y_${i} + z_${i} \\\\`).join('\n')}\n$$`;
    const parts = contents(naive(txt(long), { chunk_token_num: 24 }));
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flatMap((c) => c.split('\n'))).toEqual(long.split('\n'));
  });

  it('joins a paragraph that a page or column break cut in two, with its positions', () => {
    const d = doc('pdf', [
      text('The airplane departed from Soekarno-', { page: 1, positions: [[1, 10, 100, 700, 720]] }),
      text('Hatta airport in the\nmorning, with its crew.', { page: 2, positions: [[2, 10, 100, 20, 40]] }),
      text('Background', { page: 2, positions: [[2, 10, 100, 50, 60]] }),
      text('A new paragraph starts here, after the heading.', { page: 2, positions: [[2, 10, 100, 70, 80]] }),
    ]);
    const r = naive(d, {});
    expect(contents(r)).toEqual(['The airplane departed from Soekarno-Hatta airport in the morning, with its crew.\n\nBackground\n\nA new paragraph starts here, after the heading.']);
    // Positions of blocks of 8 tokens or more, as RAGFlow keeps them ("Background" has fewer).
    expect(r.chunks[0]!.positions).toEqual([[1, 10, 100, 700, 720], [2, 10, 100, 20, 40], [2, 10, 100, 70, 80]]);
  });

  it('overlaps by whole sentences of the previous chunk, within the budget', () => {
    const r = naive(txt('One sentence here. Two sentence here. Three sentence here. Four sentence here.'), { chunk_token_num: 20, overlapped_percent: 50 });
    expect(contents(r)).toEqual(['One sentence here. Two sentence here.', 'Two sentence here. Three sentence here. Four sentence here.']);
  });
});

describe('naive — merge and overlap', () => {
  // Block-based formats hand each block to naive_merge as a section ("\n" + text).
  const secs = ['one two three', 'four five six', 'seven eight nine'];
  const d = doc('docx', secs.map((s) => text(s)));

  it('starts a new chunk when the tokens exceed the limit', () => {
    // "\none two three" = 4 tokens; 4 ≤ 8 merges the second; 8 ≤ 8 merges the third too.
    expect(contents(naive(d, { chunk_token_num: 8, delimiter: RAGFLOW }))).toEqual(['\none two three\nfour five six\nseven eight nine']);
    expect(contents(naive(d, { chunk_token_num: 7, delimiter: RAGFLOW }))).toEqual(['\none two three\nfour five six', '\nseven eight nine']);
  });

  it('prefixes a new chunk with the last p% of the previous chunk\'s characters', () => {
    // Threshold 4·50% = 2: every section opens a chunk. "\none two three" has 14 chars: tail from 7;
    // "o three\nfour five six" (overlap included) has 21: tail from 10.
    const r = naive(d, { chunk_token_num: 4, overlapped_percent: 50, delimiter: RAGFLOW });
    expect(contents(r)).toEqual(['\none two three', 'o three\nfour five six', 'ur five six\nseven eight nine']);
  });

  it('reads a fraction as a share and clamps at 90', () => {
    const half = contents(naive(d, { chunk_token_num: 4, overlapped_percent: 50, delimiter: RAGFLOW }));
    expect(contents(naive(d, { chunk_token_num: 4, overlapped_percent: 0.5, delimiter: RAGFLOW }))).toEqual(half);
    expect(contents(naive(d, { chunk_token_num: 4, overlapped_percent: 95, delimiter: RAGFLOW }))).toEqual(contents(naive(d, { chunk_token_num: 4, overlapped_percent: 90, delimiter: RAGFLOW })));
  });

  it('lets the document config override the dataset config', () => {
    const pc = effectiveParserConfig({ chunk_token_num: 512, delimiter: RAGFLOW }, { chunk_token_num: 7 });
    expect(contents(naive(d, pc))).toEqual(['\none two three\nfour five six', '\nseven eight nine']);
  });
});

describe('naive — positions, tables, formats', () => {
  it('keeps PDF positions of sections of 8+ tokens and orders by page and top', () => {
    const long = 'The cat sat on the mat.'; // "\n" + this = 8 tokens
    const d = doc('pdf', [
      text(long, { page: 1, positions: [[1, 10, 100, 20, 30]] }),
      text('Hi', { page: 1, positions: [[1, 10, 100, 40, 50]] }),
      text(long, { page: 2, positions: [[2, 10, 100, 5, 15]] }),
    ]);
    const r = naive(d, { chunk_token_num: 9, delimiter: RAGFLOW });
    expect(contents(r)).toEqual([`\n${long}\nHi`, `\n${long}`]);
    expect(r.chunks[0]!.positions).toEqual([[1, 10, 100, 20, 30]]);
    expect(r.chunks[0]).toMatchObject({ page_num: 1, top: 20 });
    expect(r.chunks[1]).toMatchObject({ positions: [[2, 10, 100, 5, 15]], page_num: 2, top: 5 });
  });

  it('positions non-PDF chunks as RAGFlow does, [[i+1, i, i, i, i]]', () => {
    const r = naive(txt('a\nb\nc\nd'), { chunk_token_num: 2 });
    expect(r.chunks.map((c) => c.positions)).toEqual([[[1, 0, 0, 0, 0]], [[2, 1, 1, 1, 1]], [[3, 2, 2, 2, 2]]]);
    expect(r.chunks.map((c) => [c.page_num, c.top])).toEqual([[1, 0], [2, 1], [3, 2]]);
  });

  it('makes tables their own chunks after the text', () => {
    const html = '<table><tr><td>a</td><td>b</td></tr></table>';
    const rows = Array.from({ length: 12 }, (_, i) => [`r${i}`, `v${i}`]);
    const d = doc('docx', [text('intro'), tableBlock([['k', 'v']], { html }), tableBlock(rows), text('outro')]);
    const r = naive(d, { chunk_token_num: 512 });
    expect(contents(r)).toEqual([
      'intro\n\noutro',
      html,
      rows.slice(0, 10).map((x) => x.join('; ')).join('; '),
      rows.slice(10).map((x) => x.join('; ')).join('; '),
    ]);
    expect(r.chunks.map((c) => c.doc_type)).toEqual([undefined, 'table', 'table', 'table']);
    expect(r.chunks[1]!.indexText).toBe('   a  b   ');
  });

  it('writes header-labelled rows, with full-width marks for Chinese', () => {
    const d = doc('docx', [tableBlock([['名称', '数量'], ['苹果', '3']], { header: true })]);
    expect(contents(chunkDocument('naive', d, ctx({}, { language: 'Chinese' })))).toEqual(['名称：苹果；数量：3']);
    expect(contents(chunkDocument('naive', d, ctx({}, { language: 'English' })))).toEqual(['名称: 苹果; 数量: 3']);
  });

  it('with another delimiter merges Markdown sections as RAGFlow does, with a character tail overlap', () => {
    const d = doc('markdown', [heading('Intro', 1), text('one two three'), text('four five six')]);
    // "# Intro" 2 tokens + 3 + 3 = 8
    expect(contents(naive(d, { chunk_token_num: 9, delimiter: RAGFLOW }))).toEqual(['# Intro\none two three\nfour five six']);
    expect(contents(naive(d, { chunk_token_num: 6, delimiter: RAGFLOW }))).toEqual(['# Intro\none two three', 'four five six']);
    // 50% of "# Intro\none two three" (21 chars) = its last 10 chars.
    expect(contents(naive(d, { chunk_token_num: 6, overlapped_percent: 50, delimiter: RAGFLOW }))).toEqual(['# Intro\none two three', ' two three\nfour five six']);
  });

  it('reads spreadsheets row by row as "header：value" fields', () => {
    const d = doc('xlsx', [tableBlock([['Name', 'Age', 'City'], ['Alice', '30', ''], ['Bob', '', 'Paris']], { sheet: 'People' })]);
    expect(contents(naive(d, { chunk_token_num: 512 }))).toEqual(['\nName：Alice; Age：30 ——People\nName：Bob; City：Paris ——People']);
  });

  it('with html4excel writes HTML tables of 12 rows, one chunk each', () => {
    const rows = [['h'], ...Array.from({ length: 13 }, (_, i) => [`v${i}`])];
    const r = naive(doc('xlsx', [tableBlock(rows, { sheet: 'Sheet1' })]), { html4excel: true });
    expect(r.chunks).toHaveLength(2);
    expect(r.chunks[1]!.content).toBe('\n<table><caption>Sheet1</caption><tr><th>h</th></tr><tr><td>v12</td></tr></table>');
  });

  it('splits chunks into children with the parent in `mom` (parent_child)', () => {
    const d = doc('docx', [text('A. B'), text('C')]);
    const r = naive(d, { chunk_token_num: 512, parent_child: { use_parent_child: true, children_delimiter: '.' } });
    expect(r.chunks.map((c) => [c.content, c.mom])).toEqual([
      ['A.', 'A. B\n\nC'],
      [' B\n\nC', 'A. B\n\nC'],
    ]);
  });

  it('notes a layout model it does not have, for PDFs only', () => {
    const d = doc('pdf', [text('x', { page: 1 })]);
    expect(naive(d, { layout_recognize: 'MinerU' }).notes).toEqual([
      'layout_recognize "MinerU" is not available; the PDF was laid out by ragloom\'s built-in parser',
    ]);
    expect(naive(d, { layout_recognize: 'DeepDOC' }).notes).toBeUndefined();
    expect(naive(txt('x'), { layout_recognize: 'MinerU' }).notes).toBeUndefined();
  });

  it('chunks 1 MB of text in well under a second', () => {
    const big = 'The quick brown fox jumps over the lazy dog. Lorem ipsum dolor sit amet.\n'.repeat(14_000);
    naive(txt('warm up'), {});
    const t = performance.now();
    const r = naive(txt(big), { chunk_token_num: 512 });
    const ms = performance.now() - t;
    expect(ms).toBeLessThan(1000);
    expect(r.chunks.length).toBeGreaterThan(100);
    // Every word is kept, in order; each chunk ends at a sentence end within the budget.
    expect(r.chunks.map((c) => c.content).join(' ').split(/\s+/)).toEqual(big.trim().split(/\s+/));
    for (const c of r.chunks) {
      expect(countTokens(c.content)).toBeLessThanOrEqual(512);
      expect(c.content).toMatch(/\.$/);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { chunkDocument, effectiveParserConfig } from '../../../src/ingest/chunkers/index.js';
import { countTokens } from '../../../src/text/index.js';
import { ctx, doc, heading, tableBlock, text, txt } from './helpers.js';

const contents = (r: { chunks: { content: string }[] }) => r.chunks.map((c) => c.content);
const naive = (d: Parameters<typeof chunkDocument>[1], pc: Record<string, unknown>) => chunkDocument('naive', d, ctx(pc));

describe('naive — plain text', () => {
  it('appends pieces while tokens ≤ chunk_token_num and starts a new chunk once exceeded', () => {
    // TxtParser: "a"(1) "\n"(2) "b"(3>2 after) → "a\nb"; then "\n" opens "\nc\n"; then "d".
    expect(contents(naive(txt('a\nb\nc\nd'), { chunk_token_num: 2 }))).toEqual(['\na\nb', '\n\nc\n', '\nd']);
  });

  it('overshoots: the piece that crosses the limit stays in the chunk', () => {
    // "one\ntwo" is 3 tokens (≤ 3), so the following "\n" still joins: 4 tokens.
    const r = naive(txt('one\ntwo\nthree\nfour'), { chunk_token_num: 3 });
    expect(contents(r)).toEqual(['\none\ntwo\n', '\nthree\nfour']);
    expect(countTokens(r.chunks[0]!.content)).toBeGreaterThan(3);
  });

  it('keeps one piece longer than chunk_token_num whole', () => {
    const line = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    // The long line is over the limit on its own, so even the "\n" after it opens the next chunk.
    expect(contents(naive(txt(`${line}\nshort`), { chunk_token_num: 10 }))).toEqual([`\n${line}`, '\n\nshort']);
  });

  it('reads the literal backslash-n delimiter as a newline', () => {
    const a = contents(naive(txt('a\nb\nc\nd'), { chunk_token_num: 2, delimiter: '\\n' }));
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

  it('defaults to 512 tokens and "\\n"', () => {
    const r = naive(txt('a\nb\nc'), {});
    expect(contents(r)).toEqual(['\na\nb\nc']);
  });
});

describe('naive — merge and overlap', () => {
  // Block-based formats hand each block to naive_merge as a section ("\n" + text).
  const secs = ['one two three', 'four five six', 'seven eight nine'];
  const d = doc('docx', secs.map((s) => text(s)));

  it('starts a new chunk when the tokens exceed the limit', () => {
    // "\none two three" = 4 tokens; 4 ≤ 8 merges the second; 8 ≤ 8 merges the third too.
    expect(contents(naive(d, { chunk_token_num: 8 }))).toEqual(['\none two three\nfour five six\nseven eight nine']);
    expect(contents(naive(d, { chunk_token_num: 7 }))).toEqual(['\none two three\nfour five six', '\nseven eight nine']);
  });

  it('prefixes a new chunk with the last p% of the previous chunk\'s characters', () => {
    // Threshold 4·50% = 2: every section opens a chunk. "\none two three" has 14 chars: tail from 7;
    // "o three\nfour five six" (overlap included) has 21: tail from 10.
    const r = naive(d, { chunk_token_num: 4, overlapped_percent: 50 });
    expect(contents(r)).toEqual(['\none two three', 'o three\nfour five six', 'ur five six\nseven eight nine']);
  });

  it('reads a fraction as a share and clamps at 90', () => {
    const half = contents(naive(d, { chunk_token_num: 4, overlapped_percent: 50 }));
    expect(contents(naive(d, { chunk_token_num: 4, overlapped_percent: 0.5 }))).toEqual(half);
    expect(contents(naive(d, { chunk_token_num: 4, overlapped_percent: 95 }))).toEqual(contents(naive(d, { chunk_token_num: 4, overlapped_percent: 90 })));
  });

  it('lets the document config override the dataset config', () => {
    const pc = effectiveParserConfig({ chunk_token_num: 512, delimiter: '\n' }, { chunk_token_num: 7 });
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
    const r = naive(d, { chunk_token_num: 9 });
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
      '\nintro\noutro',
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

  it('merges Markdown sections while the total stays within the limit, with a character tail overlap', () => {
    const d = doc('markdown', [heading('Intro', 1), text('one two three'), text('four five six')]);
    // "# Intro" 2 tokens + 3 + 3 = 8
    expect(contents(naive(d, { chunk_token_num: 9 }))).toEqual(['# Intro\none two three\nfour five six']);
    expect(contents(naive(d, { chunk_token_num: 6 }))).toEqual(['# Intro\none two three', 'four five six']);
    // 50% of "# Intro\none two three" (21 chars) = its last 10 chars.
    expect(contents(naive(d, { chunk_token_num: 6, overlapped_percent: 50 }))).toEqual(['# Intro\none two three', ' two three\nfour five six']);
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
      ['\nA.', '\nA. B\nC'],
      [' B\nC', '\nA. B\nC'],
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
    expect(r.chunks.map((c) => c.content).join('').replace(/\n/g, '')).toBe(big.replace(/\n/g, ''));
  });
});

import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../src/ingest/chunkers/index.js';
import { bulletsCategory, removeContentsTable, treeMerge } from '../../../src/ingest/chunkers/structure.js';
import { ctx, doc, heading, tableBlock, text, txt } from './helpers.js';

const contents = (r: { chunks: { content: string }[] }) => r.chunks.map((c) => c.content);
const run = (method: string, d: Parameters<typeof chunkDocument>[1], language = 'English') =>
  chunkDocument(method, d, ctx({ chunk_token_num: 512 }, { language }));

describe('bulletsCategory()', () => {
  it('picks the numbering family used most', () => {
    expect(bulletsCategory(['第一章 总则', '第一条 内容', '第二条 内容'])).toBe(0);
    expect(bulletsCategory(['Chapter I', 'Article 1 text', 'Article 2 text'])).toBe(3);
    expect(bulletsCategory(['# Title', '## Sub', 'body'])).toBe(4);
    expect(bulletsCategory(['plain text', 'more text'])).toBe(-1);
  });
});

describe('laws', () => {
  const law = txt(
    ['第一章 总则', '第一条 为了规范管理，制定本法。', '（一）遵守法律；', '第二条 本法适用于全国。', '第二章 附则', '第三条 本法自公布之日起施行。'].join('\n'),
  );

  it('makes each article a chunk under its chapter, clauses included', () => {
    expect(contents(run('laws', law, 'Chinese'))).toEqual([
      '第一章 总则\n第一条 为了规范管理，制定本法。\n（一）遵守法律；',
      '第一章 总则\n第二条 本法适用于全国。',
      '第二章 附则\n第三条 本法自公布之日起施行。',
    ]);
  });

  it('reads English "Chapter"/"Article" numbering', () => {
    const d = txt(['Chapter I General', 'Article 1 This law applies.', 'Article 2 Terms are defined.', 'Chapter II Final', 'Article 3 In force today.'].join('\n'));
    expect(contents(run('laws', d))).toEqual([
      'Chapter I General\nArticle 1 This law applies.',
      'Chapter I General\nArticle 2 Terms are defined.',
      'Chapter II Final\nArticle 3 In force today.',
    ]);
  });

  it('uses Word heading levels with article numbering, keeping tables inside their article', () => {
    const html = '<table><tr><td>a</td><td>b</td></tr></table>';
    const d = doc('docx', [
      heading('第一章 总则', 1),
      text('第一条 为了规范管理。'),
      tableBlock([['a', 'b']], { html }),
      text('第二条 适用于全国。'),
      heading('第二章 附则', 1),
      text('第三条 自公布之日起施行。'),
    ]);
    expect(contents(run('laws', d, 'Chinese'))).toEqual([
      `第一章 总则\n第一条 为了规范管理。\n${html}`,
      '第一章 总则\n第二条 适用于全国。',
      '第二章 附则\n第三条 自公布之日起施行。',
    ]);
  });

  it('without numbering keeps each section a chunk, and an empty document has none', () => {
    expect(treeMerge(-1, [{ text: 'a b', layout: 'text', positions: [] }], 2)).toEqual([[0]]);
    expect(run('laws', doc('text', [])).chunks).toEqual([]);
  });
});

describe('book', () => {
  it('chunks every passage with its heading path (hierarchical merge)', () => {
    const d = doc('markdown', [heading('Part A', 1), heading('Ch 1', 2), text('para a1'), text('para a2'), heading('Ch 2', 2), text('para b1')]);
    expect(contents(run('book', d))).toEqual(['# Part A\n## Ch 1\npara a1', '# Part A\n## Ch 1\npara a2', '# Part A\n## Ch 2\npara b1']);
  });

  it('drops the table of contents', () => {
    const secs = ['contents', '1 Intro', '2 Methods', '1 Intro', 'Body text here.'].map((t) => ({ text: t, layout: 'text', positions: [] }));
    expect(removeContentsTable(secs, true).map((s) => s.text)).toEqual(['1 Intro', 'Body text here.']);
  });

  it('falls back to naive merging without numbering', () => {
    const d = doc('docx', [text('First paragraph.'), text('Second paragraph.')]);
    expect(contents(chunkDocument('book', d, ctx({ chunk_token_num: 3 })))).toEqual(['\nFirst paragraph.', '\nSecond paragraph.']);
    expect(contents(chunkDocument('book', d, ctx({ chunk_token_num: 512 })))).toEqual(['\nFirst paragraph.\nSecond paragraph.']);
  });
});

describe('manual', () => {
  it('gives each headed section one chunk with its heading path', () => {
    const d = doc('markdown', [heading('Setup', 1), text('Plug in.'), heading('Power', 2), text('Press the button.'), heading('Care', 1), text('Wipe.')]);
    expect(contents(run('manual', d))).toEqual(['Setup\n\nPlug in.', 'Setup\nPower\n\nPress the button.', 'Care\n\nWipe.']);
  });

  it('groups PDF text between pivot headings, packing under 32 tokens', () => {
    const body = Array.from({ length: 40 }, () => 'word').join(' ');
    const d = doc('pdf', [
      heading('1. Intro', 1, { page: 1, positions: [[1, 0, 100, 10, 20]] }),
      text(body, { page: 1, positions: [[1, 0, 100, 30, 60]] }),
      heading('2. Usage', 1, { page: 2, positions: [[2, 0, 100, 10, 20]] }),
      text(body, { page: 2, positions: [[2, 0, 100, 30, 60]] }),
    ]);
    const r = run('manual', d);
    expect(contents(r)).toEqual([`1. Intro\n${body}`, `2. Usage\n${body}`]);
    expect(r.chunks.map((c) => [c.page_num, c.top])).toEqual([[1, 10], [2, 10]]);
    expect(r.chunks[0]!.positions).toEqual([[1, 0, 100, 10, 20], [1, 0, 100, 30, 60]]);
  });
});

describe('paper', () => {
  const abstract = 'The dominant sequence transduction models are based on complex recurrent or convolutional networks.';
  const d = doc('docx', [
    { kind: 'title', text: 'Attention Is All You Need' },
    text('Ashish Vaswani, Noam Shazeer'),
    text('Abstract'),
    text(abstract),
    heading('1 Introduction', 1),
    text('Recurrent networks are standard.'),
    heading('2 Background', 1),
    text('Reducing sequential computation.'),
  ]);

  it('makes title and abstract one chunk, then a chunk per section', () => {
    const r = run('paper', d);
    expect(contents(r)).toEqual([
      `Attention Is All You Need\nAshish Vaswani, Noam Shazeer\n${abstract}`,
      '1 Introduction\nRecurrent networks are standard.',
      '2 Background\nReducing sequential computation.',
    ]);
    expect(r.chunks[0]!.important_keywords).toEqual(['abstract', '总结', '概括', 'summary', 'summarize']);
  });

  it('without an abstract keeps everything in the sections', () => {
    const r = run('paper', doc('text', [text('Just one paragraph.')]));
    expect(contents(r)).toEqual(['Just one paragraph.']);
    expect(run('paper', doc('pdf', [])).chunks).toEqual([]);
  });
});

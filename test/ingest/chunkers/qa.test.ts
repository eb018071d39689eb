import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../src/ingest/chunkers/index.js';
import { ctx, doc, heading, tableBlock, text, txt } from './helpers.js';

const qa = (d: Parameters<typeof chunkDocument>[1], language?: string) =>
  chunkDocument('qa', d, ctx({}, language ? { language } : {}));

describe('qa', () => {
  it('pairs the first two non-empty cells of spreadsheet rows', () => {
    const d = doc('xlsx', [tableBlock([['What is X?', 'X is a letter.'], ['', 'Why?', 'Because.'], ['lonely']])]);
    const r = qa(d, 'English');
    expect(r.chunks.map((c) => c.content)).toEqual(['Question: What is X?\tAnswer: X is a letter.', 'Question: Why?\tAnswer: Because.']);
    expect(r.chunks[0]).toMatchObject({ indexText: 'What is X?', embedText: 'What is X?' });
    expect(r.notes).toEqual(['qa: 1 line(s) without a question/answer pair were skipped']);
  });

  it('reads TAB-separated text lines; other lines continue the answer', () => {
    const r = qa(txt('Q1\tA1\ncontinued\nQ2\tA2'), 'English');
    expect(r.chunks.map((c) => c.content)).toEqual(['Question: Q1\tAnswer: A1\ncontinued', 'Question: Q2\tAnswer: A2']);
  });

  it('strips "Q:"/"Answer:" prefixes and writes Chinese prefixes for Chinese', () => {
    const r = qa(txt('问题：什么是RAG？\t答：检索增强生成。'), 'Chinese');
    expect(r.chunks.map((c) => c.content)).toEqual(['问题：什么是RAG？\t回答：检索增强生成。']);
    // Without a dataset language the text decides.
    expect(qa(txt('什么是向量？\t一组数字。')).chunks[0]!.content).toBe('问题：什么是向量？\t回答：一组数字。');
    expect(qa(txt('Q: What?\tA: That.')).chunks[0]!.content).toBe('Question: What?\tAnswer: That.');
    // A bare leading "A " is an article, not a prefix (RAGFlow would strip it).
    expect(qa(txt('What is it?\tA piece.')).chunks[0]!.content).toBe('Question: What is it?\tAnswer: A piece.');
  });

  it('pairs CSV rows, keeping RAGFlow\'s quirk of dropping an unanswered question unless last', () => {
    const d = doc('csv', [tableBlock([['q1', ''], ['q2', 'a2'], ['q3', '']])]);
    expect(qa(d, 'English').chunks.map((c) => c.content)).toEqual(['Question: q2\tAnswer: a2', 'Question: q3\tAnswer: ']);
  });

  it('uses headings as questions and the text under them as answers', () => {
    const d = doc('markdown', [heading('Install', 1), heading('How do I install?', 2), text('Run npm i.'), heading('Why?', 2), text('Because.')]);
    expect(qa(d, 'English').chunks.map((c) => c.content)).toEqual([
      'Question: Install\nHow do I install?\tAnswer: Run npm i.',
      'Question: Install\nWhy?\tAnswer: Because.',
    ]);
  });

  it('finds numbered questions in a PDF', () => {
    const d = doc('pdf', [
      text('1. What is a chunk? A piece of a document.', { page: 1 }),
      text('More about pieces.', { page: 1 }),
      text('2. How big? About 512 tokens.', { page: 1 }),
    ]);
    expect(qa(d, 'English').chunks.map((c) => c.content)).toEqual([
      'Question: 1. What is a chunk?\tAnswer: A piece of a document.More about pieces.',
      'Question: 2. How big?\tAnswer: About 512 tokens.',
    ]);
    expect(qa(doc('pdf', [text('no numbering here')]), 'English')).toEqual({ chunks: [], notes: ['qa: unable to recognize Q&A structure'] });
  });

  it('gives an empty document zero chunks', () => {
    expect(qa(doc('text', [])).chunks).toEqual([]);
  });
});

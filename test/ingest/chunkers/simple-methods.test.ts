import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../src/ingest/chunkers/index.js';
import { ctx, doc, heading, tableBlock, text, txt } from './helpers.js';

const contents = (r: { chunks: { content: string }[] }) => r.chunks.map((c) => c.content);

describe('one', () => {
  it('makes the whole document a single chunk', () => {
    const d = doc('docx', [heading('Title', 1), text('Body one.'), tableBlock([['a', 'b']]), text('Body two.')]);
    const r = chunkDocument('one', d, ctx({ chunk_token_num: 1 }));
    expect(contents(r)).toEqual(['Title\nBody one.\na\tb\nBody two.']);
    expect(r.chunks[0]!.positions).toEqual([[1, 0, 0, 0, 0]]);
  });

  it('keeps every PDF position and gives an empty document zero chunks', () => {
    const d = doc('pdf', [text('p1', { page: 1, positions: [[1, 0, 9, 5, 9]] }), text('p2', { page: 2, positions: [[2, 0, 9, 7, 9]] })]);
    expect(chunkDocument('one', d, ctx()).chunks[0]).toMatchObject({ content: 'p1\np2', positions: [[1, 0, 9, 5, 9], [2, 0, 9, 7, 9]], page_num: 1, top: 5 });
    expect(chunkDocument('one', doc('pdf', []), ctx()).chunks).toEqual([]);
  });
});

describe('picture', () => {
  const png = new Uint8Array([137, 80, 78, 71]);
  it('indexes the OCR text as one image chunk and notes that no vision model described it', () => {
    const r = chunkDocument('picture', doc('image', [{ kind: 'image', text: 'STOP', image: png }]), ctx());
    expect(r.chunks).toEqual([{ content: 'STOP', doc_type: 'image', image: png, positions: [[1, 0, 0, 0, 0]], page_num: 1, top: 0 }]);
    expect(r.notes).toEqual(['picture: no vision model configured; the image was not described, only its OCR text is indexed']);
  });

  it('needs no note when OCR found enough text, and makes no chunk without text', () => {
    const long = 'This receipt lists twelve items bought at the corner shop on Monday.';
    expect(chunkDocument('picture', doc('image', [{ kind: 'image', text: long }]), ctx()).notes).toBeUndefined();
    expect(chunkDocument('picture', doc('image', [{ kind: 'image', text: '' }]), ctx()).chunks).toEqual([]);
  });
});

describe('presentation', () => {
  it('makes one chunk per slide, positioned on its page', () => {
    const d = doc('pptx', [
      { kind: 'title', text: 'Welcome', page: 1 },
      text('Agenda', { page: 1 }),
      text('Slide two text', { page: 2 }),
      text('', { page: 3 }),
      text('Last', { page: 4 }),
    ]);
    const r = chunkDocument('presentation', d, ctx());
    expect(r.chunks.map((c) => [c.content, c.positions, c.page_num])).toEqual([
      ['Welcome\nAgenda', [[1, 0, 0, 0, 0]], 1],
      ['Slide two text', [[2, 0, 0, 0, 0]], 2],
      ['Last', [[4, 0, 0, 0, 0]], 4],
    ]);
    expect(chunkDocument('presentation', doc('pptx', []), ctx()).chunks).toEqual([]);
  });
});

describe('email', () => {
  it('writes the headers then the body, then chunks attachments as naive', () => {
    const att = doc('text', [text('attached\nnotes')]);
    const d = doc('eml', [text('Hello team,'), text('see attached.')], {
      meta: { from: 'a@x.org', to: 'b@x.org', subject: 'Report', date: 'Mon, 1 Jan 2024 10:00:00 +0000', 'message-id': '<1@x>' },
      attachments: [
        { filename: 'notes.txt', size: 14, parsed: att },
        { filename: 'broken.pdf', size: 3, error: 'not a PDF' },
      ],
    });
    const r = chunkDocument('email', d, ctx({ chunk_token_num: 512 }, { filename: 'mail.eml' }));
    expect(contents(r)).toEqual([
      '\nFrom: a@x.org\nTo: b@x.org\nSubject: Report\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nHello team,\nsee attached.',
      // The attachment is chunked by naive: its wrapped lines read as one.
      'attached notes',
    ]);
    expect(r.chunks.map((c) => c.page_num)).toEqual([1, 2]);
    expect(r.notes).toEqual(['attachment broken.pdf skipped: not a PDF']);
  });

  it('gives an empty mail zero chunks', () => {
    expect(chunkDocument('email', doc('eml', []), ctx()).chunks).toEqual([]);
  });
});

describe('resume and knowledge_graph', () => {
  it('resume falls back to naive with a note', () => {
    const r = chunkDocument('resume', txt('Jane Doe\nEngineer'), ctx({ chunk_token_num: 512 }));
    expect(contents(r)).toEqual(['Jane Doe\nEngineer']);
    expect(r.notes).toEqual(['resume: no chat model configured; chunked as naive']);
  });

  it('knowledge_graph chunks as naive with 8192 tokens by default and notes the skipped extraction', () => {
    const line = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
    const d = txt(Array.from({ length: 20 }, () => line).join('\n')); // ~12k tokens
    const r = chunkDocument('knowledge_graph', d, ctx({}));
    expect(r.chunks).toHaveLength(2);
    expect(r.notes).toEqual(['knowledge_graph: graph extraction skipped (no chat model configured); chunked as naive with chunk_token_num 8192']);
    expect(chunkDocument('knowledge_graph', d, ctx({ chunk_token_num: 512 })).chunks.length).toBeGreaterThan(10);
  });
});

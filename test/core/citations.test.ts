import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { verifyCitations, CitationFilter } from '../../src/core/citations.js';
import { formatPrompt, fitMessages, knowledgeBlock } from '../../src/core/ask.js';
import { countTokens } from '../../src/text/index.js';

describe('citation checks', () => {
  it('keeps markers that name a passage sent, removes the others and counts them', () => {
    const r = verifyCitations('Tides follow the moon [ID:0]. Bread rises [ID:7]. Both [ID:1, ID:9] and [ID: 2].', 3);
    expect(verifyCitations('see [ID:7] and [ID:8][ID:9]next\nline [ID:5]\n', 1).text).toBe('see and next\nline\n');
    expect(r.text).toBe('Tides follow the moon [ID:0]. Bread rises. Both [ID:1] and [ID:2].');
    expect(r.removed).toBe(2);
    expect(r.cited).toEqual([0, 1, 2]);
    expect(verifyCitations('no markers [3] here', 1)).toEqual({ text: 'no markers [3] here', cited: [], removed: 0 });
    expect(verifyCitations('all foreign [ID:0]', 0)).toMatchObject({ text: 'all foreign', removed: 1 });
  });

  it('a stream gives the same text as the whole answer, however it is split', () => {
    const pieces = fc.array(fc.constantFrom('a', ' ', '[', ']', 'ID', ':', '1', '7', ',', '.', 'I', 'D', '[ID:0]', '[ID:5]', 'x'), { maxLength: 40 });
    fc.assert(
      fc.property(pieces, fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 40 }), (parts, cuts) => {
        const text = parts.join('');
        // Re-split the text at arbitrary points.
        const chunks: string[] = [];
        let at = 0;
        for (const c of cuts) {
          if (at >= text.length) break;
          chunks.push(text.slice(at, at + c + 1));
          at += c + 1;
        }
        if (at < text.length) chunks.push(text.slice(at));
        const f = new CitationFilter(3);
        const streamed = chunks.map((c) => f.push(c)).join('') + f.end();
        const whole = verifyCitations(text, 3);
        expect(streamed).toBe(whole.text);
        expect(f.removed).toBe(whole.removed);
      }),
      { numRuns: 500 },
    );
  });

  it('holds back a split marker only until it can be judged', () => {
    const f = new CitationFilter(2);
    expect(f.push('Moon [I')).toBe('Moon');
    expect(f.push('D:1')).toBe('');
    expect(f.push('] and [ID:4] done [x')).toBe(' [ID:1] and done [x');
    expect(f.end()).toBe('');
    expect(f.removed).toBe(1);
  });
});

describe('prompt building', () => {
  it('formats like str.format for the names given', () => {
    expect(formatPrompt('A {knowledge} B {name} {{literal}} {other}', { knowledge: 'K', name: 'N' })).toBe('A K B N {literal} {other}');
  });

  it('numbers passages from 0 and stops at 97% of the context', () => {
    const chunks = Array.from({ length: 10 }, (_, i) => ({ content: `passage ${i} `.repeat(40), document_keyword: `doc${i}.md` }));
    const per = countTokens(chunks[0]!.content);
    const { items, texts } = knowledgeBlock(chunks, Math.floor((per * 3.5) / 0.97));
    expect(items.map((k) => k.id)).toEqual([0, 1, 2]);
    expect(texts[1]).toMatch(/^\nID: 1\n├── Title: doc1\.md\n└── Content:\npassage 1/);
  });

  it('fits the history: drops the middle first, then trims', () => {
    const sys = { role: 'system' as const, content: 'system '.repeat(50) };
    const turns = Array.from({ length: 20 }, (_, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `turn ${i} `.repeat(30) }));
    const all = [sys, ...turns.slice(0, 19)];
    const r = fitMessages(all, 200);
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(r.tokens).toBeLessThanOrEqual(200);
    const small = fitMessages(all, 100_000);
    expect(small.messages).toHaveLength(20);
  });
});

import { describe, expect, it } from 'vitest';
import { CHUNK_METHODS, chunkDocument, chunkTokenCount, effectiveParserConfig } from '../../../src/ingest/chunkers/index.js';
import { overlapPercent, parseDelimiter, unescapeDelimiter } from '../../../src/ingest/chunkers/config.js';
import { countTokens } from '../../../src/text/index.js';
import { ctx, doc, txt } from './helpers.js';

describe('CHUNK_METHODS', () => {
  it('lists the reference\'s methods', () => {
    expect([...CHUNK_METHODS].sort()).toEqual(
      ['book', 'email', 'knowledge_graph', 'laws', 'manual', 'naive', 'one', 'paper', 'picture', 'presentation', 'qa', 'resume', 'table', 'tag'].sort(),
    );
  });

  it('every method gives an empty document zero chunks', () => {
    for (const m of CHUNK_METHODS) expect(chunkDocument(m, doc('text', []), ctx()).chunks, m).toEqual([]);
  });
});

describe('chunkDocument()', () => {
  it('rejects an unknown method with a TypeError', () => {
    expect(() => chunkDocument('audio', txt('x'), ctx())).toThrow(TypeError);
    expect(() => chunkDocument('toString', txt('x'), ctx())).toThrow('Unknown chunk method "toString"');
  });

  it('skips auto_keywords / auto_questions with a note', () => {
    const r = chunkDocument('naive', txt('x'), ctx({ auto_keywords: 3, auto_questions: 0 }));
    expect(r.notes).toEqual(['auto_keywords: no chat model configured; skipped']);
    expect(chunkDocument('naive', txt('x'), ctx({ auto_questions: 2 })).notes).toEqual(['auto_questions: no chat model configured; skipped']);
  });
});

describe('chunkTokenCount()', () => {
  it('is the cl100k count of the content', () => {
    expect(chunkTokenCount({ content: 'hello world' })).toBe(2);
    const r = chunkDocument('naive', txt('alpha beta\ngamma'), ctx());
    expect(r.chunks.map((c) => c.content)).toEqual(['alpha beta gamma']);
    expect(r.chunks.map(chunkTokenCount)).toEqual([countTokens('alpha beta gamma')]);
  });
});

describe('effectiveParserConfig()', () => {
  it('deep-merges, document keys winning at every depth', () => {
    const ds = { chunk_token_num: 512, delimiter: '\n', raptor: { use_raptor: true, max_token: 256 }, pages: [[1, 5]] };
    const docCfg = { chunk_token_num: 128, raptor: { max_token: 64 }, pages: [[2, 3]] };
    expect(effectiveParserConfig(ds, docCfg)).toEqual({ chunk_token_num: 128, delimiter: '\n', raptor: { use_raptor: true, max_token: 64 }, pages: [[2, 3]] });
    expect(ds.raptor.max_token).toBe(256);
    expect(effectiveParserConfig(ds, null)).toEqual(ds);
    expect(effectiveParserConfig(undefined, { a: 1 })).toEqual({ a: 1 });
  });
});

describe('parser_config readers', () => {
  it('unescapes delimiters like Python unicode_escape', () => {
    expect(unescapeDelimiter('\\n')).toBe('\n');
    expect(unescapeDelimiter('\\t\\u3002\\x21')).toBe('\t。!');
    expect(unescapeDelimiter('plain。')).toBe('plain。');
  });

  it('splits a delimiter field into backtick strings and single characters', () => {
    expect(parseDelimiter('\\n!`##``---`')).toEqual({ custom: ['---', '##'], all: ['---', '##', '\n', '!'] });
  });

  it('normalises overlapped_percent', () => {
    expect([0, 20, 0.2, 0.29, 95, -5, '30', undefined].map(overlapPercent)).toEqual([0, 20, 20, 29, 90, 0, 30, 0]);
  });
});

import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { describe, expect, it } from 'vitest';
import { countTokens, truncateTokens } from '../../src/text/index.js';

const oracle = new Tiktoken(cl100k);

describe('countTokens()', () => {
  it('counts cl100k tokens of known strings', () => {
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('The cat sat on the mat.')).toBe(7);
    expect(countTokens('\none')).toBe(2);
    expect(countTokens('中文')).toBe(2);
  });

  it('is 0 for the empty string', () => {
    expect(countTokens('')).toBe(0);
  });

  it('equals js-tiktoken encode().length on mixed text', () => {
    const samples = [
      "I'm sure we'll've done it — naïve café, 12345678 ₩€ 🎉🎉",
      '你好，世界！这是一个测试。第一条 本法适用于全国。',
      'def f(x):\n    return x  + 1\n\n\n\t\tindented  \r\n',
      '   lots   of   spaces   \n\n\n  ',
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      'x'.repeat(3000),
      'Mixed 日本語のテキスト and 한국어 텍스트 with numbers 3.14159 and URLs https://example.com/a?b=c',
      '{"key": [1, 2, 3], "nested": {"a": null}}',
    ];
    for (const s of samples) expect(countTokens(s), s.slice(0, 30)).toBe(oracle.encode(s).length);
  });

  it('counts 0 for text holding a special token, as RAGFlow does when tiktoken refuses it', () => {
    expect(countTokens('before <|endoftext|> after')).toBe(0);
    expect(countTokens('a <| not special |> b')).toBe(oracle.encode('a <| not special |> b').length);
  });

  it('counts a 1 MB text in well under a second', () => {
    const big = 'The quick brown fox jumps over the lazy dog, 1234 times.\n'.repeat(18_000);
    countTokens('warm up');
    const t = performance.now();
    const n = countTokens(big);
    expect(performance.now() - t).toBeLessThan(1000);
    expect(n).toBe(18_000 * countTokens('The quick brown fox jumps over the lazy dog, 1234 times.\n'));
  });
});

describe('truncateTokens()', () => {
  it('keeps the first n tokens', () => {
    expect(truncateTokens('hello world again', 2)).toBe('hello world');
    expect(truncateTokens('hello world', 5)).toBe('hello world');
    expect(truncateTokens('hello world', 0)).toBe('');
  });

  it('matches decoding the first n token ids', () => {
    const s = 'Tokenization of supercalifragilisticexpialidocious words, 中文也可以。';
    const ids = oracle.encode(s);
    for (const n of [1, 3, 5, 8, ids.length - 1]) expect(truncateTokens(s, n)).toBe(oracle.decode(ids.slice(0, n)));
  });
});

/** pyStrRepr / pyListRepr against Python 3's own repr() (the expected strings were printed by python3). */
import { describe, expect, it } from 'vitest';
import { pyListRepr, pyStrRepr } from '../../src/util/index.js';

// [str, repr(str)] as `python3 -c 'print(json.dumps([[c, repr(c)] for c in cases]))'` printed them.
const CASES: Array<[string, string]> = JSON.parse(String.raw`[["it's", "\"it's\""], ["a\nb", "'a\\nb'"], ["q\"uo'te", "'q\"uo\\'te'"], ["back\\slash", "'back\\\\slash'"], ["tab\there", "'tab\\there'"], ["\u00e9\u4e2d", "'\u00e9\u4e2d'"], ["\u0001\u007f\u0085", "'\\x01\\x7f\\x85'"], ["zero\u200bwidth", "'zero\\u200bwidth'"], ["nb\u00a0sp", "'nb\\xa0sp'"], ["line\u2028sep", "'line\\u2028sep'"], ["\ud83d\ude00", "'\ud83d\ude00'"], ["priv\ue000", "'priv\\ue000'"]]`);

describe('pyStrRepr() / pyListRepr()', () => {
  it.each(CASES)('repr(%j) is Python\'s', (s, repr) => {
    expect(pyStrRepr(s)).toBe(repr);
  });
  it('a list of ids as RAGFlow prints it in a message', () => {
    expect(pyListRepr(CASES.map(([s]) => s))).toBe(`[${CASES.map(([, r]) => r).join(', ')}]`);
    expect(pyListRepr([])).toBe('[]');
  });
});

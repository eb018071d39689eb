/**
 * src/text/stop-words.ts is wink-nlp's English stop-word flag as a list: derived here from wink
 * itself, the way analyze.ts used to ask it (a lower-case ASCII word of the model's lexicon that
 * reads as one token flagged as a stop word). A wink upgrade that changes the flags fails here.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { WINK_STOP_WORDS } from '../../src/text/stop-words.js';
import { analyze } from '../../src/text/index.js';

const require = createRequire(import.meta.url);

describe('WINK_STOP_WORDS', () => {
  it("is exactly wink's stop-word flag over the lower-case words of its lexicon", () => {
    const winkNLP = require('wink-nlp') as (m: unknown, pipe?: string[]) => {
      readDoc(t: string): { tokens(): { out(f: unknown): unknown[] } };
      its: { stopWordFlag: unknown };
    };
    const model = require('wink-eng-lite-web-model') as { core(): { features: { lexeme: { hash: Record<string, number> } } } };
    const nlp = winkNLP(model, []);
    const flagged = Object.keys(model.core().features.lexeme.hash)
      .filter((w) => /^[a-z]+$/.test(w))
      .filter((w) => {
        const out = nlp.readDoc(w).tokens().out(nlp.its.stopWordFlag);
        return out.length === 1 && out[0] === true;
      });
    expect([...WINK_STOP_WORDS].sort()).toEqual(flagged.sort());
    expect(flagged.length).toBeGreaterThan(300);
  });

  it('analyze drops them and stems the rest', () => {
    expect(analyze('Whereas the investigations were done quickly, nobody else noticed')).toEqual(['investig', 'quick', 'notic']);
  });
});

/**
 * scripts/distill/wordnet.ts (the retrofitting and contrastive experiments on the built-in model):
 * WordNet's file format read right, and retrofitting's update rule, on a tiny WordNet written here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { retrofit, retrofitCoverage, wordnetDictDir, wordnetNeighbours, wordnetPairs } from '../../scripts/distill/wordnet.js';

const dict = mkdtempSync(join(tmpdir(), 'ragloom-wordnet-'));
afterAll(() => rmSync(dict, { recursive: true, force: true }));
// WordNet's data lines: offset lex_filenum ss_type w_cnt(hex) [lemma lex_id]… p_cnt [symbol offset pos source/target]… | gloss
writeFileSync(
  join(dict, 'data.noun'),
  [
    '  1 This software and database is being provided to you, the LICENSEE, by Princeton University',
    '00000100 06 n 03 car 0 auto 0 motor_vehicle 0 001 @ 00000200 n 0000 | a motor vehicle with four wheels; "he needs a car to get to work"',
    '00000200 06 n 01 vehicle 0 000 | a conveyance that transports people or objects',
    '00000300 06 n 02 car 0 railcar 0 000 | a wheeled vehicle adapted to the rails of railroad; "three cars had jumped the rails"',
    '',
  ].join('\n'),
);
writeFileSync(join(dict, 'data.verb'), '');
writeFileSync(join(dict, 'data.adj'), '00000400 00 a 01 fast(a) 0 000 | acting or moving quickly\n');
writeFileSync(join(dict, 'data.adv'), '');
// Index lines: lemma pos synset_cnt p_cnt [symbol]… sense_cnt tagsense_cnt offset… (senses by frequency).
writeFileSync(
  join(dict, 'index.noun'),
  ['  1 licence', 'auto n 1 1 @ 1 0 00000100', 'car n 2 1 @ 2 1 00000100 00000300', 'railcar n 1 0 1 0 00000300', 'vehicle n 1 0 1 0 00000200', ''].join('\n'),
);
writeFileSync(join(dict, 'index.verb'), '');
writeFileSync(join(dict, 'index.adj'), 'fast a 1 0 1 0 00000400\n');
writeFileSync(join(dict, 'index.adv'), '');

describe('scripts/distill/wordnet.ts', () => {
  const all = () => true;

  it('finds synonyms of the first senses only, hypernyms at their weight, single words only', () => {
    const one = wordnetNeighbours(dict, { senses: 1, hypernymWeight: 0 }, all);
    expect(Object.fromEntries(one.get('car')!)).toEqual({ auto: 1 }); // not `railcar` (2nd sense), not `motor vehicle`
    expect(one.has('fast')).toBe(false); // `fast(a)` is itself and nothing else
    const two = wordnetNeighbours(dict, { senses: 2, hypernymWeight: 0.5 }, all);
    expect(Object.fromEntries(two.get('car')!)).toEqual({ auto: 1, vehicle: 0.5, railcar: 1 });
    const kept = wordnetNeighbours(dict, { senses: 2, hypernymWeight: 0.5 }, (w) => w !== 'railcar');
    expect(Object.fromEntries(kept.get('car')!)).toEqual({ auto: 1, vehicle: 0.5 });
  });

  it('retrofits to the fixed point of the update rule and keeps norms when asked', () => {
    const index = new Map([['car', 0], ['auto', 1], ['vehicle', 2]]);
    const graph = new Map([['car', new Map([['auto', 1]])], ['auto', new Map([['car', 1]])]]);
    const rows = [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(3, 4)];
    const out = retrofit(rows, index, graph, { alpha: 1, iterations: 60, keepNorm: false });
    // q_car = (q̂_car + q_auto)/2 and q_auto = (q̂_auto + q_car)/2 → q_car = (2·q̂_car + q̂_auto)/3.
    expect(out[0]![0]).toBeCloseTo(2 / 3, 5);
    expect(out[0]![1]).toBeCloseTo(1 / 3, 5);
    expect(out[1]![0]).toBeCloseTo(1 / 3, 5);
    expect([...out[2]!]).toEqual([3, 4]); // no neighbours: unchanged
    expect([...rows[0]!]).toEqual([1, 0]); // the input is not modified
    const normed = retrofit(rows, index, graph, { alpha: 1, iterations: 60, keepNorm: true });
    expect(Math.hypot(normed[0]![0]!, normed[0]![1]!)).toBeCloseTo(1, 5);
    expect(normed[0]![0]! / normed[0]![1]!).toBeCloseTo(2, 4);
    expect(retrofitCoverage(index, graph)).toBe(2);
  });

  it('pairs lemmas and usage examples of four words or more with the definition', () => {
    expect(wordnetPairs(dict, { lemmas: true, examples: true })).toEqual([
      ['car, auto, motor vehicle', 'a motor vehicle with four wheels'],
      ['he needs a car to get to work', 'a motor vehicle with four wheels'],
      ['vehicle', 'a conveyance that transports people or objects'],
      ['car, railcar', 'a wheeled vehicle adapted to the rails of railroad'],
      ['three cars had jumped the rails', 'a wheeled vehicle adapted to the rails of railroad'],
      ['fast', 'acting or moving quickly'],
    ]);
    expect(wordnetPairs(dict, { lemmas: false, examples: true })).toHaveLength(2);
  });

  it('says how to get WordNet when the folder is wrong', () => {
    expect(wordnetDictDir(dict)).toBe(dict);
    expect(() => wordnetDictDir(tmpdir())).toThrow(/holds no WordNet data\.noun/);
  });
});

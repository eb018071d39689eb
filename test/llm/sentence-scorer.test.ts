import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { analyze, countTokens, splitSentences } from '../../src/text/index.js';
import { ExtractiveChatModel, SENTENCE_FEATURES } from '../../src/llm/extractive.js';
import type { KnowledgeItem } from '../../src/llm/types.js';
import { fitPairwise, type Loss, type TrainingQuestion } from '../../scripts/sentence-scorer/fit.js';

const DIR = resolve(import.meta.dirname, '../../scripts/sentence-scorer');
const KNOWLEDGE: KnowledgeItem[] = [
  {
    id: 0,
    title: 'firefox.md',
    content:
      'Firefox is a web browser made by Mozilla. Firefox was originally named Phoenix but the name was changed to avoid trademark conflicts. The current name, Firefox, was chosen on February 9, 2004.',
  },
  { id: 1, title: 'rust.md', content: 'Rust is a programming language. It is designed for safety, concurrency, and performance.' },
];
const model = (weights?: number[]) => new ExtractiveChatModel({ analyze, splitSentences, countTokens, ...(weights ? { scorer: { weights } } : {}) });
const only = (f: string, v: number) => SENTENCE_FEATURES.map((x) => (x === f ? v : 0));
const HAND = only('logHand', 1);

describe('the learned sentence scorer (scripts/sentence-scorer)', () => {
  it('ships the weights that fit.ts gives on the committed training data', () => {
    const data = JSON.parse(readFileSync(resolve(DIR, 'tuning-features.json'), 'utf8')) as { features: string[]; questions: TrainingQuestion[] };
    const shipped = JSON.parse(readFileSync(resolve(DIR, 'weights.json'), 'utf8')) as { loss: Loss; lambda: number; features: string[]; weights: number[]; kept: boolean };
    expect(data.features).toEqual([...SENTENCE_FEATURES]);
    expect(shipped.features).toEqual([...SENTENCE_FEATURES]);
    expect(data.questions.length).toBe(86);
    expect(fitPairwise(data.questions, HAND, shipped.lambda, shipped.loss).weights).toEqual(shipped.weights);
    // Measured and not kept (docs/benchmarks.md, "Fifth pass"): the default chat model has no scorer.
    expect(shipped.kept).toBe(false);
  });

  it('stays at the hand weights under a large λ and moves off them under a small one', () => {
    const q = (id: string, x: number[][], y: boolean[]): TrainingQuestion => ({ id, x: x.map((r) => SENTENCE_FEATURES.map((f, i) => (f === 'logHand' ? r[0]! : f === 'length' ? r[1]! : 0))), y });
    // The fact's sentence is the longer one, while the hand score prefers the other.
    const data = [q('a', [[-1, 3], [-0.5, 1]], [true, false]), q('b', [[-2, 4], [-1, 2]], [true, false])];
    const stay = fitPairwise(data, HAND, 1e6).weights;
    expect(stay[SENTENCE_FEATURES.indexOf('logHand')]).toBeCloseTo(1, 4);
    expect(stay[SENTENCE_FEATURES.indexOf('length')]).toBeCloseTo(0, 4);
    for (const loss of ['pairwise', 'softmax'] as const) {
      const moved = fitPairwise(data, HAND, 0.01, loss).weights;
      expect(moved[SENTENCE_FEATURES.indexOf('length')]).toBeGreaterThan(0.5);
    }
  });

  it('gives the hand-weighted answer with the hand weights as a scorer, and follows other weights', async () => {
    const question = [{ role: 'user' as const, content: 'What was Firefox originally named?' }];
    const plain = await model().chat(question, { knowledge: KNOWLEDGE });
    expect(plain.content).toMatch(/^Firefox was originally named Phoenix/);
    expect((await model(HAND).chat(question, { knowledge: KNOWLEDGE })).content).toBe(plain.content);
    // Weights that prefer the last sentence of a passage put "The current name, Firefox, …" first.
    const late = HAND.map((w, i) => (SENTENCE_FEATURES[i] === 'position' ? 20 : w));
    expect((await model(late).chat(question, { knowledge: KNOWLEDGE })).content).toMatch(/^The current name, Firefox, was chosen on February 9, 2004\. \[ID:0\]/);
  });

  it('lists every candidate with its features and whether it may be quoted', async () => {
    const f = await model().sentenceFeatures(KNOWLEDGE, 'What was Firefox originally named?');
    expect(f.map((c) => c.text)).toContain('Firefox was originally named Phoenix but the name was changed to avoid trademark conflicts.');
    for (const c of f) expect(c.features).toHaveLength(SENTENCE_FEATURES.length);
    // Only the sentences holding a question term are supported (no embedding model here).
    expect(f.filter((c) => c.eligible).every((c) => /firefox|named|origin/i.test(c.text))).toBe(true);
    expect(f.some((c) => !c.eligible)).toBe(true);
  });

  it('rejects weights that do not match the features', () => {
    expect(() => model([1, 2, 3])).toThrow(TypeError);
    expect(() => model(HAND.map((w, i) => (i === 2 ? Number.NaN : w)))).toThrow(/finite numbers/);
  });
});

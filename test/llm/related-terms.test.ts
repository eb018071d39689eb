import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { test, enc } from '../helpers.js';
import { analyze, countTokens, splitSentences } from '../../src/text/index.js';
import { ExtractiveChatModel } from '../../src/llm/extractive.js';
import { DEFAULT_RELATION_WEIGHTS, relatedTermsFiles, wordnetRelatedTerms } from '../../src/llm/related-terms.js';
import type { KnowledgeItem } from '../../src/llm/types.js';

const stem = (w: string) => analyze(w)[0]!;

describe('related terms (models/ragloom-related-en)', () => {
  const related = wordnetRelatedTerms()!;

  it('relates a word to the ones WordNet and GloVe put beside it, by stem', () => {
    expect(related).toBeTypeOf('function');
    // WordNet: the same synset.
    expect(related(stem('mandatory')).get(stem('compulsory'))).toBe(DEFAULT_RELATION_WEIGHTS.s);
    expect(related(stem('breach')).get(stem('violation'))).toBe(DEFAULT_RELATION_WEIGHTS.s);
    expect(related(stem('motto')).get(stem('slogan'))).toBe(DEFAULT_RELATION_WEIGHTS.s);
    // GloVe: neighbours in its word space, weighted by their cosine.
    expect(related(stem('inventor')).get(stem('entrepreneur'))).toBeCloseTo(0.67, 5);
    expect(wordnetRelatedTerms({ g: 0 })!(stem('inventor')).has(stem('entrepreneur'))).toBe(false);
    // … but not for a word the passages hold as written (`held`): "Tuesday" is no other wording of "Monday".
    expect(related(stem('monday')).get(stem('tuesday'))).toBeGreaterThan(0.9);
    expect(related(stem('monday'), true).has(stem('tuesday'))).toBe(false);
    // Unrelated words, and words the table does not know, are not related.
    expect(related(stem('car')).has(stem('banana'))).toBe(false);
    expect(related('zzzqx').size).toBe(0);
  });

  it('weighs each relation as asked, and leaves out those of weight 0', () => {
    const synonymsOnly = wordnetRelatedTerms({ d: 0, a: 0, h: 0, g: 0 })!;
    for (const [, w] of synonymsOnly(stem('mandatory'))) expect(w).toBeGreaterThan(0);
    // "obligatory" is only a similar synset of "mandatory" in WordNet: gone with `a` at 0.
    expect(related(stem('mandatory')).get(stem('obligatory'))).toBeCloseTo(DEFAULT_RELATION_WEIGHTS.a, 5);
    expect(synonymsOnly(stem('mandatory')).has(stem('obligatory'))).toBe(false);
    // A later sense counts less (senseDecay per rank): "require" is a synonym of "mandatory"'s first sense only.
    const decayed = wordnetRelatedTerms({ senseDecay: 0.5, g: 0 })!;
    expect(decayed(stem('require')).get(stem('mandatory'))).toBeCloseTo(0.5, 5);
  });
});

// A paraphrase the model without related terms misses: the question says "slogan" and "compulsory",
// the documents "motto" and "mandatory". Own fixture (not the evaluation set).
const KNOWLEDGE: KnowledgeItem[] = [
  {
    id: 0,
    title: 'harbour-rowing-club.md',
    content: [
      'The Harbour Rowing Club was founded by dock workers in 1921.',
      'Members row on the estuary every Saturday morning from April to October.',
      'The club trains juniors on Wednesday evenings.',
      'Its motto is "Pull together, finish together."',
      'Life jackets are mandatory for juniors on the water.',
      'The boathouse was rebuilt after the flood of 1987.',
    ].join(' '),
  },
  {
    id: 1,
    title: 'sailing-school.md',
    content: 'The sailing school of the harbour offers courses for juniors. A course lasts five days and ends with a test on the water.',
  },
];

describe('ExtractiveChatModel with related terms', () => {
  const plain = new ExtractiveChatModel({ analyze, splitSentences, countTokens });
  const bridged = new ExtractiveChatModel({ analyze, splitSentences, countTokens, related: wordnetRelatedTerms() });
  const ask = (q: string) => [{ role: 'user' as const, content: q }];
  const empty = 'Sorry, nothing found.';

  it('answers a question worded with synonyms of the document\'s words, which it missed without them', async () => {
    for (const [question, fact] of [
      ['What is the slogan of the rowing club?', 'Pull together, finish together.'],
      ['What is compulsory for juniors rowing at the club?', 'Life jackets are mandatory'],
    ] as const) {
      const before = await plain.chat(ask(question), { knowledge: KNOWLEDGE, empty_response: empty });
      const after = await bridged.chat(ask(question), { knowledge: KNOWLEDGE, empty_response: empty });
      expect(before.content, question).not.toContain(fact);
      expect(after.content, question).toContain(fact);
      expect(after.content).toMatch(/\[ID:0\]/);
    }
  });

  it('prefers the sentence holding the question\'s own word to one holding a neighbour of it', async () => {
    const knowledge: KnowledgeItem[] = [{ id: 0, title: 'museum.md', content: 'On Tuesdays the museum opens late, until 9 pm. On Mondays the museum is closed for cleaning.' }];
    const r = await bridged.chat(ask('What happens at the museum on Monday?'), { knowledge });
    expect(r.content).toBe('On Mondays the museum is closed for cleaning. [ID:0]');
  });

  it('answers as before where the question uses the document\'s own words', async () => {
    const q = 'When was the Harbour Rowing Club founded?';
    const before = await plain.chat(ask(q), { knowledge: KNOWLEDGE });
    const after = await bridged.chat(ask(q), { knowledge: KNOWLEDGE });
    expect(after.content).toBe(before.content);
    expect(after.content).toContain('founded by dock workers in 1921');
  });
});

describe('a default chat (the built-in model reads the shipped tables)', () => {
  test('answers "what makes the sea rise and fall" with the tides sentence ("sea" ~ "oceans"), which it declined before', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const docs = await ds.uploadDocuments([
      { display_name: 'tides.txt', blob: enc('Tides are caused by the gravitational pull of the moon and the sun on the oceans.') },
      { display_name: 'sourdough.txt', blob: enc('Sourdough bread rises because wild yeast and lactic acid bacteria ferment the dough.') },
    ]);
    await ds.parseDocuments(docs.map((d) => d.id));
    const chat = await client.createChat({ name: 'c', dataset_ids: [ds.id] });
    const m = await (await chat.createSession()).ask('what makes the sea rise and fall');
    expect(m.content).toMatch(/^Tides are caused by the gravitational pull of the moon and the sun on the oceans\. \[ID:\d\]$/);
    expect(m.content).not.toContain('Sourdough');
  });
});

describe('reading the tables', () => {
  /** A fresh copy of the module, its tables not yet read. */
  const fresh = async () => {
    vi.resetModules();
    return (await import('../../src/llm/related-terms.js')).wordnetRelatedTerms()!;
  };
  /** Every stem of both shipped tables. */
  const stems = () => relatedTermsFiles().flatMap((f) => gunzipSync(readFileSync(f)).toString('utf8').split('\n').map((l) => l.slice(0, l.indexOf('\t'))).filter(Boolean));

  it('ready() reads them once without holding the event loop, to the same rows as a look-up that does not wait', async () => {
    const waited = await fresh();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const once = waited.ready!();
    expect(waited.ready!()).toBe(once);
    await once;
    clearInterval(timer);
    // Read and unzipped off the event loop, the lines a slice at a time: timers ran meanwhile.
    expect(ticks).toBeGreaterThan(2);
    const direct = await fresh(); // its first look-up reads the files itself
    const all = [...new Set(stems())];
    expect(all.length).toBeGreaterThan(25_000);
    const differ = all.filter((s) => [false, true].some((held) => !isDeepStrictEqual(waited(s, held), direct(s, held))));
    expect(differ).toEqual([]);
  });

  it("the built-in model's first answer waits for them: the answer that needs them", async () => {
    const question = 'What is compulsory for juniors rowing at the club?';
    const ask = async (related: ReturnType<typeof wordnetRelatedTerms>) =>
      (await new ExtractiveChatModel({ analyze, splitSentences, countTokens, related }).chat([{ role: 'user', content: question }], { knowledge: KNOWLEDGE })).content;
    const first = await ask(await fresh()); // nothing read before this answer
    expect(first).toContain('Life jackets are mandatory');
    expect(first).toBe(await ask(wordnetRelatedTerms()));
  });
});

import { describe, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test, enc } from '../helpers.js';
import { Client, DEFAULT_RETRIEVAL_OPTIONS, type RetrievalOptions } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import type { Engine } from '../../src/core/index.js';

// Ranking settings belong to a Client (`new Client({ retrieval })`, `startServer({ retrieval })`),
// never to the process: two Clients in one process rank each with its own.

const TEXTS = [
  'plasma confinement in a tokamak with magnetic coils',
  'tokamak plasma confinement and the tokamak divertor',
  'confinement time of a hot plasma in the tokamak',
  'plasma confinement: tokamak stability limits',
  'magnetic plasma confinement, tokamak experiments',
  'the tokamak divertor handles heat exhaust',
  'bread dough rises with yeast', 'a sonnet has fourteen lines', 'glaciers carve valleys slowly',
  'violin strings are tuned in fifths', 'chess openings reward development', 'coral reefs host many fish',
];

async function fixture(c: Client): Promise<string> {
  const ds = await c.createDataset({ name: 'kb' });
  const docs = await ds.uploadDocuments(TEXTS.map((_, i) => ({ display_name: `d${i}.txt`, blob: enc('x') })));
  for (const [i, d] of docs.entries()) await d.addChunk({ content: TEXTS[i]! });
  return ds.id;
}

const scores = async (c: Client, ds: string) =>
  (await c.retrieve({ dataset_ids: [ds], question: 'plasma confinement', similarity_threshold: 0 }))
    .map((x) => [x.content, x.similarity, x.vector_similarity, x.term_similarity]);

const NO_FEEDBACK: Partial<RetrievalOptions> = { termFeedbackDocs: 0, feedbackDocs: 0 };
const engineOf = (c: Client) => (c as unknown as { api: { engine: Engine } }).api.engine;

describe('new Client({ retrieval })', () => {
  test('two Clients in one process with different settings rank each with its own, and do not affect each other', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    const plain = new Client({ path });
    const ds = await fixture(plain);
    const given = { ...NO_FEEDBACK };
    const bare = new Client({ path, retrieval: given });
    try {
      const before = { plain: await scores(plain, ds), bare: await scores(bare, ds) };
      // Different settings, different scores (the feedback steps move both sides).
      expect(before.bare).not.toEqual(before.plain);
      // Interleaved calls: neither changes the other's ranking.
      for (let i = 0; i < 2; i++) {
        expect(await scores(bare, ds)).toEqual(before.bare);
        expect(await scores(plain, ds)).toEqual(before.plain);
      }
      // The options object given is copied: changing it later changes nothing.
      given.termFeedbackDocs = 10;
      expect(await scores(bare, ds)).toEqual(before.bare);
      expect(Object.isFrozen(engineOf(bare).retrievalOptions)).toBe(true);
      expect(engineOf(bare).retrievalOptions).toEqual({ ...DEFAULT_RETRIEVAL_OPTIONS, ...NO_FEEDBACK });
      expect(engineOf(plain).retrievalOptions).toEqual(DEFAULT_RETRIEVAL_OPTIONS);
      // A third Client with the same settings as the first agrees with it, whatever ran before.
      const again = new Client({ path, retrieval: NO_FEEDBACK });
      try {
        expect(await scores(again, ds)).toEqual(before.bare);
      } finally {
        await again.close();
      }
    } finally {
      await bare.close();
      await plain.close();
    }
  });

  test('the defaults are frozen, with the documented values', () => {
    expect(Object.isFrozen(DEFAULT_RETRIEVAL_OPTIONS)).toBe(true);
    expect(DEFAULT_RETRIEVAL_OPTIONS).toEqual({
      feedbackDocs: 5, feedbackWeight: 1, feedbackSearch: false, termFeedbackDocs: 10, termFeedbackTerms: 10,
      termFeedbackQueryWeight: 0.7, termFeedbackDepth: 30, exactVectors: false,
      defaultWeight: 0.3, vectorAgreement: true, agreementFeedback: false, agreementDepth: 10, vectorMargin: 0.1,
      bridgeWeight: 0, bridgeTerms: 3, bridgeGlove: true, bridgeDf: 0,
    });
    expect(() => {
      (DEFAULT_RETRIEVAL_OPTIONS as RetrievalOptions).feedbackDocs = 0;
    }).toThrow(TypeError);
  });

  test('unknown keys and bad values are TypeErrors, before the database file is created', ({ dir }) => {
    const path = join(dir, 'never.db');
    const bad = (retrieval: unknown) => () => new Client({ path, retrieval: retrieval as Partial<RetrievalOptions> });
    expect(bad({ termFeedbackDoc: 0, rm3: true })).toThrow(TypeError);
    expect(bad({ termFeedbackDoc: 0, rm3: true })).toThrow(/Unknown retrieval options "termFeedbackDoc", "rm3"; known: feedbackDocs, /);
    expect(bad({ feedbackDocs: '5' })).toThrow(/retrieval\.feedbackDocs must be a non-negative integer, got "5"/);
    expect(bad({ feedbackDocs: 1.5 })).toThrow(TypeError);
    expect(bad({ termFeedbackDepth: -1 })).toThrow(TypeError);
    expect(bad({ termFeedbackQueryWeight: 1.5 })).toThrow(/in \[0, 1\]/);
    expect(bad({ feedbackWeight: Number.NaN })).toThrow(TypeError);
    expect(bad({ exactVectors: 'yes' })).toThrow(/retrieval\.exactVectors must be a boolean/);
    expect(bad(null)).toThrow(TypeError);
    expect(bad([])).toThrow(TypeError);
    expect(bad(5)).toThrow(TypeError);
    expect(existsSync(path)).toBe(false);
    // A remote Client cannot set it: it is the server's.
    expect(() => new Client({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', retrieval: {} })).toThrow(/"retrieval" is the server's configuration/);
  });

  test('startServer({ retrieval }): the server ranks with its settings; bad ones are TypeErrors', async ({ dir }) => {
    const path = join(dir, 'kb.db');
    await expect(startServer({ path: join(dir, 'bad.db'), port: 0, retrieval: { nope: 1 } as never })).rejects.toThrow(/Unknown retrieval option "nope"/);
    const local = new Client({ path, retrieval: NO_FEEDBACK });
    const ds = await fixture(local);
    const want = await scores(local, ds);
    await local.close();
    const srv = await startServer({ path, port: 0, retrieval: NO_FEEDBACK });
    const remote = new Client({ baseUrl: srv.url, apiKey: srv.apiKey });
    try {
      expect(await scores(remote, ds)).toEqual(want);
    } finally {
      await remote.close();
      await srv.close();
    }
  });
});

/** The integrations' shared helpers on bad input: an unusable model object, a missing client. */
import { describe, expect, it } from 'vitest';
import { resolveEmbedder, lazyEmbedder } from '../../src/integrations/internal/embedder.js';
import { retrievalTool } from '../../src/integrations/ai-sdk/index.js';

describe('resolveEmbedder() / lazyEmbedder() on bad input', () => {
  it('refuses a model that is neither an id nor an Embedder', () => {
    for (const model of [null, 42, {}, { id: 'x' }, { embed: () => [] }]) {
      expect(() => resolveEmbedder({ model: model as never })).toThrow(/"model" must be a model id \(name@factory\) or an Embedder/);
      expect(() => lazyEmbedder({ model: model as never })).toThrow(TypeError);
    }
  });

  it('names an unknown model only on first use when lazy', () => {
    const lazy = lazyEmbedder({ model: 'nope@Nowhere' });
    expect(lazy.id).toBe('nope@Nowhere');
    expect(() => lazy.get()).toThrow(/Embedding model "nope@Nowhere"/);
  });
});

describe('retrievalTool() on bad input', () => {
  it('needs a client and a list of dataset ids', () => {
    expect(() => retrievalTool(undefined as never)).toThrow(/retrievalTool needs \{ client, dataset_ids \}/);
    expect(() => retrievalTool({ client: {} as never, dataset_ids: ['d'] })).toThrow(/retrievalTool needs/);
    expect(() => retrievalTool({ client: { retrieve: async () => ({}) } as never, dataset_ids: 'd' as never })).toThrow(/a list of dataset ids/);
  });
});

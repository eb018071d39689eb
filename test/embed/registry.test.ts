/** ModelRegistry.embeddingStatus(): RAGFlow's verify_embedding_availability over its model catalogue, bad ids included. */
import { describe, expect, it } from 'vitest';
import { ModelRegistry } from '../../src/embed/index.js';
import { inEmbeddingCatalogue } from '../../src/embed/registry.js';

describe('embeddingStatus()', () => {
  const reg = new ModelRegistry([{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible' }]);

  it('ok for a registered or a built-in model', () => {
    expect(reg.embeddingStatus('hash-64@OpenAI-API-Compatible')).toBe('ok');
    expect(reg.embeddingStatus('ragloom-static-en-128@Builtin')).toBe('ok');
  });

  it('unauthorized for a catalogue model the tenant has not configured, names compared case-insensitively', () => {
    expect(reg.embeddingStatus('text-embedding-3-small@OpenAI')).toBe('unauthorized');
    expect(reg.embeddingStatus('TEXT-Embedding-3-Small@OpenAI')).toBe('unauthorized');
    // A bare name is found under any factory; a catalogue name under another factory is not.
    expect(reg.embeddingStatus('mistral-embed')).toBe('unauthorized');
    expect(reg.embeddingStatus('mistral-embed@OpenAI')).toBe('unsupported');
    // A built-in name ragloom does not run, but RAGFlow's catalogue lists.
    expect(reg.embeddingStatus('BAAI/bge-m3@Builtin')).toBe('unauthorized');
  });

  it('unsupported for anything else, malformed ids included', () => {
    for (const id of ['', '@', '@OpenAI', 'text-embedding-3-small@', 'nope@OpenAI', 'nope@Builtin', 'hash-64', 'a@b@OpenAI']) {
      expect([id, reg.embeddingStatus(id)]).toEqual([id, 'unsupported']);
    }
  });

  it('reads an id as RAGFlow does: the part after "@" is a factory only when RAGFlow knows it', () => {
    // '@NotAFactory' is part of the name, so the whole id is looked up as a name.
    expect(inEmbeddingCatalogue('mistral-embed@NotAFactory')).toBe(false);
    // Several '@': the last one splits, the factory unchecked.
    expect(inEmbeddingCatalogue('BAAI/bge-m3@x@NVIDIA')).toBe(false);
    expect(inEmbeddingCatalogue('Pro/BAAI/bge-m3@SILICONFLOW')).toBe(true);
  });
});

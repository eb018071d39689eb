import { describe, expect, afterAll, beforeAll } from 'vitest';
import { join } from 'node:path';
import { test, enc } from '../helpers.js';
import { Client } from '../../src/index.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../support/embedding-server.js';

let srv: FakeEmbeddingServer;
beforeAll(async () => { srv = await startEmbeddingServer(64); });
afterAll(() => srv.close());

describe('a registered OpenAI-compatible embedding model', () => {
  test('embeds chunks and questions over HTTP, with the key, and retrieves by them', async ({ dir }) => {
    const client = new Client({
      path: join(dir, 'kb.db'),
      models: [{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: srv.url, api_key: 'sk-test' }],
    });
    const ds = await client.createDataset({ name: 'kb', embedding_model: 'hash-64@OpenAI-API-Compatible' });
    const [doc] = await ds.uploadDocuments([{ display_name: 'notes.txt', blob: enc('x') }]);
    await doc!.addChunk({ content: 'supersonic nozzle flow separation' });
    await doc!.addChunk({ content: 'heat conduction in composite slabs' });
    const hits = await client.retrieve({ question: 'nozzle flow', dataset_ids: [ds.id], similarity_threshold: 0 });
    expect(hits[0]!.content).toBe('supersonic nozzle flow separation');
    expect(hits[0]!.vector_similarity).toBeGreaterThan(0.3);
    expect(srv.requests.length).toBeGreaterThan(0);
    expect(srv.requests.every((r) => r.auth === 'Bearer sk-test' && r.body.model === 'hash-64')).toBe(true);
    await client.close();
  });
});

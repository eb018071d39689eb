/**
 * `keyword` and `cross_languages` in retrieval: the tenant's default chat model rewrites the
 * question (a loopback OpenAI-protocol server stands in for it), as RAGFlow's retrieval does.
 */
import { expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { test, enc } from '../helpers.js';
import { Client } from '../../src/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

test('cross_languages translates the question and keyword appends the model keywords', async ({ dir }) => {
  const c = new Client({
    path: join(dir, 'kb.db'),
    models: [{ type: 'chat', name: 'writer', factory: 'OpenAI-API-Compatible', base_url: server.url }],
    default_chat_model: 'writer@OpenAI-API-Compatible',
  });
  try {
    const ds = await c.createDataset({ name: 'de' });
    const docs = await ds.uploadDocuments([
      { display_name: 'gezeiten.txt', blob: enc('Die Gezeiten entstehen durch die Anziehung des Mondes.') },
      { display_name: 'brot.txt', blob: enc('Der Teig muss eine Stunde ruhen.') },
    ]);
    await ds.parseDocuments(docs.map((d) => d.id));
    const plain = await c.retrieve({ question: 'tides', dataset_ids: [ds.id], similarity_threshold: 0 });
    expect(plain.every((x) => (x.term_similarity ?? 0) === 0)).toBe(true);
    server.script({ text: 'Gezeiten\n===\nmarées' });
    const n = server.requests.length;
    const translated = await c.retrieve({ question: 'tides', dataset_ids: [ds.id], similarity_threshold: 0, cross_languages: ['German', 'French'] });
    expect(JSON.stringify(server.requests[n]!.body.messages)).toContain('German, French');
    expect(translated[0]!.document_keyword).toBe('gezeiten.txt');
    expect(translated[0]!.term_similarity).toBeGreaterThan(0);
    server.script({ text: 'Teig,Stunde' });
    const kw = await c.retrieve({ question: 'how long to rest', dataset_ids: [ds.id], similarity_threshold: 0, keyword: true });
    expect(kw[0]!.document_keyword).toBe('brot.txt');
    expect(kw[0]!.term_similarity).toBeGreaterThan(0);
    // A failing model leaves the question as asked (RAGFlow falls back the same way).
    server.script({ status: 400, body: { error: { message: 'no' } } });
    await expect(c.retrieve({ question: 'tides', dataset_ids: [ds.id], similarity_threshold: 0, cross_languages: ['German'] })).resolves.toBeInstanceOf(Array);
  } finally {
    await c.close();
  }
});

import { describe, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../support/embedding-server.js';

const CORPUS = resolve(import.meta.dirname, '../../../shared/docs-corpus');
const HAVE = existsSync(CORPUS);
if (!HAVE) console.warn(`skipping the corpus ingestion test: ${CORPUS} is absent`);

let srv: FakeEmbeddingServer;
beforeAll(async () => { srv = await startEmbeddingServer(64); });
afterAll(() => srv.close());

// The expected failures of the shared half of the corpus (MANIFEST.md), with their messages.
const FAILS: Record<string, RegExp> = {
  'empty.pdf': /File is empty/,
  'invalid-header-eof-only.pdf': /Invalid PDF/,
  'libreoffice-writer-password.pdf': /encrypted/i,
};

describe.skipIf(!HAVE)('ingesting the whole docs corpus in one batch', () => {
  test('every file parses or fails with a clear message, and failures do not touch the others', async ({ dir }) => {
    const client = new Client({
      path: join(dir, 'kb.db'),
      models: [{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: srv.url }],
    });
    const ds = await client.createDataset({ name: 'corpus', embedding_model: 'hash-64@OpenAI-API-Compatible' });
    const files = readdirSync(CORPUS).filter((f) => f !== 'MANIFEST.md').sort();
    const docs = await ds.uploadDocuments(files.map((f) => ({ display_name: f, blob: readFileSync(join(CORPUS, f)) })));
    const res = await ds.parseDocuments(docs.map((d) => d.id), { pollMs: 200 });
    const byName = new Map(docs.map((d, i) => [d.name, res[i]!]));
    for (const f of files) {
      const [id, status, chunks] = byName.get(f)!;
      const [d] = await ds.listDocuments({ id });
      if (FAILS[f]) {
        expect(status, f).toBe('FAIL');
        expect(d!.progress_msg, f).toMatch(FAILS[f]!);
      } else {
        expect(status, `${f}: ${d!.progress_msg}`).toBe('DONE');
        expect(chunks, f).toBeGreaterThan(0);
        expect(d!.progress_msg).toMatch(/Task done/);
      }
    }
    // The scanned page went through OCR: its words are searchable.
    const hits = await client.retrieve({ question: 'Miss Watson in the kitchen door', dataset_ids: [ds.id], similarity_threshold: 0, vector_similarity_weight: 0 });
    expect(hits.some((h) => h.document_name === 'huckfinn-c02-22-scanned.pdf')).toBe(true);
    await client.close();
  }, 300_000);
});

/**
 * Export from a RAGFlow 0.17.2 server (a stand-in speaking its wire protocol, fixtures/ragflow-0172.ts)
 * into a ragloom database: what a real 0.17.2 export carries, and how each of its quirks lands.
 */
import { describe, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { migrateExport, migrateImport, migrateVerify, readManifest } from '../../src/migrate/index.js';
import { test, enc } from './fixtures.js';
import { startRagflow0172, type Doc, type Kb } from './fixtures/ragflow-0172.js';

const KEY = 'ragflow-' + 'k'.repeat(32);
const id = (n: number) => n.toString(16).padStart(32, 'a');

// A 0.17.2 knowledge base as its MySQL rows hold it.
const KBS: Kb[] = [
  {
    id: id(1), name: 'Aircraft manuals', description: 'Maintenance manuals', embd_id: 'BAAI/bge-large-zh-v1.5@BAAI', permission: 'team', parser_id: 'naive',
    parser_config: { chunk_token_num: 128, delimiter: '\\n!?;。；！？', html4excel: false, layout_recognize: 'DeepDOC', raptor: { use_raptor: false } }, pagerank: 3, status: '1', create_time: 1_741_000_000_000,
  },
  { id: id(2), name: 'Graph notes', description: null, embd_id: 'BAAI/bge-large-zh-v1.5@BAAI', permission: 'me', parser_id: 'knowledge_graph', parser_config: { chunk_token_num: 8192 }, pagerank: 0, status: '1', create_time: 1_741_000_100_000 },
  { id: id(3), name: 'Deleted kb', description: null, embd_id: 'x@y', permission: 'me', parser_id: 'naive', parser_config: {}, pagerank: 0, status: '0', create_time: 1_741_000_200_000 },
];
const text = (s: string) => enc(`${s}\n\nThis section of the manual covers ${s.toLowerCase()} procedures for line maintenance.\n`);
const DOCS: Doc[] = [
  { id: id(11), kb_id: id(1), name: 'hydraulics.txt', location: 'hydraulics.txt', parser_id: 'naive', status: '1', run: '3', blob: text('Hydraulics'), create_time: 1_741_000_001_000 },
  { id: id(12), kb_id: id(1), name: 'landing gear.md', location: 'landing gear.md', parser_id: 'naive', status: '1', run: '3', blob: text('# Landing gear'), create_time: 1_741_000_002_000 },
  { id: id(13), kb_id: id(1), name: 'retired.txt', location: 'retired.txt', parser_id: 'naive', status: '0', run: '3', blob: text('Retired'), create_time: 1_741_000_003_000 },
  { id: id(14), kb_id: id(1), name: 'lost.txt', location: '', parser_id: 'naive', status: '1', run: '4', blob: null, create_time: 1_741_000_004_000 },
  { id: id(15), kb_id: id(1), name: 'blank.txt', location: 'blank.txt', parser_id: 'naive', status: '1', run: '3', blob: new Uint8Array(0), create_time: 1_741_000_005_000 },
  { id: id(16), kb_id: id(1), name: 'faq.txt', location: 'faq.txt', parser_id: 'one', status: '1', run: '3', blob: text('FAQ'), create_time: 1_741_000_006_000 },
  { id: id(21), kb_id: id(2), name: 'entities.txt', location: 'entities.txt', parser_id: 'knowledge_graph', status: '1', run: '3', blob: text('Entities'), create_time: 1_741_000_101_000 },
];

describe('RAGFlow 0.17.2 → ragloom', () => {
  test('active datasets and documents with their settings; empty locations skipped; unknown model and stored keys handled; verify passes', async ({ dir }) => {
    const rf = await startRagflow0172(KEY, KBS, DOCS);
    try {
      const warnings: string[] = [];
      const ex = await migrateExport({ from: rf.url, apiKey: KEY, out: join(dir, 'x'), log: (_l, m) => warnings.push(m) });
      expect(ex).toMatchObject({ datasets: 2, files: 5, skipped: 2 });
      expect(rf.requests.filter((r) => r.startsWith('GET /api/v1/datasets?'))).toHaveLength(1); // one page
      const m = readManifest(ex.manifest);
      expect(m.entries.map((e) => [e.kb_name, e.chunk_method, e.embedding_model, e.pagerank, e.permission])).toEqual([
        ['Aircraft manuals', 'naive', 'BAAI/bge-large-zh-v1.5@BAAI', 3, 'team'],
        ['Graph notes', 'knowledge_graph', 'BAAI/bge-large-zh-v1.5@BAAI', 0, 'me'],
      ]);
      const man = m.entries[0]!;
      expect(man.folder).toBe(`Aircraft manuals_${id(1).slice(0, 8)}`);
      expect(man.files.map((f) => f.name).sort()).toEqual(['blank.txt', 'faq.txt', 'hydraulics.txt', 'landing gear.md']);
      expect(man.files.find((f) => f.name === 'faq.txt')!.chunk_method).toBe('one');
      expect(man.skipped.map((s) => s.name).sort()).toEqual(['lost.txt', 'retired.txt']);
      expect(warnings).toEqual(['Aircraft manuals: lost.txt: skipped: the document has an empty location (no stored file)']);
      expect(readFileSync(join(dir, 'x', man.folder, 'hydraulics.txt'))).toEqual(Buffer.from(DOCS[0]!.blob!));

      const target = join(dir, 'kb.db');
      const iw: string[] = [];
      const im = await migrateImport({ manifest: ex.manifest, to: target, log: (_l, msg) => iw.push(msg) });
      expect(im).toMatchObject({ datasets_created: 2, uploaded: 5, failed: 0 });
      expect(iw).toEqual([
        expect.stringMatching(/^Aircraft manuals: .*BAAI\/bge-large-zh-v1\.5@BAAI.* — created without embedding_model BAAI\/bge-large-zh-v1\.5@BAAI \(the target's default is used\)$/),
        'Graph notes: datasets cannot be created with chunk_method knowledge_graph; created as naive, its documents set to knowledge_graph',
        // 0.17.2's knowledge_graph default (8192) is above what 0.25.6 datasets take.
        'Graph notes: the target does not take parser_config chunk_token_num (Input should be less than or equal to 2048); created without it',
        // 'BAAI' is no factory of RAGFlow 0.25.6's catalogue: the whole id is an unknown name.
        'Graph notes: Unsupported model: <BAAI/bge-large-zh-v1.5@BAAI> — created without embedding_model BAAI/bge-large-zh-v1.5@BAAI (the target\'s default is used)',
      ]);
      const c = new Client({ path: target });
      const [air] = await c.listDatasets({ name: 'Aircraft manuals' });
      expect(air).toMatchObject({ description: 'Maintenance manuals', permission: 'team', pagerank: 3, chunk_method: 'naive' });
      expect(air!.parser_config).toMatchObject({ chunk_token_num: 128, delimiter: '\\n!?;。；！？' });
      const [graph] = await c.listDatasets({ name: 'Graph notes' });
      expect((await graph!.listDocuments())[0]!.chunk_method).toBe('knowledge_graph');
      await c.close();
      // The empty text file is parsed to no chunk (DONE, as in RAGFlow); the rest parse.
      const r = await migrateVerify({ manifest: ex.manifest, to: target, waitSeconds: 120 });
      expect(r).toMatchObject({ ok: true, documents: { expected: 5, found: 5 }, runs: { DONE: 5, FAIL: 0, pending: 0 } });
      expect(rf.requests.every((q) => !q.includes(KEY))).toBe(true);
    } finally {
      rf.server.close();
    }
  });

  test('a wrong key: the server\'s own error, nothing written', async ({ dir }) => {
    const rf = await startRagflow0172(KEY, KBS, DOCS);
    try {
      await expect(migrateExport({ from: rf.url, apiKey: 'ragflow-wrong', out: join(dir, 'x') })).rejects.toThrow('Authentication error: API key is invalid!');
    } finally {
      rf.server.close();
    }
  });
});

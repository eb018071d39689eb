import { describe, expect } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { test } from '../helpers.js';
import { Client, type DataSet } from '../../src/index.js';
import { fullTextReindex } from '../../src/core/index.js';
import type { Api } from '../../src/api/index.js';
import { ftsTerms, analyze } from '../../src/text/index.js';
import { termIndexOptions } from '../../src/search/term-index.js';
import { SCHEMA_VERSION } from '../../src/store/migrations.js';

const engineOf = (c: Client) => (c as unknown as { api: Api }).api.engine;
const reindexed = (c: Client) => fullTextReindex(engineOf(c)).idle();
const rows = (c: Client, sql: string, ...a: unknown[]) => engineOf(c).db.prepare(sql).all(...a) as Array<Record<string, unknown>>;

// Real sentences: articles 3, 17 and 26 of the Universal Declaration of Human Rights.
const DE = [
  'Jeder hat das Recht auf Leben, Freiheit und Sicherheit der Person.',
  'Jeder hat das Recht, sowohl allein als auch in Gemeinschaft mit anderen Eigentum innezuhaben. Niemand darf willkürlich seines Eigentums beraubt werden.',
  'Jeder hat das Recht auf Bildung. Die Bildung ist unentgeltlich, zum mindesten der Grundschulunterricht und die grundlegende Bildung.',
];
const FR = [
  'Tout individu a droit à la vie, à la liberté et à la sûreté de sa personne.',
  'Toute personne, aussi bien seule qu’en collectivité, a droit à la propriété. Nul ne peut être arbitrairement privé de sa propriété.',
  'Toute personne a droit à l’éducation. L’éducation doit être gratuite, au moins en ce qui concerne l’enseignement élémentaire et fondamental.',
];

async function datasetOf(client: Client, name: string, texts: string[], language?: string): Promise<DataSet> {
  const ds = await client.createDataset({ name });
  if (language !== undefined) await ds.update({ language });
  const [doc] = await ds.uploadDocuments([{ display_name: `${name}.txt`, blob: new TextEncoder().encode('x') }]);
  for (const t of texts) await doc!.addChunk({ content: t });
  await reindexed(client);
  return ds;
}

const textOnly = { vector_similarity_weight: 0, similarity_threshold: 0 };

describe('a dataset language', () => {
  test('picks the stemmer: a German question with other inflections finds its passage', async ({ client }) => {
    const ds = await datasetOf(client, 'de', DE, 'German');
    const [top] = await client.retrieve({ dataset_ids: [ds.id], question: 'Wer darf Eigentümer sein und wem werden Eigentume geraubt?', ...textOnly });
    expect(top!.content).toBe(DE[1]);
    expect(rows(client, 'SELECT DISTINCT lang FROM chunk')).toEqual([{ lang: 'de' }]);
    // content_ltks is the chunk's German analysis.
    expect((top as unknown as { content_ltks: string }).content_ltks).toContain('eigentum');
  });

  test('a change re-indexes in the background, searchable throughout', async ({ client }) => {
    // Enough chunks for several slices (256 rows each): the search below runs between two.
    const many = Array.from({ length: 600 }, (_, i) => `${DE[i % 3]} (${i})`);
    const ds = await datasetOf(client, 'big', many);
    const q = { dataset_ids: [ds.id], question: 'Häuser und Rechte der Menschen', ...textOnly, page_size: 5 };
    expect(rows(client, 'SELECT DISTINCT lang FROM chunk')).toEqual([{ lang: 'en' }]);
    const english = await client.retrieve(q);
    await ds.update({ language: 'German' }); // the first slice is written before this returns
    const mid = rows(client, 'SELECT lang, COUNT(*) AS n FROM chunk GROUP BY lang ORDER BY lang');
    expect(mid.map((r) => r.lang)).toEqual(['de', 'en']);
    const during = await client.retrieve(q);
    expect(during.length).toBe(5);
    await reindexed(client);
    expect(rows(client, 'SELECT DISTINCT lang FROM chunk')).toEqual([{ lang: 'de' }]);
    expect(rows(client, 'SELECT fts_language FROM dataset WHERE id = ?', ds.id)).toEqual([{ fts_language: 'de' }]);
    const german = await client.retrieve(q);
    // English stems never met "Rechte"/"Menschen"; German ones do, so more rows match.
    expect(german[0]!.term_similarity!).toBeGreaterThan(english[0]!.term_similarity!);
    // The in-memory term index follows the rewritten rows: it ranks exactly as FTS5 does.
    termIndexOptions.enabled = false;
    try {
      expect((await client.retrieve(q)).map((c) => [c.id, c.similarity])).toEqual(german.map((c) => [c.id, c.similarity]));
    } finally {
      termIndexOptions.enabled = true;
    }
  });

  test('unset: each chunk detected; a question over datasets of different languages is detected too', async ({ client }) => {
    const mixed = await datasetOf(client, 'mixed', [...DE, ...FR], '');
    const langs = rows(client, 'SELECT lang, COUNT(*) AS n FROM chunk GROUP BY lang ORDER BY lang');
    expect(langs).toEqual([{ lang: 'de', n: 3 }, { lang: 'fr', n: 3 }]);
    const [fr] = await client.retrieve({ dataset_ids: [mixed.id], question: 'les propriétés privées', ...textOnly });
    expect(fr!.content).toBe(FR[1]);
    const de = await datasetOf(client, 'de', DE, 'German');
    const frDs = await datasetOf(client, 'fr', FR, 'French');
    const both = await client.retrieve({ dataset_ids: [de.id, frDs.id], question: "l'enseignement des enfants, éducations gratuites", ...textOnly });
    expect(both[0]!.content).toBe(FR[2]);
  });

  test('traditional and simplified Chinese find each other', async ({ client }) => {
    const ds = await datasetOf(client, 'zh', ['人人有受教育的權利，教育應當免費。', '人人有權享有生命、自由和人身安全。'], 'Traditional Chinese');
    const [top] = await client.retrieve({ dataset_ids: [ds.id], question: '受教育的权利', ...textOnly });
    expect(top!.content).toBe('人人有受教育的權利，教育應當免費。');
    // Every term of the simplified question is among the traditional passage's (version 2 shared only the bigrams both scripts write alike).
    const indexed = new Set((top as unknown as { content_ltks: string }).content_ltks.split(' '));
    for (const t of analyze('受教育的权利', 'zh')) expect(indexed.has(t), t).toBe(true);
    expect(analyze('受教育的权利', 'v2').filter((t) => analyze('人人有受教育的權利', 'v2').includes(t))).toEqual(['受教', '教育', '育的']);
  });
});

test('a store of analyzer version 2 is upgraded in the background (migration 13), its English results unchanged', async ({ dir }) => {
  const path = join(dir, 'old.db');
  let client = new Client({ path });
  const ds = await client.createDataset({ name: 'old' });
  const [doc] = await ds.uploadDocuments([{ display_name: 'old.txt', blob: new TextEncoder().encode('x') }]);
  const texts = [...Array.from({ length: 300 }, (_, i) => `Heated wings in a propeller slipstream, case ${i}.`), '人人生而自由，在尊严和权利上一律平等。'];
  for (const t of texts) await doc!.addChunk({ content: t });
  await client.close();
  // Make it the file ragloom wrote before languages: version-2 full-text rows, schema 12.
  const raw = new Database(path);
  const v2 = raw.prepare("SELECT c.rowid, c.content, d.name FROM chunk c JOIN document d ON d.id = c.document_id").all() as Array<{ rowid: number; content: string; name: string }>;
  for (const r of v2) {
    raw.prepare('DELETE FROM chunk_fts WHERE rowid = ?').run(r.rowid);
    raw.prepare('INSERT INTO chunk_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)').run(r.rowid, ...ftsTerms(r.name, r.content, [], [], 'v2'));
  }
  raw.exec(`ALTER TABLE chunk DROP COLUMN titled; ALTER TABLE chunk DROP COLUMN lang; ALTER TABLE dataset DROP COLUMN fts_language;
    UPDATE search_meta SET value = '2' WHERE key = 'analyzer_version'; PRAGMA user_version = 12;`);
  expect(raw.prepare(`SELECT COUNT(*) AS n FROM chunk_fts WHERE chunk_fts MATCH '"一律平等"'`).get()).toEqual({ n: 0 });
  raw.close();
  // 13: languages; 14: chunk.titled (every chunk of this file keeps its title terms); those after it run on open too.
  expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(14);

  client = new Client({ path });
  const q = { dataset_ids: [ds.id], question: 'heated wings in a slipstream', page_size: 10 };
  // Searchable while the background re-index runs (it has done one slice of 256 rows).
  const first = await client.retrieve(q);
  expect(first.length).toBe(10);
  await reindexed(client);
  expect(rows(client, 'SELECT lang, COUNT(*) AS n FROM chunk GROUP BY lang')).toEqual([{ lang: 'en', n: texts.length }]);
  expect(rows(client, 'SELECT fts_language FROM dataset')).toEqual([{ fts_language: 'en' }]);
  expect(rows(client, "SELECT value FROM search_meta WHERE key = 'analyzer_version'")).toEqual([{ value: '3' }]);
  // The Chinese row was rewritten with its words; the English rows' terms did not change.
  expect(rows(client, `SELECT COUNT(*) AS n FROM chunk_fts WHERE chunk_fts MATCH '"一律平等"'`)).toEqual([{ n: 1 }]);
  expect(fullTextReindex(engineOf(client)).rewritten).toBe(1);
  const after = await client.retrieve(q);
  expect(after.map((c) => [c.content, c.similarity])).toEqual(first.map((c) => [c.content, c.similarity]));
  const [zh] = await client.retrieve({ dataset_ids: [ds.id], question: '一律平等', ...textOnly });
  expect(zh!.content).toBe(texts[texts.length - 1]);
  await client.close();
});

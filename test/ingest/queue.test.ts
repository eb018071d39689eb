import { describe, expect, beforeAll, afterAll } from 'vitest';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { test, apiError, enc } from '../helpers.js';
import { Client, type DataSet } from '../../src/index.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../support/embedding-server.js';

let srv: FakeEmbeddingServer;
beforeAll(async () => { srv = await startEmbeddingServer(64); });
afterAll(() => srv.close());

const MODEL = 'hash-64@OpenAI-API-Compatible';
const open = (dir: string) => new Client({
  path: join(dir, 'kb.db'),
  models: [{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: srv.url }],
});

/** ~`paragraphs` paragraphs of distinct prose, enough for many chunks. */
function prose(paragraphs: number): string {
  const words = ['wing', 'flow', 'shock', 'boundary', 'layer', 'heat', 'nozzle', 'pressure', 'vortex', 'lift', 'drag', 'mach'];
  return Array.from({ length: paragraphs }, (_, i) =>
    Array.from({ length: 60 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ') + ` paragraph ${i}.`).join('\n\n');
}

async function waitFor(ds: DataSet, id: string, runs: string[], ms = 60_000) {
  const t0 = Date.now();
  for (;;) {
    const [d] = await ds.listDocuments({ id });
    if (runs.includes(d!.run)) return d!;
    if (Date.now() - t0 > ms) throw new Error(`timeout waiting for ${runs}; run=${d!.run} msg=${d!.progress_msg}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('DataSet#parseDocuments()', () => {
  test('an empty or blank text file is DONE with no chunk (RAGFlow: "No chunk built from …"); an empty PDF or JSON fails', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL });
    const docs = await ds.uploadDocuments([
      { display_name: 'empty.txt', blob: new Uint8Array(0) },
      { display_name: 'blank.md', blob: enc('  \n\n \n') },
      { display_name: 'empty.pdf', blob: new Uint8Array(0) },
      { display_name: 'empty.json', blob: new Uint8Array(0) },
    ]);
    const res = await ds.parseDocuments(docs.map((d) => d.id));
    expect(res.map((r) => [r[1], r[2]])).toEqual([['DONE', 0], ['DONE', 0], ['FAIL', 0], ['FAIL', 0]]);
    const byName = new Map((await ds.listDocuments()).map((d) => [d.name, d]));
    expect(byName.get('empty.txt')!.progress_msg).toMatch(/No chunk built from empty\.txt/);
    expect(byName.get('blank.md')!.progress_msg).toMatch(/No chunk built from blank\.md/);
    expect(byName.get('empty.pdf')!.progress_msg).toMatch(/File is empty/);
    expect(byName.get('empty.json')!.progress_msg).toMatch(/File is empty/);
    expect((await client.listDatasets())[0]!.chunk_count).toBe(0);
    await client.close();
  });

  test('parses to DONE with chunks, counts, timing and progress events', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL, parser_config: { chunk_token_num: 64 } });
    const [a, b] = await ds.uploadDocuments([
      { display_name: 'a.txt', blob: enc(prose(20)) },
      { display_name: 'b.md', blob: enc('# Title\n\nSome *markdown* text about nozzles.\n') },
    ]);
    const seen: string[] = [];
    const res = await ds.parseDocuments([a!.id, b!.id], { onProgress: (p) => seen.push(`${p.document_id}:${p.run}`) });
    expect(res.map((r) => r[1])).toEqual(['DONE', 'DONE']);
    expect(res[0]![2]).toBeGreaterThan(5);
    expect(res[0]![3]).toBeGreaterThan(res[0]![2] * 30);
    const [d] = await ds.listDocuments({ id: a!.id });
    expect(d).toMatchObject({ run: 'DONE', progress: 1, chunk_count: res[0]![2], token_count: res[0]![3] });
    expect(d!.progress_msg).toMatch(/Task done/);
    expect((d as unknown as { process_duration: number }).process_duration).toBeGreaterThan(0);
    expect((d as unknown as { process_begin_at: string }).process_begin_at).toBeTruthy();
    expect(seen).toContain(`${a!.id}:DONE`);
    expect((await client.listDatasets())[0]!.chunk_count).toBe(res[0]![2] + res[1]![2]);
    const hits = await client.retrieve({ question: 'nozzles markdown', dataset_ids: [ds.id], similarity_threshold: 0 });
    expect(hits[0]!.document_id).toBe(b!.id);
    await client.close();
  });

  test('a bad file fails alone; the others in the batch finish', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL });
    const docs = await ds.uploadDocuments([
      { display_name: 'broken.pdf', blob: enc('%PDF-1.3\nnot really\n%%EOF') },
      { display_name: 'empty.pdf', blob: new Uint8Array() },
      { display_name: 'good.txt', blob: enc('fine text about heat transfer') },
    ]);
    const res = await ds.parseDocuments(docs.map((d) => d.id));
    expect(res.map((r) => r[1])).toEqual(['FAIL', 'FAIL', 'DONE']);
    const [broken] = await ds.listDocuments({ id: docs[0]!.id });
    expect(broken!.progress_msg).toMatch(/\[ERROR\]/);
    await client.close();
  });

  test('re-parsing replaces the chunks; the parser_config of the document wins', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL, parser_config: { chunk_token_num: 512 } });
    const [a] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc(prose(12)) }]);
    const [[, , n1]] = (await ds.parseDocuments([a!.id])) as [[string, string, number, number]];
    await a!.update({ parser_config: { chunk_token_num: 64 } });
    const [[, , n2]] = (await ds.parseDocuments([a!.id])) as [[string, string, number, number]];
    expect(n2).toBeGreaterThan(n1);
    expect(await a!.listChunks({ page_size: 0 })).toHaveLength(n2);
    await client.close();
  });

  test('the embedding cache: re-parsing unchanged text asks the model nothing', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL, parser_config: { chunk_token_num: 64 } });
    const [a] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc(prose(10)) }]);
    await ds.parseDocuments([a!.id]);
    const before = srv.requests.length;
    const texts = srv.requests.reduce((n, r) => n + r.body.input.length, 0);
    expect(texts).toBeGreaterThan(5);
    const [[, status, chunks]] = (await ds.parseDocuments([a!.id])) as [[string, string, number, number]];
    expect([status, chunks > 5]).toEqual(['DONE', true]);
    expect(srv.requests.length).toBe(before);
    await client.close();
  });

  test('errors: foreign dataset, no ids, unknown ids (valid ones still queued), parsing a running document', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL });
    const [a, big] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('alpha text') }, { display_name: 'big.txt', blob: enc(prose(3000)) }]);
    let e = await apiError(ds.asyncParseDocuments([]));
    expect([e.code, e.message]).toEqual([102, '`document_ids` is required']);
    e = await apiError(ds.asyncParseDocuments([a!.id, 'ghost']));
    expect([e.code, e.message]).toEqual([102, "Documents not found: ['ghost']"]);
    await waitFor(ds, a!.id, ['DONE']);
    await ds.asyncParseDocuments([big!.id]);
    e = await apiError(ds.asyncParseDocuments([big!.id]));
    expect(e.message).toBe("Can't parse document that is currently being processed");
    await ds.asyncCancelParseDocuments([big!.id]);
    const other = await client.createDataset({ name: 'other' });
    Object.assign(other, { id: 'f'.repeat(32) });
    e = await apiError(other.asyncParseDocuments([a!.id]));
    expect(e.message).toBe(`You don't own the dataset ${'f'.repeat(32)}.`);
    await client.close();
  });
});

describe('DataSet#asyncCancelParseDocuments()', () => {
  test('stops a running parse and leaves no half-written chunks; the event loop stays responsive', async ({ dir }) => {
    const client = open(dir);
    const ds = await client.createDataset({ name: 'kb', embedding_model: MODEL, parser_config: { chunk_token_num: 32 } });
    const [big] = await ds.uploadDocuments([{ display_name: 'big.txt', blob: enc(prose(4000)) }]);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    await ds.asyncParseDocuments([big!.id]);
    await waitFor(ds, big!.id, ['RUNNING']);
    await new Promise((r) => setTimeout(r, 300));
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(10); // parsing runs off the caller's event loop
    await ds.asyncCancelParseDocuments([big!.id]);
    const d = await waitFor(ds, big!.id, ['CANCEL']);
    expect(d.chunk_count).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(await big!.listChunks({ page_size: 0 })).toHaveLength(0);
    const e = await apiError(ds.asyncCancelParseDocuments([big!.id]));
    expect([e.code, e.message, e.data]).toEqual([102, "Can't stop parsing document that has not started or already completed", { error_code: 'DOC_STOP_PARSING_INVALID_STATE' }]);
    expect((await apiError(ds.asyncCancelParseDocuments(['ghost']))).message).toBe("You don't own the document ghost.");
    await client.close();
  });
});

describe('recovery', () => {
  test('a process killed mid-parse leaves the document recoverable: the next open parses it again', async ({ dir }) => {
    const child = join(dir, 'child.mjs');
    const src = resolve(import.meta.dirname, '../../src/index.ts');
    writeFileSync(child, `
      import { Client } from ${JSON.stringify(src)};
      import { readFileSync } from 'node:fs';
      const client = new Client({ path: process.env.DB, models: [{ type: 'embedding', name: 'hash-64', factory: 'OpenAI-API-Compatible', base_url: process.env.URL }] });
      const ds = await client.createDataset({ name: 'kb', embedding_model: 'hash-64@OpenAI-API-Compatible', parser_config: { chunk_token_num: 32 } });
      const [d] = await ds.uploadDocuments([{ display_name: 'big.txt', blob: readFileSync(process.env.TEXT_FILE) }]);
      await ds.asyncParseDocuments([d.id]);
      for (;;) {
        const [x] = await ds.listDocuments({ id: d.id });
        if (x.progress > 0.4) { process.stdout.write(d.id + '\\n'); process.kill(process.pid, 'SIGKILL'); }
        await new Promise((r) => setTimeout(r, 5));
      }
    `);
    writeFileSync(join(dir, 'big.txt'), prose(1500));
    const out = await new Promise<string>((res, rej) => {
      const p = spawn(process.execPath, ['--import', 'tsx', child], {
        env: { ...process.env, DB: join(dir, 'kb.db'), URL: srv.url, TEXT_FILE: join(dir, 'big.txt') }, stdio: ['ignore', 'pipe', 'inherit'],
      });
      let s = '';
      p.stdout.on('data', (c) => (s += c));
      p.on('exit', (code, sig) => (sig === 'SIGKILL' ? res(s.trim()) : rej(new Error(`child exited ${code} ${sig}`))));
    });
    const client = open(dir);
    const ds = (await client.listDatasets())[0]!;
    const d = await waitFor(ds, out, ['DONE'], 120_000);
    expect(d.chunk_count).toBeGreaterThan(50);
    expect(await d.listChunks({ page_size: 0 })).toHaveLength(d.chunk_count);
    await client.close();
  });
});

/**
 * Loads Cranfield into a ragloom database through the public API, once: one document per
 * abstract (named after its title, as a paper's file would be), one chunk per document via
 * `addChunk`. The database file under `bench/.cache/` keeps the chunks and the embedding cache,
 * so a second run costs no model time. The two empty abstracts (471, 995) cannot be chunks.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, type ClientOptions, type DataSet } from '../../src/index.js';
import { DEFAULT_EMBEDDING_MODEL } from '../../src/embed/index.js';
import type { Cranfield } from './cranfield.js';
import type { Engine } from '../../src/core/engine.js';
import { embedCached } from '../../src/core/embedding.js';

/** Where benchmark databases are kept between runs (RAGLOOM_BENCH_CACHE: another folder, e.g. shared by two checkouts). */
export const CACHE_DIR = process.env.RAGLOOM_BENCH_CACHE ?? resolve(dirname(fileURLToPath(import.meta.url)), '..', '.cache');

export interface CranDb {
  client: Client;
  /** The options `client` was opened with (open another Client on the same file with them). */
  clientOptions: ClientOptions;
  dataset: DataSet;
  /** chunk document id → Cranfield doc id */
  docOf: Map<string, number>;
}

const enc = (s: string) => new TextEncoder().encode(s);

/** A file name from a title: no path separators, at most 200 bytes, `.txt`. */
function fileName(title: string, id: number): string {
  const t = title.replace(/[\\/:*?"<>|]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 190).trim();
  return `${t || `doc ${id}`}.txt`;
}

export async function openCranDb(c: Cranfield, opts: { model?: string; file?: string; log?: (s: string) => void } = {}): Promise<CranDb> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const model = opts.model ?? DEFAULT_EMBEDDING_MODEL;
  const path = opts.file ?? join(CACHE_DIR, `cranfield-${model.replace(/[^a-z0-9]+/gi, '_')}.db`);
  const fresh = !existsSync(path);
  const clientOptions: ClientOptions = { path, default_embedding_model: model };
  const client = new Client(clientOptions);
  let dataset = (await client.listDatasets({ name: 'cranfield' }).catch(() => []))[0];
  if (!dataset || fresh) dataset = await client.createDataset({ name: 'cranfield', embedding_model: model });
  const docOf = new Map<string, number>();
  const byName = new Map<string, number>();
  const existing = await dataset.listDocuments({ page_size: 5000 });
  for (const d of existing) byName.set(d.name, d.chunk_count);
  const log = opts.log ?? (() => {});
  const t0 = performance.now();
  let added = 0;
  // Upload in batches, then add each abstract as the document's one chunk.
  const todo = c.docs.filter((d) => d.text.trim());
  if (byName.size < todo.length) {
    // Fill the embedding cache in large batches first: addChunk embeds two texts per call.
    const engine = (client as unknown as { api: { engine: Engine } }).api.engine;
    const texts = todo.flatMap((d) => [fileName(d.title, d.id), d.text]);
    for (let s = 0; s < texts.length; s += 256) {
      await embedCached(engine, dataset.embedding_model, texts.slice(s, s + 256));
      log(`cranfield: embedded ${Math.min(texts.length, s + 256)}/${texts.length} texts (${((s + 256) / ((performance.now() - t0) / 1000)).toFixed(1)}/s)`);
    }
  }
  for (let s = 0; s < todo.length; s += 50) {
    const part = todo.slice(s, s + 50);
    const names = part.map((d) => fileName(d.title, d.id));
    const missing = part.filter((_, i) => !byName.has(names[i]!));
    if (missing.length) {
      const docs = await dataset.uploadDocuments(missing.map((d) => ({ display_name: fileName(d.title, d.id), blob: enc(d.text) })));
      for (const [i, doc] of docs.entries()) {
        await doc.addChunk({ content: missing[i]!.text });
        added++;
      }
      log(`cranfield: ${s + part.length}/${todo.length} abstracts (${(added / ((performance.now() - t0) / 1000)).toFixed(1)}/s)`);
    }
  }
  const all = await dataset.listDocuments({ page_size: 5000 });
  // Names can collide ("x(1).txt"), so map by content instead.
  const byText = new Map(todo.map((d) => [d.text, d.id]));
  for (const d of all) {
    const [ch] = await d.listChunks({ page_size: 1 });
    const id = ch ? byText.get(ch.content) : undefined;
    if (id !== undefined) docOf.set(d.id, id);
  }
  return { client, clientOptions, dataset, docOf };
}

/**
 * A collection loaded into a ragloom database through the public API, as a user would: one
 * document per record (`<id> <title>.txt`), dataset `chunk_method: 'one'` (the whole record is
 * one chunk), `parseDocuments`. Kept under bench/.cache/ so a second run costs no ingest.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client, type ClientOptions, type DataSet } from '../../src/index.js';
import { DEFAULT_EMBEDDING_MODEL } from '../../src/embed/index.js';
import { CACHE_DIR } from './cran-db.js';
import type { Collection } from './collections.js';

export interface CollectionDb {
  client: Client;
  /** The options `client` was opened with (open another Client on the same file with them). */
  clientOptions: ClientOptions;
  dataset: DataSet;
  /** ragloom document id → the collection's record id. */
  recordOf: Map<string, number>;
}

const enc = (s: string) => new TextEncoder().encode(s);

function fileName(id: number, title: string): string {
  const t = title.replace(/[\\/:*?"<>|]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 150).trim();
  return `${id} ${t}.txt`;
}

export async function openCollectionDb(c: Collection, opts: { model?: string; log?: (s: string) => void; clientOptions?: Partial<ClientOptions> } = {}): Promise<CollectionDb> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const model = opts.model ?? DEFAULT_EMBEDDING_MODEL;
  const path = join(CACHE_DIR, `${c.name}-one-${model.replace(/[^a-z0-9]+/gi, '_')}.db`);
  const log = opts.log ?? (() => {});
  const clientOptions: ClientOptions = { path, default_embedding_model: model, ...opts.clientOptions };
  const open = () => new Client(clientOptions);
  let client = open();
  let [dataset] = await client.listDatasets({ name: c.name }).catch(() => []);
  const docs = c.docs.filter((d) => d.text.trim());
  const complete = async (ds: DataSet | undefined) => {
    if (!ds) return false;
    const [info] = await client.listDatasets({ id: ds.id });
    return info!.document_count === docs.length && info!.chunk_count === docs.length;
  };
  if (!(await complete(dataset))) {
    // Start over: a half-loaded cache would bias the numbers.
    await client.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    client = open();
    dataset = await client.createDataset({ name: c.name, chunk_method: 'one', embedding_model: model });
    const t0 = performance.now();
    for (let s = 0; s < docs.length; s += 500) {
      const part = docs.slice(s, s + 500);
      const up = await dataset.uploadDocuments(part.map((d) => ({ display_name: fileName(d.id, d.title), blob: enc(d.text) })));
      const status = await dataset.parseDocuments(up.map((d) => d.id), { pollMs: 200 });
      const bad = status.filter(([, run]) => run !== 'DONE');
      if (bad.length) throw new Error(`${c.name}: ${bad.length} documents did not parse: ${JSON.stringify(bad.slice(0, 3))}`);
      log(`${c.name}: ${s + part.length}/${docs.length} records (${((s + part.length) / ((performance.now() - t0) / 1000)).toFixed(1)}/s)`);
    }
  }
  const recordOf = new Map<string, number>();
  for (let page = 1; ; page++) {
    const list = await dataset!.listDocuments({ page, page_size: 1000 });
    for (const d of list) recordOf.set(d.id, Number(d.name.slice(0, d.name.indexOf(' '))));
    if (list.length < 1000) break;
  }
  if (!existsSync(path)) throw new Error(`${path} vanished`);
  return { client, clientOptions, dataset: dataset!, recordOf };
}

/**
 * Preludes of the docs' TypeScript examples (test/support/doc-examples.ts): what a block that is a
 * fragment uses, set up before it (`before`) and closed after it (`after`). A block names one with
 * `<!-- example: prelude=NAME -->` above its fence. Runnable ones build real state (a database in
 * the example's folder, a server on a free port); `declared-*` ones only declare names, for blocks
 * that are type-checked but not run.
 */
export interface Prelude {
  before: string;
  after?: string;
}

/** A client on ./kb.db with the dataset `handbook` holding intro.md, parsed (needs `files=intro`). */
const DATASET = `import { readFile as __readFile } from 'node:fs/promises';
import { Client } from 'ragloom';
const client = new Client({ path: './kb.db' });
const ds = await client.createDataset({ name: 'handbook' });
const __docs = await ds.uploadDocuments([{ display_name: 'intro.md', blob: await __readFile('intro.md') }]);
await ds.parseDocuments(__docs.map((d) => d.id));`;

export const PRELUDES: Readonly<Record<string, Prelude>> = {
  /** `client` and `ds`. */
  dataset: { before: DATASET, after: 'await client.close();' },
  /** `client`, `ds` and `chat` (a chat assistant on ds, with the built-in model). */
  chat: {
    before: `${DATASET}
const chat = await client.createChat({ name: 'helpdesk', dataset_ids: [ds.id] });`,
    after: 'await client.close();',
  },
  /**
   * `url`, `apiKey` and `chatId`: a ragloom server on a free port over ./kb.db, with a chat on a
   * dataset holding intro.md (made through the server with ragloom's remote client).
   */
  'server-chat': {
    before: `import { readFile as __readFile } from 'node:fs/promises';
import { Client as __Client } from 'ragloom';
import { startServer as __startServer } from 'ragloom/server';
const __srv = await __startServer({ path: './kb.db', port: 0 });
const url = __srv.url;
const apiKey = __srv.apiKey;
const __remote = new __Client({ baseUrl: url, apiKey });
const __ds = await __remote.createDataset({ name: 'handbook' });
const __docs = await __ds.uploadDocuments([{ display_name: 'intro.md', blob: await __readFile('intro.md') }]);
await __ds.parseDocuments(__docs.map((d) => d.id));
const chatId = (await __remote.createChat({ name: 'helpdesk', dataset_ids: [__ds.id] })).id;`,
    after: `await __remote.close();
await __srv.close();`,
  },
  /** Declared only: `Client` (imported) and `ds`. */
  'declared-dataset': { before: `import { Client, type DataSet } from 'ragloom';
declare const ds: DataSet;` },
  /** Declared only: `client`, `ds` and `question`. */
  'declared-client': { before: `import type { Client, DataSet } from 'ragloom';
declare const client: Client;
declare const ds: DataSet;
declare const question: string;` },
  /** Declared only: `chatId`. */
  'declared-chat-id': { before: 'declare const chatId: string;' },
};

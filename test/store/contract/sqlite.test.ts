/** The store contract on SQLite: each store one file in a folder of its own. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SqliteStore, type Store } from '../../../src/store/index.js';
import { storeContract } from './contract.js';

storeContract({
  name: 'SQLite',
  async create(): Promise<Store> {
    return new SqliteStore(join(mkdtempSync(join(tmpdir(), 'ragloom-contract-')), 'kb.db'));
  },
  async connect(locator, opts = {}): Promise<Store> {
    if (locator.kind !== 'sqlite') throw new TypeError('not a SQLite store');
    return new SqliteStore(locator.path, { readonly: opts.readonly });
  },
  async drop(s: Store): Promise<void> {
    if (s.locator.kind === 'sqlite') rmSync(dirname(s.locator.path), { recursive: true, force: true });
  },
});

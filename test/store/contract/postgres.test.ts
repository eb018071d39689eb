/**
 * The store contract on PostgreSQL: each store a new database of the run's throw-away cluster
 * (test/support/postgres.ts), dropped after its test. Skips, saying why, where PostgreSQL is absent.
 */
import { describe, test } from 'vitest';
import { PgStore, type Store } from '../../../src/store/index.js';
import { createStoreDatabase, dropDatabase, pgServer, pgSkipReason } from '../../support/postgres.js';
import { storeContract } from './contract.js';

const server = await pgServer();
const reason = await pgSkipReason();

if (!server) {
  describe('store contract: PostgreSQL', () => {
    test.skip(reason, () => undefined);
  });
} else {
  const urls = new WeakMap<Store, string>();
  storeContract({
    name: 'PostgreSQL',
    async create(): Promise<Store> {
      const url = await createStoreDatabase(server, 'contract');
      const s = await PgStore.open(url);
      urls.set(s, url);
      return s;
    },
    async connect(locator, opts = {}): Promise<Store> {
      if (locator.kind !== 'postgres') throw new TypeError('not a PostgreSQL store');
      return PgStore.open(locator.connection as string, { readonly: opts.readonly });
    },
    async drop(s: Store): Promise<void> {
      const url = urls.get(s);
      if (url) await dropDatabase(server, url);
    },
  });
}

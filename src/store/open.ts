/** Opens a store from its locator (search threads, child processes, tools). */
import type { Store, StoreLocator } from './interface/index.js';
import { SqliteStore, type SqliteOpenOptions } from './sqlite/store.js';
import { PgStore } from './postgres/store.js';
import type { PgConnectionConfig } from './postgres/driver.js';

export interface StoreOpenOptions {
  readonly?: boolean;
  /** SQLite: read through a memory map of this many bytes. */
  mmapBytes?: number;
}

/** The store at `locator`, opened (and migrated, unless read-only). */
export async function openStore(locator: StoreLocator, opts: StoreOpenOptions = {}): Promise<Store> {
  switch (locator.kind) {
    case 'sqlite':
      return new SqliteStore(locator.path, opts satisfies SqliteOpenOptions);
    case 'postgres':
      return PgStore.open(locator.connection as string | PgConnectionConfig, { ...locator.options, readonly: opts.readonly });
    default:
      throw new TypeError(`Unknown store kind ${JSON.stringify((locator as { kind: unknown }).kind)}`);
  }
}

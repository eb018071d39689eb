/**
 * What a store implementation gives the contract suite (STYLE.md §10): a factory of isolated
 * stores. The suite (contract.ts) runs every aggregate's tests against it; SQLite plugs in with
 * sqlite.test.ts, another implementation with one file like it.
 */
import type { Store, StoreLocator } from '../../../src/store/index.js';

export interface StoreFactory {
  /** For the suite's name. */
  readonly name: string;
  /** A new, empty store (its schema in place), isolated from every other one. */
  create(): Promise<Store>;
  /**
   * Another connection to the same store, as a second process would hold (its own caches and
   * in-memory state); `readonly` opens it without write access.
   */
  connect(locator: StoreLocator, opts?: { readonly?: boolean }): Promise<Store>;
  /** Removes what `create` made (after the store is closed). */
  drop(s: Store): Promise<void>;
}

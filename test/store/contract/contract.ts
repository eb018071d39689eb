/**
 * The store contract (STYLE.md §10): what every implementation of src/store/interface must do,
 * aggregate by aggregate — every method, its transactions (a refused write leaves nothing), its
 * results for bad or missing input, two processes at once where they may race (names, the memory
 * budget, task leases, parse claims, chunk counts), and the change feed's order. An
 * implementation runs it with its factory: `storeContract(factory)` in a test file of its own.
 */
import { describe } from 'vitest';
import type { StoreFactory } from './factory.js';
import { accountsContract } from './accounts.js';
import { datasetsContract } from './datasets.js';
import { documentsContract } from './documents.js';
import { chunksContract } from './chunks.js';
import { parseContract } from './parse.js';
import { chatsContract } from './chats.js';
import { memoriesContract } from './memories.js';
import { agentsContract } from './agents.js';
import { searchContract } from './search.js';
import { searchAppsContract } from './search-apps.js';

export type { StoreFactory };

export function storeContract(f: StoreFactory): void {
  describe(`store contract: ${f.name}`, () => {
    accountsContract(f);
    datasetsContract(f);
    documentsContract(f);
    chunksContract(f);
    parseContract(f);
    chatsContract(f);
    memoriesContract(f);
    agentsContract(f);
    searchContract(f);
    searchAppsContract(f);
  });
}

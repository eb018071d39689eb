/** Answers without the term index (FTS5; on PostgreSQL the node's copy, rows read from the store): what the store holds. */
import { termIndexOptions } from '../../src/search/index.js';

export async function withoutTermIndex<T>(fn: () => Promise<T>): Promise<T> {
  termIndexOptions.enabled = false;
  try {
    return await fn();
  } finally {
    termIndexOptions.enabled = true;
  }
}

/**
 * Per-dataset changes of the chunk and token counters, gathered while a transaction sets its
 * documents' counts and applied once per dataset at its end: a dataset's counters move by the
 * same differences as its documents', with no count over all its documents. Each store applies
 * them in its own SQL (`take`), inside the same transaction.
 */
export class CounterDeltas {
  private readonly delta = new Map<string, { chunks: number; tokens: number }>();

  /** A document of `datasetId` went from `old` counts to (chunks, tokens). */
  moved(datasetId: string, old: { chunk_num: number; token_num: number }, chunks: number, tokens: number): void {
    const d = this.delta.get(datasetId) ?? { chunks: 0, tokens: 0 };
    d.chunks += chunks - old.chunk_num;
    d.tokens += tokens - old.token_num;
    this.delta.set(datasetId, d);
  }

  /**
   * The datasets whose counters move, in id order (two transactions moving the same datasets lock
   * their rows in one order), and forgets them.
   */
  take(): Array<{ datasetId: string; chunks: number; tokens: number }> {
    const out = [...this.delta].filter(([, d]) => d.chunks || d.tokens).map(([datasetId, d]) => ({ datasetId, ...d }))
      .sort((a, b) => (a.datasetId < b.datasetId ? -1 : a.datasetId > b.datasetId ? 1 : 0));
    this.delta.clear();
    return out;
  }
}

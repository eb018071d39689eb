/**
 * One Client per distinct ranking settings over one database file: the benchmarks compare
 * `new Client({ retrieval })` settings side by side in one process (ranking settings are per
 * Client, not process-wide). The `{}` settings reuse the Client the database was opened with.
 */
import { Client, type ClientOptions, type RetrievalOptions } from '../../src/index.js';

export class OptionClients {
  private readonly clients = new Map<string, Client>();

  /** `base`: the Client opened on the file (default settings); `options`: how to open another one. */
  constructor(private readonly base: Client, private readonly options: ClientOptions) {}

  /** The Client ranking with `retrieval` (over the defaults). */
  get(retrieval: Partial<RetrievalOptions> = {}): Client {
    const set = Object.entries(retrieval).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b));
    if (!set.length) return this.base;
    const key = JSON.stringify(set);
    let c = this.clients.get(key);
    if (!c) this.clients.set(key, (c = new Client({ ...this.options, retrieval: Object.fromEntries(set) })));
    return c;
  }

  /** Closes the Clients opened here (not `base`). */
  async close(): Promise<void> {
    for (const c of this.clients.values()) await c.close();
    this.clients.clear();
  }
}
